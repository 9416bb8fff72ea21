#!/usr/bin/env bash
# tests/dissector.sh — the Wireshark/tshark dissector pcap/mrc.lua against
# the wire vectors (docs/vectors.md, values hard-coded below), against the codec's
# own view of every frame kind (build/tests/mrc-frames), and against short
# or garbage input.  Run from the repo root with env BUILD (default build).
# Prints "ok NAME" / "not ok NAME" per check; exits non-zero if one failed.
set -uo pipefail
. "$(dirname "$0")/lib/report.sh"
BUILD=${BUILD:-build}
LUA=pcap/mrc.lua
VECTORS=tests/data/vectors.pcap
MRC_FRAMES=${MRC_FRAMES:-$BUILD/tests/mrc-frames}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tshark_isolate "$tmp"

if ! command -v tshark >/dev/null; then
	fail "tshark installed"
	exit 1
fi

# tshark with the dissector and no name resolution; stderr kept apart (the
# root warning is expected there).
ts() { tshark -n -X lua_script:$LUA "$@" 2>>"$tmp/stderr"; }

# Values printed by tshark and by mrc-frames are compared as numbers when
# they are numbers, whatever base the field displays in.
norm() {
	case "$1" in
	True) echo 1 ;;
	False) echo 0 ;;
	0x* | 0X*)
		if [[ $1 =~ ^0[xX][0-9a-fA-F]+$ ]]; then printf '%u\n' "$1"; else echo "$1"; fi
		;;
	*) echo "$1" ;;
	esac
}

