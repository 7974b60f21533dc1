/*
 * Loader tests: every malformed-input path gives FILE:LINE:COL, names the
 * key and what was expected, and leaves nothing loaded; good files, buffers,
 * name resolution and Hugging Face configs load.
 */
#include "config.h"
#include "testutil.h"

#include "io/io.h"

#include <math.h>

typedef struct bad_case {
    const char *file;
    int line, col;
    const char *needle; /* must appear in the message */
} bad_case;

/* Positions and words come from the fixtures themselves (tests/data/bad). */
static const bad_case bad_cases[] = {
    {"bad/wrong-type.yaml", 10, 16, "key 'memory_bw_gbs': expected a number"},
    {"bad/negative.yaml", 7, 11, "found '-4'"},
    {"bad/huge-number.yaml", 10, 16, "out of range"},
    {"bad/huge-int.yaml", 7, 11, "key 'sm_count': expected a whole number"},
    {"bad/not-integer.yaml", 7, 11, "expected a whole number in [1, 100000], found '10.5'"},
    {"bad/nan.yaml", 18, 8, "key 'tdp_w'"},
    {"bad/process-nm.yaml", 19, 13, "key 'process_nm': expected a number in [1, 100]"},
    {"bad/issue-partial.yaml", 19, 16, "key 'dispatch_per_partition' is missing"},
    {"bad/issue-lanes.yaml", 21, 20, "128 lanes do not split evenly over 3 partitions"},
    {"bad/issue-warp.yaml", 21, 20, "64 lanes per partition must divide the warp of 32"},
    {"bad/issue-amd.yaml", 19, 16, "leave them out of a non-NVIDIA preset"},
    {"bad/hex.yaml", 18, 8, "found '0x10'"},
    {"bad/unknown-key.yaml", 7, 1, "did you mean 'sm_count'?"},
    {"bad/missing-key.yaml", 3, 1, "missing required keys 'warp_size' (32 or 64), 'tdp_w'"},
    {"bad/duplicate-key.yaml", 19, 1, "duplicate key 'sm_count' (first given at line 7)"},
    {"bad/bad-enum.yaml", 5, 9, "did you mean 'nvidia'?"},
    {"bad/bad-dtype.yaml", 21, 3, "unknown key 'fp61'"},
    {"bad/nested-type.yaml", 21, 9, "throughput.fp16: expected a mapping"},
    {"bad/sparse-below-dense.yaml", 21, 9, "below the dense rate"},
    {"bad/bad-kind.yaml", 3, 7, "did you mean 'gpu'?"},
    {"bad/no-kind.yaml", 3, 1, "missing required key 'kind'"},
    {"bad/alias.yaml", 18, 8, "aliases"},
    {"bad/syntax.yaml", 21, 7, "YAML syntax error"},
    {"bad/tab-indent.yaml", 20, 1, "YAML syntax error"},
    {"bad/hf-syntax.json", 1, 40, "JSON syntax error"},
    {"bad/list-root.yaml", 1, 1, "found a list"},
    {"bad/empty.yaml", 1, 1, "the file is empty"},
    {"bad/only-comment.yaml", 1, 1, "the file is empty"},
    {"bad/binary.yaml", 2, 1, "not a readable YAML/JSON text file"},
    /* the broken lead byte's own column, not the next byte's (3:12 before) */
    {"bad/latin1.yaml", 3, 11, "byte 0xe9 (offset 91) starts no UTF-8 character"},
    {"bad/garbage.yaml", 0, 0, "not a readable YAML/JSON text file"},
    {"bad/deep-nesting.yaml", 0, 0, "nesting deeper than 32 levels"},
    {"bad/two-docs.yaml", 3, 1, "a second YAML document"},
    {"bad/complex-key.yaml", 3, 3, "a key must be a plain name"},
    {"bad/node-unknown-gpu.yaml", 3, 6, "did you mean 'h100-sxm'?"},
    {"bad/transformer-bad-kv.yaml", 6, 11, "kv_heads 5 must divide heads 32"},
    {"bad/cnn-missing-out.yaml", 5, 5, "needs key 'out'"},
    {"bad/accel-bad-level.yaml", 21, 21, "expected inputs, weights or outputs, found psums"},
    {"bad/hf-missing.json", 1, 1, "missing 'num_hidden_layers'"},
    {"bad/cnn-extra-key.yaml", 5, 36, "key 'mid' does not apply to op 'conv'"},
    {"bad/control-char.yaml", 4, 7, "contains a control character (byte 0x1b)"},
    {"bad/hf-act-list.json", 1, 127, "key 'hidden_act': expected an activation name"},
    {"bad/node-self.yaml", 4, 6, "node-self.yaml is a node file, but a gpu is needed here"},
    {"bad/transformer-dropout.yaml", 17, 17, "key 'hidden_dropout': expected a number in [0, 0.99], found '1.5'"},
    {"bad/hf-dropout.json", 1, 98, "key 'attn_pdrop': expected a number in [0, 0.99]"},
    {"bad/transformer-act.yaml", 17, 19, "set eager_act_unary to at least 1"},
    {"bad/transformer-bcast.yaml", 18, 26, "counts among the 1 eager_score_unary passes: at most 1"},
    {"bad/transformer-bcast-binary.yaml", 17, 27, "counts among the 0 eager_score_binary operands: at most 0"},
    {"bad/transformer-labels.yaml", 17, 10, "drop 'lm_head: true' or 'num_labels'"},
};

