#!/usr/bin/env bash
# Predictions do not move unless a change means them to: `speedup calibrate --from-traces`
# on the committed traces, and `speedup model`, `simulate` (a fixed seed) and `advise` on
# the committed calibration, against the outputs tests/data/golden/make wrote. model,
# simulate and advise must match byte for byte (they are pure arithmetic on the file);
# the fit's numbers within a relative 1e-9 (another CPU's BLAS kernels may round the
# last bits differently).
# usage: test_golden.sh SOURCE_DIR SPEEDUP_BIN
set -euo pipefail
src=$1 bin=$(realpath "$2")
golden=$src/tests/data/golden
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$golden/run" "$bin" "$out"
fail=0
for f in model.csv simulate.csv advise.csv; do
    cmp -s "$golden/$f" "$out/$f" || { echo "FAIL: $f differs from $golden/$f:"; diff "$golden/$f" "$out/$f" | head -20 || true; fail=1; }
done
for f in calibration.json calibrate.txt; do
    awk -f "$src/tests/golden_compare.awk" "$golden/$f" "$out/$f" || { echo "FAIL: $f"; fail=1; }
done
[ $fail -eq 0 ] && echo "golden: model, simulate, advise byte-identical; calibrate within 1e-9"
exit $fail
