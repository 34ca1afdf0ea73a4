# Figure 3: where the time goes — start-up, compute, the optimizer update, communication
# and waiting at the barrier, stacked, per configuration. Variables: datafile (label
# startup compute update comm wait).
load scriptdir.'/common.gp'
set style data histogram
set style histogram rowstacked
set style fill solid 0.85 border -1
set boxwidth 0.75
set xlabel 'configuration (workers×cores, sync, topology; p = predicted, m = measured)'
set ylabel 'time (s)'
set yrange [0:*]
set key top right box opaque
set xtics rotate by -45 font ',9'
plot for [c=2:6] datafile using c:xtic(1) title columnheader(c)
