#!/usr/bin/env bash
# tests/fuzz.sh — the fuzz harnesses (tests/fuzz/) without a fuzzer, on
# every machine: each replays the seed corpus built from docs/vectors.md's
# frames, the inputs kept in tests/fuzz/corpus/HARNESS/, and a fixed set of
# mutations of them (tests/fuzz/replay.c).  The engine harness checks that
# the real transfers between the frames complete verified and that every
# packet returns to its pool; under `make check` ASan and UBSan watch all.
# `make fuzz` runs the same harnesses under libFuzzer and AFL++.
set -uo pipefail
. "$(dirname "$0")/lib/report.sh"
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
tmp=$(mktemp -d /tmp/mrct-fuzz.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

"$BUILD/tests/fuzz-seeds" "$tmp"
check seeds-written test -s "$tmp/codec/vec-1" -a -s "$tmp/engine/all"
for h in codec engine; do
	n=3000
	[ $h = engine ] && n=300
	extra=()
	[ -d tests/fuzz/corpus/$h ] && extra=(tests/fuzz/corpus/$h)
	out=$("$BUILD/tests/fuzz-$h-replay" --mutate $n "$tmp/$h" "${extra[@]}" 2>&1)
	check "replay-$h" test $? -eq 0 || sed 's/^/# /' <<<"$out" | tail -5
done
exit $failed
