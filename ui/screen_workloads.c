/* Screen 2, workloads: the list and the operator table of the selected one
 * (prefill, batch 1, the model's dtype: what `strata eval ID` runs). */
#include "config.h"
#include "ui/ui.h"

#include <stdlib.h>
#include <string.h>

static const char *op_label(void *ctx, size_t i, char *buf, size_t n)
{
    ui_app *a = ctx;
    const st_op *op = &a->ops.ops[i];
    char shape[64];
    switch (op->kind) {
    case ST_OP_GEMM:
    case ST_OP_BMM:
    case ST_OP_MOE_EXPERTS:
        snprintf(shape, sizeof shape, "%lldx(%lldx%lld).(%lldx%lld)", op->batch, op->m, op->k, op->k, op->n);
        break;
    case ST_OP_CONV:
        snprintf(shape, sizeof shape, "%lldx%lldx%lldx%lld k%lld r%lld/%lld", op->batch, op->c, op->h, op->w,
                 op->k_out, op->r, op->stride);
        break;
    case ST_OP_ATTENTION:
        snprintf(shape, sizeof shape, "b%lld h%lld q%lld kv%lld d%lld", op->batch, op->heads, op->q_len,
                 op->kv_len, op->head_dim);
        break;
    case ST_OP_POOL: /* N C H W, its window and the output's size */
        snprintf(shape, sizeof shape, "%lldx%lldx%lldx%lld %lldx%lld->%lldx%lld", op->batch, op->c, op->h, op->w,
                 op->r, op->s, op->p, op->q);
        break;
    default: snprintf(shape, sizeof shape, "%lldx%lld", op->rows, op->cols); break;
    }
    snprintf(buf, n, "%-24.24s %-11s %4lld %-28.28s %9.3f %9.2f", op->name, st_op_kind_name(op->kind),
             op->repeat, shape, op->flops * 1e-9, (op->bytes_read + op->bytes_written) * 1e-6);
    return buf;
}

static void load_ops(ui_app *a)
{
    size_t item = ui_list_current(&a->wl_list);
    if (item == a->ops_for)
        return;
    a->ops_for = item;
    st_oplist_free(&a->ops);
    a->ops_note[0] = 0;
    st_error err;
    ui_list_set(&a->ops_list, 0, op_label, a, &err);
    if (item == (size_t)-1)
        return;
    st_model m;
    if (st_load_model(a->cat.items[a->wl[item]].path, &m, &err)) {
        ui_error(a, "%s", err.msg);
        return;
    }
    st_gen_opts o;
    st_gen_opts_default(&o, &m);
    if (m.kind == ST_MODEL_TRANSFORMER && o.seq > 1024)
        o.seq = 1024;
    if (st_model_ops(&m, &o, &a->ops, &err)) {
        ui_error(a, "%s", err.msg);
    } else {
        if (m.kind == ST_MODEL_TRANSFORMER)
            snprintf(a->ops_note, sizeof a->ops_note,
                     "%s: %.3g B parameters; prefill batch 1 seq %lld, %s (strata eval %s --seq %lld)", m.name,
                     st_model_params(&m) * 1e-9, o.seq, st_dtype_name(o.dtype), m.id, o.seq);
        else
            snprintf(a->ops_note, sizeof a->ops_note, "%s: %.3g B parameters; inference batch 1, %s (strata eval %s)",
                     m.name, st_model_params(&m) * 1e-9, st_dtype_name(o.dtype), m.id);
        ui_list_set(&a->ops_list, a->ops.n, op_label, a, &err);
    }
    st_model_free(&m);
}

void ui_workloads_draw(ui_app *a, ui_rect r)
{
    int lw = r.w / 3 < 48 ? r.w / 3 : 48;
    load_ops(a);
    ui_list_draw(&a->wl_list, (ui_rect){r.y, r.x, r.h, lw}, "Workloads", a->pane == 0);
    ui_rect right = {r.y + 2, r.x + lw, r.h - 2, r.w - lw};
    ui_text(r.y, r.x + lw + 1, r.w - lw - 1, UI_BOLD, "%s", a->ops_note);
    ui_text(r.y + 1, r.x + lw + 2, r.w - lw - 2, ui_attr(UI_C_DIM), "%-24s %-11s %4s %-28s %9s %9s", "operator",
            "kind", "x", "shape", "GFLOP", "MB");
    ui_list_draw(&a->ops_list, right, "Operators", a->pane == 1);
}

int ui_workloads_key(ui_app *a, int key)
{
    ui_list *l = a->pane ? &a->ops_list : &a->wl_list;
    if (ui_list_key(l, key, LINES / 2))
        return 1;
    if ((key == '\n' || key == KEY_ENTER) && a->pane == 0) {
        a->pane = 1;
        return 1;
    }
    return 0;
}
