/* Screen 6, parallelism: step DP/TP/PP, microbatches, ZeRO, recompute and
 * SP by key and see the iteration at once (the same call as `strata train`,
 * whose command line is shown). */
#include "config.h"
#include "ui/ui.h"

#include <math.h>
#include <string.h>

static void pick_lists(ui_app *a)
{
    if (a->n_tf_models)
        return;
    for (size_t i = 0; i < a->n_wl; i++) { /* transformers only: the training layer models them */
        st_model m;
        st_error err;
        if (st_load_model(a->cat.items[a->wl[i]].path, &m, &err))
            continue; /* a broken file shows its error on the workloads screen */
        if (m.kind == ST_MODEL_TRANSFORMER)
            a->tf_models[a->n_tf_models++] = a->wl[i];
        st_model_free(&m);
    }
    for (size_t i = 0; i < a->n_tf_models; i++)
        if (strcmp(a->cat.items[a->tf_models[i]].id, "llama2-7b") == 0)
            a->par_model = i;
    for (size_t i = 0; i < a->n_clusters; i++)
        if (strcmp(a->cat.items[a->clusters[i]].id, "dgx-h100") == 0)
            a->par_cluster = i;
}

static void load_model(ui_app *a)
{
    st_error err;
    if (a->par_m_loaded)
        st_model_free(&a->par_m);
    a->par_m_loaded = 0;
    if (!a->n_tf_models)
        return;
    if (st_load_model(a->cat.items[a->tf_models[a->par_model]].path, &a->par_m, &err)) {
        ui_error(a, "%s", err.msg);
        return;
    }
    a->par_m_loaded = 1;
    int gpus = a->par_cfg.dp ? a->par_cfg.dp * a->par_cfg.tp * a->par_cfg.pp : 8;
    st_train_cfg keep = a->par_cfg;
    st_train_cfg_default(&a->par_cfg, &a->par_m, gpus);
    if (keep.dp) { /* keep the split when the model changes */
        a->par_cfg.dp = keep.dp;
        a->par_cfg.tp = keep.tp;
        a->par_cfg.pp = keep.pp;
        a->par_cfg.sp = keep.sp;
        a->par_cfg.zero = keep.zero;
        a->par_cfg.recompute = keep.recompute;
        a->par_cfg.microbatches = keep.microbatches;
    }
    a->par_cfg.global_batch = 32;
    a->par_cfg.flash = 1;
    if (a->par_cfg.dtype == ST_FP32)
        a->par_cfg.dtype = ST_BF16;
}

static void evaluate(ui_app *a)
{
    st_error err;
    a->par_dirty = 0;
    a->par_err[0] = 0;
    if (!a->par_m_loaded) {
        load_model(a);
        if (!a->par_m_loaded)
            return;
    }
    if (!a->n_clusters)
        return;
    if (st_load_cluster_or_node(a->cat.items[a->clusters[a->par_cluster]].path, &a->par_c, &err)) {
        ui_error(a, "%s", err.msg);
        return;
    }
    int gpus = a->par_cfg.dp * a->par_cfg.tp * a->par_cfg.pp * a->par_cfg.cp;
    int per = a->par_c.node.gpus > 0 ? a->par_c.node.gpus : 1, need = (gpus + per - 1) / per;
    /* the slice of the cluster the split takes; more GPUs than the cluster
     * has is the error `strata train` gives (not a node grown a network) */
    if (need <= a->par_c.nodes)
        a->par_c.nodes = need;
    if (!a->sweep) {
        snprintf(a->par_err, sizeof a->par_err, "no coefficient table (load a sweep first)");
        return;
    }
    if (st_train_check(&a->par_m, &a->par_c, &a->par_cfg, &err) ||
        st_train_eval(&a->par_m, &a->par_c, &a->sweep->coef, &a->par_cfg, &a->par_r, NULL, &err))
        snprintf(a->par_err, sizeof a->par_err, "%s", err.msg);
}

