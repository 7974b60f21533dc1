/* Whole-model validation on NeuSight labels: DIR/labels/DEVICE/MODEL-MODE-SEQ-BATCH[-fusion].json,
 * the model from DIR/models/MODEL.json (a Hugging Face config; or from the
 * folder the caller names, for label sets that keep no model copies), the device by
 * its folder name. inf = forward (prefill) only, train = forward + backward
 * (no optimizer step; gradients accumulate, since the harness never zeroes
 * them), FP32, eager attention as Hugging Face runs it;
 * -fusion = compiled mode. */
#include "config.h"
#include "calib/validate.h"
#include "compose/compose.h"
#include "io/io.h"

#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "gpt2_large-inf-1024-4-fusion.json" -> parts. 0 when the name does not parse. */
static int parse_name(const char *file, st_val_model *m)
{
    char base[256];
    const char *slash = strrchr(file, '/');
    snprintf(base, sizeof base, "%s", slash ? slash + 1 : file);
    char *dot = strstr(base, ".json");
    if (!dot)
        return 0;
    *dot = '\0';
    char *parts[6];
    int n = 0;
    for (char *p = base, *tok; n < 6 && (tok = strsep(&p, "-")) != NULL;)
        parts[n++] = tok;
    if (n < 4 || n > 5)
        return 0;
    if (strcmp(parts[1], "inf") != 0 && strcmp(parts[1], "train") != 0)
        return 0;
    char *e1, *e2;
    m->seq = strtoll(parts[2], &e1, 10);
    m->batch = strtoll(parts[3], &e2, 10);
    if (*e1 || *e2 || m->seq <= 0 || m->batch <= 0)
        return 0;
    m->fusion = n == 5 && strcmp(parts[4], "fusion") == 0;
    if (n == 5 && !m->fusion)
        return 0;
    snprintf(m->model, sizeof m->model, "%s", parts[0]);
    snprintf(m->mode, sizeof m->mode, "%s", parts[1]);
    return 1;
}

/* A .json under labels/ whose name does not say what it measured: an
 * error rather than a label silently left out of the figures. */
static int bad_name(const char *file, st_error *err)
{
    return st_error_set(err, ST_EINVAL,
                        "%s: not a label name: expected MODEL-MODE-SEQ-BATCH[-fusion].json with MODE inf "
                        "or train and SEQ, BATCH positive integers (e.g. gpt2_large-inf-1024-4-fusion.json); "
                        "rename it or move it out of labels/", file);
}

static int predict(const char *mdir, const st_gpu_coef *c, int torch_ver, st_val_model *m, st_gpu *g, st_error *err)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.json", mdir, m->model);
    st_model model;
    int rc = st_load_model(path, &model, err);
    if (rc)
        return rc;
    st_gen_opts o;
    st_gen_opts_default(&o, &model);
    o.phase = strcmp(m->mode, "train") == 0 ? ST_PHASE_TRAIN : ST_PHASE_PREFILL;
    o.batch = m->batch;
    o.seq = m->seq;
    o.dtype = ST_FP32;
    o.attn = ST_ATTN_EAGER;
    o.with_optimizer = 0;
    /* the harness never zeroes .grad: every timed backward (the fastest of
     * 25, none of them the first) adds each gradient into the last one's */
    o.accumulate_grads = 1;
    /* T5-style relative position buckets set no length limit (the Switch
     * labels run 2048 tokens through a config that says 512) */
    if (model.kind == ST_MODEL_TRANSFORMER && model.tf.position == ST_POS_RELATIVE && o.seq > model.tf.max_seq)
        model.tf.max_seq = o.seq;
    /* NeuSight's harness (Tracing/trace.py, get_model) builds BERT as
     * AutoModelForSequenceClassification for inference (pooler and a
     * two-class classifier, as its traces end) and AutoModelForPreTraining
     * for training (the masked-LM head), whatever the config's
     * architectures say. Encoder-only bidirectional models follow it. */
    if (model.kind == ST_MODEL_TRANSFORMER && !model.tf.causal && model.tf.encoder_layers == 0 &&
        o.phase != ST_PHASE_TRAIN) {
        model.tf.lm_head = 0;
        model.tf.num_labels = 2;
    }
    st_oplist ops = {0, 0, NULL};
    rc = st_model_ops(&model, &o, &ops, err);
    if (!rc) {
        st_compose_opts co;
        st_compose_opts_default(&co);
        co.fused = m->fusion;
        co.torch_ver = torch_ver;
        st_step s;
        rc = st_compose(g, c, &ops, &co, &s, err);
        if (!rc) {
            m->predicted_ms = s.total_s * 1e3;
            m->lo_ms = s.lo_s * 1e3;
            m->hi_ms = s.hi_s * 1e3;
            m->lo_unc_ms = s.lo_unc_s * 1e3;
            m->hi_unc_ms = s.hi_unc_s * 1e3;
            /* the host's final sync closes the last pass */
            m->predicted_fwd_ms = s.pass_s[ST_PASS_FWD] * 1e3;
            m->predicted_bwd_ms = (s.pass_s[ST_PASS_BWD] + s.pass_s[ST_PASS_OPT]) * 1e3;
            if (o.phase == ST_PHASE_TRAIN)
                m->predicted_bwd_ms += s.sync_s * 1e3;
            else
                m->predicted_fwd_ms += s.sync_s * 1e3;
        }
    }
    st_oplist_free(&ops);
    st_model_free(&model);
    return rc;
}

/* The label's operator profile, LABEL.csv beside LABEL.json (a compiled
 * -fusion label has none: NeuSight traces the eager graph), when there. */
