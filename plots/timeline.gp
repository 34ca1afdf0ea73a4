# Figure 4: a timeline (Gantt) of one run per worker — measured above, simulated below.
# Variables: datafile (t0 t1 row phase), ytics statement, nrows.
load scriptdir.'/common.gp'
set xlabel 'time since start (s)'
set ylabel ''
set yrange [-0.7:nrows-0.3]
set key outside right top box
set style fill solid 0.9 noborder
set linetype 11 lc rgb '#7f7f7f'
set linetype 12 lc rgb '#1f77b4'
set linetype 13 lc rgb '#d62728'
set linetype 14 lc rgb '#ffbf00'
set linetype 15 lc rgb '#2ca02c'
set linetype 16 lc rgb '#9467bd'
plot datafile using (($1+$2)/2):3:(($2-$1)/2):(0.38):($4+11) with boxxyerror lc variable notitle, \
     for [p=0:5] NaN with boxes lt p+11 fs solid title word('startup compute comm wait eval update', p+1)
