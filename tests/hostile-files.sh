#!/usr/bin/env bash
# tests/hostile-files.sh — output files under attack (issue 13, failure 6):
# a link planted in the output folder is never followed (O_NOFOLLOW), and
# when the disk is full every file that could not be written is named and
# the run fails.  Needs root for the small tmpfs (skipped otherwise, a
# failure when CI=true); the mount and files are removed on every exit path.
set -uo pipefail
. "$(dirname "$0")/lib/report.sh"
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
MRCEMU=${MRCEMU:-$BUILD/mrcemu}

need_root hostile-files

tmp=$(mktemp -d /tmp/mrct-files.XXXXXX)
mounted=
cleanup() {
	[ -n "$mounted" ] && umount "$tmp/full"
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A link named messages.csv in the output folder, to a file elsewhere.
mkdir -p "$tmp/out"
echo precious >"$tmp/target"
ln -s "$tmp/target" "$tmp/out/messages.csv"
"$MRCEMU" sim configs/default.ini -o "$tmp/out" -q >"$tmp/link.out" 2>&1
check planted-link-refused test $? -ne 0
check planted-link-target-untouched test "$(cat "$tmp/target")" = precious
check planted-link-named grep -q "messages.csv" "$tmp/link.out" || sed 's/^/# /' "$tmp/link.out"

# A disk that fills at once.
mkdir -p "$tmp/full"
mount -t tmpfs -o size=16k tmpfs "$tmp/full" && mounted=1
"$MRCEMU" sim configs/default.ini -o "$tmp/full/out" --capture >"$tmp/full.out" 2>&1
check disk-full-fails test $? -ne 0
for f in messages.csv mrc-transport-stats.csv pcap/h0-0.pcap; do
	check "disk-full-names-$f" grep -q "out/$f: writing failed: No space left on device" \
		"$tmp/full.out" || sed 's/^/# /' "$tmp/full.out"
done
exit $failed