/* Keys can arrive before the screen was ever drawn. */
static int ready(ui_app *a)
{
    pick_lists(a);
    if (!a->par_m_loaded)
        load_model(a);
    return a->par_m_loaded && a->par_cfg.dp > 0 && a->par_cfg.tp > 0 && a->par_cfg.pp > 0;
}

void ui_parallel_draw(ui_app *a, ui_rect r)
{
    if (!ready(a))
        return;
    if (a->par_dirty)
        evaluate(a);
    if (!a->par_m_loaded || !a->n_clusters)
        return;
    const st_train_cfg *k = &a->par_cfg;
    int gpus = k->dp * k->tp * k->pp * k->cp;
    ui_box(r, "Parallelism (training)", 1);
    int y = r.y + 1, x = r.x + 2, w = r.w - 4, ybot = r.y + r.h - 1;
    if (y >= ybot)
        return; /* the box's last row is its border */
    ui_text(y++, x, w, UI_BOLD, "%s on %s (%d GPU%s), global batch %lld, seq %lld, %s, %s",
            a->par_m.name, a->cat.items[a->clusters[a->par_cluster]].id, gpus, gpus == 1 ? "" : "s",
            k->global_batch, k->seq,
            st_dtype_name(k->dtype),
            k->fa3 ? "FlashAttention-3" : k->flash ? "FlashAttention-2" : "eager attention");
    if (y >= ybot)
        return;
    ui_text(y++, x, w, ui_attr(UI_C_DIM),
            "d/D dp (GPUs) -/+  t/T tp-/+  p/P pp-/+ (DP adjusts)  m/M microbatches/2,x2  z ZeRO  r recompute  s SP  "
            "a attention  w model  c cluster");
    y++;
    if (y >= ybot)
        return;
    ui_text(y++, x, w, UI_NORMAL, "DP %-4d TP %-4d PP %-4d SP %-3s ZeRO %d  recompute %-9s microbatches %lld",
            k->dp, k->tp, k->pp, k->sp ? "on" : "off", k->zero, st_recompute_name(k->recompute), k->microbatches);
    if (y >= ybot)
        return;
    ui_text(y++, x, w, ui_attr(UI_C_DIM), "strata train %s --cluster %s --gpus %d --dp %d --tp %d --pp %d%s "
            "--zero %d --recompute %s --microbatches %lld --global-batch %lld --seq %lld --dtype %s%s",
            a->par_m.id, a->cat.items[a->clusters[a->par_cluster]].id, gpus, k->dp, k->tp, k->pp, k->sp ? " --sp" : "",
            k->zero, st_recompute_name(k->recompute), k->microbatches, k->global_batch, k->seq,
            st_dtype_name(k->dtype), k->fa3 ? " --fa3" : k->flash ? " --flash" : "");
    y++;
    if (a->par_err[0]) {
        if (y < ybot)
            ui_text(y, x, w, ui_attr(UI_C_ERR), " %s ", a->par_err);
        return;
    }
    const st_train_result *t = &a->par_r;
    char it[32], lo[32], hi[32], mem[32], cap[32], comm[32], commt[32];
    ui_fmt_metric(it, sizeof it, ST_M_LATENCY, t->iteration_s);
    ui_fmt_metric(lo, sizeof lo, ST_M_LATENCY, t->lo_s);
    ui_fmt_metric(hi, sizeof hi, ST_M_LATENCY, t->hi_s);
    ui_fmt_metric(mem, sizeof mem, ST_M_MEMORY, t->memory_per_gpu_bytes);
    ui_fmt_metric(cap, sizeof cap, ST_M_MEMORY, t->mem.capacity);
    ui_fmt_metric(comm, sizeof comm, ST_M_LATENCY, t->comm_s);
    ui_fmt_metric(commt, sizeof commt, ST_M_LATENCY, t->comm_total_s);
    if (y >= ybot)
        return;
    ui_text(y++, x, w, UI_BOLD, "iteration      %s  (90%% band %s .. %s)", it, lo, hi);
    if (y >= ybot)
        return;
    ui_text(y++, x, w, UI_NORMAL, "tokens/s       %.0f", t->tokens_per_s);
    if (y >= ybot)
        return;
    ui_text(y, x, 24, UI_NORMAL, "MFU            %.1f%%", 100 * t->mfu);
    ui_bar(y++, x + 26, w - 26, t->mfu, ui_attr(UI_C_OK));
    if (y >= ybot)
        return;
    ui_text(y, x, 24, UI_NORMAL, "bubble         %.1f%%", 100 * t->bubble_fraction);
    ui_bar(y++, x + 26, w - 26, t->bubble_fraction, ui_attr(UI_C_BAR1));
    if (y >= ybot)
        return;
    ui_text(y++, x, w, UI_NORMAL, "communication  %s exposed of %s", comm, commt);
    if (y >= ybot)
        return;
    ui_text(y, x, w, t->mem.oom ? ui_attr(UI_C_ERR) | UI_BOLD : UI_NORMAL, "memory/GPU     %s of %s%s", mem, cap,
            t->mem.oom ? "  OUT OF MEMORY" : "");
    y++;
    double parts[5] = {t->mem.weights, t->mem.grads, t->mem.optimizer, t->mem.activations,
                       t->mem.logits + t->mem.buffers};
    double scale = fmax(t->mem.capacity, t->mem.total);
    if (y >= ybot)
        return;
    ui_stacked(y++, x, (int)floor((w) * t->mem.total / scale + 0.5), parts, 5, t->mem.total);
    if (y >= ybot)
        return;
    ui_text(y++, x, w, ui_attr(UI_C_DIM), "weights | grads | optimizer | activations | logits+buffers  (bar width: "
            "share of the GPU's memory)");
}

