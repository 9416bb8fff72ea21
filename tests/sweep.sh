#!/usr/bin/env bash
# tests/sweep.sh — `--set SECTION.ATTRIBUTE=VALUE` (docs/cli.md, Sweeps): an
# attribute swept from the command line changes the run as editing the file
# would (MSS 2048 doubles the data packets of configs/default.ini: 2 x 1,296),
# in sim and in the daemons of run; bad overrides get one line and exit 2,
# with "did you mean" for a misspelt attribute or section.
set -uo pipefail
. "$(dirname "$0")/lib/report.sh"
BUILD=${BUILD:-build}
MRCEMU=${MRCEMU:-$BUILD/mrcemu}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

json() { sed -n "s/^  \"$2\": \\([0-9]*\\),\\{0,1\\}$/\\1/p" "$1/summary.json"; }

"$MRCEMU" sim configs/default.ini -o "$tmp/base" -q
check sim-base test "$(json "$tmp/base" data_pkts)" -eq 1296
"$MRCEMU" sim configs/default.ini -o "$tmp/mss" -q --set nic.MSS=2048
check sim-set-mss test "$(json "$tmp/mss" data_pkts)" -eq 2592
sed 's/^\[nic\]$/[nic]\nMSS = 2048/' configs/default.ini >"$tmp/edited.ini"
cp -r configs/workloads "$tmp/"
"$MRCEMU" sim "$tmp/edited.ini" -o "$tmp/edited" -q
check sim-set-equals-edited-file cmp -s "$tmp/mss/messages.csv" "$tmp/edited/messages.csv"
"$MRCEMU" sim configs/default.ini -o "$tmp/two" -q --set nic.MSS=2048 --set link.delay=2us
check sim-set-twice test "$(json "$tmp/two" fct_max_ps)" -gt "$(json "$tmp/mss" fct_max_ps)"

bad() { # NAME EXPECTED-TEXT ARGS...
	local name=$1 want=$2
	shift 2
	"$MRCEMU" sim configs/default.ini -o "$tmp/bad" -q "$@" 2>"$tmp/bad.err"
	check "$name-exit-2" test $? -eq 2
	check "$name-one-line" test "$(wc -l <"$tmp/bad.err")" -eq 1
	check "$name-says" grep -qF -- "$want" "$tmp/bad.err"
}
bad did-you-mean-attribute "--set nic.MSSS=2048: MSSS: unknown attribute of [nic] (did you mean MSS?" --set nic.MSSS=2048
bad did-you-mean-section "--set nics.MSS=2048: unknown section 'nics' (did you mean nic?" --set nics.MSS=2048
bad out-of-range "--set nic.MSS=9000: MSS: 9000 is out of range (allowed: 64..8192)" --set nic.MSS=9000
bad not-a-set "--set MSS=9000: not SECTION.ATTRIBUTE=VALUE" --set MSS=9000
bad bad-name "--set emulation.name=..: emulation name '..'" --set emulation.name=..
printf '[emulation]\nname = x\n[nic]\nCongestionControll = None\n' >"$tmp/typo.ini"
"$MRCEMU" sim "$tmp/typo.ini" -q -o "$tmp/bad" 2>"$tmp/typo.err"
check file-did-you-mean grep -qF "typo.ini:4: CongestionControll: unknown attribute of [nic] (did you mean CongestionControl?" "$tmp/typo.err"
printf '[emulation]\nname = x\n[swich s0]\n' >"$tmp/typo.ini"
"$MRCEMU" sim "$tmp/typo.ini" -q -o "$tmp/bad" 2>"$tmp/typo.err"
check file-section-did-you-mean grep -qF "typo.ini:3: [swich s0]: unknown section (did you mean switch?" "$tmp/typo.err"

# run: the daemons read the topology themselves, so they get the --set too.
if [ "$(id -u)" = 0 ] && [ -x "$BUILD/nicd" ]; then
	"$MRCEMU" run configs/default.ini --name sw$$ -o "$tmp/run" -q --set nic.MSS=2048 --scale 20000
	check run-set-exit-0 test $? -eq 0
	check run-set-mss test "$(json "$tmp/run" data_pkts)" -ge 2592
fi
exit $failed
