#!/usr/bin/env bash
# tests/switch-scenarios.sh — NICs through switches with `mrcemu sim` (issue
# 4, docs/protocol.md §9): the shipped topologies run and are deterministic; TTL
# and IPv4 checksums stay valid across three hops (tshark with pcap/mrc.lua
# decodes the --capture pcaps, trimmed frames included); bad topologies are
# refused with the file, line and reason; scripts/gen-leafspine writes a
# permutation.  Run from the repo root with env BUILD and MRCEMU.
# Prints "ok NAME" / "not ok NAME" per check; exits non-zero if one failed.
set -uo pipefail
. "$(dirname "$0")/lib/report.sh"
BUILD=${BUILD:-build}
MRCEMU=${MRCEMU:-$BUILD/mrcemu}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tshark_isolate "$tmp"

# ---- the shipped topologies ------------------------------------------------

for cfg in default leaf-spine-8 incast-8; do
	start=$(date +%s%N)
	"$MRCEMU" sim "configs/$cfg.ini" -o "$tmp/$cfg" -q 2>"$tmp/$cfg.err"
	rc=$?
	ms=$((($(date +%s%N) - start) / 1000000))
	check "configs/$cfg.ini completes (rc $rc, $ms ms)" [ $rc -eq 0 ]
	check "configs/$cfg.ini: every message verified" \
		awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "verified") v = i; next }
			$v != "true" { bad = 1 } END { exit bad || NR < 2 || !v }' \
		"$tmp/$cfg/messages.csv"
	check "configs/$cfg.ini runs in seconds" [ $ms -lt 5000 ]
	check "configs/$cfg.ini writes switch-stats.csv" [ -s "$tmp/$cfg/switch-stats.csv" ]
