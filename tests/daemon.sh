#!/usr/bin/env bash
# tests/daemon.sh — two nicd over one veth pair in two network namespaces,
# started by hand and driven through their control sockets (the daemon side
# of the launcher contract): waiting, start, a 1 MiB message each way from
# the workload (ids 1,000,000 and 2^20 - 1, the largest), a `post`, stats,
# stop and SIGTERM; then the records: both messages completed and verified,
# the same times as `mrcemu sim` (merged as the launcher merges them), the
# post's row with source ctl, no causality violation at scale 20000, and
# per-port pcaps with every frame; an id past 2^20 - 1 refused at load.  Needs root; everything it creates
# (namespaces, veth, processes, files) is removed on every exit path.
set -uo pipefail
. "$(dirname "$0")/lib/report.sh"
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
MRCEMU=${MRCEMU:-$BUILD/mrcemu}
NICD=$BUILD/nicd
PY=/usr/bin/python3
name=daemon-b2b

need_root $name

tmp=$(mktemp -d /tmp/mrct-daemon.XXXXXX)
A=mrct-$$-a
B=mrct-$$-b
VA=mrct$$a
VB=mrct$$b
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
	ip netns del "$A" 2>/dev/null
	ip netns del "$B" 2>/dev/null
	ip link del "$VA" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM


cat >"$tmp/b2b.ini" <<EOF
[emulation]
name  = b2b
seed  = 1
scale = 20000
[nic h0]
ip = 10.0.0.1
[nic h1]
ip = 10.0.0.2
[link h0 h1]
rate  = 400Gbps
delay = 1us
[workload]
file = b2b.csv
EOF
cat >"$tmp/b2b.csv" <<EOF
id,at,src,dst,bytes,after
1000000,0ns,h0,h1,1MiB,
1048575,0ns,h1,h0,1MiB,
EOF

# One command a line on a control socket; prints each reply line.
cat >"$tmp/ctl.py" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(5)
s.connect(sys.argv[1])
f = s.makefile('rw')
for cmd in sys.argv[2:]:
    f.write(cmd + '\n')
    f.flush()
    print(f.readline().rstrip('\n'))
EOF
ctl() { "$PY" "$tmp/ctl.py" "$tmp/$1.ctl" "${@:2}"; }

# The launcher's namespaces and link, by hand (daemon protocol).
setup_net() {
	ip netns add "$A" && ip netns add "$B" &&
		ip link add "$VA" type veth peer name "$VB" &&
		ip link set "$VA" netns "$A" && ip link set "$VB" netns "$B" &&
		for x in "$A:$VA" "$B:$VB"; do
			ns=${x%%:*} dev=${x#*:}
			ip -n "$ns" link set "$dev" name p0 mtu 9000 &&
				ip netns exec "$ns" sysctl -qw net.ipv6.conf.p0.disable_ipv6=1 &&
				ip -n "$ns" link set p0 up && ip -n "$ns" link set lo up || return 1
		done
}
check "$name-namespaces" setup_net || exit 1

mkdir -p "$tmp/out"
ip netns exec "$A" "$NICD" --topology "$tmp/b2b.ini" --node h0 --ctl "$tmp/h0.ctl" \
	--out "$tmp/out" --capture 2>"$tmp/h0.log" &
pids+=($!)
ip netns exec "$B" "$NICD" --topology "$tmp/b2b.ini" --node h1 --ctl "$tmp/h1.ctl" \
	--out "$tmp/out" --capture 2>"$tmp/h1.log" &
pids+=($!)

# Both answer on their sockets within 5 s, or the rest cannot run.
up() {
	for _ in $(seq 100); do
		[ -S "$tmp/h0.ctl" ] && [ -S "$tmp/h1.ctl" ] && return 0
		sleep 0.05
	done
	sed 's/^/# /' "$tmp"/h*.log
	return 1
}
check "$name-daemons-up" up || exit 1
waiting='ok state=waiting vt_ps=0 sends=0/1 receives=0/1 violations=0 late_max_ns=0 floor_ps=0 busy_ps=0 done_ps=0 idle=0 next_ps=1000000000 ran_ps=0 rx_failed=0 epoch_ns=0 cmds=0 done_wall_ns=0 links=0:0'
check "$name-waiting" test "$(ctl h0 status)$(ctl h1 status)" = "$waiting$waiting" || note "status: $(ctl h0 status)"
check "$name-socket-mode" test "$(stat -c %a "$tmp/h0.ctl")" = 600

epoch=$("$PY" -c 'import time; print(time.clock_gettime_ns(time.CLOCK_MONOTONIC) + 100000000)')
check "$name-start" test "$(ctl h0 "start $epoch 20000")$(ctl h1 "start $epoch 20000")" = okok
check "$name-start-twice" test "$(ctl h0 "start $epoch 20000")" = "error already started"

# status until both messages are finished both ways (30 s at most).
done_both() {
	for _ in $(seq 300); do
		s0=$(ctl h0 status 2>/dev/null) s1=$(ctl h1 status 2>/dev/null)
		case "$s0 $s1" in
		*"sends=$1/$1 receives=1/1"*"sends=1/1 receives=$1/$1"*) return 0 ;;
		esac
		sleep 0.1
	done
	echo "# h0: $s0" >&2
	echo "# h1: $s1" >&2
	return 1
}
check "$name-workload-done" done_both 1
# Each NIC timed the end of its workload, after the epoch and before now
# (status done_wall_ns: the run's effective scale ends there).
done_wall_ok() {
	local now w
	now=$("$PY" -c 'import time; print(time.clock_gettime_ns(time.CLOCK_MONOTONIC))')
	for h in h0 h1; do
		w=$(ctl $h status | sed -n 's/.* done_wall_ns=\([0-9]*\) .*/\1/p')
		[ "${w:-0}" -gt 0 ] && [ "$w" -lt $((now - epoch)) ] || return 1
	done
}
check "$name-done-wall" done_wall_ok
# Workload ids run up to the message index's limit (2^20 - 1): a post takes
# the lowest id no message of h0 uses, and its row says source ctl.
check "$name-post" test "$(ctl h0 "post h1 64KiB")" = "ok id=1"
check "$name-post-bad-dst" test "$(ctl h0 "post h0 1KiB")" = \
	"error post: 'h0' is not another NIC of $tmp/b2b.ini"