static int step_int(int *v, int up, int max)
{
    if (up && *v * 2 <= max)
        *v *= 2;
    else if (!up && *v > 1)
        *v /= 2;
    return 1;
}

int ui_parallel_key(ui_app *a, int key)
{
    st_train_cfg *k = &a->par_cfg;
    if (!ready(a))
        return 0;
    switch (key) {
    case 'd': case 'D': step_int(&k->dp, key == 'D', 4096); break;
    case 't': case 'T':
    case 'p': case 'P': { /* the GPU count stays: DP takes up the difference */
        int gpus = k->dp * k->tp * k->pp, *v = key == 't' || key == 'T' ? &k->tp : &k->pp, old = *v;
        step_int(v, key == 'T' || key == 'P', 128);
        if (gpus % (k->tp * k->pp)) {
            *v = old;
            ui_status(a, "tp x pp must divide the %d GPUs (d/D changes the GPU count)", gpus);
        } else {
            k->dp = gpus / (k->tp * k->pp);
        }
        break;
    }
    case 'm': if (k->microbatches > 1) k->microbatches /= 2; break;
    case 'M': if (k->microbatches < 4096) k->microbatches *= 2; break;
    case 'z': k->zero = (k->zero + 1) % 4; break;
    case 'r': k->recompute = (st_recompute)((k->recompute + 1) % 3); break;
    case 's': k->sp = !k->sp; break;
    case 'a': /* eager -> FlashAttention-2 -> FlashAttention-3 (Hopper; refused with the reason elsewhere) */
        if (k->fa3)
            k->flash = k->fa3 = 0;
        else if (k->flash)
            k->fa3 = 1;
        else
            k->flash = 1;
        break;
    case 'w':
        if (a->n_tf_models) {
            a->par_model = (a->par_model + 1) % a->n_tf_models;
            load_model(a);
        }
        break;
    case 'c':
        if (a->n_clusters)
            a->par_cluster = (a->par_cluster + 1) % a->n_clusters;
        break;
    default: return 0;
    }
    a->par_dirty = 1;
    return 1;
}
