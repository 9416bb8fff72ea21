#!/usr/bin/env bash
# tests/names.sh — a shared machine (docs/topology.md, Names; mrcemu down
# --help): names are checked at load, in sim too; two emulations with the
# same node names run side by side and `ctl` refuses to guess between them;
# `list` shows them; after kill -9 of a `run` launcher, `down --stale`
# merges its records, keeps its logs, says so, and leaves no namespace,
# process, socket or run folder of it, while an emulation whose launcher
# lives, and an `up` whose daemons live, survive.  Needs root.
set -uo pipefail
. "$(dirname "$0")/lib/report.sh"
BUILD=${BUILD:-build}
MRCEMU=${MRCEMU:-$BUILD/mrcemu}

tmp=$(mktemp -d)
emu=n$$
runs=()
cleanup() {
	for p in "${runs[@]}"; do kill -TERM "$p" 2>/dev/null; done
	for p in "${runs[@]}"; do wait "$p" 2>/dev/null; done
	for n in "${emu}a" "${emu}b" "${emu}k" "${emu}l"; do
		"$MRCEMU" down --name "$n" >/dev/null 2>&1
	done
	rm -rf "$tmp"
}
trap cleanup EXIT

# topology FILE NAME: two NICs on one switch, with a workload that takes a
# while at a slow scale.
topology() {
	cat >"$1" <<-EOF
		[emulation]
		name  = $2
		scale = 20000
		[nic h0]
		ip = 10.0.0.1
		[nic h1]
		ip = 10.0.0.2
		[switch s0]
		[link h0 s0]
		[link h1 s0]
		[workload]
		file = w.csv
	EOF
	printf 'id,at,src,dst,bytes,after\n1,0ns,h0,h1,256KiB,\n2,0ns,h1,h0,64KiB,\n' >"$(dirname "$1")/w.csv"
}

# ---- names are checked at load, by sim too --------------------------------
topology "$tmp/bad.ini" ..
"$MRCEMU" sim "$tmp/bad.ini" -o "$tmp/bad" -q 2>"$tmp/bad.err"
check sim-refuses-dotdot test $? -eq 2
check sim-dotdot-one-line test "$(wc -l <"$tmp/bad.err")" -eq 1
check sim-dotdot-says-why grep -q "bad.ini:2: name: emulation name '..' (allowed: 1..31 letters" "$tmp/bad.err"
check sim-dotdot-wrote-nothing test ! -e "$tmp/bad"
sed -i 's/^\[nic h0\]/[nic h-0]/; s/^\[link h0 s0\]/[link h-0 s0]/; s/^name  = ../name = ok/' "$tmp/bad.ini"
"$MRCEMU" sim "$tmp/bad.ini" -o "$tmp/bad" -q 2>"$tmp/bad.err"
check sim-refuses-dash-in-node test $? -eq 2
check sim-dash-says-why grep -q "node name 'h-0' (allowed: 1..31 letters, digits and '_'" "$tmp/bad.err"

need_root names
for d in nicd switchd; do
	[ -x "$BUILD/$d" ] || { fail "$d-built"; exit 1; }
done

topology "$tmp/bad.ini" ..
"$MRCEMU" run "$tmp/bad.ini" -o "$tmp/bad" -q 2>"$tmp/bad.err"
check run-refuses-dotdot test $? -eq 2
"$MRCEMU" up configs/default.ini --name .. -o "$tmp/bad" 2>"$tmp/bad.err"
check up-refuses-name-dotdot test $? -eq 2
check up-name-says-why grep -q -- "--name: emulation name '..'" "$tmp/bad.err"
check run-root-untouched test "$(stat -c %a /run)" = 755 -a -d /run/netns

# ---- two emulations with the same node names, side by side -----------------
topology "$tmp/x.ini" x
"$MRCEMU" up "$tmp/x.ini" --name "${emu}a" -o "$tmp/a" >"$tmp/a.out" 2>&1
check up-a test $? -eq 0 || sed 's/^/# /' "$tmp/a.out"
"$MRCEMU" up "$tmp/x.ini" --name "${emu}b" -o "$tmp/b" >"$tmp/b.out" 2>&1
check up-b-same-nodes test $? -eq 0 || sed 's/^/# /' "$tmp/b.out"
check up-b-prints-name grep -q "mrcemu ctl --name ${emu}b h0 status" "$tmp/b.out"
"$MRCEMU" up "$tmp/x.ini" --name "${emu}a" -o "$tmp/a2" >"$tmp/a2.out" 2>&1
check up-same-name-refused test $? -eq 1
check up-same-name-says-so grep -q "emulation ${emu}a is already up" "$tmp/a2.out"
check up-same-name-left-a-alone test "$(ip netns list | grep -c "^mrc-${emu}a-")" -eq 3

