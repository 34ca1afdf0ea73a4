#!/usr/bin/env bash
# test_linkshare: experiments/async/linkshare.c on 3 local ranks (no cluster needed): one
# row per op in its CSV, the arrivals in order and every ratio positive, and usage errors
# (a bad flag, not 3 ranks) exit 2 with a message.
#   tests/test_linkshare.sh PROBE MPIEXEC
set -euo pipefail
probe=${1:?usage: test_linkshare.sh PROBE MPIEXEC} mpiexec=${2:?usage: test_linkshare.sh PROBE MPIEXEC}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ASAN_OPTIONS=detect_leaks=0
fail() { echo "test_linkshare: FAIL: $*" >&2; exit 1; }
# Shared memory and loopback only: a test cluster beside it (test_cluster) adds and removes
# interfaces that Open MPI would otherwise try, and fail, to bind to.
run() { timeout 60 "$mpiexec" --oversubscribe --mca btl self,vader --mca oob_tcp_if_include lo "$@"; }

out=$(run -np 3 "$probe" --bytes 65536 --reps 3 --warmup 1 --offset 0.3) || fail "3 ranks: exit $?: $out"
echo "$out"
[ "$(echo "$out" | head -1)" = "op,bytes,offset,reps,median,p10,p90" ] || fail "header: $(echo "$out" | head -1)"
for op in alone duplex fanout_first fanout_second; do
  row=$(echo "$out" | grep "^$op,") || fail "no $op row"
  echo "$row" | awk -F, '$2 == 65536 && $3 == 0.3 && $4 == 3 && $5 > 0 && $6 > 0 && $7 >= $6 {ok = 1} END {exit !ok}' \
    || fail "$op row: $row"
done
first=$(echo "$out" | awk -F, '$1 == "fanout_first" {print $5}')
second=$(echo "$out" | awk -F, '$1 == "fanout_second" {print $5}')
awk -v f="$first" -v s="$second" 'BEGIN {exit !(f <= s)}' || fail "first arrival $first after the second $second"

set +e
err=$(run -np 2 "$probe" 2>&1); rc=$?
set -e
[ "$rc" -eq 2 ] || fail "2 ranks: exit $rc, want 2: $err"
grep -q "exactly 3 ranks" <<<"$err" || fail "2 ranks: no reason given: $err"
set +e
err=$(run -np 3 "$probe" --reps 0 2>&1); rc=$?
set -e
[ "$rc" -eq 2 ] || fail "--reps 0: exit $rc, want 2: $err"
echo "test_linkshare: ok"
