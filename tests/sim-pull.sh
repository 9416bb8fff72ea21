#!/usr/bin/env bash
# tests/sim-pull.sh — a sim run writes the same records whether or not it
# writes pcaps (docs/architecture.md, Time): without pcaps a switch port
# whose frames wait starts the next at the arrival of the one on the wire,
# or when anything reads the port first (sw_params.pull_before), instead of
# at an event of its own.  For the shipped topologies (trims in incast-8)
# and htsim's 8-host permutation, with every record on (event log, monitor,
# CC trace, transport and switch stats, samples every 2 us): every record
# byte for byte, and the summary but for its count of events (pcaps and
# pulls change only that).  A catch-up left out where a port is read shows
# here as records that differ.  Run from the repo root with env BUILD and
# MRCEMU.  Needs no root.
set -uo pipefail
. "$(dirname "$0")/lib/report.sh"
BUILD=${BUILD:-build}
MRCEMU=${MRCEMU:-$BUILD/mrcemu}
name=sim-pull

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ALL=(--set nic.EnableEventLogging=true --set nic.MonitorEnabled=true
	--set nic.EnableCcTrace=true --set nic.EnableTransportStats=true
	--set switch.EnableSwitchStats=true --set emulation.SampleInterval=2us)

"$MRCEMU" import htsim tests/data/htsim/ls8_400g.topo tests/data/htsim/perm8_4MiB.cm \
	-o "$tmp/perm8" >/dev/null || fail $name-import

events() { sed -n 's/.*"events": \([0-9]*\).*/\1/p' "$1/summary.json"; }

for ini in configs/default.ini configs/leaf-spine-8.ini configs/incast-8.ini \
	"$tmp/perm8/perm8_4MiB.ini"; do
	t=$(basename "$ini" .ini)
	"$MRCEMU" sim "$ini" -q -o "$tmp/$t-cap" --capture "${ALL[@]}" || fail $name-$t-capture-runs
	"$MRCEMU" sim "$ini" -q -o "$tmp/$t" "${ALL[@]}" || fail $name-$t-runs
	same=true
	for f in "$tmp/$t"/*.csv; do
		cmp -s "$f" "$tmp/$t-cap/${f##*/}" || { same=false; note "$t: ${f##*/} differs"; }
	done
	check $name-$t-records-same $same
	check $name-$t-summary-same cmp -s <(grep -v '"events"' "$tmp/$t/summary.json") \
		<(grep -v '"events"' "$tmp/$t-cap/summary.json")
	check $name-$t-csv-files [ "$(ls "$tmp/$t"/*.csv | wc -l)" -ge 7 ]
	note "$t: events $(events "$tmp/$t-cap") with pcaps, $(events "$tmp/$t") without"
done
exit $failed