"$MRCEMU" ctl h0 status >"$tmp/ctl.out" 2>"$tmp/ctl.err"
check ctl-ambiguous-exit-2 test $? -eq 2
check ctl-ambiguous-names-both grep -q "node h0 is in [0-9]* emulations (.*${emu}a.*); say which with --name NAME" "$tmp/ctl.err"
check ctl-ambiguous-sent-nothing test ! -s "$tmp/ctl.out"
check ctl-name-a grep -q '^ok state=running' <<<"$("$MRCEMU" ctl --name "${emu}a" h0 status)"
check ctl-name-b grep -q '^ok state=running' <<<"$("$MRCEMU" ctl --name "${emu}b" h1 status)"

"$MRCEMU" list >"$tmp/list.out"
check list-a grep -qE "^${emu}a +3 +20000 +[0-9-]+ [0-9:]+ +[a-z_][a-z0-9_-]* +up, conductor pid [0-9]+: 3 of 3 daemons alive" "$tmp/list.out"
check list-b grep -qE "^${emu}b +3 " "$tmp/list.out"

# ---- kill -9 of a launcher: down --stale cleans it, and only it -------------
# slow NAME: a run that takes many seconds, started in the background.
slow() {
	"$MRCEMU" run "$tmp/x.ini" --name "$1" -o "$tmp/$1" --scale 2000000 -q 2>"$tmp/$1.err" &
	runs+=($!)
	for _ in $(seq 150); do
		"$MRCEMU" ctl --name "$1" h1 status 2>/dev/null | grep -q running && return
		sleep 0.1
	done
}
slow "${emu}k"
killed=${runs[-1]}
slow "${emu}l"
live=${runs[-1]}
check list-launcher-alive grep -qE "^${emu}l .* alive \(pid $live\)" <<<"$("$MRCEMU" list)"
kill -KILL "$killed"
wait "$killed" 2>/dev/null
check list-launcher-gone grep -qE "^${emu}k .* gone \(pid $killed\)" <<<"$("$MRCEMU" list)"

"$MRCEMU" down --stale >"$tmp/stale.out" 2>&1
check down-stale-exit-0 test $? -eq 0
check down-stale-took-k grep -q "^emulation ${emu}k is down" "$tmp/stale.out"
check down-stale-says-launcher-gone grep -q "its launcher (pid $killed) was gone: the records its daemons wrote are merged" "$tmp/stale.out"
check down-stale-merged test -s "$tmp/${emu}k/messages.csv" -a ! -e "$tmp/${emu}k/messages-h0.csv"
check down-stale-summary grep -q '^messages: [0-9]* of 2 completed' "$tmp/stale.out"
check down-stale-logs-kept test -d "$tmp/${emu}k/log"
check down-stale-spared-others test -z "$(grep -E "^emulation ${emu}[abl] " "$tmp/stale.out")"
check stale-no-namespace test -z "$(ip netns list | grep "^mrc-${emu}k-")"
check stale-no-process test -z "$(pgrep -f -- "--ctl /run/mrcemu/${emu}k/")"
check stale-no-run-folder test ! -e "/run/mrcemu/${emu}k"
check stale-no-veth test -z "$(ip -o link show | grep -- "${emu}k")"
check live-run-survives test "$(ip netns list | grep -c "^mrc-${emu}l-")" -eq 3 -a -e "/proc/$live"
check live-run-answers grep -q '^ok state=running' <<<"$("$MRCEMU" ctl --name "${emu}l" h0 status)"
check up-survives test "$(ip netns list | grep -c "^mrc-${emu}a-")" -eq 3

# ---- down NAME: only that emulation ------------------------------------------
"$MRCEMU" down "${emu}a" >"$tmp/down.out" 2>&1
check down-name-exit-0 test $? -eq 0
check down-name-gone test -z "$(ip netns list | grep "^mrc-${emu}a-")" -a ! -e "/run/mrcemu/${emu}a"
check down-name-spared-b test "$(ip netns list | grep -c "^mrc-${emu}b-")" -eq 3
check down-name-summary grep -q '^messages: 2 of 2 completed' "$tmp/down.out"
"$MRCEMU" down --name "${emu}a" >"$tmp/down2.out" 2>&1
check down-idempotent grep -q "nothing is running for emulation ${emu}a" "$tmp/down2.out"
"$MRCEMU" down "$tmp/x.ini" --name "${emu}b" >/dev/null 2>&1
kill -TERM "$live"
wait "$live"
check live-run-ends-cleanly test -z "$(ip netns list | grep "^mrc-${emu}l-")"
exit $failed
