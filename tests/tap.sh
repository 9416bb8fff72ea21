#!/usr/bin/env bash
# tests/tap.sh — TAP ports (docs/topology.md, Port kinds).  `ports = tap
# packet` on h0's link and `ports = packet tap` on h1's put a TAP port on
# h0's nicd and on the switch's port to h1 (the launcher joins each TAP to
# its veth with tc); `mrcemu run` of two messages each way completes them
# verified and writes the messages.csv `mrcemu sim` writes.  The daemons
# open tap:p0 (nicd h0) and tap:p1 (switchd).  Bad `ports` values get one
# line.  Needs root (skipped otherwise, a failure when CI=true).
# Prints "ok NAME" / "not ok NAME" per check; exits non-zero if one failed.
set -uo pipefail
. "$(dirname "$0")/lib/report.sh"
. "$(dirname "$0")/lib/ports.sh"
BUILD=${BUILD:-build}
MRCEMU=${MRCEMU:-$BUILD/mrcemu}

need_root tap

emu=tt$$
tmp=$(mktemp -d)
cleanup() {
	"$MRCEMU" down "$tmp/t.ini" >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ports_topology "$tmp/t.ini" "$emu" tap

ports_run_equals_sim "$tmp/t.ini" "$emu" tap "$tmp"

# While up: the TAP devices exist where the topology says, and carry frames.
"$MRCEMU" up "$tmp/t.ini" -o "$tmp/up" >"$tmp/up.out" 2>"$tmp/up.err"
check "up" test $? -eq 0 || sed 's/^/# /' "$tmp/up.err"
check "h0's p0 is a TAP device" grep -q 'tun' <(ip -n "mrc-$emu-h0" -d link show p0)
check "s0's p1 is a TAP device, p0 a veth" \
	bash -c "ip -n mrc-$emu-s0 -d link show p1 | grep -q tun && ip -n mrc-$emu-s0 -d link show p0 | grep -q veth"
"$MRCEMU" ctl --topology "$tmp/t.ini" h0 post h1 1MiB >/dev/null
stats=
for _ in $(seq 100); do
	stats=$("$MRCEMU" ctl --topology "$tmp/t.ini" h1 stats 2>/dev/null)
	case " $stats " in *" msgs_received=3 "*) break ;; esac
	sleep 0.1
done
# h1 receives messages 1 and 3 of the workload and the one posted.
check "a message posted while up arrives through both TAPs" grep -qw 'msgs_received=3' <<<"$stats"
check "its bytes verified" grep -qw 'rx_pattern_errors=0' <<<"$stats"
"$MRCEMU" down "$tmp/t.ini" >/dev/null 2>&1
check "down leaves nothing" test -z "$(ip netns list | grep "^mrc-$emu-")"

# Bad values.
for bad in "tap" "tap tap tap" "dpdk2 packet" "tap ring"; do
	sed "s/^ports = tap packet/ports = $bad/" "$tmp/t.ini" >"$tmp/bad.ini"
	"$MRCEMU" sim "$tmp/bad.ini" -q >/dev/null 2>"$tmp/bad.err"
	rc=$?
	check "ports = $bad: exit 2, one line" \
		test $rc -eq 2 -a "$(wc -l <"$tmp/bad.err")" -eq 1 -a -n "$(grep -o "bad.ini:[0-9]*: ports:" "$tmp/bad.err")"
done
exit $failed
