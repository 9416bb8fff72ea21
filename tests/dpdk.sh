#!/usr/bin/env bash
# tests/dpdk.sh — the DPDK port (docs/topology.md, Port kinds).  In a build
# with DPDK (make DPDK=1 test), `ports = dpdk packet` on h0's link and
# `ports = packet dpdk` on h1's put DPDK's AF_PACKET PMD (a virtual device
# on the veth, each daemon its own EAL with --no-huge --no-shconf, one
# queue, a 20 us poll timer instead of busy polling) on h0's nicd and on the
# switch's port to h1; `mrcemu run` completes three messages verified and
# writes the messages.csv `mrcemu sim` writes.  In a build without DPDK the
# daemons refuse a dpdk port in one line naming `make DPDK=1`, and the run
# check is skipped, saying so.  Needs root (skipped otherwise, a failure
# when CI=true).  Prints "ok NAME" / "not ok NAME" per check.
set -uo pipefail
. "$(dirname "$0")/lib/report.sh"
. "$(dirname "$0")/lib/ports.sh"
BUILD=${BUILD:-build}
MRCEMU=${MRCEMU:-$BUILD/mrcemu}

need_root dpdk

emu=td$$
tmp=$(mktemp -d)
cleanup() {
	"$MRCEMU" down "$tmp/t.ini" >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ports_topology "$tmp/t.ini" "$emu" dpdk

if ! grep -q librte_eal <<<"$(ldd "$BUILD/nicd")"; then
	"$BUILD/nicd" --topology "$tmp/t.ini" --node h0 --out "$tmp/x" --ctl "$tmp/x.ctl" \
		>/dev/null 2>"$tmp/nodpdk.err"
	check "without DPDK, a dpdk port is refused in one line naming make DPDK=1" \
		test "$(wc -l <"$tmp/nodpdk.err")" -eq 1 -a -n "$(grep -o 'make DPDK=1' "$tmp/nodpdk.err")" ||
		sed 's/^/# /' "$tmp/nodpdk.err"
	note "skip dpdk run: $BUILD is built without DPDK (make DPDK=1 test builds it and runs this)"
	exit $failed
fi

ports_run_equals_sim "$tmp/t.ini" "$emu" dpdk "$tmp"
exit $failed
