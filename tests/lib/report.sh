# tests/lib/report.sh — sourced by the script tests: the `ok NAME` and
# `not ok NAME` lines that tests/run-tests counts, and `failed` for the
# script's exit status.
failed=0
pass() { echo "ok $1"; }
fail() {
	echo "not ok $1"
	failed=1
}
note() { echo "# $*"; }
# check NAME COMMAND...: ok when the command succeeds; returns its verdict.
check() {
	local name=$1
	shift
	if "$@"; then
		pass "$name"
	else
		fail "$name"
		return 1
	fi
}
# tshark_isolate DIR: no user profile may change what tshark shows.
tshark_isolate() {
	export HOME=$1/home XDG_CONFIG_HOME=$1/home/.config
	mkdir -p "$HOME"
	unset WIRESHARK_CONFIG_DIR
}
# need_root NAME: namespace tests run as root; as another user they are
# skipped, except in CI (CI=true), which runs the suite as root.
need_root() {
	[ "$(id -u)" = 0 ] && return 0
	if [ "${CI:-}" = true ]; then
		echo "not ok $1-needs-root (CI runs this suite as root)"
		exit 1
	fi
	echo "# skip $1: needs root (network namespaces)"
	exit 0
}
