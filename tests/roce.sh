#!/usr/bin/env bash
# tests/roce.sh — pcap/mrc.lua beside Wireshark's own RoCEv2 dissector.
# Stock RoCEv2 frames built with Scapy's contrib.roce (RC Send Only, RC
# RDMA Write Only, RC Acknowledge, UD Send Only, CNP), from ordinary and
# from entropy source ports (269 packetbb, 319 PTP), decode with the plugin
# exactly as without it; MRC frames from the same ports decode as MRC.  The
# ICRC (Scapy's, and the codec's from build/tests/mrc-frames) is checked:
# good with the preference, found and named without it, bad when corrupted.
# Prints "ok NAME" / "not ok NAME" per check; exits non-zero if one failed.
set -uo pipefail
. "$(dirname "$0")/lib/report.sh"
export PYTHONDONTWRITEBYTECODE=1
BUILD=${BUILD:-build}
PY=/usr/bin/python3 # Debian's python3 sees Debian's python3-scapy
LUA=pcap/mrc.lua
MRC_FRAMES=${MRC_FRAMES:-$BUILD/tests/mrc-frames}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tshark_isolate "$tmp"

# stock.pcap: stock RoCEv2; mrc.pcap: MRC frames (Scapy's BTH with MRC
# opcodes, so Scapy computes their ICRC); frame 4 of mrc.pcap has its ICRC
# corrupted.
$PY - "$tmp" <<'EOF' || fail "Scapy builds the frames"
import sys
from scapy.all import Ether, IP, UDP, Raw, wrpcap
from scapy.contrib.roce import BTH, AETH, CNPPadding, CNP_OPCODE, opcode

out = sys.argv[1]
def frame(sport, bth, body=b""):
    return Ether(bytes(Ether() / IP(src="10.0.0.1", dst="10.0.0.2") /
                       UDP(sport=sport, dport=4791, chksum=0) / bth / body))
def op(kind, name):
    return opcode(kind, name)[0]
reth = bytes.fromhex("0000100000000000" "00000010" "00000008")
deth = bytes.fromhex("11111111" "00000001")
stock = []
for sport in (49152, 269, 319):
    stock += [
        frame(sport, BTH(opcode=op("RC", "SEND_ONLY"), dqpn=0x11, psn=3) / Raw(b"\x00" * 12)),
        frame(sport, BTH(opcode=op("RC", "RDMA_WRITE_ONLY"), dqpn=0x12, psn=4) / Raw(reth + b"\x07" * 8)),
        frame(sport, BTH(opcode=op("RC", "ACKNOWLEDGE"), dqpn=0x13, psn=5) / AETH(syndrome=0x1F, msn=2)),
        frame(sport, BTH(opcode=op("UD", "SEND_ONLY"), dqpn=0x14, psn=6) / Raw(deth + b"\x00" * 8)),
        frame(sport, BTH(opcode=CNP_OPCODE, becn=1, dqpn=0x15) / CNPPadding()),
    ]
wrpcap(out + "/stock.pcap", stock)
meth = bytes.fromhex("00000001")
mrc = [
    frame(256, BTH(opcode=0xCA, dqpn=0x100, psn=0) / Raw(meth + reth + b"\x05" * 8)),
    frame(269, BTH(opcode=0xD1, dqpn=0x100, psn=0) / Raw(bytes.fromhex("1f000001"))),
    frame(319, BTH(opcode=0xD1, dqpn=0x100, psn=1) / Raw(bytes.fromhex("1f000001"))),
    frame(300, BTH(opcode=0xCA, dqpn=0x100, psn=2) / Raw(meth + reth + b"\x05" * 8)),
]
raw = bytearray(bytes(mrc[3]))
raw[-1] ^= 0xFF
mrc[3] = Ether(bytes(raw))
wrpcap(out + "/mrc.pcap", mrc)
EOF

# Frames 1-5 come from port 49152, which nothing else claims: the stock
# dissector's view of them, without the plugin, is the reference.  Frames
# 6-15 (ports 269, 319) are packetbb and PTP without the plugin, and must
# decode as frames 1-5 with it.
IBF=(-e _ws.col.Protocol -e infiniband.bth.opcode -e infiniband.bth.destqp -e infiniband.bth.psn
	-e infiniband.aeth.msn -e infiniband.reth.dmalen -e _ws.malformed)