static void test_bad_files(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
        const bad_case *b = &bad_cases[i];
        char path[1024], prefix[1100];
        st_loaded l;
        st_error err;
        snprintf(path, sizeof path, "%s", testdata(b->file));
        memset(&l, 0x5a, sizeof l);
        int rc = st_load(path, &l, &err);
        if (rc == 0 || !strstr(err.msg, b->needle))
            fail_msg("%s: rc %d, message: %s (wanted '%s')", b->file, rc, err.msg, b->needle);
        if (b->line > 0)
            snprintf(prefix, sizeof prefix, "%s:%d:%d: ", path, b->line, b->col);
        else
            snprintf(prefix, sizeof prefix, "%s:", path);
        if (strncmp(err.msg, prefix, strlen(prefix)) != 0)
            fail_msg("%s: message does not start with '%s': %s", b->file, prefix, err.msg);
        /* nothing half-loaded */
        assert_int_equal(l.kind, 0);
        assert_int_equal(l.gpu.sm_count, 0);
    }
}

static void test_good_file_and_units(void **state)
{
    st_loaded l;
    st_error err;
    (void)state;
    assert_int_equal(st_load(testdata("good-gpu.yaml"), &l, &err), 0);
    assert_int_equal(l.kind, ST_FILE_GPU);
    assert_string_equal(l.gpu.id, "good-gpu");
    assert_int_equal(l.gpu.sm_count, 10);
    /* the units of the key names, converted to SI */
    assert_true(l.gpu.boost_clock_hz == 1e9);
    assert_true(l.gpu.mem_bytes == 16.0 * 1024 * 1024 * 1024);
    assert_true(l.gpu.mem_bw == 500e9);
    assert_true(l.gpu.l2_bytes == 4.0 * 1024 * 1024);
    assert_true(l.gpu.launch_overhead_s == 3e-6);
    assert_true(l.gpu.matrix[ST_FP16].dense == 20e12);
    assert_true(l.gpu.matrix[ST_FP16].sparse == 40e12);
    assert_true(l.gpu.matrix[ST_BF16].dense == 0); /* absent dtype = not accelerated */
    st_loaded_free(&l);
}

static void test_buffer_and_wrong_kind(void **state)
{
    static const char text[] = "kind: gpu\nname: x\n";
    st_loaded l;
    st_error err;
    st_node node;
    (void)state;
    assert_int_not_equal(st_load_buffer("inline.yaml", text, sizeof text - 1, &l, &err), 0);
    assert_non_null(strstr(err.msg, "inline.yaml:1:1: gpu preset: missing required keys"));
    assert_non_null(strstr(err.msg, "'sm_count'"));
    /* a GPU file where a node is needed */
    assert_int_not_equal(st_load_node(testdata("good-gpu.yaml"), &node, &err), 0);
    assert_non_null(strstr(err.msg, "is a gpu file, but a node is needed"));
    /* a node naming itself as its GPU fails at once (no recursion) */
    assert_int_not_equal(st_load_node(testdata("bad/node-self.yaml"), &node, &err), 0);
    assert_non_null(strstr(err.msg, "is a node file, but a gpu is needed here"));
}

