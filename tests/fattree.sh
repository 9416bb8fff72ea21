#!/usr/bin/env bash
# tests/fattree.sh — scripts/gen-fattree (issue 16): a three-tier k = 4 fat
# tree of 16 hosts runs in `mrcemu sim` to completion with every message
# verified, under each workload; its routes are three-tier: every data
# frame reaches its receiver with TTL 64 less the switches it crossed
# (docs/protocol.md §9): 1 under one edge switch, 3 within a pod, 5 across
# pods (edge, aggregation, core, aggregation, edge).  Bad arguments get one
# line and exit 2.  Run from the repo root with env BUILD and MRCEMU.
set -uo pipefail
. "$(dirname "$0")/lib/report.sh"
BUILD=${BUILD:-build}
MRCEMU=${MRCEMU:-$BUILD/mrcemu}
PY=${PY:-python3}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

all_verified() { # messages.csv count
	awk -F, -v n="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "verified") v = i; next }
		$v == "true" { ok++ } END { exit !(v && ok == n && NR == n + 1) }' "$1"
}

scripts/gen-fattree 16 --k 4 -o "$tmp" --size 64KiB >/dev/null
check "gen-fattree 16 --k 4 writes the topology and its workload" \
	[ -s "$tmp/fat-tree-16.ini" -a "$(grep -c . "$tmp/fat-tree-16.csv")" -eq 17 ]
check "k = 4: 4 pods of 2 edge and 2 aggregation switches, 4 core switches" \
	[ "$(grep -c '^\[switch edge' "$tmp/fat-tree-16.ini")" -eq 8 -a \
	"$(grep -c '^\[switch agg' "$tmp/fat-tree-16.ini")" -eq 8 -a \
	"$(grep -c '^\[switch core' "$tmp/fat-tree-16.ini")" -eq 4 ]
"$MRCEMU" sim "$tmp/fat-tree-16.ini" -o "$tmp/out" --capture >"$tmp/summary" 2>&1
check "the permutation completes in sim (exit $?)" grep -q "^messages: 16 of 16 completed" \
	"$tmp/summary"
check "every message verified" all_verified "$tmp/out/messages.csv" 16

# Host i sits on edge switch i/2 of pod i/4; the receiver's own port sees
# every frame addressed to it.
"$PY" - "$tmp/fat-tree-16.csv" "$tmp/out/pcap" >"$tmp/ttl" <<'EOF'
import struct, sys
rows = [l.split(',') for l in open(sys.argv[1]).read().split('\n')[1:] if l]
ip = lambda h: bytes([10, h // 4, h % 4 // 2, h % 2 + 1])
seen = {}
for r in rows:
    s, d = int(r[2][1:]), int(r[3][1:])
    want = 63 if s // 2 == d // 2 else 61 if s // 4 == d // 4 else 59
    data = open(f"{sys.argv[2]}/h{d}-0.pcap", 'rb').read()
    e = '<' if data[:4] in (b'\xd4\xc3\xb2\xa1', b'\x4d\x3c\xb2\xa1') else '>'
    off, ttls = 24, set()
    while off + 16 <= len(data):
        incl = struct.unpack(e + 'I', data[off + 8:off + 12])[0]
        f = data[off + 16:off + 16 + incl]
        off += 16 + incl
        if f[12:14] == b'\x08\x00' and f[26:30] == ip(s) and f[30:34] == ip(d):
            ttls.add(f[22])
    seen.setdefault(64 - want, []).append(ttls == {want})
for hops in sorted(seen):
    print(hops, len(seen[hops]), all(seen[hops]))
EOF
note "switches crossed, messages, all frames at the expected TTL: $(tr '\n' ';' <"$tmp/ttl")"
check "across pods every frame crosses 5 switches (TTL 59)" grep -q "^5 [1-9][0-9]* True$" \
	"$tmp/ttl"
check "no frame arrives with another TTL than its path's" \
	awk '$3 != "True" { bad = 1 } END { exit bad || NR == 0 }' "$tmp/ttl"

for w in incast all2all; do
	scripts/gen-fattree 16 --k 4 -o "$tmp/$w" --size 16KiB --workload $w --senders 15 \
		>/dev/null
	n=$(($(grep -c . "$tmp/$w/fat-tree-16.csv") - 1))
	"$MRCEMU" sim "$tmp/$w/fat-tree-16.ini" -o "$tmp/$w/out" -q
	check "$w ($n messages) completes in sim, every message verified (exit $?)" \
		all_verified "$tmp/$w/out/messages.csv" "$n"
done
check "incast: 15 senders, all2all: 240 messages" \
	[ "$(grep -c ',h0,' "$tmp/incast/fat-tree-16.csv")" -eq 15 -a \
	"$(grep -c . "$tmp/all2all/fat-tree-16.csv")" -eq 241 ]

# partial trees: 20 hosts need k = 6 (54 hosts, 9 a pod), in 3 of its 6 pods
scripts/gen-fattree 20 -o "$tmp/p" --size 64KiB >/dev/null
check "20 hosts: the smallest k (6), only the pods in use (3), every core switch (9)" \
	[ "$(grep -c "^\[switch agg" "$tmp/p/fat-tree-20.ini")" -eq 9 -a \
	"$(grep -c '^\[switch core' "$tmp/p/fat-tree-20.ini")" -eq 9 ]
"$MRCEMU" sim "$tmp/p/fat-tree-20.ini" -o "$tmp/p/out" -q
check "the partial tree's permutation completes, every message verified (exit $?)" \
	all_verified "$tmp/p/out/messages.csv" 20

scripts/gen-fattree 16 --k 3 2>"$tmp/err"
check "an odd k is refused with exit 2 and one line" \
	[ $? -eq 2 -a "$(grep -c . "$tmp/err")" -eq 1 ]
grep -q "allowed: an even number from 2 to 64" "$tmp/err" || fail "the line says what k may be"
scripts/gen-fattree 17 --k 4 2>"$tmp/err"
check "more hosts than k^3/4 are refused with exit 2" [ $? -eq 2 ]
check "--help says what it writes, the workloads and the exit status" \
	bash -c 'scripts/gen-fattree --help | grep -q "^Exit status" &&
		scripts/gen-fattree --help | grep -q "all2all  every host sends"'
exit $failed
