# Shared look of every figure. Variables set by speedup plot: term, outfile, title.
if (term eq 'svg') { set terminal svg size 1000,640 dynamic enhanced font 'Sans,12' background rgb 'white' } \
else { set terminal pngcairo size 1000,640 enhanced font 'Sans,11' background rgb 'white' }
set output outfile
set title title noenhanced
set grid lc rgb '#dddddd'
set border lc rgb '#444444'
set key noenhanced
set linetype 1 lc rgb '#1f77b4' lw 2 pt 7
set linetype 2 lc rgb '#d62728' lw 2 pt 5
set linetype 3 lc rgb '#2ca02c' lw 2 pt 9
set linetype 4 lc rgb '#ff7f0e' lw 2 pt 11
set linetype 5 lc rgb '#9467bd' lw 2 pt 13
set linetype 6 lc rgb '#8c564b' lw 2 pt 15