static void test_resolve_names(void **state)
{
    char path[512];
    st_error err;
    st_gpu g;
    (void)state;
    assert_int_equal(st_resolve("h100-sxm", ST_FILE_GPU, path, sizeof path, &err), 0);
    assert_non_null(strstr(path, "presets/gpu/h100-sxm.yaml"));
    /* case-insensitive id, and the full name */
    assert_int_equal(st_resolve("H100-SXM", ST_FILE_GPU, path, sizeof path, &err), 0);
    assert_int_equal(st_resolve("NVIDIA H100 SXM5 80GB", ST_FILE_GPU, path, sizeof path, &err), 0);
    assert_non_null(strstr(path, "h100-sxm.yaml"));
    assert_int_equal(st_resolve("llama2-7b", ST_FILE_MODEL, path, sizeof path, &err), 0);
    /* a typo gets a suggestion; a workload is not a GPU */
    assert_int_equal(st_resolve("a100-80gb-smx", ST_FILE_GPU, path, sizeof path, &err),
                     ST_ENOTFOUND);
    assert_non_null(strstr(err.msg, "did you mean 'a100-80gb-sxm'?"));
    assert_int_not_equal(st_load_gpu("llama2-7b", &g, &err), 0);
    assert_int_equal(st_resolve("no/such/file.yaml", -1, path, sizeof path, &err), ST_EIO);
    assert_non_null(strstr(err.msg, "no/such/file.yaml: cannot open"));
}

/* A Hugging Face config written from the public meta-llama/Llama-2-7b-hf
 * config.json: it must give the same model as workloads/llama2-7b.yaml. */
static void test_hf_config(void **state)
{
    st_model hf, yaml;
    st_error err;
    (void)state;
    assert_int_equal(st_load_model(testdata("hf/llama-2-7b-config.json"), &hf, &err), 0);
    assert_int_equal(st_load_model("llama2-7b", &yaml, &err), 0);
    assert_int_equal(hf.tf.hidden, yaml.tf.hidden);
    assert_int_equal(hf.tf.layers, yaml.tf.layers);
    assert_int_equal(hf.tf.ffn_hidden, yaml.tf.ffn_hidden);
    assert_int_equal(hf.tf.kv_heads, 32);
    assert_int_equal(hf.tf.gated_mlp, 1);
    assert_int_equal(hf.tf.norm, ST_NORM_RMSNORM);
    assert_int_equal(hf.tf.position, ST_POS_ROPE);
    assert_int_equal(hf.tf.tied_embeddings, 0);
    /* Meta's published parameter count of Llama-2-7B (HF model card: 6.74B;
     * exact count of the safetensors: 6,738,415,616). */
    assert_true(st_model_params(&hf) == 6738415616.0);
    assert_true(st_model_params(&yaml) == 6738415616.0);
}

/* DistilBERT spells its keys dim, n_layers, n_heads, hidden_dim; it is a
 * post-norm bidirectional encoder with learned positions. */
static void test_hf_distilbert(void **state)
{
    st_model m;
    st_error err;
    (void)state;
    assert_int_equal(st_load_model(testdata("hf/distilbert-config.json"), &m, &err), 0);
    assert_int_equal(m.tf.hidden, 768);
    assert_int_equal(m.tf.layers, 6);
    assert_int_equal(m.tf.heads, 12);
    assert_int_equal(m.tf.ffn_hidden, 3072);
    assert_int_equal(m.tf.position, ST_POS_LEARNED);
    assert_int_equal(m.tf.causal, 0);
    assert_int_equal(m.tf.pre_norm, 0);
}

