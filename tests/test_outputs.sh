#!/usr/bin/env bash
# test_outputs: every command that writes, pointed at a read-only directory, a full one and
# a nearly full one (small tmpfs mounts), exits 1 with one line "speedup: ..." naming the
# file (or directory) and the reason, and leaves no half-written file: no temporary file,
# not the file it failed on; where nothing could be written, nothing at all.
#   tests/test_outputs.sh SPEEDUP_BIN
# Exit 77 (ctest SKIP_RETURN_CODE) with the reason when this host cannot mount a tmpfs
# (not root, or a container without CAP_SYS_ADMIN).
set -euo pipefail

bin=${1:?usage: test_outputs.sh SPEEDUP_BIN}
root=$(cd "$(dirname "$0")/.." && pwd)
export OPENBLAS_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Shared memory and loopback only: test_cluster beside it adds and removes interfaces.
export OMPI_MCA_btl=self,vader OMPI_MCA_oob_tcp_if_include=lo
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" # Open MPI's leaks are not ours
# A long grid (under ASan) says its progress on stderr; the error lines are what is checked here.
export SPEEDUP_PROGRESS_S=1000000
skip() { echo "test_outputs: SKIP: $*"; exit 77; }
failures=0
fail() { echo "test_outputs: FAIL: $*" >&2; failures=$((failures + 1)); }

[ "$(id -u)" -eq 0 ] || skip "needs root to mount a small tmpfs"
work=$(mktemp -d /tmp/speedup-outputs-XXXXXX)
ro="$work/ro" full="$work/full" nearly="$work/nearly" in="$work/in"
mkdir -p "$ro" "$full" "$nearly" "$in"
cleanup() {
  for d in "$ro" "$full" "$nearly"; do umount "$d" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
if ! err=$(mount -t tmpfs -o size=64k tmpfs "$ro" 2>&1); then
  skip "cannot mount a tmpfs here (mount: $err)"
fi
mount -o remount,ro "$ro"
mount -t tmpfs -o size=64k tmpfs "$full"
dd if=/dev/zero of="$full/filler" bs=4k 2>/dev/null || true # until the disk is full
mount -t tmpfs -o size=256k tmpfs "$nearly"
dd if=/dev/zero of="$nearly/filler" bs=4k count=63 2>/dev/null # 4 KiB left: outputs start, then fail

# Inputs, written where there is room.
net=(--net conv3x3x4,relu,pool2,fc16,relu,fc10)
"$bin" train --limit 256 --epochs 1 --batch 8 "${net[@]}" --quiet --trace "$in/run.trace.jsonl" >/dev/null
"$bin" model --csv --out "$in/p.csv" >/dev/null
traces="$root/experiments/cluster/results/d-quiet/1gbit"
big_trace="$traces/commbench.trace.jsonl" # ~40 kB of trace, more as Chrome JSON
workers=$(seq -s, 1 32)                    # 384 rows of predictions: ~60 kB

# expect DIR DESCRIPTION ARGS...: `speedup ARGS` fails on DIR's filesystem as it should:
# exit 1, one line naming a path under DIR and the reason; no temporary file left, nor the
# file the error names. Where nothing could be written (read-only, full) nothing is left at
# all; a nearly full disk may keep the whole files written before the failing one.
expect() {
  local dir=$1 what=$2 out rc=0 named left
  shift 2
  out=$("$bin" "$@" 2>&1 >/dev/null) || rc=$?
  local reason="Read-only file system"
  [ "$dir" = "$ro" ] || reason="No space left on device|is the disk full"
  if [ "$rc" -ne 1 ]; then
    fail "$what on $(basename "$dir"): exit $rc, want 1 (stderr: $out)"
  elif ! grep -q "^speedup: .*$dir" <<<"$out" || ! grep -Eq "$reason" <<<"$out"; then
    fail "$what on $(basename "$dir"): the error does not name the path and '$reason': $out"
  elif [ "$(grep -c . <<<"$out")" -ne 1 ]; then
    fail "$what on $(basename "$dir"): more than one line on stderr: $out"
  fi
  named=$(grep -o "$dir/[^: ]*" <<<"$out" | head -1 || true)
  [ -z "$named" ] || [ ! -f "$named" ] || fail "$what on $(basename "$dir"): left the file it failed on, $named"
  if [ "$dir" = "$nearly" ]; then
    left=$(find "$dir" -type f -name '*.tmp*')
  else
    left=$(find "$dir" -type f ! -name filler)
  fi
  [ -z "$left" ] || fail "$what on $(basename "$dir"): left $left"
  find "$dir" -mindepth 1 ! -name filler -exec rm -rf {} + 2>/dev/null || true
}

for d in "$ro" "$full" "$nearly"; do
  expect "$d" "train --checkpoint" train --limit 64 --epochs 1 --batch 8 --quiet --checkpoint "$d/m.ckpt"
  expect "$d" "train --trace" train --limit 512 --epochs 1 --batch 4 "${net[@]}" --quiet --trace "$d/t.trace.jsonl"
  expect "$d" "model --out" model --workers "$workers" --cores 1,2,4 --out "$d/p.csv"
  expect "$d" "simulate --out" simulate --workers "$workers" --cores 1,2 --reps 2 --out "$d/s.csv"
  expect "$d" "simulate --timeline" simulate --workers 16 --cores 1 --reps 2 --timeline "$d/tl.json"
  expect "$d" "trace --chrome" trace --chrome "$big_trace" "$d/c.json"
  expect "$d" "trace --measurements" trace --measurements --out "$d/m.csv" "$traces"/../*/k[1-4]-*.trace.jsonl
  expect "$d" "calibrate --from-traces" calibrate --from-traces "$traces" --out "$d/cal.json"
  expect "$d" "plot" plot --out "$d/figs" --predictions "$in/p.csv" --trace "$in/run.trace.jsonl"
  # Measuring commands say it before they measure: minutes of runs would be lost otherwise.
  # (A disk that fills during the plan keeps the whole traces of the runs done so far.)
  [ "$d" = "$nearly" ] && continue
  expect "$d" "calibrate (the plan)" calibrate --budget 1 --out "$d/cal.json"
  expect "$d" "calibrate --out-dir" calibrate --budget 1 --out-dir "$d/traces" --out "$in/cal.json"
  expect "$d" "report" report --budget 1 --out "$d/out"
done
if [ "$failures" -ne 0 ]; then
  echo "test_outputs: $failures failure(s)" >&2
  exit 1
fi
echo "test_outputs: every writing command refused read-only, full and nearly full directories cleanly"
