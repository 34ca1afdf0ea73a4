# Figure 6: test accuracy against training time (evaluation excluded), one colour per
# configuration: measured points (filled: the whole test set at an epoch's end; open and
# small: --eval-every's fixed subset) and the predicted curve (the calibration's accuracy
# fit, model/efficiency.h, at the cost model's time per epoch).
# Variables: measfile (one index block per series: time accuracy subset), predfile (same
# blocks: time accuracy, "NaN NaN" where the fit cannot predict), nseries, names.
load scriptdir.'/common.gp'
set xlabel 'training time (s; start-up in, evaluation out)'
set ylabel 'test accuracy'
set key bottom right box opaque title 'lines: predicted, dots: measured'
set format y '%.2f'
plot for [i=0:nseries-1] predfile index i using 1:2 with lines lc i+1 lw 2 title word(names, i+1), \
     for [i=0:nseries-1] measfile index i using 1:($3 == 0 ? $2 : 1/0) with points lc i+1 pt 7 ps 1.1 notitle, \
     for [i=0:nseries-1] measfile index i using 1:($3 == 1 ? $2 : 1/0) with points lc i+1 pt 6 ps 0.6 notitle
