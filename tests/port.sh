#!/usr/bin/env bash
# tests/port.sh — what an AF_PACKET port holds while its daemon reads
# nothing (docs/promises.md, Receive queues): a port opened for SLOTS frames
# of BYTES (the daemons' own port layer, tests/tools/afpacket-rate hold)
# must hold at least SLOTS of them, and every frame it does not hold is
# counted as dropped by the kernel, never lost silently; its transmit
# buffers are its largest frame in whole cache lines, and it asks the kernel
# for no receive times.  Sizes: the
# default fabric's largest frame (4,256 bytes) and a minimum frame (60), 64
# slots, three times as many frames sent.  And a port to a daemon, which
# reads its IPv4 frames and its promise frames apart (port_packet.c), hands
# them over in the link's order: 20,000 frames of a link, runs of either
# kind, sent in bursts.  Needs root; the namespaces, veth and processes it
# creates are removed on every exit path.
set -uo pipefail
. "$(dirname "$0")/lib/report.sh"
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
TOOL=$BUILD/tests/afpacket-rate
name=port-hold

need_root $name

A=mrct-$$-pa
B=mrct-$$-pb
VA=mrct$$pa
VB=mrct$$pb
tmp=$(mktemp -d /tmp/mrct-port.XXXXXX)
holder=
cleanup() {
	[ -n "$holder" ] && kill "$holder" 2>/dev/null && wait "$holder" 2>/dev/null
	exec 3>&- 2>/dev/null
	ip netns del "$A" 2>/dev/null
	ip netns del "$B" 2>/dev/null
	ip link del "$VA" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# No IPv6 on the veths: no neighbour discovery frame among the counted ones.
ip netns add "$A" && ip netns add "$B" &&
	ip netns exec "$A" sysctl -qw net.ipv6.conf.default.disable_ipv6=1 &&
	ip netns exec "$B" sysctl -qw net.ipv6.conf.default.disable_ipv6=1 &&
	ip link add "$VA" type veth peer name "$VB" &&
	ip link set "$VA" netns "$A" && ip link set "$VB" netns "$B" &&
	ip -n "$A" link set "$VA" mtu 9000 up && ip -n "$B" link set "$VB" mtu 9000 up ||
	{
		fail $name-setup
		exit 1
	}

# hold SLOTS BYTES SENT: the holder in B, SENT frames of BYTES from A.
hold() {
	local slots=$1 bytes=$2 sent=$3 line held dropped
	mkfifo "$tmp/in"
	ip netns exec "$B" "$TOOL" hold "$VB" "$slots" "$bytes" <"$tmp/in" >"$tmp/out" &
	holder=$!
	exec 3>"$tmp/in"
	for _ in $(seq 50); do grep -q ready "$tmp/out" && break; sleep 0.1; done
	ip netns exec "$A" "$TOOL" send "$VA" "$sent" "$bytes" >/dev/null
	exec 3>&-
	wait "$holder"
	holder=
	rm -f "$tmp/in"
	line=$(grep held "$tmp/out")
	held=$(echo "$line" | awk '{print $2}')
	dropped=$(echo "$line" | awk '{print $4}')
	note "$slots slots of $bytes bytes, $sent sent: $line"
	check $name-$bytes-holds-its-slots [ "${held:-0}" -ge "$slots" ]
	check $name-$bytes-counts-every-drop [ $((${held:-0} + ${dropped:-0})) -eq "$sent" ]
	check $name-$bytes-is-a-bound [ "${dropped:-0}" -gt 0 ]
	# Its transmit buffers hold its largest frame in whole lines, not
	# 9 KiB; its frames carry their arrival, so it asks the kernel for no
	# receive time (docs/promises.md, What a frame costs).
	check $name-$bytes-tx-buffers grep -q "tx_cap $(((bytes + 63) / 64 * 64)) " <<<"$line"
	check $name-$bytes-no-timestamps grep -q 'timestamps off' <<<"$line"
}

hold 64 4256 192
hold 64 60 768

# link N: N frames of one link from A, read in B; every one in its place.
link() {
	ip netns exec "$B" "$TOOL" order "$VB" "$1" >"$tmp/order" 2>&1 &
	holder=$!
	sleep 0.3
	ip netns exec "$A" "$TOOL" link "$VA" "$1" >/dev/null
	wait "$holder"
	local rc=$?
	holder=
	note "$(cat "$tmp/order")"
	check $name-link-order test $rc -eq 0
	check $name-link-had-promises grep -qE 'promises [1-9][0-9]{2,}' "$tmp/order"
}
link 20000
exit $failed
