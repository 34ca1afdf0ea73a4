# Figure 1: speedup against workers (or total cores), one predicted curve per sync mode and
# topology with its 95% prediction interval for one run as a band, measured points on top
# (the seed's figure with the model beside it).
# Variables: datafile (predicted, one index block per series: cores speedup ci_lo ci_hi),
# measfile (measured, same blocks, NaN rows where nothing was measured), nseries, names,
# ycap, xlabel, hasmeas (0: no measured points, no legend entries for them).
load scriptdir.'/common.gp'
set xlabel xlabel
set ylabel 'speedup over 1 worker × 1 core'
set logscale x 2
# Integer tics at powers of two: 1, 2, 4, ... workers.
set xtics 2 format '%.0f'
set mxtics default
set yrange [0:*]
set key top left box opaque
# The band is the 95% interval for one run: filled, and edged so that a narrow one still shows.
# The linear reference only up to ycap, a little above the data (computed by the caller):
# drawn to K×T = 64 it would set the y axis and flatten every curve below 2 into the floor.
plot for [i=0:nseries-1] datafile index i using 1:3:4 with filledcurves fs transparent solid 0.25 noborder lc i+1 notitle, \
     for [i=0:nseries-1] datafile index i using 1:3 with lines lc i+1 lw 0.6 dt 3 notitle, \
     for [i=0:nseries-1] datafile index i using 1:4 with lines lc i+1 lw 0.6 dt 3 notitle, \
     for [i=0:nseries-1] datafile index i using 1:2 with linespoints lc i+1 lw 2 pt 7 ps 0.8 title word(names, i+1).' predicted (95% band)', \
     for [i=0:hasmeas*nseries-1] measfile index i using 1:2 with points lc i+1 pt 6 ps 2.2 lw 2.5 title word(names, i+1).' measured', \
     (x <= ycap ? x : 1/0) with lines dt 2 lc rgb '#888888' title 'linear'
