# Figure 1: speedup against total cores, one predicted curve with its 95% band per sync
# mode, measured points on top (the seed's figure with the model beside it).
# Variables: datafile (predicted, one index block per series: cores speedup ci_lo ci_hi),
# measfile (measured, same blocks, NaN rows where nothing was measured), nseries, names, ycap.
load scriptdir.'/common.gp'
set xlabel 'total cores K×T'
set ylabel 'speedup over 1 worker × 1 core'
set logscale x 2
set key top left box opaque
# The linear reference only up to ycap, a little above the data (computed by the caller):
# drawn to K×T = 64 it would set the y axis and flatten every curve below 2 into the floor.
plot for [i=0:nseries-1] datafile index i using 1:3:4 with filledcurves fs transparent solid 0.18 noborder lc i+1 notitle, \
     for [i=0:nseries-1] datafile index i using 1:2 with linespoints lc i+1 pt 7 ps 0.7 title word(names, i+1).' predicted', \
     for [i=0:nseries-1] measfile index i using 1:2 with points lc i+1 pt 4 ps 2 lw 2 title word(names, i+1).' measured', \
     (x <= ycap ? x : 1/0) with lines dt 2 lc rgb '#888888' title 'linear'
