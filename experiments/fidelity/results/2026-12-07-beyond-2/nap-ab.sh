#!/bin/bash
export OPENBLAS_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
A=${A:-build/cli/speedup}; B=${B:?a build with comm/psx.h PSX_NAP_NS 2000000L (a worktree)}
out=/tmp/napab; rm -rf $out; mkdir -p $out
configs=("1 2 epoch ps dedicated 32" "1 2 batch allreduce worker 32" "3 1 every:4 ps dedicated 32" "2 1 batch ps dedicated 32" "2 1 epoch ps dedicated 32")
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in 1 2 3; do
  for c in "${configs[@]}"; do
    read k t sync topo master b <<<"$c"
    for v in A B; do
      bin=${!v}
      f=$out/$v-${k}x$t-${sync/:/}-$topo-$master-r$r.trace.jsonl
      $bin train --workers $k --threads $t --sync $sync --topology $topo --master $master --batch $b --epochs 1 --limit 2368 --trace $f >/dev/null 2>&1
    done
  done
  echo "round $r $(date +%T)"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
for v in A B; do /work/main/build/cli/speedup trace --measurements --out $out/$v.csv $out/$v-*.trace.jsonl > /dev/null 2>&1 || true; done