# load_fields PCAP PREFIX FIELD... [-- TSHARK-OPTIONS]: decode every frame,
# filling the global array F["PREFIX|frame|field"].
declare -A F
load_fields() {
	local pcap=$1 prefix=$2 opts=() fields=() args=() line i
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		fields+=("$1")
		shift
	done
	[ $# -gt 0 ] && shift && opts=("$@")
	for i in frame.number "${fields[@]}"; do args+=(-e "$i"); done
	# A separator that is not whitespace, so that empty fields count.
	ts -r "$pcap" "${opts[@]}" -T fields -E 'separator=|' -E occurrence=a \
		-E aggregator=, "${args[@]}" >"$tmp/fields.tsv"
	while IFS='|' read -r -a line; do
		for i in "${!fields[@]}"; do
			F["$prefix|${line[0]}|${fields[$i]}"]=${line[$((i + 1))]:-}
		done
	done <"$tmp/fields.tsv"
}

# expect_frames PREFIX NAME < "frame field value" lines ("-" = absent):
# one check per frame.
expect_frames() {
	local prefix=$1 what=$2 frame field want got bad=() frames=() fr
	declare -A seen
	while read -r frame field want; do
		[ -z "$frame" ] || [ "${frame:0:1}" = "#" ] && continue
		[ -z "${seen[$frame]:-}" ] && frames+=("$frame") && seen[$frame]=1
		got=$(norm "${F["$prefix|$frame|$field"]:-}")
		[ "$want" = - ] && want=
		want=$(norm "$want")
		if [ "$got" != "$want" ]; then
			bad+=("$frame")
			note "$what frame $frame $field: expected '$want', tshark shows '$got'"
		fi
	done
	for fr in "${frames[@]}"; do
		if [[ " ${bad[*]} " == *" $fr "* ]]; then
			fail "$what frame $fr"
		else
			pass "$what frame $fr"
		fi
	done
}

# --- The dissector loads without a Lua error --------------------------------
ts -r "$VECTORS" >"$tmp/summary.txt"
if grep -v 'Running as user' "$tmp/stderr" | grep -qi 'lua\|error'; then
	fail "mrc.lua loads"
	sed 's/^/# /' "$tmp/stderr"
else
	pass "mrc.lua loads"
fi

# --- docs/vectors.md, frame by frame ---------------------------------------------
VFIELDS=(mrc.opcode mrc.se mrc.mig mrc.padcnt mrc.tver mrc.pkey mrc.fecn
	mrc.becn mrc.dqpn mrc.ackreq mrc.conn mrc.retx mrc.ts mrc.psn mrc.entropy
	mrc.role mrc.trimmed mrc.meth.rqmsn mrc.meth.msn mrc.tseth.time
	mrc.tseth.format mrc.reth.va mrc.reth.rkey mrc.reth.dmalen mrc.payload_len
	mrc.aeth.syndrome mrc.aeth.msn mrc.sack.m mrc.sack.pr
	mrc.sack.ack_psn_offset mrc.sack.entropy_echo mrc.sack.responder_qpn
	mrc.sack.cack mrc.sack.cc_type mrc.sack.cc_flags mrc.sack.mpr
	mrc.sack.offset mrc.sack.bitmap mrc.cc.ts_echo mrc.cc.service_time
	mrc.cc.restore_pen mrc.cc.rcv_bytes mrc.nack.code mrc.nack.entropy_echo
	mrc.nack.responder_qpn mrc.nack.psn mrc.nack.ts_echo mrc.probe.id
	mrc.probe.prober mrc.probe.ts mrc.icrc mrc.trailer.stamp ip.dsfield.dscp
	ip.dsfield.ecn ip.ttl _ws.col.Protocol)
load_fields "$VECTORS" v "${VFIELDS[@]}"
expect_frames v vector <<'EOF'
# 1. WRITE_FIRST: C=1, DestQP = sender's QP 0x000100, PSN 0, MSN 1, R_Key 0,
#    VA 0x100000000000, DMA length 24, 16-byte segment, trimmable, ECT(0), entropy 256
1 _ws.col.Protocol MRC
1 mrc.opcode 0xc6
1 mrc.se 0
1 mrc.mig 0
1 mrc.padcnt 0
1 mrc.tver 0
1 mrc.pkey 0xffff
1 mrc.fecn 0
1 mrc.becn 0
1 mrc.dqpn 0x000100
1 mrc.ackreq 0
1 mrc.conn 1
1 mrc.retx 0
1 mrc.ts 0
1 mrc.psn 0
1 mrc.meth.rqmsn 0
1 mrc.meth.msn 1
1 mrc.tseth.time -
1 mrc.reth.va 0x100000000000
1 mrc.reth.rkey 0
1 mrc.reth.dmalen 24
1 mrc.payload_len 16
1 mrc.entropy 256
1 mrc.role trimmable
1 ip.dsfield.dscp 2
1 ip.dsfield.ecn 2
1 mrc.trimmed 0
1 mrc.icrc -
1 mrc.trailer.stamp -
# 2. WRITE_LAST: C=0, DestQP 0x000200, PSN 1, A, VA +16, 8 bytes, entropy 257
2 mrc.opcode 0xc8
2 mrc.conn 0
2 mrc.dqpn 0x000200
2 mrc.psn 1
2 mrc.ackreq 1
2 mrc.retx 0
2 mrc.ts 0
2 mrc.meth.msn 1
2 mrc.reth.va 0x100000000010
2 mrc.reth.dmalen 24
2 mrc.payload_len 8
2 mrc.entropy 257
2 mrc.role trimmable
2 mrc.trimmed 0
# 3. WRITE_ONLY retransmission, WireTimestamp: MSN 2, PSN 7, RTX+A+TS,
#    TSETH 0x1234 format 1, trimmable_retx (DSCP 3), VA 0x200000000000, 8 bytes, entropy 300
3 mrc.opcode 0xca
3 mrc.psn 7
3 mrc.dqpn 0x000200
3 mrc.retx 1
3 mrc.ackreq 1
3 mrc.ts 1
3 mrc.conn 0
3 mrc.meth.msn 2
3 mrc.tseth.time 0x1234
3 mrc.tseth.format 1
3 mrc.reth.va 0x200000000000
3 mrc.reth.dmalen 8
3 mrc.payload_len 8
3 mrc.role trimmable_retx
3 ip.dsfield.dscp 3
3 mrc.entropy 300
3 mrc.trimmed 0
# 4. cumulative ACK: DestQP 0x000100, PSN 1, AETH syndrome 0x1F MSN 1,
#    control (DSCP 17), Not-ECT, entropy 260
4 mrc.opcode 0xd1
4 mrc.dqpn 0x000100
4 mrc.psn 1
4 mrc.aeth.syndrome 0x1f
4 mrc.aeth.msn 1
4 mrc.role control
4 ip.dsfield.dscp 17
4 ip.dsfield.ecn 0
4 mrc.entropy 260
4 mrc.meth.msn -
4 mrc.sack.cack -
# 5. SACK: DestQP 0x000100, cumulative PSN 5, M=01, ack_psn_offset +3, entropy
#    echo 0x105, responder 0x000200, cc_type 1, mpr 8, sack_offset +1, bitmap
#    bits 1,2, service time 0, received bytes 0x21, control, entropy 261
5 mrc.opcode 0xdc
5 mrc.dqpn 0x000100
5 mrc.psn 5
5 mrc.ackreq 0
5 mrc.sack.m 1
5 mrc.sack.pr 0
5 mrc.sack.ack_psn_offset 3
5 mrc.sack.entropy_echo 0x105
5 mrc.sack.responder_qpn 0x200
5 mrc.sack.cack 5
5 mrc.sack.cc_type 1
5 mrc.sack.cc_flags 0
5 mrc.sack.mpr 8
5 mrc.sack.offset 1
5 mrc.sack.bitmap 0x0000000000000006
5 mrc.cc.ts_echo 0
5 mrc.cc.service_time 0
5 mrc.cc.restore_pen 0
5 mrc.cc.rcv_bytes 0x21
5 mrc.role control
5 mrc.entropy 261
# 6. NACK TRIMMED_LASTHOP (0x02) for PSN 6, DestQP 0x000100, entropy echo
#    0x106, responder 0x000200, control, entropy 262
6 mrc.opcode 0xdd
6 mrc.dqpn 0x000100
6 mrc.psn 6
6 mrc.nack.code 2
6 mrc.nack.psn 6
6 mrc.nack.entropy_echo 0x106
6 mrc.nack.responder_qpn 0x200
6 mrc.nack.ts_echo 0
6 mrc.role control
6 mrc.entropy 262
# 7. probe on entropy 290 to QP 2: id 7, prober 10.0.0.1, time 0x42, trimmable
7 mrc.opcode 0xde
7 mrc.dqpn 2
7 mrc.psn 0
7 mrc.probe.id 7
7 mrc.probe.prober 10.0.0.1
7 mrc.probe.ts 0x42
7 mrc.role trimmable
7 mrc.entropy 290
# 8. trimmed WRITE_MIDDLE at the last hop: BTH + METH only, DSCP 10, TTL 63,
#    entropy 258
8 mrc.opcode 0xc7
8 mrc.dqpn 0x000200
8 mrc.psn 3
8 mrc.meth.msn 1
8 mrc.trimmed 1
8 mrc.role trimmed_last_hop
8 ip.dsfield.dscp 10
8 ip.ttl 63
8 mrc.entropy 258
8 mrc.reth.va -
8 mrc.payload_len -
EOF

# Info column (the summary line) of the vectors.
load_fields "$VECTORS" info _ws.col.Info
info_check() { # name, frame, extended regex
	if [[ ${F["info|$2|_ws.col.Info"]:-} =~ $3 ]]; then
		pass "$1"
	else
		fail "$1"
		note "frame $2 Info is '${F["info|$2|_ws.col.Info"]:-}'"
	fi
}
info_check "info frame 1 WRITE_FIRST" 1 '^WRITE_FIRST dqp=0x000100 psn=0 len=16( |$)'
info_check "info frame 1 flag C" 1 ' C$'
# (the analysis adds its tags after the flags)
info_check "info frame 3 flags A RTX TS" 3 'len=8 A RTX TS( \[|$)'
info_check "info frame 4 ACK" 4 '^ACK dqp=0x000100 psn=1 msn=1$'
info_check "info frame 5 SACK" 5 '^SACK dqp=0x000100 .*cack=5 bitmap=0x0000000000000006'
info_check "info frame 6 NACK" 6 'NACK .*TRIMMED_LASTHOP psn=6$'
info_check "info frame 7 PROBE" 7 '^PROBE dqp=0x000002 .*id=7'
info_check "info frame 8 TRIMMED" 8 '^WRITE_MIDDLE dqp=0x000200 psn=3 .*\[TRIMMED\]( \[|$)'

# The display filters the README shows select the right vectors.
filter_check() { # filter, frame numbers expected
	local got
	got=$(ts -r "$VECTORS" -Y "$1" -T fields -e frame.number | tr '\n' ' ')
	if [ "$got" = "$2 " ]; then
		pass "filter $1"
	else
		fail "filter $1"
		note "selects frames '$got', expected '$2 '"
	fi
}
filter_check 'mrc.opcode == 0xdc' 5
filter_check 'mrc.retx == 1' 3
filter_check 'mrc.dqpn == 0x000200 && mrc.ackreq == 1' '2 3'
filter_check 'mrc.conn == 1' 1
filter_check 'mrc.nack.code == 2' 6
filter_check 'mrc.trimmed == 1' 8
filter_check 'mrc.sack.cack == 5 && mrc.sack.bitmap == 0x6' 5
filter_check 'mrc.entropy == 290 && mrc.probe.id == 7' 7
filter_check 'mrc.role == "control"' '4 5 6'

# check_clean NAME PCAP [TSHARK-OPTIONS]: no malformed packet, no expert
# info of severity error (Lua errors included), every IPv4 checksum good.
check_clean() {
	local name=$1 pcap=$2 n bad
	shift 2
	n=$(ts -r "$pcap" "$@" | wc -l)
	bad=$(ts -r "$pcap" "$@" -Y '_ws.malformed || _ws.expert.severity >= 0x00800000' \
		-T fields -e frame.number | tr '\n' ' ')
	if [ "$n" -gt 0 ] && [ -z "$bad" ] && ! ts -r "$pcap" "$@" -V | grep -q 'Lua Error'; then
		pass "$name: no malformed packet or error"
	else
		fail "$name: no malformed packet or error"
		note "frames with errors: $bad (of $n)"
	fi
	# PROTO_CHECKSUM_E_GOOD is 1 in ip.checksum.status.
	bad=$(ts -r "$pcap" "$@" -o ip.check_checksum:TRUE -Y 'ip && !(ip.checksum.status == 1)' \
		-T fields -e frame.number | tr '\n' ' ')
	if [ "$n" -gt 0 ] && [ -z "$bad" ]; then
		pass "$name: IPv4 checksums good"
	else
		fail "$name: IPv4 checksums good"
		note "frames with a bad or unverified checksum: $bad"
	fi
}
check_clean vectors "$VECTORS"

# --- Preferences --------------------------------------------------------------
# IcrcEnabled: the last 4 bytes are the ICRC, not payload; a trimmed packet
# has no room for one.
load_fields "$VECTORS" icrc mrc.icrc mrc.payload_len mrc.trimmed mrc.reth.dmalen -- -o mrc.icrc:TRUE
expect_frames icrc "icrc pref" <<'EOF'
1 mrc.icrc 0x15161718
1 mrc.payload_len 12
1 mrc.reth.dmalen 24
4 mrc.icrc -
8 mrc.icrc -
8 mrc.trimmed 1
EOF
# Trimmed is told by codepoint, not length (docs/protocol.md section 1): with 2
# declared the trimmed codepoint, vector 1 is a trimmed packet.
load_fields "$VECTORS" dscp mrc.role mrc.trimmed mrc.reth.va -- -o mrc.dscp_trimmed:2 -o mrc.dscp_trimmed_last_hop:11
expect_frames dscp "codepoint prefs" <<'EOF'
1 mrc.role trimmed
1 mrc.trimmed 1
1 mrc.reth.va -
8 mrc.role other
8 mrc.trimmed 1
EOF

# --- Short, unsupported and garbage input ----------------------------------
# text2pcap wraps each UDP payload in Ethernet/IPv4/UDP 256 -> 4791.
garbage() {
	local hex
	while read -r hex; do
		printf '000000 %s\n' "$hex"
	done
}
cat >"$tmp/garbage.hex" <<'EOF'
de 00 ff
dc 00 ff ff 00 00 01 00 00 00 00 05 00 20 00 03 00 00 01 05 00 00
c6 00 ff ff 00 00 01 00 40 00 00 00 00 01
c6 00 ff ff 00 00 01 00 50 00 00 00 00 00 00 01
d1 00 ff ff 00 00 01 00 00 00 00 01
dd 00 ff ff 00 00 01 00 00 00 00 06 00 00 02 00 00 00 01 06 00 00 02 00 00 00 00 06 10 00 00
de 00 ff ff 00 00 02 00 00 00 00 00 00 00 00 00 00 07 00 00 0a 00 00 01 00 42 00
00 11 22 33 44 55 66 77 88 99 aa bb cc dd ee ff 00 11 22 33 44 55
c9 00 ff ff 00 00 01 00 00 00 00 01 00 00 00 01 00 00 10 00 00 00 00 00 00 00 00 00 00 00 00 08 01 02 03 04 05 06 07 08
ca 00 ff ff 00 00 01 00 00 00 00 01 00 00 00 01 00 00 10 00 00 00 00 00
dc ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff
d0 00 ff ff 00 00 01 00 00 00 00 01 00 00 00 00
EOF
garbage <"$tmp/garbage.hex" >"$tmp/garbage.txt"
if text2pcap -q -e 0x800 -4 10.0.0.1,10.0.0.2 -u 256,4791 "$tmp/garbage.txt" "$tmp/garbage.pcap" 2>>"$tmp/stderr"; then
	load_fields "$tmp/garbage.pcap" g mrc.opcode mrc.malformed mrc.unsupported mrc.unknown_opcode \
		mrc.trimmed mrc.extra.warn infiniband.bth.opcode
	# Expert fields show their text when present.
	for k in "${!F[@]}"; do
		[[ $k == g\|* ]] && [[ $k != *\|*.opcode ]] && [[ $k != *\|mrc.trimmed ]] &&
			[ -n "${F[$k]}" ] && F[$k]=yes
	done
	expect_frames g garbage <<'EOF'
# 1: 3 bytes, no whole BTH
1 mrc.malformed yes
# 2: SACK with a 10-byte SETH
2 mrc.malformed yes
# 3: data with half a METH
3 mrc.malformed yes
# 4: TS flag but no TSETH
4 mrc.malformed yes
# 5: ACK without AETH
5 mrc.malformed yes
# 6: NACK one byte short
6 mrc.malformed yes
# 7: probe one byte short
7 mrc.malformed yes
# 8: opcode outside MRC's range (RC Send First): Wireshark's InfiniBand
8 infiniband.bth.opcode 0
8 mrc.opcode -
# 12: opcode in MRC's range (transport bits 110) that MRC does not define
12 mrc.opcode 0xd0
12 mrc.unknown_opcode yes
12 infiniband.bth.opcode -
# 9: Write with Immediate: unsupported, not malformed
9 mrc.opcode 0xc9
9 mrc.unsupported yes
9 mrc.malformed -
# 10: data packet with 8 bytes where RETH should be: trimmed, leftovers flagged
10 mrc.trimmed 1
10 mrc.extra.warn yes
10 mrc.malformed -
# 11: all-ones SACK with extra bytes
11 mrc.opcode 0xdc
11 mrc.extra.warn yes
11 mrc.malformed -
EOF
	if ts -r "$tmp/garbage.pcap" -V | grep -q 'Lua Error\|Bug in mrc.lua'; then
		fail "garbage: no Lua error"
	else
		pass "garbage: no Lua error"
	fi
	# Cut by a snapshot length: incomplete, but not malformed.
	editcap -s 74 "$VECTORS" "$tmp/snap.pcap" 2>>"$tmp/stderr"
	load_fields "$tmp/snap.pcap" s mrc.opcode mrc.malformed mrc.cut_short mrc.payload_len
	expect_frames s snaplen <<'EOF'
5 mrc.opcode 0xdc
5 mrc.malformed -
1 mrc.payload_len 16
EOF
	if [ -n "${F["s|5|mrc.cut_short"]:-}" ] && ! ts -r "$tmp/snap.pcap" -V | grep -q 'Lua Error'; then
		pass "snaplen: SACK marked cut short"
	else
		fail "snaplen: SACK marked cut short"
	fi
else
	fail "text2pcap builds the garbage frames"
fi

# --- Entropy ports with stock dissectors (PTP on 319) ------------------------
printf '000000 d1 00 ff ff 00 00 01 00 00 00 00 01 1f 00 00 01\n' >"$tmp/ptp.txt"
text2pcap -q -e 0x800 -4 10.0.0.2,10.0.0.1 -u 319,4791 "$tmp/ptp.txt" "$tmp/e319.pcap" 2>>"$tmp/stderr"
# A PTPv2 Sync message, port 319 both ways, must reach the PTP dissector.
printf '000000 00 02 00 2c%s 00 01 00 00%s\n' "$(printf ' 00%.0s' $(seq 26))" \
	"$(printf ' 00%.0s' $(seq 10))" >"$tmp/sync.txt"
text2pcap -q -e 0x800 -4 10.0.0.2,10.0.0.1 -u 319,319 "$tmp/sync.txt" "$tmp/p319.pcap" 2>>"$tmp/stderr"
if [ "$(ts -r "$tmp/e319.pcap" -T fields -e mrc.opcode -e ptp.v2.messagetype)" = "$(printf '0xd1\t')" ]; then
	pass "entropy port 319 to 4791 is MRC"
else
	fail "entropy port 319 to 4791 is MRC"
fi
if ts -r "$tmp/p319.pcap" -T fields -e ptp.v2.messagetype | grep -qx '0x00' &&
	[ -z "$(ts -r "$tmp/p319.pcap" -T fields -e mrc.opcode)" ]; then
	pass "port 319 to 319 is still PTP"
else
	fail "port 319 to 319 is still PTP"
fi

# --- Virtual-arrival trailer (docs/promises.md) --------------------------------
# Vector 4 (the ACK) followed by "MR" + 1234567890 ps + sequence 7, then by
# zeros.
ack="02 00 00 00 00 01 02 00 00 00 00 02 08 00 45 44 00 2c 00 00 40 00 40 11 26 7b 0a 00 00 02 0a 00 00 01 01 04 12 b7 00 18 00 00 d1 00 ff ff 00 00 01 00 00 00 00 01 1f 00 00 01"
{
	printf '000000 %s 4d 52 00 00 49 96 02 d2 00 00 00 07\n' "$ack"
	printf '000000 %s 00 00 00 00 00 00 00 00 00 00 00 00\n' "$ack"
	printf '000000 %s 4d 52 ff ff ff ff ff ff ff ff ff ff\n' "$ack"
} >"$tmp/trailer.txt"
text2pcap -q "$tmp/trailer.txt" "$tmp/trailer.pcap" 2>>"$tmp/stderr"
load_fields "$tmp/trailer.pcap" t mrc.trailer.stamp mrc.trailer.seq mrc.opcode mrc.aeth.msn
expect_frames t trailer <<'EOF'
1 mrc.trailer.stamp 1234567890
1 mrc.trailer.seq 7
1 mrc.opcode 0xd1
1 mrc.aeth.msn 1
2 mrc.trailer.stamp -
2 mrc.opcode 0xd1
3 mrc.trailer.stamp 281474976710655
3 mrc.trailer.seq 4294967295
EOF
check_clean trailer "$tmp/trailer.pcap"

# --- Promise frames (docs/promises.md) ----------------------------------------
# h1 to h0: EtherType 0x88B5, "MRP1", promise 0x0102030405 ps, sequence 42,
# want 0x1234 ps, end bound 0x5678 ps, zero padding to 60 bytes; then one
# cut after the magic.
{
	printf '000000 02 00 00 00 00 01 02 00 00 00 00 02 88 b5 4d 52 50 31 00 00 00 01 02 03 04 05 00 00 00 2a'
	printf ' 00 00 00 00 00 00 12 34 00 00 00 00 00 00 56 78'
	printf ' 00%.0s' $(seq 14)
	printf '\n000000 02 00 00 00 00 01 02 00 00 00 00 02 88 b5 4d 52 50 31 00 00\n'
} >"$tmp/promise.txt"
text2pcap -q "$tmp/promise.txt" "$tmp/promise.pcap" 2>>"$tmp/stderr"
load_fields "$tmp/promise.pcap" p mrp.promise mrp.seq mrp.want mrp.end _ws.col.Protocol _ws.expert.message
expect_frames p promise <<'EOF'
1 mrp.promise 4328719365
1 mrp.seq 42
1 mrp.want 4660
1 mrp.end 22136
1 _ws.col.Protocol MRP
1 _ws.expert.message -
2 mrp.promise -
2 _ws.expert.message Promise frame too short
EOF

# --- Every frame kind, as the codec sees it (build/tests/mrc-frames) --------
if [ ! -x "$MRC_FRAMES" ]; then
	fail "mrc-frames missing ($MRC_FRAMES)"
elif ! "$MRC_FRAMES" "$tmp/frames.pcap" >"$tmp/expected.tsv" 2>"$tmp/frames.err"; then
	fail "mrc-frames runs"
	sed 's/^/# /' "$tmp/frames.err"
else
	pass "mrc-frames runs"
	nexp=$(wc -l <"$tmp/expected.tsv")
	ncap=$(ts -r "$tmp/frames.pcap" | wc -l)
	if [ "$nexp" -eq 19 ] && [ "$ncap" -eq 19 ]; then
		pass "mrc-frames writes 19 frames"
	else
		fail "mrc-frames writes 19 frames"
		note "$nexp lines printed, $ncap frames in the pcap"
	fi
	hexdump() { ts -r "$1" -c 8 -x | grep -E '^[0-9a-f]{4}  '; }
	if [ -n "$(hexdump "$VECTORS")" ] && cmp -s <(hexdump "$VECTORS") <(hexdump "$tmp/frames.pcap"); then
		pass "mrc-frames frames 1-8 are the vectors' bytes"
	else
		fail "mrc-frames frames 1-8 are the vectors' bytes"
	fi
	# Every field the tool prints, decoded without and with the ICRC
	# preference; a frame that has mrc.icrc is read with it.
	mapfile -t ffields < <(cut -f3- "$tmp/expected.tsv" | tr '\t' '\n' | sed -n 's/=.*//p' | sort -u)
	load_fields "$tmp/frames.pcap" k "${ffields[@]}"
	load_fields "$tmp/frames.pcap" ki "${ffields[@]}" -- -o mrc.icrc:TRUE
	while IFS=$'\t' read -r -a cols; do
		frame=${cols[0]} kind=${cols[1]:-?} prefix=k
		[[ "${cols[*]}" == *mrc.icrc=* ]] && prefix=ki
		for kv in "${cols[@]:2}"; do
			[ -z "$kv" ] && continue
			echo "$frame ${kv%%=*} ${kv#*=}"
		done | expect_frames "$prefix" "mrc-frames $kind"
	done <"$tmp/expected.tsv"
	check_clean mrc-frames "$tmp/frames.pcap"
fi

exit $failed
