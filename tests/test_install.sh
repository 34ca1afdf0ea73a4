#!/usr/bin/env bash
# `cmake --install` of the built tree into a temporary prefix, which is then moved (an
# installed speedup must find its files from where it is, not from where it was built or
# first installed) and used as a user would, from a directory outside the source tree:
# the binary's --help, --version, `model` and `plot`; the example program built on
# libspeedup with pkg-config (shared and static) and with CMake's find_package.
# Expected numbers are worked out by hand below (one is the committed golden output of
# `speedup model` for a calibration.json), not by the code under test.
# usage: test_install.sh BUILD_DIR SOURCE_DIR VERSION GIT_REVISION_HEADER
# (GIT_REVISION_HEADER: the build's generated git_revision.h, the revision it was built at)
set -euo pipefail
build=$1 src=$2 version=$3
git_rev=$(sed -n 's/^#define SPEEDUP_GIT "\(.*\)"$/\1/p' "$4")
unset SPEEDUP_PLOTS_DIR SPEEDUP_GNUPLOT PKG_CONFIG_PATH CMAKE_PREFIX_PATH
tmp=$(mktemp -d /tmp/speedup-install-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$tmp/first" >/dev/null
mv "$tmp/first" "$tmp/prefix"
p=$tmp/prefix
mkdir "$tmp/work"
cd "$tmp/work"

for f in bin/speedup share/speedup/plots/common.gp share/speedup/plots/speedup.gp \
         share/man/man1/speedup.1 share/bash-completion/completions/speedup \
         share/doc/speedup/README.md include/speedup/speedup.h include/speedup/model/costmodel.h \
         include/speedup/sim/job.h \
         lib/libspeedup.so lib/libspeedup.a lib/pkgconfig/speedup.pc \
         lib/cmake/speedup/speedupConfig.cmake lib/cmake/speedup/speedupTargets.cmake; do
    [ -e "$p/$f" ] || fail "not installed: $f"
done
# No installed file names the tree it was built from (a compiled-in path, an RPATH).
for dir in "$src" "$build"; do
    if hits=$(grep -rlF "$dir" "$p"); then fail "installed files name $dir: $hits"; fi
done

speedup=$p/bin/speedup
grep -q '^Commands:' <<<"$("$speedup" --help)" || fail "speedup --help: no command list"
v=$("$speedup" --version)
[ "$v" = "speedup $version (git $git_rev)" ] || fail "speedup --version: '$v', expected 'speedup $version (git $git_rev)'"
if git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
    # The revision it names is one git knows (a hash, or a tag's describe).
    git -C "$src" rev-parse -q --verify "${git_rev%-dirty}^{commit}" >/dev/null ||
        fail "speedup --version: '$git_rev' is not a commit of $src"
fi

# The seed example at K = 4 x T = 1, batch sync, parameter server (model/costmodel.c):
# c1 = 0.956 s, sigma = 0.1, b = 32/4 = 8, so step = 0.956*8 = 7.648 s; s = 6000/32 ->
# 188 steps a epoch, 5 epochs: 940 rounds; S(4) = 2*3*(0.05 + 8e-9*1819688) s;
# wait = cv*step*G(4), cv = 0.1, G(4) = E[max of 4 standard normals] = 1.0293753730;
# W(4) = 20 + 10*4 = 60 s.
expected=$(awk 'BEGIN { step = 0.956 * 8; S = 6 * (0.05 + 8e-9 * 1819688)
                        printf "%.9f %.9f", 60 + 940 * (step + 0.1 * step * 1.0293753730 + S),
                                            60 + 940 * (step + S) }')
model_s=${expected% *} model_cv0_s=${expected#* }
close() { awk -v a="$1" -v b="$2" -v what="$3" 'BEGIN { d = a - b; if (d < 0) d = -d
          if (d > 1e-6 * b) { print "FAIL: " what ": " a ", expected " b > "/dev/stderr"; exit 1 } }'; }

"$speedup" model --workers 1,4 --cores 1 --sync batch --topology ps --csv > predictions.csv
row=$(awk -F, '$1 == 4 && $2 == 1 { print $5 }' predictions.csv)
close "${row:-0}" "$model_s" "speedup model time_s at K=4"
"$speedup" plot --predictions predictions.csv --out figures --title test > plot.log
for fig in speedup breakdown; do
    [ "$(head -c 4 figures/$fig.png | od -An -c | tr -d ' ')" = "211PNG" ] || fail "plot: figures/$fig.png is not a PNG"
    grep -q '<svg' figures/$fig.svg || fail "plot: figures/$fig.svg is not an SVG"
done

# The example program: its two lines against the hand-worked times.
check_example() { # BINARY HOW
    local out
    out=$("$1") || fail "$2: the example failed"
    close "$(echo "$out" | sed -n 's/^model:.*time_s=\([0-9.]*\).*/\1/p')" "$model_s" "$2: model time_s"
    close "$(echo "$out" | sed -n 's/^sim:.*time_s=\([0-9.]*\).*/\1/p')" "$model_cv0_s" "$2: simulated time_s at cv 0"
}
export PKG_CONFIG_PATH=$p/lib/pkgconfig
[ "$(pkg-config --modversion speedup)" = "$version" ] || fail "pkg-config --modversion speedup"
flags=(-std=c11 -Wall -Wextra -Wpedantic -Werror)
for h in "$p"/include/speedup/*.h "$p"/include/speedup/*/*.h; do # every public header stands on its own
    rel=${h#"$p"/include/speedup/}
    echo "#include <$rel>" | cc "${flags[@]}" $(pkg-config --cflags speedup) -fsyntax-only -x c - ||
        fail "installed header $rel does not compile on its own"
done
cc "${flags[@]}" "$src/examples/predict.c" $(pkg-config --cflags --libs speedup) -Wl,-rpath,"$p/lib" -o predict-pc
check_example ./predict-pc "pkg-config (shared)"
# With a calibration.json (speedup_params_read): 4x1 batch ps as `speedup model --calib`
# printed it for that file (tests/data/golden/model.csv, its first such row).
golden_s=$(awk -F, '$1 == 4 && $2 == 1 && $3 == "batch" && $4 == "ps" { print $5; exit }' \
           "$src/tests/data/golden/model.csv")
close "$(./predict-pc "$src/tests/data/golden/calibration.json" | sed -n 's/^model:.*time_s=\([0-9.]*\).*/\1/p')" \
      "$golden_s" "pkg-config (shared), calibration.json: model time_s"
cc "${flags[@]}" "$src/examples/predict.c" $(pkg-config --cflags speedup) \
    -Wl,-Bstatic -lspeedup -Wl,-Bdynamic $(pkg-config --libs --static speedup | sed 's/-lspeedup//') -o predict-static
if grep -q libspeedup <<<"$(ldd ./predict-static)"; then fail "the static example needs libspeedup.so"; fi
check_example ./predict-static "pkg-config --static"
unset PKG_CONFIG_PATH
cmake -S "$src/examples" -B cmake-build -DCMAKE_PREFIX_PATH="$p" -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_C_FLAGS="-Wall -Wextra -Werror" >cmake.log 2>&1 || { cat cmake.log; fail "cmake: find_package(speedup)"; }
cmake --build cmake-build >>cmake.log 2>&1 || { cat cmake.log; fail "cmake: building the example"; }
check_example cmake-build/predict "find_package(speedup)"

echo "installed into a moved prefix: --help, --version ($v), model, plot, the example (pkg-config, static, CMake)"