static int read_profile(const char *json, long long num_layer, st_val_model *m, st_error *err)
{
    char path[1024];
    size_t n = strlen(json);
    if (n < 5 || n + 1 > sizeof path)
        return 0;
    memcpy(path, json, n - 5);
    strcpy(path + n - 5, ".csv");
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return 0;
    st_ns_profile p;
    int rc = st_read_neusight_profile(path, num_layer, &p, err);
    if (rc || !p.ok)
        return rc;
    m->has_profile = 1;
    m->profiled_fwd_ms = p.fwd_s * 1e3;
    m->profiled_bwd_ms = p.bwd_s * 1e3;
    snprintf(m->profile_block, sizeof m->profile_block, "%s", p.block);
    return 0;
}

int st_validate_models(const char *dir, const char *models, const st_gpu_coef *c, int torch_ver,
                       st_val_result *out,
                       st_error *err)
{
    char mdir[1024];
    if (models)
        snprintf(mdir, sizeof mdir, "%s", models);
    else
        snprintf(mdir, sizeof mdir, "%s/models", dir);
    char pat[1024];
    snprintf(pat, sizeof pat, "%s/labels/*/*.json", dir);
    glob_t gl;
    int gr = glob(pat, 0, NULL, &gl);
    if (gr == GLOB_NOMATCH)
        return 0; /* a kernels-only folder */
    if (gr != 0)
        return st_error_set(err, ST_EIO, "cannot list %s", pat);
    qsort(gl.gl_pathv, gl.gl_pathc, sizeof *gl.gl_pathv, cmp_str);
    if (models && !*models) {
        /* no model configs: each label is still read (a broken one is an
         * error), then left out and counted */
        int rc = 0;
        for (size_t i = 0; i < gl.gl_pathc && !rc; i++) {
            st_val_model m;
            st_ns_label lab;
            if (!parse_name(gl.gl_pathv[i], &m)) {
                rc = bad_name(gl.gl_pathv[i], err);
                break;
            }
            if (!(rc = st_read_neusight_label(gl.gl_pathv[i], &lab, err)))
                out->skipped_labels++;
        }
        globfree(&gl);
        return rc;
    }
    struct stat st;
    if (stat(mdir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        globfree(&gl);
        if (models)
            return st_error_set(err, ST_EIO, "%s: cannot open the model-config folder given with --models", mdir);
        return st_error_set(err, ST_EIO, "%s/labels holds whole-model labels but there is no %s; name the "
                            "folder of their model configs with --models DIR", dir, mdir);
    }
    int rc = 0;
    out->models = calloc(gl.gl_pathc, sizeof *out->models);
    if (!out->models) {
        globfree(&gl);
        return st_error_set(err, ST_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < gl.gl_pathc && !rc; i++) {
        st_val_model m;
        memset(&m, 0, sizeof m);
        if (!parse_name(gl.gl_pathv[i], &m)) {
            rc = bad_name(gl.gl_pathv[i], err);
            break;
        }
        /* the device is the folder name */
        char devdir[512];
        snprintf(devdir, sizeof devdir, "%s", gl.gl_pathv[i]);
        char *slash = strrchr(devdir, '/');
        if (slash)
            *slash = '\0';
        const char *dev = strrchr(devdir, '/') ? strrchr(devdir, '/') + 1 : devdir;
        snprintf(m.device, sizeof m.device, "%s", dev);
        st_gpu g;
        st_error e2;
        int r = st_find_gpu_for_device(dev, &g, &e2);
        if (r == ST_ENOTFOUND) {
            out->skipped++;
            continue;
        }
        if (r) {
            *err = e2;
            rc = r;
            break;
        }
        snprintf(m.preset, sizeof m.preset, "%s", g.id);
        st_ns_label lab;
        if ((rc = st_read_neusight_label(gl.gl_pathv[i], &lab, err)))
            break;
        m.measured_ms = lab.e2e_s * 1e3;
        m.has_split = lab.has_split;
        m.measured_fwd_ms = lab.fwd_s * 1e3;
        m.measured_bwd_ms = lab.bwd_s * 1e3;
        if ((rc = predict(mdir, c, torch_ver, &m, &g, err))) {
            st_error_prefix(err, "%s", gl.gl_pathv[i]);
            break;
        }
        if ((rc = read_profile(gl.gl_pathv[i], lab.num_layer, &m, err)))
            break;
        out->models[out->n_models++] = m;
    }
    globfree(&gl);
    if (rc)
        return rc;
    /* per-device summary */
    size_t nd = 0;
    out->model_dev_rows = calloc(out->n_models ? out->n_models : 1, sizeof *out->model_dev_rows);
    if (!out->model_dev_rows)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    for (size_t i = 0; i < out->n_models; i++) {
        size_t k;
        for (k = 0; k < nd; k++)
            if (strcmp(out->model_dev_rows[k].device, out->models[i].device) == 0)
                break;
        if (k < nd)
            continue;
        st_apes a = {0};
        for (size_t j = i; j < out->n_models; j++)
            if (strcmp(out->models[j].device, out->models[i].device) == 0 &&
                st_apes_push(&a, out->models[j].predicted_ms, out->models[j].measured_ms)) {
                st_apes_free(&a);
                return st_error_set(err, ST_ENOMEM, "out of memory");
            }
        st_val_row *row = &out->model_dev_rows[nd++];
        snprintf(row->device, sizeof row->device, "%s", out->models[i].device);
        snprintf(row->preset, sizeof row->preset, "%s", out->models[i].preset);
        snprintf(row->op, sizeof row->op, "model");
        st_apes_summary(&a, &row->s);
        st_apes_free(&a);
    }
    out->n_model_dev_rows = nd;
    return 0;
}
