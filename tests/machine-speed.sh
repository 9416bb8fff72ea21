#!/usr/bin/env bash
# tests/machine-speed.sh — the benchmarks' calibration line
# (tests/tools/machine-speed.c): one line of three positive figures in the
# form bench-fidelity and bench-scale print, within 30 s (the tool waits
# for its round trip's child, so a child that lived on would show as a
# timeout); an argument gets exit 2 and one line on stderr.  No
# figure is judged: they are the machine's, not the code's.  Needs no root.
set -uo pipefail
. "$(dirname "$0")/lib/report.sh"
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
TOOL=$BUILD/tests/machine-speed
name=machine-speed

out=$(timeout 30 "$TOOL")
rc=$?
check $name-runs [ "$rc" -eq 0 ]
check $name-one-line [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ]
re='^syscall ([0-9]+) ns round trip ([0-9.]+) us first touch ([0-9.]+) us/page$'
if [[ $out =~ $re ]]; then
	check $name-positive awk -v a="${BASH_REMATCH[1]}" -v b="${BASH_REMATCH[2]}" \
		-v c="${BASH_REMATCH[3]}" 'BEGIN { exit !(a > 0 && b > 0 && c > 0) }'
else
	fail $name-format
	note "got: $out"
fi

err=$("$TOOL" extra 2>&1 >/dev/null)
rc=$?
check $name-bad-argument [ "$rc" -eq 2 ]
check $name-bad-argument-one-line [ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ]
exit $failed