/* Every HF config in the shared NeuSight data loads (skips without it). */
static void test_shared_hf_configs(void **state)
{
    const char *root = shared_data();
    static const char *const files[] = {"bert_large.json", "gpt2_large.json", "gpt2_med.json",
                                        "gpt2_xl.json", "gpt3_13.json", "gpt3_27.json",
                                        "gpt3_67.json", "gpt3_xl.json", "llama2_7b.json",
                                        "opt_13.json", "switchxl4.json"};
    (void)state;
    if (!root) {
        printf("# skip: ../shared/data is absent\n");
        skip();
    }
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[1200];
        st_model m;
        st_error err;
        snprintf(path, sizeof path, "%s/neusight/models/%s", root, files[i]);
        if (st_load_model(path, &m, &err) != 0)
            fail_msg("%s: %s", files[i], err.msg);
        assert_true(st_model_params(&m) > 1e8);
    }
    {
        /* GPT-2 medium: 354,823,168 parameters (HF gpt2-medium, tied head) */
        char path[1200];
        st_model m;
        st_error err;
        snprintf(path, sizeof path, "%s/neusight/models/gpt2_med.json", root);
        assert_int_equal(st_load_model(path, &m, &err), 0);
        assert_true(st_model_params(&m) == 354823168.0);
        /* Switch: encoder-decoder, 4 experts every other block, top-1 */
        snprintf(path, sizeof path, "%s/neusight/models/switchxl4.json", root);
        assert_int_equal(st_load_model(path, &m, &err), 0);
        assert_int_equal(m.tf.encoder_layers, 24);
        assert_int_equal(m.tf.experts, 4);
        assert_int_equal(m.tf.top_k, 1);
        assert_int_equal(m.tf.moe_every, 2);
        assert_int_equal(m.tf.head_dim, 128);
    }
}


/* ---- scenario files (strata-scenario(5)) ------------------------------------- */
static int load_scn(const char *text, const char *shared, st_scenario *s, st_error *err)
{
    return st_load_scenario_buffer("s.yaml", text, strlen(text), shared, s, err);
}

/* argv of case c joined by spaces */
static const char *joined(const st_scenario *s, size_t c)
{
    static char buf[2048];
    buf[0] = '\0';
    for (int i = 0; i < s->cases[c].argc; i++)
        snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s", i ? " " : "", s->cases[c].argv[i]);
    return buf;
}

/* Options become long options in the file's order; true is a flag, false
 * and null leave an option out, a list repeats it; a case's value takes the
 * base option's place and its own options follow; --json ends every line. */
static void test_scenario_argv(void **state)
{
    (void)state;
    static const char text[] =
        "scenario: T9.9\n"
        "title: a test\n"
        "command: serve\n"
        "operands: [llama2-7b]\n"
        "options:\n"
        "  gpu: h100-sxm\n"
        "  qps: 2\n"
        "  eager: true\n"
        "  ep: false\n"
        "  colocate: [llama2-13b, opt-1.3b]\n"
        "  lengths: \"fixed:512,128\"\n"
        "  trace: ${shared}/x.csv\n"
        "cases:\n"
        "  - {case: base}\n"
        "  - {case: two, qps: 4, eager: null, seed: 7}\n"
        "report:\n"
        "  - ttft_s.p99\n"
        "  - {metric: tpot_s.mean, label: TPOT, speedup_over: base, format: time, band: [a.lo, a.hi]}\n";
    st_scenario s;
    st_error err;
    assert_int_equal(load_scn(text, "/data", &s, &err), 0);
    assert_string_equal(s.id, "T9.9");
    assert_string_equal(s.command, "serve");
    assert_int_equal(s.n_cases, 2);
    assert_string_equal(joined(&s, 0), "serve llama2-7b --gpu h100-sxm --qps 2 --eager --colocate llama2-13b "
                                       "--colocate opt-1.3b --lengths fixed:512,128 --trace /data/x.csv --json");
    assert_string_equal(joined(&s, 1), "serve llama2-7b --gpu h100-sxm --qps 4 --colocate llama2-13b "
                                       "--colocate opt-1.3b --lengths fixed:512,128 --trace /data/x.csv --seed 7 --json");
    assert_true(s.needs_shared && !s.shared_missing);
    assert_int_equal(s.n_metrics, 2);
    assert_string_equal(s.metrics[0].path, "ttft_s.p99");
    assert_string_equal(s.metrics[0].label, "ttft_s.p99");
    assert_int_equal(s.metrics[0].speedup_over, -1);
    assert_string_equal(s.metrics[1].label, "TPOT");
    assert_int_equal(s.metrics[1].speedup_over, 0);
    assert_int_equal(s.metrics[1].format, ST_SCN_FMT_TIME);
    assert_string_equal(s.metrics[1].band[1], "a.hi");
    assert_int_equal(s.metrics[1].line, 18);
    st_scenario_free(&s);
    /* no shared folder: the scenario loads, marked to be skipped */
    assert_int_equal(load_scn(text, NULL, &s, &err), 0);
    assert_true(s.shared_missing);
    st_scenario_free(&s);
}

