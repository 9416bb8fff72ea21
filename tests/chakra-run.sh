#!/usr/bin/env bash
# tests/chakra-run.sh — the 8-rank Chakra traces of tests/data/chakra in
# `mrcemu run` (issue 14, docs/chakra.md): eight nicd, each running its own
# rank's file, and a switchd in network namespaces give the records
# `mrcemu sim` gives: messages.csv and chakra.csv byte for byte, and the
# summary's nodes finished and rank finish times.  A bad
# trace is refused by the launcher before anything starts.  Needs root.
# Prints "ok NAME" / "not ok NAME" per check; exits non-zero if one failed.
set -uo pipefail
. "$(dirname "$0")/lib/report.sh"
BUILD=${BUILD:-build}
MRCEMU=${MRCEMU:-$BUILD/mrcemu}
DATA=$PWD/tests/data/chakra

need_root chakra-run

emu=c$$
tmp=$(mktemp -d)
cleanup() {
	for f in "$tmp"/*.ini; do [ -e "$f" ] && "$MRCEMU" down "$f" >/dev/null 2>&1; done
	rm -rf "$tmp"
}
trap cleanup EXIT

# topology NAME TRACE: the eight hosts on one switch, at a safe scale.
topology() {
	sed "s/^name = .*/name = $emu$1/" "$DATA/star-8.ini" >"$tmp/$1.ini"
	printf 'scale = 20000\n[workload]\nchakra = %s\n' "$2" >>"$tmp/$1.ini"
	# [emulation] ends before the first [nic]: move scale up there.
	sed -i '/^scale = 20000$/d; s/^seed = 1$/seed = 1\nscale = 20000/' "$tmp/$1.ini"
}

k=0
for et in $(cd "$DATA" && find . -name '*.7.et' | sort); do
	base=${et#./}
	base=${base%.7.et}
	k=$((k + 1))
	topology "t$k" "$DATA/$base"
	"$MRCEMU" sim "$tmp/t$k.ini" -o "$tmp/sim$k" >"$tmp/sim$k.out"
	"$MRCEMU" run "$tmp/t$k.ini" -o "$tmp/run$k" >"$tmp/run$k.out" 2>"$tmp/run$k.err"
	rc=$?
	check "run-$base-exit-0" test $rc -eq 0 || sed 's/^/# /' "$tmp/run$k.err" | tail -5
	check "run-$base-messages-equal-sim" cmp -s "$tmp/run$k/messages.csv" "$tmp/sim$k/messages.csv"
	check "run-$base-chakra-equal-sim" cmp -s "$tmp/run$k/chakra.csv" "$tmp/sim$k/chakra.csv"
	# The summary's rank finish times, as sim prints them.
	check "run-$base-summary-ranks-as-sim" test -n "$(grep '^chakra: ' "$tmp/run$k.out")" -a \
		"$(grep '^chakra: ' "$tmp/run$k.out")" = "$(grep '^chakra: ' "$tmp/sim$k.out")"
done
check run-8-rank-traces-found test "$k" -eq 14

# A rank with no NIC: refused in one line before any namespace exists.
mkdir -p "$tmp/bad"
for r in 0 1 2 3 4 5 6 7 8; do
	cp "$DATA/chakra-generator-8npus/one_comp_node.0.et" "$tmp/bad/x.$r.et"
done
topology bad "$tmp/bad/x"
"$MRCEMU" run "$tmp/bad.ini" -o "$tmp/badout" -q 2>"$tmp/bad.err"
rc=$?
check run-bad-trace-exit-2 test $rc -eq 2
check run-bad-trace-one-line test "$(wc -l <"$tmp/bad.err")" -eq 1
check run-bad-trace-names-file grep -q "x.8.et: node .*has no NIC" "$tmp/bad.err"
check run-bad-trace-nothing-started test -z "$(ip netns list | grep "^mrc-${emu}bad-")"
exit $failed
