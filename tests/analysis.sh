#!/usr/bin/env bash
# tests/analysis.sh — pcap/mrc.lua's MRC analysis against the run's own
# records: a `mrcemu sim --capture` run with known drops (two exact drop
# rules on h0's link) and trims (h2's message behind h0's into a small
# egress queue) writes mrc-monitor.csv (every packet, MonitorEnabled);
# the analysis of the captures must mark exactly the retransmissions (with
# their cause) the senders' monitors record, the trimmed packets and the
# gaps the receiver's monitor records, and complete each message.
# Prints "ok NAME" / "not ok NAME" per check; exits non-zero if one failed.
set -uo pipefail
. "$(dirname "$0")/lib/report.sh"
BUILD=${BUILD:-build}
MRCEMU=${MRCEMU:-$BUILD/mrcemu}
LUA=pcap/mrc.lua

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tshark_isolate "$tmp"

cat >"$tmp/t.ini" <<'EOF'
[emulation]
name = analysis
seed = 1
[nic]
MonitorEnabled = true
[nic h0]
ip = 10.0.0.1
[nic h1]
ip = 10.0.0.2
[nic h2]
ip = 10.0.0.3
[switch s0]
EgressQueueLimit = 24KB
[link h0 s0]
rate = 100Gbps
delay = 1us
drop = h0>h1 data psn=5 tx=1, h0>h1 data psn=40 tx=1
[link h1 s0]
rate = 100Gbps
delay = 1us
[link h2 s0]
rate = 100Gbps
delay = 1us
[workload]
file = w.csv
EOF
printf 'id,at,src,dst,bytes,after\n1,0ns,h0,h1,256KiB,\n2,0ns,h2,h1,256KiB,\n' >"$tmp/w.csv"
if ! "$MRCEMU" sim "$tmp/t.ini" -o "$tmp/out" --capture -q >"$tmp/sim.out" 2>&1; then
	fail "sim run with drops and trims"
	sed 's/^/# /' "$tmp/sim.out"
	exit 1
fi
pass "sim run with drops and trims"
MON=$tmp/out/mrc-monitor.csv
PCAP=$tmp/out/pcap

ts() { tshark -n -X lua_script:$LUA -r "$PCAP/$1-0.pcap" "${@:2}" 2>/dev/null; }

# same NAME EXPECTED GOT: the two sorted lists are equal and not empty.
same() {
	if [ -s "$2" ] && cmp -s <(sort "$2") <(sort "$3"); then
		pass "$1 ($(wc -l <"$2") rows)"
	else
		fail "$1"
		diff <(sort "$2") <(sort "$3") | head -10 | sed 's/^/# /'
	fi
}

# Columns of mrc-monitor.csv, by name.
col() { head -1 "$MON" | tr ',' '\n' | grep -nx "$1" | cut -d: -f1; }
node=$(col node) dir=$(col direction) type=$(col packet_type) psn=$(col bth_psn)
rtx=$(col rtx_bit) origin=$(col rtx_origin) lip=$(col local_ip) rip=$(col remote_ip)

# Retransmissions, with their cause, on each sender's port.
for h in h0 h2; do
	awk -F, -v n="$h" "\$$node == n && \$$dir == \"tx\" && \$$rtx == 1 \
		{ print \$$lip, \$$psn, \$$origin }" "$MON" >"$tmp/rtx-$h.want"
	ts "$h" -Y mrc.analysis.retransmission -T fields -E separator=' ' \
		-e ip.src -e mrc.psn -e mrc.analysis.rtx_cause >"$tmp/rtx-$h.got"
	same "$h retransmissions and causes match its monitor" "$tmp/rtx-$h.want" "$tmp/rtx-$h.got"
done
check "h0 retransmits the two dropped PSNs after timeouts" \
	test "$(tr '\n' ' ' <"$tmp/rtx-h0.got")" = "10.0.0.1 5 timeout 10.0.0.1 40 timeout "
check "h2 retransmits after NACKs" grep -q ' nack$' "$tmp/rtx-h2.got"

# Trimmed packets reaching the receiver.
awk -F, "\$$node == \"h1\" && \$$dir == \"rx\" && \$$type == \"TRIMMED\" \
	{ print \$$rip, \$$psn }" "$MON" >"$tmp/trim.want"
ts h1 -Y 'mrc.trimmed == 1' -T fields -E separator=' ' -e ip.src -e mrc.psn >"$tmp/trim.got"
same "h1 trimmed packets match its monitor" "$tmp/trim.want" "$tmp/trim.got"

# Gaps at the receiver: PSNs not yet seen when a higher one arrives, from
# the order of the monitor's rx rows (trimmed arrivals count as seen).
awk -F, "\$$node == \"h1\" && \$$dir == \"rx\" && \$$type ~ /^(WRITE_|TRIMMED)/ {
	s = \$$rip; p = \$$psn + 0
	if (!(s in high)) high[s] = -1
	for (q = high[s] + 1; q < p; q++) print s, q
	if (p > high[s]) high[s] = p
}" "$MON" >"$tmp/gap.want"
ts h1 -Y mrc.analysis.gap_count -T fields -E separator=' ' -e ip.src \
	-e mrc.analysis.gap_first -e mrc.analysis.gap_count |
	awk '{ for (i = 0; i < $3; i++) print $1, $2 + i }' >"$tmp/gap.got"
same "h1 gaps match its monitor" "$tmp/gap.want" "$tmp/gap.got"
check "h1 sees the two dropped PSNs as gaps" grep -qx '10.0.0.1 5' "$tmp/gap.got"
check "h1 sees PSN 40 as a gap" grep -qx '10.0.0.1 40' "$tmp/gap.got"

# Every SACK on the senders' ports answers a data packet they sent, with
# an RTT no shorter than the two links' delays.
for h in h0 h2; do
	bad=$(ts "$h" -Y 'mrc.opcode == 0xdc && !mrc.sack.pr' -T fields -e mrc.analysis.answers \
		-e mrc.analysis.rtt | awk '$1 == "" || $2 < 0.000002' | wc -l)
	check "$h SACKs answer a data packet, RTT >= 2 us" test "$bad" -eq 0
done

# The statistics: one QP per sender at h1, both messages complete.
ts h1 -q -z mrc,qp >"$tmp/stats.txt"
check "-z mrc,qp lists both QPs" test "$(grep -cE '^[12] +10\.0\.0\.[13] ' "$tmp/stats.txt")" -eq 2
check "-z mrc,qp: both messages done" test "$(grep -cE ' 1/1 ' "$tmp/stats.txt")" -eq 2
check "-z mrc,qp: h2's retransmissions by cause" \
	grep -qE '^2 +10\.0\.0\.3 .* nack=[0-9]+ ' "$tmp/stats.txt"
exit $failed
