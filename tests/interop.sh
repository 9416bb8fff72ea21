#!/usr/bin/env bash
# tests/interop.sh — a packet generator and a tap on a running emulation
# (the mission: inject crafted frames, tap any link).  An [external]
# endpoint behind the switch sends one RDMA Write crafted by scripts/mrcgen
# (Scapy) to h0's nicd; h0 receives it, verifies every byte, and answers
# with a SACK per packet and a cumulative ACK for the last, which tcpdump in
# the endpoint's namespace captures and pcap/mrc.lua decodes.  Needs root
# (skipped otherwise, a failure when CI=true).  Prints "ok NAME" /
# "not ok NAME" per check; exits non-zero if one failed.
set -uo pipefail
. "$(dirname "$0")/lib/report.sh"
BUILD=${BUILD:-build}
MRCEMU=${MRCEMU:-$BUILD/mrcemu}
LUA=pcap/mrc.lua

need_root interop

emu=ti$$
ns=mrc-$emu-x0
tmp=$(mktemp -d)
dump=
cleanup() {
	[ -n "$dump" ] && kill "$dump" 2>/dev/null && wait "$dump" 2>/dev/null
	"$MRCEMU" down "$tmp/x.ini" >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
tshark_isolate "$tmp"

cat >"$tmp/x.ini" <<EOF
[emulation]
name  = $emu
scale = 20000
[nic h0]
ip = 10.0.0.1
[external x0]
ip = 10.0.0.9
[switch s0]
[link h0 s0]
[link x0 s0]
EOF

"$MRCEMU" up "$tmp/x.ini" -o "$tmp/out" >"$tmp/up.out" 2>"$tmp/up.err"
check up test $? -eq 0 || {
	sed 's/^/# /' "$tmp/up.err"
	exit 1
}
ip netns exec "$ns" tcpdump -i p0 --immediate-mode -U -w "$tmp/x0.pcap" udp port 4791 \
	2>"$tmp/tcpdump.err" &
dump=$!
for _ in $(seq 50); do grep -qs listening "$tmp/tcpdump.err" && break; sleep 0.1; done

# Four packets of message 7, the receiver's QP not yet known (C flag, the
# sender's QP 0x300), ACK-request on the last.
# Addresses and MACs from the topology: x0's own, and the switch's.
ip netns exec "$ns" /usr/bin/python3 scripts/mrcgen -i p0 --kind data --topology "$tmp/x.ini" \
	--from x0 --to h0 --message 16KiB --msn 7 --msg-index 7 --conn --dqpn 0x300 \
	--ackreq-last >"$tmp/mrcgen.out" 2>&1
check mrcgen-sent test $? -eq 0 || sed 's/^/# /' "$tmp/mrcgen.out"

stats=
for _ in $(seq 100); do
	stats=$("$MRCEMU" ctl --name "$emu" h0 stats 2>/dev/null)
	case " $stats " in *" msgs_received=1 "*) break ;; esac
	sleep 0.1
done
check h0-received-message grep -qw 'msgs_received=1' <<<"$stats"
check h0-bytes-verified grep -qw 'rx_pattern_errors=0' <<<"$stats"
check h0-data-bytes grep -qw 'rx_data_bytes=16384' <<<"$stats"

# A switch forwards what it receives, as a real one does: a payload byte
# off the pattern passes s0 and is found by h0, which verifies every byte
# (message 8, one packet; the byte flipped after mrcgen built it).
ip netns exec "$ns" /usr/bin/python3 scripts/mrcgen -w "$tmp/bad.pcap" --kind data \
	--topology "$tmp/x.ini" --from x0 --to h0 --message 4KiB --msn 8 --msg-index 8 --conn \
	--dqpn 0x301 --ackreq-last >>"$tmp/mrcgen.out" 2>&1
ip netns exec "$ns" /usr/bin/python3 - "$tmp/bad.pcap" >>"$tmp/mrcgen.out" 2>&1 <<'PYEOF'
import sys
from scapy.all import Ether, rdpcap, sendp
f = bytearray(bytes(rdpcap(sys.argv[1])[0]))
f[-100] ^= 0xFF
sendp(Ether(bytes(f)), iface="p0", verbose=False)
PYEOF
check mrcgen-sent-corrupt test $? -eq 0 || sed 's/^/# /' "$tmp/mrcgen.out"
for _ in $(seq 100); do
	stats=$("$MRCEMU" ctl --name "$emu" h0 stats 2>/dev/null)
	case " $stats " in *" msgs_received=2 "*) break ;; esac
	sleep 0.1
done
check h0-received-corrupt-message grep -qw 'msgs_received=2' <<<"$stats"
check h0-found-the-byte grep -qw 'rx_pattern_errors=1' <<<"$stats"
s0=$("$MRCEMU" ctl --name "$emu" s0 stats 2>/dev/null)
check s0-forwarded-it grep -qw 'rx_drop_payload_not_pattern=0' <<<"$s0"

sleep 0.3
kill -INT "$dump"
wait "$dump"
dump=
seen() { tshark -n -X lua_script:$LUA -r "$tmp/x0.pcap" -Y "$1" 2>/dev/null | wc -l; }
check tap-sees-injected-data test "$(seen 'ip.src == 10.0.0.9 && mrc.opcode >= 0xc6')" -eq 5
# x0 is node 1 (02:00:00:00:00:02), s0 node 2 (02:00:00:00:00:03).
check injected-data-has-topology-macs \
	test "$(seen 'eth.src == 02:00:00:00:00:02 && eth.dst == 02:00:00:00:00:03 && mrc.opcode >= 0xc6')" -eq 5
check tap-sees-sacks test "$(seen 'ip.src == 10.0.0.1 && mrc.opcode == 0xdc && mrc.dqpn == 0x300')" -eq 4
check tap-sees-cumulative-ack test "$(seen 'ip.src == 10.0.0.1 && mrc.opcode == 0xd1 && mrc.psn == 3')" -eq 1
check tap-no-trailer-to-external test "$(seen 'mrc.trailer.stamp')" -eq 0

"$MRCEMU" down "$tmp/x.ini" >"$tmp/down.out" 2>&1
check down test $? -eq 0
# The injected messages are in messages.csv, from their external source: 7
# verified, 8 not.
check records-external-message test "$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) h[$i] = i; next }
	$h["source"] == "external" && $h["id"] == 7 && $h["src"] == "x0" && $h["bytes"] == 16384 &&
	$h["verified"] == "true"' "$tmp/out/messages.csv" | wc -l)" -eq 1
check records-corrupt-message-unverified test "$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) h[$i] = i; next }
	$h["source"] == "external" && $h["id"] == 8 && $h["verified"] == "false"' \
	"$tmp/out/messages.csv" | wc -l)" -eq 1
check nothing-left test -z "$(ip netns list | grep "^mrc-$emu-")"
exit $failed
