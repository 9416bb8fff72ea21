#!/usr/bin/env bash
# tests/hostile.sh — hostile frames against live daemons (issue 13;
# docs/protocol.md §2): while h0 and h1 exchange real messages through s0,
# an [external] endpoint x0 sends every class of bad frame (tests/tools/
# mrc-hostile.c: short, bad IPv4 version, header length, total length and
# checksum, UDP length, unknown and unsupported opcodes, a DMA length that
# contradicts the packet, QPs that name nothing, forged sources, forged
# acknowledgements from a third address and with PSNs never sent, forged
# virtual-arrival stamps, TTL 1, no route).  Checks: every daemon lives,
# every class is counted by its reason at the switch or the NIC, every real
# message completes verified, and each nicd's peak memory (VmHWM) stays
# under MEM_BOUND_KB.  Needs root (skipped otherwise, a failure when
# CI=true); what it creates is removed on every exit path.
set -uo pipefail
. "$(dirname "$0")/lib/report.sh"
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
MRCEMU=${MRCEMU:-$BUILD/mrcemu}
FRAMES=${HOSTILE_FRAMES:-15000}
# A nicd of this topology peaks near 17 MB (MaxQps 64: at most that many
# open receiving QPs, closed records and unused destinations, so the 500
# forged sources to each NIC are evicted, counted); 64 MB leaves room for the
# sanitizers of `make check`.  Before the fix, forged sources alone took a
# daemon past 200 MB.
MEM_BOUND_KB=${MEM_BOUND_KB:-65536}

need_root hostile

emu=th$$
tmp=$(mktemp -d /tmp/mrct-hostile.XXXXXX)
cleanup() {
	"$MRCEMU" down "$tmp/h.ini" >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cat >"$tmp/h.ini" <<EOF
[emulation]
name  = $emu
seed  = 1
scale = 20000
[nic]
MaxQps = 64
[nic h0]
ip = 10.0.0.1
[nic h1]
ip = 10.0.0.2
[external x0]
ip = 10.0.0.9
[switch s0]
[link h0 s0]
[link h1 s0]
[link x0 s0]
[workload]
file = h.csv
EOF
{
	# 8 MiB each: the first QPs still send while the forged acknowledgements
	# arrive (rx_drop_ack_inconsistent needs a sending QP to check against).
	echo "id,at,src,dst,bytes,after"
	for i in 1 2 3 4; do
		echo "$i,$((i * 20))us,h0,h1,8MiB,"
		echo "$((i + 4)),$((i * 20))us,h1,h0,8MiB,"
	done
} >"$tmp/h.csv"

note "$(date +%T) up"
"$MRCEMU" up "$tmp/h.ini" -o "$tmp/out" >"$tmp/up.out" 2>"$tmp/up.err"
check up test $? -eq 0 || {
	sed 's/^/# /' "$tmp/up.err"
	exit 1
}
netns() { ip netns list | awk '{print $1}' | grep -E "^mrc-+$emu-+$1\$" | head -1; }

# Both NICs, all classes, while the messages run: once the first messages
# (posted at 20 us of virtual time) have their QPs.
for _ in $(seq 200); do
	vt=$("$MRCEMU" ctl --topology "$tmp/h.ini" h0 status 2>/dev/null | sed -n 's/.* vt_ps=\([0-9]*\).*/\1/p')
	[ "${vt:-0}" -gt 30000000 ] && break
	sleep 0.05
done
for to in 10.0.0.1:10.0.0.2 10.0.0.2:10.0.0.1; do
	ip netns exec "$(netns x0)" "$BUILD/tests/mrc-hostile" p0 10.0.0.9 "${to%:*}" "${to#*:}" \
		$((FRAMES / 2)) >"$tmp/sent-${to%:*}" 2>&1
	check "frames-sent-to-${to%:*}" test $? -eq 0 || sed 's/^/# /' "$tmp/sent-${to%:*}"
done

note "$(date +%T) frames sent"
# Done: its 4 messages sent, and every message it receives complete (the 4
# real ones and any a hostile frame completed: those are recorded too, as
# the external sender's).
finished() {
	local r
	r=$(sed -n 's/.* sends=4\/4 receives=\([0-9]*\)\/\([0-9]*\) .*/\1 \2/p' <<<"$1")
	[ -n "$r" ] && [ "${r% *}" = "${r#* }" ] && [ "${r% *}" -ge 4 ]
}
both_finished() { finished "$s0" && finished "$s1"; }
for _ in $(seq 600); do
	s0=$("$MRCEMU" ctl --topology "$tmp/h.ini" h0 status 2>&1)
	s1=$("$MRCEMU" ctl --topology "$tmp/h.ini" h1 status 2>&1)
	both_finished && break
	sleep 0.2
done
note "$(date +%T) h0: $s0"
note "h1: $s1"
for n in h0 h1 s0; do
	check "$n-alive" grep -q '^ok' <<<"$("$MRCEMU" ctl --topology "$tmp/h.ini" $n status 2>&1)"
done
check messages-complete both_finished

declare -A stats
for n in h0 h1 s0; do stats[$n]=$("$MRCEMU" ctl --topology "$tmp/h.ini" $n stats 2>&1); done
count() { tr ' ' '\n' <<<"${stats[$1]}" | awk -F= -v k="$2" '$1 == k {print $2}'; }
positive() { # NODE COUNTER...
	local v
	for k in "${@:2}"; do
		v=$(count "$1" "$k")
		check "$1-counts-$k" test "${v:-0}" -gt 0 || note "$1: $k=${v:-none}"
	done
}
positive s0 rx_drop_short rx_drop_bad_ip_version rx_drop_bad_ip_length rx_drop_bad_ip_csum \
	rx_drop_udp_length rx_drop_unknown_opcode rx_drop_unsupported_opcode \
	rx_drop_bad_dma_length drop_ttl drop_no_route
for n in h0 h1; do
	positive $n rx_drop_ack_unknown_qp dest_evicted closed_record_evicted msgs_received
done
# The forged acknowledgements name h0's and h1's first QP numbers; which
# of them are sending QPs when they arrive depends on timing.
inconsistent=$(($(count h0 rx_drop_ack_inconsistent) + $(count h1 rx_drop_ack_inconsistent)))
check nics-count-rx_drop_ack_inconsistent test "$inconsistent" -gt 0

# Peak memory of each nicd: the processes of its namespace.
for n in h0 h1; do
	kb=0
	for pid in $(ip netns pids "$(netns $n)"); do
		v=$(awk '/^VmHWM/ {print $2}' "/proc/$pid/status" 2>/dev/null)
		[ "${v:-0}" -gt "$kb" ] && kb=$v
	done
	note "$n: nicd peak memory $kb kB, $(count $n msgs_received) messages received"
	check "$n-memory-under-${MEM_BOUND_KB}kB" test "$kb" -gt 0 -a "$kb" -lt "$MEM_BOUND_KB"
done

note "$(date +%T) down"
"$MRCEMU" down "$tmp/h.ini" >"$tmp/down.out" 2>&1
note "$(date +%T) done"
check down test $? -eq 0 || sed 's/^/# /' "$tmp/down.out"
real=$(awk -F, 'NR == 1 {for (i = 1; i <= NF; i++) c[$i] = i; next}
	$c["source"] == "workload" && $c["verified"] == "true" {n++} END {print n + 0}' \
	"$tmp/out/messages.csv" 2>/dev/null)
check real-messages-verified test "${real:-0}" -eq 8
exit $failed
