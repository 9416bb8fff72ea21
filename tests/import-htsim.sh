#!/usr/bin/env bash
# tests/import-htsim.sh — `mrcemu import htsim TOPO CM -o DIR` (issue 9):
# htsim's 8-host two-tier leaf-spine and its permutation matrix become a
# topology (8 NICs, 2 leaves of 4, 4 spines, 400 Gbps 1 µs links,
# ConfigBaseRTT and EgressQueueLimit auto) and a workload (one row per
# flow, start in ps, host N = hN) that `mrcemu sim` runs to completion,
# verified; trigger flows and switch latency are refused with one line and
# exit 2.  The comparison of completion times with htsim's is in make bench
# (scripts/bench-htsim).  Run from the repo root with env BUILD and MRCEMU.
set -uo pipefail
. "$(dirname "$0")/lib/report.sh"
BUILD=${BUILD:-build}
MRCEMU=${MRCEMU:-$BUILD/mrcemu}
DATA=tests/data/htsim

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$MRCEMU" import htsim "$DATA/ls8_400g.topo" "$DATA/perm8_4MiB.cm" -o "$tmp/imp" >"$tmp/out"
check "import exits 0 and names the topology" [ "$(cat "$tmp/out")" = "$tmp/imp/perm8_4MiB.ini" ]
ini=$tmp/imp/perm8_4MiB.ini
check "8 NICs, 2 leaves, 4 spines" [ "$(grep -c '^\[nic h' "$ini")" = 8 ] &&
	[ "$(grep -c '^\[switch leaf' "$ini")" = 2 ] && [ "$(grep -c '^\[switch spine' "$ini")" = 4 ]
check "every leaf to every spine, 16 links in all" [ "$(grep -c '^\[link ' "$ini")" = 16 ]
check "htsim's rate and latency" [ "$(grep -c '^rate = 400Gbps$' "$ini")" = 16 ] &&
	[ "$(grep -c '^delay = 1000ns$' "$ini")" = 16 ]
# htsim_uec runs NSCC's quick adapt ungated unless given -enable_qa_gate.
check "quick adapt ungated" grep -q '^QuickAdaptGate = false$' "$ini"
check "auto window and queues" grep -q '^ConfigBaseRTT = auto$' "$ini" &&
	grep -q '^EgressQueueLimit = auto$' "$ini"
check "one workload row a flow" [ "$(sed -n 2p "$tmp/imp/perm8_4MiB.csv")" = "1,0ps,h6,h5,4194304," ] &&
	[ "$(wc -l <"$tmp/imp/perm8_4MiB.csv")" = 9 ]
"$MRCEMU" sim "$ini" -o "$tmp/run" >"$tmp/summary" 2>&1
check "the imported scenario runs, every message verified" \
	awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "verified") v = i; next }
		$v != "true" { bad = 1 } END { exit bad || NR != 9 || !v }' "$tmp/run/messages.csv"
check "the summary shows the fabric round trip" \
	grep -q '^auto: fabric round trip 8.66784us' "$tmp/summary"

printf 'Nodes 8\nConnections 1\n0->1 id 1 start 0 size 4096 trigger 2\n' >"$tmp/trig.cm"
"$MRCEMU" import htsim "$DATA/ls8_400g.topo" "$tmp/trig.cm" -o "$tmp/t" 2>"$tmp/err"
rc=$?
check "a trigger flow is refused: exit 2, one line" [ $rc = 2 ] && [ "$(wc -l <"$tmp/err")" = 1 ] &&
	grep -q "trig.cm:3: trigger flows are not imported" "$tmp/err"
sed 's/^Switch_Latency_ns 0/Switch_Latency_ns 100/' "$DATA/ls8_400g.topo" >"$tmp/lat.topo"
"$MRCEMU" import htsim "$tmp/lat.topo" "$DATA/perm8_4MiB.cm" -o "$tmp/l" 2>"$tmp/err"
rc=$?
check "switch latency is refused: exit 2, one line" [ $rc = 2 ] &&
	[ "$(wc -l <"$tmp/err")" = 1 ] && grep -q 'Switch_Latency_ns' "$tmp/err"
exit $failed
