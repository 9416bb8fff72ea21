#!/usr/bin/env bash
# tests/mirror.sh — a mirror port (docs/topology.md, Mirror ports) and a
# paused start.  `mrcemu up --paused` builds an emulation whose switch has
# `mirror = 0 -> tap0@NS` (NS a namespace of the test's own) and leaves the
# daemons waiting, using no CPU, while tcpdump attaches to tap0; `mrcemu
# ctl start` starts them; h0 writes 256 KiB to h1 with one data packet
# dropped.  tap0 must carry every frame of switch port 0, both ways, byte
# for byte as the switch's own capture holds it less the virtual-time
# trailer, in the same order.  Needs root (skipped otherwise, a failure
# when CI=true).  Prints "ok NAME" / "not ok NAME" per check.
set -uo pipefail
. "$(dirname "$0")/lib/report.sh"
BUILD=${BUILD:-build}
MRCEMU=${MRCEMU:-$BUILD/mrcemu}
PY=/usr/bin/python3

need_root mirror

emu=tm$$
userns=mrct$$
tmp=$(mktemp -d)
dump=
cleanup() {
	[ -n "$dump" ] && kill "$dump" 2>/dev/null && wait "$dump" 2>/dev/null
	"$MRCEMU" down "$tmp/m.ini" >/dev/null 2>&1
	ip netns del "$userns" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ip netns add "$userns" || {
	fail "namespace $userns"
	exit 1
}
cat >"$tmp/m.ini" <<INI
[emulation]
name  = $emu
scale = 2000
[nic h0]
ip = 10.0.0.1
[nic h1]
ip = 10.0.0.2
[switch s0]
mirror = 0 -> tap0@$userns
[link h0 s0]
rate = 100Gbps
drop = h0>h1 data psn=7 tx=1
[link h1 s0]
rate = 100Gbps
[workload]
file = w.csv
INI
printf 'id,at,src,dst,bytes,after\n1,0ns,h0,h1,256KiB,\n' >"$tmp/w.csv"

"$MRCEMU" up --paused "$tmp/m.ini" -o "$tmp/out" --capture >"$tmp/up.out" 2>"$tmp/up.err"
check "up --paused" test $? -eq 0 || {
	sed 's/^/# /' "$tmp/up.err"
	exit 1
}
check "up prints the port-to-peer map" \
	grep -qE "^ +s0 .* p0->h0:p0 p1->h1:p0 m0=>tap0@$userns" "$tmp/up.out" ||
	sed 's/^/# /' "$tmp/up.out"
check "tap0 is up at MTU 9000" grep -q 'mtu 9000 .*state UP' <(ip -n "$userns" link show tap0)

# Paused: the daemons wait, using no CPU (utime + stime unchanged over 1 s).
pids=$(awk '$2 == "nicd" || $2 == "switchd" { print $3 }' "$tmp/up.out")
cpu() {
	local p
	for p in $pids; do awk '{ printf "%d ", $14 + $15 }' "/proc/$p/stat"; done
}
before=$(cpu)
sleep 1
check "paused: three daemons, no CPU used" test "$(wc -w <<<"$pids")" -eq 3 -a "$(cpu)" = "$before"
check "paused: nothing sent yet" \
	grep -qw 'tx_data_pkts=0' <("$MRCEMU" ctl --topology "$tmp/m.ini" h0 stats)

ip netns exec "$userns" tcpdump -i tap0 -B 32768 --immediate-mode -U -w "$tmp/tap0.pcap" \
	2>"$tmp/tcpdump.err" &
dump=$!
for _ in $(seq 50); do grep -qs listening "$tmp/tcpdump.err" && break; sleep 0.1; done

"$MRCEMU" ctl --topology "$tmp/m.ini" start >"$tmp/start.out" 2>&1
check "ctl start" test $? -eq 0 || sed 's/^/# /' "$tmp/start.out"
stats=
for _ in $(seq 100); do
	stats=$("$MRCEMU" ctl --topology "$tmp/m.ini" h1 stats 2>/dev/null)
	case " $stats " in *" msgs_received=1 "*) break ;; esac
	sleep 0.1
done
check "the message arrives" grep -qw 'msgs_received=1' <<<"$stats"
sleep 0.5
kill -INT "$dump"
wait "$dump"
dump=
note "tcpdump: $(grep -h 'dropped by' "$tmp/tcpdump.err" | tr '\n' ' ')"
"$MRCEMU" down "$tmp/m.ini" >"$tmp/down.out" 2>&1
check "down" test $? -eq 0

# The switch's capture of port 0 (with trailers) against the mirror.
$PY - "$tmp/out/pcap/s0-0.pcap" "$tmp/tap0.pcap" <<'PY' || failed=1
import struct
import sys
from scapy.utils import RawPcapReader

def frames(path):
    return [bytes(f) for f, _ in RawPcapReader(path)]

def on_wire(f):
    """The frame less what follows its IPv4 datagram (the trailer)."""
    if len(f) >= 34 and f[12:14] == b"\x08\x00":
        return f[:max(14 + struct.unpack("!H", f[16:18])[0], 60)]
    return f

bad = 0
def check(name, ok, why=""):
    global bad
    print(("ok " if ok else "not ok ") + name)
    if not ok:
        bad = 1
        if why:
            print("# " + why)

cap = [on_wire(f) for f in frames(sys.argv[1])]
tap = frames(sys.argv[2])
check("the switch's capture of port 0 has frames both ways (%d)" % len(cap),
      len(cap) > 100 and len({f[6:12] for f in cap}) == 2)
check("the mirror carries as many frames (%d)" % len(tap), len(tap) == len(cap))
diff = next((i for i, (a, b) in enumerate(zip(cap, tap)) if a != b), None)
check("the mirror's frames are the capture's, byte for byte, in order",
      diff is None and len(tap) == len(cap), "first difference at frame %s" % diff)
check("no trailer on the mirror", not any(f[-8:-6] == b"MR" for f in tap))
sys.exit(bad)
PY
exit $failed
