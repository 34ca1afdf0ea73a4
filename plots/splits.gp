# Figure 2: the same total cores split into workers differently (1×4, 2×2, 4×1 ...):
# predicted (solid) and measured (hatched) speedup side by side — the seed's "fewer
# workers are better". Variables: datafile (label, then per series a predicted and a
# measured column, '-' where missing), nseries.
load scriptdir.'/common.gp'
set datafile missing '-'
set style data histogram
set style histogram clustered gap 1
set boxwidth 0.9
set xlabel 'workers × cores per worker (grouped by total cores)'
set ylabel 'speedup over 1 worker × 1 core'
set yrange [0:*]
set key outside right top box
set xtics rotate by -45 font ',9'
plot for [s=0:nseries-1] datafile using 2*s+2:xtic(1) title columnheader(2*s+2) lc s+1 fs solid 0.85 border -1, \
     for [s=0:nseries-1] datafile using 2*s+3 title columnheader(2*s+3) lc s+1 fs pattern 4 border -1
