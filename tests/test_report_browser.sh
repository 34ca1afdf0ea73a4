#!/usr/bin/env bash
# The report's page in a real browser: headless Chromium (Debian's `chromium`, installed by
# `scripts/setup --tests`) opens a copy of REPORT/index.html and, once it has loaded, a
# script added at the end of the page lists every <img> (loaded: naturalWidth > 0, and
# decoded to its last row), every SVG the page links and every <object> (each fetched as
# an image), and every <table> with its rows; a listener added first in the page records
# every request that fails and every script error. The test passes when the browser saw
# as many images and tables as the HTML has, all loaded, every table has rows, and
# nothing failed. A screenshot of the page goes to OUT/report.png (Chromium's logs beside
# it).
# Then it checks itself: in a scratch copy one figure is deleted and another truncated,
# and the same check must fail naming both.
#   tests/test_report_browser.sh REPORT_DIR OUT_DIR
set -euo pipefail
report=${1:?usage: test_report_browser.sh REPORT_DIR OUT_DIR}
out=${2:?usage: test_report_browser.sh REPORT_DIR OUT_DIR}
browser=${CHROMIUM:-chromium}
if ! command -v "$browser" > /dev/null; then
    echo "test_report_browser: $browser not found: scripts/setup --tests installs it" >&2
    exit 1
