# Figure 6: test accuracy against training time (evaluation excluded), one colour per
# configuration: measured points (filled: the whole test set at an epoch's end; open and
# small: --eval-every's fixed subset) and the predicted curve (the calibration's accuracy
# fit, model/efficiency.h, at the cost model's time per epoch).
# One series per configuration (KxT/sync/bB): the runs of its seeds share its colour and its
# one predicted curve. The y axis starts a point below the lowest accuracy measured after the
# learning rate's warm-up: where the targets are decided, not the climb from chance.
# Variables: measfile (one index block per series: time accuracy subset), predfile (same
# blocks: time accuracy, "NaN NaN" where the fit cannot predict), nseries, names, ylow.
load scriptdir.'/common.gp'
set xlabel 'training time (s; start-up in, evaluation out)'
set ylabel 'test accuracy'
set key bottom right box opaque title 'lines: predicted, dots: measured'
set format y '%.2f'
set yrange [ylow:*]
# Six colours (common.gp), then again dashed with squares, then dotted with triangles.
series_lc(i) = i % 6 + 1
series_pt(i) = i < 6 ? 7 : i < 12 ? 5 : 9
series_pt_open(i) = series_pt(i) - 1
plot for [i=0:nseries-1] predfile index i using 1:2 with lines lc series_lc(i) lw 2 dt int(i / 6) + 1 title word(names, i+1), \
     for [i=0:nseries-1] measfile index i using 1:($3 == 0 ? $2 : 1/0) with points lc series_lc(i) pt series_pt(i) ps 1.1 notitle, \
     for [i=0:nseries-1] measfile index i using 1:($3 == 1 ? $2 : 1/0) with points lc series_lc(i) pt series_pt_open(i) ps 0.6 notitle
