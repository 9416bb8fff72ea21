#!/usr/bin/env bash
# tests/report.sh — `mrcemu report` (docs/report.md): each figure's CSV is
# checked against the records of a known scenario (an incast of seven 1 MiB
# messages with every record on, tests/data/report-incast.ini): the CDF's
# points are the messages' completion times, the queue series peaks where
# switch-stats.csv says, the spray counts sum to the data packets sent;
# samples.csv changes no other record; figures whose records were off name
# the attribute; two runs compare.  Then the page is opened in Debian's
# headless Chromium: every image loads, no console message, a screenshot.
# Run from the repo root with env BUILD and MRCEMU.
set -uo pipefail
. "$(dirname "$0")/lib/report.sh"
BUILD=${BUILD:-build}
MRCEMU=${MRCEMU:-$BUILD/mrcemu}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

run=$tmp/incast
check "sim --report writes the page" \
	"$MRCEMU" sim tests/data/report-incast.ini -o "$run" -q --report
check "the page and every figure are there" \
	test -s "$run/report/index.html" -a -s "$run/report/fct-cdf.png" \
	-a -s "$run/report/queues.png" -a -s "$run/report/spray.png"

# samples.csv only reads the engines: without --report, the same records.
"$MRCEMU" sim tests/data/report-incast.ini -o "$tmp/plain" -q
same=true
for f in "$tmp"/plain/*.csv; do
	cmp -s "$f" "$run/$(basename "$f")" || same=false
done
check "samples.csv changes no other record" $same
check "no samples.csv without --report" test ! -e "$tmp/plain/samples.csv"

# The figures' data against the records.
/usr/bin/python3 - "$run" <<'PY'
import csv, sys
run = sys.argv[1]
def rows(name):
    with open(f"{run}/{name}") as f:
        return list(csv.DictReader(f))
def check(name, ok, detail=""):
    print(("ok " if ok else "not ok ") + name + (f" ({detail})" if detail else ""))
msgs = rows("messages.csv")
cdf = rows("report/fct-cdf.csv")
want = sorted(int(m["fct_ps"]) for m in msgs)
got = [int(r["fct_ps"]) for r in cdf]
check("CDF points are the messages' completion times", got == want and len(got) == 7,
      f"{len(got)} points")
check("CDF fractions are i/n", [float(r["fraction"]) for r in cdf] ==
      [(i + 1) / len(cdf) for i in range(len(cdf))])
check("the timeline has every message",
      sorted(r["id"] for r in rows("report/timeline.csv")) == sorted(m["id"] for m in msgs))
sw = rows("switch-stats.csv")
peak = max(int(r["max_queue_bytes"]) for r in sw if r["port"] == "0" and r["tc"] == "0")
q = [int(r["max_queue_bytes"]) for r in rows("report/queues.csv")
     if r["queue"] == "s0:0→h0 tc0"]
check("queue series towards h0 peaks where switch-stats says", q and max(q) == peak,
      f"{max(q) if q else None} vs {peak}")
check("the incast queue is the highest drawn",
      max(int(r["max_queue_bytes"]) for r in rows("report/queues.csv")) == peak)
trims = sum(int(r["trimmed"]) for r in sw)
qs = [r for r in rows("report/queues.csv") if r["queue"] == "s0:0→h0 tc0"]
check("trims in the queue series are switch-stats' trims",
      int(qs[-1]["trimmed"]) == trims and trims > 0, f"{trims}")
stats = {}
for r in rows("mrc-transport-stats.csv"):
    stats[r["node"]] = r
sent = sum(int(r["total_tx_data_pkts"]) for r in stats.values())
spray = sum(int(r["count"]) for r in rows("report/spray.csv") if r["what"] == "entropy")
check("spray counts sum to the data packets sent", spray == sent and sent > 0,
      f"{spray} vs {sent}")
retx = sum(int(r["value"]) for r in rows("report/retransmissions.csv") if r["what"] == "retx")
want = sum(int(r["total_retx_nack"]) + int(r["total_retx_timeout"]) +
           int(r["total_retx_sack_gap"]) + int(r["total_completion_rerequests"])
           for r in stats.values())
check("retransmissions by cause sum to the counters", retx == want and retx > 0,
      f"{retx} vs {want}")
good = rows("report/goodput.csv")
h0 = [r for r in good if r["node"] == "h0"]
check("goodput: h0 received every byte", int(h0[-1]["rx_data_bytes"]) == 7 * 1048576)
check("goodput never above the link's 400 Gbps",
      max(int(r["goodput_bps"]) for r in good) <= 400e9)
samples = rows("samples.csv")
times = sorted({int(r["time_ps"]) for r in samples})
check("auto SampleInterval: about 200 samples", 100 <= len(times) <= 400, f"{len(times)}")
cw = rows("report/cwnd.csv")
check("cwnd figure marks NSCC's causes",
      any(r["cause"] == "multiplicative_decrease" for r in cw)
      or any(r["cause"] == "quick_adapt" for r in cw))
PY
[ $? -eq 0 ] || fail "figure data checks ran"

# Two runs side by side; the second has only the default records.
"$MRCEMU" sim configs/incast-8.ini -o "$tmp/other" -q --seed 2
check "report A B compares" "$MRCEMU" report -q "$run" "$tmp/other"
check "the comparison lists both runs and the difference" \
	grep -q "difference" "$run/compare/compare.csv"
"$MRCEMU" report -q "$tmp/nothing" 2>"$tmp/err"
check "a folder with no run: exit 2, one line" \
	test $? -eq 2 -a "$(wc -l <"$tmp/err")" -eq 1

# Figures whose records were off say which attribute turns them on.
"$MRCEMU" report -q "$tmp/other"
page=$tmp/other/report/index.html
check "without samples, the page names SampleInterval" grep -q "SampleInterval" "$page"
check "without the monitor, the page names MonitorEnabled" grep -q "MonitorEnabled" "$page"
check "without the cc trace, the page names EnableCcTrace" grep -q "EnableCcTrace" "$page"

# ---- the page in a browser --------------------------------------------------

browser=$(command -v chromium || true)
if [ -z "$browser" ]; then
	fail "chromium installed (scripts/install-deps)"
	exit 1
fi
# A copy of the page with a checker: after load, it counts the images
# that did not load into an attribute that --dump-dom shows.
sed 's|</body>|<script>addEventListener("load", function () { var b = [].filter.call(document.images, function (i) { return !(i.complete \&\& i.naturalWidth > 0); }); document.body.setAttribute("data-images", document.images.length + " " + b.length); });</script></body>|' \
	"$run/report/index.html" >"$run/report/checked.html"
chrome() {
	HOME=$tmp timeout 120 "$browser" --headless=new --no-sandbox --disable-gpu \
		--no-first-run --disable-extensions --user-data-dir="$tmp/profile" "$@"
}
chrome --enable-logging=stderr --v=0 --virtual-time-budget=5000 --dump-dom \
	--hide-scrollbars --window-size=1100,1400 --screenshot="$tmp/shot.png" \
	"file://$run/report/checked.html" >"$tmp/dom" 2>"$tmp/console"
imgs=$(grep -o 'data-images="[0-9]* [0-9]*"' "$tmp/dom" | tr -d '"' | cut -d= -f2)
note "images loaded/broken: ${imgs:-none}"
check "chromium: every image loaded" [ -n "$imgs" ] && [ "${imgs#* }" = 0 ] && [ "${imgs% *}" -ge 7 ]
no_console() { ! grep -q ":CONSOLE" "$tmp/console"; }
check "chromium: no console messages" no_console
grep ":CONSOLE" "$tmp/console" | head -5 | sed 's/^/# /'
check "chromium: a screenshot" test -s "$tmp/shot.png"
exit $failed
