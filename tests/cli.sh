#!/bin/sh
# Golden CLI tests: run the real binary, check its JSON field by field with
# jq, and check that bad input gives FILE:LINE:COL on stderr and exit != 0.
# Expected values come from published figures or hand calculation (noted).
srcdir=$(cd "$(dirname "$0")/.." && pwd)
. "$srcdir/tests/tap.sh"
S=${STRATA_BIN:-$srcdir/strata}
T=${STRATA_TESTDATA:-$srcdir/tests/data}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if ! command -v jq >/dev/null 2>&1; then
    echo "Bail out! jq is needed for the CLI tests (apt-get install jq)"
    exit 1
fi

# --version and help
check "--version prints the version" sh -c "'$S' --version | grep -Eq '^strata [0-9]+\.[0-9]+\.[0-9]+$'"
check "help lists the commands" sh -c "'$S' --help | grep -q 'list' && '$S' --help | grep -q 'show'"
check "every command has --help" sh -c "'$S' list --help | grep -q -- '--filter' && '$S' show --help | grep -q -- '--phase' && '$S' summary --help | grep -q -- '--gpu'"

# list --json: every preset and workload issue #2 names
"$S" list --json > "$tmp/list.json" 2> "$tmp/err"
for id in h100-sxm h100-pcie h200 b200 a100-40gb-sxm a100-80gb-sxm a100-40gb-pcie \
    a100-80gb-pcie a40 v100-sxm2-32gb v100-pcie-32gb l4 t4 p100-pcie-16gb p4 mi100 mi210 \
    mi250 mi300x eyeriss-like tpu-like simba-like mobile-cpu mobile-gpu dgx-a100 dgx-h100 ib-h100; do
    jq -e --arg id "$id" '.presets | map(.id) | index($id) != null' "$tmp/list.json" >/dev/null \
        || missing="$missing $id"
done
for id in gpt2-small gpt2-medium gpt2-large gpt2-xl gpt3-xl gpt3-2.7b gpt3-6.7b gpt3-13b \
    gpt3-175b bert-large opt-1.3b opt-13b llama2-7b llama2-13b llama2-70b llama3-8b \
    llama3-70b mixtral-8x7b switch-xl-4 resnet50 mobilenet-v2 sd-unet; do
    jq -e --arg id "$id" '.workloads | map(.id) | index($id) != null' "$tmp/list.json" >/dev/null \
        || missing="$missing $id"
done
if [ -z "$missing" ]; then ok "list --json has every preset and workload"; else not_ok "list --json has every preset and workload" "missing:$missing"; fi
check "list --json entries carry id, kind, name, path" \
    jq -e '[.presets[], .workloads[]] | all(.id and .kind and .name and .path)' "$tmp/list.json"

# --filter is a PCRE2 regex
n=$("$S" list --filter '^a100-.*-sxm' --json | jq '[.presets[].id] | length')
if [ "$n" = 2 ]; then ok "list --filter regex selects a100 SXM (2)"; else not_ok "list --filter regex selects a100 SXM (2)" "got $n"; fi
n=$("$S" list --filter '^l4$' --json | jq '[.presets[].id] == ["l4"]')
if [ "$n" = true ]; then ok "list --filter anchors match a whole field (^l4$ is the id l4)"; else not_ok "list --filter anchors match a whole field (^l4$ is the id l4)" "got $n"; fi
"$S" list --kind gpu --kind bogus > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q "option --kind given twice ('gpu', then 'bogus')" "$tmp/err"; then ok "a second --kind is refused (exit 2): an option is given once"; else not_ok "a second --kind is refused (exit 2): an option is given once" "rc=$rc $(cat "$tmp/err")"; fi
# output that cannot be written is an error (exit 1 with the reason), not a silent success
if [ -w /dev/full ]; then
    "$S" list > /dev/full 2> "$tmp/err"; rc=$?
    if [ $rc = 1 ] && grep -q "cannot write standard output" "$tmp/err"; then ok "stdout on a full device: exit 1 with the reason"; else not_ok "stdout on a full device: exit 1 with the reason" "rc=$rc $(cat "$tmp/err")"; fi
fi
"$S" list --filter '(' > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q "bad regular expression" "$tmp/err"; then ok "bad regex: exit 2 with the reason"; else not_ok "bad regex: exit 2 with the reason" "rc=$rc $(cat "$tmp/err")"; fi

# show llama2-7b: issue #2's check, 2.93e13 = 2*6.48e9*2048 + 4*32*4096*2048^2 + 2*4096*32000*2048
"$S" show llama2-7b --phase prefill --batch 1 --seq 2048 --json > "$tmp/l7.json"
check "show llama2-7b: ops have name, kind, flops, bytes" \
    jq -e '(.ops | length) > 10 and (.ops | all(.name and .kind and (.flops >= 0) and (.bytes > 0)))' "$tmp/l7.json"
check "show llama2-7b: total_flops within 1% of 2.93e13" \
    jq -e '(.total_flops / 2.93e13 - 1) | fabs < 0.01' "$tmp/l7.json"
check "show llama2-7b: ops' flops add up to total_flops" \
    jq -e '(([.ops[].flops] | add) / .total_flops - 1) | fabs < 1e-12' "$tmp/l7.json"
check "show llama2-7b: 6,738,415,616 parameters (Meta's published count)" \
    jq -e '.params == 6738415616' "$tmp/l7.json"
check "show llama2-7b: qkv is a 2048x4096x12288 GEMM repeated 32 times" \
    jq -e '.ops[] | select(.name == "block.attn.qkv") | .shape.m == 2048 and .shape.k == 4096 and .shape.n == 12288 and .repeat == 32' "$tmp/l7.json"

# decode: per-token FLOPs ~ 2 * params (weights) + attention over the KV cache
"$S" show llama2-7b --phase decode --batch 1 --kv 1023 --json > "$tmp/dec.json"
check "show --phase decode: ~2 FLOP per parameter per token (+attention)" \
    jq -e '(.total_flops / (2 * 6738415616 - 2 * 4096 * 32000 + 4 * 32 * 4096 * 1024) - 1) | fabs < 0.01' "$tmp/dec.json"
check "show --phase train has bwd ops and an optimizer step" \
    sh -c "'$S' show gpt2-small --phase train --seq 512 --json | jq -e '[.ops[].pass] | (index(\"bwd\") != null) and (index(\"opt\") != null)'"

# presets: numbers from the vendors' sheets
check "show h100-sxm: 132 SMs, 3.35 TB/s (H100 datasheet)" \
    sh -c "'$S' show h100-sxm --json | jq -e '.sm_count == 132 and .memory_bw_bytes_per_s == 3.35e12'"
# a preset's 66.9 TFLOP/s is 6.69e13 FLOP/s exactly, not 66.9 x 1e12
# (66900000000000.01): units scale the decimal the file gives
check "show --json: unit-scaled preset numbers are the decimal the file means (H100 FP32 66.9 TFLOP/s = 6.69e13)" \
    sh -c "'$S' show h100-sxm --json | jq -e '[.. | numbers | select(. > 6.68e13 and . < 6.70e13)] | length >= 2 and all(. == 6.69e13)'"
check "show --json: base_clock_hz is null where the preset gives no base clock (h100-sxm)" \
    sh -c "'$S' show h100-sxm --json | jq -e '.base_clock_hz == null and .boost_clock_hz == 1.98e9'"
check "coll --bytes takes PiB, as its limit's message names it (1PiB = 2^50 bytes)" \
    sh -c "'$S' coll allreduce --bytes 1PiB --json | jq -e '.bytes == 1125899906842624'"
check "show --json: an H100 FMA holds 1 issue slot, a V100's 2 (whitepapers), an MI100's is null" \
    sh -c "'$S' show h100-sxm --json | jq -e '.fma_issue_cycles == 1 and .fp32_lanes_per_sm == 128' && '$S' show v100-pcie-32gb --json | jq -e '.fma_issue_cycles == 2' && '$S' show mi100 --json | jq -e '.fma_issue_cycles == null'"
check "show dgx-h100: 8 GPUs resolved to h100-sxm" \
    sh -c "'$S' show dgx-h100 --json | jq -e '.gpus == 8 and .gpu.id == \"h100-sxm\"'"
check "show eyeriss-like: 14x12 PEs" \
    sh -c "'$S' show eyeriss-like --json | jq -e '.pe_x * .pe_y == 168'"

# Hugging Face config.json as a workload
check "a Hugging Face config.json loads as a workload" \
    sh -c "'$S' show '$T/hf/llama-2-7b-config.json' --json | jq -e '.params == 6738415616'"

# bad input: FILE:LINE:COL on stderr, non-zero exit, nothing on stdout
for f in "$T"/bad/*; do
    base=$(basename "$f")
    "$S" show "$f" > "$tmp/out" 2> "$tmp/err"; rc=$?
    if [ $rc -ne 0 ] && grep -q "^$f:[0-9][0-9]*:[0-9][0-9]*: " "$tmp/err" && [ ! -s "$tmp/out" ]; then
        ok "bad input $base: FILE:LINE:COL, exit $rc"
    else
        not_ok "bad input $base: FILE:LINE:COL, exit $rc" "$(cat "$tmp/err")"
    fi
done

# names and options
"$S" show h100-smx > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "did you mean 'h100-sxm'" "$tmp/err"; then ok "unknown name: did-you-mean"; else not_ok "unknown name: did-you-mean" "$(cat "$tmp/err")"; fi
"$S" show llama2-7b --phse decode > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q "did you mean --phase" "$tmp/err"; then ok "unknown option: exit 2, did-you-mean"; else not_ok "unknown option: exit 2, did-you-mean" "$(cat "$tmp/err")"; fi
"$S" kernel gemm --m 4 --n 4 --k > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q "option --k needs a value" "$tmp/err"; then ok "long option without its value: needs a value, not unknown"; else not_ok "long option without its value: needs a value, not unknown" "$(cat "$tmp/err")"; fi
"$S" show llama2-7b --seq 9000 > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "outside 1..4096" "$tmp/err"; then ok "seq beyond max_seq is refused"; else not_ok "seq beyond max_seq is refused" "$(cat "$tmp/err")"; fi
"$S" frobnicate > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 2 ]; then ok "unknown command: exit 2"; else not_ok "unknown command: exit 2" "rc=$rc"; fi

# hostile inputs found in review: none may hang, crash or print a half result
mkfifo "$tmp/fifo.yaml"
timeout 10 "$S" show "$tmp/fifo.yaml" > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "not a file" "$tmp/err"; then ok "a FIFO is refused, not waited on"; else not_ok "a FIFO is refused, not waited on" "rc=$rc $(cat "$tmp/err")"; fi
awk 'BEGIN { print "kind: gpu"; for (i = 0; i < 20000; i++) print "k" i ": 1" }' > "$tmp/many.yaml"
timeout 10 "$S" show "$tmp/many.yaml" > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "more than 4096 keys" "$tmp/err"; then ok "20000 keys: refused quickly"; else not_ok "20000 keys: refused quickly" "rc=$rc $(cat "$tmp/err")"; fi
"$S" show "$T/gen-bad/cnn-groups.yaml" > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "^$T/gen-bad/cnn-groups.yaml:7:5: " "$tmp/err" && [ ! -s "$tmp/out" ]; then ok "generation error: FILE:LINE:COL, nothing on stdout"; else not_ok "generation error: FILE:LINE:COL, nothing on stdout" "$(cat "$tmp/err")"; fi
"$S" show "$T/gen-bad/huge.yaml" --phase train > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "2^53" "$tmp/err" && [ ! -s "$tmp/out" ]; then ok "1.2e22 parameters: refused, no overflow"; else not_ok "1.2e22 parameters: refused, no overflow" "$(cat "$tmp/err")"; fi
# a decode step's KV cache counts too: 10^6 sequences x 10^8 cached tokens x
# 32 KV heads x 128 = 4.1e17 elements a layer, past 2^53
sed 's/^max_seq: 4096/max_seq: 100000000/' "$srcdir/workloads/llama2-7b.yaml" > "$tmp/longctx.yaml"
"$S" eval "$tmp/longctx.yaml" --phase decode --kv 99999999 --batch 1000000 > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "needs tensors of 4.1e+17 elements.*2^53" "$tmp/err" && [ ! -s "$tmp/out" ]; then ok "decode: a KV cache past 2^53 elements a layer is refused"; else not_ok "decode: a KV cache past 2^53 refused" "rc=$rc $(cat "$tmp/err")"; fi
# a required key written without a value is pointed at, not reported as
# missing from the mapping's first line
sed 's/^hidden: .*/hidden: ~/' "$srcdir/workloads/llama2-7b.yaml" > "$tmp/hnull.yaml"
"$S" show "$tmp/hnull.yaml" > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "hnull.yaml:4:9: transformer workload: key 'hidden' has no value" "$tmp/err" && [ ! -s "$tmp/out" ]; then ok "a required key with no value: FILE:LINE:COL of the key"; else not_ok "a required key with no value" "rc=$rc $(cat "$tmp/err")"; fi
mkdir -p "$tmp/amb/presets/gpu" "$tmp/amb/workloads"
cp "$srcdir/presets/gpu/t4.yaml" "$tmp/amb/presets/gpu/twin.yaml"
cp "$srcdir/workloads/gpt2-small.yaml" "$tmp/amb/workloads/twin.yaml"
STRATA_DATA="$tmp/amb" "$S" show twin > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "names both a gpu" "$tmp/err"; then ok "an id that names two files is an error"; else not_ok "an id that names two files is an error" "rc=$rc $(cat "$tmp/err")"; fi
check "summary of an encoder-only model: prefill only" \
    sh -c "'$S' summary --model bert-large --json | jq -e '[.steps[].phase] == [\"prefill\"]'"
check "summary on a GPU without the model's dtype falls back (P4, fp16 model: fp32)" \
    sh -c "'$S' summary --gpu p4 --model llama2-7b --json | jq -e '.workload.compute_dtype == \"fp32\" and .ridge_flop_per_byte > 0'"

# no arguments: the default H100 + Llama-2-7B set-up
"$S" > "$tmp/sum" 2>&1; rc=$?
if [ $rc = 0 ] && grep -q "H100 SXM" "$tmp/sum" && grep -q "Llama 2 7B" "$tmp/sum"; then ok "no arguments: default H100 + Llama-2-7B summary"; else not_ok "no arguments: default H100 + Llama-2-7B summary" "$(cat "$tmp/sum")"; fi
check "summary --json: decode is memory-bound on H100 (AI < ridge)" \
    sh -c "'$S' summary --json | jq -e '(.steps[] | select(.phase == \"decode\") | .flop_per_byte) < .ridge_flop_per_byte'"

# an HF config with an architecture strata does not model (DeepSeek's
# multi-head latent attention) is refused at the key, not read as a plain
# dense model
printf '{\n  "model_type": "deepseek_v2",\n  "hidden_size": 2048,\n  "num_hidden_layers": 27,\n  "num_attention_heads": 16,\n  "vocab_size": 102400,\n  "kv_lora_rank": 512\n}\n' > "$tmp/ds.json"
"$S" eval "$tmp/ds.json" --gpu h100-sxm > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "ds.json:7:19: key 'kv_lora_rank': multi-head latent attention" "$tmp/err" && [ ! -s "$tmp/out" ]; then
    ok "HF config with MLA (kv_lora_rank): refused at file:line:col, nothing on stdout"
else not_ok "HF config with MLA (kv_lora_rank): refused at file:line:col, nothing on stdout" "rc=$rc $(cat "$tmp/err")"; fi

# shared data: every NeuSight HF config loads (skip when absent)
SH=${STRATA_SHARED:-$srcdir/../shared/data}
if [ -d "$SH/neusight/models" ]; then
    bad=
    for f in "$SH"/neusight/models/*.json; do
        "$S" show "$f" --json > /dev/null 2>> "$tmp/hferr" || bad="$bad $(basename "$f")"
    done
    # opt.json is a 1-layer toy config; it must load too
    if [ -z "$bad" ]; then ok "shared NeuSight HF configs load"; else not_ok "shared NeuSight HF configs load" "$bad" "$(cat "$tmp/hferr")"; fi
else
    skip_test "shared NeuSight HF configs load" "../shared/data is absent"
fi

# one decode token routed to Mixtral's top-2 of 8 experts: only 2 expert GEMMs run
check "show mixtral decode batch 1: 2 active experts, not 8" \
    sh -c "'$S' show mixtral-8x7b --phase decode --batch 1 --json | jq -e '[.ops[] | select(.kind == \"moe_experts\")] | length > 0 and all(.shape.batch == 2 and .shape.m == 1)'"

# ---- GPU kernel model and composition (issue 3) ------------------------------
"$S" kernel gemm --gpu h100-sxm --m 8192 --n 8192 --k 8192 --json > "$tmp/k.json" 2> "$tmp/err"
check "kernel gemm --json: tile, tiles, waves, bound, time inside its band" \
    jq -e '.tile and .tiles > 0 and .waves >= 1 and .bound == "compute" and .lo_s < .time_s and .time_s < .hi_s' "$tmp/k.json"
# 2*8192^3 FLOPs at 989.4 TFLOP/s dense BF16 (H100 SXM datasheet) takes 1.111 ms: no faster
check "kernel gemm 8192^3 bf16 on H100: not faster than peak (>= 1.111 ms), within 2x" \
    jq -e '.time_s >= 2*8192*8192*8192/989.4e12 and .time_s < 2*2*8192*8192*8192/989.4e12' "$tmp/k.json"
"$S" kernel elementwise --gpu h100-sxm --rows 65536 --cols 65536 --inputs 2 --dtype fp32 --json > "$tmp/k2.json"
# 3 x 16 GiB moved at 3.35 TB/s takes >= 15.4 ms
check "kernel elementwise 2^32 fp32 add on H100: memory-bound, >= bytes / peak BW" \
    jq -e '.bound == "memory" and .time_s >= 3*4*65536*65536/3.35e12' "$tmp/k2.json"
# --cold: a 70.3 MB BF16 GEMM (128 x 8192 by 8192 x 4096, output 128 x 4096)
# whose operands start in DRAM cannot beat 70.3 MB at 3.35 TB/s = 21.0 us,
# nor can its band; warm (the default) it may, by L2 hits, but not below
# the bytes beyond the 50 MiB L2 (8.68 us, FLOPs 8.59 G / 989.4 T are less)
bytes=$(( (128*8192 + 8192*4096 + 128*4096) * 2 ))
"$S" kernel gemm --gpu h100-sxm --m 128 --n 4096 --k 8192 --cold --json > "$tmp/kc.json" 2> "$tmp/err"
"$S" kernel gemm --gpu h100-sxm --m 128 --n 4096 --k 8192 --json > "$tmp/kw.json" 2>> "$tmp/err"
check "kernel --cold: a GEMM from DRAM, time and band low end >= bytes / peak BW" \
    jq -e ".cold == true and .lo_s >= $bytes/3.35e12 and .floor_s >= $bytes/3.35e12 and .lo_s <= .time_s" "$tmp/kc.json"
check "kernel warm: band low end >= bytes beyond L2 / peak BW, below the cold time" \
    sh -c "jq -e '.cold == false and .lo_s >= ($bytes - 52428800)/3.35e12' '$tmp/kw.json' >/dev/null && [ \"\$(jq '.time_s < $(jq .time_s "$tmp/kc.json")' '$tmp/kw.json')\" = true ]"
"$S" kernel softmax --rows 4 --cols 4 --cold > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q -- "--cold does not apply to softmax" "$tmp/err" && [ ! -s "$tmp/out" ]; then ok "kernel --cold on a vector op: usage error"; else not_ok "kernel --cold on softmax" "rc=$rc $(cat "$tmp/err")"; fi
# the embedding is index_select: with index_cycles set to 2 by hand, 4096 x
# 8192 elements over the A100-SXM4's 108 SMs at 1.41 GHz take
# 33554432 x 2 / (108 x 1.41e9) = 440.7 us (its 134 MB at DRAM speed: 66 us),
# plus the table's fixed launch cost (a few us)
sed 's/^index_cycles:.*/index_cycles: 2/' "$srcdir/calibration/gpu-kernels.yaml" > "$tmp/idx2.yaml"
"$S" kernel embedding --gpu a100-80gb-sxm --dtype fp16 --rows 4096 --cols 8192 --coef "$tmp/idx2.yaml" --json > "$tmp/emb.json" 2> "$tmp/err"
check "kernel embedding: index_select's offset arithmetic, 440.7 us by hand at 2 cycles per element (+ launch < 5 us)" \
    jq -e '.bound == "compute" and .time_s >= 33554432*2/(108*1.41e9) and .time_s - 33554432*2/(108*1.41e9) < 5e-6' "$tmp/emb.json"
sed 's/^index_cycles:.*/index_cycles: -1/' "$srcdir/calibration/gpu-kernels.yaml" > "$tmp/idxbad.yaml"
"$S" kernel embedding --gpu a100-80gb-sxm --rows 4096 --cols 8192 --coef "$tmp/idxbad.yaml" > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "idxbad.yaml:[0-9]*:[0-9]*:.*index_cycles" "$tmp/err"; then ok "a negative index_cycles: FILE:LINE:COL error naming the key"; else not_ok "a negative index_cycles: FILE:LINE:COL error naming the key" "rc=$rc $(cat "$tmp/err")"; fi
# a table from before the memory-instruction cost moved to SM cycles
sed 's/^lsu_cycles: .*/lsu_ns: 6.5/' "$srcdir/calibration/gpu-kernels.yaml" > "$tmp/lsuns.yaml"
"$S" kernel embedding --gpu a100-80gb-sxm --rows 4096 --cols 8192 --coef "$tmp/lsuns.yaml" > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "lsuns.yaml:[0-9]*:[0-9]*:.*lsu_ns.*lsu_cycles" "$tmp/err"; then ok "an old table's lsu_ns: FILE:LINE:COL error naming lsu_cycles"; else not_ok "an old table's lsu_ns: FILE:LINE:COL error naming lsu_cycles" "rc=$rc $(cat "$tmp/err")"; fi
# PyTorch 2.8 on gathers rows with vectorized_gather_kernel, a plain copy:
# the same time as a one-in, one-out copy of those elements, whatever
# index_cycles says; a row that is not a multiple of 16 bytes keeps the
# per-element path
"$S" kernel embedding --gpu a100-80gb-sxm --dtype fp16 --rows 4096 --cols 8192 --coef "$tmp/idx2.yaml" --torch 2.11.0+cu128 --json > "$tmp/embv.json" 2> "$tmp/err"
"$S" kernel elementwise --gpu a100-80gb-sxm --dtype fp16 --rows 4096 --cols 8192 --inputs 1 --flops-per-elem 0 --coef "$tmp/idx2.yaml" --json > "$tmp/copy.json" 2> "$tmp/err"
check "kernel embedding --torch 2.11: vectorized_gather, priced as the copy of its rows" \
    jq -e --slurpfile c "$tmp/copy.json" '.kernel == "vectorized_gather" and .torch == "2.11" and .bound == "memory" and ((.time_s / $c[0].time_s - 1) | fabs) < 1e-12' "$tmp/embv.json"
"$S" kernel embedding --gpu a100-80gb-sxm --dtype fp16 --rows 4096 --cols 8191 --coef "$tmp/idx2.yaml" --torch 2.11 --json > "$tmp/embo.json" 2> "$tmp/err"
check "kernel embedding --torch 2.11, 16,382-byte rows: the per-element gather, offsets priced" \
    jq -e '.kernel == "gather" and .bound == "compute"' "$tmp/embo.json"
"$S" kernel embedding --rows 4 --cols 8 --torch 2.x > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q -- "--torch: expected a PyTorch release" "$tmp/err" && [ ! -s "$tmp/out" ]; then ok "kernel --torch 2.x: usage error"; else not_ok "kernel --torch 2.x: usage error" "rc=$rc $(cat "$tmp/err")"; fi
# the eager router's radix select by hand: 65,536 tokens over 256 experts
# on the H100 SXM run 256-thread blocks, 8 an SM, 63 waves over 132 SMs;
# raising topk_pass_cycles by 500 adds 63 x 18 passes x 500 / 1.98 GHz
sed 's/^topk_pass_cycles:.*/topk_pass_cycles: 1000/' "$srcdir/calibration/gpu-kernels.yaml" > "$tmp/tk1000.yaml"
sed 's/^topk_pass_cycles:.*/topk_pass_cycles: 1500/' "$srcdir/calibration/gpu-kernels.yaml" > "$tmp/tk1500.yaml"
"$S" kernel topk --rows 65536 --cols 256 --k 8 --coef "$tmp/tk1000.yaml" --json > "$tmp/tk1.json" 2> "$tmp/err"
"$S" kernel topk --rows 65536 --cols 256 --k 8 --coef "$tmp/tk1500.yaml" --json > "$tmp/tk2.json" 2> "$tmp/err"
check "kernel topk: gatherTopK's waves by hand, 63 x 18 x 500 cycles at 1.98 GHz" \
    jq -e --slurpfile a "$tmp/tk1.json" '.kernel == "eager" and .topk == 8 and (((.time_s - $a[0].time_s) / (63 * 18 * 500 / 1.98e9) - 1) | fabs) < 1e-9' "$tmp/tk2.json"
"$S" kernel topk --rows 65536 --cols 256 --k 8 --fused --coef "$tmp/tk1500.yaml" --json > "$tmp/tkf.json" 2> "$tmp/err"
check "kernel topk --fused: vLLM's one kernel, below the eager four" \
    jq -e --slurpfile a "$tmp/tk1.json" '.kernel == "topk_softmax" and .time_s < $a[0].time_s' "$tmp/tkf.json"
"$S" kernel topk --rows 64 --cols 8 --k 9 > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q -- "topk --k 9: a token keeps at most its --cols (8) experts" "$tmp/err" && [ ! -s "$tmp/out" ]; then ok "kernel topk --k past --cols: usage error"; else not_ok "kernel topk --k past --cols: usage error" "rc=$rc $(cat "$tmp/err")"; fi
"$S" kernel softmax --rows 64 --cols 8 --fused > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q -- "--fused does not apply to softmax" "$tmp/err"; then ok "kernel --fused on softmax: usage error"; else not_ok "kernel --fused on softmax: usage error" "rc=$rc $(cat "$tmp/err")"; fi
# the release reaches the composed step: Llama 3 8B's embedding of 32,768
# tokens (8 KiB rows) is a copy under 2.11, index_select's arithmetic under
# 2.1; with FlashAttention (no softmax kernel) nothing else in the step moves
"$S" eval llama3-8b --batch 4 --seq 8192 --attn flash --torch 2.11 --json > "$tmp/ev211.json" 2> "$tmp/err"
"$S" eval llama3-8b --batch 4 --seq 8192 --attn flash --json > "$tmp/ev201.json" 2> "$tmp/err"
check "eval --torch 2.11: the release in JSON; the embed layer a copy, below 2.1's gather" \
    jq -e --slurpfile o "$tmp/ev201.json" 'def emb($j): [$j.layers[] | select(.layer == "embed") | .time_s][0];
      .torch == "2.11" and $o[0].torch == "2.1" and emb(.) < 0.5 * emb($o[0])
      and (((.total_s - emb(.)) / ($o[0].total_s - emb($o[0])) - 1) | fabs) < 1e-9' "$tmp/ev211.json"
# eager attention's softmax over 8,192 keys: 2.1's cunn_SoftMaxForward
# streams the rows; 2.11's cunn_SoftMaxForwardReg is SM-bound on the H100
# (measured: 65,536 BF16 rows in 2.09 ms where a stream takes 0.78), so the
# blocks take longer under 2.11 and the head, which has none, does not
"$S" eval llama3-8b --batch 4 --seq 8192 --torch 2.11 --json > "$tmp/ee211.json" 2> "$tmp/err"
"$S" eval llama3-8b --batch 4 --seq 8192 --json > "$tmp/ee201.json" 2> "$tmp/err"
check "eval --torch 2.11, eager attention: the blocks' softmax runs the register kernel, slower than 2.1's; the head unchanged" \
    jq -e --slurpfile o "$tmp/ee201.json" 'def l($j; $n): [$j.layers[] | select(.layer == $n) | .time_s][0];
      l(.; "block") > 1.2 * l($o[0]; "block") and l(.; "head") == l($o[0]; "head")' "$tmp/ee211.json"
"$S" train llama3-8b --cluster dgx-a100 --gpus 8 --dp 8 --seq 8192 --flash --torch 2.11 --json > "$tmp/tr211.json" 2> "$tmp/err"
"$S" train llama3-8b --cluster dgx-a100 --gpus 8 --dp 8 --seq 8192 --flash --json > "$tmp/tr201.json" 2> "$tmp/err"
check "train --torch 2.11: the step prices the vectorized gather (faster than under 2.1)" \
    jq -e --slurpfile o "$tmp/tr201.json" '.iteration_s < $o[0].iteration_s' "$tmp/tr211.json"
# plan prices every configuration for the release: its best Llama 3 8B
# split on a DGX A100 is faster under 2.11 (the copy) than under 2.1
"$S" plan llama3-8b --cluster dgx-a100 --gpus 8 --seq 8192 --global-batch 8 --flash --torch 2.11 --json > "$tmp/pl211.json" 2> "$tmp/err"
"$S" plan llama3-8b --cluster dgx-a100 --gpus 8 --seq 8192 --global-batch 8 --flash --json > "$tmp/pl201.json" 2> "$tmp/err"
check "plan --torch 2.11: the configurations priced for the release (the best one faster than under 2.1)" \
    jq -e --slurpfile o "$tmp/pl201.json" '.plans[0].iteration_s < $o[0].plans[0].iteration_s' "$tmp/pl211.json"
"$S" eval mobilenet-v2 --gpu mobile-cpu --torch 2.11 > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q -- "drop --torch" "$tmp/err" && [ ! -s "$tmp/out" ]; then ok "eval --torch on an edge preset: usage error"; else not_ok "eval --torch on an edge preset: usage error" "rc=$rc $(cat "$tmp/err")"; fi
"$S" calibrate --quiet --ops "$tmp/no-such-dir" --out "$tmp/never.yaml" > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "no op sweep there" "$tmp/err" && [ ! -e "$tmp/never.yaml" ]; then ok "calibrate --ops without an ops.csv: error, nothing written"; else not_ok "calibrate --ops without an ops.csv: error, nothing written" "rc=$rc $(cat "$tmp/err")"; fi
"$S" kernel gemm --m 64 --n 4096 --k 4096 --int4 --dtype fp32 > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q -- "--int4 is weight-only INT4 with 16-bit activations (W4A16): give --dtype fp16 or bf16, not fp32" "$tmp/err" && [ ! -s "$tmp/out" ]; then ok "kernel --int4 with FP32 activations: usage error"; else not_ok "kernel --int4 --dtype fp32" "rc=$rc $(cat "$tmp/err")"; fi
"$S" kernel gemm --m 16 --n 4096 --k 4096 --int4-kernel cutlass > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q -- "--int4-kernel: expected marlin or tinygemm, got 'cutlass'" "$tmp/err" && [ ! -s "$tmp/out" ]; then ok "kernel --int4-kernel cutlass: usage error naming the two kernels"; else not_ok "kernel --int4-kernel cutlass" "rc=$rc $(cat "$tmp/err")"; fi
"$S" kernel gemm --m 16 --n 4096 --k 4096 --int4-kernel tinygemm --dtype fp16 > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q "tinygemm on h100-sxm gemm: its activations are BF16" "$tmp/err" && [ ! -s "$tmp/out" ]; then ok "kernel --int4-kernel tinygemm --dtype fp16: usage error (tinygemm takes BF16 activations)"; else not_ok "kernel --int4-kernel tinygemm --dtype fp16" "rc=$rc $(cat "$tmp/err")"; fi
"$S" kernel gemm --gpu v100-sxm2-32gb --m 16 --n 4096 --k 4096 --int4-kernel tinygemm > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q "needs BF16 tensor cores (NVIDIA Ampere or later)" "$tmp/err" && [ ! -s "$tmp/out" ]; then ok "kernel --int4-kernel tinygemm on a V100: usage error naming Ampere"; else not_ok "kernel --int4-kernel tinygemm on a V100" "rc=$rc $(cat "$tmp/err")"; fi
# gemm folds --b into the rows (torch.matmul of [b, m, k] by [k, n] is one mm): every split prices the same
check "kernel gemm: --b 1 --m 4096, --b 256 --m 16 and --b 4096 --m 1 price the same" \
    sh -c "for a in '--b 1 --m 4096' '--b 256 --m 16' '--b 4096 --m 1'; do '$S' kernel gemm \$a --n 4096 --k 4096 --json | jq -r .time_s; done | sort -u | wc -l | grep -qx 1"
# tinygemm against Marlin on the H100's 4096 x 12288 x 4096 layer: tinygemm
# measures 14.19 ms there (data/measured/h100/ops.csv, 29 TFLOP/s), Marlin's
# tiles run it near the tensor peak; the JSON names the kernel
"$S" kernel gemm --m 4096 --n 12288 --k 4096 --int4-kernel tinygemm --json > "$tmp/tg.json" 2> "$tmp/err"
"$S" kernel gemm --m 4096 --n 12288 --k 4096 --int4 --json > "$tmp/mr.json" 2>> "$tmp/err"
check "kernel --int4-kernel tinygemm: 16x8 tiles, within 10% of the H100's measured 14.19 ms, over 10x Marlin's time" \
    jq -e -n --slurpfile t "$tmp/tg.json" --slurpfile m "$tmp/mr.json" '
      $t[0].kernel == "tinygemm" and $m[0].kernel == "marlin" and $t[0].tile == "16x8" and
      ($t[0].time_s / 0.01419 - 1 | fabs) <= 0.10 and $t[0].time_s > 10 * $m[0].time_s'
"$S" kernel gemm --gpu v100-pcie-32gb --dtype fp8 --m 64 --n 64 --k 64 > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "fp8" "$tmp/err"; then ok "kernel: a dtype the GPU lacks is an error naming it"; else not_ok "kernel: a dtype the GPU lacks is an error naming it" "rc=$rc $(cat "$tmp/err")"; fi
"$S" train "" > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q "empty argument" "$tmp/err"; then ok "train '': a usage error"; else not_ok "train '': a usage error" "rc=$rc"; fi
"$S" kernel bmm --b 1099511627776 --m 1099511627776 --n 1099511627776 --k 1099511627776 > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q "2^53" "$tmp/err"; then ok "kernel: sizes past 2^53 multiply-adds are a usage error"; else not_ok "kernel: sizes past 2^53 multiply-adds are a usage error" "rc=$rc"; fi
"$S" coll allreduce --cluster ib-a10 --gpus 8 --bytes 1MB > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "no cluster or node named 'ib-a10'; did you mean 'ib-a100'" "$tmp/err" && [ ! -s "$tmp/out" ]; then ok "coll --cluster with a typo: names both kinds it looked for and the nearest cluster"; else not_ok "coll --cluster typo message" "rc=$rc $(cat "$tmp/err")"; fi
"$S" coll allreduce --cluster hgx-h100-4gp --gpus 4 --bytes 1MB > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "no cluster or node named 'hgx-h100-4gp'; did you mean 'hgx-h100-4gpu'" "$tmp/err"; then ok "coll --cluster with a node-name typo: the nearest node suggested"; else not_ok "coll --cluster node typo message" "rc=$rc $(cat "$tmp/err")"; fi
# 1e9 x 1000 x 1000 = 1e15 per group is countable; 10^12 groups are not
"$S" kernel conv --m 1000000000 --n 1000 --k 1000 --groups 1000000000000 > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q "1e+27 multiply-adds.*2^53" "$tmp/err" && [ ! -s "$tmp/out" ]; then ok "kernel conv: --groups counts toward the 2^53 limit"; else not_ok "kernel conv: --groups counts toward the 2^53 limit" "rc=$rc $(cat "$tmp/err")"; fi
"$S" kernel gemm --m 64 > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q -- "--n" "$tmp/err"; then ok "kernel gemm without --n/--k: usage error"; else not_ok "kernel gemm without --n/--k: usage error" "rc=$rc"; fi
# an option the op does not read is refused (exit 2), naming it, the op and
# the options the op takes (st_kernel_estimate: GEMM-like ops read b, m, n,
# k, the INT4 weights and --cold, conv also groups; vector ops rows and cols;
# elementwise alone its inputs and ALU work), not ignored
while IFS='|' read -r args opt takes; do
    # shellcheck disable=SC2086
    "$S" kernel $args > "$tmp/out" 2> "$tmp/err"; rc=$?
    op=${args%% *}
    if [ $rc = 2 ] && [ ! -s "$tmp/out" ] && grep -q -- "$opt does not apply to $op; $op takes $takes (and --gpu" "$tmp/err"; then
        ok "kernel $args: $opt refused, naming what $op takes"
    else not_ok "kernel $args: $opt refused, naming what $op takes" "rc=$rc $(cat "$tmp/err")"; fi
done <<'CASES'
softmax --rows 64 --cols 64 --m 4096|--m|--rows, --cols
gemm --m 64 --n 64 --k 64 --rows 10|--rows|--b, --m, --n, --k, --int4, --int4-kernel, --cold, --sustained
gemm --m 64 --n 64 --k 64 --heads 8|--heads|--b, --m, --n, --k, --int4, --int4-kernel, --cold, --sustained
softmax --rows 64 --cols 64 --int4|--int4|--rows, --cols
gemm --m 64 --n 64 --k 64 --inputs 2|--inputs|--b, --m, --n, --k, --int4, --int4-kernel, --cold, --sustained
bmm --b 2 --m 64 --n 64 --k 64 --flops-per-elem 3|--flops-per-elem|--b, --m, --n, --k, --int4, --int4-kernel, --cold, --sustained
gemm --m 64 --n 64 --k 64 --groups 2|--groups|--b, --m, --n, --k, --int4, --int4-kernel, --cold, --sustained
flash --heads 8 --kv-len 128 --head-dim 64 --m 64|--m|--b, --heads, --kv-heads, --q-len, --kv-len, --head-dim, --causal, --backward, --fa3, --cold, --sustained
norm --rows 64 --cols 64 --b 2|--b|--rows, --cols
embedding --rows 64 --cols 64 --inputs 2|--inputs|--rows, --cols
elementwise --rows 64 --cols 64 --causal|--causal|--rows, --cols, --inputs, --flops-per-elem
CASES
# softmax and norm count their own ALU work, as eval prices them (it was 1
# per element from the command line): a softmax row element is max,
# subtract, exp, sum, scale = 5 ops; a norm's is mean 1, variance 3
# (subtract, square, add), normalise 2, scale 1, shift 1 = 8; over 2^20
check "kernel softmax 1024 x 1024: 5 x 2^20 = 5242880 FLOP" \
    sh -c "'$S' kernel softmax --rows 1024 --cols 1024 --json | jq -e '.flops == 5242880'"
check "kernel norm 1024 x 1024: 8 x 2^20 = 8388608 FLOP" \
    sh -c "'$S' kernel norm --rows 1024 --cols 1024 --json | jq -e '.flops == 8388608'"
# the norm's ALU side by hand: PyTorch's FP16 layer norm on an A100 takes 9
# lane ops an element, one reciprocal and 5 conversions at 16 lanes of the
# SM's 64 (4 slots each): 33 slots = 66 FLOPs of the 19.5 TFLOP/s peak, plus
# the 2.5 us launch; 4096 x 2560 (phi-2's norm) is compute-bound, FP32
# (13 slots, twice the bytes) memory-bound
check "kernel norm fp16 4096 x 2560 on an A100: 2.5 us + 10485760 x 66 / 19.5e12 (compute-bound); fp32 memory-bound" \
    sh -c "'$S' kernel norm --gpu a100-80gb-sxm --dtype fp16 --rows 4096 --cols 2560 --json | jq -e '.bound == \"compute\" and ((.time_s - (2.5e-6 + 10485760 * 66 / 19.5e12)) | fabs) < 1e-12' > /dev/null &&
           '$S' kernel norm --gpu a100-80gb-sxm --dtype fp32 --rows 4096 --cols 2560 --json | jq -e '.bound == \"memory\"' > /dev/null"
# ... and the options an op does read are still taken, before or after it
for args in "conv --groups 2 --b 1 --m 64 --n 64 --k 64 --int4" "flash --b 2 --heads 8 --kv-heads 2 --q-len 64 --kv-len 128 --head-dim 64 --causal" \
    "--inputs 2 elementwise --rows 64 --cols 64 --flops-per-elem 3" "topk --rows 64 --cols 8"; do
    # shellcheck disable=SC2086
    "$S" kernel $args --json > "$tmp/out" 2> "$tmp/err"; rc=$?
    if [ $rc = 0 ] && jq -e '.time_s > 0' "$tmp/out" > /dev/null; then ok "kernel $args: every option applies"; else not_ok "kernel $args: every option applies" "rc=$rc $(cat "$tmp/err")"; fi
done

"$S" eval llama2-7b --gpu h100-sxm --phase prefill --batch 1 --seq 2048 --json > "$tmp/e.json"
check "eval --json: total inside both bands, layers listed" \
    jq -e '.lo_s < .total_s and .total_s < .hi_s and .lo_uncorrelated_s < .total_s and .band == "correlated" and (.layers | length) >= 3' "$tmp/e.json"
check "eval: layers' times add up to the step (less one sync)" \
    jq -e '((([.layers[].time_s] | add) / .total_s) - 1 | fabs) < 0.001' "$tmp/e.json"
check "eval: error shares add up to 1" \
    jq -e '(([.layers[].error_share] | add) - 1 | fabs) < 1e-9' "$tmp/e.json"
check "eval: FLOPs equal show's total_flops (same operator list)" \
    sh -c "test \"\$(jq .flops '$tmp/e.json')\" = \"\$('$S' show llama2-7b --phase prefill --batch 1 --seq 2048 --json | jq .total_flops)\""
# --kernels lists every operator: the parts add up to the step's GPU time and launch count
for args in "gpt2-small --phase train --batch 2 --seq 256" "gpt2-small --phase train --batch 2 --seq 256 --recompute" \
    "gpt2-small --seq 256 --fused" "mobilenet-v2 --gpu mobile-gpu"; do
    # shellcheck disable=SC2086
    "$S" eval $args --kernels --json > "$tmp/k.json" 2> "$tmp/err"; rc=$?
    if [ $rc = 0 ] && jq -e '(((([.operators[] | .time_s * .runs] | add) / .kernel_s) - 1 | fabs) < 1e-9) and
            (([.operators[] | select(.fused | not) | .runs] | add) == .kernels) and
            (.operators | all(.name and .pass and .shape))' "$tmp/k.json" > /dev/null; then
        ok "eval $args --kernels: operators add up to kernel_s and the launch count"
    else
        not_ok "eval $args --kernels: operators add up to kernel_s and the launch count" "rc=$rc $(cat "$tmp/err")"
    fi
done
# recompute replays each repeated block's own forward: ResNet-50's conv2_x and
# conv5_x (2 blocks each) both run their forward 2 x 2 times; Switch's
# decoder blocks (12) 24 times, not the encoder's twice
check "eval --recompute: every repeated stage replays its own forward (ResNet-50)" \
    sh -c "'$S' eval resnet50 --phase train --recompute --kernels --json | jq -e '[.operators[] | select(.pass == \"fwd\" and (.layer == \"conv2_x\" or .layer == \"conv5_x\")) | .runs] | (length > 0) and all(. == 4)' >/dev/null"
check "eval --recompute: an encoder-decoder replays the decoder's forward (Switch)" \
    sh -c "'$S' eval switch-xl-4 --phase train --seq 128 --recompute --kernels --json | jq -e '[.operators[] | select(.pass == \"fwd\" and (.layer | test(\"^(enc|dec)_\")) and .layer != \"enc_final\") | .runs] | (length > 0) and all(. == 24)' >/dev/null"
check "eval --kernels: a table with one line per operator" \
    sh -c "'$S' eval gpt2-small --seq 128 --kernels | grep -q 'block.attn.qkv .*gemm_'"
check "eval --json without --kernels: no operator list" \
    sh -c "'$S' eval gpt2-small --seq 128 --json | jq -e '.operators == null' >/dev/null"
# decode reads every weight once: 13.48 GB of FP16 weights at 3.35 TB/s >= 4.02 ms
check "eval decode llama2-7b on H100: not faster than reading the weights (>= 4.02 ms)" \
    sh -c "'$S' eval llama2-7b --phase decode --batch 1 --seq 1024 --json | jq -e '.total_s >= 2*6738415616/3.35e12'"
check "eval train: --recompute costs more than without" \
    sh -c "a=\$('$S' eval gpt2-small --phase train --batch 8 --seq 1024 --json | jq .total_s); b=\$('$S' eval gpt2-small --phase train --batch 8 --seq 1024 --recompute --json | jq .total_s); jq -n \"\$b > \$a\" | grep -q true"
check "eval --fused: fewer host costs than eager at batch 1" \
    sh -c "a=\$('$S' eval gpt2-small --batch 1 --seq 128 --json | jq .host_s); b=\$('$S' eval gpt2-small --batch 1 --seq 128 --fused --json | jq .host_s); jq -n \"\$b < \$a\" | grep -q true"
"$S" eval llama2-7b --gpu p4 --dtype fp8 > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "fp8" "$tmp/err"; then ok "eval: a dtype the GPU lacks is an error"; else not_ok "eval: a dtype the GPU lacks is an error" "rc=$rc"; fi
"$S" validate nosuch > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q "neusight, vidur, vllm or edge" "$tmp/err"; then ok "validate: unknown data set is a usage error"; else not_ok "validate: unknown data set is a usage error" "rc=$rc"; fi
# a table whose tensor-core GEMMs cost nothing for their math would put a
# GEMM past the peak: refused at the coefficient
sed 's/^    beta: \[1.25641, /    beta: [0, /' "$srcdir/calibration/gpu-kernels.yaml" > "$tmp/zc.yaml"
"$S" kernel gemm --m 4096 --n 4096 --k 4096 --dtype bf16 --coef "$tmp/zc.yaml" > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "zc.yaml:[0-9]*:12: class gemm_tc: beta 'compute' is 0" "$tmp/err" && [ ! -s "$tmp/out" ]; then ok "coefficients: a zero compute term is refused at FILE:LINE:COL"; else not_ok "coefficients: a zero compute term" "rc=$rc $(cat "$tmp/err")"; fi
"$S" eval llama2-7b --coef "$T/bad-coef/feature.yaml" > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "feature.yaml:[0-9]*:[0-9]*:" "$tmp/err"; then ok "a stale coefficient table: FILE:LINE:COL error"; else not_ok "a stale coefficient table: FILE:LINE:COL error" "rc=$rc $(cat "$tmp/err")"; fi

# Accuracy against ../shared/data (skips when absent). The guards below are
# regression limits at the accuracy reached now; the issue's bars (10% per
# device x op class, 6% per device for models) are printed as diagnostics.
if [ -d "$SH/neusight/kernels-test" ] && [ -d "$SH/vidur/profiling" ]; then
    "$S" validate neusight --data "$SH/neusight" --json --samples "$tmp/samples.csv" > "$tmp/vn.json" 2> "$tmp/err"
    check "validate neusight --json: kernels[] and models[] with the issue's keys" \
        jq -e '(.kernels | length) >= 25 and (.kernels | all(.device and .op and .n > 0 and .mape >= 0 and .p90 >= 0)) and (.models | length) >= 40 and (.models | all(.device and .model and .mode and .seq and .batch and (.fusion|type == "boolean") and .measured_ms > 0 and .predicted_ms > 0 and .lo_ms < .predicted_ms and .hi_ms > .predicted_ms))' "$tmp/vn.json"
    jq -r '.devices[] | "# kernels-test \(.device): MAPE \(.mape*100|round/100)% (bar 8%)"' "$tmp/vn.json"
    jq -r '.model_devices[] | "# models \(.device): MAPE \(.mape*100|round/100)% (bar 6%)"' "$tmp/vn.json"
    check "validate neusight: kernels-test MAPE per device <= 18% (regression guard)" \
        jq -e '.devices | all(.mape <= 18)' "$tmp/vn.json"
    check "validate neusight: kernels-test A100 GEMMs (bmm, linear) MAPE <= 14% (regression guard)" \
        jq -e '[.kernels[] | select((.op == "bmm" or .op == "linear") and (.device | test("A100")))] | length == 4 and all(.mape <= 14)' "$tmp/vn.json"
    check "validate neusight: kernels-test elementwise MAPE per device <= 8% (regression guard)" \
        jq -e '[.kernels[] | select(.op == "elementwise")] | length >= 6 and all(.mape <= 8)' "$tmp/vn.json"
    check "validate neusight: kernels-test layer norm MAPE per device <= 15% (regression guard)" \
        jq -e '[.kernels[] | select(.op == "ln")] | length >= 6 and all(.mape <= 15)' "$tmp/vn.json"
    check "validate neusight: kernels-test softmax MAPE per device <= 21% (regression guard)" \
        jq -e '[.kernels[] | select(.op == "softmax")] | length >= 6 and all(.mape <= 21)' "$tmp/vn.json"
    check "validate neusight: whole-model MAPE per device <= 15% (regression guard)" \
        jq -e '.model_devices | all(.mape <= 15)' "$tmp/vn.json"
    check "validate neusight: whole-model MAPE <= 6% on the V100 and A100-40GB labels (bar)" \
        jq -e '[.model_devices[] | select(.device | test("V100|A100-PCIE-40GB"))] | length == 2 and all(.mape <= 6)' "$tmp/vn.json"
    # one CSV row per measured kernel: as many as the per-device counts add up to
    check "validate --samples: one CSV row per kernel scored" \
        sh -c "[ \$((\$(wc -l < '$tmp/samples.csv') - 1)) -eq \$(jq '[.devices[].n] | add' '$tmp/vn.json') ]"
    "$S" validate neusight --data "$SH/neusight" --samples "$tmp/no/such/dir/s.csv" > /dev/null 2> "$tmp/err"; rc=$?
    if [ $rc = 1 ] && grep -q "cannot write" "$tmp/err" && [ ! -e "$tmp/no/such/dir/s.csv" ]; then ok "validate --samples into a missing folder: error, nothing written"; else not_ok "validate --samples into a missing folder: error, nothing written" "rc=$rc"; fi
    check "validate neusight: the 90% band holds >= 80% of the measured models (bar)" \
        jq -e '([.models[] | select(.measured_ms >= .lo_ms and .measured_ms <= .hi_ms)] | length) >= 0.8 * (.models | length)' "$tmp/vn.json"
    "$S" validate vidur --data "$SH/vidur" --json --coll-samples "$tmp/coll.csv" > "$tmp/vv.json" 2> "$tmp/err"
    check "validate vidur --json: mlp[] rows with device, op, tp, n, mape, p90" \
        jq -e '(.mlp | length) > 10 and (.mlp | all(.device and .op and .tp >= 1 and .n > 0 and .mape >= 0 and .p90 >= 0))' "$tmp/vv.json"
    check "validate vidur: A100 projection GEMMs MAPE <= 10% per op x TP (num_tokens >= 64; bar)" \
        jq -e '[.mlp[] | select(.device == "a100" and (.op | test("proj$")))] | length > 0 and all(.mape <= 10)' "$tmp/vv.json"
    # Sarathi's one-element-per-thread kernels (norm, SiLU-and-mul, rotary):
    # the A100 rows set the instruction rate, the A40 rows are held out
    check "validate vidur: A100 norm, act and rope MAPE <= 20% per op x TP (regression guard)" \
        jq -e '[.mlp[] | select(.device == "a100" and (.op | test("layernorm|mlp_act|attn_rope")))] | length == 16 and all(.mape <= 20)' "$tmp/vv.json"
    check "validate vidur: A40 norm, act and rope (held out) MAPE <= 30% per op x TP (regression guard)" \
        jq -e '[.mlp[] | select(.device == "a40" and (.op | test("layernorm|mlp_act|attn_rope")))] | length == 16 and all(.mape <= 30)' "$tmp/vv.json"
    # the embedding is index_select, priced by its offset arithmetic
    # (index_cycles, fitted on the A100 rows; the A40 rows held out)
    check "validate vidur: embedding MAPE <= 10% per TP on the A100, <= 30% on the A40 (held out; regression guard)" \
        jq -e '[.mlp[] | select(.op == "emb")] | length == 8 and all(.mape <= (if .device == "a100" then 10 else 30 end))' "$tmp/vv.json"
    check "validate vidur: all A100 operator rows MAPE <= 10% (num_tokens >= 64; bar)" \
        jq -e '[.devices[] | select(.device == "a100" and .op == "all")] | length == 1 and all(.mape <= 10)' "$tmp/vv.json"
    check "validate vidur --json: collectives[] rows for a100_dgx all-reduce and send/recv" \
        jq -e '(.collectives | length) == 9 and (.collectives | all(.cluster == "a100_dgx" and .n > 800 and .floor_measured_s > 0))' "$tmp/vv.json"
    check "validate vidur: intra-node all-reduce, 4 and 8 GPUs (held out), MAPE <= 15% for >= 1 MiB (bar)" \
        jq -e '[.collectives[] | select(.collective == "allreduce" and .gpus == .per_node and .gpus > 2)] | length == 2 and all(.mape <= 15)' "$tmp/vv.json"
    check "validate vidur: every collective row MAPE <= 40% (regression guard; 4 and 16 GPUs on 2 nodes are the worst)" \
        jq -e '.collectives | all(.mape <= 40)' "$tmp/vv.json"
    check "validate vidur: NCCL timings >= 1 MiB, all rows pooled, MAPE <= 15% (bar)" \
        jq -e '.collectives_summary.mape <= 15 and .collectives_summary.n > 7000' "$tmp/vv.json"
    check "validate vidur: the 16-GPU all-reduce (held out) MAPE <= 40%, 8 GPUs at 4 a node (characterised) <= 12% (regression guard)" \
        jq -e '([.collectives[] | select(.gpus == 16)] | length == 1 and all(.mape <= 40 and (.characterised | not))) and
               ([.collectives[] | select(.gpus == 8 and .per_node == 4)] | length == 1 and all(.mape <= 12 and .characterised))' "$tmp/vv.json"
    # the per-size CSV against the summary and against VIDUR's own file:
    # one row per scored size, their mean APE is the pooled MAPE, and the
    # measured column is all_reduce.csv's median (ms) in seconds
    check "validate vidur --coll-samples: one row per scored size, mean APE = the pooled MAPE" \
        sh -c "n=\$(jq '.collectives_summary.n' '$tmp/vv.json'); m=\$(jq '.collectives_summary.mape' '$tmp/vv.json');
               awk -F, -v n=\"\$n\" -v m=\"\$m\" 'NR > 1 { s += \$10; k++ } END { d = s / k - m; exit !(k == n && d < 0.01 && d > -0.01) }' '$tmp/coll.csv'"
    check "validate vidur --coll-samples: measured_s is VIDUR's median (2 nodes x 1 GPU, 1 MiB all-reduce)" \
        sh -c "want=\$(awk -F, '\$9 == 1048576 && \$8 == 2 && \$11 == 1 { print \$5 / 1000 }' '$SH/vidur/profiling/network/a100_dgx/all_reduce.csv');
               got=\$(awk -F, '\$3 == \"allreduce\" && \$4 == 2 && \$5 == 1 && \$6 == 1048576 { print \$8 }' '$tmp/coll.csv');
               [ -n \"\$want\" ] && awk -v a=\"\$want\" -v b=\"\$got\" 'BEGIN { exit !(a > 0 && a - b < 1e-12 && b - a < 1e-12) }'"
    "$S" validate neusight --data "$SH/neusight" --coll-samples "$tmp/nc.csv" > /dev/null 2> "$tmp/err"; rc=$?
    if [ $rc = 2 ] && grep -q "is for vidur" "$tmp/err" && [ ! -e "$tmp/nc.csv" ]; then ok "validate neusight --coll-samples: refused (exit 2), nothing written"; else not_ok "validate neusight --coll-samples: refused (exit 2), nothing written" "rc=$rc"; fi
    # calibrate's bit-for-bit reproduction: tests/calibrate.sh (its own
    # file, so that make check runs it beside this one)
else
    for t in "validate neusight --json keys" "kernels-test guard" "A100 GEMM guard" "elementwise guard" "ln guard" "softmax guard" "model guard" "model bar" \
        "samples rows" "samples write error" "model band coverage" \
        "validate vidur --json keys" "vidur GEMM bar" "vidur A100 vector guard" "vidur A40 vector guard" "vidur embedding guard" "vidur A100 all-rows bar" "collectives rows" "collectives intra-node bar" \
        "collectives guard" "coll-samples rows" "coll-samples measured" "coll-samples on neusight"; do
        skip_test "$t" "../shared/data is absent"
    done
fi

# --samples and --coll-samples naming one file, however spelled, are refused
# before any data is read (an empty --data folder: nothing to score): files
# not there yet by folder and name, then existing ones by inode (a link)
mkdir -p "$tmp/same/data" "$tmp/same/sub"
same_file() {
    (cd "$tmp/same" && "$S" validate vidur --data data --samples "$1" --coll-samples "$2") > /dev/null 2> "$tmp/err"; rc=$?
    if [ $rc = 2 ] && grep -q -- "--samples '$1' and --coll-samples '$2' name the same file" "$tmp/err" &&
        { [ "$3" != "not there yet" ] || [ ! -e "$tmp/same/x.csv" ]; } && [ ! -s "$tmp/same/x.csv" ]; then
        ok "validate --samples $1 --coll-samples ${2#"$tmp"/} ($3): one file, refused (exit 2), nothing written"
    else not_ok "validate --samples $1 --coll-samples ${2#"$tmp"/} ($3): one file, refused" "rc=$rc $(cat "$tmp/err")"; fi
}
same_file x.csv ./x.csv "not there yet"
same_file sub/../x.csv "$tmp/same/x.csv" "not there yet"
: > "$tmp/same/x.csv" && ln -s x.csv "$tmp/same/l.csv"
same_file ./x.csv x.csv "existing"
same_file l.csv x.csv "a link to it"
(cd "$tmp/same" && "$S" validate vidur --data data --samples x.csv --coll-samples y.csv) > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && ! grep -q "same file" "$tmp/err" && [ ! -e "$tmp/same/y.csv" ]; then ok "validate --samples x.csv --coll-samples y.csv: two files pass the check"; else not_ok "validate: two files pass the same-file check" "rc=$rc $(cat "$tmp/err")"; fi

# a label whose name does not parse is an error naming it, not a label
# silently left out of the figures
mkdir -p "$tmp/badlabel/kernels-test" "$tmp/badlabel/models" "$tmp/badlabel/labels/Tesla_T4"
printf '{}\n' > "$tmp/badlabel/labels/Tesla_T4/bert-large-inf-512-8.json"
"$S" validate neusight --data "$tmp/badlabel" --samples "$tmp/badlabel.csv" > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "bert-large-inf-512-8.json: not a label name" "$tmp/err" && [ ! -s "$tmp/out" ] && [ ! -e "$tmp/badlabel.csv" ]; then ok "validate neusight: a label file name that does not parse is an error naming it"
else not_ok "validate neusight: a label file name that does not parse is an error" "rc=$rc $(cat "$tmp/err")"; fi

# an output option never lands on a file the run reads: the input is left
# as it was and the run is refused (exit 2) before anything is written
mkdir -p "$tmp/guard/data/kernels-test"
printf '{"id": 1}\n' > "$tmp/guard/req.jsonl"
cp "$tmp/guard/req.jsonl" "$tmp/guard/req.orig"
"$S" serve gpt2-small --gpu h100-sxm --trace "$tmp/guard/req.jsonl" --per-request "$tmp/guard/req.jsonl" > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q -- "--per-request '.*req.jsonl' is the file --trace" "$tmp/err" && cmp -s "$tmp/guard/req.jsonl" "$tmp/guard/req.orig"; then ok "serve --per-request on its own --trace file: refused, the trace untouched"
else not_ok "serve --per-request on its own --trace file" "rc=$rc $(cat "$tmp/err")"; fi
"$S" validate neusight --data "$tmp/guard/data" --samples "$tmp/guard/data/kernels-test/bmm.csv" > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q -- "is inside the --data folder" "$tmp/err" && [ ! -e "$tmp/guard/data/kernels-test/bmm.csv" ]; then ok "validate --samples inside --data: refused, nothing written"
else not_ok "validate --samples inside --data" "rc=$rc $(cat "$tmp/err")"; fi
cp "$srcdir/presets/node/hgx-a100-4gpu.yaml" "$tmp/guard/node.yaml"
"$S" train gpt2-large --cluster "$tmp/guard/node.yaml" --trace "$tmp/guard/node.yaml" > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q -- "--trace '.*node.yaml' is the file --cluster" "$tmp/err" && cmp -s "$tmp/guard/node.yaml" "$srcdir/presets/node/hgx-a100-4gpu.yaml"; then ok "train --trace on its --cluster file: refused, the preset untouched"
else not_ok "train --trace on its --cluster file" "rc=$rc $(cat "$tmp/err")"; fi
# an output on the file standard output is redirected to (by name or as
# /dev/stdout) would be renamed over it, the report lost with exit 0
(cd "$tmp/guard" && "$S" train gpt2-large --cluster hgx-a100-4gpu --json --trace r.json > r.json 2> err1); rc1=$?
(cd "$tmp/guard" && "$S" serve gpt2-small --gpu h100-sxm --qps 1 --requests 4 --lengths uniform:10-20,5-10 --per-request /dev/stdout > r2.csv 2> err2); rc2=$?
if [ $rc1 = 1 ] && [ $rc2 = 1 ] && [ ! -s "$tmp/guard/r.json" ] && [ ! -s "$tmp/guard/r2.csv" ] &&
    grep -q "cannot write r.json: it is the file standard output goes to" "$tmp/guard/err1" &&
    grep -q "cannot write /dev/stdout: it is the file standard output goes to" "$tmp/guard/err2"; then
    ok "train --trace / serve --per-request on the file stdout goes to: refused, nothing written"
else not_ok "outputs on stdout's file" "rc=$rc1/$rc2 $(cat "$tmp/guard/err1" "$tmp/guard/err2")"; fi
(cd "$srcdir" && "$S" train gpt2-large --cluster hgx-a100-4gpu --trace presets/node/hgx-a100-4gpu.yaml) > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q "is the file --cluster 'hgx-a100-4gpu' names" "$tmp/err"; then ok "train --trace on the file a preset id names: refused"
else not_ok "train --trace on the file a preset id names" "rc=$rc $(cat "$tmp/err")"; fi
# sweep --out writes its four files all or none: front.json a folder fails
# the run and leaves no points.csv, points.json or front.csv behind
mkdir -p "$tmp/guard/out/front.json"
"$S" sweep "$srcdir/workloads/sweeps/gpu-batch-dtype.yaml" --quiet --out "$tmp/guard/out" > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "front.json: it is a folder" "$tmp/err" && [ "$(ls "$tmp/guard/out")" = "front.json" ]; then ok "sweep --out: one export that cannot be written leaves none of the others"
else not_ok "sweep --out: all or none" "rc=$rc $(ls "$tmp/guard/out") $(cat "$tmp/err")"; fi

# an ambiguous long-option prefix names its candidates (getopt_long takes
# unique prefixes such as --js; --spec starts two options)
"$S" serve llama3.1-8b --spec 4 > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q -- "'--spec' is ambiguous: it could be --spec-k, --spec-accept" "$tmp/err"; then ok "an ambiguous option prefix: exit 2, the candidates named"
else not_ok "an ambiguous option prefix" "rc=$rc $(cat "$tmp/err")"; fi
check "coll --gpus 1 is a usage error (one GPU moves nothing)" sh -c "'$S' coll allreduce --bytes 1M --gpus 1 2>&1 >/dev/null | grep -q 'expected a whole number in \[2,'; [ \$? = 0 ]"
"$S" coll allreduce --bytes 1M --gpus 1 > /dev/null 2>&1; rc=$?
if [ $rc = 2 ]; then ok "coll --gpus 1: exit 2"; else not_ok "coll --gpus 1: exit 2" "rc=$rc"; fi
# the hint train prints without a model is a command that works
hint=$("$S" train 2>&1 | sed -n "s/.*(\(strata list [^)]*\)).*/\1/p")
if [ -n "$hint" ] && $S ${hint#strata } > /dev/null 2>&1; then ok "train without a model: its hint ($hint) runs"; else not_ok "train without a model: its hint runs" "hint='$hint'"; fi
# calibrate opens --out before the fit: an unwritable path fails at once
mkdir -p "$tmp/calib-empty"
"$S" calibrate --neusight "$tmp/calib-empty" --vidur "$tmp/calib-empty" --out "$tmp/no/such/dir/c.yaml" > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "cannot write" "$tmp/err" && ! grep -q "calibrating on" "$tmp/err"; then ok "calibrate --out in a missing folder fails before fitting"
else not_ok "calibrate --out in a missing folder fails before fitting" "rc=$rc $(cat "$tmp/err")"; fi

# a broken node file given as --cluster: the node loader's FILE:LINE:COL,
# not "a node file, but a cluster is needed"
sed 's/^\(  efficiency:\) .*/\1 2/' "$srcdir/presets/node/hgx-h100-4gpu.yaml" > "$tmp/badnode.yaml"
"$S" coll allreduce --bytes 64MiB --cluster "$tmp/badnode.yaml" > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "badnode.yaml:[0-9]*:[0-9]*: key 'efficiency'" "$tmp/err"; then ok "coll --cluster with a broken node file: the node's FILE:LINE:COL"
else not_ok "coll --cluster with a broken node file" "rc=$rc $(cat "$tmp/err")"; fi
# NICs at 0 GB/s: refused at the key, not silently uncapped
sed 's/^nic_bw_gbs: 25 /nic_bw_gbs: 0 /' "$srcdir/presets/node/dgx-a100.yaml" > "$tmp/nic0.yaml"
"$S" coll allreduce --bytes 64MiB --cluster "$tmp/nic0.yaml" > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "nic0.yaml:31:13: key 'nic_bw_gbs': 8 NICs at 0 GB/s" "$tmp/err" && [ ! -s "$tmp/out" ]; then ok "node: NICs at 0 GB/s refused at FILE:LINE:COL"
else not_ok "node: NICs at 0 GB/s" "rc=$rc $(cat "$tmp/err")"; fi
# a node's whole scale-out: above 0, and only where there are NICs
sed 's/^nic_bw_gbs: 25 .*/&\nscaleout_bw_gbs: 0/' "$srcdir/presets/node/dgx-a100.yaml" > "$tmp/so0.yaml"
"$S" coll allreduce --bytes 64MiB --gpus 16 --cluster "$tmp/so0.yaml" > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "so0.yaml:32:18: key 'scaleout_bw_gbs': expected a number in \[0.001, 1e+06\] (GB/s), found '0'" "$tmp/err" && [ ! -s "$tmp/out" ]; then ok "node: scaleout_bw_gbs 0 refused at FILE:LINE:COL"
else not_ok "node: scaleout_bw_gbs 0" "rc=$rc $(cat "$tmp/err")"; fi
# above the NICs' sum (8 x 25 GB/s) it would cap nothing: Gb/s for GB/s
sed 's/^nic_bw_gbs: 25 .*/&\nscaleout_bw_gbs: 400/' "$srcdir/presets/node/dgx-a100.yaml" > "$tmp/so400.yaml"
"$S" show "$tmp/so400.yaml" > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "so400.yaml:32:18: key 'scaleout_bw_gbs': 400 GB/s is more than the node's 8 NICs carry (200 GB/s in all)" "$tmp/err" && [ ! -s "$tmp/out" ]; then ok "node: scaleout_bw_gbs above the NICs' sum refused at FILE:LINE:COL"
else not_ok "node: scaleout_bw_gbs above the NICs' sum" "rc=$rc $(cat "$tmp/err")"; fi
sed 's/^nics: 8 .*/nics: 0/; s/^nic_bw_gbs: 25 .*/nic_bw_gbs: 0\nscaleout_bw_gbs: 20/' "$srcdir/presets/node/dgx-a100.yaml" > "$tmp/so1.yaml"
"$S" show "$tmp/so1.yaml" > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "so1.yaml:32:18: key 'scaleout_bw_gbs': 20 GB/s on a node without NICs" "$tmp/err" && [ ! -s "$tmp/out" ]; then ok "node: scaleout_bw_gbs without NICs refused at FILE:LINE:COL"
else not_ok "node: scaleout_bw_gbs without NICs" "rc=$rc $(cat "$tmp/err")"; fi
# a cap on a node's scale-out slows a 16-GPU all-reduce by hand: 64 MiB on
# 2 DGX A100s capped at 48 GB/s (x 0.96 on the link) instead of 8 rails of
# 25: the bandwidth term grows by 2 (15/16) 64 MiB (1/48 - 1/192) GB/s^-1,
# 1.966 ms; the same protocol either way (Simple)
sed 's/^nic_bw_gbs: 25 .*/&\nscaleout_bw_gbs: 50/' "$srcdir/presets/node/dgx-a100.yaml" > "$tmp/so50.yaml"
sed "s|^node: .*|node: $tmp/so50.yaml|" "$srcdir/presets/cluster/ib-a100.yaml" > "$tmp/so50c.yaml"
"$S" coll allreduce --bytes 64MiB --gpus 16 --proto simple --algo ring --cluster ib-a100 --json > "$tmp/so_a.json" 2> "$tmp/err" &&
"$S" coll allreduce --bytes 64MiB --gpus 16 --proto simple --algo ring --cluster "$tmp/so50c.yaml" --json > "$tmp/so_b.json" 2>> "$tmp/err"; rc=$?
check "coll: a node's scaleout_bw_gbs caps a 16-GPU ring all-reduce (by hand: +1.966 ms)" \
    jq -e -n --slurpfile a "$tmp/so_a.json" --slurpfile b "$tmp/so_b.json" \
    '(($b[0].time_s - $a[0].time_s) - 2 * 15 / 16 * 67108864 * (1 / 48e9 - 1 / 192e9)) | fabs < 1e-9'
# a NeuSight label's num_layer, when given, is a layer count
mkdir -p "$tmp/nl/labels/NVIDIA_A100-PCIE-40GB" "$tmp/nl/kernels-test"
printf '{"num_layer": -3, "e2e_latency": 535.8}\n' > "$tmp/nl/labels/NVIDIA_A100-PCIE-40GB/gpt2_large-inf-1024-4.json"
"$S" validate neusight --data "$tmp/nl" > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "gpt2_large-inf-1024-4.json:1:15: key 'num_layer'" "$tmp/err"; then ok "validate neusight: a negative num_layer is FILE:LINE:COL"
else not_ok "validate neusight: a negative num_layer" "rc=$rc $(cat "$tmp/err")"; fi
# a folder that scores nothing is an error, not an empty report with exit 0;
# an op strata does not model is named with FILE:LINE:COL, not dropped
mkdir -p "$tmp/vn0/kernels-test"
printf 'OPName,Latency,Device,B,H\n' > "$tmp/vn0/kernels-test/ln.csv"
"$S" validate neusight --data "$tmp/vn0" --json > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "nothing to score in .*vn0: no kernel rows" "$tmp/err" && [ ! -s "$tmp/out" ]; then ok "validate neusight: a folder with nothing to score is an error"
else not_ok "validate neusight: nothing to score" "rc=$rc $(cat "$tmp/err")"; fi
printf 'OPName,Latency,Device,B,H\nlnn,0.02,Tesla T4,1024,1024\n' > "$tmp/vn0/kernels-test/ln.csv"
"$S" validate neusight --data "$tmp/vn0" > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "ln.csv:2:1: column 'OPName': 'lnn' is not an op strata models (did you mean 'ln'?)" "$tmp/err" && [ ! -s "$tmp/out" ]; then ok "validate neusight: an unknown OPName is FILE:LINE:COL"
else not_ok "validate neusight: an unknown OPName" "rc=$rc $(cat "$tmp/err")"; fi
# messages that name the mistake: a dense model's EP, a file as --data, the
# GPU table as --edge-coef
"$S" train llama2-7b --cluster dgx-h100 --ep 2 > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "EP 2: llama2-7b is dense" "$tmp/err"; then ok "train --ep on a dense model says it is dense"; else not_ok "train --ep on a dense model" "rc=$rc $(cat "$tmp/err")"; fi
"$S" train mixtral-8x7b --cluster dgx-h100 --ep 3 > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "EP 3 does not divide the 8 experts of mixtral-8x7b" "$tmp/err"; then ok "train --ep 3 on 8 experts: the divisibility named"; else not_ok "train --ep 3 on 8 experts" "rc=$rc $(cat "$tmp/err")"; fi
"$S" validate neusight --data "$srcdir/calibration/edge.yaml" > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q -- "--data .*edge.yaml is a file, not a folder" "$tmp/err"; then ok "validate --data FILE: says it is a file"; else not_ok "validate --data FILE" "rc=$rc $(cat "$tmp/err")"; fi
"$S" eval resnet18 --gpu mobile-cpu --edge-coef "$srcdir/calibration/gpu-kernels.yaml" > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "gpu-kernels.yaml:[0-9]*:[0-9]*: kind must be 'edge-coefficients', not 'gpu-coefficients': that is the GPU kernel table" "$tmp/err"; then ok "--edge-coef given the GPU table: named as such"; else not_ok "--edge-coef given the GPU table" "rc=$rc $(cat "$tmp/err")"; fi
# --optimizer foreach: torch.optim.AdamW's default, 80 bytes a parameter in
# eight passes; strata's own H200 run (data/measured/h200/whole-models,
# adamw rows) timed GPT-2 Large's step (774 M parameters) at 16.92 ms.
# strata gives 13.9 ms (18% under: the multi-tensor kernels stream at 77%
# of peak where the elementwise fit says 93%); a guard at 25%, and the
# fused step (32 bytes a parameter) must stay under half of it
"$S" eval gpt2-large --gpu h200 --phase train --seq 1024 --dtype fp32 --optimizer foreach --json > "$tmp/fe.json" 2> "$tmp/err"
"$S" eval gpt2-large --gpu h200 --phase train --seq 1024 --dtype fp32 --json > "$tmp/fu.json" 2> "$tmp/err"
check "eval --optimizer foreach: the H200's measured AdamW step (16.92 ms) within 25%; fused under half of it" \
    jq -e -n --slurpfile a "$tmp/fe.json" --slurpfile b "$tmp/fu.json" '
      def opt($j): [$j.layers[] | select(.layer == "optimizer") | .time_s][0];
      $a[0].optimizer == "foreach" and $b[0].optimizer == "fused" and ([$a[0].layers[] | select(.layer == "optimizer") | .kernels][0] == 8) and
      ((opt($a[0]) * 1000 - 16.92) / 16.92 | fabs) <= 0.25 and opt($b[0]) < 0.5 * opt($a[0])'
for bad in "--phase prefill --optimizer foreach:applies to --phase train" "--phase train --optimizer sgd:expected fused or foreach" \
    "--phase train --optimizer foreach --no-optimizer:give one of them" "--phase decode --accumulate-grads:applies to --phase train"; do
    args=${bad%%:*}; want=${bad#*:}
    # shellcheck disable=SC2086
    "$S" eval gpt2-large $args > "$tmp/out" 2> "$tmp/err"; rc=$?
    if [ $rc = 2 ] && grep -q -- "$want" "$tmp/err" && [ ! -s "$tmp/out" ]; then ok "eval $args: usage error (exit 2)"
    else not_ok "eval $args: usage error (exit 2)" "rc=$rc $(cat "$tmp/err")"; fi
done
# compiled mode fuses the model, not optimizer.step(): foreach keeps its
# eight passes and stays dearer than the fused step (a merged foreach had
# come out cheaper than one fused pass)
"$S" eval gpt2-large --phase train --optimizer foreach --fused --json > "$tmp/fef.json" 2> "$tmp/err"
"$S" eval gpt2-large --phase train --fused --json > "$tmp/fuf.json" 2> "$tmp/err"
check "eval --fused --optimizer foreach: eight optimizer kernels, dearer than the fused step" \
    jq -e -n --slurpfile a "$tmp/fef.json" --slurpfile b "$tmp/fuf.json" '
      [$a[0].layers[] | select(.layer == "optimizer")][0] as $fe | [$b[0].layers[] | select(.layer == "optimizer")][0] as $fu |
      $fe.kernels == 8 and $fe.time_s > 2 * $fu.time_s'
"$S" accel resnet50 --arch eyeriss-like --accumulate-grads > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q "accumulate-grads does not apply" "$tmp/err" && [ ! -s "$tmp/out" ]; then ok "accel --accumulate-grads: does not apply (exit 2), says to drop it"
else not_ok "accel --accumulate-grads: does not apply" "rc=$rc $(cat "$tmp/err")"; fi
"$S" validate neusight --models "" > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q "\-\-models: give a folder" "$tmp/err"; then ok "validate --models '': usage error (exit 2)"
else not_ok "validate --models ''" "rc=$rc $(cat "$tmp/err")"; fi
# the step line says what the step runs: show and eval name the optimizer
# and accumulation; a CNN has no attention to name
"$S" show gpt2-large --phase train --optimizer foreach --accumulate-grads > "$tmp/out" 2> "$tmp/err"
"$S" eval resnet50 --phase train > "$tmp/out2" 2> "$tmp/err"
if grep -q "step .*AdamW foreach (torch.optim default), gradients accumulate" "$tmp/out" && grep -q "step .*fused AdamW" "$tmp/out2" &&
    ! grep "step " "$tmp/out2" | grep -q attention; then ok "show/eval step line: the optimizer and accumulation named; no attention for a CNN"
else not_ok "show/eval step line" "$(grep 'step ' "$tmp/out" "$tmp/out2")"; fi
"$S" validate edge --models "$tmp" > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q "edge takes --data FILE" "$tmp/err"; then ok "validate edge --models: refused (exit 2)"
else not_ok "validate edge --models: refused (exit 2)" "rc=$rc $(cat "$tmp/err")"; fi
# the foreach step's temporary (sqrt of v, 4 bytes a parameter) sets the peak
# when it outgrows the activations freed before the step: Llama-2-7B at 16
# tokens needs 4 x 6,738,415,616 bytes less its activations more than fused
"$S" eval llama2-7b --gpu h200 --phase train --seq 16 --optimizer foreach --json > "$tmp/lfe.json" 2> "$tmp/err"
"$S" eval llama2-7b --gpu h200 --phase train --seq 16 --json > "$tmp/lfu.json" 2> "$tmp/err"
check "eval --optimizer foreach: memory adds the step's 4-byte-a-parameter temporary beyond the activations" \
    jq -e -n --slurpfile a "$tmp/lfe.json" --slurpfile b "$tmp/lfu.json" '
      $a[0].memory.bytes - $b[0].memory.bytes == 4 * 6738415616 - $b[0].memory.activation_bytes and $b[0].memory.activation_bytes > 0'
# --accumulate-grads: one add per parameter tensor, more time, same memory
"$S" eval gpt2-large --gpu h100-sxm --phase train --seq 1024 --dtype fp32 --accumulate-grads --json > "$tmp/ac.json" 2> "$tmp/err"
"$S" eval gpt2-large --gpu h100-sxm --phase train --seq 1024 --dtype fp32 --json > "$tmp/na.json" 2> "$tmp/err"
check "eval --accumulate-grads: 436 more kernels on GPT-2 Large (12 tensors x 36 blocks, 4 outside them; the tied embedding's sum add is there either way), more time, same memory" \
    jq -e -n --slurpfile a "$tmp/ac.json" --slurpfile b "$tmp/na.json" '
      ([$a[0].layers[].kernels] | add) - ([$b[0].layers[].kernels] | add) == 436 and $a[0].total_s > $b[0].total_s and
      $a[0].memory.bytes == $b[0].memory.bytes and $a[0].accumulate_grads == true and $b[0].accumulate_grads == false'
# by pass: forward, backward and optimizer add up to the step with the final
# sync; recompute replays each block's forward inside the backward (not the
# embedding's or the head's: under the whole forward)
"$S" eval gpt2-large --gpu a100-80gb-sxm --phase train --batch 4 --seq 1024 --json > "$tmp/pa.json" 2> "$tmp/err"
"$S" eval gpt2-large --gpu a100-80gb-sxm --phase train --batch 4 --seq 1024 --recompute --json > "$tmp/pr.json" 2> "$tmp/err"
check "eval train: forward_s + backward_s + optimizer_s + sync_s = total_s; recompute adds most of a forward to the backward" \
    jq -e -n --slurpfile a "$tmp/pa.json" --slurpfile r "$tmp/pr.json" '$a[0] as $x | $r[0] as $y |
      (($x.forward_s + $x.backward_s + $x.optimizer_s + $x.sync_s) / $x.total_s - 1 | fabs) < 1e-12 and
      $x.optimizer_s > 0 and $x.backward_s > $x.forward_s and $y.forward_s == $x.forward_s and
      ($y.backward_s - $x.backward_s) > 0.8 * $x.forward_s and ($y.backward_s - $x.backward_s) < $x.forward_s'
# --models: the labels' model configs from another folder (label sets that
# keep no copies, as data/measured/h100); a missing folder is an error, a
# label set with neither DIR/models nor the shared configs is left out, said so
mkdir -p "$tmp/ml/labels/NVIDIA_H100_80GB_HBM3" "$tmp/ml/kernels-test" "$tmp/mlm"
cp "$srcdir/tests/data/hf/gpt2-tiny-config.json" "$tmp/mlm/tiny.json"
printf '{"num_layer": 0, "e2e_latency": 2.0, "fw_latency": 2.0, "bwall_latency": 0}\n' > "$tmp/ml/labels/NVIDIA_H100_80GB_HBM3/tiny-inf-64-2.json"
"$S" validate neusight --data "$tmp/ml" --models "$tmp/mlm" --json > "$tmp/out" 2> "$tmp/err"; rc=$?
check "validate neusight --models DIR: the label's model from DIR, on the H100 preset" \
    jq -e --arg m "$tmp/mlm" '.models | length == 1 and .[0].model == "tiny" and .[0].mode == "inf" and .[0].seq == 64 and .[0].batch == 2 and .[0].measured_ms == 2 and .[0].predicted_ms > 0' "$tmp/out"
# by pass: a training label's split (fw_latency 6.0, bwall_latency 3.875)
# and its operator profile (LABEL.csv: outside block 0 once + num_layer x
# block 0; hand-summed in tests/test_measured.c: 3.0 and 4.875 ms at
# num_layer 3), apart so that one cannot pass for the other;
# strata's passes and the final sync add up to its prediction
mkdir -p "$tmp/ml2/labels/NVIDIA_H100_80GB_HBM3" "$tmp/ml2/kernels-test"
cp "$srcdir/tests/data/measured/label-split.json" "$tmp/ml2/labels/NVIDIA_H100_80GB_HBM3/tiny-train-64-2.json"
cp "$srcdir/tests/data/measured/profile-gpt2.csv" "$tmp/ml2/labels/NVIDIA_H100_80GB_HBM3/tiny-train-64-2.csv"
cp "$tmp/ml/labels/NVIDIA_H100_80GB_HBM3/tiny-inf-64-2.json" "$tmp/ml2/labels/NVIDIA_H100_80GB_HBM3/"
"$S" validate neusight --data "$tmp/ml2" --models "$tmp/mlm" --json > "$tmp/out" 2> "$tmp/err"; rc=$?
check "validate neusight: a training label by pass, against its own operator profile (JSON)" \
    jq -e '(.models | map(select(.mode == "train"))[0]) as $t | (.models | map(select(.mode == "inf"))[0]) as $i |
      $t.measured_fwd_ms == 6 and $t.measured_bwd_ms == 3.875 and $t.profiled_fwd_ms == 3 and
      $t.profiled_bwd_ms == 4.875 and $t.profile_block == "transformer.h.0" and $t.predicted_bwd_ms > 0 and
      (($t.predicted_fwd_ms + $t.predicted_bwd_ms) / $t.predicted_ms - 1 | fabs) < 1e-9 and
      $i.measured_fwd_ms == 2 and $i.measured_bwd_ms == null and $i.profiled_fwd_ms == null and
      $i.predicted_bwd_ms == null and (($i.predicted_fwd_ms / $i.predicted_ms - 1) | fabs) < 1e-9' "$tmp/out"
"$S" validate neusight --data "$tmp/ml2" --models "$tmp/mlm" > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 0 ] && grep -q "tiny .*train .* fwd  *6.00  *3.00  *2.00 " "$tmp/out" && grep -q "tiny .*train .* bwd  *3.88  *4.88  *0.79 " "$tmp/out" && grep -q "0 of 2 profiled passes measure within 10%" "$tmp/out"; then ok "validate neusight: the by-pass table lists the training label's backward, measured against profiled"
else not_ok "validate neusight: by-pass table" "rc=$rc $(cat "$tmp/out" "$tmp/err" | tail -12)"; fi
cp "$srcdir/tests/data/measured/profile-bad.csv" "$tmp/ml2/labels/NVIDIA_H100_80GB_HBM3/tiny-train-64-2.csv"
"$S" validate neusight --data "$tmp/ml2" --models "$tmp/mlm" > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "tiny-train-64-2.csv:3:[0-9]*: column 'fw_latency': expected a number" "$tmp/err" && [ ! -s "$tmp/out" ]; then ok "validate neusight: a broken operator profile is an error naming file:line:col, nothing on stdout"
else not_ok "validate neusight: broken operator profile" "rc=$rc $(cat "$tmp/err")"; fi
"$S" validate neusight --data "$tmp/ml" --models "$tmp/no-such-folder" > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "no-such-folder: cannot open the model-config folder given with --models" "$tmp/err" && [ ! -s "$tmp/out" ]; then ok "validate neusight --models with a missing folder: exit 1, named, nothing on stdout"
else not_ok "validate neusight --models with a missing folder" "rc=$rc $(cat "$tmp/err")"; fi
STRATA_SHARED="$tmp/no-shared" "$S" validate neusight --data "$tmp/ml" --json > "$tmp/out" 2> "$tmp/err"; rc=$?
check "validate neusight without model configs anywhere: labels left out and counted (exit 0)" \
    jq -e '.skipped_labels == 1 and (.models | length) == 0' "$tmp/out"
"$S" validate vidur --models "$tmp/mlm" > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q "\-\-models is for validate neusight" "$tmp/err"; then ok "validate vidur --models: refused (exit 2)"
else not_ok "validate vidur --models: refused (exit 2)" "rc=$rc $(cat "$tmp/err")"; fi

# HBM streams at one share of its peak from Volta to Hopper: strata's own
# H100 sweep (data/measured/h100, PyTorch 2.11) timed a 16384 x 16384 FP32
# add (3.2 GB moved) at 1.064 ms, 3.03 TB/s, 90% of the 3.35 TB/s peak; the
# harness's 13 us is under 1.3% of it. Within 5%, where the per-SM in-flight
# term strata had before predicted 82% (10% slow).
"$S" kernel elementwise --gpu h100-sxm --rows 16384 --cols 16384 --inputs 2 --dtype fp32 --json > "$tmp/h100ew.json" 2> "$tmp/err"
meas=$(awk -F, 'NR > 1 && $1 == "add" && $(NF-4) == 16384 && $(NF-3) == 16384 && $(NF-1) == "fp32" { print $2 / 1000 }' "$srcdir/data/measured/h100/kernels-test/elem.csv")
check "kernel: a 3.2 GB FP32 add on the H100 within 5% of the measured 1.064 ms (data/measured)" \
    jq -e --argjson m "${meas:-0}" '$m > 0 and ((.time_s / $m - 1) | fabs) < 0.05' "$tmp/h100ew.json"

# Held out: strata's own H200 (data/measured/h200/sustained, 2026-11-27)
# timed five large BF16 GEMMs alone (a 2 s pause before each: the board at
# boost) at 0.74-4.51 ms; strata's isolated-kernel model, fitted on other
# GPUs, within 5% of each (0.4-3.2% when measured). Sustained, they ran
# 15% slower: that is what the file's other columns are for, not this check.
while IFS=, read -r g m n k dt iso rest; do
    [ "$g" = gemm ] || [ "$g" = mix ] && continue
    "$S" kernel gemm --gpu h200 --m "$m" --n "$n" --k "$k" --dtype "$dt" --json > "$tmp/h2g.json" 2> "$tmp/err"
    check "kernel: the H200's isolated $g BF16 GEMM within 5% of its measured $iso ms (data/measured/h200)" \
        jq -e --argjson m "$iso" '((.time_s * 1000 / $m - 1) | fabs) < 0.05' "$tmp/h2g.json"
done < "$srcdir/data/measured/h200/sustained/sustained.csv"

# Back to back (a training step) the same GEMMs are power-bound: strata's
# `--sustained` limit, the H100's measured 1.03 W per TFLOP/s under 700 W
# (the preset's tc_sustained_w_per_tflops, from data/measured/h100/
# sustained), prices the H100's five within 7% of their sustained times
# (0.4-5.8% when measured) and the H200's, held out, within 8% (0.1-6.9%),
# where their times alone miss the H200's by 12-17%.
for dv in h100-sxm:h100 h200:h200; do
    while IFS=, read -r g m n k dt iso sus rest; do
        [ "$g" = gemm ] || [ "$g" = mix ] && continue
        "$S" kernel gemm --gpu "${dv%%:*}" --m "$m" --n "$n" --k "$k" --dtype "$dt" --sustained --json > "$tmp/sg.json" 2> "$tmp/err"
        check "kernel --sustained: the ${dv%%:*} $g BF16 GEMM within 8% of its measured $sus ms back to back (data/measured)" \
            jq -e --argjson m "$sus" '.sustained and ((.time_s * 1000 / $m - 1) | fabs) < 0.08' "$tmp/sg.json"
    done < "$srcdir/data/measured/${dv#*:}/sustained/sustained.csv"
done
"$S" kernel gemm --gpu h200 --m 8192 --n 8192 --k 8192 --json > "$tmp/sg0.json" 2> "$tmp/err"
check "kernel: the H200's 8192^3 GEMM priced alone (no --sustained) misses its sustained 1.653 ms by over 10%" \
    jq -e '.sustained == false and (.time_s * 1000 / 1.6532 < 0.9)' "$tmp/sg0.json"

# the limit in the kernel's own datatype: FP8 at 700 / 1.03 x 1978.9 /
# 989.4 = 1359 TFLOP/s on the H100 (the same watts at twice the rate)
"$S" kernel gemm --gpu h100-sxm --m 8192 --n 8192 --k 8192 --dtype fp8 --sustained > "$tmp/sg8.txt" 2> "$tmp/err"
check "kernel --sustained: the power line states FP8's limit in FP8 (1359 TFLOP/s)" \
    grep -q "fp8 tensor work at most 1359 TFLOP/s" "$tmp/sg8.txt"
"$S" kernel gemm --gpu mi300x --m 8192 --n 8192 --k 8192 --sustained > "$tmp/sgm.txt" 2> "$tmp/err"
check "kernel --sustained on a board with no measured figure says so" \
    grep -q "mi300x has no measured tc_sustained_w_per_tflops" "$tmp/sgm.txt"

# FP32 on the CUDA cores is not power-capped: the H200's five FP32 GEMMs
# (data/measured/h200/sustained-fp32, TF32 off) held 1964-1980 MHz at
# 640-695 W back to back for 10 s, sustained within 0.5% of isolated.
# strata's power model holds the boost clock for SIMT work (power_factor
# 1) and prices each within 8% of its sustained time (0.5-5.6% when
# measured): FP32 training steps need no sustained-clock correction.
while IFS=, read -r g m n k dt iso sus rest; do
    [ "$g" = gemm ] || [ "$g" = mix ] && continue
    "$S" kernel gemm --gpu h200 --m "$m" --n "$n" --k "$k" --dtype "$dt" --json > "$tmp/h2f.json" 2> "$tmp/err"
    check "kernel: the H200's $g FP32 GEMM at boost clock and within 8% of its sustained $sus ms (data/measured/h200)" \
        jq -e --argjson m "$sus" '.power_factor == 1 and ((.time_s * 1000 / $m - 1) | fabs) < 0.08' "$tmp/h2f.json"
done < "$srcdir/data/measured/h200/sustained-fp32/sustained.csv"

# The host's share of small ops, measured beside them: two runs of the
# H200's embedding gathers and MoE routers (data/measured/h200/floors),
# each with its harness floors timed in the same process just before the
# rows. With those floors every class scores under 25% in both runs
# (10.2-20.1% when measured); with the floors of another process on another
# day (the folder above's) they scored 24-33%.
for r in 1 2; do
    "$S" validate neusight --data "$srcdir/data/measured/h200/floors/run$r" --json > "$tmp/fl.json" 2> "$tmp/err"
    check "validate: the H200's gathers and routers, run $r, each class under 25% with its own floors (data/measured)" \
        jq -e '[.kernels[] | select(.op == "embedding" or .op == "embedding-bf16" or .op == "topk-bf16")]
               | length == 3 and all(.mape < 25)' "$tmp/fl.json"
done
mkdir -p "$tmp/nokt"
"$S" validate neusight --data "$tmp/nokt" > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc != 0 ] && grep -q "nokt: no kernels-test/, ops.csv or attention.csv there; give a folder" "$tmp/err"; then
    ok "validate neusight: a folder with no kernels-test/, ops.csv or attention.csv is an error"
else not_ok "validate neusight: a folder with no kernels-test/, ops.csv or attention.csv is an error" "rc=$rc $(cat "$tmp/err")"; fi

# Hopper's tensor cores (data/measured/h100): cuBLAS's sm90 GEMMs overlap
# the memory side with the MMAs (TMA-fed warpgroup MMAs): an 8192 x 4096 ->
# 4096 BF16 linear took 385 us less the harness's 24 us; strata within 5%
# (the A100's "compute plus memory" gave 19% more). PyTorch's
# FlashAttention-2 runs synchronous sm80 MMAs at about half the tensor peak
# there: 16 x 32 heads x 4096 x 4096, head dim 128, took 12.9 ms (341 TFLOP/s)
lin=$(awk -F, 'NR > 1 && $(NF-1) == "bf16" && $(NF-5) == 1 && $(NF-4) == 8192 && $(NF-3) == 4096 && $(NF-2) == 4096 { print $2 / 1000 - 24.44e-6 }' "$srcdir/data/measured/h100/kernels-test/linear.csv")
"$S" kernel gemm --gpu h100-sxm --m 8192 --n 4096 --k 4096 --dtype bf16 --json > "$tmp/hl.json" 2> "$tmp/err"
check "kernel: an 8192 x 4096 x 4096 BF16 GEMM on the H100 within 5% of its measurement (data/measured)" \
    jq -e --argjson m "${lin:-0}" '$m > 0 and ((.time_s / $m - 1) | fabs) < 0.05' "$tmp/hl.json"
fa=$(awk -F, 'NR > 1 && $(NF-8) == 16 && $(NF-7) == 32 && $(NF-5) == 4096 && $(NF-3) == 128 && $(NF-2) == "False" { print $2 / 1000 }' "$srcdir/data/measured/h100/attention.csv")
"$S" kernel flash --gpu h100-sxm --b 16 --heads 32 --q-len 4096 --kv-len 4096 --head-dim 128 --dtype bf16 --json > "$tmp/hf.json" 2> "$tmp/err"
check "kernel flash: PyTorch's FA2 prefill on the H100 within 10% of its measurement (half the tensor rate: sm80 MMAs)" \
    jq -e --argjson m "${fa:-0}" '$m > 0 and ((.time_s / $m - 1) | fabs) < 0.10' "$tmp/hf.json"
# causal: a block of 128 query rows runs its diagonal key blocks whole, so
# a row reads kv - q/2 + 64 keys on average: 1024 x 576 x 128 x 4 FLOPs
"$S" kernel flash --gpu h100-sxm --b 1 --heads 1 --q-len 1024 --kv-len 1024 --head-dim 128 --dtype bf16 --causal --json > "$tmp/hc.json" 2> "$tmp/err"
check "kernel flash --causal: FLOPs count the diagonal blocks FA2 runs in full (4 x 1024 x 576 x 128)" \
    jq -e '.flops == 301989888' "$tmp/hc.json"
# 100 queries fit one 128-row block: every row reads all 100 keys
"$S" kernel flash --gpu h100-sxm --b 1 --heads 1 --q-len 100 --kv-len 100 --head-dim 64 --dtype bf16 --causal --json > "$tmp/hc2.json" 2> "$tmp/err"
check "kernel flash --causal: queries within one block read every key (4 x 100 x 100 x 64)" \
    jq -e '.flops == 2560000' "$tmp/hc2.json"

# FlashAttention-2's backward recomputes S and runs four more products
# (dV, dP, dQ, dK): 2.5x the forward's FLOPs, and with dQ's FP32
# accumulation 2.9-3.8x its time on the H100 (data/measured/h100/
# fa-backward.csv); it was priced as a second forward
"$S" eval llama2-7b --gpu h100-sxm --phase train --batch 1 --seq 4096 --attn flash --kernels --json > "$tmp/fb.json" 2> "$tmp/err"
check "eval --attn flash, train: the attention backward is 2.5x the forward's FLOPs and 2.9-3.8x its time (as measured)" \
    jq -e '[.operators[] | select(.name == "block.attn.flash")][0] as $f | [.operators[] | select(.name == "block.attn.flash.grad")][0] as $b | ($b.flops / $f.flops == 2.5) and ($b.time_s / $f.time_s) >= 2.9 and ($b.time_s / $f.time_s) <= 3.8' "$tmp/fb.json"

# and against the H100's measured FA2 backward (data/measured/h100/
# fa-backward.csv: 4 x 32 heads x 2048, head dim 128, 2.69 ms): the five
# products plus dQ's FP32 accumulation, a read and a write per key block
# (26% fast without it)
fb=$(awk -F, '$1 == 4 && $2 == 32 && $3 == 2048 && $4 == 128 && $5 == "False" { print $7 / 1000 }' "$srcdir/data/measured/h100/fa-backward.csv")
"$S" kernel flash --gpu h100-sxm --b 4 --heads 32 --q-len 2048 --kv-len 2048 --head-dim 128 --backward --json > "$tmp/fbk.json" 2> "$tmp/err"
check "kernel flash --backward: FA2's backward on the H100 within 10% of its measurement" \
    jq -e --argjson m "${fb:-0}" '$m > 0 and ((.time_s / $m - 1) | fabs) < 0.10' "$tmp/fbk.json"
# the backward's bytes by hand, 1 x 1 x 1024 x 1024, BF16: Q, O, dO, dQ and
# K, V, dK, dV (8 x 1024 x d x 2), dQ's FP32 read and write per key block
# (8 x 1024 x d x blocks: 8 blocks of 128 keys for d = 128, 16 of 64 for
# d = 256, FA2's Flash_bwd_kernel_traits), and rowsum(dO * O) with dQ's
# conversion (1024 x d x 8)
b128=$("$S" kernel flash --gpu h100-sxm --b 1 --heads 1 --q-len 1024 --kv-len 1024 --head-dim 128 --backward --json | jq .bytes)
b256=$("$S" kernel flash --gpu h100-sxm --b 1 --heads 1 --q-len 1024 --kv-len 1024 --head-dim 256 --backward --json | jq .bytes)
check "kernel flash --backward: bytes by hand for head dims 128 and 256 (key blocks of 128 and 64)" \
    jq -e -n --argjson a "${b128:-0}" --argjson b "${b256:-0}" '$a == (16 * 1024 * 128 + 8 * 1024 * 128 * 8 + 8 * 1024 * 128) and $b == (16 * 1024 * 256 + 8 * 1024 * 256 * 16 + 8 * 1024 * 256)'
"$S" kernel gemm --gpu h100-sxm --m 64 --n 64 --k 64 --backward > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q "\-\-backward does not apply to gemm" "$tmp/err"; then ok "kernel: --backward applies to flash alone (exit 2)"
else not_ok "kernel: --backward applies to flash alone" "rc=$rc $(cat "$tmp/err")"; fi

# a tensor-core conv on PyTorch's NCHW adds cuDNN's two transposes
# (layout_s, inside time_s); --channels-last takes them out, and applies to
# conv alone
"$S" kernel conv --gpu h100-sxm --dtype bf16 --m 6272 --n 256 --k 2304 --filter 3 --json > "$tmp/cv1.json" 2> "$tmp/err"
"$S" kernel conv --gpu h100-sxm --dtype bf16 --m 6272 --n 256 --k 2304 --filter 3 --channels-last --json > "$tmp/cv2.json" 2>> "$tmp/err"
check "kernel conv: NCHW transposes priced (layout_s > 0), --channels-last drops exactly them" \
    jq -e -n --slurpfile a "$tmp/cv1.json" --slurpfile b "$tmp/cv2.json" '$a[0].layout_s > 0 and $b[0].layout_s == 0 and ((($a[0].time_s - $a[0].layout_s) - $b[0].time_s) | fabs) < 1e-12'
"$S" kernel gemm --gpu h100-sxm --m 64 --n 64 --k 64 --channels-last > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q "\-\-channels-last does not apply to gemm" "$tmp/err"; then ok "kernel: --channels-last applies to conv alone (exit 2)"
else not_ok "kernel: --channels-last applies to conv alone" "rc=$rc $(cat "$tmp/err")"; fi

# strata's own H100 and H200 sweeps (data/measured; held out of the fit),
# scored with each sweep's own harness floor (harness.csv): FP32 classes
# within the kernel bar (10%) where met, the rest as regression guards
"$S" validate neusight --data "$srcdir/data/measured/h100" --json > "$tmp/mh100.json" 2> "$tmp/err"
check "validate neusight on data/measured/h100: FP32 bmm, linear, elementwise, ln <= 10%, softmax <= 15%" \
    jq -e '[.kernels[] | select(.device == "NVIDIA H100 80GB HBM3")] as $k | ([$k[] | select(.op == "bmm" or .op == "linear" or .op == "elementwise" or .op == "ln") | .mape <= 10] | length == 4 and all) and ([$k[] | select(.op == "softmax") | .mape <= 15] | length == 1 and all)' "$tmp/mh100.json"
check "validate neusight on data/measured/h100: a class per datatype (linear-bf16, -fp8, -int8, rmsnorm), each <= 30% (regression guard)" \
    jq -e '[.kernels[] | select(.op | test("^(linear|bmm)-(bf16|fp16|fp8|int8|tf32)$|^rmsnorm"))] as $k | ($k | length) >= 10 and ([$k[] | .mape <= 30] | all)' "$tmp/mh100.json"
# strata's own whole-model runs (NeuSight's harness on an H100, transformers
# 5.17; labels/ beside the sweeps, model configs from the shared data): 18
# configurations (14 eager, 4 under torch.compile), 5.0% MAPE at this
# commit (6.7 before Hopper's GEMM epilogue rate; the compiled ones -3.8 to
# -7.6%): issue 3's 6% model bar, and the band must still hold them all
if [ -d "$SH/neusight/models" ]; then
    check "validate neusight on data/measured/h100 labels: 18 whole models (4 compiled), MAPE <= 6% (issue 3's bar), band holds all" \
        jq -e '[.models[] | select(.device == "NVIDIA_H100_80GB_HBM3")] as $m | ($m | length) == 18 and ([$m[] | select(.fusion)] | length) == 4 and (([$m[] | ((.predicted_ms - .measured_ms) / .measured_ms | fabs)] | add) / 18 <= 0.06) and ([$m[] | .measured_ms >= .lo_ms and .measured_ms <= .hi_ms] | all)' "$tmp/mh100.json"
else
    skip_test "validate neusight on data/measured/h100 labels" "../shared/data is absent (NeuSight's model configs)"
fi
"$S" validate neusight --data "$srcdir/data/measured/h200" --json > "$tmp/mh200.json" 2> "$tmp/err"
if [ -d "$SH/neusight/models" ]; then
    check "validate neusight on data/measured/h200 labels: 3 whole models (OPT-1.3B, GPT-3 2.7B), each within 15% (regression guard)" \
        jq -e '[.models[] | select(.device == "NVIDIA_H200")] as $m | ($m | length) == 3 and ([$m[] | ((.predicted_ms - .measured_ms) / .measured_ms | fabs) <= 0.15] | all)' "$tmp/mh200.json"
else
    skip_test "validate neusight on data/measured/h200 labels" "../shared/data is absent (NeuSight's model configs)"
fi
check "validate neusight on data/measured/h200: FP32 bmm, linear, elementwise, ln <= 10%, softmax <= 25% (regression guard)" \
    jq -e '[.kernels[] | select(.device == "NVIDIA H200")] as $k | ([$k[] | select(.op == "bmm" or .op == "linear" or .op == "elementwise") | .mape <= 10] | length == 3 and all) and ([$k[] | select(.op == "ln") | .mape <= 10] | length == 1 and all) and ([$k[] | select(.op == "softmax") | .mape <= 25] | length == 1 and all)' "$tmp/mh200.json"
# Hopper's GEMM epilogue rate (gemm_epilogue_cycles, fitted on the H100's
# FP32 bmm and linear rows; the H200 held out): FP32 bmm 5.9 / 5.0% on the
# H100 / H200 at this commit, 8.8 / 9.3 priced at the DRAM share alone;
# the shipped table names it, and a table without it prices the H200's
# bmm class back above 8%
check "validate neusight on data/measured: FP32 bmm <= 7% on the H100 and the held-out H200 (Hopper's epilogue rate)" \
    jq -e -n --slurpfile a "$tmp/mh100.json" --slurpfile b "$tmp/mh200.json" '
      def m($j; $op): [$j.kernels[] | select(.op == $op) | .mape][0];
      m($a[0]; "bmm") <= 7 and m($b[0]; "bmm") <= 7'
awk '/^gemm_epilogue_cycles:/ { skip = 1; next } skip && /^  / { next } { skip = 0; print }' \
    "$srcdir/calibration/gpu-kernels.yaml" > "$tmp/noepi.yaml"
"$S" validate neusight --data "$srcdir/data/measured/h200" --coef "$tmp/noepi.yaml" --json > "$tmp/noepi.json" 2> "$tmp/err"
check "validate: the shipped table carries Hopper's epilogue rate; without it the H200's FP32 bmm class is over 8%" \
    sh -c "grep -q '^gemm_epilogue_cycles:' '$srcdir/calibration/gpu-kernels.yaml' && jq -e '[.kernels[] | select(.op == \"bmm\") | .mape][0] > 8' '$tmp/noepi.json'"
# The layer norm's SM cycles (norm_row_cycles, norm_iter_cycles; fitted on
# the H100's ln rows, the H200 held out): rows of up to 1,600 FP32 columns
# are SM-bound on both GPUs, so the H200's faster HBM gains them nothing.
# FP32 ln 6.06 / 13.68% and BF16 15.69 / 9.90% (H100 / H200) priced by the
# memory side alone; 5.75 / 5.98 and 13.87 / 7.37 at this commit
check "validate neusight on data/measured: the held-out H200's ln <= 8% and ln-bf16 <= 10%, the H100's ln <= 8%" \
    jq -e -n --slurpfile a "$tmp/mh100.json" --slurpfile b "$tmp/mh200.json" '
      def m($j; $op): [$j.kernels[] | select(.op == $op) | .mape][0];
      m($a[0]; "ln") <= 8 and m($b[0]; "ln") <= 8 and m($b[0]; "ln-bf16") <= 10'
awk '/^norm_(row|iter)_cycles:/ { skip = 1; next } skip && /^  / { next } { skip = 0; print }' \
    "$srcdir/calibration/gpu-kernels.yaml" > "$tmp/nonorm.yaml"
"$S" validate neusight --data "$srcdir/data/measured/h200" --coef "$tmp/nonorm.yaml" --json > "$tmp/nonorm.json" 2> "$tmp/err"
check "validate: the shipped table carries Hopper's layer-norm cycles; without them the H200's FP32 ln class is over 12%" \
    sh -c "grep -q '^norm_row_cycles:' '$srcdir/calibration/gpu-kernels.yaml' && grep -q '^norm_iter_cycles:' '$srcdir/calibration/gpu-kernels.yaml' && jq -e '[.kernels[] | select(.op == \"ln\") | .mape][0] > 12' '$tmp/nonorm.json'"
# the kernel command prices a TP-4 rank's GPT-2 Large norm at batch 4
# (4,096 x 1,280 FP32) on the H200 at the busiest SM's 32 rows of three
# iterations each: the table's cycles, by hand; on an A100 (no entry) it
# stays with the memory side
"$S" kernel norm --gpu h200 --rows 4096 --cols 1280 --dtype fp32 --json > "$tmp/ln200.json" 2> "$tmp/err"
nr=$(awk '/^norm_row_cycles:/ { f = 1; next } f && /^  hopper:/ { print $2; exit }' "$srcdir/calibration/gpu-kernels.yaml")
ni=$(awk '/^norm_iter_cycles:/ { f = 1; next } f && /^  hopper:/ { print $2; exit }' "$srcdir/calibration/gpu-kernels.yaml")
check "kernel norm on the H200, 4096 x 1280 FP32: 32 x (row + 3 x iteration) cycles at 1.98 GHz" \
    jq -e --arg nr "${nr:-0}" --arg ni "${ni:-0}" '($nr | tonumber) > 0 and (.time_s - 32 * (($nr | tonumber) + 3 * ($ni | tonumber)) / 1.98e9 | fabs) < 1e-9' "$tmp/ln200.json"
# PyTorch 2.11's softmax kernels (from 2.7: the warp kernel to 2,048
# elements, cunn_SoftMaxForwardReg to 9,216), SM-bound at the cycles fitted
# on the H100's rows and held out on the H200: FP32 12.3 / 20.3% and BF16
# 36.0 / 42.1% (H100 / H200) priced as 2.1's kernels; 6.3 / 8.3 and
# 12.7 / 11.5 at this commit. Guards at 10% (FP32) and 15% (BF16).
check "validate neusight on data/measured: softmax <= 10%, softmax-bf16 <= 15% on the H100 and the held-out H200" \
    jq -e -n --slurpfile a "$tmp/mh100.json" --slurpfile b "$tmp/mh200.json" '
      def m($j; $op): [$j.kernels[] | select(.op == $op) | .mape][0];
      m($a[0]; "softmax") <= 10 and m($b[0]; "softmax") <= 10 and
      m($a[0]; "softmax-bf16") <= 15 and m($b[0]; "softmax-bf16") <= 15'
# ROCm builds from 2.7: the warp kernel to 2,048 elements and no
# per-row block reduction there (one more column cost 5x when it was)
"$S" kernel softmax --gpu mi300x --rows 65536 --cols 1024 --torch 2.7 --json > "$tmp/am0.json" 2> "$tmp/err"
"$S" kernel softmax --gpu mi300x --rows 65536 --cols 1025 --torch 2.7 --json > "$tmp/am1.json" 2> "$tmp/err"
check "kernel softmax on MI300X under 2.7: 1,025 elements run the warp kernel, priced as it (within 10% of 1,024's)" \
    jq -e --slurpfile a "$tmp/am0.json" '.kernel == "softmax_warp_forward" and .time_s < 1.1 * $a[0].time_s' "$tmp/am1.json"
for tv in 2.1:cunn_SoftMaxForward 2.11:cunn_SoftMaxForwardReg; do
    "$S" kernel softmax --rows 4096 --cols 4096 --torch "${tv%%:*}" --json > "$tmp/smx.json" 2> "$tmp/err"
    check "kernel softmax: a 4096-element row runs ${tv#*:} on PyTorch ${tv%%:*} (SoftMax.cu's dispatch)" \
        jq -e --arg k "${tv#*:}" '.kernel == $k' "$tmp/smx.json"
done
# the attention sweep beside them (attention.csv, PyTorch's FlashAttention-2
# through SDPA), scored with the harness's SDPA floor: prefill within the
# 10% bar, causal and decode as regression guards; the H200 held out
check "validate neusight on data/measured: FA2 prefill <= 10% (H100, H200), causal <= 15%, decode <= 20% (H100) / 25% (H200)" \
    jq -e -n --slurpfile a "$tmp/mh100.json" --slurpfile b "$tmp/mh200.json" '
      def m($j; $op): [$j.kernels[] | select(.op == $op) | .mape][0];
      m($a[0]; "attention-bf16") <= 10 and m($b[0]; "attention-bf16") <= 10 and
      m($a[0]; "attention-causal-bf16") <= 15 and m($b[0]; "attention-causal-bf16") <= 15 and
      m($a[0]; "attention-decode-bf16") <= 20 and m($b[0]; "attention-decode-bf16") <= 25'
# the conv sweep (kernels-test/conv.csv: NeuSight's 3x3 shapes and
# ResNet-50's, FP32/TF32/BF16) and the op sweep (ops.csv: MoE grouped
# GEMMs, W4A16 through tinygemm and BF16 decode GEMMs, embedding gathers,
# routers), scored as classes of their own on both GPUs. Regression guards
# at this commit's figures plus a margin: conv FP32 33.2 / 31.7%, TF32
# 29.3 / 25.0, BF16 34.0 / 29.5 (H100 / H200; 110, 268 and 318% on the
# H100 before the conv floor, the Hopper conv rule and the NCHW passes);
# grouped 16.9 / 23.4, BF16 GEMMs 15.2 / 10.3. Embedding (PyTorch 2.11's
# vectorized gather, priced for 2.11: 31.4 / 35.8 FP32 / BF16 on the H100,
# 32.6 / 32.4 on the H200) and the eager router (33.2 / 23.8, the H200 held
# out from its fit) are bounded at 40%, their small rows sitting on op
# floors the harness did not time. W4A16 rows ran PyTorch's tinygemm (the
# kernel column names it) and are priced as tinygemm: 6.7 / 7.0% (64.7 /
# 68.4% priced as Marlin, the H200 held out of the wavefront fit), bounded
# at 12%.
check "validate neusight on data/measured: conv, conv-tf32, conv-bf16 scored on both GPUs (>= 700 FP32 rows each), each <= 40% (regression guard)" \
    jq -e -n --slurpfile a "$tmp/mh100.json" --slurpfile b "$tmp/mh200.json" '
      def k($j; $op): [$j.kernels[] | select(.op == $op)][0];
      [($a[0], $b[0]) as $j | ("conv", "conv-tf32", "conv-bf16") as $op | k($j; $op) | .mape <= 40] | (length == 6 and all)
      and k($a[0]; "conv").n >= 700 and k($b[0]; "conv").n >= 700'
check "validate neusight on data/measured: op sweep classes (grouped-bf16, gemm-bf16 <= 25%; embedding, embedding-bf16, topk-bf16 <= 40%; gemm-int4-tinygemm-bf16 <= 12%)" \
    jq -e -n --slurpfile a "$tmp/mh100.json" --slurpfile b "$tmp/mh200.json" '
      def k($j; $op): [$j.kernels[] | select(.op == $op)][0];
      [($a[0], $b[0]) as $j | ("grouped-bf16", "gemm-bf16") as $op | k($j; $op) | .mape <= 25] | (length == 4 and all)
      and ([($a[0], $b[0]) as $j | ("embedding", "embedding-bf16", "topk-bf16") as $op | k($j; $op) | .mape <= 40] | length == 6 and all)
      and ([($a[0], $b[0]) as $j | ("gemm-int4-tinygemm-bf16", "embedding", "embedding-bf16", "topk-bf16") as $op | k($j; $op) | .n >= 30] | length == 8 and all)
      and k($a[0]; "gemm-int4-tinygemm-bf16").mape <= 12 and k($b[0]; "gemm-int4-tinygemm-bf16").mape <= 12'
# --samples names each row's datatype and an attention row's shape
"$S" validate neusight --data "$srcdir/data/measured/h100" --samples "$tmp/ms.csv" > /dev/null 2> "$tmp/err"
# where the GPU, not the harness floor, sets the time: the gathers of
# 32,768 tokens (11.9%) and the routers of 16,384 tokens and up (11.9%)
check "validate --samples: H100 gathers of 32,768 tokens and routers of 16,384+ tokens, MAPE <= 15% each" \
    awk -F, 'NR > 1 && $3 ~ /^embedding/ && $9 >= 32768 { e += $16; ne++ } NR > 1 && $3 ~ /^topk/ && $9 >= 16384 { t += $16; nt++ }
             END { exit !(ne >= 16 && nt >= 16 && e / ne <= 15 && t / nt <= 15) }' "$tmp/ms.csv"
# cuBLAS 12's xmma kernels name their tile rows first (tilesize128x32: the
# H100's 768 x 3072 x 4096 FP32 linear ran on a 6 x 96 grid, 768 / 128 by
# 3072 / 32); every FP32 GEMM launch of the sweep names a tile strata reads
check "validate --samples: the library tile of cuBLAS 12's xmma launches (768 x 3072 x 4096 on 128x32), none unread" \
    awk -F, 'NR > 1 && $3 == "linear" && $6 == 768 && $7 == 3072 && $8 == 4096 && $18 == "fp32" { hit = ($17 == "128x32") }
             NR > 1 && ($3 == "linear" || $3 == "bmm") && $18 == "fp32" { n++; if ($17 == "0x0") z++ }
             END { exit !(hit && n >= 2900 && z == 0) }' "$tmp/ms.csv"
check "validate --samples: dtype and attention shape columns (a BF16 decode row: q_len 1 over its KV length)" \
    awk -F, 'NR == 1 { ok = ($18 == "dtype" && $21 == "q_len" && $22 == "kv_len") } NR > 1 && $3 == "attention-decode" && $18 == "bf16" && $21 == 1 && $22 > 1 { n++ } END { exit !(ok && n >= 20) }' "$tmp/ms.csv"
# the harness table decides small kernels: without it (NeuSight's 2023
# hosts' figures from the coefficient table) the H100's layer norms are
# over-predicted by far more
mkdir -p "$tmp/noh/kernels-test"
cp "$srcdir/data/measured/h100/kernels-test/ln.csv" "$tmp/noh/kernels-test/"
"$S" validate neusight --data "$tmp/noh" --json > "$tmp/noh.json" 2> "$tmp/err"
check "validate neusight: the sweep's harness.csv, not the table's NeuSight hosts, sets the floor (H100 ln: worse without it)" \
    jq -e --slurpfile h "$tmp/mh100.json" '([.kernels[] | select(.op == "ln")][0].mape) > 1.5 * ([$h[0].kernels[] | select(.op == "ln")][0].mape)' "$tmp/noh.json"
# a row in a datatype its GPU has no rate for is skipped and counted
mkdir -p "$tmp/fp8v/kernels-test"
printf 'OPName,Latency,Device,B,M,N,K,Dtype\nlinear,0.05,Tesla V100-PCIE-32GB,1,512,4096,4096,fp8\nlinear,0.5,Tesla V100-PCIE-32GB,1,512,4096,4096,fp32\n' > "$tmp/fp8v/kernels-test/linear.csv"
"$S" validate neusight --data "$tmp/fp8v" --json > "$tmp/fp8v.json" 2> "$tmp/err"
check "validate neusight: an FP8 row on a V100 is skipped and counted (skipped_dtype), the FP32 row scored" \
    jq -e '.skipped_dtype == 1 and .skipped == 0 and ([.kernels[] | select(.op == "linear")][0].n == 1)' "$tmp/fp8v.json"
printf 'dispatch,floor_us\nbmm,20\nbmm,22\n' > "$tmp/noh/harness.csv"
"$S" validate neusight --data "$tmp/noh" > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "noh/harness.csv:3:1: a second row for dispatch class 'bmm'" "$tmp/err"; then ok "validate neusight: a repeated harness class is FILE:LINE:COL"
else not_ok "validate neusight: a repeated harness class" "rc=$rc $(cat "$tmp/err")"; fi
printf 'dispatch,floor_us\nbmm,20\ngemv,12\n' > "$tmp/noh/harness.csv"
"$S" validate neusight --data "$tmp/noh" > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "noh/harness.csv:3:1: unknown dispatch class 'gemv'" "$tmp/err"; then ok "validate neusight: an unknown harness dispatch class is FILE:LINE:COL"
else not_ok "validate neusight: an unknown harness dispatch class" "rc=$rc $(cat "$tmp/err")"; fi

# ---- collectives (issue 5) -----------------------------------------------------
"$S" coll allreduce --bytes 4GiB --cluster ib-a100 --json > "$tmp/c.json" 2> "$tmp/err"
# nccl-tests on one DGX A100 (NVIDIA/nccl-tests #175): 232.5 GB/s bus bandwidth at large sizes
check "coll allreduce 4 GiB on a DGX A100: bus bandwidth within 2% of nccl-tests' 232.5 GB/s" \
    jq -e '(.busbw / 232.5e9 - 1 | fabs) < 0.02 and .algo == "ring" and .gpus == 8 and .nodes == 1' "$tmp/c.json"
"$S" coll reducescatter --bytes 4GiB --cluster ib-a100 --json > "$tmp/rs.json" 2> "$tmp/err"
check "coll: ring reduce-scatter takes half an all-reduce (large messages)" \
    jq -e --slurpfile a "$tmp/c.json" '(.time_s / $a[0].time_s - 0.5 | fabs) < 0.01' "$tmp/rs.json"
"$S" coll allreduce --bytes 256MiB --cluster ib-a100 --sim --json > "$tmp/s1.json" 2> "$tmp/err"
"$S" coll allreduce --bytes 256MiB --cluster ib-a100 --concurrent 2 --json > "$tmp/s2.json" 2> "$tmp/err"
check "coll --concurrent 2: two all-reduces on the same GPUs take about twice one" \
    jq -e --slurpfile a "$tmp/s1.json" '(.sim.all_done_s / $a[0].sim.time_s - 2 | fabs) < 0.2' "$tmp/s2.json"
check "coll --sweep shows the latency floor: 1 KiB and 2 KiB take about the same time" \
    jq -e '.sweep[0].bytes == 1024 and (.sweep[1].time_s / .sweep[0].time_s) < 1.05' \
    <("$S" coll allreduce --bytes 1MiB --sweep --json)
# ASTRA-sim's validated HGX-H100 configuration (a node preset: coll takes
# nodes as train does). By hand: a 1 MiB ring all-reduce over 8 GPUs is
# 14 steps x 2 x 936.25 ns + 2 x 7/8 x 1048576 B / 400 GB/s = 30.80 us.
check "coll on a node preset: ASTRA-sim's HGX-H100, 1 MiB ring all-reduce = 30.80 us by hand" \
    sh -c "'$S' coll allreduce --cluster astra-hgx-h100 --bytes 1MiB --algo ring --json | jq -e '(.time_s / 30.8034e-6 - 1 | fabs) < 1e-4'"
# ASTRA-sim (congestion-aware analytical backend, its HGX-H100-validated
# example): all-reduce 57.4 us, reduce-scatter 29.0 us, with 4 chunks of
# which 2 run at once. strata's model on that schedule (two rounds of two
# 256 KiB chunks = two 512 KiB collectives) must land within the issue's 15%.
for cc in "allreduce 57.4" "reducescatter 29.0"; do
    set -- $cc
    check "coll: ASTRA-sim's HGX-H100 $1 on its chunk schedule within 15% of its $2 us" \
        sh -c "'$S' coll $1 --cluster astra-hgx-h100 --bytes 512KiB --algo ring --json | jq -e '(2 * .time_s / $2e-6 - 1 | fabs) < 0.15'"
done
"$S" coll allreduce --bytes 1MiB --chunk -1 > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && [ "$(grep -c '^strata coll:' "$tmp/err")" = 1 ]; then ok "coll --chunk -1: one usage error, exit 2"; else not_ok "coll --chunk -1: one usage error, exit 2" "rc=$rc $(cat "$tmp/err")"; fi
check "coll --sweep below 1 KiB: the sweep is the asked size, not 1 KiB" \
    sh -c "'$S' coll allreduce --bytes 100 --sweep --json | jq -e '(.sweep | length) == 1 and .sweep[0].bytes == 100'"
# 1 GiB over 64 ranks is 16 MiB per step: 256 chunks of 64 KiB, cut to the 16 the simulation takes
check "coll --sim: the chunks per step are reported (16 MiB per step, 64 KiB asked: capped at 16)" \
    sh -c "'$S' coll allreduce --cluster ib-a100 --gpus 64 --bytes 1GiB --sim --chunk 64KiB --json | jq -e '.sim.chunks == 16'"
# a block far past INT_MAX chunks (8 GiB over 4 GPUs: 2 GiB a step, 1-byte
# chunks) is capped at 16 too, not wrapped to 1
check "coll --sim: 2^31 chunks a step are capped at 16, not wrapped" \
    sh -c "'$S' coll allreduce --gpus 4 --bytes 8GiB --sim --chunk 1 --json | jq -e '.sim.chunks == 16 and .sim.transfers == 384'"
"$S" coll allreduce --cluster ib-a100 --gpus 160 --bytes 1GiB --algo ring --sim --chunk 64KiB > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "simulation too large: over 4000000" "$tmp/err" && [ ! -s "$tmp/out" ]; then ok "coll --sim too large: refused with the fix, nothing printed"; else not_ok "coll --sim too large: refused with the fix, nothing printed" "rc=$rc $(cat "$tmp/err")"; fi
"$S" coll sendrecv --gpus 3 --bytes 1MiB > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q "between 2 GPUs" "$tmp/err"; then ok "coll sendrecv --gpus 3: usage error naming the rule"; else not_ok "coll sendrecv --gpus 3: error naming the rule" "rc=$rc $(cat "$tmp/err")"; fi
"$S" coll allreduce --bytes 12Q > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q "64MiB" "$tmp/err"; then ok "coll --bytes 12Q: usage error with examples"; else not_ok "coll --bytes 12Q: usage error with examples" "rc=$rc"; fi
"$S" coll allreduce --bytes 0 --cluster ib-a100 > "$tmp/z.out" 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q "moves no data" "$tmp/err" && [ ! -s "$tmp/z.out" ]; then ok "coll --bytes 0: usage error, nothing printed"; else not_ok "coll --bytes 0: usage error, nothing printed" "rc=$rc"; fi
"$S" coll allreduce --bytes 0.0001KiB --cluster ib-a100 > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q "less than one byte" "$tmp/err"; then ok "coll --bytes 0.0001KiB: usage error"; else not_ok "coll --bytes 0.0001KiB: usage error" "rc=$rc"; fi
# a plain byte count is whole (0.5 and 1.5 alike); a fraction of a unit
# rounds to whole bytes (0.5 KiB = 512 B exactly, 0.01 KiB = 10.24 -> 10)
for b in 0.25 1.5; do
    "$S" coll allreduce --bytes $b --cluster ib-a100 > /dev/null 2> "$tmp/err"; rc=$?
    if [ $rc = 2 ] && grep -q "'$b' is not a whole number of bytes" "$tmp/err"; then ok "coll --bytes $b: not whole bytes, usage error"; else not_ok "coll --bytes $b: usage error" "rc=$rc $(cat "$tmp/err")"; fi
done
"$S" coll allreduce --bytes 0.5KiB --cluster ib-a100 --json > "$tmp/h.json" 2> "$tmp/err"
"$S" coll allreduce --bytes 0.01KiB --cluster ib-a100 --json > "$tmp/r.json" 2>> "$tmp/err"
if [ "$(jq .bytes "$tmp/h.json")" = 512 ] && [ "$(jq .bytes "$tmp/r.json")" = 10 ]; then ok "coll --bytes: fractions of a unit become whole bytes"; else not_ok "coll --bytes: fractions of a unit become whole bytes" "$(cat "$tmp/err")"; fi
"$S" coll allreduce --bytes 0x10 > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q "expected a size such as" "$tmp/err"; then ok "coll --bytes 0x10: hexadecimal refused"; else not_ok "coll --bytes 0x10: hexadecimal refused" "rc=$rc"; fi
"$S" coll allreduce --bytes 1EiB > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q "unknown unit 'EiB' in '1EiB'; units are B, K/KiB, .*P/PiB" "$tmp/err"; then ok "coll --bytes 1EiB: the unknown unit named"; else not_ok "coll --bytes 1EiB: the unknown unit named" "rc=$rc $(cat "$tmp/err")"; fi
"$S" coll allreduce --bytes 1MiB --gpus 12 > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "multiple of 8" "$tmp/err"; then ok "coll --gpus 12 on 8-GPU nodes: error with the fix"; else not_ok "coll --gpus 12 on 8-GPU nodes: error with the fix" "rc=$rc $(cat "$tmp/err")"; fi

# NCCL's protocols: a 64 KiB all-reduce on a DGX A100 runs on LL (base
# 6.6 us + 14 x 0.6 us + 2 x 7/8 x 64 KiB at NCCL's 87.7 GB/s LL cap =
# 16.31 us); --proto simple gives the preset's figures alone (8.4 us + 14 x
# 3.4 us + the same bytes at 300 x 0.775 GB/s = 56.49 us)
"$S" coll allreduce --cluster dgx-a100 --bytes 64KiB --json > "$tmp/cp.json" 2> "$tmp/err"
"$S" coll allreduce --cluster dgx-a100 --bytes 64KiB --proto simple --json > "$tmp/cs.json" 2> "$tmp/err"
check "coll: NCCL's protocol choice (LL at 64 KiB on 8 NVSwitch GPUs, 16.31 us by hand; Simple alone 56.49 us)" \
    jq -e -n --slurpfile a "$tmp/cp.json" --slurpfile b "$tmp/cs.json" '$a[0].protocol == "ll" and (($a[0].time_s / 16.3077e-6 - 1) | fabs) < 1e-4 and ($a[0].algorithms | all(.protocol)) and $b[0].protocol == "simple" and (($b[0].time_s / 56.4933e-6 - 1) | fabs) < 1e-4'
"$S" coll allreduce --cluster dgx-a100 --bytes 1GiB --json > "$tmp/cl.json" 2> "$tmp/err"
check "coll: a 1 GiB all-reduce stays on Simple" jq -e '.protocol == "simple"' "$tmp/cl.json"
"$S" coll allreduce --bytes 1MiB --proto fast > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q "\-\-proto: expected auto, ll, ll128 or simple, got 'fast'" "$tmp/err"; then ok "coll --proto fast: usage error naming the choices"
else not_ok "coll --proto fast" "rc=$rc $(cat "$tmp/err")"; fi
"$S" coll alltoall --cluster dgx-a100 --bytes 1MiB --proto ll > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "point-to-point path" "$tmp/err" && [ ! -s "$tmp/out" ]; then ok "coll alltoall --proto ll: refused, NCCL's point-to-point path is Simple"
else not_ok "coll alltoall --proto ll" "rc=$rc $(cat "$tmp/err")"; fi
"$S" coll allreduce --cluster rtx-4090-workstation --bytes 1MiB --proto ll128 > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "LL128 on NVLink fabrics only" "$tmp/err"; then ok "coll --proto ll128 on a PCIe node: refused with the reason"
else not_ok "coll --proto ll128 on a PCIe node" "rc=$rc $(cat "$tmp/err")"; fi
# the simulation moves its chunks on the protocol asked for
"$S" coll allreduce --cluster dgx-a100 --bytes 64KiB --proto simple --sim --json > "$tmp/cps.json" 2> "$tmp/err"
check "coll --proto simple --sim: the simulation on Simple too, and agreeing with the model" \
    jq -e '.protocol == "simple" and .sim.protocol == "simple" and ((.sim.time_s / .time_s - 1) | fabs) < 1e-6' "$tmp/cps.json"
# LL's base is Simple's less 1.8 us, never below 0: ASTRA-sim's node (no
# base) on LL alone, 8 GPUs, 1 KiB = 14 steps x 1.8725 x 0.6/3.4 us + 2 x
# 7/8 KiB at NCCL's 141 GB/s LL cap on one Hopper node = 4.6389 us
sed 's/^nccl_protocols: .*/nccl_protocols: [ll]/' "$srcdir/presets/node/astra-hgx-h100.yaml" > "$tmp/nl.yaml"
"$S" coll allreduce --cluster "$tmp/nl.yaml" --bytes 1KiB --json > "$tmp/nl.json" 2> "$tmp/err"
check "coll on LL with no base latency: 14 scaled steps and the bytes at the LL cap (4.639 us by hand)" \
    jq -e '.protocol == "ll" and ((.time_s / 4.63892e-6 - 1) | fabs) < 1e-4' "$tmp/nl.json"
sed 's/^nccl_protocols: .*/nccl_protocols: [simple, fast]/' "$srcdir/presets/node/astra-hgx-h100.yaml" > "$tmp/np.yaml"
"$S" coll allreduce --cluster "$tmp/np.yaml" --bytes 1MiB > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "np.yaml:[0-9]*:[0-9]*: key 'nccl_protocols': expected ll, ll128 or simple, found 'fast'" "$tmp/err" && [ ! -s "$tmp/out" ]; then ok "node preset: a bad nccl_protocols entry is an error at file:line:col"
else not_ok "node preset: bad nccl_protocols" "rc=$rc $(cat "$tmp/err")"; fi

# fabrics strata does not price are refused at the key, not priced as a
# switch: a ring or torus of nodes (NIC traffic routed through other
# nodes), a torus inside a node without its grid, an oversubscription no
# link but a fat tree's divides by, and a second network dimension (leaf,
# spine: each level's size is not in the format)
sed 's/topology: rail_optimized/topology: torus2d/' "$srcdir/presets/cluster/ib-h100.yaml" > "$tmp/fab-torus.yaml"
sed 's/^  topology: nvswitch /  topology: torus2d /' "$srcdir/presets/node/dgx-h100.yaml" > "$tmp/fab-ring.yaml"
sed 's/oversubscription: 1 /oversubscription: 8 /' "$srcdir/presets/cluster/ib-h100.yaml" > "$tmp/fab-over.yaml"
{ cat "$srcdir/presets/cluster/ib-h100.yaml"
  sed -n '/^  - name:/,$p' "$srcdir/presets/cluster/ib-h100.yaml" | sed 's/name: ndr-compute-fabric/name: spine/'; } > "$tmp/fab-two.yaml"
fab_ok=1 fab_out=
for f in "torus:fab-torus.yaml:17:15: network\[0\]: key 'topology': torus2d is not a fabric strata prices across nodes" \
    "ring:fab-ring.yaml:[0-9]*:3: intra: a torus2d needs \`shape: \[X, Y\]\`" \
    "over:fab-over.yaml:[0-9]*:23: network\[0\]: key 'oversubscription': 8:1 on a rail_optimized fabric" \
    "two:fab-two.yaml:13:5: network\[0\]: \`nodes:\` is needed where a dimension follows"; do
    want=${f#*:}; file=${want%%:*}
    "$S" coll allreduce --cluster "$tmp/$file" --gpus 16 --bytes 1GiB > "$tmp/out" 2> "$tmp/err"; rc=$?
    if [ $rc != 1 ] || [ -s "$tmp/out" ] || ! grep -q "$want" "$tmp/err"; then fab_ok=0; fab_out="$fab_out ${f%%:*}: rc=$rc $(cat "$tmp/err")"; fi
done
if [ $fab_ok = 1 ]; then ok "presets: a torus of nodes, a node's torus without shape, a rail's oversubscription and a second network dimension without the first's nodes are errors at FILE:LINE:COL"
else not_ok "presets: unpriced fabrics refused" "$fab_out"; fi
# a ring or torus inside a node is routed (net.h): a DGX H100's 8 GPUs on
# a ring of 2 links of 450/2 GB/s x 0.82 run the ring all-reduce exactly as
# the NVSwitch does (the ring both ways round loads each link with half a
# block); all-to-all pays the ring's bisection: GPU 0's routes put
# 1 + 2 + 3 + 4/2 = 8 messages on each up link, against 7 over the
# switch's whole port, 16/7 the time; on a 4x2 torus (4 links of 112.5 GB/s
# x 0.82 = 92.25 GB/s, a dimension's ring both ways round 184.5) the
# dimension-wise all-reduce takes 2 x (3/8 + 3/16) x S / 184.5 GB/s by
# hand (X on half the data, then Y on its quarter, while the other half
# goes Y then X), and auto picks it; show prints the grid
sed 's/^  topology: nvswitch /  topology: ring /' "$srcdir/presets/node/dgx-h100.yaml" > "$tmp/ring8.yaml"
sed 's/^  topology: nvswitch .*/  topology: torus2d\n  shape: [4, 2]/' "$srcdir/presets/node/dgx-h100.yaml" > "$tmp/tor8.yaml"
"$S" coll allreduce --cluster "$tmp/ring8.yaml" --algo ring --bytes 1GiB --json > "$tmp/r8.json" 2> "$tmp/err"
"$S" coll allreduce --cluster dgx-h100 --algo ring --bytes 1GiB --json > "$tmp/s8.json" 2>> "$tmp/err"
"$S" coll alltoall --cluster "$tmp/ring8.yaml" --bytes 1GiB --json > "$tmp/r8a.json" 2>> "$tmp/err"
"$S" coll alltoall --cluster dgx-h100 --bytes 1GiB --json > "$tmp/s8a.json" 2>> "$tmp/err"
"$S" coll allreduce --cluster "$tmp/tor8.yaml" --bytes 1GiB --json > "$tmp/t8.json" 2>> "$tmp/err"
"$S" show "$tmp/tor8.yaml" > "$tmp/t8.txt" 2>> "$tmp/err"
if [ ! -s "$tmp/err" ] && jq -n -e --slurpfile r "$tmp/r8.json" --slurpfile s "$tmp/s8.json" \
       --slurpfile ra "$tmp/r8a.json" --slurpfile sa "$tmp/s8a.json" --slurpfile t "$tmp/t8.json" \
       '(($r[0].time_s / $s[0].time_s - 1) | fabs) < 1e-12
        and (($ra[0].transfer_s / $sa[0].transfer_s - 16 / 7) | fabs) < 1e-9
        and $t[0].algo == "hierarchical"
        and (($t[0].transfer_s / (2 * (3 / 8 + 3 / 16) * 1073741824 / 184.5e9) - 1) | fabs) < 1e-9' > /dev/null &&
   grep -q "torus2d 4x2, 450 GB/s per GPU per direction, 3.4 us a hop (4 links of 112.5 GB/s)" "$tmp/t8.txt"
then ok "coll on a ring and a torus node: the ring as a switch's, all-to-all 16/7 slower, the 4x2 torus's dimension-wise time by hand"
else not_ok "coll on ring and torus nodes" "$(cat "$tmp/err" "$tmp/t8.txt"; jq -c '[.algo, .time_s, .transfer_s]' "$tmp/r8.json" "$tmp/s8.json" "$tmp/r8a.json" "$tmp/s8a.json" "$tmp/t8.json")"; fi
# the dimension-wise passes have no simulation: a usage error, as the tree's
"$S" coll allreduce --cluster "$tmp/tor8.yaml" --algo hierarchical --sim --bytes 1MiB > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && [ ! -s "$tmp/out" ] && grep -q "^strata coll: --sim --algo hierarchical: on a torus2d node it runs dimension by dimension" "$tmp/err"
then ok "coll --sim --algo hierarchical on a torus node: a usage error naming why"
else not_ok "coll --sim --algo hierarchical on a torus" "rc=$rc $(cat "$tmp/err")"; fi
# ASTRA-sim's FullyConnected is a direct link between every pair: the mesh
sed 's/^  topology: nvswitch /  topology: fully_connected /' "$srcdir/presets/node/dgx-h100.yaml" > "$tmp/fc8.yaml"
sed 's/^  topology: nvswitch /  topology: nvlink_mesh /' "$srcdir/presets/node/dgx-h100.yaml" > "$tmp/mesh8.yaml"
"$S" coll sendrecv --cluster "$tmp/fc8.yaml" --bytes 1GiB --json > "$tmp/fc.json" 2> "$tmp/err"
"$S" coll sendrecv --cluster "$tmp/mesh8.yaml" --bytes 1GiB --json > "$tmp/mesh.json" 2>> "$tmp/err"
"$S" coll sendrecv --cluster dgx-h100 --bytes 1GiB --json > "$tmp/sw.json" 2>> "$tmp/err"
if [ ! -s "$tmp/err" ] && jq -n -e --slurpfile a "$tmp/fc.json" --slurpfile b "$tmp/mesh.json" --slurpfile c "$tmp/sw.json" \
       '$a[0].time_s == $b[0].time_s and (($a[0].transfer_s / $c[0].transfer_s - 7) | fabs) < 1e-9' > /dev/null
then ok "node preset: fully_connected is the NVLink mesh (a pair's send/recv on 1/7 of a GPU's links)"
else not_ok "node preset: fully_connected" "$(cat "$tmp/err" "$tmp/fc.json")"; fi
# a ring or torus across nodes, and a grid that is not the node's GPUs
sed 's/^  topology: nvswitch .*/  topology: torus2d\n  shape: [4, 4]/' "$srcdir/presets/node/dgx-h100.yaml" > "$tmp/tor16.yaml"
"$S" show "$tmp/tor16.yaml" > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && [ ! -s "$tmp/out" ] && grep -q "tor16.yaml:[0-9]*:[0-9]*: intra: key 'shape': the grid holds 16 GPUs and the node has 8" "$tmp/err"
then ok "node preset: a torus grid that is not the node's GPU count is an error at FILE:LINE:COL"
else not_ok "node preset: torus grid size" "rc=$rc $(cat "$tmp/err")"; fi
# two scale-out levels: leaves of 2 DGX H100 nodes on NDR rails (the
# ib-h100 fabric), a 4:1 spine of 50 GB/s per NIC above them. A 64-GPU
# ring crosses the spine once per leaf and ring: the leaf's share of it is
# 50 x 0.94 / 4 x 8 NICs x 2 nodes = 188 GB/s, under the 8 NICs' 376, so
# the all-reduce's bus bandwidth is 188 GB/s; 16 GPUs in one leaf do not
# cross it and keep the one-level time
sed -e 's/^nodes: .*/nodes: 8/' -e 's/^  - name: ndr-compute-fabric/  - nodes: 2\n    name: ndr-compute-fabric/' \
    "$srcdir/presets/cluster/ib-h100.yaml" > "$tmp/lv2.yaml"
cat >> "$tmp/lv2.yaml" <<'EOF'
  - {name: spine, topology: fat_tree, bw_gbs: 50, latency_us: 14, efficiency: 0.94, oversubscription: 4}
EOF
sed -e 's/^nodes: .*/nodes: 8/' "$srcdir/presets/cluster/ib-h100.yaml" > "$tmp/lv1.yaml"
"$S" coll allreduce --cluster "$tmp/lv2.yaml" --gpus 64 --algo ring --proto simple --bytes 4GiB --json > "$tmp/lv64.json" 2> "$tmp/err"
"$S" coll allreduce --cluster "$tmp/lv2.yaml" --gpus 16 --bytes 1GiB --json > "$tmp/lv16.json" 2>> "$tmp/err"
"$S" coll allreduce --cluster "$tmp/lv1.yaml" --gpus 16 --bytes 1GiB --json > "$tmp/lv16o.json" 2>> "$tmp/err"
"$S" show "$tmp/lv2.yaml" > "$tmp/lv2.txt" 2>> "$tmp/err"
if [ ! -s "$tmp/err" ] && jq -n -e --slurpfile a "$tmp/lv64.json" --slurpfile b "$tmp/lv16.json" --slurpfile c "$tmp/lv16o.json" \
       '(($a[0].levels[0].share_bytes_per_s / 188e9 - 1) | fabs) < 1e-9 and $a[0].levels[0].crossed
        and ((2 * 63 / 64 * 4294967296 / $a[0].transfer_s / 188e9 - 1) | fabs) < 1e-9
        and ($b[0].levels[0].crossed | not) and $b[0].time_s == $c[0].time_s' > /dev/null &&
   grep -q "spine .*4:1 oversubscribed, groups of 8 nodes" "$tmp/lv2.txt" && grep -q "ndr-compute-fabric .*groups of 2 nodes" "$tmp/lv2.txt"
then ok "coll on two network levels: a ring across leaves at their 188 GB/s share of a 4:1 spine, by hand; inside a leaf as one level"
else not_ok "coll on two network levels" "$(cat "$tmp/err" "$tmp/lv2.txt"; jq -c '[.transfer_s, .levels]' "$tmp/lv64.json" "$tmp/lv16.json")"; fi
# a level's nodes must divide the cluster and the level above, rails only at the bottom
lv_ok=1 lv_out=
for f in "s/nodes: 2$/nodes: 3/|key 'nodes': 3 does not divide the cluster's 8 nodes" \
         "s/topology: fat_tree, bw_gbs: 50/topology: rail_optimized, bw_gbs: 50/;s/, oversubscription: 4}/}/|rail_optimized is how a leaf joins" \
         "s/efficiency: 0.94, oversubscription: 4}/efficiency: 0.94, oversubscription: 4, nodes: 4}/|the last dimension joins the cluster's 8 nodes, not 4" \
         "s/topology: rail_optimized/topology: fat_tree/;s/^    oversubscription: 1 /    oversubscription: 2 /|key 'oversubscription': 2:1 on the first of several levels"; do
    sed "${f%%|*}" "$tmp/lv2.yaml" > "$tmp/lvbad.yaml"
    "$S" coll allreduce --cluster "$tmp/lvbad.yaml" --gpus 16 --bytes 1GiB > "$tmp/out" 2> "$tmp/err"; rc=$?
    if [ $rc != 1 ] || [ -s "$tmp/out" ] || ! grep -q "lvbad.yaml:[0-9]*:[0-9]*: network\[[01]\]: .*${f#*|}" "$tmp/err"; then
        lv_ok=0; lv_out="$lv_out [${f%%|*}] rc=$rc $(cat "$tmp/err")"; fi
done
if [ $lv_ok = 1 ]; then ok "cluster presets: a level's nodes that do not divide the cluster, rails above the leaf, a last level short of the cluster and blocking on the first of several levels are errors at FILE:LINE:COL"
else not_ok "cluster presets: level errors" "$lv_out"; fi
# serve's pipeline hop crosses nodes when a replica's tp x pp GPUs do not
# fit one: TP 8 x PP 2 on ib-h100 pays a 10x slower network in TPOT, TP 4
# x PP 2 (one node) does not
sed 's/^    bw_gbs: 50 .*/    bw_gbs: 5/' "$srcdir/presets/cluster/ib-h100.yaml" > "$tmp/slow.yaml"
for c in ib-h100 slow; do
    cf=$c; [ $c = slow ] && cf="$tmp/slow.yaml"
    "$S" serve llama2-70b --cluster "$cf" --tp 8 --pp 2 --qps 2 --requests 30 --lengths fixed:512,64 --json > "$tmp/pp16-$c.json" 2>> "$tmp/pperr"
    "$S" serve llama2-70b --cluster "$cf" --tp 4 --pp 2 --qps 2 --requests 30 --lengths fixed:512,64 --json > "$tmp/pp8-$c.json" 2>> "$tmp/pperr"
done
if [ ! -s "$tmp/pperr" ] && jq -n -e --slurpfile a "$tmp/pp16-ib-h100.json" --slurpfile b "$tmp/pp16-slow.json" \
       --slurpfile c "$tmp/pp8-ib-h100.json" --slurpfile d "$tmp/pp8-slow.json" \
       '$b[0].tpot_s.mean > $a[0].tpot_s.mean and $c[0].tpot_s.mean == $d[0].tpot_s.mean' > /dev/null
then ok "serve --pp: a stage hop across nodes pays the network (TP 8 x PP 2 on 8-GPU nodes), one inside a node does not"
else not_ok "serve --pp across nodes" "$(cat "$tmp/pperr"; jq -c '.tpot_s.mean' "$tmp"/pp*.json)"; fi
# a switch's oversubscription is priced (each NIC's bandwidth divided by
# it): a 1 GiB all-reduce over 16 GPUs on 2 nodes takes longer at 2:1
sed -e 's/topology: rail_optimized/topology: switch/' "$srcdir/presets/cluster/ib-h100.yaml" > "$tmp/fab-sw1.yaml"
sed -e 's/oversubscription: 1 /oversubscription: 2 /' "$tmp/fab-sw1.yaml" > "$tmp/fab-sw2.yaml"
"$S" coll allreduce --cluster "$tmp/fab-sw1.yaml" --gpus 16 --bytes 1GiB --json > "$tmp/sw1.json" 2> "$tmp/err"
"$S" coll allreduce --cluster "$tmp/fab-sw2.yaml" --gpus 16 --bytes 1GiB --json > "$tmp/sw2.json" 2>> "$tmp/err"
check "presets: a switch's oversubscription is accepted and slows a cross-node all-reduce" \
    jq -e --slurpfile a "$tmp/sw1.json" '.time_s > 1.2 * $a[0].time_s' "$tmp/sw2.json"

# ---- training (issue 5) --------------------------------------------------------
"$S" train gpt2-large --cluster hgx-a100-4gpu --gpus 4 --pp 4 --global-batch 16 --seq 1024 --dtype fp32 \
    --trace "$tmp/trace.json" --json > "$tmp/t.json" 2> "$tmp/err"
check "train --json: iteration_s, lo_s, hi_s, mfu, tokens_per_s, memory_per_gpu_bytes, bubble_fraction, comm_s" \
    jq -e '.iteration_s > 0 and .lo_s < .iteration_s and .hi_s > .iteration_s and .mfu > 0 and .mfu < 1 and .tokens_per_s > 0 and .memory_per_gpu_bytes > 0 and .bubble_fraction > 0 and .comm_s > 0' "$tmp/t.json"
# the bubble is the schedule's idle, not the send/recv between stages
# (comm_s carries that): on a 1 GB/s fabric, 1,024 microbatches over 4
# stages leave (p-1)/(m+p-1) = 3/1027 = 0.29% idle, as on the real one
sed 's/bw_gbs: 50 /bw_gbs: 1 /' "$srcdir/presets/cluster/ib-h100.yaml" > "$tmp/slow.yaml"
"$S" train llama2-7b --cluster "$tmp/slow.yaml" --gpus 32 --pp 4 --tp 8 --microbatches 1024 --global-batch 1024 --json > "$tmp/bs.json" 2> "$tmp/err"
"$S" train llama2-7b --cluster ib-h100 --gpus 32 --pp 4 --tp 8 --microbatches 1024 --global-batch 1024 --json > "$tmp/bf.json" 2> "$tmp/err"
check "train: a slow link's send/recv is comm_s, not bubble (bubble within 5% of 3/1027 on 1 and 50 GB/s)" \
    jq -e --slurpfile f "$tmp/bf.json" '((.bubble_fraction / (3 / 1027) - 1) | fabs) < 0.05 and .bubble_fraction == $f[0].bubble_fraction and .comm_s > $f[0].comm_s' "$tmp/bs.json"
# memory is whole bytes per GPU: BERT-large's 335,174,458 parameters in
# BF16 over ZeRO-3's 16 shards are 41,896,807.25 B, held as 41,896,808
"$S" train bert-large --gpus 16 --zero 3 --recompute full --json > "$tmp/zb.json" 2> "$tmp/err"
check "train --json: memory in whole bytes (ZeRO-3 shard of BERT-large: 41,896,808 B), its terms adding up" \
    jq -e '.memory.weights == 41896808 and ([.memory | .weights, .grads, .optimizer, .activations, .logits, .buffers] | all(. == floor) and add == $t)' --argjson t "$(jq '.memory_per_gpu_bytes' "$tmp/zb.json")" "$tmp/zb.json"
check "train: tokens/s = global batch x seq / iteration" \
    jq -e '(.tokens_per_s * .iteration_s / (16 * 1024) - 1 | fabs) < 1e-9' "$tmp/t.json"
check "train --trace: a Chrome trace with a forward and a backward per microbatch per stage" \
    jq -e '[.traceEvents[] | select(.ph == "X" and (.cat == "forward" or .cat == "backward"))] | length == 4 * 16 * 2' "$tmp/trace.json"
# its communication: 1F1B over 4 stages sends each of 16 microbatches'
# activations down (stages 0-2) and gradients up (stages 1-3), so the end
# stages send 16 times and the middle ones 32, and a middle stage's sends
# add up to the JSON's pp_comm_s (2 x 16 transfers)
check "train --trace: pipeline sends per stage 16, 32, 32, 16; a middle stage's add up to pp_comm_s" \
    jq -e -n --slurpfile t "$tmp/trace.json" --slurpfile o "$tmp/t.json" '[range(0;4) as $p | [$t[0].traceEvents[] | select(.pid == $p and .tid == 3 and .ph == "X")] | length] == [16, 32, 32, 16] and (([$t[0].traceEvents[] | select(.pid == 1 and .tid == 3 and .ph == "X") | .dur] | add) / 1e6 / $o[0].breakdown.pp_comm_s - 1 | fabs) < 1e-9'
check "train --trace: the whole iteration written, said in the trace (otherData) and the JSON" \
    jq -e -n --slurpfile t "$tmp/trace.json" --slurpfile o "$tmp/t.json" '$t[0].otherData.tasks_written == 128 and $t[0].otherData.tasks_total == 128 and $o[0].trace.tasks == 128 and $o[0].trace.truncated == false'
# a trace past 200,000 tasks keeps each stage's first 200,000 / PP and says
# so: 8 stages x 2 x 12,600 microbatches = 201,600 tasks, 25,000 a stage kept
"$S" train gpt2-large --cluster dgx-a100 --gpus 8 --pp 8 --microbatches 12600 --global-batch 12600 --seq 1024 \
    --dtype bf16 --trace "$tmp/bigt.json" > "$tmp/bigo.txt" 2> "$tmp/err"
check "train --trace past its cap: 200000 of 201600 tasks, 25000 a stage, said in the text and the trace" \
    jq -e --rawfile txt "$tmp/bigo.txt" '.otherData.tasks_written == 200000 and .otherData.tasks_total == 201600 and ([.traceEvents[] | select(.pid == 7 and (.cat == "forward" or .cat == "backward"))] | length) == 25000 and ($txt | test("it holds 200000 of the iteration.s 201600 forward/backward tasks: each of the 8 pipeline stages keeps its first 25000"))' "$tmp/bigt.json"
rm -f "$tmp/bigt.json"
# serve's trace of steps stops at 200,000 and says how many the run took
"$S" serve llama2-7b --gpu a100-80gb-sxm --qps 0.5 --requests 2500 --lengths fixed:16,128 --seed 1 \
    --trace-out "$tmp/bigs.json" --json > "$tmp/bigs.out" 2> "$tmp/err"
check "serve --trace-out past its cap: the first 200000 steps, the run's total in the trace and the JSON" \
    jq -e -n --slurpfile t "$tmp/bigs.json" --slurpfile o "$tmp/bigs.out" '([$t[0].traceEvents[] | select(.name == "step")] | length) == 200000 and $t[0].otherData.steps_written == 200000 and $t[0].otherData.requests_written == 2500 and $o[0].trace_out.steps == 200000 and $o[0].trace_out.steps_total == $o[0].steps and $o[0].steps > 200000 and $o[0].trace_out.truncated == true'
rm -f "$tmp/bigs.json"
# ZeRO-3 on one 8-GPU node: every forward gathers, every backward gathers
# and reduce-scatters (2 tasks per microbatch, each drawn beside its task);
# with no DP buckets they are all of the iteration's communication
"$S" train llama2-7b --cluster dgx-h100 --gpus 8 --zero 3 --global-batch 16 --seq 2048 --flash --json \
    --trace "$tmp/z3t.json" > "$tmp/z3o.json" 2> "$tmp/err"
# (and their exposed parts, each after the layer that waits on it, add up
# to zero_gather_s)
check "train --trace with ZeRO-3: one gather event per task, adding up to comm_total_s" \
    jq -e -n --slurpfile t "$tmp/z3t.json" --slurpfile o "$tmp/z3o.json" '[$t[0].traceEvents[] | select((.name | startswith("ZeRO-3")) and .tid == 2)] as $z | ($z | length) == 2 * $o[0].config.microbatches and (($z | map(.dur) | add) / 1e6 / $o[0].breakdown.comm_total_s - 1 | fabs) < 1e-9 and ($z | all(.tid == 2)) and (([$t[0].traceEvents[] | select(.ph == "X" and (.name | startswith("ZeRO-3")) and .tid == 1) | .dur] | add) / 1e6 / $o[0].breakdown.zero_gather_s - 1 | fabs) < 1e-9'
"$S" train llama2-7b --cluster dgx-h100 --gpus 8 --tp 4 --sp --dp 2 --global-batch 16 --seq 2048 --flash --json \
    --trace "$tmp/tpt.json" > "$tmp/tpo.json" 2> "$tmp/err"
# (per microbatch and pass, one span for each of Llama 2 7B's 32 blocks and
# one for the vocabulary-parallel end's: embedding and head, forward and
# backward, 2 x 32 + 4 in all)
check "train --trace with TP 4 + SP: reduce-scatter + all-gather events inside their tasks, adding up to tp_comm_s" \
    jq -e -n --slurpfile t "$tmp/tpt.json" --slurpfile o "$tmp/tpo.json" '[$t[0].traceEvents[] | select(.ph == "X" and (.name | startswith("TP ")))] as $e | ($e | length) == (2 * 32 + 4) * $o[0].config.microbatches and ($e | all(.tid == 1)) and ($e | map(select(.name | startswith("TP reduce-scatters + all-gathers"))) | length) == 2 * 32 * $o[0].config.microbatches and (($e | map(.dur) | add) / 1e6 / $o[0].breakdown.tp_comm_s - 1 | fabs) < 1e-9 and ([$t[0].traceEvents[] | select(.tid == 0 and (.cat == "forward" or .cat == "backward"))] as $k | [$e[] as $c | [$k[] | select($c.ts >= .ts - 1e-6 and $c.ts + $c.dur <= .ts + .dur + 1e-6)] | length == 1] | all)'
# context parallelism is ring attention: fused kernels only, so plan searches
# CP > 1 with --flash and says so without it; train refuses eager CP
"$S" plan gpt2-large --cluster hgx-a100-4gpu --global-batch 4 --seq 1024 --json > "$tmp/pe.json"
"$S" plan gpt2-large --cluster hgx-a100-4gpu --global-batch 4 --seq 1024 --flash --json > "$tmp/pf.json"
check "plan: CP > 1 only with --flash (cp_searched false and no CP row without it; more configurations with it)" \
    jq -e --slurpfile f "$tmp/pf.json" '(.cp_searched | not) and ([.plans[], .pareto[] | .config.cp] | max) == 1 and $f[0].cp_searched and $f[0].evaluated > .evaluated' "$tmp/pe.json"
"$S" train gpt2-large --cluster hgx-a100-4gpu --cp 4 --global-batch 4 --seq 1024 > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q "needs fused attention; add --flash" "$tmp/err" && [ ! -s "$tmp/out" ]; then ok "train --cp 4 with eager attention: a usage error naming --flash"; else not_ok "train --cp 4 eager refused" "rc=$rc $(cat "$tmp/err")"; fi
"$S" train gpt2-large --cluster hgx-a100-4gpu --tp 3 > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q "tp x pp x cp = 3 does not fit the 4 GPUs of one hgx-a100-4gpu node (the default without --gpus), and no --gpus would" "$tmp/err"; then ok "train --tp 3 on 4 GPUs: usage error"; else not_ok "train --tp 3 on 4 GPUs: usage error" "rc=$rc $(cat "$tmp/err")"; fi
# options the command does not read are refused, not ignored (train and plan share a parser)
"$S" plan gpt2-large --cluster hgx-a100-4gpu --tp 2 > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q -- "--tp is a train option" "$tmp/err"; then ok "plan --tp: refused as a train option (exit 2)"; else not_ok "plan --tp: refused as a train option" "rc=$rc $(cat "$tmp/err")"; fi
"$S" train gpt2-large --cluster hgx-a100-4gpu --max-pp 2 > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q -- "--max-pp is a plan option" "$tmp/err"; then ok "train --max-pp: refused as a plan option (exit 2)"; else not_ok "train --max-pp: refused as a plan option" "rc=$rc $(cat "$tmp/err")"; fi
"$S" train gpt2-large --cluster hgx-a100-4gpu --pp 2 --chunks 2 > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q -- "the schedule is 1f1b: use --schedule interleaved" "$tmp/err"; then ok "train --chunks without the interleaved schedule: usage error naming the fix"; else not_ok "train --chunks without interleaved" "rc=$rc $(cat "$tmp/err")"; fi
"$S" train gpt2-large --cluster hgx-a100-4gpu --chunks 2 --schedule interleaved --pp 2 --microbatches 4 --global-batch 8 --json > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 0 ] && jq -e '.config.chunks == 2' "$tmp/out" > /dev/null; then ok "train --chunks before --schedule interleaved: taken (order does not matter)"; else not_ok "train --chunks before --schedule interleaved" "rc=$rc $(cat "$tmp/err")"; fi
"$S" plan gpt2-large --cluster hgx-a100-4gpu --tp 0 > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q -- "--tp is a train option" "$tmp/err"; then ok "plan --tp 0: refused as a train option before its value is read"; else not_ok "plan --tp 0: refused as a train option" "rc=$rc $(cat "$tmp/err")"; fi
# Mixtral routes each token to 2 of 8 experts: the busiest expert gets at
# most every token, 8 / 2 = 4x the mean
"$S" train mixtral-8x7b --cluster dgx-h100 --ep 8 --moe-imbalance 4.5 > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "MoE load imbalance 4.5 is more than mixtral-8x7b can have: with 8 experts and top-2 routing .* 4 x the mean" "$tmp/err" && [ ! -s "$tmp/out" ]; then ok "train --moe-imbalance past experts / top-k is refused"; else not_ok "train --moe-imbalance past experts / top-k" "rc=$rc $(cat "$tmp/err")"; fi
"$S" train gpt2-large --cluster hgx-a100-4gpu --moe-imbalance 1.5 > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "dense" "$tmp/err"; then ok "train --moe-imbalance on a dense model: the option does not fit the workload (exit 1, as --ep)"; else not_ok "train --moe-imbalance on a dense model" "rc=$rc $(cat "$tmp/err")"; fi
"$S" train gpt2-large --cluster hgx-a100-4gpu --dtype fp8 > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "FP8" "$tmp/err"; then ok "train --dtype fp8 on A100: error naming the reason"; else not_ok "train --dtype fp8 on A100: error naming the reason" "rc=$rc"; fi
for args in "eval resnet50 --seq 512" "eval gpt2-large --kv 100" "eval gpt2-large --recompute" "show gpt2-large --no-optimizer" "accel resnet50 --arch eyeriss-like --attn flash" "show resnet50 --logits last"; do
    # shellcheck disable=SC2086
    "$S" $args > "$tmp/out" 2> "$tmp/err"; rc=$?
    if [ $rc = 2 ] && grep -q "applies to" "$tmp/err" && [ ! -s "$tmp/out" ]; then ok "$args: an option that does not apply is a usage error"; else not_ok "$args: inapplicable option" "rc=$rc $(cat "$tmp/err")"; fi
done
"$S" plan llama2-70b --cluster ib-a100 --gpus 1 --global-batch 8 --seq 2048 > "$tmp/out" 2> "$tmp/err"; rc=$?
# 70e9 parameters x 16 bytes (BF16 weights and grads, FP32 master and Adam) alone exceed 80 GiB
if [ $rc = 0 ] && grep -q "none of the [0-9]* configurations fits: the smallest needs" "$tmp/out"; then ok "plan: a model that never fits says so after the table"; else not_ok "plan: never-fits summary" "rc=$rc"; fi
# on one whole DGX A100: Llama-2-70B's 68.98e9 x 16 bytes over 8 GPUs (ZeRO-3)
# = 128.5 GiB of state per GPU: the advice is a larger cluster or LoRA
"$S" plan llama2-70b --cluster dgx-a100 --global-batch 8 --seq 4096 > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 0 ] && grep -q "optimizer states alone take 128.5 GiB" "$tmp/out" && grep -q "a --cluster with more GPUs" "$tmp/out" && grep -q "\-\-lora" "$tmp/out"; then
    ok "plan: never-fits names the state that does not shard further and the levers (cluster, LoRA)"
else not_ok "plan: never-fits names the state and the levers" "rc=$rc $(tail -3 "$tmp/out")"; fi
# with --lora already given, LoRA is no lever: on one A100 80GB the frozen
# base is 68,976,648,192 x 2 bytes (BF16) = 128.48 GiB, the rank-16 adapters
# 16 x (8192 + 8192 + 2 x 1024 [qkv] + 8192 + 8192 [o] + 2 x (8192 + 28672)
# [gate, up] + 28672 + 8192 [down]) = 2,326,528 a block x 80 = 186,122,240
# x 2 bytes = 0.35 GiB: 128.8 GiB of weights; more GPUs are what is left
"$S" plan llama2-70b --cluster ib-a100 --gpus 1 --global-batch 8 --seq 2048 --lora 16 > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 0 ] && grep -q "128.8 GiB of it the weights" "$tmp/out" && grep -q "a smaller --lora rank saves little" "$tmp/out" &&
    grep -q "GPUs to shard over (--gpus, up to this cluster's GPUs)" "$tmp/out" && ! grep -q "train adapters only" "$tmp/out"; then
    ok "plan --lora: never-fits names the frozen base weights and more GPUs, not LoRA again"
else not_ok "plan --lora: never-fits advice" "rc=$rc $(tail -4 "$tmp/out")"; fi
"$S" train gpt2-large --cluster ib-a100 --gpus 24 --pp 2 --global-batch 48 --seq 1024 > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "DP 12 = 12 GPUs, so stages straddle 8-GPU nodes" "$tmp/err"; then ok "train: 12-GPU stages on 8-GPU nodes are refused, naming the stage"; else not_ok "train: straddling stages" "rc=$rc $(cat "$tmp/err")"; fi
"$S" train gpt2-large --cluster hgx-a100-4gpu --trace "$tmp/nodir/t.json" > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && [ ! -e "$tmp/nodir/t.json" ]; then ok "train --trace into a missing folder: error, nothing written"; else not_ok "train --trace into a missing folder" "rc=$rc"; fi
# the model FLOPs behind MFU are counted per sequence: a global batch whose
# whole operator list passes 2^53 (80M x 4096 tokens x a 32000-word
# vocabulary: 1.0e16 logits) keeps its MFU (it was 0), which
# can only rise with more microbatches of the same work (the per-iteration
# costs, gradient all-reduce and optimizer step, spread over more tokens)
check "train: MFU of a global batch of 80M sequences is not 0, and not below the 8-microbatch run's" \
    sh -c "a=\$('$S' train llama2-7b --microbatches 8 --json | jq .mfu); b=\$('$S' train llama2-7b --microbatches 1000000 --global-batch 80000000 --json | jq .mfu); jq -n \"\$b >= \$a and \$b > 0\" | grep -q true"
"$S" train llama2-7b --microbatches 1000001 > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q "in \[1, 1000000\]" "$tmp/err"; then ok "train: more than 1M microbatches is a usage error (exit 2) naming the range"; else not_ok "train: more than 1M microbatches is a usage error" "rc=$rc $(cat "$tmp/err")"; fi
# an output path that is a link or a pipe is written through, not renamed
# over (as root, renaming over /dev/null would replace the device node)
: > "$tmp/real.json"; ln -s real.json "$tmp/link.json"
"$S" train gpt2-large --cluster hgx-a100-4gpu --trace "$tmp/link.json" > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 0 ] && [ -L "$tmp/link.json" ] && jq -e '.traceEvents | length > 0' "$tmp/real.json" > /dev/null; then ok "train --trace to a symlink: the file it points to is written, the link stays"
else not_ok "train --trace to a symlink: the file it points to is written, the link stays" "rc=$rc"; fi
mkfifo "$tmp/pipe"
timeout 60 cat "$tmp/pipe" > "$tmp/piped.json" & catpid=$!
timeout 60 "$S" train gpt2-large --cluster hgx-a100-4gpu --trace "$tmp/pipe" > /dev/null 2> "$tmp/err"; rc=$?
wait $catpid
if [ $rc = 0 ] && [ -p "$tmp/pipe" ] && jq -e '.traceEvents | length > 0' "$tmp/piped.json" > /dev/null; then ok "train --trace to a pipe: written through it, the pipe stays"
else not_ok "train --trace to a pipe: written through it, the pipe stays" "rc=$rc"; fi
"$S" train gpt2-large --cluster hgx-a100-4gpu --trace "" > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "empty output path" "$tmp/err"; then ok "train --trace '': an error naming the empty path"; else not_ok "train --trace '': an error naming the empty path" "rc=$rc"; fi
"$S" plan gpt2-large --cluster hgx-a100-4gpu --global-batch 8 --seq 1024 --threads 1 --top 1000 --json > "$tmp/p1.json" 2> "$tmp/err"
"$S" plan gpt2-large --cluster hgx-a100-4gpu --global-batch 8 --seq 1024 --threads 4 --top 1000 --json > "$tmp/p4.json" 2> "$tmp/err"
check "plan: identical output on 1 and 4 threads" cmp "$tmp/p1.json" "$tmp/p4.json"
check "plan --json: plans sorted by time, a non-empty Pareto set" \
    jq -e '(.plans | length) > 10 and ([.plans[] | select(.oom | not) | .iteration_s] as $t | $t == ($t | sort)) and (.pareto | length) >= 1' "$tmp/p1.json"
# published anchors (issue 5; README "Published anchors"): Megatron-LM's
# GPT-3 175B on 1,024 A100s of Selene, 140 TFLOP/s per GPU counting the
# recomputed forward (Narayanan et al. 2021, Sec. 5.1), and Llama 3 405B on
# 16,384 H100s, 400 TFLOP/s per GPU (Llama 3 paper, Table 4; Chu et al.,
# ISCA 2025)
"$S" train megatron-gpt3-175b --cluster selene-a100 --gpus 1024 --tp 8 --pp 16 --global-batch 1536 --seq 2048 \
    --recompute full --json > "$tmp/g3.json" 2> "$tmp/err"
check "train: Megatron-LM GPT-3 175B on 1,024 A100s within 15% of the published 140 TFLOP/s per GPU" \
    jq -e '(.hw_tflops_per_gpu / 140 - 1 | fabs) <= 0.15 and (.oom | not)' "$tmp/g3.json"
check "train: executed FLOPs = Megatron's 96 B s l h^2 (1 + s/6h + V/16lh) within 0.5%" \
    jq -e '(.breakdown.hw_flops / (96 * 1536 * 2048 * 96 * 12288 * 12288 * (1 + 2048 / (6 * 12288) + 51200 / (16 * 96 * 12288))) - 1 | fabs) < 0.005' "$tmp/g3.json"
"$S" train llama3.1-405b --cluster meta-roce-h100 --gpus 16384 --tp 8 --sp --pp 16 --schedule interleaved --chunks 8 \
    --zero 2 --global-batch 2048 --seq 8192 --flash --fused --json > "$tmp/l3.json" 2> "$tmp/err"
# the bar is 15%: strata is +5.5% (421.8) with the H100's tensor-core
# kernels at its measured sustained power limit, +14.8% (459.3) priced as
# isolated kernels (--isolated), since compiled mode runs the pointwise ops
# after a library GEMM (SwiGLU, rope) as kernels of their own, as Inductor
# does (+15.5% before)
jq -r '"# Llama 3 405B: \(.tflops_per_gpu * 10 | round / 10) TFLOP/s per GPU against 400 (bar 15%)"' "$tmp/l3.json"
check "train: Llama 3 405B on 16,384 H100s within 15% of the published 400 TFLOP/s per GPU, in 80 GB" \
    jq -e '(.tflops_per_gpu / 400 - 1 | fabs) <= 0.15 and (.oom | not)' "$tmp/l3.json"
"$S" train llama3.1-405b --cluster meta-roce-h100 --gpus 16384 --tp 8 --sp --pp 16 --schedule interleaved --chunks 8 \
    --zero 2 --global-batch 2048 --seq 8192 --flash --fused --isolated --json > "$tmp/l3i.json" 2> "$tmp/err"
check "train --isolated: the same step at boost clock, faster than at the power limit (the default)" \
    jq -e --slurpfile s "$tmp/l3.json" '.sustained == false and $s[0].sustained and .iteration_s < $s[0].iteration_s' "$tmp/l3i.json"
# a small host-bound step: the power limit never makes it faster (a slower
# GEMM once moved host wait between layers and the stages counted it apart)
"$S" train gpt2-large --cluster dgx-h100 --dp 4 --pp 2 --zero 2 --global-batch 8 --microbatches 1 --seq 1024 --dtype fp16 --json > "$tmp/sh1.json" 2> "$tmp/err"
"$S" train gpt2-large --cluster dgx-h100 --dp 4 --pp 2 --zero 2 --global-batch 8 --microbatches 1 --seq 1024 --dtype fp16 --isolated --json > "$tmp/sh0.json" 2> "$tmp/err"
check "train: a host-bound step at the power limit is no faster than at boost (--isolated)" \
    jq -e --slurpfile i "$tmp/sh0.json" '.sustained and .iteration_s >= $i[0].iteration_s' "$tmp/sh1.json"
# one GPU's train and eval --phase train price the same step, both at the
# power limit by default and both at boost with --isolated
for iso in "" --isolated; do
    # shellcheck disable=SC2086
    "$S" train gpt2-large --cluster dgx-h100 --gpus 1 --global-batch 8 --seq 1024 $iso --json > "$tmp/tg.json" 2> "$tmp/err"
    # shellcheck disable=SC2086
    "$S" eval gpt2-large --phase train --batch 8 --seq 1024 $iso --json > "$tmp/eg.json" 2> "$tmp/err"
    check "eval --phase train${iso:+ $iso} and train on one H100 agree within 0.5% (sustained: ${iso:-default})" \
        jq -e --slurpfile t "$tmp/tg.json" '.sustained == $t[0].sustained and ((.total_s / $t[0].iteration_s - 1) | fabs) < 0.005' "$tmp/eg.json"
done
"$S" train llama2-7b --cluster dgx-a100 --gpus 8 --dp 8 --seq 2048 --json > "$tmp/ta.json" 2> "$tmp/err"
check "train on A100s (no measured sustained figure): JSON sustained false, priced at boost" jq -e '.sustained == false' "$tmp/ta.json"
check "train: 126 layers on 16 x 8 model chunks: the two end chunks hold none, the rest one (Llama 3, Sec. 3.3.2)" \
    jq -e '.config.stage_layers_min == 0 and .config.stage_layers_max == 1' "$tmp/l3.json"
"$S" train llama3.1-405b --cluster meta-roce-h100 --gpus 16384 --tp 8 --sp --pp 16 --zero 2 --global-batch 2048 \
    --seq 8192 --flash > "$tmp/out" 2> "$tmp/err"
check "train: the text output names an uneven split (7-8 layers per stage)" grep -q "7-8 layers per stage, fewer at the ends" "$tmp/out"

# ---- edge devices (the brief's X2; src/gpu/edge.h) ---------------------------
# hand count: one 1x1 convolution, 64 -> 64 channels on a 56x56 map in FP32 on
# one Cortex-A76 core: 2 x 3136 x 64 x 64 FLOPs over the preset's 38.7 GFLOP/s
# times the fitted GEMM efficiency (the 8x8 register tile divides 3136 x 64
# evenly), plus the interpreter's 5 us; its 1.6 MB of operands fit the caches
# (2.25 MB), so no DRAM term. 20 output channels pad to 24 (tile fill 20/24).
eff=$(awk '$1 == "cpu_efficiency:" {print $2}' "$srcdir/calibration/edge.yaml")
for co in 64 20; do
    printf 'kind: cnn\nname: one conv\ninput: {channels: 64, height: 56, width: 56}\ndtype: fp32\nlayers:\n  - {op: conv, name: pw, out: %s, kernel: 1, stride: 1, pad: 0}\n' "$co" > "$tmp/pw$co.yaml"
    "$S" eval "$tmp/pw$co.yaml" --gpu mobile-cpu --json > "$tmp/pw$co.json" 2> "$tmp/err"
done
check "edge: a 1x1 convolution on the mobile CPU = FLOPs / (peak x efficiency) + 5 us, by hand" \
    jq -e --argjson e "$eff" '((.total_s / (2 * 3136 * 64 * 64 / (38.7e9 * $e) + 5e-6)) - 1 | fabs) < 1e-6 and .kernels == 1 and .edge_class == "mobile_cpu"' "$tmp/pw64.json"
check "edge: 20 output channels pad to the 8-wide register tile (24): time x 24/20, by hand" \
    jq -e --argjson e "$eff" '((.total_s / (2 * 3136 * 64 * 20 / (38.7e9 * $e * 20 / 24) + 5e-6)) - 1 | fabs) < 1e-6' "$tmp/pw20.json"
# the same convolution on the Adreno 640 in FP16 (its default there): 16
# four-channel slices x 3136 pixels = 50,176 work items in waves of 768
# lanes (898.6 GFLOP/s / 2 / 585 MHz), 66 waves; plus the fitted per-kernel
# cost, the host's first enqueue (20 us) and the closing round trip (20 us)
geff=$(awk '$1 == "gpu_efficiency:" {print $2}' "$srcdir/calibration/edge.yaml")
gk=$(awk '$1 == "gpu_kernel_us:" {print $2}' "$srcdir/calibration/edge.yaml")
"$S" eval "$tmp/pw64.yaml" --gpu mobile-gpu --json > "$tmp/pwg.json" 2> "$tmp/err"
check "edge: the convolution on the mobile GPU = 4-channel slices in whole waves, by hand; FP16 by default" \
    jq -e --argjson e "$geff" --argjson k "$gk" '((.total_s / (2 * 3136 * 64 * 64 / (1.7971e12 * $e * 50176 / (66 * 768)) + $k * 1e-6 + 40e-6)) - 1 | fabs) < 1e-6 and .dtype == "fp16"' "$tmp/pwg.json"
check "edge: the mobile CPU runs FP32 by default (TFLite's CPU float kernels)" jq -e '.dtype == "fp32"' "$tmp/pw64.json"
sed 's/^simd_bits: 128 /simd_bits: 100 /' "$srcdir/presets/edge/mobile-cpu.yaml" > "$tmp/badcpu.yaml"
"$S" eval mobilenet-v2 --gpu "$tmp/badcpu.yaml" > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "badcpu.yaml:[0-9]*:[0-9]*: simd_bits must be a whole number of 32-bit lanes" "$tmp/err"; then ok "edge: a broken edge preset given to eval reports its own FILE:LINE:COL"; else not_ok "edge: a broken edge preset given to eval" "rc=$rc $(cat "$tmp/err")"; fi
"$S" eval gpt2-small --gpu mobile-cpu --attn flash > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q "drop --attn flash" "$tmp/err"; then ok "edge: --attn flash on an edge preset is a usage error naming it"; else not_ok "edge: --attn flash on an edge preset" "rc=$rc $(cat "$tmp/err")"; fi
# MobileNetV2 as TFLite runs it: batch norms fold into the convolutions and
# ReLU6 fuses into them, so the operators are 52 convolutions (stem, 17
# blocks: 1 x 2 + 16 x 3, head), 10 residual adds, the pool and the classifier
"$S" eval mobilenet-v2 --gpu mobile-cpu --dtype fp32 --json > "$tmp/mv2.json" 2> "$tmp/err"
check "edge: MobileNetV2 on the mobile CPU runs 64 operators (52 conv + 10 add + pool + fc, by hand)" \
    jq -e '.kernels == 64 and .total_s > 0 and .lo_s < .total_s and .hi_s > .total_s' "$tmp/mv2.json"
"$S" eval mobilenet-v2 --gpu mobile-cpu --phase train > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q "edge device" "$tmp/err"; then ok "edge: --phase train on an edge preset is a usage error"; else not_ok "edge: --phase train on an edge preset" "rc=$rc $(cat "$tmp/err")"; fi
# the held-out reference rows (nn-Meter's TFLite 2.1 figures; the Adreno 630
# wholly held out, predicted from its preset): MAPE at the time of writing
# 10.5% (CPU), 16.8% (Adreno 640), 10.6% (Adreno 630), 12.3% over all 11;
# the guard is 20% on all of them and 25% per device
"$S" validate edge --json > "$tmp/edge.json" 2> "$tmp/err"
check "validate edge: held-out MAPE <= 20% over all rows and <= 25% per device; every fit row within 1%" \
    jq -e '.mape_held_out <= 20 and ([.held_out[] | .mape <= 25] | all) and ([.held_out[] | .preset] | index("mobile-gpu-adreno630") != null) and ([.edge[] | select(.role == "fit") | (.error_pct | fabs) < 1] | all)' "$tmp/edge.json"
# calibration/edge.yaml is what tools/calibrate-edge writes
"$S" calibrate --edge "$srcdir/calibration/edge-reference.csv" --quiet > "$tmp/edge.yaml" 2> "$tmp/err"
grep -v '^#' "$tmp/edge.yaml" > "$tmp/edge.new"; grep -v '^#' "$srcdir/calibration/edge.yaml" > "$tmp/edge.old"
if [ -s "$tmp/edge.new" ] && cmp -s "$tmp/edge.new" "$tmp/edge.old"; then
    ok "calibrate --edge regenerates calibration/edge.yaml's coefficients exactly"
else not_ok "calibrate --edge regenerates calibration/edge.yaml" "$(cat "$tmp/err")"; fi
# a fit that needs more than the peak (VGG-16 ten times faster than one
# A76 core can run it) is refused, nothing written; a CPU-only file refits
# the CPU and keeps the GPU's coefficients
printf 'model,workload,preset,dtype,latency_ms,role\nvgg16,vgg16,mobile-cpu,fp32,160,fit\nmobilenet_v2,mobilenet-v2,mobile-cpu,fp32,4,fit\n' > "$tmp/fast.csv"
"$S" calibrate --edge "$tmp/fast.csv" --out "$tmp/fast.yaml" --quiet > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "at the end of its range" "$tmp/err" && [ ! -e "$tmp/fast.yaml" ]; then ok "calibrate --edge: rows faster than the peak allows are refused, nothing written"; else not_ok "calibrate --edge: rows faster than the peak" "rc=$rc $(cat "$tmp/err")"; fi
grep -v 'mobile-gpu' "$srcdir/calibration/edge-reference.csv" > "$tmp/cpuonly.csv"
"$S" calibrate --edge "$tmp/cpuonly.csv" --quiet > "$tmp/cpuonly.yaml" 2> "$tmp/err"
if [ "$(grep '^gpu_' "$tmp/cpuonly.yaml")" = "$(grep '^gpu_' "$srcdir/calibration/edge.yaml")" ] && grep -q '^cpu_efficiency:' "$tmp/cpuonly.yaml"; then ok "calibrate --edge: a CPU-only file keeps the GPU's coefficients"; else not_ok "calibrate --edge: a CPU-only file" "$(cat "$tmp/err")"; fi
"$S" validate edge --data "$tmp/cpuonly.csv" --edge-coef "$tmp/cpuonly.yaml" --json > "$tmp/cpuonly.json" 2> "$tmp/err"
check "validate edge --edge-coef: a refitted table is the one validated" \
    jq -e --arg f "$tmp/cpuonly.yaml" '.coefficients == $f and .rows == 5' "$tmp/cpuonly.json"
printf '# a comment\nmodel,workload,preset,dtype,latency_ms,role\nvgg16,vgg16,mobile-cpu,fp32,-3,fit\n' > "$tmp/badref.csv"
"$S" validate edge --data "$tmp/badref.csv" > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "badref.csv:3:29:" "$tmp/err"; then ok "validate edge: a bad latency names FILE:LINE:COL"; else not_ok "validate edge: a bad latency names FILE:LINE:COL" "rc=$rc $(cat "$tmp/err")"; fi
"$S" calibrate --edge "$srcdir/calibration/edge-reference.csv" --neusight /tmp > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 2 ]; then ok "calibrate --edge with --neusight: usage error"; else not_ok "calibrate --edge with --neusight" "rc=$rc"; fi

# an eval sweep over edge presets: each point is what `strata eval` prints
printf 'evaluate: gpu\nobjectives: [latency, energy]\naxes:\n  gpu: [mobile-cpu, mobile-gpu]\nfixed:\n  workload: mobilenet-v2\n  dtype: fp32\n' > "$tmp/esw.yaml"
"$S" sweep "$tmp/esw.yaml" --out "$tmp/esw" --quiet > /dev/null 2> "$tmp/err"
"$S" eval mobilenet-v2 --gpu mobile-gpu --dtype fp32 --json > "$tmp/mg.json" 2>> "$tmp/err"
check "sweep: edge presets in an eval sweep give eval's own latencies" \
    jq -e -n --slurpfile p "$tmp/esw/points.json" --slurpfile a "$tmp/mv2.json" --slurpfile b "$tmp/mg.json" '[$p[0].points[] | .latency_s] == [$a[0].total_s, $b[0].total_s]'
printf 'evaluate: serve\naxes:\n  gpu: [mobile-cpu]\n' > "$tmp/esw2.yaml"
"$S" sweep "$tmp/esw2.yaml" > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "esw2.yaml:3:9: mobile-cpu is an edge preset: it runs in eval sweeps only" "$tmp/err"; then ok "sweep: an edge preset in a serve sweep is an error (FILE:LINE:COL)"; else not_ok "sweep: an edge preset in a serve sweep" "rc=$rc $(cat "$tmp/err")"; fi

# ---- accelerator layer (issue 4) ---------------------------------------------
# hand count: ResNet-50 conv1 is 64 x 3 x 7 x 7 x 112 x 112 = 118,013,952 MACs
check "map --layer resnet50:conv1: 118,013,952 MACs, a valid constrained mapping" \
    sh -c "'$S' map --arch eyeriss-like --layer resnet50:conv1 --json | jq -e '.macs == 118013952 and .meets_constraints and .utilization <= 1 and (.energy_breakdown | has(\"mac\"))'"
# torchvision lists ResNet-50 at 4.09 G multiply-adds
check "accel resnet50: 4.09 GMAC in total; layer energies add up to the total" \
    sh -c "'$S' accel resnet50 --arch eyeriss-like --threads 2 --json | jq -e '(.total.macs / 4.09e9 - 1 | fabs) < 0.01 and (([.layers[] | .energy_j * .repeat] | add) / .total.energy_j - 1 | fabs) < 1e-9'"
check "accel mobilenet-v2 on simba-like: components add up to each layer's energy" \
    sh -c "'$S' accel mobilenet-v2 --arch simba-like --json | jq -e '[.layers[] | ((.energy_breakdown | add) / .energy_j - 1 | fabs) < 1e-9] | all'"
check "map: same seed, same mapping on 1 and 2 threads" \
    sh -c "'$S' map --arch eyeriss-like --layer resnet50:conv2_x.conv2 --threads 1 --json > '$tmp/m1' && '$S' map --arch eyeriss-like --layer resnet50:conv2_x.conv2 --threads 2 --json > '$tmp/m2' && jq -e '.edp > 0 and .search.exhaustive == false' '$tmp/m1' > /dev/null && [ \"\$(jq -c '[.mapping, .edp]' '$tmp/m1')\" = \"\$(jq -c '[.mapping, .edp]' '$tmp/m2')\" ]"
"$S" map --layer resnet50:conv1 > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q -- "--arch" "$tmp/err"; then ok "map without --arch: usage error, exit 2"; else not_ok "map without --arch: usage error, exit 2" "rc=$rc"; fi
"$S" map --arch eyeriss-like --layer resnet50:conv99 > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "conv1" "$tmp/err"; then ok "map --layer with an unknown layer names the layers"; else not_ok "map --layer with an unknown layer names the layers" "rc=$rc $(cat "$tmp/err")"; fi
printf 'mapping:\n  - target: DRAM\n    type: temporal\n    factors: C3 Z4\n' > "$tmp/bad.map.yaml"
check "a bad Timeloop mapping: FILE:LINE:COL and exit 1" \
    sh -c "! '$S' map --arch eyeriss-like --layer resnet50:conv1 --mapping '$tmp/bad.map.yaml' 2> '$tmp/err' && grep -q 'bad.map.yaml:4:' '$tmp/err'"
printf 'mapping:\n  - target: nowhere\n    type: temporal\n    factors: C3\n' > "$tmp/bad2.map.yaml"
check "a mapping naming an unknown level lists the levels" \
    sh -c "! '$S' map --arch eyeriss-like --layer resnet50:conv1 --mapping '$tmp/bad2.map.yaml' 2> '$tmp/err' && grep -q 'psum_spad' '$tmp/err'"

TL="$SH/timeloop"
# map --objective delay breaks a tie in cycles by energy, and energy a tie
# in energy by cycles, each exactly (a tie-break folded into one double
# fell below its precision): the exhaustive search's delay pick has the
# least energy of the mappings at its cycles, so no more than any
# mapping's at those cycles, the EDP pick's among them
printf 'problem:\n  instance: {C: 4, M: 8, R: 3, S: 3, N: 1, P: 8, Q: 8}\n' > "$tmp/small.prob.yaml"
"$S" map --arch eyeriss-like --problem "$tmp/small.prob.yaml" --exhaustive --objective delay --json > "$tmp/md.json" 2> /dev/null; r1=$?
"$S" map --arch eyeriss-like --problem "$tmp/small.prob.yaml" --exhaustive --objective edp --json > "$tmp/me.json" 2> /dev/null; r2=$?
if [ $r1$r2 = 00 ] && jq -s -e '.[0].cycles <= .[1].cycles and (.[0].cycles < .[1].cycles or .[0].energy_j <= .[1].energy_j)' "$tmp/md.json" "$tmp/me.json" > /dev/null &&
   jq -s -e '.[0].cycles == .[1].cycles and .[0].energy_j <= .[1].energy_j' "$tmp/md.json" "$tmp/me.json" > /dev/null; then
    ok "map --objective delay: among the fastest mappings the least energy (ties broken exactly)"
else
    not_ok "map delay tie-break" "r=$r1$r2 $(jq -c '{cycles, energy_j}' "$tmp/md.json" "$tmp/me.json")"
fi
# a backing store given a depth holds its tensors whole (a 3x3 layer's
# inputs 64 x 58 x 58, weights 64 x 64 x 9 and outputs 64 x 56 x 56:
# 452,864 words, against DRAM depth 1 x 8 words); a level may not take the
# breakdown's own names
sed '0,/^    width_bits: 64 .*/s//    width_bits: 64\n    depth: 1/' "$srcdir/presets/accel/eyeriss-like.yaml" > "$tmp/dram1.yaml"
sed 's/name: psum_spad/name: noc/' "$srcdir/presets/accel/eyeriss-like.yaml" > "$tmp/noc.yaml"
printf 'problem:\n  instance: {C: 64, M: 64, R: 3, S: 3, N: 1, P: 56, Q: 56}\n' > "$tmp/dp.prob.yaml"
"$S" map --arch "$tmp/dram1.yaml" --problem "$tmp/dp.prob.yaml" > /dev/null 2> "$tmp/e1"; r1=$?
"$S" map --arch "$tmp/noc.yaml" --problem "$tmp/dp.prob.yaml" > /dev/null 2> "$tmp/e2"; r2=$?
if [ $r1 != 0 ] && grep -q "level DRAM, the backing store of .* holds 8 words but the tensors of .* need 452864" "$tmp/e1" &&
   [ $r2 != 0 ] && grep -q "noc.yaml:[0-9]*:[0-9]*: level name 'noc' is the energy breakdown's own entry" "$tmp/e2"; then
    ok "map: a backing store with a depth must hold its tensors; levels named mac or noc refused"
else
    not_ok "map: backing store depth / reserved names" "r=$r1$r2 $(cat "$tmp/e1" "$tmp/e2")"
fi
# Timeloop architectures: the MACs come last, below storage whose
# instances they divide; a range that is no range, a misspelt mesh key or
# constraint target, is an error at its place
if [ -d "$TL/reference-default_problem" ]; then
    A="$TL/eyeriss_like.arch.yaml"; F="$TL/reference-default_problem/parsed-processed-input.yaml"
    E="$TL/eyeriss_like.ERT.yaml"; P="$TL/problems/default_problem.prob.yaml"
    m=$(grep -n '!Component # MAC unit' "$A" | cut -d: -f1)
    { sed -n 1,17p "$A"; sed -n "$m,$((m + 6))p" "$A"; sed -n "18,$((m - 1))p" "$A"; } > "$tmp/tl1.yaml"
    sed 's/spatial: {meshX: 14}/spatial: {meshx: 14}/' "$A" > "$tmp/tl2.yaml"
    sed '0,/target: shared_glb/s/target: shared_glb/target: shared_gbl/' "$F" > "$tmp/tl3.yaml"
    sed 's/psum_spad\[1\.\.168\]/psum_spad[168..1]/' "$F" > "$tmp/tl4.yaml"
    sed 's/mac\[1\.\.168\]/mac[1..1]/' "$F" > "$tmp/tl5.yaml"
    out=
    for n in 1 2 3 4 5; do
        "$S" map --arch "$tmp/tl$n.yaml" --ert "$E" --problem "$P" > /dev/null 2> "$tmp/tle$n" && out="$out tl$n:accepted"
    done
    if [ -z "$out" ] && grep -q "tl1.yaml:[0-9]*:[0-9]*: component shared_glb comes after the compute component" "$tmp/tle1" &&
       grep -q "tl2.yaml:38:15: architecture: unknown key 'meshx'; did you mean 'meshX'" "$tmp/tle2" &&
       grep -q "tl3.yaml:[0-9]*:[0-9]*: constraint target 'shared_gbl' is no component or container of this architecture (did you mean 'shared_glb'?)" "$tmp/tle3" &&
       grep -q "tl4.yaml:146:19: 'psum_spad\[168..1\]': expected NAME\[LO..HI\]" "$tmp/tle4" &&
       grep -q "tl5.yaml:172:13: compute component mac has 1 instance, but the storage above it (psum_spad) has 168" "$tmp/tle5"; then
        ok "Timeloop architectures: the MACs last and dividing the storage above; ranges, mesh keys and targets checked at FILE:LINE:COL"
    else
        not_ok "Timeloop architecture checks" "$out $(cat "$tmp"/tle[1-5])"
    fi
else
    skip_test "Timeloop architecture checks" "no ../shared/data/timeloop"
fi
# YAML: a quoted number is a string ("3" is not 3) and -0 reads as 0;
# Timeloop problems: version 0.4 only, conv2D's seven dimensions each once;
# show names a Timeloop file for what it is; suite --shared of a file says
# it is no folder
printf 'problem:\n  instance: {C: "3", M: 8, R: 3, S: 3, N: 1, P: 8, Q: 8}\n' > "$tmp/q1.prob.yaml"
printf 'problem:\n  version: 9.9\n  instance: {C: 3, M: 8, R: 3, S: 3, N: 1, P: 8, Q: 8}\n' > "$tmp/q2.prob.yaml"
printf 'problem:\n  version: 0.4\n  shape:\n    dimensions: [C, M, R, S, N, P, C]\n  instance: {C: 3, M: 8, R: 3, S: 3, N: 1, P: 8, Q: 8}\n' > "$tmp/q3.prob.yaml"
printf 'problem:\n  version: "0.4"\n  instance: {C: 3, M: 8, R: 3, S: 3, N: 1, P: 8, Q: 8}\n' > "$tmp/q4.prob.yaml"
sed 's/^  energy_pj: 0.207692 .*/  energy_pj: -0.0/' "$srcdir/presets/accel/eyeriss-like.yaml" > "$tmp/neg0.yaml"
out=
for n in 1 2 3; do "$S" map --arch eyeriss-like --problem "$tmp/q$n.prob.yaml" > /dev/null 2> "$tmp/qe$n" && out="$out q$n:accepted"; done
"$S" map --arch eyeriss-like --problem "$tmp/q4.prob.yaml" > /dev/null || out="$out q4:refused"
"$S" map --arch "$tmp/neg0.yaml" --problem "$tmp/q4.prob.yaml" > "$tmp/neg0.txt" || out="$out neg0:refused"
printf 'architecture:\n  version: 0.4\n  nodes: []\n' > "$tmp/tlarch.yaml"
"$S" show "$tmp/tlarch.yaml" > /dev/null 2> "$tmp/qe5" && out="$out show:accepted"
"$S" suite --shared /etc/passwd > /dev/null 2> "$tmp/qe6" && out="$out suite:accepted"
if [ -z "$out" ] && grep -q "q1.prob.yaml:2:17: key 'C': expected a whole number in \[1, 2147483648\], found the quoted string '3'" "$tmp/qe1" &&
   grep -q "q2.prob.yaml:2:12: version 9.9: strata reads Timeloop's v0.4 format" "$tmp/qe2" &&
   grep -q "q3.prob.yaml:4:36: problem shape: dimension C is listed twice" "$tmp/qe3" &&
   ! grep -q -- "-0\.0" "$tmp/neg0.txt" && grep -q "a Timeloop architecture file, not a strata preset" "$tmp/qe5" &&
   grep -q -- "--shared /etc/passwd: Not a directory" "$tmp/qe6"; then
    ok "inputs: quoted numbers refused, -0 read as 0; Timeloop problem version and dimensions checked; show and suite --shared name what they got"
else
    not_ok "inputs: quoted numbers / -0 / Timeloop problem checks" "$out $(cat "$tmp"/qe[1-6]) $(grep -- '-0' "$tmp/neg0.txt" | head -3)"
fi
# Timeloop's own reference run (shared data): cycles exact, utilization,
# total energy and each component's fJ/MAC from timeloop-mapper.stats.txt
TL="$SH/timeloop"
if [ -d "$TL/reference-default_problem" ]; then
    ref="$TL/reference-default_problem"
    for arch in eyeriss-like "$TL/eyeriss_like.arch.yaml" "$ref/parsed-processed-input.yaml"; do
        label=$(basename "$arch")
        extra=
        [ "$label" = parsed-processed-input.yaml ] && extra="--ert $TL/eyeriss_like.ERT.yaml"
        "$S" map --arch "$arch" $extra --problem "$TL/problems/default_problem.prob.yaml" \
            --mapping "$ref/timeloop-mapper.map.yaml" --json > "$tmp/ref.json" 2> "$tmp/ref.err"
        check "Timeloop reference ($label): 86,016 cycles, 75% utilization, 59.28 uJ" \
            jq -e '.cycles == 86016 and (.utilization - 0.75 | fabs) < 1e-9 and (.energy_j / 59.28e-6 - 1 | fabs) < 0.001' "$tmp/ref.json"
        # fJ/Compute per component, as Timeloop prints it
        awk '/^fJ\/Compute/ {f=1; next} f && NF == 3 && $2 == "=" {print $1, $3}' "$ref/timeloop-mapper.stats.txt" > "$tmp/fj"
        bad=
        while read -r comp fj; do
            [ "$comp" = Total ] && continue
            ours=$(jq -r --arg c "$comp" '.energy_breakdown[$c] / .macs * 1e15' "$tmp/ref.json")
            awk -v a="$ours" -v b="$fj" 'BEGIN { d = a / b - 1; exit !(d < 0.03 && d > -0.03) }' || bad="$bad $comp($ours vs $fj)"
        done < "$tmp/fj"
        if [ -s "$tmp/fj" ] && [ -z "$bad" ]; then ok "Timeloop reference ($label): every component within 3%"
        else not_ok "Timeloop reference ($label): every component within 3%" "$bad" "$(cat "$tmp/ref.err")"; fi
    done
    check "Timeloop arch file: the mapper obeys its constraints on ResNet-50 Conv1" \
        sh -c "'$S' map --arch '$TL/eyeriss_like.arch.yaml' --problem '$TL/problems/resnet50_conv1.prob.yaml' --json | jq -e '.meets_constraints and .search.truncated == false'"
    check "preset and Timeloop arch agree on the Conv1 optimum" \
        sh -c "a=\$('$S' map --arch eyeriss-like --problem '$TL/problems/resnet50_conv1.prob.yaml' --json | jq .edp); b=\$('$S' map --arch '$TL/eyeriss_like.arch.yaml' --problem '$TL/problems/resnet50_conv1.prob.yaml' --json | jq .edp); [ -n \"\$a\" ] && [ \"\$a\" != null ] && [ \"\$a\" = \"\$b\" ]"
    # a mesh side of 0 (or one past an int) once divided by zero (SIGFPE):
    # now FILE:LINE:COL with the range
    mkdir -p "$tmp/mesh"
    sed 's/spatial: {meshX: 14}/spatial: {meshX: 0}/' "$TL/eyeriss_like.arch.yaml" > "$tmp/mesh/m.arch.yaml"
    cp "$TL/eyeriss_like.ERT.yaml" "$tmp/mesh/m.ERT.yaml"
    "$S" map --arch "$tmp/mesh/m.arch.yaml" --problem "$TL/problems/default_problem.prob.yaml" > "$tmp/out" 2> "$tmp/err"; rc=$?
    if [ $rc = 1 ] && grep -q "m.arch.yaml:38:22: key 'meshX': expected a whole number in \[1, 16777216\], found '0'" "$tmp/err"; then ok "Timeloop arch: meshX 0 is FILE:LINE:COL, not a crash"; else not_ok "Timeloop arch: meshX 0" "rc=$rc $(cat "$tmp/err")"; fi
    # nested meshes whose product passes 2^63 (32768 x 2^24 x 2^24): refused
    # at the inner mesh, not wrapped to 0 instances and divided by
    sed -e 's/spatial: {meshX: 14}/spatial: {meshX: 32768}/' -e 's/spatial: {meshY: 12}/spatial: {meshX: 16777216, meshY: 16777216}/' "$TL/eyeriss_like.arch.yaml" > "$tmp/mesh/big.arch.yaml"
    cp "$TL/eyeriss_like.ERT.yaml" "$tmp/mesh/big.ERT.yaml"
    "$S" map --arch "$tmp/mesh/big.arch.yaml" --problem "$TL/problems/default_problem.prob.yaml" > "$tmp/out" 2> "$tmp/err"; rc=$?
    if [ $rc = 1 ] && grep -q "big.arch.yaml:47:14: a 16777216 x 16777216 mesh of 32768 instances each" "$tmp/err"; then ok "Timeloop arch: nested meshes past 2^63 instances refused"; else not_ok "Timeloop arch: nested meshes" "rc=$rc $(cat "$tmp/err")"; fi
    # a mapping that reads but does not fit the problem names its file; a
    # dimension given twice is FILE:LINE:COL
    sed 's/factors: C1 M4 R1 S1 N1 P8 Q2$/factors: C1 M4 R1 S1 N1 P8 Q3/' "$ref/timeloop-mapper.map.yaml" > "$tmp/mesh/q3.map.yaml"
    "$S" map --arch eyeriss-like --problem "$TL/problems/default_problem.prob.yaml" --mapping "$tmp/mesh/q3.map.yaml" > "$tmp/out" 2> "$tmp/err"; rc=$?
    if [ $rc = 1 ] && grep -q "q3.map.yaml:77:14: the mapping: the factors of Q multiply to 168, the problem has Q=112" "$tmp/err"; then ok "map --mapping: a misfit mapping is FILE:LINE:COL (the first factors naming Q)"; else not_ok "map --mapping: misfit names its file" "rc=$rc $(cat "$tmp/err")"; fi
    # a level the mapping overfills is placed at that level's first entry
    sed -e 's/factors: C1 M1 R1 S1 N1 P1 Q14$/factors: C1 M1 R1 S1 N1 P1 Q28/' -e 's/factors: C1 M1 R1 S1 N1 P14 Q4$/factors: C1 M1 R1 S1 N1 P14 Q2/' "$ref/timeloop-mapper.map.yaml" > "$tmp/mesh/fan.map.yaml"
    "$S" map --arch eyeriss-like --problem "$TL/problems/default_problem.prob.yaml" --mapping "$tmp/mesh/fan.map.yaml" > "$tmp/out" 2> "$tmp/err"; rc=$?
    if [ $rc = 1 ] && grep -q "fan.map.yaml:31:5: the mapping: level inter_PE_column_spatial: spatial factors use 28 x 1 instances below it, the fan-out is 14 x 1" "$tmp/err"; then ok "map --mapping: a level's misfit is at that level's first entry"; else not_ok "map --mapping: level misfit position" "rc=$rc $(cat "$tmp/err")"; fi
    sed 's/factors: C1 M4 R1 S1 N1 P8 Q2$/factors: C1 M4 R1 S1 N1 P8 Q2 Q2/' "$ref/timeloop-mapper.map.yaml" > "$tmp/mesh/dup.map.yaml"
    "$S" map --arch eyeriss-like --problem "$TL/problems/default_problem.prob.yaml" --mapping "$tmp/mesh/dup.map.yaml" > "$tmp/out" 2> "$tmp/err"; rc=$?
    if [ $rc = 1 ] && grep -q "dup.map.yaml:90:14: key 'factors': Q is given twice" "$tmp/err"; then ok "map --mapping: a dimension given twice is FILE:LINE:COL"; else not_ok "map --mapping: duplicate factor" "rc=$rc $(cat "$tmp/err")"; fi
    # a component that lost its class, and two components of one name, are
    # errors at their node, not a level dropped or shadowed without a word
    sed '25d' "$TL/eyeriss_like.arch.yaml" > "$tmp/mesh/noclass.arch.yaml"
    sed 's/name: ifmap_spad$/name: weights_spad/' "$TL/eyeriss_like.arch.yaml" > "$tmp/mesh/dupname.arch.yaml"
    "$S" map --arch "$tmp/mesh/noclass.arch.yaml" --ert "$TL/eyeriss_like.ERT.yaml" --problem "$TL/problems/default_problem.prob.yaml" > "$tmp/out" 2> "$tmp/err"; rc=$?
    "$S" map --arch "$tmp/mesh/dupname.arch.yaml" --ert "$TL/eyeriss_like.ERT.yaml" --problem "$TL/problems/default_problem.prob.yaml" > "$tmp/out2" 2> "$tmp/err2"; rc2=$?
    if [ $rc = 1 ] && grep -q "noclass.arch.yaml:23:5: node shared_glb has storage attributes (depth) but no class" "$tmp/err" &&
       [ $rc2 = 1 ] && grep -q "dupname.arch.yaml:[0-9]*:[0-9]*: component name 'weights_spad' is given twice" "$tmp/err2"; then
        ok "Timeloop arch: a component without a class, and a name given twice, are FILE:LINE:COL"
    else not_ok "Timeloop arch: no class / duplicate name" "rc=$rc $(cat "$tmp/err") rc2=$rc2 $(cat "$tmp/err2")"; fi
    # an ERT that leaves a component without energies, or a clock that is
    # not one, is refused where it is wrong, not priced as free or ignored
    E="$TL/eyeriss_like.ERT.yaml"
    sed 's/system_top_level.DRAM\[1..1\]/system_top_level.XDRAM[1..1]/' "$E" > "$tmp/mesh/nodram.ERT.yaml"
    sed 's/name: compute/name: compte/' "$E" > "$tmp/mesh/nomac.ERT.yaml"
    sed '0,/name: read/s/name: read/name: reed/' "$E" > "$tmp/mesh/noread.ERT.yaml"
    sed 's/global_cycle_seconds: 1e-09/global_cycle_seconds: .nan/' "$E" > "$tmp/mesh/cyc.ERT.yaml"
    rcs=; errs=
    for f in nodram nomac noread cyc; do
        "$S" map --arch "$TL/eyeriss_like.arch.yaml" --ert "$tmp/mesh/$f.ERT.yaml" --layer resnet18:conv1 > "$tmp/out" 2> "$tmp/err.$f"; rcs="$rcs$?"
        [ -s "$tmp/out" ] && rcs="${rcs}out"
    done
    if [ "$rcs" = 1111 ] && grep -q "nodram.ERT.yaml:4:7: no table for the architecture's storage component 'DRAM'" "$tmp/err.nodram" &&
       grep -q "nomac.ERT.yaml:4:7: no energy for the MAC" "$tmp/err.nomac" &&
       grep -q "noread.ERT.yaml:4:15: table system_top_level.DRAM\[1..1\] has no 'read' action" "$tmp/err.noread" &&
       grep -q "cyc.ERT.yaml:8:39: key 'global_cycle_seconds': expected a number in \[1e-15, 1\], found '.nan'" "$tmp/err.cyc"; then
        ok "Timeloop ERT: a component without its energies, or a bad clock, is FILE:LINE:COL"
    else not_ok "Timeloop ERT: missing energies / bad clock" "$rcs $(cat "$tmp"/err.*)"; fi
    # constraint factors: 0 is no factor (refused where it is written); one
    # fixed above 1 that does not divide the problem (C=2 against conv1's 3
    # channels) leaves no mapping, said by the mapper; width 0
    sed 's/factors: \[N=1, C=1, P=1, R=1, S=1\]/factors: [N=1, C=0, P=1, R=1, S=1]/' "$TL/eyeriss_like.arch.yaml" > "$tmp/mesh/f0.arch.yaml"
    sed 's/factors: \[N=1, C=1, P=1, R=1, S=1\]/factors: [N=1, C=2, P=1, R=1, S=1]/' "$TL/eyeriss_like.arch.yaml" > "$tmp/mesh/f2.arch.yaml"
    sed 's/width: 64/width: 0/' "$TL/eyeriss_like.arch.yaml" > "$tmp/mesh/w0.arch.yaml"
    for f in f0 f2 w0; do
        "$S" map --arch "$tmp/mesh/$f.arch.yaml" --ert "$E" --layer resnet18:conv1 > /dev/null 2> "$tmp/err.$f"; eval "rc_$f=\$?"
    done
    if [ $rc_f0$rc_f2$rc_w0 = 111 ] && grep -q "f0.arch.yaml:42:24: constraint factors: C=0 is not a factor" "$tmp/err.f0" &&
       grep -q "fix C's factors (2 at inter_PE_column_spatial (X) = 2), which do not divide problem resnet18:conv1.conv's C = 3" "$tmp/err.f2" &&
       grep -q "w0.arch.yaml:15:14: key 'width': expected a whole number in \[1," "$tmp/err.w0"; then
        ok "Timeloop arch: a factor of 0 and width 0 are FILE:LINE:COL; a fixed factor not dividing the problem is said"
    else not_ok "Timeloop arch: constraint factors / width" "$rc_f0$rc_f2$rc_w0 $(cat "$tmp/err.f0" "$tmp/err.f2" "$tmp/err.w0")"; fi
    # constraint factors fixed above 1 are held to: Eyeriss's row-stationary
    # R=3 in the weight scratchpad and S=3 across a PE column (split 0: Y);
    # the mapper's best mapping has exactly those, and a split past the
    # fan-out (S=3 x C=8 = 24 PEs on a 12-PE column) is refused where written
    sed -e 's/factors: \[N=1, M=1, P=1, Q=1, S=1\]/factors: [N=1, M=1, P=1, Q=1, S=1, R=3]/' \
        -e 's/factors: \[N=1, P=1, Q=1, R=1\]/factors: [N=1, P=1, Q=1, R=1, S=3]/' "$TL/eyeriss_like.arch.yaml" > "$tmp/mesh/rs.arch.yaml"
    sed 's/factors: \[N=1, P=1, Q=1, R=1\]/factors: [N=1, P=1, Q=1, R=1, S=3, C=8]/' "$TL/eyeriss_like.arch.yaml" > "$tmp/mesh/y24.arch.yaml"
    "$S" map --arch "$tmp/mesh/rs.arch.yaml" --ert "$E" --problem "$TL/problems/resnet50_res2_3x3.prob.yaml" --json 2> /dev/null |
        jq -c '[(.mapping[] | select(.target == "weights_spad") | .temporal), (.mapping[] | select(.target == "inter_PE_spatial") | .spatial_y), .meets_constraints]' > "$tmp/rs.json"
    "$S" map --arch "$tmp/mesh/y24.arch.yaml" --ert "$E" --layer resnet18:conv1 > "$tmp/out" 2> "$tmp/err.y24"; rc=$?
    if jq -e '(.[0] | test(" R3 ")) and (.[1] | test("S3")) and .[2] == true' "$tmp/rs.json" > /dev/null &&
       [ $rc = 1 ] && [ ! -s "$tmp/out" ] &&
       grep -q "y24.arch.yaml:52:18: constraint factors at inter_PE_spatial split 24 ways along Y, but its fan-out has 12" "$tmp/err.y24"; then
        ok "Timeloop constraints: factors fixed above 1 are held to (R3 in weights_spad, S3 across the column)"
    else not_ok "Timeloop constraints: factors fixed above 1" "rc=$rc $(cat "$tmp/rs.json" "$tmp/err.y24")"; fi
    # a mapping file against a fixed factor it breaks: psum_spad fixed at
    # M=4 where Timeloop's reference mapping runs M8 there; the search under
    # that constraint restarts to the same optimum as enumerating it all
    sed 's/factors: \[N=1, C=1, R=1, S=1, P=1, Q=1\]/factors: [N=1, C=1, R=1, S=1, P=1, Q=1, M=4]/' "$TL/eyeriss_like.arch.yaml" > "$tmp/mesh/m4.arch.yaml"
    "$S" map --arch "$tmp/mesh/m4.arch.yaml" --ert "$E" --problem "$TL/problems/default_problem.prob.yaml" \
        --mapping "$ref/timeloop-mapper.map.yaml" > "$tmp/out.m4" 2> /dev/null; rc=$?
    a=$("$S" map --arch "$tmp/mesh/m4.arch.yaml" --ert "$E" --problem "$TL/problems/default_problem.prob.yaml" --json 2> /dev/null | jq '.edp')
    b=$("$S" map --arch "$tmp/mesh/m4.arch.yaml" --ert "$E" --problem "$TL/problems/default_problem.prob.yaml" --exhaustive --json 2> /dev/null | jq '.edp')
    if [ $rc = 0 ] && grep -q "level psum_spad: constraint: the temporal factor of M must be 4 (found 8)" "$tmp/out.m4" &&
       [ -n "$a" ] && [ "$a" = "$b" ]; then
        ok "Timeloop constraints: a mapping breaking a fixed factor is named; search = enumeration under it"
    else not_ok "Timeloop constraints: fixed factor vs mapping file / exhaustive" "rc=$rc a=$a b=$b $(cat "$tmp/out.m4" | tail -3)"; fi
    # the backing store obeys its constraints too (DRAM M=4: the free primes
    # of M went there before); three levels at M=2^24 overflowed the product
    # (SIGFPE); a level whose dims are all fixed still has its loop order
    # searched (exhaustive 605 against 201 with the order given); a fixed
    # factor on the MAC, and R=3C=3, are refused where written
    sed '0,/      datawidth: 8/s//      datawidth: 8\n    constraints:\n      temporal: {factors: [M=4]}/' "$TL/eyeriss_like.arch.yaml" > "$tmp/mesh/dram.arch.yaml"
    sed -e '0,/      datawidth: 8/s//      datawidth: 8\n    constraints:\n      temporal: {factors: [M=16777216]}/' \
        -e 's/bypass: \[Weights\]}/bypass: [Weights]}\n      temporal: {factors: [M=16777216]}/' \
        -e 's/factors: \[N=1, C=1, R=1, S=1, P=1, Q=1\]/factors: [N=1, C=1, R=1, S=1, P=1, Q=1, M=16777216]/' "$TL/eyeriss_like.arch.yaml" > "$tmp/mesh/ovf.arch.yaml"
    sed 's/bypass: \[Weights\]}/bypass: [Weights]}\n      temporal: {factors: [N=1, C=1, R=1, S=1, Q=1, P=14, M=2]}/' "$TL/eyeriss_like.arch.yaml" > "$tmp/mesh/p0.arch.yaml"
    sed 's/bypass: \[Weights\]}/bypass: [Weights]}\n      temporal: {permutation: [P, M], factors: [N=1, C=1, R=1, S=1, Q=1, P=14, M=2]}/' "$TL/eyeriss_like.arch.yaml" > "$tmp/mesh/p1.arch.yaml"
    sed 's/      adder_width: 16/      adder_width: 16\n    constraints:\n      temporal: {factors: [M=4]}/' "$TL/eyeriss_like.arch.yaml" > "$tmp/mesh/mac.arch.yaml"
    sed 's/factors: \[N=1, M=1, P=1, Q=1, S=1\]/factors: [N=1, M=1, P=1, Q=1, S=1, R=3C=3]/' "$TL/eyeriss_like.arch.yaml" > "$tmp/mesh/rc.arch.yaml"
    d=$("$S" map --arch "$tmp/mesh/dram.arch.yaml" --ert "$E" --problem "$TL/problems/vit_fc1_gemm.prob.yaml" --json 2> /dev/null |
        jq -c '[(.mapping[] | select(.target == "DRAM") | .temporal | test(" M4 ")), .meets_constraints]')
    "$S" map --arch "$tmp/mesh/ovf.arch.yaml" --ert "$E" --problem "$TL/problems/default_problem.prob.yaml" > /dev/null 2> "$tmp/err.ovf"; r1=$?
    p0=$("$S" map --arch "$tmp/mesh/p0.arch.yaml" --ert "$E" --problem "$TL/problems/default_problem.prob.yaml" --exhaustive --json 2> /dev/null | jq '.edp')
    p1=$("$S" map --arch "$tmp/mesh/p1.arch.yaml" --ert "$E" --problem "$TL/problems/default_problem.prob.yaml" --exhaustive --json 2> /dev/null | jq '.edp')
    "$S" map --arch "$tmp/mesh/mac.arch.yaml" --ert "$E" --problem "$TL/problems/default_problem.prob.yaml" > /dev/null 2> "$tmp/err.mac"; r2=$?
    "$S" map --arch "$tmp/mesh/rc.arch.yaml" --ert "$E" --problem "$TL/problems/default_problem.prob.yaml" > /dev/null 2> "$tmp/err.rc"; r3=$?
    if [ "$d" = "[true,true]" ] && [ $r1 = 1 ] && grep -q "16777216 at psum_spad = 4.72236648286964" "$tmp/err.ovf" &&
       [ -n "$p0" ] && awk -v a="$p0" -v b="$p1" 'BEGIN { exit !(a <= b) }' &&
       [ $r2 = 1 ] && grep -q "mac.arch.yaml:109:27: constraint factors for 'mac', which is not a storage level" "$tmp/err.mac" &&
       [ $r3 = 1 ] && grep -q "rc.arch.yaml:84:46: constraint factors: R=3C=3 is not a whole number" "$tmp/err.rc"; then
        ok "Timeloop constraints: DRAM's held to, no overflow, orders searched, misplaced or malformed factors refused"
    else not_ok "Timeloop constraints: DRAM / overflow / order / misplaced" "d=$d r=$r1$r2$r3 p0=$p0 p1=$p1 $(cat "$tmp/err.ovf" "$tmp/err.mac" "$tmp/err.rc")"; fi
    # --mapping evaluates a given mapping: a search option beside it is a
    # usage error; a sweep takes a Timeloop architecture as strata accel does
    "$S" map --arch eyeriss-like --problem "$TL/problems/default_problem.prob.yaml" --mapping "$ref/timeloop-mapper.map.yaml" --evals 5000 > /dev/null 2> "$tmp/err"; rc=$?
    printf 'sweep: tl\nevaluate: accel\nfixed: {workload: resnet18, mapper_evals: 1000, arch: %s}\naxes:\n  pe_x: [7, 14]\n' "$TL/eyeriss_like.arch.yaml" > "$tmp/mesh/tl.yaml"
    "$S" sweep "$tmp/mesh/tl.yaml" --quiet > "$tmp/out2" 2> "$tmp/err2"; rc2=$?
    if [ $rc = 2 ] && grep -q -- "--evals steers the mapping search, and --mapping evaluates the file's mapping" "$tmp/err" &&
       [ $rc2 = 0 ] && grep -q "2 points, 2 valid" "$tmp/out2"; then
        ok "map --mapping refuses search options; sweep evaluate: accel takes a Timeloop arch file"
    else not_ok "map --mapping with --evals / sweep over a Timeloop arch" "rc=$rc $rc2 $(cat "$tmp/err" "$tmp/err2")"; fi
    # mac.count_per_pe: a PE runs that many MACs a cycle. The reference
    # mapping computes for 86,016 cycles on one MAC a PE (Timeloop's stats):
    # 21,504 on four
    sed 's/^  adder_bits: 16 /  adder_bits: 16\n  count_per_pe: 4 /' "$srcdir/presets/accel/eyeriss-like.yaml" > "$tmp/mesh/c4.yaml"
    "$S" map --arch "$tmp/mesh/c4.yaml" --problem "$TL/problems/default_problem.prob.yaml" --mapping "$ref/timeloop-mapper.map.yaml" --json > "$tmp/c4.json"; rc=$?
    if [ $rc = 0 ] && grep -q "count_per_pe: 4" "$tmp/mesh/c4.yaml" && jq -e '.compute_cycles == 21504 and .cycles >= 21504' "$tmp/c4.json" > /dev/null; then
        ok "accel preset: mac.count_per_pe 4 quarters the compute cycles (86,016 -> 21,504)"
    else not_ok "accel preset: count_per_pe" "rc=$rc $(head -c 300 "$tmp/c4.json")"; fi
else
    for t in "Timeloop reference: cycles, utilization, energy" "Timeloop reference: components" \
             "Timeloop arch file: constraints" "preset and Timeloop arch agree" "Timeloop arch: meshX 0" \
             "map --mapping: misfit names its file" "map --mapping: duplicate factor" "Timeloop arch: nested meshes" \
             "Timeloop arch: no class / duplicate name" "Timeloop ERT: missing energies / bad clock" \
             "Timeloop arch: constraint factors / width" "map --mapping with --evals / sweep over a Timeloop arch" \
             "accel preset: count_per_pe" "map --mapping: level misfit position"; do
        skip_test "$t" "../shared/data is absent"
    done
fi

# serve: the JSON keys issue #7 names; a bad trace names FILE:LINE:COL and
# leaves no per-request file behind; the per-request CSV has a row a request
"$S" serve llama3.1-8b --gpu h100-sxm --qps 4 --requests 50 --lengths uniform:100-400,20-60 \
    --per-request "$tmp/req.csv" --trace-out "$tmp/trace.json" --json > "$tmp/serve.json" 2> "$tmp/err"
check "serve --json has ttft_s/tpot_s/latency_s {mean,p50,p90,p99}, throughput, preemptions, kv_blocks" \
    jq -e '([.ttft_s, .tpot_s, .latency_s] | all(.mean > 0 and .p50 > 0 and .p90 >= .p50 and .p99 >= .p90))
           and (.throughput_tok_s > 0) and (.preemptions >= 0) and (.kv_blocks > 0)' "$tmp/serve.json"
check "serve: latency = TTFT + (out - 1) x TPOT for every request (per-request CSV)" \
    sh -c "[ \$(wc -l < '$tmp/req.csv') = 51 ] && awk -F, 'NR > 1 { d = \$10 + (\$5 - 1) * \$11 - \$12; if (d > 1e-4 * \$12 || d < -1e-4 * \$12) bad = 1 } END { exit bad }' '$tmp/req.csv'"
check "serve --trace-out writes a Chrome trace" jq -e '.traceEvents | length > 0 and all(.ph == "X" or .ph == "b" or .ph == "e" or .ph == "M") and any(.ph == "X")' "$tmp/trace.json"
printf '{"input_toks": 10, "output_toks": 5, "arrival_time": 0}\n{"input_toks": 12, "output_toks": oops, "arrival_time": 1}\n' > "$tmp/bad.jsonl"
"$S" serve llama3.1-8b --trace "$tmp/bad.jsonl" --per-request "$tmp/bad.csv" > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "bad.jsonl:2:35" "$tmp/err" && [ ! -e "$tmp/bad.csv" ]; then ok "serve: a bad trace line is FILE:LINE:COL, exit 1, nothing written"
else not_ok "serve: a bad trace line is FILE:LINE:COL, exit 1, nothing written" "rc=$rc" "$(cat "$tmp/err")"; fi
"$S" serve llama3.1-8b --gpu h100-sxm --qps 2 --requests 10 --lengths bogus > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q "^strata serve: bad --lengths 'bogus'" "$tmp/err" && [ ! -s "$tmp/out" ]; then ok "serve --lengths bogus: a usage error (exit 2) with the forms"; else not_ok "serve --lengths bogus: a usage error (exit 2)" "rc=$rc $(cat "$tmp/err")"; fi
"$S" serve llama3.1-8b --gpu h100-sxm --qps 2 --requests 10 --lengths fixed:100,100 --runtime-reserve 1TiB > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "runtime-reserve .* alone fills" "$tmp/err" && ! grep -q "weights" "$tmp/err"; then ok "serve --runtime-reserve 1TiB: the reserve is blamed, not the weights"; else not_ok "serve --runtime-reserve 1TiB: the reserve is blamed" "rc=$rc $(cat "$tmp/err")"; fi
"$S" serve llama3.1-8b --gpu h100-sxm --qps 2 --requests 10000001 --lengths fixed:10,10 > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q "10000000" "$tmp/err" && [ ! -s "$tmp/out" ]; then ok "serve --requests above 10M: refused up front (exit 2), not gigabytes later"; else not_ok "serve --requests above 10M" "rc=$rc $(cat "$tmp/err")"; fi
sed 's/^\( *requests:\).*/\1 20000000/' "$srcdir/workloads/sweeps/serve-qps.yaml" > "$tmp/sweep-big.yaml"
"$S" sweep "$tmp/sweep-big.yaml" > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc != 0 ] && grep -q "sweep-big.yaml:10:13: requests: 20000000 is out of range" "$tmp/err" && [ ! -s "$tmp/out" ]; then ok "sweep: requests above 10M refused at file:line:col, as serve refuses them"; else not_ok "sweep: requests above 10M" "rc=$rc $(cat "$tmp/err")"; fi
"$S" serve llama3.1-8b --sched vlm --qps 1 --requests 5 --lengths fixed:10,10 > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q "sched 'vlm': choose vllm" "$tmp/err"; then ok "serve: an unknown scheduler is a usage error naming the choices"; else not_ok "serve: an unknown scheduler is a usage error naming the choices" "rc=$rc"; fi
"$S" serve llama3.1-8b --qps 1 > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q -- "--lengths" "$tmp/err"; then ok "serve: a missing workload is a usage error"; else not_ok "serve: a missing workload is a usage error" "rc=$rc"; fi
"$S" serve llama3-70b --gpu rtx-4090 --qps 1 --requests 5 --lengths fixed:10,10 > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "does not fit" "$tmp/err"; then ok "serve: a model larger than the GPU says so"; else not_ok "serve: a model larger than the GPU says so" "rc=$rc" "$(cat "$tmp/err")"; fi
# the schedulers' defining behaviour at one offered load: static batching
# waits for whole batches, so its mean TTFT exceeds continuous batching's
for sc in vllm vllm-v0 sarathi orca static; do
    "$S" serve llama3.1-8b --gpu h100-sxm --sched $sc --qps 8 --requests 200 --lengths uniform:100-1500,50-400 --json > "$tmp/s-$sc.json" 2> "$tmp/err" || echo "$sc: $(cat "$tmp/err")" >> "$tmp/sched.err"
done
check "serve: every scheduler runs" sh -c "[ ! -s '$tmp/sched.err' ] || { cat '$tmp/sched.err'; false; }"
check "serve: static batching has a longer mean TTFT than continuous batching" \
    sh -c "a=\$(jq .ttft_s.mean '$tmp/s-static.json'); b=\$(jq .ttft_s.mean '$tmp/s-vllm.json'); jq -n \"\$a > \$b\" | grep -q true"
check "serve: MoE with --dp 2 --ep runs in lockstep on a node preset" \
    sh -c "'$S' serve qwen3-30b-a3b --gpu rtx-pro-6000 --dp 2 --ep --qps 4 --requests 40 --lengths uniform:100-400,20-60 --json | jq -e '.gpus == 2 and .ep == 2'"
check "serve: speculative decoding reports tokens per step near the closed form" \
    sh -c "'$S' serve llama3.1-8b --qps 2 --requests 100 --lengths fixed:200,400 --spec-k 4 --spec-accept 0.8 --json | jq -e '((.spec_tokens_per_step - .spec_expected_tokens_per_step) | fabs) < 0.05 * .spec_expected_tokens_per_step'"

# validate vllm against the real vLLM run (skips without ../shared/data):
# TPOT and latency means within 10%, TTFT mean within 25% (issue #7's bars)
if [ -d "$SH/vllm" ]; then
    "$S" validate vllm --data "$SH/vllm" --json > "$tmp/vllm.json" 2> "$tmp/err"
    check "validate vllm: every run with timestamps within the bars" \
        jq -e '[.runs[] | select(.ttft.measured_mean)] | length > 0 and all(.within_bars)' "$tmp/vllm.json"
    # a run whose requests.jsonl is not JSON is an error at its line and column
    mkdir -p "$tmp/badvllm/RTXPRO6000_Llama-3.1-8B"
    cp "$SH/vllm/RTXPRO6000_Llama-3.1-8B/meta.json" "$tmp/badvllm/RTXPRO6000_Llama-3.1-8B/"
    head -n 3 "$SH/vllm/RTXPRO6000_Llama-3.1-8B/requests.jsonl" > "$tmp/badvllm/RTXPRO6000_Llama-3.1-8B/requests.jsonl"
    head -n 1 "$SH/vllm/RTXPRO6000_Llama-3.1-8B/requests.jsonl" | sed 's/}[[:space:]]*$/,}/' >> "$tmp/badvllm/RTXPRO6000_Llama-3.1-8B/requests.jsonl"
    "$S" validate vllm --data "$tmp/badvllm" > /dev/null 2> "$tmp/err"; rc=$?
    # the trace's own location, not wrapped in meta.json's engine_kwargs
    if [ $rc = 1 ] && grep -q "^$tmp/badvllm/RTXPRO6000_Llama-3.1-8B/requests.jsonl:4:[0-9]*: expected a key" "$tmp/err" && ! grep -q "engine_kwargs" "$tmp/err"; then ok "validate vllm: a malformed requests.jsonl line is FILE:LINE:COL"
    else not_ok "validate vllm: a malformed requests.jsonl line is FILE:LINE:COL" "rc=$rc" "$(cat "$tmp/err")"; fi
    # timestamps that run backwards are an error at the line, and a failed
    # replay prints nothing on stdout (not half a report)
    head -n 3 "$SH/vllm/RTXPRO6000_Llama-3.1-8B/requests.jsonl" > "$tmp/badvllm/RTXPRO6000_Llama-3.1-8B/requests.jsonl"
    head -n 1 "$SH/vllm/RTXPRO6000_Llama-3.1-8B/requests.jsonl" | sed 's/"first_token_ts": [0-9.e+]*/"first_token_ts": 1.0/' >> "$tmp/badvllm/RTXPRO6000_Llama-3.1-8B/requests.jsonl"
    "$S" validate vllm --data "$tmp/badvllm" --json > "$tmp/out" 2> "$tmp/err"; rc=$?
    if [ $rc = 1 ] && grep -q "B/requests.jsonl:4:1: first_token_ts is before queued_ts" "$tmp/err" && [ ! -s "$tmp/out" ]; then ok "validate vllm: a first token before its queueing is FILE:LINE:COL, nothing on stdout"
    else not_ok "validate vllm: a first token before its queueing" "rc=$rc" "$(cat "$tmp/err")" "$(head -c 200 "$tmp/out")"; fi
    # one line without a timestamp among lines that have them is a broken
    # log, not a run to predict only
    head -n 3 "$SH/vllm/RTXPRO6000_Llama-3.1-8B/requests.jsonl" > "$tmp/badvllm/RTXPRO6000_Llama-3.1-8B/requests.jsonl"
    head -n 1 "$SH/vllm/RTXPRO6000_Llama-3.1-8B/requests.jsonl" | sed 's/"first_token_ts": [0-9.e+]*, //' >> "$tmp/badvllm/RTXPRO6000_Llama-3.1-8B/requests.jsonl"
    "$S" validate vllm --data "$tmp/badvllm" > "$tmp/out" 2> "$tmp/err"; rc=$?
    if [ $rc = 1 ] && grep -q "B/requests.jsonl:4:1: no first_token_ts, while other lines have the engine's timestamps" "$tmp/err" && [ ! -s "$tmp/out" ]; then ok "validate vllm: one line without timestamps among timed ones is FILE:LINE:COL"
    else not_ok "validate vllm: one line without timestamps among timed ones" "rc=$rc" "$(cat "$tmp/err")" "$(head -c 200 "$tmp/out")"; fi
    # meta.json settings strata cannot take are refused at their place in it
    head -n 3 "$SH/vllm/RTXPRO6000_Llama-3.1-8B/requests.jsonl" > "$tmp/badvllm/RTXPRO6000_Llama-3.1-8B/requests.jsonl"
    mbad=""
    for mod in 's/"tensor_parallel_size": 1/"tensor_parallel_size": 3/=meta.json:5:20: engine_kwargs: --tp 3 does not divide' \
               's/"bfloat16"/"float64"/=meta.json:13:14: engine_kwargs.dtype .float64. is not modelled' \
               's/"kv_cache_dtype": "auto"/"kv_cache_dtype": "int3"/=meta.json:14:23: engine_kwargs.kv_cache_dtype .int3. is not modelled' \
               's/"schema_version": 1/"schema_version": 99/=meta.json:2:21: schema_version 99' \
               's|"model": "meta-llama/Llama-3.1-8B",|"model": "foo/bar",|=meta.json:3:12: model: no workload preset matches'; do
        sed "${mod%%=*}" "$SH/vllm/RTXPRO6000_Llama-3.1-8B/meta.json" > "$tmp/badvllm/RTXPRO6000_Llama-3.1-8B/meta.json"
        "$S" validate vllm --data "$tmp/badvllm" > "$tmp/out" 2> "$tmp/err"; rc=$?
        { [ $rc = 1 ] && grep -q "B/${mod#*=}" "$tmp/err" && [ ! -s "$tmp/out" ]; } || mbad="$mbad [${mod#*=}: rc=$rc $(cat "$tmp/err")]"
    done
    cp "$SH/vllm/RTXPRO6000_Llama-3.1-8B/meta.json" "$tmp/badvllm/RTXPRO6000_Llama-3.1-8B/"
    if [ -z "$mbad" ]; then ok "validate vllm: unmodelled meta.json settings refused at FILE:LINE:COL"; else not_ok "validate vllm: meta.json settings" "$mbad"; fi
    "$S" validate vllm --coef "$tmp/no-such-coef.yaml" > "$tmp/out" 2> "$tmp/err"; rc=$?
    if [ $rc = 1 ] && [ ! -s "$tmp/out" ] && ! grep -q ": :" "$tmp/err"; then ok "validate vllm: a missing --coef fails with nothing on stdout"
    else not_ok "validate vllm: a missing --coef fails with nothing on stdout" "rc=$rc" "$(cat "$tmp/err")" "$(head -c 200 "$tmp/out")"; fi
    jq -r '.runs[] | select(.ttft.measured_mean) | "# vllm \(.run): TTFT \(.ttft.error_mean_pct | floor)%, TPOT \(.tpot.error_mean_pct | floor)%, latency \(.latency.error_mean_pct | floor)%"' "$tmp/vllm.json"
    if [ -d "$SH/vllm/inputs-only/RTX4090_Llama-3.1-8B" ]; then
        check "validate vllm: the RTX 4090's KV block count within 5% of vLLM's log" \
            sh -c "'$S' validate vllm --data '$SH/vllm/inputs-only' --json | jq -e '.runs[] | select(.kv_blocks_logged) | ((.kv_blocks - .kv_blocks_logged) | fabs) < 0.05 * .kv_blocks_logged'"
    else
        skip_test "validate vllm: the RTX 4090's KV block count" "no inputs-only data"
    fi
else
    skip_test "validate vllm: every run with timestamps within the bars" "../shared/data is absent"
    skip_test "validate vllm: the RTX 4090's KV block count" "../shared/data is absent"
    skip_test "validate vllm: a malformed requests.jsonl line is FILE:LINE:COL" "../shared/data is absent"
    skip_test "validate vllm: a first token before its queueing" "../shared/data is absent"
    skip_test "validate vllm: a missing --coef fails with nothing on stdout" "../shared/data is absent"
fi

# serve --trim: a request past the context is an error, or cut to it (the
# output kept, the prompt shortened); 4000 + 200 on gpt2-small's 1,024
printf '{"input_toks": 100, "output_toks": 20, "arrival_time": 0}\n{"input_toks": 4000, "output_toks": 200, "arrival_time": 0.5}\n' > "$tmp/long.jsonl"
"$S" serve gpt2-small --gpu h100-sxm --trace "$tmp/long.jsonl" > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "request 1 (line 2 of the trace) has 4000 + 200 tokens, beyond gpt2-small's max_model_len 1024" "$tmp/err"; then ok "serve: a request past the context is an error without --trim, naming its trace line"; else not_ok "serve: a request past the context is an error without --trim" "rc=$rc $(cat "$tmp/err")"; fi
"$S" serve gpt2-small --gpu h100-sxm --trace "$tmp/long.jsonl" --trim --per-request "$tmp/long.csv" --json > "$tmp/trim.json" 2> "$tmp/err"
# by VIDUR's rule: 4,200 - 1,024 = 3,176 over; the prompt gives up
# ceil(3176 x 4000/4200) = 3,025, the output ceil(3176 x 200/4200) = 152
check "serve --trim: one request cut in proportion, to 975 + 48 within the 1,024-token context" \
    sh -c "jq -e '.trimmed_requests == 1' '$tmp/trim.json' > /dev/null && awk -F, 'NR == 3 { exit !(\$4 == 975 && \$5 == 48) }' '$tmp/long.csv'"
# serve --cp: context parallelism (ring attention, KV sharded by token).
# Llama 3.1 8B's K/V per token per layer: 2 x 8 KV heads x 128 x 2 bytes;
# a block of 16 tokens over 32 layers is 2,097,152 bytes, a quarter of it
# per GPU under CP 4 (hand count)
"$S" serve llama3.1-8b --gpu h100-sxm --qps 1 --requests 1 --lengths fixed:130944,128 --max-batched-tokens 131072 --json > "$tmp/cp1.json"
"$S" serve llama3.1-8b --gpu h100-sxm --cluster hgx-h100-4gpu --cp 4 --qps 1 --requests 1 --lengths fixed:130944,128 --max-batched-tokens 131072 --json > "$tmp/cp4.json"
check "serve --cp 4: KV bytes per block a quarter of one GPU's (2,097,152 -> 524,288), weights the same, 4 GPUs" \
    jq -e --slurpfile a "$tmp/cp1.json" '$a[0].kv_bytes_per_block == 2097152 and .kv_bytes_per_block == 524288
        and .weights_bytes_per_gpu == $a[0].weights_bytes_per_gpu and .gpus == 4 and .cp == 4 and $a[0].cp == 1' "$tmp/cp4.json"
# the prefill's GEMMs and its causal attention split evenly over the ranks
# and NVLink hides the K/V hops: near-linear, as Yang et al. 2024 measure
# (93% at 16 nodes); never better than linear
check "serve --cp 4 on 4 H100s: a 128k prompt's TTFT between 1/4 and 1/3.4 of one GPU's" \
    jq -e --slurpfile a "$tmp/cp1.json" '.ttft_s.mean > $a[0].ttft_s.mean / 4 and .ttft_s.mean < $a[0].ttft_s.mean / 3.4' "$tmp/cp4.json"
check "serve --cp 4: memory per GPU falls (a quarter of the KV and of the prefill activations)" \
    jq -e --slurpfile a "$tmp/cp1.json" '.memory_per_gpu_bytes < $a[0].memory_per_gpu_bytes - 20e9' "$tmp/cp4.json"
# CP across nodes: TP 8 fills a node of vidur-a100-dgx, so the ring of CP 2
# crosses the 7.77 GB/s scale-out link. Each hop carries 16,000 tokens' K/V
# of 4 KV heads per GPU: 16000 x 2 x 4 x 128 x 2 = 32,768,000 bytes; 32
# layers each wait for one hop at least (the attention of a block is
# faster here)
hop=$("$S" coll sendrecv --cluster vidur-a100-dgx --gpus 2 --per-node 1 --bytes 32768000 --json | jq '.time_s')
"$S" serve llama2-7b-32k --gpu a100-80gb-sxm --cluster vidur-a100-dgx --tp 8 --cp 2 --qps 1 --requests 1 --lengths fixed:32000,16 --max-batched-tokens 32768 --json > "$tmp/cpx.json"
"$S" serve llama2-7b-32k --gpu a100-80gb-sxm --cluster vidur-a100-dgx --tp 4 --cp 2 --qps 1 --requests 1 --lengths fixed:32000,16 --max-batched-tokens 32768 --json > "$tmp/cpn.json"
check "serve --cp 2 across nodes: TTFT >= 32 layers x one K/V hop of 32.8 MB (strata coll: $hop s)" \
    jq -e --argjson h "${hop:-1e9}" '.ttft_s.mean >= 32 * $h' "$tmp/cpx.json"
# the same cluster with a 10x and a 100x faster scale-out link: once a hop
# is shorter than a block's attention the ring is hidden and the link's
# speed no longer matters; on the slow link the TTFT grows by at most the
# 32 hops' own time
sed 's/^    bw_gbs: 7.77 *$/    bw_gbs: 77.7/' "$srcdir/presets/cluster/vidur-a100-dgx.yaml" > "$tmp/cp-fast.yaml"
sed 's/^    bw_gbs: 7.77 *$/    bw_gbs: 777/' "$srcdir/presets/cluster/vidur-a100-dgx.yaml" > "$tmp/cp-faster.yaml"
for f in fast faster; do
    "$S" serve llama2-7b-32k --gpu a100-80gb-sxm --cluster "$tmp/cp-$f.yaml" --tp 8 --cp 2 --qps 1 --requests 1 --lengths fixed:32000,16 --max-batched-tokens 32768 --json > "$tmp/cp-$f.json"
done
check "serve --cp 2: a hidden ring does not depend on the link (77.7 and 777 GB/s give the same TTFT)" \
    jq -e --slurpfile b "$tmp/cp-faster.json" '.ttft_s.mean == $b[0].ttft_s.mean' "$tmp/cp-fast.json"
check "serve --cp 2: at 7.77 GB/s the exposed ring adds more than 0 and at most 32 hops to the TTFT" \
    jq -e --slurpfile f "$tmp/cp-fast.json" --argjson h "${hop:-1e9}" '(.ttft_s.mean - $f[0].ttft_s.mean) as $d | $d > 0.01 and $d <= 32 * $h' "$tmp/cpx.json"
"$S" serve llama3.1-8b --cp 0 --qps 1 --requests 1 --lengths fixed:10,10 > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q -- "--cp" "$tmp/err"; then ok "serve --cp 0: a usage error"; else not_ok "serve --cp 0: a usage error" "rc=$rc $(cat "$tmp/err")"; fi
# a CP spanning nodes must fill them evenly: TP 2 leaves 4 CP ranks a node
# on ib-a100, which do not divide 6 (the merge's all-reduce has no such group)
"$S" serve llama2-7b-32k --gpu a100-80gb-sxm --cluster ib-a100 --tp 2 --pp 2 --cp 6 --qps 1 --requests 1 --lengths fixed:32000,64 > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q -- "--cp 6 with --tp 2 on ib-a100: a node holds 4 CP ranks, which do not divide 6" "$tmp/err" && [ ! -s "$tmp/out" ]; then ok "serve --cp 6 over nodes of 4 CP ranks: refused with the node's count"; else not_ok "serve --cp 6 over nodes of 4 CP ranks: refused" "rc=$rc $(cat "$tmp/err")"; fi
# a 1-token prompt has one K/V block: nothing travels the ring, so CP 64
# costs its prefill no hops (before: 63 of them, 10x the TTFT)
for n in 1 64; do "$S" serve llama3.1-8b --gpu h100-sxm --cluster meta-roce-h100 --cp $n --qps 1 --requests 3 --lengths fixed:1,4 --json > "$tmp/cp-short-$n.json"; done
check "serve --cp 64: a 1-token prompt's TTFT within 2x of one GPU's (no K/V hops)" \
    jq -e --slurpfile a "$tmp/cp-short-1.json" '.ttft_s.mean < 2 * $a[0].ttft_s.mean' "$tmp/cp-short-64.json"
# memory_per_gpu_bytes counts every model on the GPU: Llama-3.1-8B's
# 8,030,261,248 and Llama-2-7B's 6,738,415,616 parameters (Meta's counts)
# in BF16, plus the 0.7 GiB runtime reserve, at least
"$S" serve llama3.1-8b --gpu h100-sxm --colocate llama2-7b --qps 4 --requests 20 --lengths fixed:2000,50 --json > "$tmp/co-mem.json"
check "serve --colocate: memory_per_gpu_bytes holds both models' weights (>= 30,611,095,552 B)" \
    jq -e '.memory_per_gpu_bytes >= 2 * (8030261248 + 6738415616) + 0.7 * 1073741824' "$tmp/co-mem.json"
cpbad=""
for extra in "--spec-k 2 --spec-accept 0.8" "--disagg 1:1" "--colocate llama2-7b"; do
    "$S" serve llama3.1-8b --gpu h100-sxm --cp 2 $extra --qps 1 --requests 2 --lengths fixed:100,10 > "$tmp/out" 2> "$tmp/err"; rc=$?
    { [ $rc = 1 ] && grep -q "context parallelism (--cp) is not modelled with" "$tmp/err" && [ ! -s "$tmp/out" ]; } || cpbad="$cpbad [$extra: rc=$rc $(cat "$tmp/err")]"
done
if [ -z "$cpbad" ]; then ok "serve --cp with --spec-k, --disagg or --colocate: refused, naming the pair"; else not_ok "serve --cp with unmodelled options refused" "$cpbad"; fi
# a Timeloop problem past 2^53 MACs is refused at its instance, not
# priced with rounded counters
"$S" map --arch eyeriss-like --problem "$T/bad/huge-macs.prob.yaml" > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "huge-macs.prob.yaml:4:5: 2.24e+48 multiply-accumulates: strata counts up to 2^53" "$tmp/err" && [ ! -s "$tmp/out" ]; then ok "map: a problem of 2.2e48 MACs refused at FILE:LINE:COL"; else not_ok "map: huge problem refused" "rc=$rc $(cat "$tmp/err")"; fi
# a draft too large for the GPU is named as the cause, not the target
# a draft of another tokenizer cannot be verified token by token
"$S" serve llama3.1-8b --qps 2 --requests 10 --lengths fixed:100,50 --spec-k 2 --spec-accept 0.7 --draft gpt2-small > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "a draft model must share llama3.1-8b's tokenizer (vocabulary 50257 against 128256)" "$tmp/err" && [ ! -s "$tmp/out" ]; then ok "serve --draft of another vocabulary is refused"; else not_ok "serve --draft vocabulary" "rc=$rc $(cat "$tmp/err")"; fi
"$S" map --arch eyeriss-like --layer resnet50:conv1 --exhaustive --evals 1000 > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q -- "--exhaustive enumerates every mapping; --evals caps a search" "$tmp/err"; then ok "map --exhaustive with --evals: usage error"; else not_ok "map --exhaustive --evals" "rc=$rc $(cat "$tmp/err")"; fi
"$S" serve llama2-7b --gpu a100-80gb-sxm --spec-k 4 --spec-accept 0.8 --draft llama2-70b --qps 1 --requests 3 --lengths fixed:100,10 > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "llama2-7b with its draft llama2-70b does not fit: .* 137.95 GB of the draft's" "$tmp/err"; then ok "serve --draft too large: the draft's 138 GB named"; else not_ok "serve --draft too large" "rc=$rc $(cat "$tmp/err")"; fi
# a cluster whose node has no NICs: the cause named at the cluster's node key
mkdir -p "$tmp/n0"
sed 's/^nics: 8 .*/nics: 0/' "$srcdir/presets/node/dgx-a100.yaml" > "$tmp/n0/n0.yaml"
sed "s|^node: .*|node: $tmp/n0/n0.yaml|" "$srcdir/presets/cluster/ib-a100.yaml" > "$tmp/n0/c.yaml"
"$S" coll allreduce --cluster "$tmp/n0/c.yaml" --gpus 16 --bytes 1MiB > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "c.yaml:9:7: key 'node': node n0 has no NICs (nics: 0)" "$tmp/err"; then ok "cluster over a node with nics: 0: refused at its node key"; else not_ok "cluster over a NIC-less node" "rc=$rc $(cat "$tmp/err")"; fi
# a sweep with speculative decoding but no acceptance rate is refused at
# its spec_k, as serve --spec-k needs --spec-accept
mkdir -p "$tmp/sk"
grep -v "spec_accept" "$srcdir/workloads/sweeps/serve-techniques.yaml" > "$tmp/sk/a.yaml"
"$S" sweep "$tmp/sk/a.yaml" > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "a.yaml:18:11: spec_k > 0 needs spec_accept" "$tmp/err" && [ ! -s "$tmp/out" ]; then ok "sweep: spec_k without spec_accept refused at FILE:LINE:COL"; else not_ok "sweep: spec_k without spec_accept" "rc=$rc $(cat "$tmp/err")"; fi
sed 's/^  spec_k: \[0, 2, 4\]/  spec_k: [0]/' "$srcdir/workloads/sweeps/serve-techniques.yaml" > "$tmp/sk/b.yaml"
"$S" sweep "$tmp/sk/b.yaml" --quiet > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "b.yaml:13:16: spec_accept without spec_k > 0" "$tmp/err" && [ ! -s "$tmp/out" ]; then ok "sweep: spec_accept that no point uses (spec_k 0 only) refused at FILE:LINE:COL, as serve refuses it"; else not_ok "sweep: spec_accept without spec_k" "rc=$rc $(cat "$tmp/err")"; fi
# eval reports memory: Llama-2-70B's prefill of 64 x 2048 tokens keeps a KV
# cache of 80 layers x 2 x 8 KV heads x 128 x 2 bytes a token = 42,949,672,960 B
# (40 GiB), which with the weights cannot fit a 16 GB T4; a GPT-2 Large
# training step counts what train counts on one GPU
check "eval: the KV cache by hand (40 GiB), over a T4's memory: fits false" \
    sh -c "'$S' eval llama2-70b --gpu t4 --batch 64 --seq 2048 --json | jq -e '.memory.kv_cache_bytes == 42949672960 and .memory.bytes > .memory.capacity_bytes and .memory.fits == false and .memory.activations_counted == false'"
check "eval --phase train: memory equals train's on one GPU" \
    sh -c "a=\$('$S' eval gpt2-large --gpu a100-80gb-sxm --phase train --batch 8 --seq 1024 --json | jq '.memory.bytes'); b=\$('$S' train gpt2-large --cluster dgx-a100 --gpus 1 --global-batch 8 --seq 1024 --json | jq '.memory_per_gpu_bytes'); [ -n \"\$a\" ] && [ \"\$a\" = \"\$b\" ]"
# a name that starts preset ids is answered with those ids, not the
# nearest by edits (h100: h100-sxm and h100-pcie, not h200)
"$S" show h100 > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc != 0 ] && grep -q "did you mean one of 'h100-pcie', 'h100-sxm'?" "$tmp/err"; then ok "unknown name h100: the ids it starts suggested"; else not_ok "unknown name h100: the ids it starts" "rc=$rc $(cat "$tmp/err")"; fi
# serving runs the checkpoint's 16-bit type, as vLLM's dtype auto does:
# Llama 2 is FP16 (its config.json), Llama 3 BF16; a T4 has no BF16
"$S" serve llama2-7b --qps 1 --requests 2 --lengths fixed:100,10 > "$tmp/s1"
"$S" serve llama3-8b --qps 1 --requests 2 --lengths fixed:100,10 > "$tmp/s2"
"$S" serve llama3-8b --gpu t4 --quant w4a16 --qps 1 --requests 2 --lengths fixed:100,10 --json > "$tmp/s3" 2>&1
"$S" serve llama3-8b --dtype float16 --qps 1 --requests 2 --lengths fixed:100,10 --json > "$tmp/s4"
"$S" serve llama3-8b --gpu v100-sxm2-32gb --dtype bf16 --qps 1 --requests 2 --lengths fixed:100,10 > /dev/null 2> "$tmp/s5"; r5=$?
if sed -n 2p "$tmp/s1" | grep -q "block 16, fp16, FlashAttention-3$" && sed -n 2p "$tmp/s2" | grep -q "block 16, bf16, FlashAttention-3$" && jq -e '.dtype == "fp16"' "$tmp/s3" > /dev/null && jq -e '.dtype == "fp16"' "$tmp/s4" > /dev/null && [ $r5 = 1 ] && grep -q -- "--dtype bf16: v100-sxm2-32gb has no bf16 throughput" "$tmp/s5"; then ok "serve: the checkpoint's dtype (Llama 2 fp16, Llama 3 bf16, bf16 as fp16 on a T4); --dtype overrides it, bf16 refused on a V100"; else not_ok "serve: the checkpoint's dtype" "$(sed -n 2p "$tmp/s1") | $(sed -n 2p "$tmp/s2") | $(head -3 "$tmp/s3")"; fi
# usage slips: an inference dtype for training, an empty --out, a
# one-letter unknown option (no long name suggested for it)
"$S" plan llama2-7b --cluster dgx-a100 --gpus 8 --global-batch 8 --seq 1024 --dtype int8 > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q -- "--dtype int8: training runs in fp32, tf32, fp16, bf16 or fp8" "$tmp/err"; then ok "plan --dtype int8: a usage error"; else not_ok "plan --dtype int8" "rc=$rc $(cat "$tmp/err")"; fi
"$S" sweep "$srcdir/workloads/sweeps/gpu-batch-dtype.yaml" --out "" > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q -- "--out is empty" "$tmp/err"; then ok "sweep --out '': refused, named"; else not_ok "sweep --out ''" "rc=$rc $(cat "$tmp/err")"; fi
"$S" show llama2-7b -x > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q "unknown option '-x'" "$tmp/err" && ! grep -q "did you mean" "$tmp/err"; then ok "show -x: unknown, no suggestion"; else not_ok "show -x" "rc=$rc $(cat "$tmp/err")"; fi
# a GPU's arch keys the kernel model (Hopper's asynchronous MMAs, the tile
# sets): any case reads the same, a misspelling or another vendor's is refused
mkdir -p "$tmp/arch"
sed 's/^arch: hopper/arch: Hopper/' "$srcdir/presets/gpu/h100-sxm.yaml" > "$tmp/arch/cap.yaml"
sed 's/^arch: hopper/arch: hoper/' "$srcdir/presets/gpu/h100-sxm.yaml" > "$tmp/arch/typo.yaml"
sed 's/^arch: hopper/arch: cdna3/' "$srcdir/presets/gpu/h100-sxm.yaml" > "$tmp/arch/vendor.yaml"
a=$("$S" kernel gemm --m 4096 --n 4096 --k 4096 --gpu h100-sxm --json | jq .time_s)
b=$("$S" kernel gemm --m 4096 --n 4096 --k 4096 --gpu "$tmp/arch/cap.yaml" --json | jq .time_s)
if [ -n "$a" ] && [ "$a" = "$b" ]; then ok "preset arch: 'Hopper' is hopper (same GEMM time)"; else not_ok "preset arch: 'Hopper' is hopper" "$a vs $b"; fi
"$S" show "$tmp/arch/typo.yaml" > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "typo.yaml:13:7: key 'arch': expected one of .*hopper.*did you mean 'hopper'" "$tmp/err" && [ ! -s "$tmp/out" ]; then ok "preset arch: a misspelling is refused at FILE:LINE:COL"; else not_ok "preset arch: a misspelling is refused" "rc=$rc $(cat "$tmp/err")"; fi
"$S" show "$tmp/arch/vendor.yaml" > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "vendor.yaml:13:7: key 'arch': cdna3 is an amd architecture, but vendor is nvidia" "$tmp/err"; then ok "preset arch: another vendor's architecture is refused"; else not_ok "preset arch: another vendor's architecture is refused" "rc=$rc $(cat "$tmp/err")"; fi
# an accelerator's PE array must match its innermost level (one PE under
# each instance), and a bandwidth of 0 words a cycle is refused, not read
# as unlimited
mkdir -p "$tmp/ac"
sed 's/^pe_array: {x: 14, y: 12}/pe_array: {x: 1000, y: 1000}/' "$srcdir/presets/accel/eyeriss-like.yaml" > "$tmp/ac/big.yaml"
"$S" map --arch "$tmp/ac/big.yaml" --layer resnet50:conv1 > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "big.yaml:24:11: pe_array 1000x1000 does not match the innermost level, psum_spad: 168 instances laid out 14x12" "$tmp/err"; then ok "accel: a PE array that does not match its levels refused"; else not_ok "accel: PE array against levels" "rc=$rc $(cat "$tmp/err")"; fi
sed 's/^    read_bw_words: 16 /    read_bw_words: 0 /' "$srcdir/presets/accel/eyeriss-like.yaml" > "$tmp/ac/bw0.yaml"
"$S" map --arch "$tmp/ac/bw0.yaml" --layer resnet50:conv1 > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "key 'read_bw_words': 0 words a cycle would stall every access" "$tmp/err"; then ok "accel: read_bw_words 0 refused"; else not_ok "accel: read_bw_words 0" "rc=$rc $(cat "$tmp/err")"; fi
# Hugging Face configs: Gemma's hidden_activation is what its MLP runs
# (gelu_pytorch_tanh, not hidden_act's gelu); Falcon gives no context length
# and trained at 2048; a Llama-type config without one must say
"$S" show "$T/hf/gemma-7b-config.json" > "$tmp/g.txt" 2>&1
"$S" show "$T/hf/falcon-7b-config.json" > "$tmp/f.txt" 2>&1
sed 's/"max_position_embeddings": *[0-9]*,//' "$T/hf/llama-2-7b-config.json" > "$tmp/noctx.json"
"$S" show "$tmp/noctx.json" > /dev/null 2> "$tmp/err"; rc=$?
if grep -q "gelu_tanh" "$tmp/g.txt" && grep -q "context 2048" "$tmp/f.txt" && [ $rc = 1 ] && grep -q "noctx.json:1:1: no context length" "$tmp/err"; then ok "HF configs: Gemma's hidden_activation, Falcon's 2048 context, a missing context refused"; else not_ok "HF configs: activation and context" "$(grep style "$tmp/g.txt") | $(grep shape "$tmp/f.txt") | rc=$rc $(cat "$tmp/err")"; fi
# settings vLLM takes as given that do not fit the GPU or the model: run,
# with a note on stderr (and none for an ordinary run)
if [ -w /dev/full ]; then
    "$S" serve llama3.1-8b --qps 5 --requests 50 --lengths fixed:100,50 --per-request /dev/full > /dev/null 2> "$tmp/err"; rc=$?
    if [ $rc = 1 ] && grep -q "writing /dev/full failed" "$tmp/err"; then ok "serve --per-request /dev/full: the failure named"; else not_ok "serve --per-request /dev/full" "rc=$rc $(cat "$tmp/err")"; fi
else
    skip_test "serve --per-request /dev/full" "no writable /dev/full"
fi
# a trace out of order is replayed by arrival, ties in the file's order (a
# stable sort on any C library), shifted to start at 0
printf '{"input_toks": 10, "output_toks": 5, "arrival_time": 5}\n{"input_toks": 20, "output_toks": 5, "arrival_time": 1}\n{"input_toks": 30, "output_toks": 5, "arrival_time": 1}\n' > "$tmp/tr3.jsonl"
"$S" serve llama3.1-8b --trace "$tmp/tr3.jsonl" --per-request "$tmp/tr3.csv" > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 0 ] && [ "$(cut -d, -f4,6 "$tmp/tr3.csv" | tail -n 3 | tr '\n' ' ')" = "20,0.000000 30,0.000000 10,4.000000 " ]; then ok "serve --trace: arrival order, ties kept in file order"; else not_ok "serve --trace ordering" "rc=$rc $(cat "$tmp/tr3.csv" "$tmp/err")"; fi
# a value left out reads the next option as the value: said as such (a
# scenario's `qps: true` writes exactly that)
"$S" serve llama3.1-8b --qps --requests 2 --lengths fixed:10,10 > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q -- "option --qps needs a value; '--requests' is another option" "$tmp/err" && [ ! -s "$tmp/out" ]; then ok "an option's missing value is named, not the next option taken as it"; else not_ok "missing option value" "rc=$rc $(cat "$tmp/err")"; fi
# only sarathi reads --chunk: under vllm it would be taken and ignored
"$S" serve llama3.1-8b --qps 2 --requests 10 --lengths fixed:100,50 --chunk 100 > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q -- "--chunk is sarathi's step budget; under --sched vllm the budget is --max-batched-tokens" "$tmp/err" && [ ! -s "$tmp/out" ]; then ok "serve --chunk under vllm: usage error"; else not_ok "serve --chunk under vllm" "rc=$rc $(cat "$tmp/err")"; fi
# the note weighs the pool vLLM allocates, not the blocks in use: 2^40 blocks
# of 16 tokens at 128 KiB a token (Llama 3.1 8B, BF16) are 2e9 GiB, though a
# short run uses a few hundred
"$S" serve llama3.1-8b --qps 5 --requests 50 --lengths fixed:100,50 --num-gpu-blocks 1099511627776 > /dev/null 2> "$tmp/nblk"; r0=$?
if [ $r0 = 0 ] && grep -q "note: --num-gpu-blocks 1099511627776 allocates 2.15e+09 GiB on each GPU" "$tmp/nblk"; then ok "serve: --num-gpu-blocks past memory noted by the allocated pool"; else not_ok "serve: --num-gpu-blocks allocated pool" "$r0 $(cat "$tmp/nblk")"; fi
"$S" serve llama2-7b --qps 1000 --requests 200 --lengths fixed:2000,100 --num-gpu-blocks 100000000 --max-num-seqs 4096 > /dev/null 2> "$tmp/n1"; r1=$?
"$S" serve llama2-7b --qps 1 --requests 2 --lengths fixed:100,10 --max-model-len 100000 > /dev/null 2> "$tmp/n2"; r2=$?
"$S" serve llama2-7b --qps 1 --requests 2 --lengths fixed:100,10 > /dev/null 2> "$tmp/n3"; r3=$?
if [ $r1$r2$r3 = 000 ] && grep -q "note: --num-gpu-blocks 100000000 allocates .* GiB on each GPU, more than its 80.0 GiB" "$tmp/n1" && grep -q "note: --max-model-len 100000 is beyond llama2-7b's 4096-token context" "$tmp/n2" && [ ! -s "$tmp/n3" ]; then ok "serve: oversize --num-gpu-blocks and --max-model-len noted on stderr"; else not_ok "serve: notes for oversize settings" "$r1$r2$r3 $(cat "$tmp/n1" "$tmp/n2" "$tmp/n3")"; fi
# a filter side past 1024 is a usage error (it once overflowed to a crash);
# MPT's max_seq_len and BLOOM's 2048 give those configs their context;
# SIGPIPE (a closed pipe) removes a run's temporaries too
"$S" kernel conv --m 10 --n 10 --k 9 --filter 4294967296 --dtype fp32 > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q -- "--filter: expected a whole number in \[1, 1024\]" "$tmp/err"; then ok "kernel conv --filter 2^32: a usage error"; else not_ok "kernel conv --filter 2^32" "rc=$rc $(cat "$tmp/err")"; fi
if "$S" show "$T/hf/mpt-7b-config.json" | grep -q "context 2048" && "$S" show "$T/hf/bloom-7b1-config.json" | grep -q "context 2048"; then ok "HF: MPT's max_seq_len, BLOOM's 2048"; else not_ok "HF: MPT and BLOOM context" "$("$S" show "$T/hf/mpt-7b-config.json" 2>&1 | head -3)"; fi
mkdir -p "$tmp/sp"
timeout -s PIPE 2 "$S" serve llama2-7b --qps 100 --requests 1000000 --lengths fixed:100,10 --per-request "$tmp/sp/p.csv" > /dev/null 2>&1; rc=$?
if [ $rc = 124 ] && [ -z "$(ls -A "$tmp/sp")" ]; then ok "serve ended by SIGPIPE: no temporary left"; else not_ok "serve ended by SIGPIPE" "rc=$rc left: $(ls "$tmp/sp")"; fi

# an encoder-decoder's decode takes both lengths: --seq the encoder input,
# --kv the decoder cache; T5-Base's cross-attention scores over 256 encoded
# tokens: 2 x 12 heads x 1 query x 256 keys x 64 x 12 layers = 4,718,592 FLOP
check "show: encoder-decoder decode with --seq (encoder) and --kv (cache), cross-attention by hand" \
    sh -c "'$S' show '$T/hf/t5-base-config.json' --phase decode --seq 256 --kv 50 --json | jq -e '.kv_len == 50 and ([.ops[] | select(.name == \"dec_block.xattn.score\") | .flops] == [4718592])'"
# side-by-side attention and MLP: shared_norm drops the MLP's own norm
# (GPT-J, Falcon-7B), two_norms keeps it; post-norm cannot take it
mkdir -p "$tmp/par"
sed 's/^norm_position: pre.*/norm_position: pre\nparallel_block: shared_norm/' "$srcdir/workloads/gpt2-small.yaml" > "$tmp/par/shared.yaml"
sed 's/^norm_position: pre.*/norm_position: post\nparallel_block: two_norms/' "$srcdir/workloads/gpt2-small.yaml" > "$tmp/par/post.yaml"
n_seq=$("$S" show gpt2-small --json | jq '[.ops[] | select(.name | test("mlp.norm"))] | length')
n_sh=$("$S" show "$tmp/par/shared.yaml" --json | jq '[.ops[] | select(.name | test("mlp.norm"))] | length')
n_fa=$("$S" show "$T/hf/falcon-7b-config.json" --json | jq '[.ops[] | select(.name | test("mlp.norm"))] | length')
"$S" show "$tmp/par/post.yaml" > /dev/null 2> "$tmp/err"; rc=$?
if [ "$n_seq" = 1 ] && [ "$n_sh" = 0 ] && [ "$n_fa" = 0 ] && [ $rc = 1 ] && grep -q "post.yaml:[0-9]*:[0-9]*: key 'parallel_block'.*needs norm_position: pre" "$tmp/err"; then ok "parallel_block: shared_norm drops the MLP norm (YAML and Falcon), post-norm refused"; else not_ok "parallel_block" "seq=$n_seq shared=$n_sh falcon=$n_fa rc=$rc $(cat "$tmp/err")"; fi
# the simulated broadcast pipelines each ring's share in chunks: 64 MiB
# over 8 rings (8 NICs a node on ib-h100) is 8 MiB a ring, 8 chunks of 1 MiB
# (it was cut as if each step moved 1/64 of it: one chunk, store and
# forward); within the transfer time plus the chain's fill of 63 hops
check "coll --sim broadcast: 8 chunks of a ring's 8 MiB, time within the pipelined chain's bound" \
    sh -c "'$S' coll broadcast --bytes 64MiB --cluster ib-h100 --gpus 64 --sim --json | jq -e '.sim.chunks == 8 and .sim.time_s < .time_s * (8 + 63) / 8 * 1.2'"
# ZeRO-1's gradient traffic: its reduce-scatter and all-gather move the
# bytes of ZeRO-0's all-reduce, and Megatron-sized buckets (max(40M, 1M x
# DP) parameters) keep the reduce-scatter's 255-step latency amortised at
# 256 GPUs, where DDP's 25 MiB buckets pay it hundreds of times
for z in 0 1; do "$S" train llama2-7b --cluster ib-h100 --gpus 256 --global-batch 256 --seq 4096 --flash --zero $z --json > "$tmp/z$z.json"; done
check "train: ZeRO-1's reduce-scatter + all-gather within 1.5x of ZeRO-0's all-reduce at 256 GPUs" \
    jq -e -n --slurpfile a "$tmp/z0.json" --slurpfile b "$tmp/z1.json" '($b[0].breakdown.dp_comm_s + $b[0].breakdown.zero_gather_s) < 1.5 * $a[0].breakdown.dp_comm_s'
# MoE load imbalance 2: the busiest EP rank holds twice the routed tokens'
# activations: 32 layers x top-2 x 4,096 tokens x (2 x 2 x 4096 copies +
# 4 x 2 x 14336 expert intermediates) bytes = 32 GiB more by hand; and its
# all-to-all moves twice the bytes (between 1.5x and 2x the time: latency)
for i in 1 2; do "$S" train mixtral-8x7b --cluster ib-h100 --gpus 8 --ep 8 --zero 1 --global-batch 8 --seq 4096 --flash --moe-imbalance $i --json > "$tmp/imb$i.json"; done
check "train --moe-imbalance 2: 32 GiB more activations by hand, all-to-all 1.5-2x" \
    jq -e -n --slurpfile a "$tmp/imb1.json" --slurpfile b "$tmp/imb2.json" '($b[0].memory.activations - $a[0].memory.activations) == 34359738368 and ($b[0].breakdown.ep_comm_s / $a[0].breakdown.ep_comm_s) > 1.5 and ($b[0].breakdown.ep_comm_s / $a[0].breakdown.ep_comm_s) <= 2'
# CP's ring hides behind attention (none exposed) but still moves: the
# total traffic counts it, so it is above TP's and DP's together
check "train --cp 2: comm_total_s counts the hidden K/V ring" \
    sh -c "'$S' train llama2-7b-32k --cluster dgx-h100 --gpus 8 --cp 2 --tp 4 --global-batch 2 --seq 32768 --flash --json | jq -e '.breakdown | .cp_comm_s == 0 and .comm_total_s > (.tp_comm_s + .dp_comm_s) * 1.05'"
# outputs of one run land all or none: a trace that cannot be written
# (/dev/full) keeps the per-request CSV from landing too; an interrupted run
# (SIGTERM mid-simulation) leaves no temporary behind; '-' is not a file
mkdir -p "$tmp/aon"
"$S" serve llama2-7b --qps 1 --requests 10 --lengths fixed:100,100 --per-request "$tmp/aon/p.csv" --trace-out /dev/full > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "none of the output files written" "$tmp/err" && [ -z "$(ls -A "$tmp/aon")" ]; then ok "serve: a failed --trace-out keeps --per-request from landing"; else not_ok "serve: outputs all or none" "rc=$rc $(cat "$tmp/err"); left: $(ls "$tmp/aon")"; fi
timeout 2 "$S" serve llama2-7b --qps 100 --requests 1000000 --lengths fixed:100,10 --per-request "$tmp/aon/i.csv" --trace-out "$tmp/aon/i.json" > /dev/null 2>&1; rc=$?
if [ $rc = 124 ] && [ -z "$(ls -A "$tmp/aon")" ]; then ok "serve interrupted by SIGTERM: no temporary left"; else not_ok "serve interrupted: no temporary left" "rc=$rc left: $(ls "$tmp/aon")"; fi
(cd "$tmp/aon" && "$S" train gpt2-small --trace - > /dev/null 2> "$tmp/err"); rc=$?
if [ $rc = 1 ] && grep -q "'-' is not an output file" "$tmp/err" && [ -z "$(ls -A "$tmp/aon")" ]; then ok "train --trace -: refused, no file named -"; else not_ok "train --trace -" "rc=$rc $(cat "$tmp/err")"; fi
# train --trace keeps 200,000 tasks at most (here 2 stages x 600,000)
"$S" train llama2-7b --cluster dgx-h100 --gpus 2 --pp 2 --microbatches 300000 --global-batch 300000 --seq 128 --trace "$tmp/aon/tr.json" > /dev/null
check "train --trace: at most 200,000 forward/backward tasks (2 stages x 600,000 capped at 100,000 each)" \
    jq -e '[.traceEvents[] | select(.cat == "forward" or .cat == "backward")] | group_by(.pid) | map(length) == [100000, 100000]' "$tmp/aon/tr.json"
# a cluster preset has a size: vidur-a100-dgx is 2 nodes x 8 GPUs, so 17
# one-GPU replicas or 3 TP-8 ones (also as 2:1 disaggregated pools) do not
# fit; 16 and 2 do; a node preset only names the links (17 replicas run on
# as many such nodes as they need)
capbad=""
for a in "--dp 17=17 GPUs" "--dp 3 --tp 8=24 GPUs" "--disagg 2:1 --tp 8=24 GPUs"; do
    "$S" serve llama2-7b --gpu a100-80gb-sxm --cluster vidur-a100-dgx ${a%%=*} --qps 1 --requests 2 --lengths fixed:100,10 > "$tmp/out" 2> "$tmp/err"; rc=$?
    { [ $rc = 1 ] && grep -q "need ${a#*=}; cluster vidur-a100-dgx has 16 (2 nodes x 8)" "$tmp/err" && [ ! -s "$tmp/out" ]; } || capbad="$capbad [${a%%=*}: rc=$rc $(cat "$tmp/err")]"
done
for a in "--cluster vidur-a100-dgx --dp 16" "--cluster vidur-a100-dgx --dp 2 --tp 8" "--cluster vidur-dgx-a100 --dp 17"; do
    "$S" serve llama2-7b --gpu a100-80gb-sxm $a --qps 1 --requests 2 --lengths fixed:100,10 > /dev/null 2> "$tmp/err" || capbad="$capbad [$a refused: $(cat "$tmp/err")]"
done
if [ -z "$capbad" ]; then ok "serve: replicas beyond a cluster preset's GPUs refused with the counts; a node preset does not cap them"; else not_ok "serve: replicas beyond a cluster's GPUs" "$capbad"; fi
# max_concurrency: the KV cache's tokens over the longest request
"$S" serve llama2-7b --gpu a100-80gb-sxm --qps 1 --requests 2 --lengths fixed:512,128 --max-model-len 2048 --json > "$tmp/mc.json"
check "serve: max_concurrency = kv_tokens / max_model_len (2048)" \
    jq -e '(.max_concurrency - .kv_tokens / 2048 | fabs) < 1e-9 and .kv_tokens == .kv_blocks * 16' "$tmp/mc.json"
# co-location: each model's TTFT is the mean over its own requests in the per-request CSV
"$S" serve llama2-7b --gpu h100-sxm --colocate llama2-13b --qps 2 --requests 40 --lengths uniform:200-2000,100-500 --per-request "$tmp/co.csv" --json > "$tmp/co.json"
m0=$(awk -F, 'NR > 1 && $2 == 0 { s += $10; n++ } END { printf "%.6f", s / n }' "$tmp/co.csv")
m1=$(awk -F, 'NR > 1 && $2 == 1 { s += $10; n++ } END { printf "%.6f", s / n }' "$tmp/co.csv")
check "serve --colocate: models[] holds each model's own TTFT (the per-request CSV's means)" \
    jq -e --argjson a "$m0" --argjson b "$m1" '(.models | length) == 2 and .models[0].model == "llama2-7b" and .models[1].model == "llama2-13b" and .models[0].requests + .models[1].requests == .requests and ((.models[0].ttft_s.mean - $a) | fabs) < 2e-6 and ((.models[1].ttft_s.mean - $b) | fabs) < 2e-6 and .models[1].ttft_s.mean > .models[0].ttft_s.mean' "$tmp/co.json"
# train: the DP overlap is a share with DP, null without
check "train: dp_overlap_fraction in (0, 1) with DP, null with TP alone" \
    sh -c "'$S' train gpt2-medium --cluster dgx-a100 --gpus 8 --dp 8 --global-batch 64 --seq 1024 --dtype fp16 --json | jq -e '.breakdown | .dp_overlap_fraction > 0 and .dp_overlap_fraction < 1 and ((.dp_overlap_fraction - (1 - .dp_exposed_s / .dp_comm_s)) | fabs) < 1e-12' >/dev/null && '$S' train gpt2-medium --cluster dgx-a100 --gpus 8 --tp 8 --global-batch 8 --seq 1024 --dtype fp16 --json | jq -e '.breakdown.dp_overlap_fraction == null'"

# review fixes (a helper's new-user pass): each check fails on the old code
# no output lands in the data folder: a run reads presets and the
# coefficient table there without naming them (a node's GPU, the default table)
R=$tmp/root; mkdir -p "$R"; cp -R "$srcdir/presets" "$srcdir/workloads" "$srcdir/calibration" "$R/"
cp "$R/presets/gpu/a100-40gb-sxm.yaml" "$tmp/gpu.orig"
STRATA_DATA=$R "$S" train gpt2-large --cluster hgx-a100-4gpu --trace "$R/presets/gpu/a100-40gb-sxm.yaml" > /dev/null 2> "$tmp/err"; rc=$?
# (the GPU preset the cluster's node reads is also named as such, first)
if { [ $rc = 1 ] && grep -q "will not write .*a100-40gb-sxm.yaml: it is inside strata's data folder (presets/)" "$tmp/err" ||
     [ $rc = 2 ] && grep -q "is the GPU preset that --cluster 'hgx-a100-4gpu' reads" "$tmp/err"; } && cmp -s "$tmp/gpu.orig" "$R/presets/gpu/a100-40gb-sxm.yaml"; then ok "train --trace into presets/ (a node's GPU): refused, the preset untouched"; else not_ok "train --trace into presets/: refused, the preset untouched" "rc=$rc $(cat "$tmp/err")"; fi
STRATA_DATA=$R "$S" serve llama2-7b --qps 1 --requests 2 --lengths fixed:10,10 --per-request "$R/calibration/gpu-kernels.yaml" > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && cmp -s "$srcdir/calibration/gpu-kernels.yaml" "$R/calibration/gpu-kernels.yaml"; then ok "serve --per-request onto the default coefficient table: refused"; else not_ok "serve --per-request onto the default coefficient table: refused" "rc=$rc $(cat "$tmp/err")"; fi
# serve MFU counts model FLOPs: MFU x duration / tokens is the same for
# static batching (which pads prompts) as for vLLM on the same requests
for sch in vllm static; do
    "$S" serve llama3.1-8b --qps 10 --requests 300 --lengths uniform:100-2000,50-500 --sched $sch --no-prefix-cache --json > "$tmp/mfu-$sch.json"
done
check "serve: MFU counts the requests' tokens, not static batching's padding" \
    jq -e -n --slurpfile a "$tmp/mfu-vllm.json" --slurpfile b "$tmp/mfu-static.json" '($a[0] | .mfu * .duration_s / (.throughput_total_tok_s * .duration_s)) as $x | ($b[0] | .mfu * .duration_s / (.throughput_total_tok_s * .duration_s)) as $y | (($x / $y - 1) | fabs) < 1e-9'
# serve --pp: the embedding on the first stage, the LM head on the last:
# Llama 3.1 8B (untied, E = H = 128256 x 4096): w(pp) = 2 (B/pp + E), w(1) = 2 (B + 2E)
w1=$("$S" serve llama3.1-8b --qps 1 --requests 2 --lengths fixed:100,10 --json | jq .weights_bytes_per_gpu)
w2=$("$S" serve llama3.1-8b --qps 1 --requests 2 --lengths fixed:100,10 --pp 2 --json | jq .weights_bytes_per_gpu)
w4=$("$S" serve llama3.1-8b --qps 1 --requests 2 --lengths fixed:100,10 --pp 4 --json | jq .weights_bytes_per_gpu)
check "serve --pp 2 / 4: weights per GPU = w1 / 2 and w1 / 4 + E bytes (embedding or head, not both)" \
    jq -e -n --argjson a "$w1" --argjson b "$w2" --argjson c "$w4" '(($b / ($a / 2) - 1) | fabs) < 1e-9 and (($c / ($a / 4 + 128256 * 4096) - 1) | fabs) < 1e-9'
sed 's/^\(    beta: \[\)1\.25641/\1-1.25641/' "$srcdir/calibration/gpu-kernels.yaml" > "$tmp/negcoef.yaml"
"$S" kernel gemm --m 4096 --n 4096 --k 4096 --coef "$tmp/negcoef.yaml" > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "negcoef.yaml:[0-9]*:[0-9]*: key 'beta': expected a number in \[0, " "$tmp/err"; then ok "coefficients: a negative beta is FILE:LINE:COL"; else not_ok "coefficients: a negative beta is FILE:LINE:COL" "rc=$rc $(cat "$tmp/err")"; fi
check "kernel: a 16^3 GEMM is launch bound ('latency'), not memory bound" \
    sh -c "'$S' kernel gemm --m 16 --n 16 --k 16 --json | jq -e '.bound == \"latency\"'"
"$S" serve llama3.1-8b --qps 1 --requests 4 --lengths fixed:100,10 --slo-ttft 0 > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q "an SLO is a positive number of seconds" "$tmp/err"; then ok "serve --slo-ttft 0 is refused (it would read as no SLO)"; else not_ok "serve --slo-ttft 0 is refused" "rc=$rc $(cat "$tmp/err")"; fi
check "serve on a V100 (no BF16) says fp16, as it computes" \
    sh -c "'$S' serve llama2-7b --gpu v100-sxm2-32gb --qps 1 --requests 3 --lengths fixed:100,10 | grep -q 'block 16, fp16'"
printf '{"input_toks": 10, "output_toks": 5, "arrival_time": 0}\n{"input_toks": 10, "output_toks": 5, "arrival_time": -1}\n' > "$tmp/negt.jsonl"
"$S" serve gpt2-small --trace "$tmp/negt.jsonl" > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "negt.jsonl:2:[0-9]*: arrival_time -1 is not a time" "$tmp/err"; then ok "serve: a negative arrival_time is FILE:LINE:COL"; else not_ok "serve: a negative arrival_time is FILE:LINE:COL" "rc=$rc $(cat "$tmp/err")"; fi
check "serve: TPOT of one-token outputs is null, not 0" \
    sh -c "'$S' serve llama3.1-8b --qps 1 --requests 3 --lengths fixed:10,1 --json | jq -e '.tpot_s == null and .ttft_s.mean > 0'"
"$S" summary --gpu eyeriss-like > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "'eyeriss-like' is an accelerator preset (.*), but a gpu is needed here" "$tmp/err"; then ok "a preset of the wrong kind by name says what it is"; else not_ok "a preset of the wrong kind by name says what it is" "rc=$rc $(cat "$tmp/err")"; fi
# a fused attention has no MAC-array mapping: taking it would drop the
# attention GEMMs' MACs from the totals (GPT-2 small at 128 tokens: 16.11
# GMAC eager, 15.81 with them gone), so it is refused
"$S" accel gpt2-small --arch eyeriss-like --attn flash > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q -- "--attn flash does not apply: the accelerator layer maps attention as its two batched GEMMs" "$tmp/err" && [ ! -s "$tmp/out" ]; then ok "accel --attn flash is refused (attention maps as two batched GEMMs)"; else not_ok "accel --attn flash is refused" "rc=$rc $(cat "$tmp/err")"; fi
"$S" accel resnet50 --arch eyeriss-like --dtype fp8 > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q -- "--dtype does not apply" "$tmp/err"; then ok "accel --dtype is refused (the architecture's word widths set the sizes)"; else not_ok "accel --dtype is refused" "rc=$rc $(cat "$tmp/err")"; fi
mkdir -p "$tmp/sw"
sed 's/  batch: {from: 1, to: 256, scale: log2}/  batch: {from: 1, to: 3, step: 0.5}/' "$srcdir/workloads/sweeps/gpu-batch-dtype.yaml" > "$tmp/sw/half.yaml"
"$S" sweep "$tmp/sw/half.yaml" --quiet > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "half.yaml:[0-9]*:[0-9]*: the range gives 1.5, but batch takes whole numbers" "$tmp/err"; then ok "sweep: a fractional range for a whole-number parameter is FILE:LINE:COL"; else not_ok "sweep: a fractional range for a whole-number parameter" "rc=$rc $(cat "$tmp/err")"; fi
sed 's/^  seq: 1024$/  seq: 1024\n  batch: 4/' "$srcdir/workloads/sweeps/gpu-batch-dtype.yaml" > "$tmp/sw/both.yaml"
"$S" sweep "$tmp/sw/both.yaml" --quiet > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "both.yaml:[0-9]*:3: batch is both fixed and an axis" "$tmp/err"; then ok "sweep: a parameter both fixed and an axis is FILE:LINE:COL"; else not_ok "sweep: a parameter both fixed and an axis" "rc=$rc $(cat "$tmp/err")"; fi
sed 's/^objectives: .*/objectives: [goodput]/' "$srcdir/workloads/sweeps/gpu-batch-dtype.yaml" > "$tmp/sw/obj.yaml"
"$S" sweep "$tmp/sw/obj.yaml" --quiet > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "obj.yaml:[0-9]*:[0-9]*: objectives: goodput is not defined for evaluate: gpu" "$tmp/err"; then ok "sweep: an objective the evaluator lacks is FILE:LINE:COL"; else not_ok "sweep: an objective the evaluator lacks is FILE:LINE:COL" "rc=$rc $(cat "$tmp/err")"; fi
# one preset named two ways (its id and its name, or an id and its file) is
# one value listed twice, as "fp16" and "FP16" are
printf 'sweep: dup\nevaluate: gpu\nfixed: {workload: llama2-7b}\naxes:\n  gpu: [h100-sxm, "NVIDIA H100 SXM5 80GB"]\nobjectives: [latency]\n' > "$tmp/sw/dup.yaml"
printf 'sweep: dup2\nevaluate: gpu\nfixed: {gpu: h100-sxm}\naxes:\n  workload: [llama2-7b, %s/workloads/llama2-7b.yaml]\nobjectives: [latency]\n' "$srcdir" > "$tmp/sw/dup2.yaml"
"$S" sweep "$tmp/sw/dup.yaml" --quiet > "$tmp/out" 2> "$tmp/err"; r1=$?
"$S" sweep "$tmp/sw/dup2.yaml" --quiet > "$tmp/out2" 2> "$tmp/err2"; r2=$?
if [ $r1 = 1 ] && [ $r2 = 1 ] && [ ! -s "$tmp/out" ] && [ ! -s "$tmp/out2" ] &&
    grep -q "dup.yaml:5:19: axis gpu: 'NVIDIA H100 SXM5 80GB' is the same value as 'h100-sxm'" "$tmp/err" &&
    grep -q "dup2.yaml:5:[0-9]*: axis workload: '.*/workloads/llama2-7b.yaml' is the same value as 'llama2-7b'" "$tmp/err2"; then
    ok "sweep: one preset by id and by name, or by id and by path, is a value listed twice (FILE:LINE:COL)"
else not_ok "sweep: one preset named two ways" "r=$r1/$r2 $(cat "$tmp/err" "$tmp/err2")"; fi
sed 's/^constraints: .*/constraints: [fits, "goodput >= 1"]/' "$srcdir/workloads/sweeps/gpu-batch-dtype.yaml" > "$tmp/sw/con.yaml"
"$S" sweep "$tmp/sw/con.yaml" --quiet > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && [ ! -s "$tmp/out" ] && grep -q "con.yaml:[0-9]*:[0-9]*: constraints: goodput is not defined for evaluate: gpu" "$tmp/err"; then ok "sweep: a constraint on a metric the evaluator lacks is FILE:LINE:COL (not an empty front)"; else not_ok "sweep: a constraint the evaluator lacks" "rc=$rc $(cat "$tmp/err")"; fi
(cd "$srcdir" && "$S" sweep workloads/sweeps/gpu-batch-dtype.yaml --quiet --out data/measured) > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "inside strata's data folder (data/)" "$tmp/err" && [ ! -e "$srcdir/data/measured/points.csv" ]; then ok "sweep --out into data/ (the committed measurements): refused, nothing written"; else not_ok "sweep --out into data/" "rc=$rc $(cat "$tmp/err")"; fi
"$S" sweep "$srcdir/workloads/sweeps/serve-techniques.yaml" --quiet --out "$tmp/sw/out" > /dev/null 2>&1
# a scenario variable other than ${shared} is an error at its value, not text passed on
printf 'scenario: Z\ntitle: t\ncommand: eval\noperands: [gpt2-small]\noptions: {gpu: "${bogus}"}\nreport:\n  - {metric: total_s, label: t}\n' > "$tmp/scb.yaml"
"$S" suite "$tmp/scb.yaml" > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q 'scb.yaml:5:16: option .gpu.: unknown variable .${bogus}.' "$tmp/err"; then ok "suite: an unknown \${...} variable is FILE:LINE:COL"; else not_ok "suite: unknown variable" "rc=$rc $(cat "$tmp/err")"; fi
# a range step of 0 is named as such (it was "takes exactly one of ...")
printf 'sweep: z\nevaluate: gpu\naxes:\n  batch: {from: 1, to: 8, step: 0}\n' > "$tmp/step0.yaml"
"$S" sweep "$tmp/step0.yaml" > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "step0.yaml:4:33: step: a range's step must be above 0" "$tmp/err"; then ok "sweep: a range step of 0 is FILE:LINE:COL at the step"; else not_ok "sweep: range step 0" "rc=$rc $(cat "$tmp/err")"; fi
# a sweep whose every point is refused says why and fails (exit 1)
printf 'sweep: allbad\nevaluate: serve\nfixed: {requests: 20, lengths: "fixed:200000,50"}\naxes:\n  qps: [1, 2]\n' > "$tmp/allbad.yaml"
"$S" sweep "$tmp/allbad.yaml" --quiet > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "no valid point: all 2 were refused; the first (#0): request 0 has 200000 + 50 tokens, beyond llama3.1-8b's max_model_len 131072" "$tmp/err"; then ok "sweep: no valid point is an error with the first reason"; else not_ok "sweep: no valid point" "rc=$rc $(cat "$tmp/err")"; fi
# a slice of a split run (--range) is reported as it is, nothing valid or not
"$S" sweep "$tmp/allbad.yaml" --quiet --range 0:1 --json > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 0 ] && jq -e '.valid == 0 and .evaluated == 1' "$tmp/out" > /dev/null; then ok "sweep --range: a slice with no valid point is not an error"; else not_ok "sweep --range slice with no valid point" "rc=$rc $(cat "$tmp/err")"; fi
check "sweep --out: an invalid point carries its reason (CSV and JSON)" \
    sh -c "grep ',invalid,' '$tmp/sw/out/points.csv' | grep -q 'speculative decoding is modelled with' && jq -e '[.points[] | select(.status == \"invalid\") | .reason | length > 0] | length > 0 and all' '$tmp/sw/out/points.json' > /dev/null"

# sweep --mpi (the brief's cluster launcher, Open MPI): ranks split the
# points, rank 0 gathers them; the files, stdout and JSON are byte for byte
# what one process writes. Open MPI frees not all it holds at exit, so the
# leak check is off for mpirun's ranks (the single-process runs keep it).
if [ -n "${STRATA_MPIRUN:-}" ] && [ -x "$STRATA_MPIRUN" ]; then
    mpi() { OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
            ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" "$STRATA_MPIRUN" --oversubscribe "$@"; }
    sw="$srcdir/workloads/sweeps/train-split.yaml"
    "$S" sweep "$sw" --quiet --threads 2 --out "$tmp/mpi0" > "$tmp/mpi0.txt" 2> "$tmp/err"
    mpi -n 3 "$S" sweep "$sw" --mpi --quiet --threads 1 --out "$tmp/mpi3" > "$tmp/mpi3.txt" 2> "$tmp/mpi.err"; rc=$?
    same=1
    for f in points.csv front.csv points.json front.json; do cmp -s "$tmp/mpi0/$f" "$tmp/mpi3/$f" || same=0; done
    if [ $rc = 0 ] && [ $same = 1 ] && [ -s "$tmp/mpi3/points.csv" ]; then ok "sweep --mpi on 3 ranks: points.csv, front.csv, points.json, front.json identical to one process"
    else not_ok "sweep --mpi on 3 ranks: the four files identical to one process" "rc=$rc same=$same $(cat "$tmp/mpi.err")"; fi
    check "sweep --mpi: rank 0 prints what one process prints (the --out path aside)" \
        sh -c "sed 's#$tmp/mpi[03]##' '$tmp/mpi0.txt' > '$tmp/a.txt' && sed 's#$tmp/mpi[03]##' '$tmp/mpi3.txt' > '$tmp/b.txt' && cmp -s '$tmp/a.txt' '$tmp/b.txt'"
    # a serving sweep (simulations, invalid points with reasons), 4 ranks
    "$S" sweep "$srcdir/workloads/sweeps/serve-techniques.yaml" --quiet --json > "$tmp/mpis0.json" 2> /dev/null
    mpi -n 4 "$S" sweep "$srcdir/workloads/sweeps/serve-techniques.yaml" --mpi --quiet --json > "$tmp/mpis4.json" 2> "$tmp/mpi.err"
    check "sweep --mpi on 4 ranks: a serving sweep's JSON front identical to one process" cmp "$tmp/mpis0.json" "$tmp/mpis4.json"
    # more ranks than points: the idle ranks send nothing, the count holds
    mpi -n 4 "$S" sweep "$sw" --mpi --quiet --range 10:12 --json > "$tmp/mpir.json" 2> "$tmp/mpi.err"
    check "sweep --mpi --range 10:12 on 4 ranks: 2 points evaluated, first 10" \
        jq -e '.first == 10 and .count == 2 and .evaluated == 2' "$tmp/mpir.json"
    # a bad file is every rank's error: said once, exit non-zero
    mpi -n 3 "$S" sweep "$tmp/no-such-sweep.yaml" --mpi > /dev/null 2> "$tmp/mpi.err"; rc=$?
    n=$(grep -c "no-such-sweep.yaml: cannot open" "$tmp/mpi.err")
    if [ $rc != 0 ] && [ "$n" = 1 ]; then ok "sweep --mpi with a missing file: one message (rank 0's), non-zero exit"
    else not_ok "sweep --mpi with a missing file: one message, non-zero exit" "rc=$rc n=$n $(cat "$tmp/mpi.err")"; fi
    # the file on rank 0's side only (a cluster without a shared folder):
    # rank 1 cannot open it; every rank stops at once, rank 1 says why
    cp "$sw" "$tmp/mpi-local.yaml"
    printf '#!/bin/sh\n[ "$OMPI_COMM_WORLD_RANK" = 1 ] && cd /\nexec "%s" "$@"\n' "$S" > "$tmp/mpi-wrap.sh"
    chmod +x "$tmp/mpi-wrap.sh"
    (cd "$tmp" && mpi -n 3 timeout 60 "$tmp/mpi-wrap.sh" sweep mpi-local.yaml --mpi --quiet > /dev/null 2> "$tmp/mpi.err"); rc=$?
    if [ $rc != 0 ] && [ $rc != 124 ] && grep -q "MPI rank 1 of 3: mpi-local.yaml: cannot open" "$tmp/mpi.err"; then ok "sweep --mpi with the file missing on one rank: no hang, that rank says why"
    else not_ok "sweep --mpi with the file missing on one rank: no hang" "rc=$rc $(cat "$tmp/mpi.err")"; fi
else
    for t in "sweep --mpi on 3 ranks: the four files identical to one process" "sweep --mpi: rank 0 prints what one process prints" \
             "sweep --mpi on 4 ranks: a serving sweep's JSON identical" "sweep --mpi --range on more ranks than points" \
             "sweep --mpi with a missing file" "sweep --mpi with the file missing on one rank"; do
        skip_test "$t" "built without Open MPI (install libopenmpi-dev openmpi-bin, re-run configure)"
    done
fi

"$S" coll allreduce --bytes 1MiB --chunk 64KiB > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q -- "--chunk sizes the simulation's chunks; add --sim" "$tmp/err"; then ok "coll --chunk without --sim is refused, not ignored"; else not_ok "coll --chunk without --sim is refused" "rc=$rc $(cat "$tmp/err")"; fi
"$S" validate neusight --min-tokens 64 > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q -- "--min-tokens is for vidur" "$tmp/err"; then ok "validate neusight --min-tokens is refused, not ignored"; else not_ok "validate neusight --min-tokens is refused" "rc=$rc $(cat "$tmp/err")"; fi
"$S" eval llama2-7b --phase decode --seq 100 --kv 50 > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q -- "--seq and --kv both set decode's context" "$tmp/err"; then ok "eval decode with --seq and --kv: refused (one set the other aside)"; else not_ok "eval decode with --seq and --kv: refused" "rc=$rc $(cat "$tmp/err")"; fi
sed "s#^gpu: .*#gpu: $srcdir/presets/node/dgx-a100.yaml#" "$srcdir/presets/node/hgx-a100-4gpu.yaml" > "$tmp/badnode.yaml"
"$S" coll allreduce --bytes 1MiB --cluster "$tmp/badnode.yaml" > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "badnode.yaml:[0-9]*:6: key 'gpu': .*dgx-a100.yaml is a node file, but a gpu is needed here" "$tmp/err"; then ok "a node used as --cluster reports its own fault (its gpu), not 'a cluster is needed'"; else not_ok "a node used as --cluster reports its own fault" "rc=$rc $(cat "$tmp/err")"; fi
"$S" map --arch eyeriss-like --layer resnet50:conv1 --budget 0.000001 > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "time budget ran out" "$tmp/err"; then ok "map: a budget too short to find a mapping says so (not 'no valid mapping fits')"; else not_ok "map: a budget too short says so" "rc=$rc $(cat "$tmp/err")"; fi

# suite: the brief's scenarios as strata command lines (strata-scenario(5))
SC=$T/scenarios
nfiles=$(ls "$srcdir/workloads/scenarios" | grep -c '\.yaml$')
n=$("$S" suite --list --json | jq '.scenarios | length')
if [ "$n" = "$nfiles" ] && [ "$n" -ge 26 ]; then ok "suite --list: every shipped scenario file ($n)"; else not_ok "suite --list: every shipped scenario file" "listed $n of $nfiles"; fi
"$S" suite "$SC/good" --json > "$tmp/suite.json" 2> "$tmp/err"; rc=$?
if [ $rc = 0 ] && jq -e '.ok == 2 and .failed == 0' "$tmp/suite.json" > /dev/null; then ok "suite: two good scenarios run (exit 0)"; else not_ok "suite: two good scenarios run (exit 0)" "rc=$rc" "$(cat "$tmp/err")"; fi
# a number the suite prints is the number its command line prints, run apart
jq -r '.scenarios[0].cases[1].argv[1:][]' "$tmp/suite.json" > "$tmp/argv"
set -- ; while IFS= read -r a; do set -- "$@" "$a"; done < "$tmp/argv"
direct=$("$S" "$@" | jq '.total_s')
viasuite=$(jq '.scenarios[0].cases[1].metrics[0].value' "$tmp/suite.json")
if [ -n "$direct" ] && [ "$direct" = "$viasuite" ]; then ok "suite: a case's value is its command line's own output"; else not_ok "suite: a case's value is its command line's own output" "direct=$direct suite=$viasuite"; fi
check "suite: the band comes from the output's lo_s and hi_s" \
    jq -e '.scenarios[0].cases[1].metrics[0] | .lo < .value and .value < .hi' "$tmp/suite.json"
# speedup_over: the base case's time over this case's, computed apart
check "suite: speedup = base time / case time (1 for the base)" \
    jq -e '.scenarios[0].cases as $c | ($c[0].metrics[0].value / $c[1].metrics[0].value) as $s
           | (($c[1].metrics[0].speedup - $s) | fabs) < 1e-12 * $s and $c[0].metrics[0].speedup == 1' "$tmp/suite.json"
check "suite: text values come through as text (gpu, algorithm)" \
    jq -e '.scenarios[0].cases[0].metrics[2].value == "a100-80gb-sxm" and .scenarios[1].cases[0].metrics[1].value == "ring"' "$tmp/suite.json"
# the suite's commands write no file, however an option is spelt
mkdir -p "$tmp/scn"
printf 'scenario: W\ntitle: t\ncommand: serve\noperands: [gpt2-small]\noptions: {qps: 1, requests: 2, lengths: "fixed:10,10", per-req: %s}\nreport: [ttft_s.mean]\n' "$tmp/scn/written.csv" > "$tmp/scn/w.yaml"
"$S" suite "$tmp/scn/w.yaml" > "$tmp/out" 2>&1; rc=$?
if [ $rc = 1 ] && [ ! -e "$tmp/scn/written.csv" ] && grep -q "STRATA_READ_ONLY is set" "$tmp/out"; then ok "suite: an abbreviated output option writes nothing (STRATA_READ_ONLY)"; else not_ok "suite: an abbreviated output option writes nothing" "rc=$rc" "$(cat "$tmp/out")"; fi
printf 'scenario: W\ntitle: t\ncommand: serve\noperands: [gpt2-small, "--per-request=x.csv"]\nreport: [ttft_s.mean]\n' > "$tmp/scn/w2.yaml"
"$S" suite "$tmp/scn/w2.yaml" > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "w2.yaml:4:24: operands: '--per-request=x.csv' starts with '-'" "$tmp/err"; then ok "suite: an operand that reads as an option is FILE:LINE:COL"; else not_ok "suite: an operand that reads as an option" "rc=$rc $(cat "$tmp/err")"; fi
# a command line longer than 8 KiB is printed whole (500 quotes, 4 bytes each once quoted, in 5 options)
q=$(printf "%500s" | tr ' ' "'")
{ printf 'scenario: L\ntitle: t\ncommand: eval\noperands: [gpt2-small]\noptions:\n'
  for k in a b c d e; do printf '  %s: "%s"\n' "$k" "$q"; done
  printf 'report: [total_s]\n'; } > "$tmp/scn/long.yaml"
n=$("$S" suite "$tmp/scn/long.yaml" --list | awk '/\$ strata/ { print length($0) }')
if "$S" suite "$tmp/scn/long.yaml" --list | grep -q -- "' --json$" && [ "${n:-0}" -gt 10000 ]; then ok "suite --list: a 10 kB command line is printed whole, to its --json"; else not_ok "suite --list: a long command line is printed whole" "length ${n:-?}"; fi
# a null in the output is null in the suite's JSON; ratios of non-times are case over base
printf 'scenario: N\ntitle: t\ncommand: serve\noperands: [gpt2-small]\noptions: {qps: 1, requests: 2, lengths: "fixed:10,1"}\nreport: [tpot_s]\n' > "$tmp/scn/n.yaml"
check "suite: a null metric (TPOT of one-token outputs) is null, and the scenario ok" \
    sh -c "'$S' suite '$tmp/scn/n.yaml' --json | jq -e '.ok == 1 and .scenarios[0].cases[0].metrics[0].value == null'"
printf 'scenario: R\ntitle: t\ncommand: eval\noperands: [gpt2-small]\noptions: {seq: 128}\ncases: [{case: b1, batch: 1}, {case: b4, batch: 4}]\nreport: [{metric: flops, speedup_over: b1}]\n' > "$tmp/scn/r.yaml"
check "suite: speedup_over a FLOP count is the case over the base (4 at 4x the batch), not its inverse" \
    sh -c "'$S' suite '$tmp/scn/r.yaml' --json | jq -e '.scenarios[0].cases[1].metrics[0] | ((.speedup - 4) | fabs) < 1e-9'"
check "serve --colocate text: a model without TPOT samples prints '-', not 0" \
    sh -c "'$S' serve gpt2-small --gpu h100-sxm --colocate gpt2-medium --qps 2 --requests 4 --lengths fixed:100,1 | grep -q 'TPOT mean - p99 -'"
# results do not depend on how many commands run at once
"$S" suite "$SC/good" "$SC/fail" --jobs 1 > "$tmp/j1" 2>&1
"$S" suite "$SC/good" "$SC/fail" --jobs 5 > "$tmp/j5" 2>&1
if cmp -s "$tmp/j1" "$tmp/j5"; then ok "suite: --jobs 1 and --jobs 5 print the same bytes"; else not_ok "suite: --jobs 1 and --jobs 5 print the same bytes" "$(diff "$tmp/j1" "$tmp/j5" | head -5)"; fi
# a failing command or a missing metric fails its scenario, not the others
"$S" suite "$SC/fail" --json > "$tmp/fail.json" 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && jq -e '.ok == 1 and .failed == 2' "$tmp/fail.json" > /dev/null; then ok "suite: failing scenarios exit 1, the good one still runs"; else not_ok "suite: failing scenarios exit 1, the good one still runs" "rc=$rc" "$(head -c 300 "$tmp/fail.json")"; fi
check "suite: a refused command line reports the command's own message" \
    jq -e '.scenarios[] | select(.scenario == "F1") | .cases[0].error | test("exited 2: strata train: --gpus 8 is not a multiple of tp")' "$tmp/fail.json"
check "suite: a metric the output lacks is FILE:LINE:COL with a did-you-mean" \
    jq -e '.scenarios[] | select(.scenario == "F2") | .cases[0].metrics[1].error | test("fail/metric.yaml:11:5: metric .totl_s.: no key .totl_s.; did you mean .total_s.")' "$tmp/fail.json"
# a bad scenario file stops the suite before anything runs
"$S" suite "$SC/good" "$SC/bad" > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "bad/bad.yaml:5:1: scenario: unknown key 'optinos'; did you mean 'options'?" "$tmp/err" && [ ! -s "$tmp/out" ]; then ok "suite: a bad file is FILE:LINE:COL and nothing runs"; else not_ok "suite: a bad file is FILE:LINE:COL and nothing runs" "rc=$rc" "$(cat "$tmp/err")" "$(head -c 200 "$tmp/out")"; fi
"$S" suite --filter 'no such scenario' > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "no scenario matches --filter" "$tmp/err"; then ok "suite: a filter that matches nothing is an error"; else not_ok "suite: a filter that matches nothing is an error" "rc=$rc $(cat "$tmp/err")"; fi
"$S" suite --jobs 0 > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 2 ]; then ok "suite --jobs 0 is a usage error"; else not_ok "suite --jobs 0 is a usage error" "rc=$rc"; fi
# scenarios that read the measured data are skipped without it, not failed
STRATA_SHARED=$tmp/no-such-data "$S" suite --filter '^I2\.3$' --json > "$tmp/skip.json" 2> "$tmp/err"; rc=$?
if [ $rc = 0 ] && jq -e '.skipped == 1 and .scenarios[0].status == "skipped"' "$tmp/skip.json" > /dev/null; then ok "suite: I2.3 is skipped without the measured data (exit 0)"; else not_ok "suite: I2.3 is skipped without the measured data (exit 0)" "rc=$rc $(cat "$tmp/err")"; fi
# the shipped suite: every scenario runs and reports every metric it names
"$S" suite --json > "$tmp/all.json" 2> "$tmp/err"; rc=$?
if [ $rc = 0 ] && jq -e '.failed == 0 and .ok + .skipped == (.scenarios | length) and .skipped <= 1' "$tmp/all.json" > /dev/null; then ok "suite: the shipped scenarios all run"; else not_ok "suite: the shipped scenarios all run" "rc=$rc" "$(jq -c '[.scenarios[] | select(.status == "failed") | {scenario, cases: [.cases[] | .error // [.metrics[] | .error // empty]]}]' "$tmp/all.json" 2>&1 | head -c 600)" "$(cat "$tmp/err")"; fi
# shipped scenarios, checked against how the quantities relate
check "suite T1.1: the all-reduce is mostly hidden (0 < exposed < total)" \
    jq -e '.scenarios[] | select(.scenario == "T1.1") | .cases[0].metrics | (.[1].value > .[2].value) and (.[2].value > 0) and (.[3].value > 0.5)' "$tmp/all.json"
check "suite T4.1: FP8 is faster than BF16 and the ratio is the speedup" \
    jq -e '.scenarios[] | select(.scenario == "T4.1") | .cases as $c | ($c[0].metrics[0].value / $c[1].metrics[0].value) as $s | $s > 1 and (($c[1].metrics[0].speedup - $s) | fabs) < 1e-12 * $s' "$tmp/all.json"

# tools/neusight-heldout: a NeuSight checkout's kernel rows of GPUs the fit never saw are
# scored; rows of the six fitted GPUs are left to ../shared/data (hand-made rows: one P4,
# one H100; no labels, so kernels alone)
NS=$tmp/ns
mkdir -p "$NS/scripts/asplos/label" "$NS/scripts/asplos/data/DLmodel_configs" "$NS/scripts/asplos/data/dataset/test"
{
    echo 'OPName,Latency,Device,Torch Version,CUDNN Version,Kernel Name,Warps per SM,Blocks per SM,Grid x,Grid y,Grid z,Block x,Block y,Block z,CUDA Version,Kernels,B,M,N,K'
    echo 'linear,0.5,Tesla P4,p2.1.0,8902,maxwell_sgemm_128x64_tn,0,0,0,0,0,0,0,0,cu121,;maxwell_sgemm_128x64_tn,1,1024,1024,1024'
    echo 'linear,0.05,NVIDIA H100 80GB HBM3,p2.1.0,8902,"sm80_xmma_gemm_f32f32_tn_n_tilesize128x128x8, quoted",0,0,0,0,0,0,0,0,cu121,;x,1,1024,1024,1024'
} > "$NS/scripts/asplos/data/dataset/test/linear.csv"
STRATA_BIN=$S sh "$srcdir/tools/neusight-heldout" "$NS" --json > "$tmp/ns.json" 2> "$tmp/err"; rc=$?
if [ $rc = 0 ] && jq -e '(.kernels | length) == 1 and .kernels[0].device == "NVIDIA H100 80GB HBM3" and .kernels[0].op == "linear" and .kernels[0].n == 1 and .models == []' "$tmp/ns.json" > /dev/null; then ok "neusight-heldout: scores the held-out GPU's kernel row, not the fitted P4's"; else not_ok "neusight-heldout: scores the held-out GPU's kernel row, not the fitted P4's" "rc=$rc $(cat "$tmp/err")" "$(head -c 300 "$tmp/ns.json")"; fi
rm "$NS/scripts/asplos/data/dataset/test/linear.csv"
STRATA_BIN=$S sh "$srcdir/tools/neusight-heldout" "$NS" > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "neither held-out kernel rows" "$tmp/err"; then ok "neusight-heldout: a checkout with nothing held out is an error"; else not_ok "neusight-heldout: a checkout with nothing held out is an error" "rc=$rc $(cat "$tmp/err")"; fi

# FlashAttention-3 (--fa3, --attn flash3): Hopper only, and faster than FlashAttention-2 there
# (full tensor rate against FA2's synchronous MMAs at half)
"$S" kernel flash --gpu h100-sxm --b 1 --heads 32 --q-len 8192 --kv-len 8192 --head-dim 128 --fa3 --json > "$tmp/fa3.json"
"$S" kernel flash --gpu h100-sxm --b 1 --heads 32 --q-len 8192 --kv-len 8192 --head-dim 128 --json > "$tmp/fa2.json"
check "kernel flash --fa3: names its kernel and runs faster than FlashAttention-2 on an H100" \
    jq -e --slurpfile b "$tmp/fa2.json" '.kernel == "flashattention-3" and .pass == "forward" and $b[0].kernel == "flashattention-2" and .time_s < $b[0].time_s' "$tmp/fa3.json"
# SDPA's dispatch: FlashAttention-2 needs Ampere, 16 bits and head dims up to 256
"$S" kernel flash --gpu v100-pcie-32gb --dtype fp16 --b 1 --heads 16 --q-len 1024 --kv-len 1024 --head-dim 64 --json > "$tmp/me1.json"
"$S" kernel flash --gpu h100-sxm --b 1 --heads 4 --q-len 1024 --kv-len 1024 --head-dim 512 --json > "$tmp/me2.json"
check "kernel flash: named memory-efficient where PyTorch runs that kernel (V100; head dim 512)" \
    jq -e --slurpfile b "$tmp/me2.json" '.kernel == "memory-efficient" and $b[0].kernel == "memory-efficient"' "$tmp/me1.json"
"$S" kernel gemm --gpu h100-sxm --m 4096 --n 4096 --k 4096 --json > "$tmp/kj.json"
check "kernel --json: compute_s and memory_s as printed, achieved_tflops = flops / time_s" \
    jq -e '(.compute_s > 0) and (.memory_s > 0) and ((.achieved_tflops / (.flops / .time_s / 1e12) - 1) | fabs) < 1e-9 and .time_s >= ([.compute_s, .memory_s] | max)' "$tmp/kj.json"
"$S" eval llama3-8b --gpu a100-80gb-sxm --attn flash3 > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "Hopper only" "$tmp/err" && grep -q -- "--attn flash" "$tmp/err" && ! grep -q "^usage" "$tmp/err"; then ok "eval --attn flash3 on an A100: exit 1 naming --attn flash"; else not_ok "eval --attn flash3 on an A100: exit 1 naming --attn flash" "rc=$rc $(cat "$tmp/err")"; fi
"$S" eval llama3-8b --gpu h100-sxm --attn flash3 --seq 8192 --batch 2 --json > "$tmp/e3.json"
"$S" eval llama3-8b --gpu h100-sxm --attn flash --seq 8192 --batch 2 --json > "$tmp/e2.json"
check "eval --attn flash3: the step reports flash3 and is faster than flash at 8k tokens" \
    jq -e --slurpfile b "$tmp/e2.json" '.attention == "flash3" and $b[0].attention == "flash" and .total_s < $b[0].total_s' "$tmp/e3.json"
"$S" serve llama3-8b --gpu h100-sxm --qps 2 --requests 40 --lengths fixed:4096,64 --attn flash3 --json > "$tmp/s3.json"
"$S" serve llama3-8b --gpu h100-sxm --qps 2 --requests 40 --lengths fixed:4096,64 --attn flash --json > "$tmp/s2.json"
check "serve --attn flash3: JSON says so and long prompts prefill sooner than with FlashAttention-2" \
    jq -e --slurpfile b "$tmp/s2.json" '.attention == "flash3" and $b[0].attention == "flash" and .ttft_s.mean < $b[0].ttft_s.mean' "$tmp/s3.json"
# by default serve picks the kernel as vLLM does: FA3 on Hopper, FA2 elsewhere
"$S" serve llama3-8b --gpu h100-sxm --qps 2 --requests 40 --lengths fixed:4096,64 --json > "$tmp/sd.json"
"$S" serve llama3-8b --gpu a100-80gb-sxm --qps 2 --requests 40 --lengths fixed:4096,64 --json > "$tmp/sa.json"
check "serve's default attention: flash3 on an H100 (same TTFT as --attn flash3), flash on an A100" \
    jq -e --slurpfile h "$tmp/s3.json" --slurpfile a "$tmp/sa.json" '.attention == "flash3" and .ttft_s.mean == $h[0].ttft_s.mean and $a[0].attention == "flash"' "$tmp/sd.json"
"$S" plan llama2-7b --cluster dgx-a100 --gpus 8 --dtype bf16 --fa3 > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "Hopper only" "$tmp/err" && grep -q -- "train and plan: --flash" "$tmp/err"; then ok "plan --fa3 on A100s: refused before any search"; else not_ok "plan --fa3 on A100s: refused before any search" "rc=$rc $(cat "$tmp/err")"; fi
"$S" eval llama3-8b --gpu h100-sxm --attn flash3 --dtype fp32 > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "takes FP16, BF16 or FP8" "$tmp/err"; then ok "eval --attn flash3 --dtype fp32: refused with the reason"; else not_ok "eval --attn flash3 --dtype fp32: refused with the reason" "rc=$rc $(cat "$tmp/err")"; fi
"$S" train llama3-8b --cluster dgx-h100 --gpus 8 --dtype bf16 --fa3 --global-batch 8 --seq 4096 --json > "$tmp/t3.json"
"$S" train llama3-8b --cluster dgx-h100 --gpus 8 --dtype bf16 --flash --global-batch 8 --seq 4096 --json > "$tmp/t2.json"
check "train --fa3 on H100s: faster than --flash, the same memory, and config says flash3" \
    jq -e --slurpfile b "$tmp/t2.json" '.config.attention == "flash3" and $b[0].config.attention == "flash" and .iteration_s < $b[0].iteration_s and .memory_per_gpu_bytes == $b[0].memory_per_gpu_bytes' "$tmp/t3.json"
"$S" train llama2-7b --cluster dgx-a100 --gpus 8 --dtype bf16 --fa3 --global-batch 8 > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "Hopper only" "$tmp/err"; then ok "train --fa3 on A100s: refused with the reason"; else not_ok "train --fa3 on A100s: refused with the reason" "rc=$rc $(cat "$tmp/err")"; fi

# sweeps: attn takes flash3 in GPU, training and serving sweeps; a point on a GPU without it is
# invalid with the reason, not an error
cat > "$tmp/tr-attn.yaml" <<'YAML'
sweep: train-attn
evaluate: train
fixed: {cluster: dgx-h100, workload: llama3-8b, gpus: 8, global_batch: 8, seq: 4096, dtype: bf16}
axes:
  attn: [flash, flash3]
objectives: [latency]
YAML
"$S" sweep "$tmp/tr-attn.yaml" --out "$tmp/tra" --quiet > /dev/null 2> "$tmp/err"
check "sweep evaluate train: attn flash3 runs faster than flash on H100s" \
    jq -e '[.points[] | .latency_s] as $l | (.points | length) == 2 and $l[1] < $l[0] and .points[1].params.attn == "flash3"' "$tmp/tra/points.json"
cat > "$tmp/sv-attn.yaml" <<'YAML'
sweep: serve-attn
evaluate: serve
fixed: {workload: llama3-8b, qps: 2, requests: 20, lengths: "fixed:2048,16"}
axes:
  gpu: [h100-sxm, a100-80gb-sxm]
  attn: [flash3]
objectives: [latency]
YAML
"$S" sweep "$tmp/sv-attn.yaml" --out "$tmp/sva" --quiet > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 0 ] && jq -e '[.points[] | .status] == ["ok", "invalid"] and (.points[1].reason | test("Hopper only"))' "$tmp/sva/points.json" > /dev/null; then ok "sweep evaluate serve: attn flash3 on an A100 is an invalid point with the reason"; else not_ok "sweep evaluate serve: attn flash3 on an A100 is an invalid point with the reason" "rc=$rc $(cat "$tmp/err")" "$(head -c 400 "$tmp/sva/points.json")"; fi

# --dtype int8 on a transformer is W8A8 (as serve --quant w8a8): the blocks' GEMMs in INT8,
# attention in FP16 (no attention kernel takes INT8), embeddings/LM head and KV in 16 bits
"$S" eval llama3-8b --gpu h100-sxm --dtype int8 --attn flash --seq 2048 --kernels --json > "$tmp/i8.json"
"$S" eval llama3-8b --gpu h100-sxm --dtype fp16 --attn flash --seq 2048 --kernels --json > "$tmp/f16.json"
check "eval --dtype int8: W8A8: INT8 block GEMMs with input casts, FP16 attention, 16-bit KV" \
    jq -e --slurpfile h "$tmp/f16.json" '
      def op($j; $n): [$j.operators[] | select(.name == $n)][0];
      op(.; "block.attn.flash").time_s == op($h[0]; "block.attn.flash").time_s and
      op(.; "block.attn.qkv").time_s < op($h[0]; "block.attn.qkv").time_s and
      op(.; "block.attn.qkv.cast") != null and
      .memory.kv_cache_bytes == $h[0].memory.kv_cache_bytes and
      .memory.weights_bytes > 0.5 * $h[0].memory.weights_bytes and .memory.weights_bytes < 0.65 * $h[0].memory.weights_bytes' "$tmp/i8.json"

# a training sweep's point and `strata train` with the same settings agree: under PP both default
# to microbatches of one sequence (global batch / dp)
cat > "$tmp/pp-sweep.yaml" <<'YAML'
sweep: pp-default
evaluate: train
fixed: {cluster: dgx-h100, workload: llama2-7b, global_batch: 64, seq: 4096, attn: flash}
axes:
  pp: [2]
objectives: [latency]
YAML
"$S" sweep "$tmp/pp-sweep.yaml" --out "$tmp/pps" --quiet > /dev/null 2> "$tmp/err"
"$S" train llama2-7b --cluster dgx-h100 --pp 2 --global-batch 64 --seq 4096 --flash --json > "$tmp/ppt.json"
check "sweep evaluate train and strata train agree under PP (the same microbatch default)" \
    jq -e --slurpfile t "$tmp/ppt.json" '.points[0].latency_s == $t[0].iteration_s and .points[0].memory_bytes == $t[0].memory_per_gpu_bytes' "$tmp/pps/points.json"
# a GPU sweep's point and `strata eval` with the same settings report the
# same memory (one rule, st_step_memory): inference and training, a
# transformer and a CNN
cat > "$tmp/mem-sweep.yaml" <<'YAML'
sweep: mem-agree
evaluate: gpu
fixed: {gpu: h100-sxm, batch: 4}
axes:
  workload: [gpt2-large, resnet50]
  phase: [prefill, train]
objectives: [latency, memory]
YAML
"$S" sweep "$tmp/mem-sweep.yaml" --out "$tmp/mems" --quiet > /dev/null 2> "$tmp/err"
for w in gpt2-large resnet50; do for ph in prefill train; do
    "$S" eval $w --gpu h100-sxm --batch 4 --phase $ph --json > "$tmp/mem-$w-$ph.json" 2> "$tmp/err"
done; done
check "sweep evaluate gpu and strata eval report the same memory (prefill and train, gpt2-large and resnet50)" \
    jq -e -n --slurpfile p "$tmp/mems/points.json" --slurpfile a "$tmp/mem-gpt2-large-prefill.json" --slurpfile b "$tmp/mem-gpt2-large-train.json" \
      --slurpfile c "$tmp/mem-resnet50-prefill.json" --slurpfile d "$tmp/mem-resnet50-train.json" '
      def m($w; $ph): [$p[0].points[] | select(.params.workload == $w and .params.phase == $ph) | .memory_bytes][0];
      m("gpt2-large"; "prefill") == $a[0].memory.bytes and m("gpt2-large"; "train") == $b[0].memory.bytes and
      m("resnet50"; "prefill") == $c[0].memory.bytes and m("resnet50"; "train") == $d[0].memory.bytes and
      $d[0].memory.activations_counted and $d[0].memory.activation_bytes > 0'

# bad input found by review (2026-11-27): each a clear error, the right exit
# code, nothing on stdout
"$S" kernel elementwise --rows 64 --cols 64 --inputs 4294967298 > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q -- "--inputs" "$tmp/err" && [ ! -s "$tmp/out" ]; then ok "kernel --inputs past 64: usage error (no wrap at 2^32)"; else not_ok "kernel --inputs 4294967298" "rc=$rc $(cat "$tmp/err")"; fi
"$S" serve llama2-7b --qps 0x10 --requests 5 --lengths fixed:100,10 > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q -- "--qps: expected a number" "$tmp/err" && [ ! -s "$tmp/out" ]; then ok "serve --qps 0x10: usage error (decimal only)"; else not_ok "serve --qps 0x10" "rc=$rc $(cat "$tmp/err")"; fi
"$S" coll allreduce --bytes 64MiB --algo tree --cluster ib-a100 --gpus 16 --sim > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q -- "--sim --algo tree" "$tmp/err" && [ ! -s "$tmp/out" ]; then ok "coll --sim --algo tree: usage error before any work"; else not_ok "coll --sim --algo tree" "rc=$rc $(cat "$tmp/err")"; fi
"$S" ui < /dev/null > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "needs a terminal" "$tmp/err"; then ok "ui without a terminal: exit 1 (the environment, not the command line)"; else not_ok "ui without a terminal" "rc=$rc $(cat "$tmp/err")"; fi
sed '/^  conv: 98/d' "$srcdir/calibration/gpu-kernels.yaml" > "$tmp/nodisp.yaml"
"$S" kernel gemm --m 64 --n 64 --k 64 --coef "$tmp/nodisp.yaml" > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "nodisp.yaml:[0-9]*:[0-9]*: 'dispatch_us' has no 'conv' class" "$tmp/err" && [ ! -s "$tmp/out" ]; then ok "--coef with a dispatch class left out: FILE:LINE:COL error naming it"; else not_ok "--coef without dispatch_us conv" "rc=$rc $(cat "$tmp/err")"; fi
sed '/^tinygemm_wavefront_cycles/d' "$srcdir/calibration/gpu-kernels.yaml" > "$tmp/notiny.yaml"
"$S" kernel gemm --m 64 --n 4096 --k 4096 --int4-kernel tinygemm --coef "$tmp/notiny.yaml" > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "no tinygemm_wavefront_cycles" "$tmp/err" && [ ! -s "$tmp/out" ]; then ok "tinygemm with a table lacking its coefficient: an error, not a 6x fast price"; else not_ok "tinygemm without its coefficient" "rc=$rc $(cat "$tmp/err")"; fi
awk 'NR == 57 { sub(/read_bw_words: 16 /, "read_bw_words: 1e-300 ") } { print }' "$srcdir/presets/accel/eyeriss-like.yaml" > "$tmp/slowbw.yaml"
timeout 60 "$S" accel alexnet --arch "$tmp/slowbw.yaml" > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "slowbw.yaml:57:[0-9]*: key 'read_bw_words': 1e-300 words a cycle" "$tmp/err" && [ ! -s "$tmp/out" ]; then ok "accel preset with 1e-300 words a cycle: FILE:LINE:COL error, no hang"; else not_ok "accel read_bw_words 1e-300" "rc=$rc $(cat "$tmp/err")"; fi
head -1 "$srcdir/data/measured/h100/ops.csv" | sed 's/,latency_ms,/,latency_ms,latency_ms,/' > "$tmp/dupcol.csv"
mkdir -p "$tmp/dupcol" && cp "$tmp/dupcol.csv" "$tmp/dupcol/ops.csv"
"$S" validate neusight --data "$tmp/dupcol" > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "dupcol/ops.csv:1:[0-9]*: column 'latency_ms' appears twice" "$tmp/err" && [ ! -s "$tmp/out" ]; then ok "a CSV naming a column twice: FILE:1:COL error"; else not_ok "duplicate CSV column" "rc=$rc $(cat "$tmp/err")"; fi

# One rank's compute against strata's own H200 measurement of it
# (data/measured/h200/shard: a Megatron-LM rank on one GPU, no collectives,
# forward + backward, TorchScript-fused `jit` and `eager` variants): strata's
# train breakdown (forward + backward of the microbatch, less the TP
# all-reduces inside it), at boost as FP32 runs, within 5% of the range the
# two variants span, for the five ranks it prices there (161-164.5 ms for
# GPT-2 Large's DP rank at batch 4, ...). The sixth, the TP rank at batch 4,
# is the known miss (161.1 ms against 171.2-178.3; README, "Training").
if [ -f "$SH/neusight/models/gpt2_large.json" ]; then
    fails=""
    for c in "gpt2_large dp 4 1 1024" "gpt2_large dp 16 4 1024" "gpt2_large tp 16 16 1024" "gpt3_xl dp 4 1 2048" "gpt3_xl tp 4 4 2048"; do
        set -- $c
        "$S" train "$SH/neusight/models/$1.json" --cluster dgx-h200 --gpus 4 --$2 4 --microbatches 1 --global-batch $3 \
            --seq $5 --dtype fp32 --isolated --json > "$tmp/rank.json" 2> "$tmp/err" || fails="$fails $1/$2/$3:rc"
        tp=$([ "$2" = tp ] && echo 4 || echo 1)
        lo=$(awk -F, -v m="$1" -v b="$4" -v t="$tp" '$1 == m && $7 == b && $8 == t && $9 == "jit" { print $15 }' "$srcdir/data/measured/h200/shard/shard.csv")
        hi=$(awk -F, -v m="$1" -v b="$4" -v t="$tp" '$1 == m && $7 == b && $8 == t && $9 == "eager" { print $15 }' "$srcdir/data/measured/h200/shard/shard.csv")
        jq -e --arg lo "${lo:-0}" --arg hi "${hi:-0}" '($lo | tonumber) > 0 and
            ((.breakdown.forward_microbatch_s + .breakdown.backward_microbatch_s - .breakdown.tp_comm_s) * 1e3) as $ms |
            $ms >= 0.95 * ($lo | tonumber) and $ms <= 1.05 * ($hi | tonumber)' "$tmp/rank.json" > /dev/null || fails="$fails $1/$2/$3"
    done
    if [ -z "$fails" ]; then ok "train on the H200: five ranks' compute within 5% of data/measured/h200/shard (jit .. eager)"
    else not_ok "train on the H200: five ranks' compute within 5% of data/measured/h200/shard (jit .. eager)" "off:$fails"; fi
else
    skip_test "train on the H200 against data/measured/h200/shard" "../shared/data is absent (NeuSight's model configs)"
fi
# validate --samples: lib_split and predicted_lib_s price each library GEMM
# on the tile its kernel name gives; where the model picked that tile and
# split itself the two prices are one estimate, so they must agree to the
# digit; rows naming no tile leave both columns empty
"$S" validate neusight --data "$srcdir/data/measured/h100" --samples "$tmp/libtile.csv" > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 0 ] && head -1 "$tmp/libtile.csv" | grep -q ',lib_split,predicted_lib_s$' &&
   awk -F, 'NR == 1 { next }
            { n = NF; lt = $(n - 9); tile = $(n - 15); sk = $(n - 14); pred = $(n - 11); ls = $(n - 1); lp = $n }
            lt == "0x0" && (ls != "" || lp != "") { bad++ }
            lt != "0x0" && lp != "" { named++ }
            lt != "0x0" && lp != "" && tile == lt && sk == ls { same++; if (pred != lp) bad++ }
            END { exit !(bad == 0 && named >= 4000 && same >= 1000) }' "$tmp/libtile.csv"; then
    ok "validate --samples: the library tile's price (lib_split, predicted_lib_s) equals the model's where it picked that tile"
else
    not_ok "validate --samples: the library tile's price (lib_split, predicted_lib_s)" "rc=$rc $(head -c 300 "$tmp/err")"
fi
# NCCL's tree runs all-reduce only: auto never reports a tree broadcast,
# however many GPUs (64 on ib-h100, where an asked-for tree is faster)
check "coll broadcast: auto is NCCL's ring, even where strata's own tree would be faster" \
    sh -c "'$S' coll broadcast --bytes 64MiB --cluster ib-h100 --gpus 64 --json | jq -e '.algo == \"ring\" and ([.algorithms[] | select(.algo == \"tree\")][0].time_s < .time_s)'"
# an expert-parallel group larger than a node preset has no network to run
# its all-to-alls on: refused, not priced on NVLink
"$S" serve qwen3-30b-a3b --qps 4 --requests 20 --lengths fixed:500,50 --dp 16 --ep --cluster dgx-h100 > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "expert-parallel group spans DP 16 x TP 1 = 16 GPUs, beyond the 8 of node dgx-h100" "$tmp/err" && [ ! -s "$tmp/out" ]; then
    ok "serve --ep: a group beyond a node preset's GPUs is refused"
else
    not_ok "serve --ep: a group beyond a node preset's GPUs is refused" "rc=$rc $(cat "$tmp/err")"
fi
# map --layer picks one layer: a name two layers share is refused, and
# VGG-16's second 3x3 conv of block 1 (64 -> 64 channels on 224 x 224:
# 224^2 x 64 x 64 x 9 = 1,849.7 MMAC) can be picked by its own name
mkdir -p "$tmp/dupl"
sed 's/name: conv1_2,/name: conv1_1,/' "$srcdir/workloads/vgg16.yaml" > "$tmp/dupl/vgg-dup.yaml"
"$S" map --arch eyeriss-like --layer "$tmp/dupl/vgg-dup.yaml:conv1_1" > "$tmp/out" 2> "$tmp/err"; rc=$?
"$S" map --arch eyeriss-like --layer resnet50:conv2_1 > "$tmp/out2" 2> "$tmp/err2"; rc2=$?
if [ $rc = 1 ] && grep -q "has 2 layers named 'conv1_1' (conv1_1.conv, conv1_1.conv); give each layer" "$tmp/err" && [ ! -s "$tmp/out" ] &&
   [ $rc2 = 1 ] && grep -q "'conv2_1' holds 4 compute layers of resnet50 (conv2_1.conv1, conv2_1.conv2, conv2_1.conv3, conv2_1.downsample); name one of them" "$tmp/err2"; then
    ok "map --layer: a name two layers share is refused; a block's name lists its layers"
else
    not_ok "map --layer: a name two layers share is refused" "rc=$rc $(cat "$tmp/err")"
fi
check "map --layer vgg16:conv1_2: the 64 -> 64 channel conv (1,849.7 MMAC)" \
    sh -c "'$S' map --arch eyeriss-like --layer vgg16:conv1_2 --json | jq -e '.macs == 224 * 224 * 64 * 64 * 9'"
# without --gpus, train runs on one node of the cluster: a split that does
# not fit says so, and names the flag to pass
"$S" train llama2-7b --tp 8 --pp 2 > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q "does not fit the 8 GPUs of one ib-a100 node (the default without --gpus): pass --gpus 16" "$tmp/err" &&
   "$S" train llama2-7b --tp 8 --pp 2 --gpus 16 > /dev/null 2>&1; then
    ok "train: a split beyond the default one node names a --gpus that works"
else
    not_ok "train: a split beyond the default one node names a --gpus that works" "rc=$rc $(cat "$tmp/err")"
fi
# Marlin's shape limits (vLLM: N % 64, K % 128): K = 14,337 is refused
"$S" kernel gemm --m 512 --n 4096 --k 14337 --int4 > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q -- "--int4 (Marlin) needs --n a multiple of 64 and --k a multiple of 128" "$tmp/err" && [ ! -s "$tmp/out" ]; then
    ok "kernel --int4: a K Marlin cannot take is a usage error"
else
    not_ok "kernel --int4: a K Marlin cannot take is a usage error" "rc=$rc $(cat "$tmp/err")"
fi
# a spatial mapping entry without a permutation takes the canonical order
# (it read an uninitialised order before: UBSan saw an out-of-bounds index,
# and the factors came out wrong whenever the stack held other bytes)
printf 'mapping:\n  - target: inter_PE_column_spatial\n    type: spatial\n    factors: M2\n' > "$tmp/noperm.map.yaml"
"$S" map --arch eyeriss-like --layer resnet50:conv1 --mapping "$tmp/noperm.map.yaml" > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "the factors of M multiply to 2, the problem has M=64" "$tmp/err" && [ ! -s "$tmp/out" ]; then
    ok "map --mapping: a spatial entry without a permutation is read (canonical order)"
else
    not_ok "map --mapping: a spatial entry without a permutation is read" "rc=$rc $(cat "$tmp/err")"
fi
# a model past strata's counts: plan says why, as train does, instead of
# an empty table (now as the model loads, at its hidden size; 1,500 heads
# keep its head dimension at 65,536, the most attention kernels take)
sed "s/^hidden: .*/hidden: 98304000/; s/^heads: .*/heads: 1500/; s/^max_seq: .*/max_seq: 100000000/" "$srcdir/workloads/gpt2-small.yaml" > "$tmp/huge-plan.yaml"
"$S" plan "$tmp/huge-plan.yaml" --gpus 8 > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "strata counts up to 2^53" "$tmp/err" && [ ! -s "$tmp/out" ]; then
    ok "plan: a model no configuration can evaluate is an error naming why"
else
    not_ok "plan: a model no configuration can evaluate is an error naming why" "rc=$rc $(head -c 300 "$tmp/err") $(head -c 200 "$tmp/out")"
fi
# sweep values are decimal numbers, as in the presets: hex is refused
printf 'sweep: hx\nevaluate: gpu\nfixed:\n  gpu: h100-sxm\n  workload: llama2-7b\n  seq: 0x1p4\naxes:\n  batch: [1, 2]\n' > "$tmp/hex.yaml"
"$S" sweep "$tmp/hex.yaml" > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "hex.yaml:6:8: seq: expected an integer, got '0x1p4'" "$tmp/err"; then
    ok "sweep: a hex number is refused at FILE:LINE:COL"
else
    not_ok "sweep: a hex number is refused at FILE:LINE:COL" "rc=$rc $(cat "$tmp/err")"
fi
# a NUL byte in a text input is an error at its place, not a line read short
printf '{"input_toks": 100, "output_toks": 10, "arrival_time": 0}\n{"input_toks": 1\000garbage, "output_toks": 10, "arrival_time": 1}\n' > "$tmp/nul.jsonl"
"$S" serve llama2-7b --trace "$tmp/nul.jsonl" > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "nul.jsonl:2:17: a NUL byte" "$tmp/err" && [ ! -s "$tmp/out" ]; then
    ok "serve --trace: a NUL byte is FILE:LINE:COL"
else
    not_ok "serve --trace: a NUL byte is FILE:LINE:COL" "rc=$rc $(cat "$tmp/err")"
fi
mkdir -p "$tmp/nulcsv/kernels-test"
printf 'OPName,Latency,Device,B,M,N,K\nbmm,0.11\00099,Tesla V100-PCIE-32GB,1,64,64,64\n' > "$tmp/nulcsv/kernels-test/bmm.csv"
"$S" validate neusight --data "$tmp/nulcsv" > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "bmm.csv:2:9: a NUL byte" "$tmp/err"; then
    ok "a NUL byte in a measurement CSV is FILE:LINE:COL"
else
    not_ok "a NUL byte in a measurement CSV is FILE:LINE:COL" "rc=$rc $(cat "$tmp/err")"
fi
# --ert with an architecture file that does not parse: the parse error at
# its place, not a guess that the file is a strata preset
printf 'architecture:\n  version: 0.4\n  version: 0.4\n' > "$tmp/dk.arch.yaml"
printf 'tables: []\n' > "$tmp/dk.ERT.yaml"
"$S" map --arch "$tmp/dk.arch.yaml" --ert "$tmp/dk.ERT.yaml" --layer resnet18:conv1 > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "dk.arch.yaml:3:3: duplicate key 'version'" "$tmp/err" && [ ! -s "$tmp/out" ]; then
    ok "map --ert: an architecture file that does not parse reports its own error"
else
    not_ok "map --ert: an architecture file that does not parse reports its own error" "rc=$rc $(cat "$tmp/err")"
fi
# a trace CSV with more columns than the trace's own: its columns are found
# wherever they are (the 18th to 20th here)
{ printf 'c0'; for i in $(seq 1 16); do printf ',c%d' "$i"; done; printf ',arrived_at,num_prefill_tokens,num_decode_tokens\n'
  printf '1'; for i in $(seq 1 16); do printf ',1'; done; printf ',0,100,10\n'; } > "$tmp/wide.csv"
check "serve --trace: a CSV's columns past the 16th are read" \
    sh -c "'$S' serve llama2-7b --trace '$tmp/wide.csv' --json | jq -e '.requests == 1'"
# a mobile_cpu preset without its vector width is refused where it is read
grep -v '^simd_bits:' "$srcdir/presets/edge/mobile-cpu.yaml" > "$tmp/nosimd.yaml"
"$S" show "$tmp/nosimd.yaml" > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "nosimd.yaml:[0-9]*:1: a mobile_cpu preset needs 'simd_bits'" "$tmp/err" && [ ! -s "$tmp/out" ]; then
    ok "edge preset: a mobile_cpu without simd_bits is FILE:LINE:COL at load"
else
    not_ok "edge preset: a mobile_cpu without simd_bits is FILE:LINE:COL at load" "rc=$rc $(cat "$tmp/err")"
fi
# a Timeloop problem's shape of the wrong type is refused at its place, not
# passed over
printf 'problem:\n  instance: {C: 3, M: 32, R: 3, S: 3, N: 1, P: 8, Q: 8}\n  shape: {dimensions: 7}\n' > "$tmp/bs.prob.yaml"
"$S" map --arch eyeriss-like --problem "$tmp/bs.prob.yaml" > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "bs.prob.yaml:3:23: problem shape: 'dimensions' must be a list" "$tmp/err" && [ ! -s "$tmp/out" ]; then
    ok "Timeloop problem: a shape key of the wrong type is FILE:LINE:COL"
else
    not_ok "Timeloop problem: a shape key of the wrong type is FILE:LINE:COL" "rc=$rc $(cat "$tmp/err")"
fi
# GPT-2's embd_pdrop is the embedding's own dropout: read (and checked)
# apart from resid_pdrop; 0 leaves the embedding without a dropout kernel
sed 's/"embd_pdrop": 0.1/"embd_pdrop": 0.0/' "$srcdir/tests/data/hf/gpt2-tiny-config.json" > "$tmp/g2-noembd.json"
sed 's/"embd_pdrop": 0.1/"embd_pdrop": 3.7/' "$srcdir/tests/data/hf/gpt2-tiny-config.json" > "$tmp/g2-badembd.json"
"$S" eval "$tmp/g2-noembd.json" --phase train --batch 1 --seq 16 --kernels > "$tmp/out" 2> "$tmp/err"; rc=$?
"$S" eval "$srcdir/tests/data/hf/gpt2-tiny-config.json" --phase train --batch 1 --seq 16 --kernels > "$tmp/out2" 2>> "$tmp/err"; rc2=$?
"$S" show "$tmp/g2-badembd.json" > "$tmp/out3" 2> "$tmp/err3"; rc3=$?
if [ $rc = 0 ] && [ $rc2 = 0 ] && ! grep -q "embed.dropout" "$tmp/out" && grep -q "fwd  embed.dropout" "$tmp/out2" &&
   grep -q "block.attn.out.dropout\|block.*dropout" "$tmp/out" && [ $rc3 = 1 ] && grep -q "g2-badembd.json:12:17: key 'embd_pdrop': expected a number in \[0, 0.99\]" "$tmp/err3"; then
    ok "HF gpt2: embd_pdrop sets the embedding's dropout alone, and is range-checked"
else
    not_ok "HF gpt2: embd_pdrop" "rc=$rc rc2=$rc2 rc3=$rc3 $(cat "$tmp/err" "$tmp/err3")"
fi
# serve as vLLM starts: a trace CSV's bad cell is named at its column
# counting the line's indent; V1 refuses block sizes that are not multiples
# of 16; a cache that cannot hold one max_model_len request is refused with
# the length that fits (Llama 3.1 8B's 131,072 tokens need 16 GiB of KV at
# 128 KiB a token, more than a 24 GB RTX 4090 keeps after 15 GiB of weights)
printf 'arrived_at,num_prefill_tokens,num_decode_tokens\n0.0,10,5\n\t0.1,10,x\n' > "$tmp/ws.csv"
"$S" serve llama2-7b --gpu a100-80gb-sxm --trace "$tmp/ws.csv" > "$tmp/out" 2> "$tmp/err"; rc=$?
"$S" serve llama2-7b --gpu a100-80gb-sxm --qps 1 --requests 2 --lengths fixed:100,10 --block-size 8 > "$tmp/out2" 2> "$tmp/err2"; rc2=$?
"$S" serve llama2-7b --gpu a100-80gb-sxm --qps 1 --requests 2 --lengths fixed:100,10 --block-size 8 --sched vllm-v0 > "$tmp/out3" 2> "$tmp/err3"; rc3=$?
"$S" serve llama3.1-8b --gpu rtx-4090 --qps 1 --requests 2 --lengths fixed:100,10 > "$tmp/out4" 2> "$tmp/err4"; rc4=$?
"$S" serve llama3.1-8b --gpu rtx-4090 --qps 1 --requests 2 --lengths fixed:100,10 --max-model-len 32768 > "$tmp/out5" 2> "$tmp/err5"; rc5=$?
if [ $rc = 1 ] && grep -q "ws.csv:3:9: 'x' is not a valid token count" "$tmp/err" && [ $rc2 = 1 ] &&
   grep -q "block-size 8: vLLM V1's FlashAttention backends take multiples of 16" "$tmp/err2" && [ $rc3 = 0 ] &&
   [ $rc4 = 1 ] && grep -q "max_model_len 131072 needs 8192 KV blocks" "$tmp/err4" && grep -q "pass --max-model-len (a sweep.s max_model_len) [0-9]* or less" "$tmp/err4" &&
   [ ! -s "$tmp/out4" ] && [ $rc5 = 0 ]; then
    ok "serve: trace CSV columns count the indent; V1 block sizes; a cache that cannot hold one max_model_len request is refused"
else
    not_ok "serve: trace CSV columns, V1 block sizes, max_model_len at start-up" "rc=$rc $rc2 $rc3 $rc4 $rc5 $(cat "$tmp/err" "$tmp/err2" "$tmp/err4")"
fi
# sweep --out makes missing parents, but never inside the data folders
# (each level checked before it is made); a serve sweep's max_model_len
# axis: 131,072 tokens do not fit an RTX 4090's cache (16 GiB of KV), 8,192 do
printf 'sweep: mm\nevaluate: serve\nfixed: {gpu: rtx-4090, workload: llama3.1-8b, requests: 20, lengths: "fixed:200,20", qps: 2}\naxes:\n  max_model_len: [8192, 131072]\n' > "$tmp/mm.yaml"
"$S" sweep "$tmp/mm.yaml" --quiet --out "$tmp/deep/a/b" > "$tmp/out" 2> "$tmp/err"; rc=$?
gd="$STRATA_DATA/presets/strata-test-$$"
"$S" sweep "$tmp/mm.yaml" --quiet --out "$gd/sub" > /dev/null 2> "$tmp/err2"; rc2=$?
made=0; [ -e "$gd" ] && made=1; rm -rf "$gd"
if [ $rc = 0 ] && [ -s "$tmp/deep/a/b/front.csv" ] && grep -q "2 points, 1 valid" "$tmp/out" && grep -q "max_model_len 131072 needs" "$tmp/out" &&
   [ $rc2 = 1 ] && [ $made = 0 ] && grep -q "inside strata's data folder" "$tmp/err2"; then
    ok "sweep: --out makes its parents but not inside presets/; max_model_len is a serve sweep parameter"
else
    not_ok "sweep: --out parents, data guard, max_model_len axis" "rc=$rc $rc2 $(cat "$tmp/out" "$tmp/err" "$tmp/err2")"
fi
# bad-input hunt (this stop): a node's scale-out cap may equal its NICs'
# sum (3 x 2.01 = 6.03 GB/s, which floats round above the sum); a node of
# one GPU has no default collective group; an MoE stride past the block
# count leaves no MoE block; a trace CSV names a column once; a GPU's warp
# is 32 or 64 and an SM holds a 1024-thread block
sed 's/^nics:.*/nics: 3/; s/^nic_bw_gbs:.*/nic_bw_gbs: 2.01/' "$srcdir/presets/node/dgx-a100.yaml" > "$tmp/n3.yaml"
printf 'scaleout_bw_gbs: 6.03\n' >> "$tmp/n3.yaml"
"$S" show "$tmp/n3.yaml" > "$tmp/out" 2> "$tmp/err"; rc=$?
sed 's/^gpus:.*/gpus: 1/' "$srcdir/presets/node/dgx-a100.yaml" > "$tmp/g1.yaml"
"$S" coll allreduce --bytes 1M --cluster "$tmp/g1.yaml" > "$tmp/out2" 2> "$tmp/err2"; rc2=$?
sed 's/^\(  *every:\).*/\1 64/' "$srcdir/workloads/mixtral-8x7b.yaml" > "$tmp/mx64.yaml"
"$S" show "$tmp/mx64.yaml" > "$tmp/out3" 2> "$tmp/err3"; rc3=$?
printf 'arrived_at,num_prefill_tokens,num_decode_tokens,arrived_at\n0,10,5,7\n' > "$tmp/dup.csv"
"$S" serve llama2-7b --gpu a100-80gb-sxm --trace "$tmp/dup.csv" > "$tmp/out4" 2> "$tmp/err4"; rc4=$?
sed 's/^max_threads_per_sm:.*/max_threads_per_sm: 1/' "$srcdir/presets/gpu/a100-80gb-sxm.yaml" > "$tmp/mt.yaml"
sed 's/^warp_size:.*/warp_size: 31/' "$srcdir/presets/gpu/a100-80gb-sxm.yaml" > "$tmp/ws31.yaml"
"$S" show "$tmp/mt.yaml" > /dev/null 2> "$tmp/err5"; rc5=$?
"$S" show "$tmp/ws31.yaml" > /dev/null 2> "$tmp/err6"; rc6=$?
if [ $rc = 0 ] && grep -q "6.03" "$tmp/out" && [ $rc2 = 1 ] && grep -q "a collective needs 2 or more GPUs" "$tmp/err2" &&
   [ ! -s "$tmp/out2" ] && [ $rc3 = 1 ] && grep -q "mx64.yaml:[0-9]*:[0-9]*: moe: an MoE block every 64 blocks leaves none of the 32" "$tmp/err3" &&
   [ $rc4 = 1 ] && grep -q "dup.csv:1:49: column 'arrived_at' is named twice" "$tmp/err4" &&
   [ $rc5 = 1 ] && grep -q "mt.yaml:[0-9]*:[0-9]*: key 'max_threads_per_sm': 1 threads" "$tmp/err5" &&
   [ $rc6 = 1 ] && grep -q "ws31.yaml:[0-9]*:[0-9]*: key 'warp_size': 31 threads" "$tmp/err6"; then
    ok "presets and traces: cap at the NICs' sum, 1-GPU node, MoE stride, duplicate CSV column, warp and SM threads"
else
    not_ok "presets and traces: bad-input hunt" "rc=$rc $rc2 $rc3 $rc4 $rc5 $rc6 $(cat "$tmp/err" "$tmp/err2" "$tmp/err3" "$tmp/err4" "$tmp/err5" "$tmp/err6")"
fi
# an output never lands on the node preset a cluster file names; train's
# --gpu is no abbreviation of --gpus; a workload of an inference dtype is
# trained only with --dtype; --lengths trace: names its option when the file
# is missing; a draft must be a language model; a forced block count that
# cannot hold a request says the count that can (160 tokens: 10 blocks + the
# null block = 11)
sed 's/^node:.*/node: nd.yaml/' "$srcdir/presets/cluster/ib-a100.yaml" > "$tmp/cl.yaml"
cp "$srcdir/presets/node/dgx-a100.yaml" "$tmp/nd.yaml"
"$S" train llama2-7b --cluster "$tmp/cl.yaml" --gpus 16 --trace "$tmp/nd.yaml" > /dev/null 2> "$tmp/err"; rc=$?
cmp -s "$tmp/nd.yaml" "$srcdir/presets/node/dgx-a100.yaml"; same=$?
"$S" train gpt2-small --gpu h100-sxm > /dev/null 2> "$tmp/err2"; rc2=$?
sed 's/^dtype:.*/dtype: int4/' "$srcdir/workloads/llama2-7b.yaml" > "$tmp/w4.yaml"
"$S" train "$tmp/w4.yaml" --cluster dgx-a100 --gpus 8 > /dev/null 2> "$tmp/err3"; rc3=$?
"$S" serve llama2-7b --qps 1 --requests 2 --lengths "trace:$tmp/none.csv" > /dev/null 2> "$tmp/err4"; rc4=$?
"$S" serve llama2-7b --qps 1 --requests 2 --lengths fixed:10,10 --spec-k 4 --spec-accept 0.5 --draft resnet50 > /dev/null 2> "$tmp/err5"; rc5=$?
"$S" serve llama2-7b --gpu h100-sxm --num-gpu-blocks 10 --qps 1 --requests 2 --lengths fixed:100,61 > /dev/null 2> "$tmp/err6"; rc6=$?
if [ $rc = 2 ] && [ $same = 0 ] && grep -q "is the node preset that --cluster" "$tmp/err" &&
   [ $rc2 = 2 ] && grep -q "unknown option '--gpu'; did you mean --gpus? (spell it out; --gpus is a count, the GPU and node come from --cluster)" "$tmp/err2" &&
   [ $rc3 = 2 ] && grep -q "the workload's dtype is int4, an inference type; train it with --dtype" "$tmp/err3" &&
   [ $rc4 = 1 ] && grep -q -- "--lengths: .*none.csv: No such file" "$tmp/err4" &&
   [ $rc5 = 1 ] && grep -q "draft resnet50: not a language model" "$tmp/err5" &&
   [ $rc6 = 1 ] && grep -q "needs 10 KV blocks, and --num-gpu-blocks 10 leaves it 9.*give --num-gpu-blocks 11 or more" "$tmp/err6"; then
    ok "train/serve: outputs spare a cluster's node, --gpu is not --gpus, inference dtypes, --lengths trace:, draft, forced blocks"
else
    not_ok "train/serve: bad-input hunt" "rc=$rc $same $rc2 $rc3 $rc4 $rc5 $rc6 $(cat "$tmp/err" "$tmp/err2" "$tmp/err3" "$tmp/err4" "$tmp/err5" "$tmp/err6")"
fi
# a sweep point refuses what the command refuses: dp x tp x pp x cp against
# gpus, chunk under a scheduler other than sarathi, kv outside decode
printf 'sweep: a\nevaluate: train\nfixed: {workload: llama2-7b, cluster: hgx-h100-4gpu, dp: 3, gpus: 4}\naxes: {}\nobjectives: [latency, memory]\n' > "$tmp/swa.yaml"
printf 'sweep: b\nevaluate: serve\nfixed: {workload: llama2-7b, gpu: h100-sxm, requests: 20}\naxes:\n  sched: [vllm, sarathi]\n  chunk: [256, 512]\nobjectives: [latency, cost]\n' > "$tmp/swb.yaml"
printf 'sweep: c\nevaluate: gpu\nfixed: {workload: llama2-7b, gpu: h100-sxm, kv: 10}\naxes:\n  phase: [prefill, decode]\nobjectives: [latency, memory]\n' > "$tmp/swc.yaml"
"$S" sweep "$tmp/swa.yaml" --quiet > "$tmp/out" 2> "$tmp/err"; rc=$?
"$S" sweep "$tmp/swb.yaml" --quiet > "$tmp/out2" 2> "$tmp/err2"; rc2=$?
"$S" sweep "$tmp/swc.yaml" --quiet > "$tmp/out3" 2> "$tmp/err3"; rc3=$?
if [ $rc = 1 ] && grep -q "dp 3 x tp 1 x pp 1 x cp 1 = 3, but gpus is 4" "$tmp/err" &&
   [ $rc2 = 0 ] && grep -q "4 points, 2 valid" "$tmp/out2" && grep -q "chunk is sarathi's step budget; under sched vllm" "$tmp/out2" &&
   [ $rc3 = 0 ] && grep -q "2 points, 1 valid" "$tmp/out3" && grep -q "kv applies to phase decode" "$tmp/out3"; then
    ok "sweep: points refuse what the commands refuse (dp x tp x pp x cp vs gpus, chunk, kv)"
else
    not_ok "sweep: points refuse what the commands refuse" "rc=$rc $rc2 $rc3 $(cat "$tmp/err" "$tmp/out2" "$tmp/err2" "$tmp/out3" "$tmp/err3")"
fi
# the rest of the hunt: accel's CNN decode names prefill alone; a cluster
# shows its node's NICs and scale-out cap; two network dimensions of one
# name are refused; --torch 99.9 is no release; an SLO at or below 0 gets
# the SLO's words, a sweep step below 0 the step's; strata's own options
# take nothing after them, and an unknown one is no command
"$S" accel resnet50 --arch eyeriss-like --phase decode > /dev/null 2> "$tmp/err"; rc=$?
"$S" show vidur-a100-dgx > "$tmp/out2" 2> /dev/null; rc2=$?
cp "$srcdir/presets/cluster/ib-h100.yaml" "$tmp/dn.yaml" # its network list, then the same dimension again
sed -n '/^network:/,$p' "$srcdir/presets/cluster/ib-h100.yaml" | tail -n +2 >> "$tmp/dn.yaml"
"$S" show "$tmp/dn.yaml" > /dev/null 2> "$tmp/err3"; rc3=$?
"$S" kernel gemm --m 64 --n 64 --k 64 --torch 99.9 > /dev/null 2> "$tmp/err4"; rc4=$?
"$S" serve llama2-7b --qps 1 --requests 2 --lengths fixed:10,10 --slo-ttft -1 > /dev/null 2> "$tmp/err5"; rc5=$?
printf 'sweep: s\nevaluate: gpu\nfixed: {workload: llama2-7b}\naxes:\n  batch: {from: 1, to: 8, step: -1}\n' > "$tmp/st.yaml"
"$S" sweep "$tmp/st.yaml" --quiet > /dev/null 2> "$tmp/err6"; rc6=$?
"$S" --version extra > "$tmp/out7" 2> "$tmp/err7"; rc7=$?
"$S" --bogus > /dev/null 2> "$tmp/err8"; rc8=$?
if [ $rc = 2 ] && grep -q "resnet50 is a CNN, which has no decode phase; use --phase prefill (inference)$" "$tmp/err" &&
   [ $rc2 = 0 ] && grep -q "NICs *8 x 25 GB/s, 26.6 GB/s off the node in all" "$tmp/out2" &&
   [ $rc3 = 1 ] && grep -q "dn.yaml:[0-9]*:[0-9]*: key 'name': 'ndr-compute-fabric' already names network\[0\]" "$tmp/err3" &&
   [ $rc4 = 2 ] && [ $rc5 = 2 ] && grep -q "an SLO is a positive number of seconds, got '-1'" "$tmp/err5" &&
   [ $rc6 = 1 ] && grep -q "step: a range's step must be above 0" "$tmp/err6" &&
   [ $rc7 = 2 ] && [ ! -s "$tmp/out7" ] && grep -q "takes nothing after it" "$tmp/err7" &&
   [ $rc8 = 2 ] && grep -q "unknown option '--bogus' before any command" "$tmp/err8"; then
    ok "accel decode on a CNN, cluster NICs, network names, --torch, SLO and step signs, strata's own options"
else
    not_ok "bad-input hunt, the rest" "rc=$rc $rc2 $rc3 $rc4 $rc5 $rc6 $rc7 $rc8 $(cat "$tmp/err" "$tmp/err3" "$tmp/err4" "$tmp/err5" "$tmp/err6" "$tmp/err7" "$tmp/err8")"
fi
# train --trace draws each task's layers (GPT-2 Large: 36 blocks, forward
# in order, backward in reverse) with the block's exposed collectives after
# it: Megatron-LM's two TP all-reduces of the b x s x h activation per block
# and pass (Narayanan et al. 2021), each priced as `strata coll` prices that
# all-reduce; a task's parts add up to its length
"$S" train gpt2-large --cluster hgx-a100-4gpu --tp 4 --global-batch 4 --seq 1024 --dtype fp32 --trace "$tmp/lt.json" > /dev/null 2> "$tmp/err"; rc=$?
ar=$("$S" coll allreduce --cluster hgx-a100-4gpu --gpus 4 --bytes $((4 * 1024 * 1280 * 4)) --json | jq '.time_s * 1e6')
chk=$(jq --argjson ar "$ar" '
  [.traceEvents[] | select(.ph == "X")] as $x
  | [$x[] | select(.cat == "forward" or .cat == "backward")] as $tasks
  | [$x[] | select(.cat == "layer" and (.name | test("^layer [0-9]+$")))] as $blocks
  | [$x[] | select(.name == "TP all-reduces (attention, MLP)")] as $tp
  | ($blocks | map(.name | ltrimstr("layer ") | tonumber)) as $idx
  | [ $tasks[] as $t | ([$x[] | select((.cat == "layer" or .cat == "comm") and .tid < 2 and .ts >= $t.ts - 1e-6
        and .ts + .dur <= $t.ts + $t.dur + 1e-6)] | map(.dur) | add) - $t.dur | fabs < 1e-6 * $t.dur ] as $tiled
  | ($blocks | length) == 72 and ($tp | length) == 72 and $idx[0:36] == [range(0; 36)]
    and $idx[36:72] == [range(35; -1; -1)] and ($tiled | all) and .otherData.layers == true
    and ([$tp[] | (.dur - 2 * $ar) | fabs < 1e-6 * $ar] | all)' "$tmp/lt.json")
if [ $rc = 0 ] && [ "$chk" = true ]; then
    ok "train --trace: each task's layers, and each block's TP all-reduces after it, add up to the task"
else
    not_ok "train --trace: layer spans" "rc=$rc chk=$chk ar=$ar $(cat "$tmp/err")"
fi
# review of the hunt's fixes: a local folder named like a preset id is not
# the preset (the loaders read presets/); an output never lands on the GPU
# preset a node file names; an encoder-decoder's MoE stride is bounded by
# its longer stack (Switch: 24 + 24 blocks, every 30 leaves none); any
# one-short abbreviation is refused with the full name; sweep points refuse
# a dp that leaves the cluster's GPUs out, seq with kv on a decoder, decode
# of a CNN on an accelerator, and factor with scale
mkdir -p "$tmp/cwd/dgx-a100"
(cd "$tmp/cwd" && "$S" train llama2-7b --cluster ib-a100 --gpus 16 --trace dgx-a100/t.json > /dev/null 2> "$tmp/err"); rc=$?
cp "$srcdir/presets/gpu/a100-80gb-sxm.yaml" "$tmp/gp.yaml"
sed 's/^gpu:.*/gpu: gp.yaml/' "$srcdir/presets/node/dgx-a100.yaml" > "$tmp/nd2.yaml"
"$S" train llama2-7b --cluster "$tmp/nd2.yaml" --trace "$tmp/gp.yaml" > /dev/null 2> "$tmp/err2"; rc2=$?
cmp -s "$tmp/gp.yaml" "$srcdir/presets/gpu/a100-80gb-sxm.yaml"; same=$?
sed 's/^\(  *every:\).*/\1 30/' "$srcdir/workloads/switch-xl-4.yaml" > "$tmp/sw30.yaml"
"$S" show "$tmp/sw30.yaml" > /dev/null 2> "$tmp/err3"; rc3=$?
"$S" serve llama2-7b --qp 1 > /dev/null 2> "$tmp/err4"; rc4=$?
printf 'sweep: d\nevaluate: train\nfixed: {workload: llama2-7b, cluster: hgx-h100-4gpu, dp: 3}\naxes: {}\n' > "$tmp/swd.yaml"
printf 'sweep: e\nevaluate: gpu\nfixed: {workload: llama2-7b, phase: decode, seq: 128, kv: 100}\naxes: {}\n' > "$tmp/swe.yaml"
printf 'sweep: f\nevaluate: accel\nfixed: {workload: resnet50, arch: eyeriss-like, phase: decode}\naxes: {}\n' > "$tmp/swf.yaml"
printf 'sweep: g\nevaluate: gpu\nfixed: {workload: llama2-7b}\naxes:\n  batch: {from: 1, to: 8, factor: 2, scale: log2}\n' > "$tmp/swg.yaml"
"$S" sweep "$tmp/swd.yaml" --quiet > /dev/null 2> "$tmp/err5"; rc5=$?
"$S" sweep "$tmp/swe.yaml" --quiet > /dev/null 2> "$tmp/err6"; rc6=$?
"$S" sweep "$tmp/swf.yaml" --quiet > /dev/null 2> "$tmp/err7"; rc7=$?
"$S" sweep "$tmp/swg.yaml" --quiet > /dev/null 2> "$tmp/err8"; rc8=$?
if [ $rc = 0 ] && [ -s "$tmp/cwd/dgx-a100/t.json" ] && [ $rc2 = 2 ] && [ $same = 0 ] && grep -q "is the GPU preset that --cluster" "$tmp/err2" &&
   [ $rc3 = 1 ] && grep -q "every 30 blocks leaves none of the 24-block stacks" "$tmp/err3" &&
   [ $rc4 = 2 ] && grep -q "unknown option '--qp'; did you mean --qps? (spell it out)" "$tmp/err4" &&
   [ $rc5 = 1 ] && grep -q "= 3, but gpus is 4 (the cluster's, without gpus)" "$tmp/err5" &&
   [ $rc6 = 1 ] && grep -q "seq and kv both set decode's context" "$tmp/err6" &&
   [ $rc7 = 1 ] && grep -q "resnet50 is a CNN, which has no decode phase; use phase prefill" "$tmp/err7" &&
   [ $rc8 = 1 ] && grep -q "swg.yaml:5:[0-9]*: scale: log2 is factor 2; give one of them" "$tmp/err8"; then
    ok "review: id-named folders, GPU preset guard, MoE stride per stack, abbreviations, sweep refusals"
else
    not_ok "review of the hunt's fixes" "rc=$rc $rc2 $same $rc3 $rc4 $rc5 $rc6 $rc7 $rc8 $(cat "$tmp/err" "$tmp/err2" "$tmp/err3" "$tmp/err4" "$tmp/err5" "$tmp/err6" "$tmp/err7" "$tmp/err8")"
fi
# serve --trace-out adds each request's life after the steps: async spans
# in its replica's process whose ends are the per-request CSV's arrival,
# first token and last token (TTFT and latency read off the trace; the CSV
# rounds to the microsecond)
"$S" serve llama2-7b --gpu h100-sxm --dp 2 --cluster dgx-h100 --qps 4 --requests 20 --lengths fixed:500,50 --seed 3 \
    --trace-out "$tmp/rt.json" --per-request "$tmp/rt.csv" > /dev/null 2> "$tmp/err"; rc=$?
chk=$(jq -n --slurpfile t "$tmp/rt.json" --rawfile csv "$tmp/rt.csv" '
  ($csv | split("\n") | .[1:] | map(select(length > 0) | split(",") | map(tonumber? // .))) as $rows
  | [$t[0].traceEvents[] | select(.cat == "request")] as $a
  | [$rows[] as $r
     | ($a | map(select(.id == $r[0]))) as $e
     | ($e | map(select(.name == "queued" and .ph == "b")) | .[0].ts) as $arr
     | ($e | map(select(.name == "prefill" and .ph == "e")) | .[0].ts) as $first
     | ($e | map(select(.name == "decode" and .ph == "e")) | .[0].ts) as $done
     | ($e | map(select(.ph == "b" and (.name | startswith("request")))) | .[0].pid) as $pid
     | (($arr - $r[5] * 1e6) | fabs) < 0.6 and (($first - $r[7] * 1e6) | fabs) < 0.6
       and (($done - $r[8] * 1e6) | fabs) < 0.6 and $pid == $r[2] and ($e | length) == 8]
  | length == 20 and all and $t[0].otherData.requests_written == 20
    and ([$t[0].traceEvents[] | select(.ph == "M" and .name == "process_name")] | length) == 2')
if [ $rc = 0 ] && [ "$chk" = true ]; then
    ok "serve --trace-out: each request's queued, prefill and decode spans end where the per-request CSV says"
else
    not_ok "serve --trace-out: request spans" "rc=$rc chk=$chk $(cat "$tmp/err")"
fi
# a GPU's CUDA total above its datasheet memory is refused at its place
sed 's/^cuda_total_gib:.*/cuda_total_gib: 81/' "$srcdir/presets/gpu/h100-sxm.yaml" > "$tmp/ct.yaml"
"$S" show "$tmp/ct.yaml" > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "ct.yaml:[0-9]*:[0-9]*: key 'cuda_total_gib': 81 GiB is more than memory_gib 80" "$tmp/err"; then
    ok "gpu preset: cuda_total_gib above memory_gib is refused"
else
    not_ok "gpu preset: cuda_total_gib above memory_gib" "rc=$rc $(cat "$tmp/err")"
fi
# vllm-v0 refuses a step budget below max_model_len (it runs a prompt in
# one step, as vLLM V0's SchedulerConfig checks); the serving trace counts
# a preempted request's recompute as a prefill: with 100-token prompts (one
# step each) the steps' prefills are the requests plus the preemptions
"$S" serve llama2-7b --gpu h100-sxm --sched vllm-v0 --max-batched-tokens 2048 --qps 1 --requests 1 --lengths fixed:3000,4 > /dev/null 2> "$tmp/err"; rc=$?
"$S" serve llama2-7b --gpu h100-sxm --num-gpu-blocks 40 --qps 50 --requests 12 --lengths fixed:100,200 --trace-out "$tmp/pt.json" --json > "$tmp/pt.out" 2> "$tmp/err2"; rc2=$?
if [ $rc = 1 ] && grep -q "below max_model_len 4096: vLLM V0 runs a prompt in one step" "$tmp/err" && [ $rc2 = 0 ] &&
   jq -e -n --slurpfile t "$tmp/pt.json" --slurpfile o "$tmp/pt.out" '$o[0].preemptions > 0 and ([$t[0].traceEvents[] | select(.name == "step") | .args.prefills] | add) == $o[0].requests + $o[0].preemptions' > /dev/null; then
    ok "serve: vllm-v0's budget against max_model_len; recomputes are prefills in the trace"
else
    not_ok "serve: vllm-v0 budget, recompute prefills" "rc=$rc $rc2 $(cat "$tmp/err" "$tmp/err2")"
fi
# --preempt swap holds its blocks in vLLM V0's swap space (4 GiB a GPU by
# default, 8 MiB blocks of Llama 2 7B: 64 MiB holds 8); a swap-out past it
# stops the run as V0 aborts; --swap-space without swap is refused
"$S" serve llama2-7b --gpu a100-80gb-sxm --cluster dgx-a100 --sched vllm-v0 --preempt swap --num-gpu-blocks 60 --qps 50 --requests 30 --lengths fixed:200,400 --json > "$tmp/sw.json" 2> "$tmp/err"; rc=$?
"$S" serve llama2-7b --gpu a100-80gb-sxm --cluster dgx-a100 --sched vllm-v0 --preempt swap --swap-space 64MiB --num-gpu-blocks 60 --qps 50 --requests 30 --lengths fixed:200,400 > "$tmp/out2" 2> "$tmp/err2"; rc2=$?
"$S" serve llama2-7b --swap-space 1GiB --qps 1 --requests 1 --lengths fixed:10,10 > /dev/null 2> "$tmp/err3"; rc3=$?
if [ $rc = 0 ] && jq -e '.preemptions > 0 and .requests == 30' "$tmp/sw.json" > /dev/null &&
   [ $rc2 = 1 ] && grep -q "do not fit the host's swap space (8 blocks of 8.39 MB in --swap-space 0.0625 GiB" "$tmp/err2" && [ ! -s "$tmp/out2" ] &&
   [ $rc3 = 2 ] && grep -q "swap-space sizes --preempt swap's host memory" "$tmp/err3"; then
    ok "serve --preempt swap: vLLM V0's swap space holds the swapped blocks, and a swap-out past it stops the run"
else
    not_ok "serve --swap-space" "rc=$rc $rc2 $rc3 $(cat "$tmp/err" "$tmp/err2" "$tmp/err3")"
fi
# vLLM V1 keeps a preempted request's blocks in the prefix cache, its last
# block nearest the free queue's head. By hand (block 16, 7 usable blocks
# of 8, two 32-token prompts at t=0): at step 18 both hold 3 blocks and
# want a 4th; A takes the last free one and B (48 tokens computed: 3 full
# blocks) is preempted. B cannot resume while A runs (4 blocks for 49
# tokens, 3 free). A finishing at 33 tokens leaves B's 3 blocks cached:
# 48 tokens found. At 40 tokens A's 5th block (step 34) takes B's third:
# 32 found. Without prefix caching nothing is found.
printf '{"input_toks": 32, "output_toks": 33, "arrival_time": 0}\n{"input_toks": 32, "output_toks": 40, "arrival_time": 0}\n' > "$tmp/rc33.jsonl"
printf '{"input_toks": 32, "output_toks": 40, "arrival_time": 0}\n{"input_toks": 32, "output_toks": 40, "arrival_time": 0}\n' > "$tmp/rc40.jsonl"
"$S" serve llama2-7b --gpu a100-80gb-sxm --trace "$tmp/rc33.jsonl" --num-gpu-blocks 8 --json > "$tmp/rc33.json"; rc=$?
"$S" serve llama2-7b --gpu a100-80gb-sxm --trace "$tmp/rc40.jsonl" --num-gpu-blocks 8 --json > "$tmp/rc40.json"; rc2=$?
"$S" serve llama2-7b --gpu a100-80gb-sxm --trace "$tmp/rc40.jsonl" --num-gpu-blocks 8 --no-prefix-cache --json > "$tmp/rc0.json"; rc3=$?
"$S" serve llama2-7b --gpu a100-80gb-sxm --trace "$tmp/rc40.jsonl" --num-gpu-blocks 8 > "$tmp/rc40.txt"; rc4=$?
if [ $rc$rc2$rc3$rc4 = 0000 ] && jq -e '.preemptions == 1 and .resume_cached_tokens == 48' "$tmp/rc33.json" > /dev/null &&
   jq -e '.preemptions == 1 and .resume_cached_tokens == 32' "$tmp/rc40.json" > /dev/null &&
   jq -e '.preemptions == 1 and .resume_cached_tokens == 0' "$tmp/rc0.json" > /dev/null &&
   grep -q "1 preemptions (32 tokens still cached on resuming)" "$tmp/rc40.txt"; then
    ok "serve (V1): a preempted request finds its surviving blocks cached on resuming"
else
    not_ok "serve: V1 resume from cached blocks" "rc=$rc$rc2$rc3$rc4 $(cat "$tmp/rc33.json" "$tmp/rc40.json" | head -c 400)"
fi
# vLLM 0.19's full-sequence admission gate (scheduler_reserve_full_isl), by
# hand: 110 blocks less V1's null block leave 109. When B (1,600 prompt
# tokens: 100 blocks) arrives at 50 ms, A (160 + 200 tokens) holds at least
# ceil(161 / 16) = 11 blocks, so at most 98 are free and B must wait until A
# finishes, with no preemption. Without the gate B gets in on its first
# 512-token chunk (32 blocks) while A runs, and the two then fight for
# blocks (B, the newest, is preempted).
printf '{"input_toks": 160, "output_toks": 200, "arrival_time": 0}\n{"input_toks": 1600, "output_toks": 10, "arrival_time": 0.05}\n' > "$tmp/isl.jsonl"
"$S" serve llama3.1-8b --trace "$tmp/isl.jsonl" --num-gpu-blocks 110 --max-batched-tokens 512 --max-num-seqs 16 --per-request "$tmp/isl1.csv" --json > "$tmp/isl1.json"; rc=$?
"$S" serve llama3.1-8b --trace "$tmp/isl.jsonl" --num-gpu-blocks 110 --max-batched-tokens 512 --max-num-seqs 16 --no-reserve-full-isl --per-request "$tmp/isl2.csv" --json > "$tmp/isl2.json"; rc2=$?
"$S" serve llama3.1-8b --trace "$tmp/isl.jsonl" --sched sarathi --no-reserve-full-isl > /dev/null 2> "$tmp/err"; rc3=$?
if [ $rc$rc2$rc3 = 002 ] && jq -e '.preemptions == 0' "$tmp/isl1.json" > /dev/null &&
   jq -e '.preemptions > 0' "$tmp/isl2.json" > /dev/null &&
   awk -F, 'NR == 2 { a = $9 } NR == 3 { exit !($7 >= a) }' "$tmp/isl1.csv" &&
   awk -F, 'NR == 2 { a = $9 } NR == 3 { exit !($7 < a) }' "$tmp/isl2.csv" &&
   grep -q "sarathi has none" "$tmp/err"; then
    ok "serve (V1): a waiting request is admitted only when its whole prompt's blocks fit (vLLM 0.19)"
else
    not_ok "serve: V1 full-sequence admission gate" "rc=$rc$rc2$rc3 $(cat "$tmp/isl1.csv" "$tmp/isl2.csv" "$tmp/err")"
fi
# the sweep's reserve_full_isl is serve's gate: each point's mean latency is
# the serve command's with and without --no-reserve-full-isl; refused under
# another scheduler
printf 'sweep: isl\nevaluate: serve\nfixed:\n  workload: llama2-7b\n  gpu: a100-80gb-sxm\n  requests: 300\n  lengths: "uniform:1100-2000,50-300"\n  max_model_len: 4096\n  qps: 6\naxes:\n  reserve_full_isl: [true, false]\nobjectives: [latency, throughput]\n' > "$tmp/isl.yaml"
"$S" sweep "$tmp/isl.yaml" --out "$tmp/isl-out" --quiet > /dev/null; rc=$?
l1=$("$S" serve llama2-7b --gpu a100-80gb-sxm --requests 300 --lengths uniform:1100-2000,50-300 --max-model-len 4096 --qps 6 --json | jq '.latency_s.mean')
l2=$("$S" serve llama2-7b --gpu a100-80gb-sxm --requests 300 --lengths uniform:1100-2000,50-300 --max-model-len 4096 --qps 6 --no-reserve-full-isl --json | jq '.latency_s.mean')
sed 's/  qps: 6/  qps: 6\n  sched: sarathi/' "$tmp/isl.yaml" > "$tmp/isl2.yaml"
"$S" sweep "$tmp/isl2.yaml" > /dev/null 2> "$tmp/err"; rc2=$?
if [ $rc = 0 ] && [ $rc2 != 0 ] && [ "$l1" != "$l2" ] &&
   awk -F, -v a="$l1" -v b="$l2" 'NR == 2 { x = ($2 == "true" && $6 == a) } NR == 3 { y = ($2 == "false" && $6 == b) } END { exit !(x && y) }' "$tmp/isl-out/points.csv" &&
   grep -q "sched sarathi has none" "$tmp/err"; then
    ok "sweep reserve_full_isl: the serve command's gate, per point"
else
    not_ok "sweep reserve_full_isl" "rc=$rc $rc2 l1=$l1 l2=$l2 $(head -3 "$tmp/isl-out/points.csv") $(cat "$tmp/err")"
fi
# serve: a generated span past the clock's resolution is refused (1e-9 req/s
# x 200,000 requests spans 2e14 s, where a double of seconds resolves
# 0.03 s: TTFTs of milliseconds read 0); a file of NULs and no newline (it
# was read without end) stops at its first byte; lengths are digits only; a size that underflows
# is under a byte; a switch with its negation, and --trim with no room,
# are refused
"$S" serve llama3.1-8b --qps 1e-9 --requests 200000 --lengths fixed:100,50 > /dev/null 2> "$tmp/e1"; r1=$?
"$S" serve llama3.1-8b --trace /dev/zero > /dev/null 2> "$tmp/e2"; r2=$?
bad=0
for l in "uniform: +1-+2,3-4" "fixed: 10, 10" "zipf:0x1,100,100" "uniform:1-+2,3-4" "zipf:1,20000000,100"; do
    "$S" serve llama3.1-8b --qps 1 --requests 2 --lengths "$l" > /dev/null 2>&1 && bad=1
done
"$S" serve llama3.1-8b --qps 1 --requests 2 --lengths "zipf:1.2,1000,500" > /dev/null || bad=1
"$S" serve llama3.1-8b --qps 1 --requests 2 --lengths fixed:10,10 --runtime-reserve 1e-400G > /dev/null 2> "$tmp/e3"; r3=$?
"$S" serve llama3.1-8b --qps 1 --requests 2 --lengths fixed:10,10 --runtime-reserve 0e5 > /dev/null; r4=$?
"$S" serve llama3.1-8b --qps 1 --requests 2 --lengths fixed:10,10 --prefix-cache --no-prefix-cache > /dev/null 2> "$tmp/e4"; r5=$?
"$S" serve llama3.1-8b --qps 1 --requests 2 --lengths fixed:10,10 --max-model-len 1 --trim > /dev/null 2> "$tmp/e5"; r6=$?
if [ $r1 != 0 ] && grep -q "past the 1e+09 s" "$tmp/e1" && [ $r2 != 0 ] && grep -q "/dev/zero:1:1: a NUL byte" "$tmp/e2" &&
   [ $bad = 0 ] && [ $r3 = 2 ] && grep -q "less than one byte" "$tmp/e3" && [ $r4 = 0 ] &&
   [ $r5 = 2 ] && grep -q "contradict each other" "$tmp/e4" && [ $r6 != 0 ] && grep -q "raise --max-model-len to 2" "$tmp/e5"; then
    ok "serve: spans past the clock's resolution, unbounded lines, signed or blank lengths, underflowing sizes, contradicting switches refused"
else
    not_ok "serve: bad-input refusals" "r=$r1 $r2 $bad $r3 $r4 $r5 $r6 $(cat "$tmp/e1" "$tmp/e2" "$tmp/e3" "$tmp/e4" "$tmp/e5")"
fi
# serve: MFU is at most 1 (model FLOPs over the peak of the type the block
# GEMMs run in: FP8 under --quant fp8, whose peak is twice BF16's on an H100,
# so the same prefill-bound run's MFU at most halves and stays below 1); a
# one-token output has no TPOT: an empty CSV field
"$S" serve llama3.1-8b --qps 5000 --requests 50 --lengths fixed:5000,1 --quant fp8 --json > "$tmp/m8.json"; r1=$?
"$S" serve llama3.1-8b --qps 1 --requests 2 --lengths fixed:10,1 --per-request "$tmp/one.csv" > /dev/null; r2=$?
if [ $r1$r2 = 00 ] && jq -e '.mfu > 0 and .mfu <= 1' "$tmp/m8.json" > /dev/null &&
   awk -F, 'NR > 1 && $11 != "" { exit 1 }' "$tmp/one.csv" && [ "$(wc -l < "$tmp/one.csv")" = 3 ]; then
    ok "serve: MFU against the FP8 peak under --quant fp8; no TPOT for one-token outputs in --per-request"
else
    not_ok "serve: fp8 MFU / one-token TPOT" "r=$r1$r2 $(jq .mfu "$tmp/m8.json") $(cat "$tmp/one.csv")"
fi
# validate vllm: every run folder (not the first 256), a byte-order mark
# taken as serve takes it, and no score against an empty measurement (all
# one-token outputs: no TPOT) where 0% was "perfect"
mkdir -p "$tmp/vv"
i=0
while [ $i -lt 260 ]; do
    i=$((i + 1)); mkdir -p "$tmp/vv/RTXPRO6000_r$i"
    printf '{"kind": "vllm-run", "vllm_version": "0.19.0", "engine_kwargs": {"max_num_seqs": 128, "max_batched_tokens": 2048}, "model": "meta-llama/Llama-3.1-8B"}\n' > "$tmp/vv/RTXPRO6000_r$i/meta.json"
    printf '{"input_toks": 100, "output_toks": 3, "arrival_time": 0}\n' > "$tmp/vv/RTXPRO6000_r$i/requests.jsonl"
done
"$S" validate vllm --data "$tmp/vv" --json > "$tmp/vv.json" 2> "$tmp/err"; r1=$?
mkdir -p "$tmp/vv1/RTXPRO6000_x"
cp "$tmp/vv/RTXPRO6000_r1/meta.json" "$tmp/vv1/RTXPRO6000_x/"
printf '\357\273\277{"input_toks": 100, "output_toks": 1, "arrival_time": 1.0, "queued_ts": 10.0, "first_token_ts": 10.05, "last_token_ts": 10.05}\n' > "$tmp/vv1/RTXPRO6000_x/requests.jsonl"
"$S" validate vllm --data "$tmp/vv1" --json > "$tmp/vv1.json"; r2=$?
"$S" validate vllm --data "$tmp/vv1" > "$tmp/vv1.txt"; r3=$?
if [ $r1$r2$r3 = 000 ] && jq -e '(.runs | length) == 260' "$tmp/vv.json" > /dev/null &&
   jq -e '.runs[0].tpot.measured_mean == null and .runs[0].tpot.error_mean_pct == null and .runs[0].within_bars == null' "$tmp/vv1.json" > /dev/null &&
   grep -q "not assessed" "$tmp/vv1.txt" && grep -q "TPOT     mean         n/a ms" "$tmp/vv1.txt"; then
    ok "validate vllm: all 260 run folders; a BOM taken; no score against a measurement without samples"
else
    not_ok "validate vllm: runs past 256 / BOM / empty measurement" "r=$r1$r2$r3 $(cat "$tmp/err") $(jq -c '.runs | length' "$tmp/vv.json") $(cat "$tmp/vv1.txt")"
fi
# sweep: one-token outputs have no TPOT (not 0, the best value); ep is 1 or
# dp x tp (vLLM's layout) and other degrees are invalid points; a range
# that repeats a value is refused; --out may not replace a trace the sweep
# reads, and a failed sweep leaves none of the folders it made
printf 'sweep: t\nevaluate: serve\nfixed:\n  workload: llama3.1-8b\n  gpu: h100-sxm\n  requests: 20\n  lengths: "uniform:1-2,1-1"\naxes:\n  qps: [1, 2]\nobjectives: [latency, throughput]\n' > "$tmp/t1.yaml"
"$S" sweep "$tmp/t1.yaml" --out "$tmp/t1o" --quiet > /dev/null; r1=$?
printf 'sweep: t\nevaluate: serve\nfixed:\n  workload: mixtral-8x7b\n  gpu: h100-sxm\n  tp: 2\n  requests: 20\naxes:\n  ep: [1, 2, 8]\nobjectives: [latency, throughput]\n' > "$tmp/t2.yaml"
"$S" sweep "$tmp/t2.yaml" --out "$tmp/t2o" --quiet > /dev/null; r2=$?
printf 'sweep: t\nevaluate: serve\nfixed:\n  workload: llama3.1-8b\n  gpu: h100-sxm\naxes:\n  qps: {from: 4, to: 4, steps: 3}\nobjectives: [latency, throughput]\n' > "$tmp/t3.yaml"
"$S" sweep "$tmp/t3.yaml" > /dev/null 2> "$tmp/e3"; r3=$?
mkdir -p "$tmp/t4o"
printf '{"input_toks": 100, "output_toks": 20, "arrival_time": 0}\n' > "$tmp/t4o/points.csv"
cp "$tmp/t4o/points.csv" "$tmp/t4keep"
printf 'sweep: t\nevaluate: serve\nfixed:\n  workload: llama3.1-8b\n  gpu: h100-sxm\n  requests: 20\n  lengths: "trace:%s"\naxes:\n  qps: [1, 2]\nobjectives: [latency, throughput]\n' "$tmp/t4o/points.csv" > "$tmp/t4.yaml"
"$S" sweep "$tmp/t4.yaml" --out "$tmp/t4o" > /dev/null 2> "$tmp/e4"; r4=$?
printf 'sweep: t\nevaluate: serve\nfixed:\n  workload: llama3.1-8b\n  gpu: h100-sxm\n  requests: 20\n  sched: sarathi\naxes:\n  reserve_full_isl: [true]\nobjectives: [latency, throughput]\n' > "$tmp/t5.yaml"
"$S" sweep "$tmp/t5.yaml" --out "$tmp/t5o/a/b" > /dev/null 2>&1; r5=$?
if [ $r1 = 0 ] && awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "tpot_s") c = i } NR > 1 && $c != "" { exit 1 }' "$tmp/t1o/points.csv" &&
   [ $r2 = 0 ] && awk -F, 'NR == 2 && $3 != "ok" { exit 1 } NR == 3 && $3 != "ok" { exit 1 } NR == 4 && $3 != "invalid" { exit 1 }' "$tmp/t2o/points.csv" &&
   grep -q "so ep is 1 or dp x tp = 2" "$tmp/t2o/points.csv" &&
   [ $r3 != 0 ] && grep -q "t3.yaml:7:8: axis qps: the range gives 4 twice" "$tmp/e3" &&
   [ $r4 = 2 ] && cmp -s "$tmp/t4o/points.csv" "$tmp/t4keep" && grep -q "the sweep's lengths value" "$tmp/e4" &&
   [ $r5 != 0 ] && [ ! -e "$tmp/t5o" ]; then
    ok "sweep: no TPOT for one-token outputs, ep 1 or dp x tp, ranges without repeats, traces and folders safe from --out"
else
    not_ok "sweep: tpot / ep / range repeats / --out" "r=$r1 $r2 $r3 $r4 $r5 $(cat "$tmp/t2o/points.csv" "$tmp/e3" "$tmp/e4")"
fi
# --async-scheduling (vLLM 0.19's batch queue), by hand: B arrives at 50 ms
# while A decodes alone in steps of A's TPOT. Scheduled at a step's end, B
# joins the step after the one it arrived in; scheduled as that step starts,
# the batch after it was already built without B, so B joins one step (one
# TPOT of A) later. A request alone on an idle engine starts at once either
# way. Off by default.
printf '{"input_toks": 100, "output_toks": 50, "arrival_time": 0}\n{"input_toks": 100, "output_toks": 5, "arrival_time": 0.05}\n' > "$tmp/as.jsonl"
printf '{"input_toks": 100, "output_toks": 5, "arrival_time": 0}\n' > "$tmp/as1.jsonl"
"$S" serve llama3.1-8b --trace "$tmp/as.jsonl" --per-request "$tmp/as-sync.csv" > /dev/null; r1=$?
"$S" serve llama3.1-8b --trace "$tmp/as.jsonl" --async-scheduling --per-request "$tmp/as-async.csv" > /dev/null; r2=$?
"$S" serve llama3.1-8b --trace "$tmp/as1.jsonl" --json > "$tmp/as1-sync.json"; r3=$?
"$S" serve llama3.1-8b --trace "$tmp/as1.jsonl" --async-scheduling --json > "$tmp/as1-async.json"; r4=$?
"$S" serve llama3.1-8b --trace "$tmp/as.jsonl" --sched orca --async-scheduling > /dev/null 2> "$tmp/err"; r5=$?
if [ $r1$r2$r3$r4 = 0000 ] && [ $r5 = 2 ] && grep -q "orca has none" "$tmp/err" &&
   paste -d, "$tmp/as-sync.csv" "$tmp/as-async.csv" | awk -F, 'NR == 2 { d = $11 } NR == 3 { lag = $21 - $7; exit !(d > 0 && lag > 0.95 * d && lag < 1.05 * d) }' &&
   [ "$(jq .ttft_s.mean "$tmp/as1-sync.json")" = "$(jq .ttft_s.mean "$tmp/as1-async.json")" ]; then
    ok "serve --async-scheduling: a request arriving during a step joins one step later; an idle engine starts at once"
else
    not_ok "serve --async-scheduling" "r=$r1$r2$r3$r4$r5 $(cat "$tmp/as-sync.csv" "$tmp/as-async.csv" "$tmp/err")"
fi
# --async-scheduling on a DP x EP group in lockstep: rank 1 idles (dummy
# batches) when B arrives mid-step; an engine with nothing queued schedules
# at once, so B's times are those of scheduling at the step's end
printf '{"input_toks": 100, "output_toks": 40, "arrival_time": 0}\n{"input_toks": 100, "output_toks": 5, "arrival_time": 0.02}\n' > "$tmp/as2.jsonl"
"$S" serve mixtral-8x7b --gpu h100-sxm --dp 2 --ep --trace "$tmp/as2.jsonl" --per-request "$tmp/as2-sync.csv" > /dev/null; r1=$?
"$S" serve mixtral-8x7b --gpu h100-sxm --dp 2 --ep --trace "$tmp/as2.jsonl" --async-scheduling --per-request "$tmp/as2-async.csv" > /dev/null; r2=$?
if [ $r1$r2 = 00 ] && cmp -s "$tmp/as2-sync.csv" "$tmp/as2-async.csv" && [ "$(cut -d, -f3 "$tmp/as2-async.csv" | tail -n +2 | tr -d '\n')" = 01 ]; then
    ok "serve --async-scheduling: an idle rank of a lockstep DP x EP group schedules a new request at once"
else
    not_ok "serve --async-scheduling, idle lockstep rank" "r=$r1$r2 $(cat "$tmp/as2-sync.csv" "$tmp/as2-async.csv")"
fi
# prefix caching under preemption: a request's cached tokens are counted at
# its first admission, as vLLM's num_cached_tokens (it found the prefix again
# on every re-admission: 3,280 cached of an 813-token prompt), so no request
# has more cached tokens than prompt tokens, the hit ratio is at most 1 and
# MFU is not negative
"$S" serve llama3.1-8b --num-gpu-blocks 150 --qps 1000 --requests 300 --lengths fixed:900,700 --seed 5 --shared-prefix 2:512 --prefix-cache --per-request "$tmp/pc.csv" --json > "$tmp/pc.json"; rc=$?
if [ $rc = 0 ] && jq -e '.preemptions > 0 and .prefix_hit_ratio > 0 and .prefix_hit_ratio <= 1 and .mfu >= 0' "$tmp/pc.json" > /dev/null &&
   awk -F, 'NR > 1 && $14 > $4 { exit 1 }' "$tmp/pc.csv"; then
    ok "serve: prefix-cache hits counted once per request under preemption (ratio <= 1, cached <= prompt)"
else
    not_ok "serve: prefix-cache hits under preemption" "rc=$rc $(jq -c '{prefix_hit_ratio, mfu, preemptions}' "$tmp/pc.json")"
fi
# --usage-context: vLLM's batch defaults by how the engine is built
# (EngineArgs.get_batch_defaults): vllm serve 1024 / 8192 on an H100 and
# 256 / 2048 on an A100, the offline LLM class 1024 / 16384 and 256 / 8192,
# an engine built directly SchedulerConfig's 128 / 2048 on both
got=
for gpu in h100-sxm a100-80gb-sxm; do
    for u in serve llm engine; do
        got="$got $("$S" serve llama3.1-8b --gpu $gpu --qps 1 --requests 2 --lengths fixed:10,10 --usage-context $u --json | jq -r '"\(.max_num_seqs)/\(.max_batched_tokens)"')"
    done
done
"$S" serve llama3.1-8b --qps 1 --requests 2 --lengths fixed:10,10 --usage-context offline > /dev/null 2> "$tmp/err"; rc=$?
if [ "$got" = " 1024/8192 1024/16384 128/2048 256/2048 256/8192 128/2048" ] && [ $rc = 2 ] && grep -q "choose serve" "$tmp/err"; then
    ok "serve --usage-context: vllm serve's, the LLM class's and a bare engine's batch defaults"
else
    not_ok "serve --usage-context" "got:$got rc=$rc $(cat "$tmp/err")"
fi
# vLLM V1's DP balancer (the default under --sched vllm), by hand: A (400
# tokens out) goes to replica 0 and B (2 out) to 1, the tie at 0 going to
# the first; at 1.0 s the published counts are 1 running on 0 and nothing
# on 1: C to 1; D, before the next publication, sees 1 on 0 against C's
# 4 x 1 waiting on 1: 0; E: 5 against 4: 1. Round-robin: 0 1 0 1 0.
printf '{"input_toks": 100, "output_toks": 400, "arrival_time": 0}\n{"input_toks": 100, "output_toks": 2, "arrival_time": 0.001}\n{"input_toks": 100, "output_toks": 10, "arrival_time": 1.0}\n{"input_toks": 100, "output_toks": 10, "arrival_time": 1.001}\n{"input_toks": 100, "output_toks": 10, "arrival_time": 1.002}\n' > "$tmp/lb.jsonl"
"$S" serve llama2-7b --gpu a100-80gb-sxm --dp 2 --trace "$tmp/lb.jsonl" --per-request "$tmp/lb1.csv" > /dev/null; rc=$?
"$S" serve llama2-7b --gpu a100-80gb-sxm --dp 2 --trace "$tmp/lb.jsonl" --route rr --per-request "$tmp/lb2.csv" > /dev/null; rc2=$?
"$S" serve llama2-7b --dp 2 --qps 1 --requests 2 --lengths fixed:10,10 --route nearest > /dev/null 2> "$tmp/err"; rc3=$?
if [ $rc$rc2 = 00 ] && [ "$(cut -d, -f3 "$tmp/lb1.csv" | tail -n +2 | tr -d '\n')" = 01101 ] &&
   [ "$(cut -d, -f3 "$tmp/lb2.csv" | tail -n +2 | tr -d '\n')" = 01010 ] &&
   [ $rc3 = 2 ] && grep -q "rr, least, vllm or auto" "$tmp/err"; then
    ok "serve --route: vLLM V1's DP balancer by default, round-robin on request"
else
    not_ok "serve --route vllm" "rc=$rc $rc2 $rc3 $(cat "$tmp/lb1.csv" "$tmp/err")"
fi
# accelerator presets: all energies 0 prints shares of 0 (not NaN) and
# the search breaks the EDP tie on delay, to the compute bound: ResNet-18
# conv1's 118,013,952 MACs on 168 PEs, 702,464 cycles; a tensor kept twice
# is an error at its node
sed -E 's/(read|write|update|leak|energy_pj): [0-9.]+/\1: 0/' "$srcdir/presets/accel/eyeriss-like.yaml" > "$tmp/zeroE.yaml"
"$S" map --arch "$tmp/zeroE.yaml" --layer resnet18:conv1 > "$tmp/z.txt"; rc=$?
"$S" map --arch "$tmp/zeroE.yaml" --layer resnet18:conv1 --json > "$tmp/z.json"; rc2=$?
sed 's/keeps: \[inputs, outputs\]/keeps: [inputs, inputs]/' "$srcdir/presets/accel/eyeriss-like.yaml" > "$tmp/kd.yaml"
"$S" map --arch "$tmp/kd.yaml" --layer resnet18:conv1 > /dev/null 2> "$tmp/err"; rc3=$?
if [ $rc$rc2 = 00 ] && ! grep -qi nan "$tmp/z.txt" && jq -e '.energy_j == 0 and .cycles == 702464' "$tmp/z.json" > /dev/null &&
   [ $rc3 = 1 ] && grep -q "kd.yaml:59:21: key 'keeps': inputs is listed twice" "$tmp/err"; then
    ok "accel preset: zero energies give 0% shares and the fastest mapping; a tensor kept twice is FILE:LINE:COL"
else
    not_ok "accel preset: zero energies / keeps twice" "rc=$rc$rc2$rc3 $(grep -i nan "$tmp/z.txt" | head -3) $(cat "$tmp/err")"
fi
# a sweep range's values are the decimals meant: 0.1 + 2 x 0.1 is 0.3
printf 'sweep: rg\nevaluate: gpu\nfixed: {gpu: h100-sxm, workload: gpt2-small, phase: prefill, seq: 512}\naxes:\n  clock_scale: {from: 0.1, to: 0.3, step: 0.1}\n' > "$tmp/rg.yaml"
"$S" sweep "$tmp/rg.yaml" --quiet > "$tmp/rg.out"; rc=$?
if [ $rc = 0 ] && grep -q "clock_scale=0.3$" "$tmp/rg.out" && ! grep -q "0.30000000000000004" "$tmp/rg.out"; then
    ok "sweep: a range's values carry no binary noise (clock_scale=0.3)"
else
    not_ok "sweep: range values" "rc=$rc $(cat "$tmp/rg.out")"
fi
# map: stdout is the same on any thread count (the thread count goes to
# stderr), and --evals caps the evaluations it counts
"$S" map --arch eyeriss-like --layer resnet50:conv1 --json --threads 1 > "$tmp/mt1.json" 2> /dev/null; rc=$?
"$S" map --arch eyeriss-like --layer resnet50:conv1 --json --threads 4 > "$tmp/mt4.json" 2> /dev/null; rc2=$?
"$S" map --arch simba-like --layer gpt2-small:block.mlp.up --evals 20000 --seed 3 --json > "$tmp/mev.json" 2> /dev/null; rc3=$?
if [ $rc$rc2$rc3 = 000 ] && cmp -s "$tmp/mt1.json" "$tmp/mt4.json" && jq -e '.search.evaluated <= 20000 and .search.evaluated > 10000' "$tmp/mev.json" > /dev/null; then
    ok "map --json: identical on 1 and 4 threads; --evals 20000 evaluates at most 20000"
else
    not_ok "map: thread-independent stdout, --evals cap" "rc=$rc$rc2$rc3 $(diff "$tmp/mt1.json" "$tmp/mt4.json" | head -4) $(jq -c .search "$tmp/mev.json")"
fi
# --pp with a tiny cache once let two requests in different pipeline slots
# evict each other forever (a hang at 1daf76e): the run ends, finished or
# stopped with the thrashing reason
timeout 120 "$S" serve llama3-8b --num-gpu-blocks 200 --qps 50 --requests 100 --lengths uniform:394-1578,365-1462 --seed 307 --shared-prefix 16:256 --pp 2 --max-batched-tokens 128 > /dev/null 2> "$tmp/err"; rc=$?
if [ $rc = 0 ] || { [ $rc = 1 ] && grep -q "the KV cache thrashes" "$tmp/err"; }; then
    ok "serve --pp 2 on a tiny cache ends (no livelock)"
else
    not_ok "serve --pp livelock" "rc=$rc $(cat "$tmp/err")"
fi
# the --gpus it names passes the stage rule: for --pp 3 on 8-GPU nodes, 9
# GPUs make stages of 3 (GPUs 6-8 straddle the first node's end), 12 make
# stages of 4, which divide a node; on a one-node cluster, where no
# multiple of 3 from 8 up fits, 6 (stages of 2)
"$S" train llama2-7b --pp 3 > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q "pass --gpus 12" "$tmp/err" && "$S" train llama2-7b --pp 3 --gpus 12 > /dev/null 2>&1 &&
   ! "$S" train llama2-7b --pp 3 --gpus 9 > /dev/null 2>&1 &&
   "$S" train llama2-7b --cluster dgx-h100 --pp 3 2>&1 | grep -q "pass --gpus 6" &&
   "$S" train llama2-7b --cluster dgx-h100 --pp 3 --gpus 6 > /dev/null 2>&1; then
    ok "train --pp 3: the --gpus named (12, not 9) gives stages that do not straddle nodes"
else
    not_ok "train --pp 3: the --gpus named (12, not 9) gives stages that do not straddle nodes" "rc=$rc $(cat "$tmp/err")"
fi
# degrees whose product overflows 32 bits (65,536 x 65,536 = 2^32) are
# refused by their size, not divided by a wrapped-around 0 (SIGFPE before)
"$S" train llama2-7b --pp 65536 --cp 65536 > "$tmp/out" 2> "$tmp/err"; rc=$?
"$S" train llama2-7b --dp 65536 --tp 2 --pp 32768 --gpus 16777216 > /dev/null 2> "$tmp/err2"; rc2=$?
if [ $rc = 2 ] && grep -q "tp x pp x cp = 4294967296 is more than the 160 GPUs of cluster ib-a100" "$tmp/err" &&
   [ $rc2 = 2 ] && grep -q "dp x tp x pp x cp = 4294967296 is more than --gpus 16777216" "$tmp/err2"; then
    ok "train: parallel degrees multiplying past 2^31 are a usage error"
else
    not_ok "train: parallel degrees multiplying past 2^31 are a usage error" "rc=$rc rc2=$rc2 $(cat "$tmp/err" "$tmp/err2")"
fi
# CP's K/V ring: three passes a block without recompute (forward, and the
# backward's two), four when recompute reruns the forward's; the exposed
# part never exceeds the total (before, recompute's pass was exposed only)
for r in none selective full; do
    "$S" train llama2-7b --cluster ib-h100 --gpus 16 --cp 2 --flash --recompute $r --seq 128 --json |
        jq -c '[.breakdown.cp_comm_s, .breakdown.cp_comm_total_s]' > "$tmp/cp_$r.json"
done
if jq -s -e '(.[1][1] / .[0][1] - 4 / 3 | fabs) < 1e-9 and (.[2][1] / .[0][1] - 4 / 3 | fabs) < 1e-9 and
        all(.[]; .[0] <= .[1])' "$tmp/cp_none.json" "$tmp/cp_selective.json" "$tmp/cp_full.json" > /dev/null; then
    ok "train --cp 2: recompute adds the rerun forward's ring to the total (4/3), exposed <= total"
else
    not_ok "train --cp 2: recompute adds the rerun forward's ring to the total (4/3), exposed <= total" "$(cat "$tmp"/cp_*.json)"
fi
# --moe-imbalance is the busiest expert's load; the busiest rank's is
# (X + (n - 1)(E - X)/(E - 1)) / n for n = E / EP experts a rank. Mixtral
# (E = 8) at X = 4: EP 8 gives 4, EP 2 (n = 4) 10/7, EP 1 (every expert on
# every rank) 1, exactly (at 1.09 the formula's rounding gave 1 + an ulp,
# and the expert GEMM a row more). The routed activations' growth over X = 1 therefore stands
# at (3/7) / 3 = 1/7 from EP 2 to EP 8, and EP 1 does not change at all
for c in "1 1" "1 4" "2 1" "2 4" "8 1" "8 4" "1 1.09"; do
    set -- $c
    "$S" train mixtral-8x7b --ep $1 --moe-imbalance $2 --json | jq -c '[.iteration_s, .memory.activations]'
done > "$tmp/moeimb.json"
if jq -s -e '.[0] == .[1] and .[0] == .[6] and .[2][1] == .[4][1] and
        (((.[3][1] - .[2][1]) / (.[5][1] - .[4][1])) - 1 / 7 | fabs) < 1e-9 and .[5][0] > .[3][0]' \
        "$tmp/moeimb.json" > /dev/null; then
    ok "train --moe-imbalance: the busiest rank's load from the expert's (1 at EP 1, 1/7 of EP 8's growth at EP 2)"
else
    not_ok "train --moe-imbalance: the busiest rank's load from the expert's (1 at EP 1, 1/7 of EP 8's growth at EP 2)" "$(cat "$tmp/moeimb.json")"
fi
# hierarchical phases are separate collectives: all-gather (nodes, then
# inside) and reduce-scatter (inside, then nodes) move the same bytes over
# the same links, so they simulate alike and near the phases' sum (they were
# 1.09 and 1.60 ms against 1.755 when the all-gather's phases overlapped)
for c in allgather reducescatter; do
    "$S" coll $c --bytes 256MiB --gpus 16 --algo hierarchical --sim --json | jq -c '[.time_s, .sim.time_s]'
done > "$tmp/hier.json"
# on one node hierarchical all-reduce is the ring's two passes, no call between
"$S" coll allreduce --bytes 64MiB --gpus 8 --algo hierarchical --sim --json | jq '.sim.time_s' > "$tmp/h1.txt"
"$S" coll allreduce --bytes 64MiB --gpus 8 --algo ring --sim --json | jq '.sim.time_s' > "$tmp/r1.txt"
if jq -s -e '(.[0][1] - .[1][1] | fabs) < 1e-3 * .[0][1] and (.[0][1] / .[0][0] - 1 | fabs) < 0.05' "$tmp/hier.json" > /dev/null &&
   cmp -s "$tmp/h1.txt" "$tmp/r1.txt"; then
    ok "coll --sim hierarchical: all-gather and reduce-scatter alike, within 5% of the phases' sum; one node = ring"
else
    not_ok "coll --sim hierarchical: all-gather and reduce-scatter alike, within 5% of the phases' sum" "$(cat "$tmp/hier.json")"
fi
# a two-node ring broadcast in small chunks streams at its NIC-bound rate:
# 8 rings of 32 MiB, one per NIC (24 GB/s) against 7 rings' 32 MiB on each
# NVLink port (234 GB/s) -- within 10% of the analytic model once the fill
# is small (it was 1.55x: the root flooded its first link, no flow control)
if "$S" coll broadcast --bytes 256MiB --gpus 16 --algo ring --sim --chunk 64KiB --json |
    jq -e '.sim.time_s < 1.10 * .time_s and .sim.time_s > 0.95 * .time_s' > /dev/null; then
    ok "coll --sim broadcast, 2 nodes, 64 KiB chunks: within 10% of the bandwidth bound"
else
    not_ok "coll --sim broadcast, 2 nodes, 64 KiB chunks: within 10% of the bandwidth bound" "$("$S" coll broadcast --bytes 256MiB --gpus 16 --algo ring --sim --chunk 64KiB --json | jq -c '[.time_s, .sim.time_s]')"
fi
# a LoRA adapter's rank is at most its layer's smaller side: GPT-2 small's
# layers are 768 wide, so 768 runs and 769 is refused (65,536 ran before,
# with adapters 80 times the model)
"$S" train gpt2-small --lora 769 > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "LoRA rank 769 is more than gpt2-small's adapted layers can use.*give --lora 768 or less" "$tmp/err" &&
   [ ! -s "$tmp/out" ] && "$S" train gpt2-small --lora 768 > /dev/null 2>&1; then
    ok "train --lora: ranks past the layers' smaller side are refused with the largest that is not"
else
    not_ok "train --lora: ranks past the layers' smaller side are refused with the largest that is not" "rc=$rc $(cat "$tmp/err")"
fi
# interleaved 1F1B: each unmet condition is named with its value
"$S" train llama2-7b --schedule interleaved > /dev/null 2> "$tmp/e1"; r1=$?
"$S" train llama2-7b --pp 4 --gpus 32 --schedule interleaved --microbatches 3 --global-batch 24 > /dev/null 2> "$tmp/e2"; r2=$?
"$S" train llama2-7b --pp 4 --gpus 32 --schedule interleaved --chunks 1 > /dev/null 2> "$tmp/e3"; r3=$?
if [ $r1 = 2 ] && grep -q "needs PP >= 2 .*PP is 1" "$tmp/e1" && [ $r2 = 2 ] &&
   grep -q "3 microbatches on PP 4; give --microbatches 4" "$tmp/e2" && [ $r3 = 2 ] && grep -q "chunks is 1" "$tmp/e3"; then
    ok "train --schedule interleaved: the failing condition named with its value"
else
    not_ok "train --schedule interleaved: the failing condition named with its value" "$r1 $r2 $r3 $(cat "$tmp/e1" "$tmp/e2" "$tmp/e3")"
fi
# an option with a value given twice is refused (the last one won before);
# the list options repeat; numbers are decimal (0x2 read as 2 before)
"$S" train llama2-7b --tp 2 --tp 4 > "$tmp/out" 2> "$tmp/e1"; r1=$?
"$S" coll allreduce --bytes 1M --bytes 2M > /dev/null 2> "$tmp/e2"; r2=$?
"$S" train mixtral-8x7b --moe-imbalance 0x2 > /dev/null 2> "$tmp/e3"; r3=$?
if [ $r1 = 2 ] && grep -q "option --tp given twice ('2', then '4'); give it once" "$tmp/e1" && [ ! -s "$tmp/out" ] &&
   [ $r2 = 2 ] && grep -q "option --bytes given twice" "$tmp/e2" &&
   [ $r3 = 2 ] && grep -q "moe-imbalance: expected a number in \[1, 64\], got '0x2'" "$tmp/e3" &&
   "$S" serve llama2-7b --gpu h100-sxm --colocate llama2-7b --colocate llama2-7b --qps 1 --requests 3 \
       --lengths fixed:64,8 > /dev/null 2>&1; then
    ok "options: a value given twice is refused, --colocate repeats, hexadecimal is refused"
else
    not_ok "options: a value given twice is refused, --colocate repeats, hexadecimal is refused" "$r1 $r2 $r3 $(cat "$tmp/e1" "$tmp/e2" "$tmp/e3")"
fi
# plan --quiet: the same answer, nothing on stderr
"$S" plan gpt2-large --cluster hgx-a100-4gpu --json > "$tmp/p1.json" 2> /dev/null
"$S" plan gpt2-large --cluster hgx-a100-4gpu --json --quiet > "$tmp/p2.json" 2> "$tmp/p2.err"
"$S" train gpt2-large --cluster hgx-a100-4gpu --quiet > /dev/null 2> "$tmp/p3.err"; rc=$?
if cmp -s "$tmp/p1.json" "$tmp/p2.json" && [ ! -s "$tmp/p2.err" ] && [ $rc = 2 ] && grep -q "a plan option" "$tmp/p3.err"; then
    ok "plan --quiet: same output, no progress; train refuses it"
else
    not_ok "plan --quiet: same output, no progress; train refuses it" "rc=$rc $(cat "$tmp/p2.err" "$tmp/p3.err")"
fi
# decode attention never gets faster with a longer cache by a jump in its
# split: FlashAttention-2's heuristic splits 128-key blocks, so 257 keys
# (3 blocks) take 3 splits where 256 take 2; before, 257 keys ran 31% faster
# than 256 (split 2 of 128.5 keys against none)
for kv in 256 257 512 513; do
    "$S" kernel flash --heads 32 --kv-heads 8 --q-len 1 --kv-len $kv --head-dim 128 --json | jq -c '[.time_s, .split_k]'
done > "$tmp/fadec.json"
if jq -s -e '.[1][0] >= .[0][0] and .[3][0] >= .[2][0] and .[0][1] == 2 and .[1][1] == 3' "$tmp/fadec.json" > /dev/null; then
    ok "kernel flash decode: FlashAttention-2's split of the keys; a longer cache is not faster"
else
    not_ok "kernel flash decode: FlashAttention-2's split of the keys; a longer cache is not faster" "$(cat "$tmp/fadec.json")"
fi
# a training step's weights count every parameter: BERT-Large's 335,174,458
# (its MLM head's transform, embedding norm and token types were left out:
# 668,176,384 bytes) at 2 bytes, as prefill and show count them
a=$("$S" eval bert-large --phase train --json | jq '.memory.weights_bytes')
b=$("$S" eval bert-large --json | jq '.memory.weights_bytes')
if [ "$a" = 670348916 ] && [ "$b" = 670348916 ]; then
    ok "eval --phase train: BERT-Large's weights are all 335,174,458 parameters, as prefill's"
else
    not_ok "eval --phase train: BERT-Large's weights are all 335,174,458 parameters, as prefill's" "train $a prefill $b"
fi
# workload sizes are checked where they are written: a head past 65,536
# (hidden 200,000 over 2 heads), a config.json's 99,999,999 layers (YAML's
# bound is 100,000) and a model past 2^53 parameters (2 blocks of 4 x 1e16
# attention weights, and a 1e16 embedding: 9e16)
printf 'kind: transformer\nname: big\nlayers: 2\nhidden: 200000\nheads: 2\nffn_hidden: 8\nvocab: 8\nmax_seq: 8\nactivation: gelu\ngated_mlp: false\nnorm: layernorm\nnorm_position: pre\nposition: learned\ncausal: true\nbias: true\ntied_embeddings: true\n' > "$tmp/bighead.yaml"
printf 'kind: transformer\nname: p\nlayers: 2\nhidden: 100000000\nheads: 20000\nffn_hidden: 8\nvocab: 100000000\nmax_seq: 8\nactivation: gelu\ngated_mlp: false\nnorm: layernorm\nnorm_position: pre\nposition: learned\ncausal: true\nbias: true\ntied_embeddings: true\n' > "$tmp/bigp.yaml"
printf '{"model_type":"llama","hidden_size":4096,"num_hidden_layers":99999999,"num_attention_heads":32,"vocab_size":32000,"max_position_embeddings":4096}\n' > "$tmp/config.json"
"$S" show "$tmp/bighead.yaml" > "$tmp/o1" 2> "$tmp/e1"; r1=$?
"$S" show "$tmp/bigp.yaml" > "$tmp/o2" 2> "$tmp/e2"; r2=$?
"$S" show "$tmp/config.json" > "$tmp/o3" 2> "$tmp/e3"; r3=$?
if [ $r1$r2$r3 = 111 ] && grep -q "bighead.yaml:4:9: a head dimension of 100000" "$tmp/e1" &&
   grep -q "bigp.yaml:4:9: with this hidden size the model has 9e+16 parameters" "$tmp/e2" &&
   grep -q "config.json:1:62: key 'num_hidden_layers': expected a whole number in \[1, 100000\]" "$tmp/e3" &&
   [ ! -s "$tmp/o1" ] && [ ! -s "$tmp/o2" ] && [ ! -s "$tmp/o3" ]; then
    ok "workloads: a head past 65,536, layers past 100,000 and 2^53 parameters are FILE:LINE:COL"
else
    not_ok "workloads: a head past 65,536, layers past 100,000 and 2^53 parameters are FILE:LINE:COL" "$r1$r2$r3 $(cat "$tmp/e1" "$tmp/e2" "$tmp/e3")"
fi
# a CNN's step has no sequence and no attention choice: null in the JSON
# (show and eval gave the transformer defaults, 2048 and eager)
if "$S" eval resnet50 --json | jq -e '.seq == null and .attention == null' > /dev/null &&
   "$S" show resnet50 --json | jq -e '.seq == null and .attention == null' > /dev/null &&
   "$S" eval llama2-7b --json | jq -e '.seq == 2048 and .attention == "eager"' > /dev/null; then
    ok "eval/show --json: a CNN's seq and attention are null"
else
    not_ok "eval/show --json: a CNN's seq and attention are null" "$("$S" eval resnet50 --json | jq -c '{seq, attention}')"
fi
# the LoRA bound counts the MLP's and the experts' widths too (Qwen3-30B-A3B's
# experts are 2048 x 768: 768); a UTF-16 file's fault is placed in its own
# characters (3:1 for a control character opening line 3, 3:41 before: its
# bytes were counted); an empty file given with --ert is said to be empty
"$S" train qwen3-30b-a3b --lora 769 --gpus 8 > /dev/null 2> "$tmp/e1"; r1=$?
printf 'kind: gpu\nname: caf\303\251\n\001' | iconv -f UTF-8 -t UTF-16 > "$tmp/u16.yaml" # libc-bin's iconv
"$S" show "$tmp/u16.yaml" > /dev/null 2> "$tmp/e2"; r2=$?
: > "$tmp/empty.arch.yaml"
"$S" map --arch "$tmp/empty.arch.yaml" --ert "$SH/timeloop/eyeriss_like.ERT.yaml" --layer resnet18:conv1 > /dev/null 2> "$tmp/e3"; r3=$?
if [ $r1 = 1 ] && grep -q "here 768; give --lora 768 or less" "$tmp/e1" && [ $r2 = 1 ] && grep -q "u16.yaml:3:1: " "$tmp/e2" &&
   [ $r3 != 0 ] && grep -q "empty.arch.yaml:1:1: the file is empty" "$tmp/e3"; then
    ok "train --lora bound by the experts; UTF-16 faults placed by character; an empty --arch with --ert is empty"
else
    not_ok "train --lora bound by the experts; UTF-16 faults placed by character; an empty --arch with --ert is empty" "$r1$r2$r3 $(cat "$tmp/e1" "$tmp/e2" "$tmp/e3")"
fi
# strata's own accelerator format fixes factors as Timeloop's does:
# eyeriss-like with {R: 3} in the weight scratchpad and {S: 3} across the
# PE column maps ResNet-50's 3x3 layer with exactly those; {S: 3, C: 8} is
# 24 PEs on a 12-PE column, refused at the key
sed -e 's/^      permutation: \[C, R\]$/      permutation: [C, R]\n      factors: {R: 3}/' \
    -e 's/^      spatial_y: \[C, S, M\]$/      spatial_y: [C, S, M]\n      spatial_y_factors: {S: 3}/' "$srcdir/presets/accel/eyeriss-like.yaml" > "$tmp/nat.yaml"
sed 's/spatial_y_factors: {S: 3}/spatial_y_factors: {S: 3, C: 8}/' "$tmp/nat.yaml" > "$tmp/nat24.yaml"
"$S" map --arch "$tmp/nat.yaml" --layer resnet50:conv2_1.conv2 --json 2> /dev/null |
    jq -c '[(.mapping[] | select(.target == "weights_spad") | .temporal), (.mapping[] | select(.target == "inter_PE_spatial") | .spatial_y), .meets_constraints]' > "$tmp/nat.json"
"$S" map --arch "$tmp/nat24.yaml" --layer resnet50:conv2_1.conv2 > "$tmp/out" 2> "$tmp/err"; rc=$?
if jq -e '(.[0] | test(" R3 ")) and (.[1] | test("S3")) and .[2] == true' "$tmp/nat.json" > /dev/null &&
   [ $rc = 1 ] && [ ! -s "$tmp/out" ] && grep -q "nat24.yaml:87:26: levels\[3\] (inter_PE_spatial): its fixed splits take 24 along Y, but the fan-out below it has 12" "$tmp/err"; then
    ok "accelerator presets: factors and spatial_y_factors fix factors as Timeloop constraints do"
else
    not_ok "accelerator presets: factors and spatial_y_factors fix factors" "rc=$rc $(cat "$tmp/nat.json" "$tmp/err")"
fi
tap_done
