# Figure 5: calibration — measured step and synchronisation times against the fitted
# model, with residuals. Variables: stepfile (T b mean sd fitted), syncfile (topology-index
# K mean sd fitted), ncores (distinct T values), coreslist.
load scriptdir.'/common.gp'
set multiplot layout 2,2 title title noenhanced
unset title
set key bottom right box font ',9'
set offsets graph 0.08, graph 0.08, graph 0.15, graph 0.15
set xlabel 'examples per local step b'
set ylabel 'step time (s)'
plot for [i=0:ncores-1] stepfile index i using 2:3:4 with yerrorbars lc i+1 pt 7 ps 0.8 title 'measured, T='.word(coreslist, i+1), \
     for [i=0:ncores-1] stepfile index i using 2:5 with linespoints lc i+1 dt 1 pt 1 title 'fit, T='.word(coreslist, i+1)
set ylabel 'step residual (%)'
unset key
plot for [i=0:ncores-1] stepfile index i using 2:(100*($3-$5)/$5) with points lc i+1 pt 7 ps 0.8 notitle, 0 with lines lc rgb '#888888' notitle
set xlabel 'workers K'
set xtics 1
set key bottom right box font ',9'
set ylabel 'synchronisation time (s)'
plot for [i=0:1] syncfile index i using 2:3:4 with yerrorbars lc i+3 pt 5 ps 0.8 title word('ps allreduce', i+1).' measured', \
     for [i=0:1] syncfile index i using 2:5 with linespoints lc i+3 dt 2 pt 1 title word('ps allreduce', i+1).' fit'
set ylabel 'sync residual (%)'
unset key
plot for [i=0:1] syncfile index i using 2:(100*($3-$5)/$5) with points lc i+3 pt 5 ps 0.8 notitle, 0 with lines lc rgb '#888888' notitle
unset multiplot
