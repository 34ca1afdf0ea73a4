# golden_compare.awk — compare two text files token by token: every number within a
# relative 1e-9 (the fit's last bits may differ with the BLAS kernels of another CPU),
# everything else exactly. Prints the first difference and exits 1; 0 when they agree.
# usage: awk -f golden_compare.awk EXPECTED ACTUAL
function is_num(s) { return s ~ /^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$/ }
function abs(x) { return x < 0 ? -x : x }
function tokens(line, out,    n, s, m) {
    n = 0
    while (length(line) > 0) {
        if (match(line, /^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?/)) { m = RLENGTH }
        else if (match(line, /^[^-+.0-9]+/)) { m = RLENGTH }
        else { m = 1 }
        out[++n] = substr(line, 1, m)
        line = substr(line, m + 1)
    }
    return n
}
FNR == NR { want[FNR] = $0; nwant = FNR; next }
{
    if (FNR > nwant) { printf "%s: line %d: extra line: %s\n", FILENAME, FNR, $0; bad = 1; exit 1 }
    na = tokens(want[FNR], a); nb = tokens($0, b)
    same = (na == nb)
    for (i = 1; same && i <= na; i++) {
        if (is_num(a[i]) && is_num(b[i])) {
            x = a[i] + 0; y = b[i] + 0
            if (abs(x - y) > 1e-9 * (abs(x) > abs(y) ? abs(x) : abs(y)) + 1e-300) same = 0
        } else if (a[i] != b[i]) same = 0
    }
    if (!same) { printf "%s: line %d differs:\n  expected: %s\n  got:      %s\n", FILENAME, FNR, want[FNR], $0; bad = 1; exit 1 }
    ngot = FNR
}
END { if (!bad && ngot < nwant) { printf "%s: %d lines, expected %d\n", FILENAME, ngot, nwant; exit 1 } }
