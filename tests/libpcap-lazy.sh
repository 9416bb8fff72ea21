#!/usr/bin/env bash
# tests/libpcap-lazy.sh — pcap/capture.c opens libpcap when a capture is
# first written or read, so no program of the project loads it at start
# (Debian's libpcap brings nine more libraries, 0.7 ms of CPU a process:
# docs/architecture.md, Dependencies), and a capture still works: a sim
# run with --capture writes pcaps that libpcap's own reader (tcpdump)
# reads back.  libinih, protobuf-c and libev are linked from their
# archives and libm is not needed, for the same reason (0.4 ms a process):
# none of the programs names them either.  Needs no root.
set -uo pipefail
. "$(dirname "$0")/lib/report.sh"
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
name=libpcap-lazy
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for b in mrcemu nicd switchd; do
	check $name-not-linked-$b bash -c "! readelf -d '$BUILD/$b' | grep -q 'NEEDED.*libpcap'"
	needed=$(readelf -d "$BUILD/$b" | grep NEEDED)
	check $name-archives-linked-$b bash -c \
		"! grep -E -q '(libinih|libprotobuf-c|libev)\.' <<<'$needed'"
	# the sanitizers' runtimes (make check) need libm themselves
	if ! grep -q 'libasan' <<<"$needed"; then
		check $name-no-libm-$b bash -c "! grep -q 'libm\.' <<<'$needed'"
	fi
done
# an INI file (libinih) and a Chakra trace (protobuf-c) are still read
et=$(cd tests/data/chakra && find . -name '*.7.et' | sort | head -1)
cp tests/data/chakra/star-8.ini "$tmp/ch.ini"
printf '[workload]\nchakra = %s\n' "$PWD/tests/data/chakra/${et%.7.et}" >>"$tmp/ch.ini"
check $name-chakra-runs "$BUILD/mrcemu" sim "$tmp/ch.ini" -o "$tmp/ch" -q
check $name-chakra-read [ -s "$tmp/ch/chakra.csv" ]
check $name-capture-runs "$BUILD/mrcemu" sim configs/default.ini --capture -o "$tmp/out" -q
pcap=$(find "$tmp/out" -name '*.pcap' | head -1)
check $name-capture-written [ -n "$pcap" ]
frames=$(tcpdump -nr "$pcap" 2>/dev/null | wc -l)
check $name-capture-reads-back [ "$frames" -gt 0 ]
exit $failed
