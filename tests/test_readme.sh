#!/usr/bin/env bash
# The README's example outputs are what the commands print: each README code block that
# starts with `$ build/cli/speedup advise` or `... model` (on the committed calibration of a
# 2-core VM, tests/data/golden/calibration.json, which the README names) or the table
# calibration's `calibrate --from-table` and `model` (rows.csv as the block shows it) is
# run, and every output line the block quotes must be a line of what it printed. A block
# may leave lines out (the README marks them "…"), never change one.
# usage: test_readme.sh SOURCE_DIR SPEEDUP_BIN
set -euo pipefail
src=$1 bin=$(realpath "$2")
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
readme=$src/README.md
fail=0

# The lines of the code block whose first line starts with "$ $1" (the command line and
# the "…" lines left out), and that command's arguments after build/cli/speedup.
quoted() { awk -v want="\$ $1" '
    /^```/ { if (inside) exit; next_is_first = 1; next }
    next_is_first { next_is_first = 0; if (index($0, want) == 1) { inside = 1; next } }
    inside && $0 != "…" && $0 !~ /^\$ / { print }' "$readme"; }
command_of() { grep -m1 "^\$ $1" "$readme" | sed 's/^\$ build\/cli\/speedup //; s/ *#.*$//'; }

check() { # NAME PRINTED QUOTED
    local missing
    missing=$(grep -Fxv -f "$2" "$3" || true)
    if [ -n "$missing" ]; then
        echo "FAIL: README's $1 example quotes lines the command does not print:"
        echo "$missing" | head -10
        fail=1
    fi
}

for cmd in "build/cli/speedup advise" "build/cli/speedup model --calib out/"; do
    args=$(command_of "$cmd")
    [ -n "$args" ] || { echo "FAIL: no README block starts with \$ $cmd"; fail=1; continue; }
    quoted "$cmd" > "$out/quoted"
    # shellcheck disable=SC2086 # the README's arguments, split as a shell would
    (cd "$out" && "$bin" ${args//out\/calibration.json/$src/tests/data/golden/calibration.json}) > "$out/printed" 2>&1
    check "'$cmd'" "$out/printed" "$out/quoted"
done

# The table calibration: rows.csv as the README's `cat rows.csv` shows it.
awk '/^\$ cat rows.csv/ { inside = 1; next } inside && /^\$ / { exit } inside { print }' "$readme" > "$out/rows.csv"
table_args=$(command_of "build/cli/speedup calibrate --from-table")
# shellcheck disable=SC2086
(cd "$out" && "$bin" $table_args) > /dev/null 2>&1 || {
    echo "FAIL: README's table calibration did not run: $table_args"; fail=1; }
model_args=$(awk '/^\$ build\/cli\/speedup model --calib gpu.json/ { line = $0; while (line ~ /\\$/) {
    sub(/\\$/, "", line); getline more; line = line more } print line; exit }' "$readme" |
    sed 's/^\$ build\/cli\/speedup //')
# shellcheck disable=SC2086
(cd "$out" && "$bin" $model_args) > "$out/printed" 2>&1
awk '/^\$ build\/cli\/speedup model --calib gpu.json/ { inside = 1; next } inside && /^```/ { exit }
     inside && /^    --/ { next } inside && $0 != "…" { print }' "$readme" > "$out/quoted"
check "table model" "$out/printed" "$out/quoted"

[ $fail -eq 0 ] && echo "readme: every quoted output line is printed"
exit $fail
