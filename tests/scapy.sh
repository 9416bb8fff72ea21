#!/usr/bin/env bash
# tests/scapy.sh — the Scapy MRC layers (scripts/mrc_scapy.py) and the frame
# generator scripts/mrcgen: (a) the builders make the eight frames of
# docs/vectors.md byte for byte (hex below, copied from docs/vectors.md); (b) the
# layers dissect tests/data/vectors.pcap to docs/vectors.md's values; (c) mrcgen
# writes the packets of a 10,000-byte message as docs/protocol.md section 1 says,
# and tshark with pcap/mrc.lua agrees; (d) mrcgen refuses a bad argument in
# one line with exit status 2.  Run from the repo root.
# Prints "ok NAME" / "not ok NAME" per check; exits non-zero if one failed.
set -uo pipefail
. "$(dirname "$0")/lib/report.sh"
export PYTHONDONTWRITEBYTECODE=1
PY=/usr/bin/python3 # Debian's python3 sees Debian's python3-scapy
LUA=pcap/mrc.lua

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tshark_isolate "$tmp"

if ! $PY -c 'import scapy' 2>/dev/null; then
	fail "python3-scapy importable by $PY"
	exit 1
fi

# (a), (b) and mrcgen's pcap contents: one Python run, which prints its own
# ok / not ok lines.
check_py() {
	$PY - "$@" <<'EOF'
import math
import sys

sys.path.insert(0, "scripts")
# Load the stock RoCE layer first: ours must still own UDP port 4791.
from scapy.main import load_contrib
load_contrib("roce")
from scapy.all import IP, UDP, Ether, Raw, rdpcap, Padding
from mrc_scapy import *

failed = False


def check(name, cond, detail=""):
    global failed
    print(("ok " if cond else "not ok ") + name)
    if not cond:
        failed = True
        if detail:
            print("# " + detail)


def unhex(s):
    return bytes.fromhex("".join(s.split()))


A, B = "10.0.0.1", "10.0.0.2"
# docs/vectors.md, in its order: hex, then the builder call from its description.
VECTORS = [
    ("""02 00 00 00 00 02 02 00 00 00 00 01 08 00 45 0a
        00 4c 00 00 40 00 40 11 26 95 0a 00 00 01 0a 00
        00 02 01 00 12 b7 00 38 00 00 c6 00 ff ff 00 00
        01 00 40 00 00 00 00 00 00 01 00 00 10 00 00 00
        00 00 00 00 00 00 00 00 00 18 09 0a 0b 0c 0d 0e
        0f 10 11 12 13 14 15 16 17 18""",
     lambda: mrc_data(A, B, 0x100, 0, 1, 0, 16, 24, conn=True, dscp=2,
                      sport=256)),
    ("""02 00 00 00 00 02 02 00 00 00 00 01 08 00 45 0a
        00 44 00 00 40 00 40 11 26 9d 0a 00 00 01 0a 00
        00 02 01 01 12 b7 00 30 00 00 c8 00 ff ff 00 00
        02 00 80 00 00 01 00 00 00 01 00 00 10 00 00 00
        00 10 00 00 00 00 00 00 00 18 19 1a 1b 1c 1d 1e
        1f 20""",
     lambda: mrc_data(A, B, 0x200, 1, 1, 16, 8, 24, ackreq=True,
                      sport=257)),
    ("""02 00 00 00 00 02 02 00 00 00 00 01 08 00 45 0e
        00 48 00 00 40 00 40 11 26 95 0a 00 00 01 0a 00
        00 02 01 2c 12 b7 00 34 00 00 ca 00 ff ff 00 00
        02 00 b0 00 00 07 00 00 00 02 12 34 00 01 00 00
        20 00 00 00 00 00 00 00 00 00 00 00 00 08 16 17
        18 19 1a 1b 1c 1d""",
     lambda: mrc_data(A, B, 0x200, 7, 2, 0, 8, 8, ackreq=True, retx=True,
                      ts=0x1234, dscp=3, sport=300, msg_index=2)),
    ("""02 00 00 00 00 01 02 00 00 00 00 02 08 00 45 44
        00 2c 00 00 40 00 40 11 26 7b 0a 00 00 02 0a 00
        00 01 01 04 12 b7 00 18 00 00 d1 00 ff ff 00 00
        01 00 00 00 00 01 1f 00 00 01""",
     lambda: mrc_ack(B, A, 0x100, 1, 1, sport=260)),
    ("""02 00 00 00 00 01 02 00 00 00 00 02 08 00 45 44
        00 4c 00 00 40 00 40 11 26 5b 0a 00 00 02 0a 00
        00 01 01 05 12 b7 00 38 00 00 dc 00 ff ff 00 00
        01 00 00 00 00 05 00 20 00 03 00 00 01 05 00 00
        02 00 00 00 00 05 10 08 00 01 00 00 00 00 00 00
        00 06 00 00 00 00 00 00 00 21""",
     lambda: mrc_sack(B, A, 0x100, 5, 0x105, 0x200, m=1, ack_psn_offset=3,
                      mpr=8, sack_offset=1, bitmap=(1 << 1) | (1 << 2),
                      service_time=0, rcv_bytes=0x21, sport=261)),
    ("""02 00 00 00 00 01 02 00 00 00 00 02 08 00 45 44
        00 3c 00 00 40 00 40 11 26 6b 0a 00 00 02 0a 00
        00 01 01 06 12 b7 00 28 00 00 dd 00 ff ff 00 00
        01 00 00 00 00 06 00 00 02 00 00 00 01 06 00 00
        02 00 00 00 00 06 10 00 00 00""",
     lambda: mrc_nack(B, A, 0x100, 6, NACK_TRIMMED_LASTHOP, 0x106, 0x200,
                      sport=262)),
    ("""02 00 00 00 00 02 02 00 00 00 00 01 08 00 45 0a
        00 38 00 00 40 00 40 11 26 a9 0a 00 00 01 0a 00
        00 02 01 22 12 b7 00 24 00 00 de 00 ff ff 00 00
        00 02 00 00 00 00 00 00 00 00 00 07 00 00 0a 00
        00 01 00 42 00 00""",
     lambda: mrc_probe(A, B, 7, ts=0x42, prober=A, sport=290)),
    ("""02 00 00 00 00 02 02 00 00 00 00 01 08 00 45 2a
        00 2c 00 00 40 00 3f 11 27 95 0a 00 00 01 0a 00
        00 02 01 02 12 b7 00 18 00 00 c7 00 ff ff 00 00
        02 00 00 00 00 03 00 00 00 01""",
     lambda: mrc_trimmed(A, B, 0x200, 3, 1, opcode=OP_WRITE_MIDDLE, dscp=10,
                         ttl=63, sport=258)),
]


def part_a():
    for i, (hexs, build) in enumerate(VECTORS, 1):
        want, got = unhex(hexs), bytes(build())
        check("vector %d built byte for byte" % i, got == want,
              "want %s got %s" % (want.hex(), got.hex()))


# (b) docs/vectors.md's values, layer by layer, for each frame of vectors.pcap.
IPF = lambda dscp, ecn, ttl=64: {"dscp": dscp, "ecn": ecn, "ttl": ttl}
EXPECT = [
    {IP: IPF(2, 2), UDP: {"sport": 256, "dport": 4791, "chksum": 0},
     MRC_BTH: {"opcode": 0xC6, "dqpn": 0x100, "psn": 0, "ackreq": 0,
               "conn": 1, "retx": 0, "ts": 0, "pkey": 0xFFFF},
     MRC_METH: {"msn": 1, "rqmsn": 0},
     MRC_RETH: {"va": 0x100000000000, "rkey": 0, "dmalen": 24},
     "payload": (1, 0, 16), "trimmed": False},
    {IP: IPF(2, 2), UDP: {"sport": 257},
     MRC_BTH: {"opcode": 0xC8, "dqpn": 0x200, "psn": 1, "ackreq": 1,
               "conn": 0, "retx": 0, "ts": 0},
     MRC_METH: {"msn": 1},
     MRC_RETH: {"va": 0x100000000010, "rkey": 0, "dmalen": 24},
     "payload": (1, 16, 8), "trimmed": False},
    {IP: IPF(3, 2), UDP: {"sport": 300},
     MRC_BTH: {"opcode": 0xCA, "dqpn": 0x200, "psn": 7, "ackreq": 1,
               "conn": 0, "retx": 1, "ts": 1},
     MRC_METH: {"msn": 2}, MRC_TSETH: {"time": 0x1234, "format": 1},
     MRC_RETH: {"va": 0x200000000000, "rkey": 0, "dmalen": 8},
     "payload": (2, 0, 8), "trimmed": False},
    {IP: IPF(17, 0), UDP: {"sport": 260},
     MRC_BTH: {"opcode": 0xD1, "dqpn": 0x100, "psn": 1},
     MRC_AETH: {"syndrome": 0x1F, "msn": 1}},
    {IP: IPF(17, 0), UDP: {"sport": 261},
     MRC_BTH: {"opcode": 0xDC, "dqpn": 0x100, "psn": 5, "ackreq": 0},
     MRC_SETH: {"m": 1, "pr": 0, "ack_psn_offset": 3, "entropy_echo": 0x105,
                "responder_qpn": 0x200, "cack": 5, "cc_type": 1,
                "cc_flags": 0, "mpr": 8, "offset": 1, "bitmap": 0x6},
     MRC_CCSTATE: {"ts_echo": 0, "service_time": 0, "restore_pen": 0,
                   "rcv_bytes": 0x21}},
    {IP: IPF(17, 0), UDP: {"sport": 262},
     MRC_BTH: {"opcode": 0xDD, "dqpn": 0x100, "psn": 6},
     MRC_NETH: {"code": 0x02, "entropy_echo": 0x106, "responder_qpn": 0x200,
                "psn": 6, "cc_type": 1, "ts_echo": 0}},
    {IP: IPF(2, 2), UDP: {"sport": 290},
     MRC_BTH: {"opcode": 0xDE, "dqpn": 2, "psn": 0},
     MRC_PETH: {"id": 7, "prober": "10.0.0.1", "ts": 0x42}},
    {IP: IPF(10, 2, 63), UDP: {"sport": 258},
     MRC_BTH: {"opcode": 0xC7, "dqpn": 0x200, "psn": 3},
     MRC_METH: {"msn": 1}, "trimmed": True, "len": 44},
]


def pattern(src, msn, off, n):
    # docs/protocol.md section 1, written out again rather than calling ours.
    s = sum(int(x) << (24 - 8 * i) for i, x in enumerate(src.split(".")))
    return bytes((o + 13 * msn + s) % 251 for o in range(off, off + n))


def field(pkt, cls, name):
    layer = pkt[cls]
    if cls is IP and name in ("dscp", "ecn"):
        return layer.tos >> 2 if name == "dscp" else layer.tos & 3
    return layer.getfieldval(name)


def part_b():
    frames = rdpcap("tests/data/vectors.pcap")
    check("vectors.pcap holds 8 frames", len(frames) == 8)
    for i, (f, want) in enumerate(zip(frames, EXPECT), 1):
        bad = []
        if bytes(f) != unhex(VECTORS[i - 1][0]):
            bad.append("bytes differ from docs/vectors.md")
        for cls, fields in want.items():
            if not isinstance(cls, type):
                continue
            if not f.haslayer(cls):
                bad.append("no " + cls.__name__)
                continue
            for k, v in fields.items():
                got = field(f, cls, k)
                if got != v:
                    bad.append("%s.%s=%r want %r" % (cls.__name__, k, got, v))
        if "payload" in want:
            msn, off, n = want["payload"]
            load = f[Raw].load if f.haslayer(Raw) else b""
            if load != pattern("10.0.0.1", msn, off, n):
                bad.append("payload %s" % load.hex())
        if "trimmed" in want and mrc_is_trimmed(f) != want["trimmed"]:
            bad.append("trimmed=%s" % mrc_is_trimmed(f))
        if "len" in want and f[IP].len != want["len"]:
            bad.append("ip.len=%d" % f[IP].len)
        check("vector %d dissected to its fields" % i, not bad, "; ".join(bad))
    # A receiver goes by codepoint (docs/protocol.md section 3).
    roles = [dscp_role(f[IP].tos >> 2) for f in frames]
    check("vector codepoint roles", roles == [
        "trimmable", "trimmable", "trimmable_retx", "control", "control",
        "control", "trimmable", "trimmed_last_hop"], str(roles))


def part_c(path, total):
    frames = rdpcap(path)
    n = math.ceil(total / 4096)
    check("mrcgen message: ceil(%d/4096) = %d frames" % (total, n),
          len(frames) == n, "got %d" % len(frames))
    with open(path, "rb") as fh:
        magic = fh.read(4)
    check("mrcgen pcap is nanosecond", magic in (b"\x4d\x3c\xb2\xa1",
                                                 b"\xa1\xb2\x3c\x4d"))
    ops = [f[MRC_BTH].opcode if f.haslayer(MRC_BTH) else None
           for f in frames]
    check("mrcgen opcodes First, Middle, Last",
          ops == [0xC6, 0xC7, 0xC8], str(ops))
    bad = []
    for i, f in enumerate(frames):
        off = 4096 * i
        seg = min(4096, total - off)
        b, ip = f[MRC_BTH], f[IP]
        if len(bytes(f)) != seg + 78 - 4:
            bad.append("%d: %d bytes captured" % (i, len(bytes(f))))
        if (b.psn, b.dqpn, b.conn, b.ackreq, b.retx, b.ts) != \
                (i, 0x100, 1, 0, 0, 0):
            bad.append("%d: BTH %s" % (i, b.summary()))
        if f[MRC_METH].msn != 1:
            bad.append("%d: msn" % i)
        r = f[MRC_RETH]
        if (r.va, r.rkey, r.dmalen) != (0x100000000000 + off, 0, total):
            bad.append("%d: RETH va=%#x dmalen=%d" % (i, r.va, r.dmalen))
        if f[Raw].load != pattern("10.0.0.1", 1, off, seg):
            bad.append("%d: payload is not the pattern" % i)
        if (ip.tos, ip.ttl, int(ip.flags), ip.frag, ip.id) != \
                (2 << 2 | 2, 64, 2, 0, 0):
            bad.append("%d: IP tos=%#x ttl=%d flags=%s" %
                       (i, ip.tos, ip.ttl, ip.flags))
        # The checksum as Scapy recomputes it must be the one written.
        fresh = IP(bytes(ip))
        del fresh.chksum
        if IP(bytes(fresh)).chksum != ip.chksum:
            bad.append("%d: IPv4 checksum" % i)
        if ip.len != seg + 60 or f[UDP].len != seg + 40:
            bad.append("%d: lengths ip=%d udp=%d" % (i, ip.len, f[UDP].len))
        if (f[UDP].sport, f[UDP].dport, f[UDP].chksum) != (256, 4791, 0):
            bad.append("%d: UDP %s" % (i, f[UDP].summary()))
    check("mrcgen frames: sizes, headers, checksum, pattern payload",
          not bad, "; ".join(bad))


what = sys.argv[1]
if what == "vectors":
    part_a()
    part_b()
else:
    part_c(sys.argv[2], int(sys.argv[3]))
sys.exit(1 if failed else 0)
EOF
}

