#!/usr/bin/env bash
# tests/scripts-help.sh — every tool in scripts/ (each executable file there)
# answers --help and -h like a man page and does nothing else: exit 0 within
# 5 s, a usage line naming the tool on stdout, -h the same text, no file of
# the repository and no network namespace made.  A bad option (--bogus)
# gets exit 2, one line on stderr ("TOOL: ... --bogus ..."), nothing on
# stdout, and makes nothing either; so do more arguments than the tool
# takes.  Needs no build and no root.
set -uo pipefail
cd "$(dirname "$0")/.."
. tests/lib/report.sh

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# What a tool could leave behind: files of the repository, ignored ones
# too (out/, build/), and network namespaces.
files() {
	if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		git status --porcelain --ignored --untracked-files=all
	else
		find . -path ./.git -prune -o -print | sort
	fi
}
netns() { ip netns list 2>/dev/null | awk '{ print $1 }' | sort; }

# run TOOL ARG...: the tool, at most 5 s (a tool that starts working
# instead of answering is stopped); its output, errors and wall ms in
# $tmp/TOOLARG.out, .err and .ms (ARG: the first).
run() {
	local t0 rc key=$1$2
	t0=$(date +%s%N)
	timeout -k 1 5 "scripts/$1" "${@:2}" >"$tmp/$key.out" 2>"$tmp/$key.err" </dev/null
	rc=$?
	echo $((($(date +%s%N) - t0) / 1000000)) >"$tmp/$key.ms"
	return $rc
}

# same_text A B RC: exit 0, and the same non-empty text as B.
same_text() { test "$3" -eq 0 -a -s "$1" && cmp -s "$1" "$2"; }
# one_line TOOL ARG WORDS: the run said "TOOL: ... WORDS ..." in one line
# of stderr, and nothing on stdout.
one_line() {
	test "$(wc -l <"$tmp/$1$2.err")" -eq 1 -a ! -s "$tmp/$1$2.out" &&
		grep -q -- "^$1: .*$3" "$tmp/$1$2.err"
}

# try TOOL ARG...: run it; fails when it changed the repository's files or
# made a namespace (the change in $tmp/diff); rc is its exit status.  Other
# work on this machine may make namespaces meanwhile: after a new one the
# tool runs again, three runs at most, and one run that makes none is
# enough.
try() {
	for _ in 1 2 3; do
		files >"$tmp/files"
		netns >"$tmp/netns"
		run "$@"
		rc=$?
		files | diff "$tmp/files" - >"$tmp/diff" || return 1
		netns | comm -13 "$tmp/netns" - >"$tmp/diff"
		[ -s "$tmp/diff" ] || return 0
	done
	return 1
}

tools=$(find scripts -maxdepth 1 -type f -perm -u+x -printf '%f\n' | sort)
check "scripts/ has tools" test -n "$tools"
for t in $tools; do
	try "$t" --help
	clean=$?
	check "$t --help exits 0" test $rc -eq 0 || note "exit $rc"
	check "$t --help takes under 5 s" test "$(cat "$tmp/$t--help.ms")" -lt 5000 ||
		note "$(cat "$tmp/$t--help.ms") ms"
	check "$t --help prints a usage line naming it" grep -qiE "usage.*$t" "$tmp/$t--help.out" ||
		sed 's/^/# /' "$tmp/$t--help.err" | head -5
	check "$t --help creates nothing" test $clean -eq 0 || sed 's/^/# /' "$tmp/diff" | head -10
	run "$t" -h
	check "$t -h prints the same text" same_text "$tmp/$t-h.out" "$tmp/$t--help.out" $?

	try "$t" --bogus
	clean=$?
	check "$t --bogus exits 2" test $rc -eq 2 || note "exit $rc"
	check "$t --bogus: one line on stderr, '$t: ... --bogus ...'" one_line "$t" --bogus --bogus ||
		sed 's/^/# /' "$tmp/$t--bogus.err" "$tmp/$t--bogus.out" | head -5
	check "$t --bogus creates nothing" test $clean -eq 0 || sed 's/^/# /' "$tmp/diff" | head -10

	# more arguments than any tool takes
	try "$t" 2 3 4 5 6
	clean=$?
	check "$t with five arguments exits 2" test $rc -eq 2 || note "exit $rc"
	check "$t with five arguments: one line on stderr" one_line "$t" 2 "" ||
		sed 's/^/# /' "$tmp/${t}2.err" "$tmp/${t}2.out" | head -5
	check "$t with five arguments creates nothing" test $clean -eq 0 ||
		sed 's/^/# /' "$tmp/diff" | head -10
done
exit $failed