tshark -n -r "$tmp/stock.pcap" -T fields "${IBF[@]}" -c 5 >"$tmp/without.tsv" 2>/dev/null
tshark -n -X lua_script:$LUA -r "$tmp/stock.pcap" -T fields "${IBF[@]}" -e mrc.opcode \
	>"$tmp/with.tsv" 2>/dev/null
check "stock RoCEv2: 15 frames" test "$(grep -c . "$tmp/with.tsv")" -eq 15
for part in "1,5p" "6,10p" "11,15p"; do
	check "stock RoCEv2 frames $part decode with the plugin as without it" \
		cmp -s "$tmp/without.tsv" <(sed -n "$part" "$tmp/with.tsv" | cut -f1-7) ||
		diff "$tmp/without.tsv" <(sed -n "$part" "$tmp/with.tsv" | cut -f1-7) | sed 's/^/# /'
done
check "stock RoCEv2 is InfiniBand, never MRC" \
	test "$(awk -F'\t' '$1 == "RRoCE" && $2 != "" && $8 == ""' "$tmp/with.tsv" | wc -l)" -eq 15

ts() { tshark -n -X lua_script:$LUA -r "$@" 2>/dev/null; }
MF=(-e frame.number -e _ws.col.Protocol -e mrc.opcode -e mrc.icrc.status -e infiniband.bth.opcode)
check "MRC frames from ports 256, 269, 319, 300 decode as MRC" \
	test "$(ts "$tmp/mrc.pcap" -T fields "${MF[@]}" | awk -F'\t' '$2 == "MRC" && $3 != "" && $5 == ""' | wc -l)" -eq 4

# The ICRC.
ts "$tmp/mrc.pcap" -o mrc.icrc:TRUE -T fields "${MF[@]}" -e mrc.payload_len >"$tmp/icrc-on.tsv"
check "ICRC (Scapy's) good with the preference" \
	test "$(cut -f4 "$tmp/icrc-on.tsv" | tr '\n' ' ')" = "good good good bad "
check "corrupted ICRC is bad" \
	test "$(ts "$tmp/mrc.pcap" -o mrc.icrc:TRUE -Y mrc.icrc.bad -T fields -e frame.number)" = 4
check "ICRC not counted as payload" test "$(cut -f6 "$tmp/icrc-on.tsv" | head -1)" = 8
ts "$tmp/mrc.pcap" -T fields "${MF[@]}" -e mrc.payload_len >"$tmp/icrc-off.tsv"
check "ICRC found without the preference" \
	test "$(cut -f4 "$tmp/icrc-off.tsv" | tr '\n' ' ')" = "undeclared undeclared undeclared  "
check "ICRC found: not payload" test "$(cut -f6 "$tmp/icrc-off.tsv" | head -1)" = 8
check "ICRC found: the preference to set is named" \
	bash -c "tshark -n -X lua_script:$LUA -r $tmp/mrc.pcap -V 2>/dev/null |
		grep -q 'valid ICRC: set the ICRC preference (mrc.icrc:TRUE)'"
check "a bad ICRC without the preference is payload" \
	test "$(awk -F'\t' '$1 == 4 { print $4 "/" $6 }' "$tmp/icrc-off.tsv")" = /12
check "no ICRC claimed where there is none (vectors)" \
	test -z "$(ts tests/data/vectors.pcap -T fields -e mrc.icrc.status | tr -d '\n')"
check "the preference on a capture without ICRCs says to turn it off" \
	bash -c "tshark -n -X lua_script:$LUA -o mrc.icrc:TRUE -r tests/data/vectors.pcap -V 2>/dev/null |
		grep -q 'set the ICRC preference off (mrc.icrc:FALSE)'"

# The codec's ICRC frames (wire_icrc) check good.
if "$MRC_FRAMES" "$tmp/frames.pcap" >"$tmp/expected.tsv" 2>/dev/null; then
	want=$(grep -c 'mrc.icrc=' "$tmp/expected.tsv")
	got=$(ts "$tmp/frames.pcap" -o mrc.icrc:TRUE -Y 'mrc.icrc.status == "good"' | wc -l)
	check "codec ICRCs check good ($want frames)" test "$want" -gt 0 -a "$got" -eq "$want"
else
	fail "mrc-frames runs"
fi
exit $failed