# (a) and (b)
check_py vectors || failed=1

# (c) a 10,000-byte message.
out=$tmp/msg.pcap
if scripts/mrcgen -w "$out" --src 10.0.0.1 --dst 10.0.0.2 --message 10000 \
	--msn 1 --dqpn 0x100 --conn 2>"$tmp/err"; then
	pass "mrcgen writes a 10000-byte message"
	check_py message "$out" 10000 || failed=1
	if [ -f "$LUA" ] && command -v tshark >/dev/null; then
		ts=$(tshark -n -X lua_script:$LUA -r "$out" -T fields \
			-e mrc.psn -e _ws.malformed -e _ws.expert.severity 2>/dev/null)
		psns=$(printf '%s\n' "$ts" | cut -f1 | paste -sd, -)
		if [ "$psns" = "0,1,2" ]; then
			pass "tshark mrc.lua decodes mrc.psn 0,1,2"
		else
			fail "tshark mrc.lua decodes mrc.psn 0,1,2"
			echo "# got '$psns'"
		fi
		# Malformed, or an expert item of warning (6291456) or error
		# (8388608) severity; chat and note items are harmless.
		if ! printf '%s\n' "$ts" | cut -f2-3 | tr ',\t' '\n' |
			grep -qE '^(_ws\.malformed|6291456|8388608)$'; then
			pass "tshark mrc.lua finds no malformed frame or expert warning"
		else
			fail "tshark mrc.lua finds no malformed frame or expert warning"
			printf '# %s\n' "$ts"
		fi
	else
		echo "# skipping tshark checks: no $LUA or tshark"
	fi
