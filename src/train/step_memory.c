/*
 * One step's memory on one GPU, as `strata eval` reports it and GPU sweeps
 * constrain it (one rule for both, so a sweep point and its eval command
 * agree to the byte).
 */
#include "config.h"
#include "train/train.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void st_step_memory(const st_model *m, const st_gpu *g, const st_gen_opts *o, int recompute, int fused,
                    const st_gpu_coef *coef, const st_oplist *ops, st_step_mem *out)
{
    memset(out, 0, sizeof *out);
    double es = st_dtype_bytes(o->dtype);
    out->capacity = g->mem_bytes;
    out->weights = st_model_params(m) * es;
    if (m->kind == ST_MODEL_TRANSFORMER && (o->dtype == ST_FP8 || o->dtype == ST_INT8)) {
        /* the FP8 / W8A8 recipes of st_model_ops: the blocks' weights in one
         * byte, the embeddings and the LM head in 16 bits, and the KV cache
         * in the 16-bit type the attention runs in */
        double body = st_model_params_non_embedding(m);
        out->weights = body * es + (st_model_params(m) - body) * 2.0;
        es = 2.0;
    }
    if (o->phase == ST_PHASE_TRAIN && m->kind == ST_MODEL_TRANSFORMER && coef) {
        /* what `strata train` counts on one GPU */
        st_cluster c;
        memset(&c, 0, sizeof c);
        snprintf(c.id, sizeof c.id, "%s", g->id);
        c.node.gpu = *g;
        c.node.gpus = 1;
        c.nodes = 1;
        st_train_cfg k;
        st_train_cfg_default(&k, m, 1);
        k.global_batch = o->batch;
        k.seq = o->seq;
        k.dtype = o->dtype;
        k.recompute = recompute ? ST_RECOMP_FULL : ST_RECOMP_NONE;
        k.flash = st_attn_fused(o->attn);
        k.fa3 = o->attn == ST_ATTN_FLASH3;
        k.fused = fused;
        st_train_result r;
        st_error e;
        if (st_train_eval(m, &c, coef, &k, &r, NULL, &e) == 0) {
            out->total = r.mem.total;
            out->weights = r.mem.weights;
            out->states = r.mem.grads + r.mem.optimizer;
            /* activations, logits and temporary buffers: the rest */
            out->activations = r.mem.total - r.mem.weights - out->states;
            out->activations_counted = 1;
        }
    }
    if (!out->activations_counted && o->phase == ST_PHASE_TRAIN) {
        /* a model the training layer does not take (a CNN): its weights,
         * their gradients and AdamW state as the training layer counts them,
         * and every forward output, which autograd keeps for the backward */
        double grad_b, opt_b;
        st_train_state_bytes(o->dtype, &grad_b, &opt_b);
        out->states = st_model_params(m) * (grad_b + opt_b);
        for (size_t i = 0; ops && i < ops->n; i++)
            if (ops->ops[i].pass == ST_PASS_FWD)
                out->activations += ops->ops[i].bytes_written * (double)(ops->ops[i].repeat > 0 ? ops->ops[i].repeat : 1);
        out->activations_counted = ops != NULL;
        out->total = out->weights + out->states + out->activations;
    } else if (!out->activations_counted) {
        if (m->kind == ST_MODEL_TRANSFORMER && m->tf.causal) {
            const st_transformer *tf = &m->tf;
            double ctx = o->phase == ST_PHASE_DECODE ? (double)o->kv_len + 1 : (double)o->seq;
            out->kv_cache = (double)tf->layers * st_transformer_kv_bytes(tf, (double)o->batch * ctx, es);
        }
        /* inference frees each activation once its consumer has run: at
         * the peak, the largest operator's inputs and output are live (a
         * GEMM's weight is already counted) */
        for (size_t i = 0; ops && i < ops->n; i++) {
            const st_op *op = &ops->ops[i];
            double live = op->bytes_written + (op->kind == ST_OP_GEMM ? 0 : op->bytes_read);
            out->activations = live > out->activations ? live : out->activations;
        }
        out->total = out->weights + out->kv_cache + out->activations;
    }
    /* torch.optim.AdamW's foreach step allocates sqrt(v) for every
     * parameter (4 bytes each) after the backward has freed the
     * activations: the step's peak is the larger of the two */
    if (o->phase == ST_PHASE_TRAIN && o->with_optimizer && o->optim_foreach) {
        double tmp = 4.0 * st_model_params(m);
        if (tmp > out->activations) {
            out->states += tmp - out->activations;
            out->total += tmp - out->activations;
        }
    }
    out->fits = out->capacity <= 0 || out->total <= out->capacity;
}
