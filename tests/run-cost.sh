#!/usr/bin/env bash
# tests/run-cost.sh — the benchmarks' whole-process counter
# (tests/tools/run-cost.c, scripts/bench-scale): one line "CPU_S PEAK_KIB
# WALL_S" of figures to the microsecond, the command's output in OUT and
# its errors in OUT.err, its exit status passed on (128 + N for signal N,
# 127 when it cannot be run), exit 2 and one line for bad arguments.  The
# figures themselves are the machine's and are not judged, but that a
# process which burns CPU is counted as burning it.  Needs no root.
set -uo pipefail
. "$(dirname "$0")/lib/report.sh"
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
TOOL=$BUILD/tests/run-cost
name=run-cost
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# a shell that spins for ~0.2 s of CPU, writes to both streams, exits 3
out=$("$TOOL" "$tmp/o" bash -c 'n=0
	while ((n < 200000)); do n=$((n + 1)); done; echo out; echo err >&2; exit 3')
rc=$?
check $name-status [ "$rc" -eq 3 ]
re='^([0-9]+\.[0-9]{6}) ([0-9]+) ([0-9]+\.[0-9]{3})$'
if [[ $out =~ $re ]]; then
	check $name-counts-cpu awk -v c="${BASH_REMATCH[1]}" 'BEGIN { exit !(c > 0.01) }'
	check $name-peak awk -v k="${BASH_REMATCH[2]}" 'BEGIN { exit !(k > 0) }'
	check $name-wall-covers-cpu awk -v c="${BASH_REMATCH[1]}" -v w="${BASH_REMATCH[3]}" \
		'BEGIN { exit !(w + 0.01 >= c) }'
else
	fail $name-format
	note "got: $out"
fi
check $name-stdout [ "$(cat "$tmp/o")" = out ]
check $name-stderr [ "$(cat "$tmp/o.err")" = err ]

"$TOOL" "$tmp/k" bash -c 'kill -TERM $$' >/dev/null
check $name-signal [ $? -eq $((128 + 15)) ]
"$TOOL" "$tmp/n" "$tmp/no-such-program" >/dev/null
check $name-cannot-run [ $? -eq 127 ]
check $name-cannot-run-said grep -q "no-such-program" "$tmp/n.err"

err=$("$TOOL" "$tmp/x" 2>&1 >/dev/null)
rc=$?
check $name-bad-arguments [ "$rc" -eq 2 ]
check $name-bad-arguments-one-line [ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ]

exit $failed
