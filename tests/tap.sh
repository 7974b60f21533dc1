# Minimal TAP helpers for shell tests (sourced). Each check prints one
# "ok N - name" or "not ok N - name" line; tap_done prints the plan.
tap_n=0
tap_failed=0
ok() { tap_n=$((tap_n + 1)); echo "ok $tap_n - $1"; }
not_ok() {
    tap_n=$((tap_n + 1)); tap_failed=$((tap_failed + 1))
    echo "not ok $tap_n - $1"
    shift
    for line in "$@"; do printf '%s\n' "$line" | sed 's/^/#   /'; done
}
skip_test() { tap_n=$((tap_n + 1)); echo "ok $tap_n - $1 # SKIP $2"; }
# check NAME COMMAND...: passes when the command exits 0
check() {
    name=$1; shift
    if out=$("$@" 2>&1); then ok "$name"; else not_ok "$name" "$out"; fi
}
tap_done() { echo "1..$tap_n"; [ "$tap_failed" -eq 0 ]; }
