/* gnuplot — run one of the plots/NAME.gp scripts with gnuplot, outputs written atomically.
 *
 * gnuplot_render(script, vars, n_vars, out_base, err) runs the script twice, once with
 * term='pngcairo' and once with term='svg', each time into a temporary file that is
 * renamed to OUT_BASE.png / OUT_BASE.svg only when gnuplot exits 0. vars are gnuplot
 * statements ("datafile='x.dat'", "title='...'") passed with -e before the script.
 * Errors: the scripts not found (gnuplot_scripts_check), gnuplot missing from PATH
 * ($SPEEDUP_GNUPLOT overrides the program), or its first line of stderr.
 */
#ifndef SPEEDUP_GNUPLOT_H
#define SPEEDUP_GNUPLOT_H

int gnuplot_render(const char *script, const char *const *vars, int n_vars, const char *out_base,
                   char *err, int errlen);

/* Escapes text for use inside a single-quoted gnuplot string (doubles the quotes). */
void gnuplot_quote(const char *text, char *out, int outlen);

/* Where the .gp scripts live: $SPEEDUP_PLOTS_DIR, else share/speedup/plots beside the
 * running binary's bin/ (the build tree mirrors that: build/share/speedup/plots). */
const char *gnuplot_scripts_dir(void);

/* 0 when the scripts can be read there, else -1 with the path and the remedy in err. */
int gnuplot_scripts_check(char *err, int errlen);

#endif