check "$name-post-done" done_both 2
stats_ok() {
	local s
	s=$(ctl h0 stats)
	grep -q '^ok .* msgs_completed=2 ' <<<"$s" && grep -q ' rx_pattern_errors=0 ' <<<"$s" &&
		grep -q ' tx_data_pkts=272 ' <<<"$s" # 1 MiB + 64 KiB in 4 KiB packets
}
check "$name-stats" stats_ok
check "$name-running" grep -q '^ok state=running .* violations=0 ' <<<"$(ctl h1 status)"

# stop for h0, SIGTERM for h1: both flush their records and exit 0.
check "$name-stop" test "$(ctl h0 stop)" = ok
kill -TERM "${pids[1]}"
wait "${pids[0]}"
rc0=$?
wait "${pids[1]}"
rc1=$?
pids=()
check "$name-exit-0" test "$rc0$rc1" = 00
check "$name-sockets-removed" test ! -e "$tmp/h0.ctl" -a ! -e "$tmp/h1.ctl"

"$MRCEMU" sim "$tmp/b2b.ini" -o "$tmp/sim" -q >/dev/null 2>&1
# messages-<node>.csv merged as the launcher does: the sender's columns
# from the src row, recv_complete_ps from the dst row, verified = done and
# the receiver verified; it must equal the simulation's messages.csv.
same_as_sim() {
	"$PY" - "$tmp/out" "$tmp/sim/messages.csv" <<'EOF'
import csv, sys
out, sim = sys.argv[1], sys.argv[2]
rows = {n: {r['id']: r for r in csv.DictReader(open('%s/messages-%s.csv' % (out, n)))}
        for n in ('h0', 'h1')}
ref = list(csv.DictReader(open(sim)))
assert [r['id'] for r in ref] == ['1000000', '1048575'], ref
post = rows['h0']['1']
assert (post['src'], post['dst'], post['bytes'], post['source']) == \
    ('h0', 'h1', '65536', 'ctl'), post
assert post['complete_ps'] and rows['h1']['1']['verified'] == 'true', post
for r in ref:
    m = dict(rows[r['src']][r['id']])
    dst = rows[r['dst']][r['id']]
    m['recv_complete_ps'] = dst['recv_complete_ps']
    m['verified'] = 'true' if m['complete_ps'] and dst['verified'] == 'true' else 'false'
    assert m['verified'] == 'true', m
    if m != r:
        sys.exit('daemons %s\nsim     %s' % (m, r))
EOF
}
check "$name-messages-verified-as-sim" same_as_sim
# One past the message index's limit is refused at load, on one line, exit 2.
sed 's/^1048575,/1048576,/' "$tmp/b2b.csv" >"$tmp/past.csv"
sed 's/b2b.csv/past.csv/' "$tmp/b2b.ini" >"$tmp/past.ini"
"$MRCEMU" sim "$tmp/past.ini" -o "$tmp/past" -q >"$tmp/past.out" 2>&1
check "$name-id-past-limit-refused" test "$?:$(cat "$tmp/past.out")" = \
	"2:$tmp/past.csv:3: id: 1048576 is out of range (allowed: 1..1048575: the message index in RETH's VA has 20 bits)"
check "$name-no-violations" test "$(cut -d, -f4 "$tmp"/out/lateness-h*.csv | sort -u)" = \
	"$(printf '0\nviolations')"
# Each frame is in the sender's pcap and the receiver's (a nanosecond pcap,
# magic a1b23c4d; records counted from their headers).
pcap_frames() {
	"$PY" -c '
import struct, sys
b = open(sys.argv[1], "rb").read()
assert b[:4] == bytes.fromhex("4d3cb2a1"), "not a nanosecond pcap"
n, o = 0, 24
while o < len(b):
    o += 16 + struct.unpack_from("<I", b, o + 8)[0]
    n += 1
print(n)' "$1"
}
frames_captured() {
	local f0 f1 n0 n1
	f0=$(tail -1 "$tmp/out/lateness-h0.csv" | cut -d, -f2)
	f1=$(tail -1 "$tmp/out/lateness-h1.csv" | cut -d, -f2)
	n0=$(pcap_frames "$tmp/out/pcap/h0-0.pcap")
	n1=$(pcap_frames "$tmp/out/pcap/h1-0.pcap")
	[ "$f0" -gt 512 ] && [ "$n0" -eq $((f0 + f1)) ] && [ "$n1" -eq $((f0 + f1)) ]
}
check "$name-pcaps" frames_captured
[ $failed -eq 0 ] || sed 's/^/# /' "$tmp"/h*.log
exit $failed
