#!/usr/bin/env bash
# tests/replay.sh — a captured message replayed into another emulation.
# Run A (`mrcemu sim --capture`) sends one 64 KiB message h0 -> h1 whose
# PSN 3 is dropped once, so h0's capture holds a gap and a retransmission.
# `mrcgen rewrite` turns it into a message from the [external] endpoint x0
# of emulation B (its own MAC, addresses and MACs from B's topology, a new
# QP with C set, fresh checksums); tcpreplay in x0's namespace, at the
# multiplier B's scale asks for, sends it; h1's nicd receives the message
# and verifies every byte, and x0 receives h1's SACKs and cumulative ACK
# addressed to its own MAC.  Needs root (skipped otherwise, a failure when
# CI=true).  Prints "ok NAME" / "not ok NAME"; exits non-zero if one failed.
set -uo pipefail
. "$(dirname "$0")/lib/report.sh"
BUILD=${BUILD:-build}
MRCEMU=${MRCEMU:-$BUILD/mrcemu}
LUA=pcap/mrc.lua
PY=/usr/bin/python3

need_root replay

emu=tr$$
ns=mrc-$emu-x0
tmp=$(mktemp -d)
dump=
cleanup() {
	[ -n "$dump" ] && kill "$dump" 2>/dev/null && wait "$dump" 2>/dev/null
	"$MRCEMU" down "$tmp/b.ini" >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
tshark_isolate "$tmp"

for tool in tcpreplay tcpdump; do
	check "$tool installed" command -v $tool >/dev/null || exit 1
done

# Run A.
cat >"$tmp/a.ini" <<'EOF'
[emulation]
name = replay-a
[nic h0]
ip = 10.0.0.1
[nic h1]
ip = 10.0.0.2
[switch s0]
[link h0 s0]
rate = 100Gbps
drop = h0>h1 data psn=3 tx=1
[link h1 s0]
rate = 100Gbps
[workload]
file = a.csv
EOF
printf 'id,at,src,dst,bytes,after\n1,0ns,h0,h1,64KiB,\n' >"$tmp/a.csv"
"$MRCEMU" sim "$tmp/a.ini" -o "$tmp/a" --capture -q >"$tmp/a.out" 2>&1
check "run A completes" test $? -eq 0 || sed 's/^/# /' "$tmp/a.out"

# Emulation B: x0 has its own MAC and stands where a host would.
scale=2000
cat >"$tmp/b.ini" <<EOF
[emulation]
name  = $emu
scale = $scale
[external x0]
ip  = 10.0.0.9
mac = 0a:00:00:00:00:99
[nic h1]
ip = 10.0.0.2
[switch s0]
[link x0 s0]
[link h1 s0]
EOF

$PY scripts/mrcgen rewrite "$tmp/a/pcap/h0-0.pcap" "$tmp/replay.pcap" \
	--topology "$tmp/b.ini" --from x0 --to h1 --qpn 0x700 >"$tmp/rewrite.out" 2>&1
check "mrcgen rewrite" test $? -eq 0 || sed 's/^/# /' "$tmp/rewrite.out"
# What the rewrite wrote: 16 packets, one per PSN, C set, DestQP
# 0x700, RTX clear, x0's addresses, good IPv4 checksums.
fields=$(tshark -n -X lua_script:$LUA -o ip.check_checksum:TRUE -r "$tmp/replay.pcap" -T fields \
	-e mrc.psn -e mrc.conn -e mrc.dqpn -e mrc.retx -e ip.src -e ip.dst -e eth.src -e eth.dst \
	-e ip.checksum.status 2>/dev/null)
# In capture order: PSN 3's retransmission comes after PSN 15.
check "rewrite: 16 packets, PSNs 0..15 once each, in capture order" \
	test "$(cut -f1 <<<"$fields" | tr '\n' ' ')" = "0 1 2 $(seq -s ' ' 4 15) 3 "
check "rewrite: C, DestQP 0x700, no RTX, x0 -> h1 via s0, checksums good" test \
	"$(cut -f2- <<<"$fields" | sort -u)" = \
	"$(printf '1\t0x000700\t0\t10.0.0.9\t10.0.0.2\t0a:00:00:00:00:99\t02:00:00:00:00:03\t1')"
$PY scripts/mrcgen rewrite "$tmp/a/pcap/h0-0.pcap" "$tmp/bad.pcap" --topology "$tmp/b.ini" \
	--from x9 --to h1 >/dev/null 2>"$tmp/bad.err"
check "rewrite: an unknown node is one line, exit 2" \
	test $? -eq 2 -a "$(wc -l <"$tmp/bad.err")" -eq 1

"$MRCEMU" up "$tmp/b.ini" -o "$tmp/b" >"$tmp/up.out" 2>"$tmp/up.err"
check "emulation B up" test $? -eq 0 || {
	sed 's/^/# /' "$tmp/up.err"
	exit 1
}
check "x0's veth has its own MAC" \
	grep -q 'link/ether 0a:00:00:00:00:99' <(ip netns exec "$ns" ip link show p0)
ip netns exec "$ns" tcpdump -i p0 --immediate-mode -U -w "$tmp/x0.pcap" udp port 4791 \
	2>"$tmp/tcpdump.err" &
dump=$!
for _ in $(seq 50); do grep -qs listening "$tmp/tcpdump.err" && break; sleep 0.1; done

# Virtual time kept: B runs `scale` wall ns per virtual ns.
mult=$(awk -v s=$scale 'BEGIN { printf "%.9f", 1 / s }')
ip netns exec "$ns" tcpreplay -q -i p0 --multiplier="$mult" "$tmp/replay.pcap" \
	>"$tmp/tcpreplay.out" 2>&1
check "tcpreplay --multiplier=$mult into x0" test $? -eq 0 || sed 's/^/# /' "$tmp/tcpreplay.out"

stats=
for _ in $(seq 100); do
	stats=$("$MRCEMU" ctl --topology "$tmp/b.ini" h1 stats 2>/dev/null)
	case " $stats " in *" msgs_received=1 "*) break ;; esac
	sleep 0.1
done
check "h1 receives the replayed message" grep -qw 'msgs_received=1' <<<"$stats"
check "h1 verifies its bytes" grep -qw 'rx_pattern_errors=0' <<<"$stats"
check "h1 received 64 KiB" grep -qw 'rx_data_bytes=65536' <<<"$stats"
check "nothing dropped as unknown QP" grep -qw 'rx_drop_unknown_qp=0' <<<"$stats"

sleep 0.3
kill -INT "$dump"
wait "$dump"
dump=
seen() { tshark -n -X lua_script:$LUA -r "$tmp/x0.pcap" -Y "$1" 2>/dev/null | wc -l; }
check "x0 receives h1's SACKs at its own MAC" \
	test "$(seen 'eth.dst == 0a:00:00:00:00:99 && mrc.opcode == 0xdc && mrc.dqpn == 0x700')" -eq 16
check "x0 receives the cumulative ACK for PSN 15" \
	test "$(seen 'eth.dst == 0a:00:00:00:00:99 && mrc.opcode == 0xd1 && mrc.psn == 15')" -ge 1

"$MRCEMU" down "$tmp/b.ini" >/dev/null 2>&1
check "down leaves nothing" test -z "$(ip netns list | grep "^mrc-$emu-")"
exit $failed
