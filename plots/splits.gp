# Figure 2: the same total cores split into workers differently (1×4, 2×2, 4×1 ...), grouped
# by total cores: the predicted speedup of every sync mode and topology as a point with its
# 95% prediction interval, the measured one as an open circle on top — the seed's "fewer
# workers are better". Variables: datafile (x label, then per series: predicted lo hi
# measured; '-' where missing), nseries.
load scriptdir.'/common.gp'
set datafile missing '-'
set xlabel 'workers × cores per worker (grouped by total cores)'
set ylabel 'speedup over 1 worker × 1 core'
set yrange [0:*]
set offsets 0.6, 0.6, 0, 0
set key inside right top box opaque
set xtics rotate by -45 font ',9'
set grid xtics ytics
# The series side by side within a split, so their intervals do not hide each other.
off(s) = 0.12 * (s - (nseries - 1) / 2.0)
plot datafile using 1:(NaN):xtic(2) with points notitle, \
     for [s=0:nseries-1] datafile using ($1 + off(s)):(column(4*s+3)):(column(4*s+4)):(column(4*s+5)) \
         with yerrorbars lc s+1 pt 7 ps 1 lw 1.5 title columnhead(4*s+3).' predicted (95% PI)', \
     for [s=0:nseries-1] datafile using ($1 + off(s)):(column(4*s+6)) with points lc s+1 pt 6 ps 2.2 lw 2.5 \
         title columnhead(4*s+3).' measured'
