#!/usr/bin/env bash
# tests/conduct.sh — `up`'s conductor (docs/promises.md, Idle `up`; issue
# 8: "an idle emulation uses almost no CPU", "daemons exit when their
# launcher dies").  An `up` whose workload is done goes quiet: its daemons
# send no frame while the conductor keeps their floors near the clock; a
# `post` afterwards completes, verified, with no causality violation, and
# `down` merges it and leaves nothing behind, conductor included.  The same
# at --scale max (where the fabric rests at the end of its work), after
# `up --paused` and `ctl start`; and killing the conductor (SIGKILL) kills
# its daemons.  Needs root; as another user it is skipped, except in CI.
# Prints "ok NAME" / "not ok NAME" per check; exits non-zero if one failed.
set -uo pipefail
. "$(dirname "$0")/lib/report.sh"
BUILD=${BUILD:-build}
MRCEMU=${MRCEMU:-$BUILD/mrcemu}

need_root conduct

emu=cd$$
tmp=$(mktemp -d)
cleanup() {
	"$MRCEMU" down "$emu" >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT

# Two NICs on a switch, 400 Gbps, 1 us links, one 64 KiB message each way.
cat >"$tmp/c.ini" <<EOF
[emulation]
name  = $emu
seed  = 1
scale = 2000
[nic h0]
ip = 10.0.0.1
[nic h1]
ip = 10.0.0.2
[switch s0]
[link h0 s0]
rate = 400Gbps
delay = 1us
[link h1 s0]
rate = 400Gbps
delay = 1us
[workload]
file = c.csv
EOF
printf 'id,at,src,dst,bytes,after\n1,0ns,h0,h1,64KiB,\n2,0ns,h1,h0,64KiB,\n' >"$tmp/c.csv"

ctl() { "$MRCEMU" ctl --name "$emu" "$@"; }
field() { tr ' ' '\n' | sed -n "s/^$1=//p"; }
manifest() { awk -v k="$1" '$1 == k { print $2 }' "/run/mrcemu/$emu/manifest"; }
daemon_pids() { awk '$1 == "daemon" { print $4 }' "/run/mrcemu/$emu/manifest"; }

# Frames every daemon sent on its links so far (`status` links=TX:RX,...).
frames() {
	local n total=0
	for n in h0 h1 s0; do
		total=$((total + $(ctl $n status | field links | tr ',' '\n' |
			awk -F: '{ s += $1 } END { print s + 0 }')))
	done
	echo $total
}

# Until both NICs have finished what they send and receive (60 s at most).
settled() {
	local n
	for _ in $(seq 600); do
		local open=0
		for n in h0 h1; do
			ctl $n status | grep -Eq 'sends=([0-9]+)/\1 receives=([0-9]+)/\2' || open=1
		done
		[ $open = 0 ] && return 0
		sleep 0.1
	done
	return 1
}

# A process as PID@START (START: its start time in clock ticks, field 22 of
# /proc/PID/stat), so that a pid reused by another process after ours ended
# is not taken for ours: the machine may make thousands of processes while
# a check waits (pid_max is often 32,768).  proc_stat prints a process's
# state and START.
proc_stat() { awk '{ sub(/^.*\) /, ""); print $1, $20 }' "/proc/$1/stat" 2>/dev/null; }
proc_id() {
	local st
	st=$(proc_stat "$1")
	echo "$1@${st#* }"
}
ids() { local p; for p; do proc_id "$p"; done; }
# Whether the process ID (PID@START from proc_id) still runs, not a zombie.
alive() {
	local st
	st=$(proc_stat "${1%@*}")
	[ -n "$st" ] && [ "${st#* }" = "${1#*@}" ] && [ "${st%% *}" != Z ]
}

# Nothing of the emulation left: namespaces, run folder, daemons, conductor.
nothing_left() {
	local left="" p
	ip netns list | grep -q "^mrc-$emu-" && left="$left namespaces"
	[ -e "/run/mrcemu/$emu" ] && left="$left run-folder"
	for p in "$@"; do alive "$p" && left="$left pid-${p%@*}"; done
	[ -z "$left" ] || note "left behind:$left"
	[ -z "$left" ]
}

# up_idle LABEL ARGS...: up, workload done, quiet, a post, down.
up_idle() {
	local label=$1 pids f0 f1 fl0 fl1
	shift
	if ! "$MRCEMU" up "$tmp/c.ini" -o "$tmp/$label" "$@" >"$tmp/up.out" 2>"$tmp/up.err"; then
		fail "$label-up"
		sed 's/^/# /' "$tmp/up.err"
		return
	fi
	pids=$(ids $(manifest launcher) $(daemon_pids))
	check "$label-conductor-recorded" alive "$(proc_id "$(manifest launcher)")"
	check "$label-workload-done" settled
	sleep 0.5
	f0=$(frames)
	fl0=$(ctl s0 status | field floor_ps)
	sleep 1.5
	f1=$(frames)
	fl1=$(ctl s0 status | field floor_ps)
	# Idle: not one frame in 1.5 s (before the conductor, ~2,000 a second).
	check "$label-idle-sends-nothing" test "$f1" -eq "$f0"
	[ "$f1" -eq "$f0" ] || note "$label: $((f1 - f0)) frames while idle"
	if [ "$label" = paced ]; then
		# ... while grants keep the floor near the clock (1.5 s = 750 us).
		check "$label-floor-follows-clock" test $((fl1 - fl0)) -gt 500000000
	fi
	check "$label-post-ok" test "$(ctl h0 post h1 32KiB)" = "ok id=3"
	check "$label-post-completes" settled
	"$MRCEMU" down "$emu" >"$tmp/down.out" 2>&1
	check "$label-down-merged" grep -q '^messages: 3 of 3 completed' "$tmp/down.out"
	check "$label-no-violations" grep -q '^causality violations: 0$' "$tmp/down.out"
	# The post: h0 to h1, 32 KiB, verified, from the control socket,
	# posted after the workload's end (at the floor, near the clock).
	local row
	row=$(awk -F, '$1 == 3 && $2 == "h0"' "$tmp/$label/messages.csv")
	check "$label-post-verified" test "$(echo "$row" | cut -d, -f3,4,11,12)" = "h1,32768,true,ctl"
	check "$label-post-after-workload" test "$(echo "$row" | cut -d, -f5)" -gt \
		"$(awk -F, '$12 == "workload" && $8 > m { m = $8 } END { print m + 0 }' "$tmp/$label/messages.csv")"
	check "$label-nothing-left" nothing_left $pids
}

up_idle paced
up_idle max --scale max

# ---- up --paused, ctl start: the conductor conducts from the start ---------
if "$MRCEMU" up "$tmp/c.ini" -o "$tmp/paused" --paused >"$tmp/up.out" 2>"$tmp/up.err"; then
	sleep 0.5
	check paused-no-frames test "$(frames)" -eq 0
	start() { "$MRCEMU" ctl --name "$emu" start >/dev/null; }
	check paused-start start
	check paused-workload-done settled
	"$MRCEMU" down "$emu" >"$tmp/down.out" 2>&1
	check paused-down-merged grep -q '^messages: 2 of 2 completed' "$tmp/down.out"
else
	fail paused-up
	sed 's/^/# /' "$tmp/up.err"
fi

# ---- the daemons die with their conductor ----------------------------------
if "$MRCEMU" up "$tmp/c.ini" -o "$tmp/kill" >"$tmp/up.out" 2>"$tmp/up.err"; then
	conductor=$(proc_id "$(manifest launcher)")
	pids=$(ids $(daemon_pids))
	kill -KILL "${conductor%@*}"
	gone=0
	for _ in $(seq 100); do
		gone=1
		for p in $pids; do alive "$p" && gone=0; done
		[ $gone = 1 ] && break
		sleep 0.1
	done
	check kill-conductor-kills-daemons test $gone = 1
	"$MRCEMU" list >"$tmp/list.out" 2>&1
	check kill-listed-stale grep -q "^$emu .*daemons alive\|^$emu .*stale" "$tmp/list.out"
	"$MRCEMU" down "$emu" >/dev/null 2>&1
	check kill-nothing-left nothing_left "$conductor" $pids
else
	fail kill-up
	sed 's/^/# /' "$tmp/up.err"
fi

exit $failed