static void test_scenario_errors(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int line, col;
        const char *needle;
    } bad[] = {
        {"scenario: A\ntitle: t\ncommand: trian\nreport: [x]\n", 3, 10, "did you mean 'train'?"},
        {"scenario: A\ntitle: t\ncommand: sweep\nreport: [x]\n", 3, 10, "not a command a scenario can run"},
        {"scenario: A\ntitle: t\ncommand: train\nreport: [x]\nrepotr: 1\n", 5, 1, "did you mean 'report'?"},
        {"scenario: A\ntitle: t\ncommand: train\n", 1, 1, "missing required key 'report'"},
        {"scenario: A b\ntitle: t\ncommand: train\nreport: [x]\n", 1, 11, "an id has letters, digits"},
        {"scenario: A\ntitle: t\ncommand: train\noptions: {json: true}\nreport: [x]\n", 4, 11,
         "option 'json' is not allowed in a scenario (the suite adds --json itself)"},
        {"scenario: A\ntitle: t\ncommand: train\noptions: {trace: t.json}\nreport: [x]\n", 4, 11,
         "a scenario writes no file"},
        {"scenario: A\ntitle: t\ncommand: train\noptions: {--tp: 2}\nreport: [x]\n", 4, 11, "without the dashes"},
        {"scenario: A\ntitle: t\ncommand: train\noptions: {tp: {a: 1}}\nreport: [x]\n", 4, 15, "found a mapping"},
        {"scenario: A\ntitle: t\ncommand: train\noptions: [tp]\nreport: [x]\n", 4, 10, "expected a mapping of long options"},
        {"scenario: A\ntitle: t\ncommand: train\ncases:\n  - {case: a}\n  - {case: a}\nreport: [x]\n", 6, 12,
         "case 'a' is named twice"},
        {"scenario: A\ntitle: t\ncommand: train\ncases:\n  - {tp: 2}\nreport: [x]\n", 5, 5, "every case needs 'case: NAME'"},
        {"scenario: A\ntitle: t\ncommand: train\ncases:\n  - {case: a, tp: null}\nreport: [x]\n", 5, 19,
         "case option 'tp': no value"},
        {"scenario: A\ntitle: t\ncommand: train\nreport: [a..b]\n", 4, 10, "has an empty key between dots"},
        {"scenario: A\ntitle: t\ncommand: train\nreport: [\"a b\"]\n", 4, 10, "keys have letters, digits"},
        {"scenario: A\ntitle: t\ncommand: train\nreport: []\n", 4, 9, "the list is empty"},
        {"scenario: A\ntitle: t\ncommand: train\nreport: [{metric: x, speedup_over: b}]\n", 4, 36,
         "the scenario has no cases to compare"},
        {"scenario: A\ntitle: t\ncommand: train\ncases: [{case: bf16}]\nreport: [{metric: x, speedup_over: bf61}]\n", 5,
         36, "no case named 'bf61'; did you mean 'bf16'?"},
        {"scenario: A\ntitle: t\ncommand: train\nreport: [{metric: x, format: fast}]\n", 4, 30, "format"},
        {"scenario: A\ntitle: t\ncommand: train\nreport: [{metric: x, band: [a]}]\n", 4, 28, "a list of two paths"},
        {"scenario: A\ntitle: t\ncommand: train\noptions: {seq: \"a\\x01\"}\nreport: [x]\n", 4, 16, "control character"},
        {"", 1, 1, "the file is empty"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        st_scenario s;
        st_error err;
        char want[64];
        assert_int_not_equal(load_scn(bad[i].text, NULL, &s, &err), 0);
        snprintf(want, sizeof want, "s.yaml:%d:%d:", bad[i].line, bad[i].col);
        if (!strstr(err.msg, want) || !strstr(err.msg, bad[i].needle))
            fail_msg("case %zu: '%s' lacks '%s' or '%s'", i, err.msg, want, bad[i].needle);
        assert_int_equal(s.n_cases, 0); /* nothing kept */
    }
}

