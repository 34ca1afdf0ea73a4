#!/usr/bin/env bash
# test_cluster: the namespace cluster of experiments/cluster works end to end.
#   tests/test_cluster.sh LATENCY_PROBE SPEEDUP
# Brings up two hosts under a name and subnet of its own (so it cannot meet a cluster a
# user has up, nor a second copy of itself), reshapes them (up is idempotent), runs
# `mpirun -np 2` across them with the nsexec rsh agent, and checks that the two ranks ran
# in different namespaces with different addresses and that MPI messages crossed between
# them; that async training with its server on one host and its worker on the other (the
# go before each push and the got after each pull: train/psx.h) is plain training bit for
# bit; then `down` must leave nothing behind. Everything is taken down on any exit.
# Exit 77 (ctest SKIP_RETURN_CODE) with the reason when this host cannot make namespaces.
set -euo pipefail

probe=${1:?usage: test_cluster.sh LATENCY_PROBE SPEEDUP}
speedup=${2:?usage: test_cluster.sh LATENCY_PROBE SPEEDUP}
root=$(cd "$(dirname "$0")/.." && pwd)
cluster="$root/experiments/cluster"
# Open MPI leaks at exit; under LeakSanitizer (an ASan build of the probe) that is not ours.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
fail() { echo "test_cluster: FAIL: $*" >&2; exit 1; }
skip() { echo "test_cluster: SKIP: $*"; exit 77; }

# ---- can this host make a cluster at all?
[ "$(id -u)" -eq 0 ] || skip "needs root to create network namespaces"
for tool in ip tc mpirun unshare; do
  command -v "$tool" >/dev/null || skip "'$tool' is not installed (scripts/setup installs it)"
done
prefix="t$(( $$ % 10000000 ))"
if ! err=$(ip netns add "$prefix-probe" 2>&1); then
  skip "this host does not allow network namespaces (ip netns add: $err)"
fi
# Adding is not enough: inside a chroot or some containers `ip netns exec` cannot remount /.
if ! err=$(ip netns exec "$prefix-probe" true 2>&1); then
  ip netns del "$prefix-probe"
  skip "this host cannot enter network namespaces (ip netns exec: $err)"
fi
ip netns del "$prefix-probe"

# A /24 nobody routes yet, picked from the pid so that parallel copies differ.
subnet=""
for k in $(seq 0 199); do
  c=$(( ($$ + k) % 200 + 20 ))
  if [ -z "$(ip -4 route show to exact "10.214.$c.0/24")" ] \
     && ! grep -q " 10\.214\.$c\." <<<"$(ip -4 -o addr show)"; then
    subnet="10.214.$c"
    break
  fi
done
[ -n "$subnet" ] || skip "no free /24 in 10.214.0.0/16 for a test cluster"

cleanup() { "$cluster/down" --prefix "$prefix" >/dev/null 2>&1 || true; }
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- up, and up again with another rate: same hosts, links reshaped
"$cluster/up" 2 --prefix "$prefix" --subnet "$subnet" --rate 100mbit >/dev/null \
  || fail "first up failed"
"$cluster/up" 2 --prefix "$prefix" --subnet "$subnet" --rate 1gbit >/dev/null \
  || fail "second up (reshape) failed"
[ "$(ip netns list | awk '{print $1}' | grep -cE "^$prefix-h[0-9]+\$")" -eq 2 ] \
  || fail "expected exactly 2 namespaces $prefix-h1, $prefix-h2 after up twice"
for i in 1 2; do
  grep -q "tbf.*rate 1Gbit" <<<"$(tc qdisc show dev "$prefix-h${i}r")" \
    || fail "root end of host $i is not shaped at 1gbit: $(tc qdisc show dev "$prefix-h${i}r")"
  grep -q "tbf.*rate 1Gbit" <<<"$(ip netns exec "$prefix-h$i" tc qdisc show dev eth0)" \
    || fail "host $i's eth0 is not shaped at 1gbit"
done
grep -q "^$subnet\.2 " <<<"$(ip netns exec "$prefix-h1" getent hosts "$prefix-h2")" \
  || fail "$prefix-h2 does not resolve to $subnet.2 inside $prefix-h1"

# ---- mpirun -np 2 across the two hosts
out=$(timeout 60 "$cluster/run" --prefix "$prefix" -np 2 "$probe" --where \
        --iters 20 --warmup 2 --bytes 8,4096 2>&1) \
  || fail "mpirun across the cluster failed: $out"
echo "$out"
where=$(echo "$out" | grep '^where,' || true)
[ "$(echo "$where" | grep -c .)" -eq 2 ] || fail "expected 2 'where' lines, got: $where"
host0=$(echo "$where" | awk -F, '$2 == 0 {print $3}')
host1=$(echo "$where" | awk -F, '$2 == 1 {print $3}')
addr0=$(echo "$where" | awk -F, '$2 == 0 {print $4}')
addr1=$(echo "$where" | awk -F, '$2 == 1 {print $4}')
[ "$addr0" != "$addr1" ] || fail "both ranks saw the same address '$addr0'"
[ "$addr0" = "$subnet.1" ] && [ "$addr1" = "$subnet.2" ] \
  || fail "ranks saw addresses '$addr0' and '$addr1', expected $subnet.1 and $subnet.2"
[ "$host0" = "$prefix-h1" ] && [ "$host1" = "$prefix-h2" ] \
  || fail "ranks ran on '$host0' and '$host1', expected $prefix-h1 and $prefix-h2"
grep -q '^pingpong,4096,2,20,' <<<"$out" || fail "no 4 KB ping-pong result between the hosts"
grep -q '^allreduce,4096,2,20,' <<<"$out" || fail "no 4 KB all-reduce result between the hosts"

# ---- async across the hosts: one worker pulling every step is plain SGD, bit for bit
train=(train --limit 256 --epochs 2 --batch 16 --net conv3x3x4,relu,pool2,fc16,relu,fc10 --threads 1 --quiet --seed 3)
crc() { grep -o '"params_crc32": *"[0-9a-f]*"' | sed 's/.*: *"\([0-9a-f]*\)"/\1/'; }
plain=$("$speedup" "${train[@]}" | crc) || fail "plain training failed"
out=$(timeout 120 "$cluster/run" --prefix "$prefix" -np 2 "$speedup" "${train[@]}" --sync async 2>&1) \
  || fail "async across the cluster failed: $out"
across=$(crc <<<"$out" || true)
[ -n "$plain" ] && [ "$across" = "$plain" ] \
  || fail "async with its worker on the other host: params_crc32 '$across', plain training '$plain'"

# ---- down removes everything
"$cluster/down" --prefix "$prefix" >/dev/null || fail "down failed"
left=$(ip netns list | awk '{print $1}' | grep -E "^$prefix-" || true)
[ -z "$left" ] || fail "namespaces left after down: $left"
! ip link show "$prefix-br" >/dev/null 2>&1 || fail "bridge $prefix-br left after down"
[ ! -e "/etc/netns/$prefix-h1" ] || fail "/etc/netns/$prefix-h1 left after down"
[ ! -e "/run/speedup-cluster/$prefix" ] || fail "state /run/speedup-cluster/$prefix left after down"
echo "test_cluster: ok (ranks on $host0 $addr0 and $host1 $addr1)"
