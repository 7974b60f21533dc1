#!/bin/sh
# TUI tests: drive the real binary in a detached tmux server (send-keys,
# capture-pane) and check what the screen shows. Each test polls the pane
# until the expected text appears (or a deadline passes): no fixed sleeps
# that would make the suite slow or flaky under sanitizers.
srcdir=$(cd "$(dirname "$0")/.." && pwd)
. "$srcdir/tests/tap.sh"
S=${STRATA_BIN:-$srcdir/strata}
# the workload count the lists must show (independent of the UI: the files)
NWL=$(ls "$srcdir"/workloads/*.yaml | wc -l | tr -d " ")
tmp=$(mktemp -d)
sock="$tmp/tmux.sock"
T="tmux -S $sock"
trap '$T kill-server >/dev/null 2>&1; rm -rf "$tmp"' EXIT

if ! command -v tmux >/dev/null 2>&1; then
    echo "Bail out! tmux is needed for the TUI tests (apt-get install tmux)"
    exit 1
fi
# generous under AddressSanitizer on 2 cores
DEADLINE=${STRATA_TUI_DEADLINE:-60}

# start NAME CMD...: a fresh 140x40 session running CMD, then a marker line
start() {
    name=$1; shift
    $T kill-session -t "$name" >/dev/null 2>&1
    $T new-session -d -s "$name" -x 140 -y 40 \
        "env LANG=C.UTF-8 $* ; echo STRATA-EXIT=\$?; sleep 600"
}
screen() { $T capture-pane -p -t "$1"; }
# wait_for NAME REGEX: 0 once the pane matches (grep -E), 1 at the deadline
wait_for() {
    i=0
    while [ $i -lt $((DEADLINE * 10)) ]; do
        if screen "$1" | grep -Eq -- "$2"; then return 0; fi
        sleep 0.1
        i=$((i + 1))
    done
    return 1
}
# wait_gone NAME REGEX: until the screen no longer shows REGEX (0), or the deadline (1)
wait_gone() {
    i=0
    while [ $i -lt $((DEADLINE * 10)) ]; do
        if ! screen "$1" | grep -Eq -- "$2"; then return 0; fi
        sleep 0.1
        i=$((i + 1))
    done
    return 1
}
# expect NAME REGEX TITLE
expect() {
    if wait_for "$1" "$2"; then ok "$3"; else not_ok "$3" "$(screen "$1")"; fi
}
keys() { n=$1; shift; $T send-keys -t "$n" "$@"; }

# --- start-up: H100 + Llama-2-7B, the default sweep runs to a front -------------
start main "$S"
expect main "h100-llama2-7b" "start-up opens on the default sweep (H100 + Llama-2-7B)"
expect main "100\.0% [0-9]+/[0-9]+ points.*done  front [1-9]" "the default sweep finishes and shows a front"
expect main "Front, by latency \([1-9][0-9]*\)" "the results screen lists the front"
# the plot: braille dots and labelled axes with units
if screen main | grep -q "throughput (up) vs latency (right)" && screen main | grep -Eq '[0-9.]+ (ms|s)' \
    && screen main | LC_ALL=C grep -q "$(printf '\342')[$(printf '\240-\243')]"; then ok "the Pareto scatter has braille dots and axes with units"
else not_ok "the Pareto scatter has braille dots and axes with units" "$(screen main)"; fi

# --- every screen ---------------------------------------------------------------------
keys main 1
expect main "NVIDIA H100 SXM5 80GB  \(h100-sxm, gpu\)" "screen 1: presets with the H100's spec sheet"
keys main 2
expect main "Llama 2 7B: 6.74 B parameters" "screen 2: workloads with the operator table"
expect main "block\.attn\.qkv +gemm" "screen 2: the operator table lists the QKV GEMM"
keys main 3
expect main "Sweep set-up: h100-llama2-7b" "screen 3: the sweep set-up form"
expect main "gpu-design-100k\.yaml" "screen 3: the example sweep files"
keys main 4 Enter
expect main "Breakdown \(Esc: back to results\)" "Enter on a front point opens its breakdown"
expect main "total .* 90% band .* \(errors correlated: the default\)" "the breakdown shows the total with both bands"
expect main "block +[0-9.]+ m?s .*%" "the breakdown lists per-layer time, spread and error share"
keys main Escape
expect main "Front, by latency" "Esc goes back to the results"
keys main 6
expect main "Parallelism \(training\)" "screen 6: parallelism"
expect main "DP 8 +TP 1 +PP 1" "screen 6: starts at DP 8 on a DGX H100"
keys main T
expect main "DP 4 +TP 2 +PP 1" "T doubles TP and DP follows"
expect main "iteration +[0-9.]+ (ms|s)" "the iteration time updates"
keys main a
expect main "FlashAttention-3" "a switches the attention kernel to FlashAttention-3 (DGX H100)"
keys main a
expect main "eager attention" "a again: eager attention"
keys main a
# more GPUs than the cluster has: the error strata train gives
keys main D
expect main "16 GPUs asked \(dp x tp x pp x cp\); cluster dgx-h100 has 8" "D past the cluster's GPUs shows strata train's error"
keys main d
keys main '?'
expect main "Help \(any key closes\)" "? opens the help overlay"
keys main x
# the overlay hides nothing the test waits for: wait for it to go (a
# loaded machine redraws late), then for the screen under it
if wait_gone main "Help \(any" && wait_for main "Parallelism"; then ok "any key closes the help"
else not_ok "any key closes the help" "$(screen main)"; fi

# --- the set-up form: edit a row, run it ----------------------------------------------------
keys main 3 Tab / '^batch' Enter Enter C-u '1, 8' Enter
expect main "batch +axis +1, 8" "Enter edits a form row; a list makes it an axis"
keys main r
expect main "h100-llama2-7b .*100\\.0% 36/36 points" "r runs the edited form: 2 batches x 6 sequences x 3 dtypes"
keys main 3 Tab / Enter
# a sampling row that is not grid / random N [seed S] is an error, not a
# silent grid
keys main / C-u '^sampling' Enter Enter C-u 'random: 5' Enter r
expect main "sampling: 'random: 5' is not grid, random N or random N seed S" "a malformed sampling row is an error"
keys main x
keys main / C-u '^sampling' Enter Enter C-u 'grid' Enter / C-u Enter
# a form error names its row, not a line of the YAML the form was written to
keys main / C-u '^batch' Enter Enter C-u '1, lots' Enter r
expect main "row 'batch': batch: expected an integer, got 'lots'" "a form error names the row"
keys main x
keys main / C-u '^batch' Enter Enter C-u '1, 8' Enter / C-u Enter

# --- a filter ---------------------------------------------------------------------------
keys main 2 / l l a m a Enter
expect main "/llama/ [0-9]+ of $NWL" "/ filters the workload list with a regex"
if screen main | grep -q "gpt2-small"; then not_ok "the filter hides non-matching workloads" "$(screen main)"
else ok "the filter hides non-matching workloads"; fi
keys main / '(' Enter
expect main "Error" "a bad regex opens the error panel"
keys main x
expect main "/llama/" "after the error panel the old filter stays"

# --- resize -------------------------------------------------------------------------------
$T resize-window -t main -x 100 -y 30
sleep 0.3
keys main 4
if wait_for main "Front, by latency" && [ "$(screen main | LC_ALL=C.UTF-8 wc -L)" -le 100 ] \
    && [ "$(screen main | wc -l)" -le 30 ] && screen main | grep -q "Selected point"; then ok "a resize redraws at the new size"
else not_ok "a resize redraws at the new size" "$(screen main)"; fi

# --- quit restores the terminal ----------------------------------------------------------
keys main q
expect main "STRATA-EXIT=0" "q quits with status 0"
if screen main | grep -q "Front, by"; then not_ok "the terminal is restored (no UI left on screen)" "$(screen main)"
else ok "the terminal is restored (no UI left on screen)"; fi

# --- a serving sweep: the serving view of a front point -------------------------------------
start serving "$S" ui --sweep "$srcdir/workloads/sweeps/serve-qps.yaml"
expect serving "serve-qps .*100\.0% 48/48 points.*done  front [1-9]" "a serving sweep runs to a front"
# the form keeps a length distribution (commas and all) as one fixed value
keys serving 3 Tab
expect serving "lengths +fixed uniform:100-2000,50-800" "a length distribution's commas do not make an axis"
keys serving r
expect serving "sweep serve-qps: 48 points" "r on the loaded serving sweep runs it unchanged"
expect serving "serve-qps .*100\.0% 48/48 points.*done" "and it finishes"
keys serving 4 Enter
expect serving "TTFT \(time to first token\)" "Enter on a serve point opens the TTFT distribution"
expect serving "TPOT \(per output token after the first\)" "and the TPOT distribution"
expect serving "[0-9.]+ m?s +[0-9]+ +100\.0%" "the histograms carry the cumulative share (CDF) to 100%"
expect serving "KV-cache use over time" "and KV-cache use over time"
expect serving "goodput [0-9.]+ .*meet the SLOs" "and SLO goodput"
keys serving q
expect serving "STRATA-EXIT=0" "the serving view quits cleanly"

# --- a loaded sweep run again keeps its axis order, so every point keeps its index;
# c after the end leaves it finished --------------------------------------------------------
start split "$S" ui --sweep "$srcdir/workloads/sweeps/train-split.yaml"
expect split "train-split .*100\.0% 288/288 points.*done" "a loaded training sweep runs"
keys split 4
wait_for split "#[0-9]+ cluster=" >/dev/null
before=$(screen split | grep -Eo "#[0-9]+ cluster=[^│]*" | head -1)
keys split r
expect split "sweep train-split: 288 points" "r runs the loaded sweep again"
expect split "train-split .*100\.0% 288/288 points.*done" "and it finishes"
keys split 4
wait_for split "#[0-9]+ cluster=" >/dev/null
after=$(screen split | grep -Eo "#[0-9]+ cluster=[^│]*" | head -1)
if [ -n "$before" ] && [ "$before" = "$after" ]; then ok "the re-run keeps the file's axis order and the point's index ($before)"
else not_ok "the re-run keeps the file's axis order and the point's index" "before '$before' after '$after'"; fi
keys split c
expect split "the sweep has finished: nothing to cancel" "c after the end says there is nothing to cancel"
if screen split | grep -q "cancelled"; then not_ok "a finished sweep is not marked cancelled" "$(screen split)"
else ok "a finished sweep is not marked cancelled"; fi
keys split q
expect split "STRATA-EXIT=0" "and quits cleanly"

# --- a breakdown that takes seconds (a serving point of 300,000 requests) is
# evaluated off the UI thread: the screen says so and q is answered at once
cat > "$tmp/bigserve.yaml" <<'EOF'
sweep: bigserve
evaluate: serve
fixed: {workload: llama3.1-8b, gpu: h100-sxm, requests: 300000, lengths: "uniform:100-3000,50-600"}
axes: {qps: [10]}
objectives: [goodput, cost]
EOF
start bigsv "$S" ui --threads 1 --sweep "$tmp/bigserve.yaml"
wait_for bigsv "100\.0% 1/1 points.*done" >/dev/null
keys bigsv 4 Enter
expect bigsv "evaluating point #0 with its breakdown" "a slow breakdown is evaluated in the background, the screen says so"
keys bigsv q
expect bigsv "STRATA-EXIT=0" "and q quits while it runs"

# --- wide (CJK) characters take two columns: a long title is cut to its box
cat > "$tmp/cjk.yaml" <<'EOF'
sweep: "日本語テスト日本語テスト日本語テスト日本語"
evaluate: gpu
fixed: {gpu: h100-sxm, workload: llama2-7b}
axes: {batch: [1, 2]}
objectives: [latency]
EOF
$T kill-session -t cjk >/dev/null 2>&1
$T new-session -d -s cjk -x 100 -y 30 "env LANG=C.UTF-8 $S ui --sweep $tmp/cjk.yaml; echo STRATA-EXIT=\$?; sleep 600"
wait_for cjk "100\.0% 2/2 points.*done" >/dev/null
keys cjk 3
wait_for cjk "Sweep set-up" >/dev/null
if screen cjk | sed -n 3p | grep -q '^│.*││evaluate'; then ok "a title of wide characters is cut to its box (the next line keeps its borders)"
else not_ok "a title of wide characters is cut to its box" "$(screen cjk)"; fi
keys cjk q

# --- the error panel wraps at display columns, never inside a character
start errw "$S"
wait_for errw "h100-llama2-7b" >/dev/null
keys errw 3 o "/nonexistent/$(printf 'é%.0s' $(seq 1 100))" Enter
if wait_for errw "│ /nonexistent/é{70,}" && wait_for errw "│ é{20,}.*: cannot open"; then
    ok "the error panel wraps a message of 2-byte characters at the panel's width, on character boundaries"
else not_ok "the error panel wraps at display columns" "$(screen errw)"; fi
keys errw Escape q

# --- Ctrl-C quits as well --------------------------------------------------------------------
start ctrlc "$S"
wait_for ctrlc "h100-llama2-7b" >/dev/null
keys ctrlc C-c
expect ctrlc "STRATA-EXIT=130" "Ctrl-C quits (status 130, as SIGINT) and restores the terminal"

# --- a core-dumping signal (SIGQUIT) restores the terminal before it ends the run -----------
start quit "$S"
wait_for quit "h100-llama2-7b" >/dev/null
shpid=$($T list-panes -t quit -F '#{pane_pid}')
uipid=$(pgrep -P "$shpid" | head -n 1)
[ -n "$uipid" ] && kill -QUIT "$uipid"
if wait_for quit "STRATA-EXIT=131" && ! screen quit | grep -q "Front, by"; then
    ok "SIGQUIT: the terminal restored (no UI left on screen), status 131"
else not_ok "SIGQUIT restores the terminal" "pid=$uipid $(screen quit)"; fi

# --- a broken preset: the error panel, and the UI keeps running ------------------------------
data="$tmp/data"
mkdir -p "$data/presets/gpu"
for d in "$STRATA_DATA"/presets/*; do
    [ "$(basename "$d")" = gpu ] || ln -s "$d" "$data/presets/$(basename "$d")"
done
for f in "$STRATA_DATA"/presets/gpu/*.yaml; do ln -s "$f" "$data/presets/gpu/"; done
ln -s "$STRATA_DATA/workloads" "$data/workloads"
ln -s "$STRATA_DATA/calibration" "$data/calibration"
printf 'kind: gpu\nname: Broken GPU\nsm_count: many\n' > "$data/presets/gpu/broken.yaml"
start broken env STRATA_DATA="$data" "$S"
wait_for broken "h100-llama2-7b" >/dev/null
keys broken 1 / b r o k e n Enter Enter
expect broken "broken\.yaml:[0-9]+:[0-9]+" "a broken preset opens the error panel with FILE:LINE:COL"
keys broken x 2
expect broken "Workloads \\($NWL\\)" "after the error the UI keeps running"
keys broken q
expect broken "STRATA-EXIT=0" "and quits cleanly"

# --- a broken sweep file from the set-up screen -------------------------------------------
printf 'evaluate: gpu\naxes:\n  batch: [1, lots]\n' > "$tmp/bad.yaml"
start badsweep "$S"
wait_for badsweep "h100-llama2-7b" >/dev/null
keys badsweep 3 o "$tmp/bad.yaml" Enter
expect badsweep "bad\.yaml:3:14: batch: expected an integer, got 'lots'" "a broken sweep file shows FILE:LINE:COL in the panel"
keys badsweep q q
expect badsweep "STRATA-EXIT=0" "and the UI still quits cleanly"

# --- a sweep whose every point is refused says why on the results screen ---------------------
printf 'sweep: allbad\nevaluate: serve\nfixed: {requests: 20, lengths: "fixed:200000,50"}\naxes:\n  qps: [1, 2]\n' > "$tmp/allbad.yaml"
start allbad "$S" ui --sweep "$tmp/allbad.yaml"
expect allbad "No valid point: all 2 were refused" "a sweep with no valid point says so on the results screen"
expect allbad "#0: request 0 has 200000 \+ 50 tokens" "and shows the first refusal"
keys allbad q
expect allbad "STRATA-EXIT=0" "and quits cleanly"

# --- 100,000 points: keys answered during the sweep, same front as headless -----------------
big="$srcdir/workloads/sweeps/gpu-design-100k.yaml"
start big "$S" ui --sweep "$big"
wait_for big "gpu-design-100k" >/dev/null
keys big 1
if wait_for big "Hardware presets" && ! screen big | grep -q "done  front"; then
    ok "the UI answers keys while a 100k-point sweep runs"
elif screen big | grep -q "done  front"; then
    skip_test "the UI answers keys while a 100k-point sweep runs" "the sweep finished before the key"
else not_ok "the UI answers keys while a 100k-point sweep runs" "$(screen big)"; fi
# an export asked for while the points still come in is refused (the front
# is marked when the run ends), not written half-empty
keys big 4 e C-u "$tmp/early-out" Enter
if wait_for big "the sweep is still running: wait for it, or cancel it" && [ ! -e "$tmp/early-out/front.csv" ]; then
    ok "an export during the sweep is refused and writes nothing"
elif screen big | grep -q "done  front"; then
    skip_test "an export during the sweep is refused and writes nothing" "the sweep finished before the key"
else not_ok "an export during the sweep is refused and writes nothing" "$(screen big)"; fi
keys big x
wait_for big "102400/102400 points.*done" >/dev/null
keys big 4 e C-u "$tmp/tui-out" Enter
expect big "wrote $tmp/tui-out/points.csv" "the TUI exports the points and the front"
keys big q
"$S" sweep "$big" --quiet --out "$tmp/cli-out" >/dev/null 2>&1
if [ -s "$tmp/cli-out/front.csv" ] && cmp -s "$tmp/cli-out/front.csv" "$tmp/tui-out/front.csv"; then
    ok "a 100k-point sweep gives the same front headless and in the TUI ($(($(wc -l < "$tmp/cli-out/front.csv") - 1)) points)"
else not_ok "a 100k-point sweep gives the same front headless and in the TUI" \
    "$(diff "$tmp/cli-out/front.csv" "$tmp/tui-out/front.csv" 2>&1 | head -5)"; fi

# --- the form and results after a bad-input hunt ---------------------------------------------
# 40 values not evenly spaced do not fit a row: the row says it only
# approximates them and r refuses it, rather than run other values
vals=$(awk 'BEGIN { for (i = 0; i < 40; i++) { x = i / 39; printf "%s%.7g", i ? ", " : "", 0.5 + 1.5 * x * x * x } }')
printf 'sweep: irregular\nevaluate: gpu\nfixed: {gpu: h100-sxm, workload: gpt2-small, phase: prefill, seq: 512}\naxes:\n  bw_scale: [%s]\n' "$vals" > "$tmp/irregular.yaml"
start form2 "$S" ui --sweep "$tmp/irregular.yaml"
expect form2 "irregular .*100\.0% 40/40 points.*done" "a sweep file with 40 uneven values runs as written"
keys form2 3 Tab
expect form2 "bw_scale +axis +0\.5\.\.2 n40  \(approximates the file's values: edit to run\)" "the form marks a row that only approximates the file's axis"
keys form2 r
expect form2 "row 'bw_scale' only approximates the file's 40 values" "r refuses that row instead of running other values"
keys form2 x
# a sweep that cannot start keeps the last run and its front
keys form2 / C-u '^sampling' Enter Enter C-u 'random 1000000000' Enter / C-u Enter
keys form2 / C-u '^bw_scale' Enter Enter C-u '0.5, 1' Enter / C-u Enter r
expect form2 "more than this machine gives.*|previous sweep's results are kept" "a sweep too large to start is an error"
keys form2 x 4
expect form2 "Front, by latency" "and the previous sweep's front stays"
# trailing text after a range is an error; every point breaking a
# constraint says so
keys form2 3 Tab / C-u '^sampling' Enter Enter C-u 'grid' Enter / C-u '^bw_scale' Enter Enter C-u '0.5..2 +0.5 extra' Enter / C-u Enter r
expect form2 "bw_scale: '0\.5\.\.2 \+0\.5 extra' is not a range" "text after a range is an error"
# an empty item in a row's list is an error, as the same list in a file
keys form2 x / C-u '^bw_scale' Enter Enter C-u '0.5,,1' Enter / C-u Enter r
expect form2 "bw_scale: '0\.5,,1' has an empty item" "a row's list with an empty item is an error naming it"
keys form2 x / C-u '^bw_scale' Enter Enter C-u '0.5, 1' Enter / C-u '^constraints' Enter Enter C-u 'latency <= -1' Enter / C-u Enter r
expect form2 "No feasible point: each of the 2 valid points" "a run where every point breaks a constraint says so"
# Backspace takes a whole UTF-8 character
keys form2 1 / 'é' BSpace Enter
sleep 0.5
if screen form2 | grep -q "UTF-8 error"; then not_ok "Backspace removes a whole UTF-8 character" "$(screen form2)"
else ok "Backspace removes a whole UTF-8 character"; fi
keys form2 q
expect form2 "STRATA-EXIT=0" "and quits cleanly"

# --- without a terminal, strata prints the summary instead ----------------------------------
check "strata without a terminal prints the default summary" sh -c "'$S' </dev/null | grep -q 'H100'"

tap_done