/* Lookups by path in a command's JSON output: nested keys, list indices,
 * numbers (NAN for text), and a miss that names the key and suggests. */
static void test_jdoc(void **state)
{
    (void)state;
    static const char json[] = "{\n  \"ttft_s\": {\"mean\": 0.25, \"p50\": 1e-3},\n  \"oom\": false,\n"
                               "  \"gpu\": \"h100-sxm\",\n  \"none\": null,\n"
                               "  \"layers\": [{\"time_s\": 1.5}, {\"time_s\": 2}]\n}\n";
    st_jdoc *d;
    st_error err;
    char t[64];
    double v;
    assert_int_equal(st_jdoc_parse("out", json, strlen(json), &d, &err), 0);
    assert_int_equal(st_jdoc_get(d, "ttft_s.mean", t, sizeof t, &v, &err), 0);
    assert_true(v == 0.25);
    assert_int_equal(st_jdoc_get(d, "ttft_s.p50", t, sizeof t, &v, &err), 0);
    assert_true(v == 1e-3);
    assert_int_equal(st_jdoc_get(d, "layers.1.time_s", t, sizeof t, &v, &err), 0);
    assert_true(v == 2);
    assert_int_equal(st_jdoc_get(d, "oom", t, sizeof t, &v, &err), 0);
    assert_string_equal(t, "false");
    assert_true(isnan(v));
    assert_int_equal(st_jdoc_get(d, "gpu", t, sizeof t, &v, &err), 0);
    assert_string_equal(t, "h100-sxm");
    assert_true(isnan(v));
    assert_int_equal(st_jdoc_get(d, "none", t, sizeof t, &v, &err), 0);
    assert_string_equal(t, "");
    assert_int_equal(st_jdoc_get(d, "ttft_s.p5", t, sizeof t, &v, &err), ST_ENOTFOUND);
    assert_non_null(strstr(err.msg, "no key 'p5' under 'ttft_s'; did you mean 'p50'?"));
    assert_non_null(strstr(err.msg, "keys there: mean, p50"));
    assert_int_equal(st_jdoc_get(d, "layers.2.time_s", t, sizeof t, &v, &err), ST_ENOTFOUND);
    assert_non_null(strstr(err.msg, "'layers' is a list of 2; '2' is not an index in 0..1"));
    assert_int_equal(st_jdoc_get(d, "ttft_s", t, sizeof t, &v, &err), ST_ENOTFOUND);
    assert_non_null(strstr(err.msg, "'ttft_s' is a mapping, not a value"));
    assert_int_equal(st_jdoc_get(d, "gpu.id", t, sizeof t, &v, &err), ST_ENOTFOUND);
    st_jdoc_free(d);
    /* a document that is not an object */
    assert_int_not_equal(st_jdoc_parse("out", "3", 1, &d, &err), 0);
    assert_null(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scenario_argv),
        cmocka_unit_test(test_scenario_errors),
        cmocka_unit_test(test_jdoc),
        cmocka_unit_test(test_bad_files),
        cmocka_unit_test(test_good_file_and_units),
        cmocka_unit_test(test_buffer_and_wrong_kind),
        cmocka_unit_test(test_resolve_names),
        cmocka_unit_test(test_hf_config),
        cmocka_unit_test(test_hf_distilbert),
        cmocka_unit_test(test_shared_hf_configs),
    };
    return cmocka_run_group_tests_name("loader", tests, NULL, NULL);
}
