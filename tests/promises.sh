#!/usr/bin/env bash
# tests/promises.sh — exact emulation at any speed (docs/promises.md, issue
# 8): `mrcemu run` equals `mrcemu sim` byte for byte (messages.csv,
# mrc-events, mrc-cc, mrc-monitor, mrc-transport-stats, switch-stats, and the
# pcaps once the trailers are removed) at --scale max and at a paced scale
# at least ten times slower than max's own effective scale; with two busy
# loops on both cores and with one daemon stopped (SIGSTOP) for 3 s;
# on default.ini and on a leaf-spine from scripts/gen-leafspine with unequal
# link delays, trims, NACKs and workload dependencies; on incast-8.ini,
# leaf-spine-8.ini and a 16-host leaf-spine at both scales; cut by --until
# at max as sim cuts.  Promise frames show
# on a veth (tcpdump) and decode with mrc.lua; a delay-0 link between
# daemons and --scale max with an external endpoint are refused.  The
# causality-violation counter reads 0 in every run.
#
# Needs root; everything it creates is removed on every exit path.
set -uo pipefail
. "$(dirname "$0")/lib/report.sh"
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
MRCEMU=${MRCEMU:-$BUILD/mrcemu}
PY=/usr/bin/python3
LUA=pcap/mrc.lua

need_root promises

emu=p$$
tmp=$(mktemp -d /tmp/mrct-promises.XXXXXX)
tshark_isolate "$tmp"
loops=()
cleanup() {
	for p in "${loops[@]}"; do kill "$p" 2>/dev/null; done
	for f in "$tmp"/*.ini; do [ -e "$f" ] && "$MRCEMU" down "$f" >/dev/null 2>&1; done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# topo SRC NAME: a copy of SRC (and its workload) as emulation $emu-NAME.
topo() {
	local dst=$tmp/$2.ini
	mkdir -p "$tmp/workloads"
	sed "s/^name *=.*/name = $emu$2/" "$1" >"$dst"
	local w
	w=$(sed -n 's/^file *= *//p' "$1")
	[ -n "$w" ] && cp "$(dirname "$1")/$w" "$tmp/$w"
	echo "$dst"
}