else
	fail "mrcgen writes a 10000-byte message"
	sed 's/^/# /' "$tmp/err"
fi

# (d) bad arguments: exit 2, one line on stderr, nothing written.
bad_arg() { # name, arguments...
	local name=$1 rc lines
	shift
	scripts/mrcgen "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	lines=$(wc -l <"$tmp/err")
	if [ $rc -eq 2 ] && [ "$lines" -eq 1 ] && [ ! -s "$tmp/out" ] &&
		[ ! -e "$tmp/bad.pcap" ]; then
		pass "mrcgen refuses $name"
	else
		fail "mrcgen refuses $name"
		echo "# rc=$rc stderr lines=$lines"
		sed 's/^/# /' "$tmp/err"
	fi
}
ok_args=(-w "$tmp/bad.pcap" --src 10.0.0.1 --dst 10.0.0.2)
bad_arg "a bad IPv4 address" -w "$tmp/bad.pcap" --src 10.0.0.300 --dst 10.0.0.2
bad_arg "an MSS out of 64..8192" "${ok_args[@]}" --mss 8193
bad_arg "a size without a number" "${ok_args[@]}" --message lots
bad_arg "a QP number over 24 bits" "${ok_args[@]}" --dqpn 0x1000000
bad_arg "an unknown option" "${ok_args[@]}" --bogus
bad_arg "no output" --src 10.0.0.1 --dst 10.0.0.2
bad_arg "both -w and -i" "${ok_args[@]}" -i veth0

exit $failed