fi
[ -f "$report/index.html" ] || { echo "test_report_browser: no $report/index.html" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out"
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT

# Chromium headless, its own profile, no sandbox (root in a container).
chrome() {
    timeout 60 "$browser" --headless --no-sandbox --disable-gpu --no-first-run --disable-extensions \
        --user-data-dir="$profile" --allow-file-access-from-files "$@"
}

# First in the page: every request that fails (an <img>, <link>, <script> or <object>
# whose load errors) and every script error, caught as they happen.
read -r -d '' watch << 'EOF' || true
<script>
window.speedupFailed = [];
window.addEventListener("error", function (e) {
  var t = e.target;
  if (t && t !== window && t.getAttribute)
    window.speedupFailed.push("FAIL request " + (t.getAttribute("src") || t.getAttribute("href") || t.getAttribute("data")));
  else
    window.speedupFailed.push("FAIL script error: " + e.message + " at " + e.filename + ":" + e.lineno);
}, true);
</script>
EOF

# Last, once the page has loaded: one line per image, linked SVG, object and table, "ok"
# or "FAIL", and the failures seen, in a <pre id="speedup-check"> the DOM dump carries.
read -r -d '' probe << 'EOF' || true
<script>
window.addEventListener("load", function () {
  var lines = window.speedupFailed.slice(), pending = 0, finished = false;
  function finish() {
    if (finished || pending > 0) return;
    finished = true;
    var pre = document.createElement("pre");
    pre.id = "speedup-check";
    pre.textContent = "\n" + lines.join("\n") + "\n";
    document.body.appendChild(pre);
  }
  function probe(kind, url) {
    pending++;
    var im = new Image();
    im.onload = function () {
      lines.push((im.naturalWidth > 0 ? "ok " : "FAIL ") + kind + " " + url + " " + im.naturalWidth + "x" + im.naturalHeight);
      pending--; finish();
    };
    im.onerror = function () { lines.push("FAIL " + kind + " " + url + " did not load"); pending--; finish(); };
    im.src = url;
  }
  // A figure cut short still has its size (the PNG header) but its last rows are never
  // drawn: gnuplot's figures are opaque, so the bottom row must have a pixel that is not
  // transparent (a canvas may read file:// images with --allow-file-access-from-files).
  function bottom_drawn(img) {
    var c = document.createElement("canvas"), w = img.naturalWidth, h = img.naturalHeight;
    c.width = w; c.height = h;
    var ctx = c.getContext("2d");
    ctx.drawImage(img, 0, 0);
    var row = ctx.getImageData(0, h - 1, w, 1).data;
    for (var i = 3; i < row.length; i += 4) if (row[i] > 0) return true;
    return false;
  }
  Array.prototype.forEach.call(document.images, function (img) {
    var what = "img " + img.getAttribute("src") + " " + img.naturalWidth + "x" + img.naturalHeight;
    if (!(img.complete && img.naturalWidth > 0 && img.naturalHeight > 0)) lines.push("FAIL " + what + " did not load");
    else if (!bottom_drawn(img)) lines.push("FAIL " + what + " is cut short (its bottom row is not drawn)");
    else lines.push("ok " + what);
  });
  var seen = {};
  function once(kind, url) { if (url && !seen[url]) { seen[url] = true; probe(kind, url); } }
  Array.prototype.forEach.call(document.querySelectorAll('a[href$=".svg"]'), function (a) { once("svg", a.getAttribute("href")); });
  Array.prototype.forEach.call(document.querySelectorAll("object[data]"), function (o) { once("object", o.getAttribute("data")); });
  Array.prototype.forEach.call(document.querySelectorAll("table"), function (t, i) {
    lines.push((t.rows.length > 0 ? "ok " : "FAIL ") + "table " + (i + 1) + " " + t.rows.length + " rows");
  });
  finish();
});
</script>
EOF

# check DIR NAME: the page in DIR in the browser; prints what failed; 0 when nothing did.
check() {
    local dir=$1 name=$2 problems=0
    # The watch goes right after <head>, the probe at the end (after </html> the parser
    # puts it in the body), in a copy beside index.html, so that every relative URL
    # resolves as in the report itself.
    grep -q '<head>' "$dir/index.html" || { echo "$name: index.html has no <head>"; return 1; }
    printf '%s\n' "$watch" > "$out/$name.watch.html"
    { awk -v watch="$out/$name.watch.html" '
          !done && (i = index($0, "<head>")) {
              printf "%s\n", substr($0, 1, i + 5)
              while ((getline l < watch) > 0) print l
              $0 = substr($0, i + 6); done = 1
          }
          { print }' "$dir/index.html"
      printf '%s\n' "$probe"; } > "$dir/index.check.html"
    chrome --virtual-time-budget=15000 --dump-dom "file://$dir/index.check.html" > "$out/$name.dom.html" \
        2> "$out/$name.chromium.log" || { echo "$name: chromium failed (see $out/$name.chromium.log)"; return 1; }
    local report_lines
    report_lines=$(sed -n '/<pre id="speedup-check">/,/<\/pre>/p' "$out/$name.dom.html")
    if [ -z "$report_lines" ]; then
        echo "$name: the page's check never ran (a script error or no load event)"
        return 1
    fi
    printf '%s\n' "$report_lines" | grep -E '^(ok|FAIL) ' > "$out/$name.check.txt" || true
    local want_img want_table got_img got_table
    want_img=$(grep -o '<img ' "$dir/index.html" | wc -l)
    want_table=$(grep -o '<table' "$dir/index.html" | wc -l)
    got_img=$(grep -c ' img ' "$out/$name.check.txt" || true)
    got_table=$(grep -c ' table ' "$out/$name.check.txt" || true)
    if [ "$want_img" -lt 1 ] || [ "$got_img" != "$want_img" ]; then
        echo "$name: the HTML has $want_img <img>, the browser saw $got_img"
        problems=1
    fi
    if [ "$want_table" -lt 1 ] || [ "$got_table" != "$want_table" ]; then
        echo "$name: the HTML has $want_table <table>, the browser saw $got_table"
        problems=1
    fi
    if grep '^FAIL' "$out/$name.check.txt"; then
        problems=1
    fi
    return $problems
}

# The report as written.
cp -r "$report" "$out/page"
if ! check "$out/page" page; then
    echo "test_report_browser: $report/index.html does not load whole in Chromium" >&2
    exit 1
fi
echo "test_report_browser: $(grep -c '^ok' "$out/page.check.txt") checks passed:"
sed 's/^/  /' "$out/page.check.txt"
chrome --window-size=1280,4000 --screenshot="$out/report.png" "file://$out/page/index.html" \
    > /dev/null 2> "$out/screenshot.chromium.log"
# A PNG of the window's size with something drawn on it.
if [ "$(head -c 8 "$out/report.png" | od -An -tx1 | tr -d ' \n')" != "89504e470d0a1a0a" ] ||
    [ "$(stat -c %s "$out/report.png")" -lt 20000 ]; then
    echo "test_report_browser: no screenshot in $out/report.png" >&2
    exit 1
fi
echo "test_report_browser: screenshot $out/report.png"

# The check fails when it should: one figure deleted, another cut short.
cp -r "$report" "$out/broken"
imgs=$(grep -o 'src="[^"]*\.png"' "$report/index.html" | sed 's/src="//; s/"$//' | sort -u)
gone=$(sed -n 1p <<< "$imgs")
cut=$(sed -n 2p <<< "$imgs")
[ -n "$gone" ] && [ -n "$cut" ] || { echo "test_report_browser: fewer than two figures to break" >&2; exit 1; }
rm "$out/broken/$gone"
head -c 100 "$report/$cut" > "$out/broken/$cut"
if check "$out/broken" broken > "$out/broken.problems.txt"; then
    echo "test_report_browser: the check passed a page with $gone deleted and $cut truncated" >&2
    exit 1
fi
for f in "$gone" "$cut"; do
    if ! grep -q "FAIL img $f" "$out/broken.problems.txt"; then
        echo "test_report_browser: the check did not name $f:" >&2
        cat "$out/broken.problems.txt" >&2
        exit 1
    fi
done
echo "test_report_browser: a page with $gone deleted and $cut truncated fails, naming both"