# A 12-host leaf-spine (gen-leafspine, 2 spines) with unequal link delays
# (every odd host 600 ns, the second spine 1.4 us), 128 KiB messages, an
# incast of three senders on h0 (trims, NACKs) and one message that waits
# for another (a dependency).
leafspine() {
	local n=$1 name=$2
	"$PY" scripts/gen-leafspine "$n" -o "$tmp" --name "$emu$name" --spines 2 \
		--bytes 128KiB >/dev/null || return 1
	mv "$tmp/$emu$name.ini" "$tmp/$name.ini"
	awk '/^\[link h[0-9]*[13579] / { odd = 1 } /^\[link .* spine1\]/ { sp = 1 }
	     /^delay/ && odd { print "delay = 600ns"; odd = 0; next }
	     /^delay/ && sp { print "delay = 1400ns"; sp = 0; next }
	     /^\[/ { odd = odd && /^\[link/; sp = sp && /^\[link/ } { print }' \
		"$tmp/$name.ini" >"$tmp/$name.tmp" && mv "$tmp/$name.tmp" "$tmp/$name.ini"
	sed -i "s|^file *=.*|file = $emu$name.csv|" "$tmp/$name.ini"
	cat >>"$tmp/$emu$name.csv" <<-EOF
		901,0ns,h$((n - 1)),h0,256KiB,
		902,0ns,h$((n - 2)),h0,256KiB,
		903,0ns,h$((n / 2)),h0,256KiB,
		904,0ns,h0,h1,64KiB,901
	EOF
	# Every record on: into gen-leafspine's [nic] section when it writes one
	# (a section may be given once).
	grep -q '^\[nic\]' "$tmp/$name.ini" || printf '[nic]\n' >>"$tmp/$name.ini"
	sed -i '/^\[nic\]/a EnableEventLogging = true\nMonitorEnabled = true\nEnableCcTrace = true' \
		"$tmp/$name.ini"
	# A shallow switch queue, so the incast trims (auto gives one BDP).
	sed -i 's/^EgressQueueLimit *= *auto/EgressQueueLimit = 64KiB/' "$tmp/$name.ini"
	echo "$tmp/$name.ini"
}

# pcap_same A B: the same frames at the same instants once the 12-byte
# trailers are removed.
pcap_same() {
	"$PY" - "$1" "$2" <<'EOF'
import struct, sys
def frames(path):
    d = open(path, 'rb').read()
    e = '<' if d[:4] in (b'\xd4\xc3\xb2\xa1', b'\x4d\x3c\xb2\xa1') else '>'
    off, out = 24, []
    while off + 16 <= len(d):
        s, ns, incl, _ = struct.unpack(e + 'IIII', d[off:off + 16])
        f = d[off + 16:off + 16 + incl]
        off += 16 + incl
        if f[12:14] == b'\x08\x00':
            end = 14 + struct.unpack('>H', f[16:18])[0]
            if f[end:end + 2] == b'MR':
                f = f[:end] + f[end + 12:]
        out.append((s, ns, f))
    return out
sys.exit(frames(sys.argv[1]) != frames(sys.argv[2]))
EOF
}

# same_as_sim NAME RUN SIM: every record and pcap of RUN equals SIM's.
same_as_sim() {
	local name=$1 run=$2 sim=$3 f b bad=""
	for f in "$sim"/*.csv; do
		b=$(basename "$f")
		cmp -s "$f" "$run/$b" || bad="$bad $b"
	done
	for f in "$sim"/pcap/*.pcap; do
		[ -e "$f" ] || continue
		pcap_same "$f" "$run/pcap/$(basename "$f")" || bad="$bad pcap/$(basename "$f")"
	done
	[ -z "$bad" ] || note "$name differs from sim in:$bad"
	[ -z "$bad" ]
}

violations() {
	awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "violations") c = i; next }
		{ s += $c } END { print s + 0 }' "$1/lateness.csv"
}

# cpu_per_s EMULATION: CPU ticks (user + system) its daemons use in 1 s.
cpu_ticks() {
	local f p s=0
	for f in /run/mrcemu/"$1"/*.pid; do
		read -r p <"$f" || continue
		set -- $(cut -d' ' -f14,15 "/proc/$p/stat" 2>/dev/null) 0 0
		s=$((s + $1 + $2))
	done
	echo $s
}
cpu_per_s() {
	local a
	a=$(cpu_ticks "$1")
	sleep 1
	echo $(($(cpu_ticks "$1") - a))
}

effective() { sed -n 's/.*effective scale: \([0-9]*\) wall ns.*/\1/p' "$1"; }

# run_case NAME INI SCALE [EXTRA...]: run at SCALE, compare with sim.
run_case() {
	local name=$1 ini=$2 scale=$3
	shift 3
	"$MRCEMU" run "$ini" -o "$tmp/$name" --scale "$scale" --capture "$@" \
		>"$tmp/$name.out" 2>"$tmp/$name.err"
	local rc=$?
	check "$name-exit-0" test $rc -eq 0 || sed 's/^/# /' "$tmp/$name.err" | tail -5
	check "$name-equals-sim" same_as_sim "$name" "$tmp/$name" "$tmp/sim-${ini##*/}"
	check "$name-no-violations" test "$(violations "$tmp/$name")" -eq 0
}

sim_of() { "$MRCEMU" sim "$1" -o "$tmp/sim-${1##*/}" --capture -q; }

# ---- 1. default.ini: max, then paced 10x slower than max went -------------
d=$(topo configs/default.ini default)
sim_of "$d"
run_case default-max "$d" max
eff=$(effective "$tmp/default-max.out")
check default-summary-promises grep -qE '^promises: [1-9][0-9]* frames sent' "$tmp/default-max.out"
check default-lateness-promises test "$(awk -F, 'NR > 1 { s += $11 } END { print s + 0 }' \
	"$tmp/default-max/lateness.csv")" -gt 0
# BatchScheduling: the same records; every daemon ran under SCHED_BATCH.
run_case default-batch "$d" max --set emulation.BatchScheduling=on
check default-batch-policy test "$(grep -l 'involuntary (SCHED_BATCH, nice' \
	"$tmp"/default-batch/log/*.log | wc -l)" -eq 3
# SwitchPriority (5 by default): at max the switch runs 5 nice levels below
# the NICs, which keep the launcher's; 0 leaves it theirs.
nice_of() { sed -n 's/.*involuntary ([A-Z_]*, nice \(-\?[0-9]*\)).*/\1/p' "$1"; }
nic_nice=$(nice_of "$tmp/default-max/log/h0.log")
want=$(( ${nic_nice:-0} - 5 < -20 ? -20 : ${nic_nice:-0} - 5 ))
check default-switch-priority test -n "$nic_nice" -a "$(nice_of "$tmp/default-max/log/s0.log")" = "$want"
check default-batch-switch-priority test "$(nice_of "$tmp/default-batch/log/s0.log")" = "$want"
run_case default-fair "$d" max --set emulation.SwitchPriority=0
check default-fair-switch-priority test "$(nice_of "$tmp/default-fair/log/s0.log")" = "$nic_nice"
paced=$(( ${eff:-1000} * 10 ))
note "default.ini at max: effective scale ${eff:-?}; paced run at $paced"
run_case default-paced "$d" "$paced"

# ---- 1b. an idle stretch: 5 ms with nothing to do jumps, not crawls --------
# Two messages 5 ms apart: the fabric goes idle in between, and the launcher
# grants the next event (docs/promises.md, Idle fabrics jump).  Crawling
# there one lookahead (about 1 us) per round trip would take ten thousand
# promise frames and more; the jump needs a few dozen.
gap=$tmp/gap.ini
sed "s/^name *=.*/name = ${emu}gap/; s|^file *=.*|file = gap.csv|" "$d" >"$gap"
printf 'id,at,src,dst,bytes,after\n1,0ns,h0,h1,64KiB,\n2,5ms,h1,h0,64KiB,\n' >"$tmp/gap.csv"
sim_of "$gap"
start_ns=$(date +%s%N)
run_case gap-max "$gap" max
gap_ms=$(( ($(date +%s%N) - start_ns) / 1000000 ))
gap_promises=$(sed -n 's/^promises: \([0-9]*\) frames sent.*/\1/p' "$tmp/gap-max.out")
note "5 ms idle stretch at max: ${gap_ms} ms wall, ${gap_promises:-?} promise frames, $(sed -n 's/.* \([0-9]*\) idle grants$/\1/p' "$tmp/gap-max.out") grants"
check gap-virtual-time grep -q '^virtual time: 5\.' "$tmp/gap-max.out"
check gap-few-promises test "${gap_promises:-99999}" -lt 2000
check gap-granted grep -qE ', [1-9][0-9]* idle grants$' "$tmp/gap-max.out"

# ---- 1b'. a quiet daemon's timer mid-run needs no grant ----------------------
# h2 sends and receives nothing while h0 sends h1 8 MiB at 40 Gbps (1.7 ms):
# its 1 ms statistics tick is past all it knows of T_end, and the switch
# cannot go past it without h2's promise.  The switch's end bound, in its
# promise frames, tells h2 that T_end is beyond it (docs/promises.md, No
# event after T_end): no grant mid-run (before: the fabric stalled there
# until the launcher granted the tick).
quiet=$tmp/quiet.ini
cat >"$quiet" <<EOF
[emulation]
name = ${emu}q
seed = 1
[nic h0]
ip = 10.0.0.1
[nic h1]
ip = 10.0.0.2
[nic h2]
ip = 10.0.0.3
[switch s0]
[link h0 s0]
rate = 40Gbps
delay = 1us
[link h1 s0]
rate = 40Gbps
delay = 1us
[link h2 s0]
rate = 40Gbps
delay = 1us
[workload]
file = quiet.csv
EOF
printf 'id,at,src,dst,bytes,after\n1,0ns,h0,h1,8MiB,\n' >"$tmp/quiet.csv"
sim_of "$quiet"
run_case quiet-max "$quiet" max
check quiet-tick-ran test "$(grep -c '^1000000000,h2,' "$tmp/quiet-max/mrc-transport-stats.csv")" -eq 1
check quiet-no-grant grep -qE ', 0 idle grants$' "$tmp/quiet-max.out"

# ---- 1c. --until at max: cut where sim cuts ----------------------------------
# sim --until runs every event up to that time and none after, and ends at
# the last it ran; at max the daemons run no event after it either, and the
# run ends at the last event any of them ran (docs/promises.md, One end):
# the same records and end, both exit 1 with messages open.  In the busy
# part of default.ini, and inside the idle stretch (after grants).
end_ps() { sed -n 's/.*"virtual_end_ps": \([0-9]*\).*/\1/p' "$1/summary.json"; }
until_case() {
	local name=$1 ini=$2 until=$3 src
	"$MRCEMU" sim "$ini" -o "$tmp/$name-sim" --capture -q --until "$until" >/dev/null 2>&1
	src=$?
	"$MRCEMU" run "$ini" -o "$tmp/$name" --scale max --capture --until "$until" \
		>"$tmp/$name.out" 2>"$tmp/$name.err"
	check "$name-exits-as-sim" test $? -eq $src
	check "$name-equals-sim" same_as_sim "$name" "$tmp/$name" "$tmp/$name-sim"
	check "$name-same-end" test "$(end_ps "$tmp/$name")" = "$(end_ps "$tmp/$name-sim")"
	check "$name-no-violations" test "$(violations "$tmp/$name")" -eq 0
}
until_case default-until "$d" 50us
until_case gap-until "$gap" 2500us
check gap-until-granted grep -qE ', [1-9][0-9]* idle grants$' "$tmp/gap-until.out"

# ---- 2. leaf-spine: unequal delays, trims, NACKs, a dependency --------------
ls=$(leafspine 12 ls12)
sim_of "$ls"
"$MRCEMU" sim "$ls" -o "$tmp/ls12-sim2" >"$tmp/ls12-sim2.out" 2>&1
check ls12-has-trims-and-nacks grep -qE 'retransmissions: timeout [0-9]+, nack [1-9]' \
	"$tmp/ls12-sim2.out" || sed 's/^/# /' "$tmp/ls12-sim2.out"
run_case ls12-max "$ls" max

# ---- 3. under load: two busy loops, one daemon stopped for 3 s -------------
for _ in 1 2; do (while :; do :; done) & loops+=($!); done
run_case ls12-loaded "$ls" max
"$MRCEMU" run "$d" -o "$tmp/default-stopped" --scale max --capture \
	>"$tmp/default-stopped.out" 2>"$tmp/default-stopped.err" &
run=$!
# Stopped once its control socket is there: around `start`, or running.
pid=
for _ in $(seq 500); do
	[ -S "/run/mrcemu/${emu}default/s0.ctl" ] &&
		pid=$(cat "/run/mrcemu/${emu}default/s0.pid" 2>/dev/null) && [ -n "$pid" ] && break
	sleep 0.004
done
check default-stopped-was-stopped test -n "$pid"
[ -n "$pid" ] && kill -STOP "$pid" && sleep 3 && kill -CONT "$pid"
wait $run
check default-stopped-exit-0 test $? -eq 0 ||
	sed 's/^/# /' "$tmp/default-stopped.err" | tail -5
check default-stopped-equals-sim same_as_sim default-stopped "$tmp/default-stopped" \
	"$tmp/sim-default.ini"
for p in "${loops[@]}"; do kill "$p" 2>/dev/null; done
loops=()

# ---- 3b. the other shipped topologies and a 16-host leaf-spine ------------
# Each at max and paced ten times slower than its own max went, as default.ini
# above (about 20 s in all on two cores).
for c in incast-8 leaf-spine-8 ls16; do
	if [ "$c" = ls16 ]; then i=$(leafspine 16 ls16); else i=$(topo "configs/$c.ini" "$c"); fi
	sim_of "$i"
	run_case "$c-max" "$i" max
	e=$(effective "$tmp/$c-max.out")
	run_case "$c-paced" "$i" $(( ${e:-1000} * 10 ))
done

# ---- 4. promise frames on a veth, decoded by mrc.lua -----------------------
cat >"$tmp/live.ini" <<EOF
[emulation]
name = ${emu}u
scale = 2000
[nic h0]
ip = 10.0.0.1
[nic h1]
ip = 10.0.0.2
[link h0 h1]
EOF
if "$MRCEMU" up "$tmp/live.ini" -o "$tmp/live" >"$tmp/up.out" 2>"$tmp/up.err"; then
	ip netns exec "mrc-${emu}u-h0" tcpdump -i p0 --immediate-mode -U -w "$tmp/live.pcap" \
		ether proto 0x88b5 2>"$tmp/tcpdump.err" &
	dump=$!
	for _ in $(seq 50); do grep -qs listening "$tmp/tcpdump.err" && break; sleep 0.1; done
	# An idle `up` sends no promise frame (tests/conduct.sh); a message
	# makes them flow, both ways, while it is open.
	"$MRCEMU" ctl --name "${emu}u" h0 post h1 256KiB >/dev/null
	for _ in $(seq 100); do
		"$MRCEMU" ctl --name "${emu}u" h1 status | grep -q 'receives=1/1' && break
		sleep 0.1
	done
	sleep 0.5
	kill -INT $dump
	wait $dump
	n=$(tshark -n -X lua_script:$LUA -r "$tmp/live.pcap" -Y 'mrp.promise > 0' 2>/dev/null | wc -l)
	check tcpdump-sees-promise-frames test "$n" -gt 0
	both=$(tshark -n -X lua_script:$LUA -r "$tmp/live.pcap" -T fields -e eth.src -Y mrp 2>/dev/null |
		sort -u | wc -l)
	check promise-frames-both-ways test "$both" -eq 2
	# Paced, promises move a tick (5 ms of wall time) at a time, and only
	# where wanted: not a storm.
	check idle-promises-are-few test "$n" -lt 1000
	# ... and little CPU: a generous bound (a quarter of a core) that a
	# daemon spinning, or waking at every half lookahead, would break.
	t=$(cpu_per_s "${emu}u")
	note "idle up: $t CPU ticks (1/$(getconf CLK_TCK) s) in 1 s over its daemons"
	check idle-up-little-cpu test "$t" -le $(( $(getconf CLK_TCK) / 4 ))
	"$MRCEMU" down "$tmp/live.ini" >/dev/null 2>&1
else
	fail up
	sed 's/^/# /' "$tmp/up.err"
fi

# Before `start`, a paused emulation does nothing at all.
sed "s/^name *=.*/name = ${emu}v/" "$tmp/live.ini" >"$tmp/paused.ini"
if "$MRCEMU" up "$tmp/paused.ini" -o "$tmp/paused" --paused >"$tmp/paused.out" 2>&1; then
	t=$(cpu_per_s "${emu}v")
	note "paused up: $t CPU ticks in 1 s over its daemons"
	check paused-up-no-cpu test "$t" -le $(( $(getconf CLK_TCK) / 30 ))
	"$MRCEMU" down "$tmp/paused.ini" >/dev/null 2>&1
else
	fail paused-up
	sed 's/^/# /' "$tmp/paused.out"
fi

# ---- 5. refusals --------------------------------------------------------------
sed 's/^delay *=.*/delay = 0ps/' "$d" >"$tmp/zero.ini"
"$MRCEMU" run "$tmp/zero.ini" -o "$tmp/zero" >"$tmp/zero.out" 2>"$tmp/zero.err"
check zero-delay-exit-2 test $? -eq 2
check zero-delay-one-line test "$(wc -l <"$tmp/zero.err")" -eq 1
check zero-delay-names-link grep -q 'zero.ini:[0-9]*: \[link h0 s0\]: delay 0 leaves two daemons no lookahead' "$tmp/zero.err"
sed "s/^name *=.*/name = ${emu}x/" configs/external.ini >"$tmp/ext.ini"
"$MRCEMU" run "$tmp/ext.ini" -o "$tmp/ext" --scale max >"$tmp/ext.out" 2>"$tmp/ext.err"
check max-external-exit-2 test $? -eq 2
check max-external-one-line test "$(wc -l <"$tmp/ext.err")" -eq 1
check max-external-says-why grep -q 'external endpoint, which makes no promises; give a finite --scale' "$tmp/ext.err"

exit $failed
