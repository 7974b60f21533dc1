#!/bin/sh
# strata calibrate: the shipped table reproduced bit-for-bit from the
# measured data, the same table on any number of threads, and the option
# errors. A file of its own so that make check runs the full fit (about a
# minute) beside tests/cli.sh rather than after it.
srcdir=$(cd "$(dirname "$0")/.." && pwd)
. "$srcdir/tests/tap.sh"
S=${STRATA_BIN:-$srcdir/strata}
SH=${STRATA_SHARED:-$srcdir/../shared/data}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# --threads: 1 to 1024, and only for the GPU table's fit
for n in 0 1025 two; do
    "$S" calibrate --threads "$n" > "$tmp/out" 2> "$tmp/err"; rc=$?
    if [ $rc = 2 ] && grep -q -- "--threads: expected a whole number in \[1, 1024\], got '$n'" "$tmp/err" && [ ! -s "$tmp/out" ]; then
        ok "calibrate --threads $n: usage error (exit 2), nothing written"
    else not_ok "calibrate --threads $n: usage error" "rc=$rc $(cat "$tmp/err")"; fi
done
"$S" calibrate --edge "$srcdir/calibration/edge-reference.csv" --threads 2 > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q -- "--threads belong to the GPU table's fit" "$tmp/err" && [ ! -s "$tmp/out" ]; then
    ok "calibrate --edge --threads: usage error (the edge fit is one small grid)"
else not_ok "calibrate --edge --threads: usage error" "rc=$rc $(cat "$tmp/err")"; fi

# calibrate prints nothing on stdout when it writes a file: --out
# /dev/stdout into a file is the table, as without --out (other commands
# refuse the file stdout goes to, since their report would be lost)
"$S" calibrate --edge "$srcdir/calibration/edge-reference.csv" --quiet > "$tmp/edge1.yaml" 2> "$tmp/err"
"$S" calibrate --edge "$srcdir/calibration/edge-reference.csv" --quiet --out /dev/stdout > "$tmp/edge2.yaml" 2>> "$tmp/err"; rc=$?
if [ $rc = 0 ] && [ -s "$tmp/edge2.yaml" ] && cmp -s "$tmp/edge1.yaml" "$tmp/edge2.yaml"; then
    ok "calibrate --out /dev/stdout into a file: the table, as without --out"
else not_ok "calibrate --out /dev/stdout into a file" "rc=$rc $(cat "$tmp/err")"; fi

if [ -d "$SH/neusight/kernels" ] && [ -d "$SH/vidur/profiling/compute/a100" ]; then
    # A small training set (every 10th row of six sweeps on three GPUs,
    # every 4th of one VIDUR profile) with strata's own H100 sweep: every
    # search of the fit has points, and its answers differ from the
    # shipped table's, so the thread count cannot hide behind a copy
    mkdir -p "$tmp/ns/kernels" "$tmp/vd/profiling/compute/a100/Qwen/Qwen-72B"
    for f in bmm__Tesla_T4 linear__Tesla_P4 add__Tesla_V100-PCIE-32GB softmax__Tesla_T4 ln__Tesla_P4 \
        bmm__Tesla_V100-PCIE-32GB; do
        awk 'NR == 1 || NR % 10 == 0' "$SH/neusight/kernels/$f.csv" > "$tmp/ns/kernels/$f.csv"
    done
    awk 'NR == 1 || NR % 4 == 0' "$SH/vidur/profiling/compute/a100/Qwen/Qwen-72B/mlp.csv" \
        > "$tmp/vd/profiling/compute/a100/Qwen/Qwen-72B/mlp.csv"
    for n in 1 3; do
        OPENBLAS_NUM_THREADS=1 "$S" calibrate --quiet --threads $n --neusight "$tmp/ns" --vidur "$tmp/vd" \
            --ops "$srcdir/data/measured/h100" > "$tmp/small$n.yaml" 2> "$tmp/err$n"
    done
    if grep -q '^kind: gpu-coefficients' "$tmp/small1.yaml" && cmp -s "$tmp/small1.yaml" "$tmp/small3.yaml" &&
        ! cmp -s "$tmp/small1.yaml" "$srcdir/calibration/gpu-kernels.yaml"; then
        ok "calibrate: the same table, byte for byte, on 1 and 3 threads"
    else not_ok "calibrate: the same table on 1 and 3 threads" "$(diff "$tmp/small1.yaml" "$tmp/small3.yaml" | head -n 20) $(cat "$tmp/err1" "$tmp/err3")"; fi
    OPENBLAS_NUM_THREADS=1 "$S" calibrate --quiet --threads 2 --neusight "$SH/neusight" --vidur "$SH/vidur" \
        --ops "$srcdir/data/measured/h100/" > "$tmp/coef.yaml" 2> "$tmp/err"
    check "calibrate reproduces calibration/gpu-kernels.yaml bit-for-bit" \
        cmp "$tmp/coef.yaml" "$srcdir/calibration/gpu-kernels.yaml"
else
    skip_test "calibrate on 1 and 3 threads" "../shared/data is absent"
    skip_test "calibrate reproduces the table" "../shared/data is absent"
fi
tap_done
