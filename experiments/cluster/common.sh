# shellcheck shell=bash
# experiments/cluster/common.sh: names and helpers shared by up, down, nsexec and run.
# Everything a cluster makes is named after its prefix, so down can find it from the
# names alone (no state needed) and two clusters with different prefixes never meet.
#   namespaces  PREFIX-h1 .. PREFIX-hN
#   links       PREFIX-hIr (root end of host I's veth; the other end is eth0 inside)
#   bridge      PREFIX-br
#   state       /run/speedup-cluster/PREFIX/{hostfile,hosts,settings}
#   names       /etc/netns/PREFIX-hI/hosts

# shellcheck disable=SC2034  # bridge and statedir are for the scripts that source this
cluster_names() {
  bridge="$1-br"
  statedir="/run/speedup-cluster/$1"
}

host_ns() { echo "$1-h$2"; }
host_link() { echo "$1-h$2r"; }

# The cluster's namespaces that exist now, one a line (ip netns list adds "(id: N)").
cluster_hosts() {
  ip netns list | awk '{print $1}' | grep -E "^$1-h[0-9]+\$" || true
}

# shape_link NS DEV RATE: tbf on DEV's egress (in namespace NS, "" for the root one).
# Shaping both ends of a veth limits both directions. RATE "none" removes the shaping.
#
# Why these tbf parameters (see README.md, "small-message latency"): the bucket holds
# enough bytes (burst) for a 64 KB TSO/GSO super-packet plus headroom, so a lone small
# message never waits for tokens; the queue may hold 5 ms of traffic at RATE, so bulk
# transfers back up in the queue (and TCP sees it) instead of being dropped.
shape_link() {
  local ns=$1 dev=$2 rate=$3
  local -a ipns=()
  [ -z "$ns" ] || ipns=(ip netns exec "$ns")
  if [ "$rate" = none ]; then
    "${ipns[@]}" tc qdisc del dev "$dev" root 2>/dev/null || true
    return
  fi
  "${ipns[@]}" tc qdisc replace dev "$dev" root tbf rate "$rate" \
    burst "${TBF_BURST:-256kb}" latency "${TBF_LATENCY:-5ms}" \
    || { echo "cluster: tc cannot shape $dev${ns:+ in $ns} at $rate" >&2; return 1; }
}