done
"$MRCEMU" sim configs/leaf-spine-8.ini -o "$tmp/again" -q 2>/dev/null
same=1
for f in "$tmp"/leaf-spine-8/*.csv; do
	cmp -s "$f" "$tmp/again/$(basename "$f")" || same=0
done
check "leaf-spine-8: two runs write byte-identical records" [ $same -eq 1 ]
check "incast-8: the switch trims towards h0" \
	awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		$c["node"] == "s0" && $c["peer"] == "h0" { t += $c["trimmed"] }
		END { exit !(t > 0) }' "$tmp/incast-8/switch-stats.csv"

# ---- TTL and checksums across three hops -----------------------------------

# h0 on leaf0, h2 on leaf1, two spines; 50 Gbps uplinks so leaf0 trims.
mkdir -p "$tmp/cap"
{
	printf '[emulation]\nname = cap\n'
	printf '[nic h0]\nip = 10.0.0.1\n[nic h1]\nip = 10.0.0.2\n[nic h2]\nip = 10.0.1.1\n'
	printf '[switch leaf0]\n[switch leaf1]\n[switch spine0]\n[switch spine1]\n'
	printf '[link h0 leaf0]\n[link h1 leaf0]\n[link h2 leaf1]\n'
	for l in 0 1; do for s in 0 1; do
		printf '[link leaf%d spine%d]\nrate = 50Gbps\n' $l $s
	done; done
	printf '[workload]\nfile = w.csv\n'
} >"$tmp/cap/t.ini"
printf 'id,at,src,dst,bytes,after\n1,0ns,h0,h2,256KiB,\n2,0ns,h2,h1,64KiB,\n' >"$tmp/cap/w.csv"
"$MRCEMU" sim "$tmp/cap/t.ini" -o "$tmp/cap/out" --capture -q 2>/dev/null
check "capture run completes" [ $? -eq 0 ]

# fields PCAP: src ttl checksum-status dscp ip-len udp-len malformed opcode
# trimmed (mrc.lua)
fields() {
	tshark -n -X lua_script:pcap/mrc.lua -o ip.check_checksum:TRUE -r "$1" -T fields \
		-e ip.src -e ip.ttl -e ip.checksum.status -e ip.dsfield.dscp -e ip.len \
		-e udp.length -e _ws.malformed -e mrc.opcode -e mrc.trimmed 2>/dev/null
}
fields "$tmp/cap/out/pcap/h2-0.pcap" >"$tmp/h2.txt"
fields "$tmp/cap/out/pcap/h0-0.pcap" >"$tmp/h0.txt"
check "h2's port: frames from h0 arrive with TTL 61 after three hops" \
	awk -F'\t' '$1 == "10.0.0.1" { n++; if ($2 != 61) bad = 1 } END { exit bad || n < 64 }' \
	"$tmp/h2.txt"
check "h0's port: frames from h2 arrive with TTL 61" \
	awk -F'\t' '$1 == "10.0.1.1" { n++; if ($2 != 61) bad = 1 } END { exit bad || !n }' \
	"$tmp/h0.txt"
check "trimmed frames at h2: DSCP trimmed (9), IPv4 length 44, UDP length 24" \
	awk -F'\t' '$4 == 9 { n++; if ($5 != 44 || $6 != 24 || $9 !~ /^(1|True)$/) bad = 1 }
		END { exit bad || !n }' \
	"$tmp/h2.txt"
all_good=1 frames=0
for p in "$tmp"/cap/out/pcap/*.pcap; do
	fields "$p" >"$tmp/f.txt"
	frames=$((frames + $(wc -l <"$tmp/f.txt")))
	awk -F'\t' '$3 != 1 || $7 != "" || $8 == "" { bad = 1 } END { exit bad }' "$tmp/f.txt" ||
		all_good=0
done
check "every frame of every port ($frames): IPv4 checksum good, decoded by mrc.lua" \
	[ $all_good -eq 1 -a $frames -gt 200 ]
in_order=1
for p in "$tmp"/cap/out/pcap/*.pcap; do
	tshark -r "$p" -T fields -e frame.time_epoch 2>/dev/null |
		awk 'NR > 1 && $1 < prev { bad = 1 } { prev = $1 } END { exit bad }' || in_order=0
done
check "every pcap is in time order" [ $in_order -eq 1 ]
check "TTL falls by one per switch: 63 leaving leaf0, 62 leaving a spine" \
	awk -F'\t' '$1 == "10.0.0.1" { a[FILENAME] = a[FILENAME] " " $2 }
		END { exit !(a[ARGV[1]] ~ /^( 63)+$/ && a[ARGV[2]] ~ /^( 62)+$/) }' \
	<(fields "$tmp/cap/out/pcap/spine0-0.pcap") <(fields "$tmp/cap/out/pcap/leaf1-1.pcap")

# ---- bad topologies ------------------------------------------------------------

refused() { # NAME FILE REGEX
	local out lines
	"$MRCEMU" sim "$2" -o "$tmp/bad" >"$tmp/bad.out" 2>"$tmp/bad.err"
	local rc=$?
	lines=$(wc -l <"$tmp/bad.err")
	out=$(cat "$tmp/bad.err")
	if [ $rc -eq 2 ] && [ "$lines" -eq 1 ] && [[ $out =~ $3 ]]; then
		pass "$1 refused: $out"
	else
		fail "$1 refused (rc $rc, $lines lines): $out"
	fi
}
refused "a link to an unknown node" tests/data/bad/unknown-node.ini \
	"^tests/data/bad/unknown-node.ini:10: link: unknown node 's9'"
refused "two NICs with one IP" tests/data/bad/duplicate-ip.ini \
	"^tests/data/bad/duplicate-ip.ini:7: ip: 10.0.0.1 is already h0's address"
refused "an unreachable host" tests/data/bad/unreachable.ini \
	"^tests/data/bad/unreachable.ini:11: link: h2 cannot reach h0"
refused "a NIC port with two links" tests/data/bad/nic-two-links.ini \
	"^tests/data/bad/nic-two-links.ini:12: link: NIC h0 already has its link"
refused "PfcEnabled = true" tests/data/bad/pfc.ini "^tests/data/bad/pfc.ini:12: PfcEnabled:"
sed 's/^\[switch s0\]$/[switch s0]\nDscpTrimmed = 11/' configs/default.ini >"$tmp/dscp.ini"
cp -r configs/workloads "$tmp/"
refused "a switch codepoint unlike the NICs'" "$tmp/dscp.ini" \
	"^$tmp/dscp.ini:[0-9]+: DscpTrimmed: s0's 11 differs from h0's 9"

# ---- gen-leafspine -------------------------------------------------------------

scripts/gen-leafspine 32 -o "$tmp/gen"
scripts/gen-leafspine 32 -o "$tmp/gen2"
check "gen-leafspine 32 is deterministic" \
	cmp -s "$tmp/gen/leaf-spine-32.csv" "$tmp/gen2/leaf-spine-32.csv"
check "gen-leafspine 32: 2 leaves of 16, 16 spines, 400 Gbps, 1 us" \
	awk '/^\[switch leaf/ { l++ } /^\[switch spine/ { s++ } /^\[link / { k++ }
		/^rate/ && $3 != "400Gbps" { bad = 1 } /^delay/ && $3 != "1us" { bad = 1 }
		END { exit bad || l != 2 || s != 16 || k != 32 + 32 }' "$tmp/gen/leaf-spine-32.ini"
check "gen-leafspine 32: a permutation of 4 MiB messages across leaves" \
	awk -F, 'NR > 1 { n++; src[$3]++; dst[$4]++; sub(/^h/, "", $3); sub(/^h/, "", $4)
		if ($3 == $4 || int($3 / 16) == int($4 / 16) || $5 != "4MiB") bad = 1 }
		END { for (h in src) if (src[h] != 1) bad = 1; for (h in dst) if (dst[h] != 1) bad = 1
		exit bad || n != 32 || length(src) != 32 || length(dst) != 32 }' \
	"$tmp/gen/leaf-spine-32.csv"
"$MRCEMU" sim "$tmp/gen/leaf-spine-32.ini" -o "$tmp/gen/out" -q 2>/dev/null
check "gen-leafspine 32 runs to completion" [ $? -eq 0 ]
scripts/gen-leafspine 7 -o "$tmp/gen" 2>"$tmp/gen.err"
check "gen-leafspine 7 is refused with a reason" \
	[ $? -eq 2 -a "$(grep -c 'cannot sit' "$tmp/gen.err")" -eq 1 ]

exit $failed
