"""Scapy layers for MRC (Multipath Reliable Connection), the RoCEv2
extension mrcemu emulates: every header of docs/protocol.md section 1, and
builders for whole frames, so users can inject crafted frames into a running
emulation (`mrcemu run` gives an [external] node a namespace and a veth).

Run with Debian's interpreter, which sees Debian's python3-scapy:

    /usr/bin/python3 -c 'import sys; sys.path.insert(0, "scripts");
        from mrc_scapy import *; mrc_data("10.0.0.1", "10.0.0.2", 0x100,
        0, 1, 0, 16, 24, conn=True).show2()'

Layers: MRC_BTH (BTH with MRC's A, C, RTX and TS flags as the separate bit
fields ackreq, conn, retx, ts), MRC_METH, MRC_TSETH, MRC_RETH, MRC_AETH,
MRC_SETH, MRC_CCSTATE, MRC_NETH, MRC_PETH.  Field names follow the
dissector's (mrc.psn is MRC_BTH.psn, mrc.sack.cack is MRC_SETH.cack ...).

Dissection: MRC_BTH is bound on UDP destination port 4791 and chooses the
next header from its opcode: data (0xC6/0xC7/0xC8/0xCA) METH, then TSETH if
the TS flag is set, then RETH, then the payload as Raw; 0xD1 AETH; 0xDC SETH
+ CC_STATE; 0xDD NETH; 0xDE PETH.  A data packet with nothing after METH
(+TSETH) is a trimmed packet (mrc_is_trimmed); a receiver itself goes by the
DSCP codepoint (docs/protocol.md section 3, dscp_role).  Bytes after the IPv4
total length (the 8-byte virtual-arrival trailer) become Scapy Padding; an
ICRC (IcrcEnabled) is not split off: it stays the last 4 bytes of the Raw
payload.

Port 4791: Scapy's own scapy.contrib.roce binds its BTH to UDP port 4791
too.  Importing this module makes MRC_BTH the layer that dissects port 4791:
if scapy.contrib.roce is already loaded its binding is removed
(split_layers); if it is loaded later, its binding comes after ours and
Scapy keeps using the first match, ours.  Call use_stock_roce() to hand the
port back to the stock layer.
"""

import ipaddress
import sys

from scapy.fields import (
    BitEnumField,
    BitField,
    ByteEnumField,
    ByteField,
    IntField,
    IPField,
    ShortField,
    SignedShortField,
    XBitField,
    XByteField,
    XIntField,
    XLongField,
    XShortField,
)
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Packet, Raw, bind_layers, split_layers

__all__ = [
    "ROCE_PORT", "OP_WRITE_FIRST", "OP_WRITE_MIDDLE", "OP_WRITE_LAST",
    "OP_WRITE_ONLY", "OP_ACK", "OP_SACK", "OP_NACK", "OP_PROBE",
    "DATA_OPCODES", "NACK_TRIMMED", "NACK_TRIMMED_LASTHOP",
    "NACK_PSN_OOR_WINDOW", "DSCP_ROLES", "ENDPOINT_QPN", "VA_MSG_STRIDE",
    "MRC_BTH", "MRC_METH", "MRC_TSETH", "MRC_RETH", "MRC_AETH", "MRC_SETH",
    "MRC_CCSTATE", "MRC_NETH", "MRC_PETH",
    "payload_pattern", "mrc_va", "data_opcode", "dscp_role",
    "mrc_is_trimmed", "mrc_data", "mrc_trimmed", "mrc_ack", "mrc_sack",
    "mrc_nack", "mrc_probe", "mrc_message", "use_stock_roce",
]

ROCE_PORT = 4791

# Opcodes: the MRC range (docs/protocol.md section 1).
OP_WRITE_FIRST, OP_WRITE_MIDDLE, OP_WRITE_LAST = 0xC6, 0xC7, 0xC8
OP_WRITE_ONLY = 0xCA
OP_ACK, OP_SACK, OP_NACK, OP_PROBE = 0xD1, 0xDC, 0xDD, 0xDE
DATA_OPCODES = (OP_WRITE_FIRST, OP_WRITE_MIDDLE, OP_WRITE_LAST, OP_WRITE_ONLY)
OPCODE_NAMES = {
    OP_WRITE_FIRST: "WRITE_FIRST",
    OP_WRITE_MIDDLE: "WRITE_MIDDLE",
    OP_WRITE_LAST: "WRITE_LAST",
    0xC9: "WRITE_LAST_IMM",
    OP_WRITE_ONLY: "WRITE_ONLY",
    0xCB: "WRITE_ONLY_IMM",
    OP_ACK: "ACK",
    OP_SACK: "SACK",
    OP_NACK: "NACK",
    OP_PROBE: "PROBE",
}

# NACK codes, UET's numbering (docs/protocol.md section 1, NACK).
NACK_TRIMMED, NACK_TRIMMED_LASTHOP, NACK_PSN_OOR_WINDOW = 0x01, 0x02, 0x0B
NACK_NAMES = {
    NACK_TRIMMED: "TRIMMED",
    NACK_TRIMMED_LASTHOP: "TRIMMED_LASTHOP",
    NACK_PSN_OOR_WINDOW: "PSN_OOR_WINDOW",
}

# SETH path feedback M (docs/protocol.md section 1, SETH byte 1).
SACK_M_NAMES = {0: "none", 1: "skip_once", 2: "always_skip"}

# Default codepoints (docs/protocol.md section 3).
DSCP_ROLES = {
    2: "trimmable",
    3: "trimmable_retx",
    1: "no_trim",
    17: "control",
    9: "trimmed",
    10: "trimmed_last_hop",
}
DSCP_TRIMMABLE, DSCP_CONTROL, DSCP_TRIMMED = 2, 17, 9
ECN_NOT_ECT, ECN_ECT0 = 0, 2

ENDPOINT_QPN = 2  # probes go to this reserved QP
PKEY = 0xFFFF
AETH_ACK = 0x1F
CC_TYPE_NSCC = 1
TTL = 64
VA_MSG_STRIDE = 0x100000000000
DEFAULT_SPORT = 256  # StartingPortOffset (docs/protocol.md section 6)


class MRC_BTH(Packet):
    """Base Transport Header, 12 bytes, with MRC's flags in byte 8."""

    name = "MRC BTH"
    fields_desc = [
        ByteEnumField("opcode", OP_WRITE_ONLY, OPCODE_NAMES),
        BitField("se", 0, 1),
        BitField("mig", 0, 1),
        BitField("padcnt", 0, 2),
        BitField("tver", 0, 4),
        XShortField("pkey", PKEY),
        BitField("fecn", 0, 1),
        BitField("becn", 0, 1),
        BitField("resv6", 0, 6),
        XBitField("dqpn", 0, 24),
        BitField("ackreq", 0, 1),  # A: ACK-request
        BitField("conn", 0, 1),  # C: DestQP is the sender's own QP
        BitField("retx", 0, 1),  # RTX: a retransmission
        BitField("ts", 0, 1),  # TS: a TSETH follows METH
        BitField("resv4", 0, 4),
        BitField("psn", 0, 24),
    ]

    def guess_payload_class(self, payload):
        op = self.opcode
        if op in DATA_OPCODES:
            return MRC_METH
        nxt = {OP_ACK: MRC_AETH, OP_SACK: MRC_SETH, OP_NACK: MRC_NETH,
               OP_PROBE: MRC_PETH}.get(op)
        return nxt if nxt else Raw

    def mysummary(self):
        return self.sprintf("MRC %opcode% dqpn=%dqpn% psn=%psn%")


class MRC_METH(Packet):
    name = "MRC METH"
    fields_desc = [ShortField("rqmsn", 0), ShortField("msn", 0)]

    def guess_payload_class(self, payload):
        bth = self.underlayer
        if isinstance(bth, MRC_BTH) and bth.ts:
            return MRC_TSETH
        return MRC_RETH


class MRC_TSETH(Packet):
    """Time the packet was built, 128 ns units, wrapping; format type 1."""

    name = "MRC TSETH"
    fields_desc = [
        XShortField("time", 0),
        BitField("resv", 0, 12),
        BitField("format", 1, 4),
    ]

    def guess_payload_class(self, payload):
        return MRC_RETH


class MRC_RETH(Packet):
    name = "MRC RETH"
    fields_desc = [
        XLongField("va", 0),
        XIntField("rkey", 0),
        IntField("dmalen", 0),
    ]

    def guess_payload_class(self, payload):
        return Raw


class MRC_AETH(Packet):
    name = "MRC AETH"
    fields_desc = [XByteField("syndrome", AETH_ACK), BitField("msn", 0, 24)]

    def guess_payload_class(self, payload):
        return Raw


class MRC_SETH(Packet):
    """SACK extended header, 28 bytes (docs/protocol.md section 1, SETH)."""

    name = "MRC SETH"
    fields_desc = [
        ByteField("resv0", 0),
        BitField("resv1a", 0, 1),
        BitEnumField("m", 0, 2, SACK_M_NAMES),
        BitField("resv1b", 0, 3),
        BitField("pr", 0, 1),
        BitField("resv1c", 0, 1),
        SignedShortField("ack_psn_offset", 0),
        XIntField("entropy_echo", 0),
        ByteField("resv8", 0),
        XBitField("responder_qpn", 0, 24),
        ByteField("resv12", 0),
        BitField("cack", 0, 24),
        BitField("cc_type", CC_TYPE_NSCC, 4),
        BitField("cc_flags", 0, 4),
        ByteField("mpr", 0),
        SignedShortField("offset", 0),  # sack_offset: base = cack + offset
        XLongField("bitmap", 0),
    ]

    def guess_payload_class(self, payload):
        return MRC_CCSTATE


class MRC_CCSTATE(Packet):
    name = "MRC CC_STATE"
    fields_desc = [
        XShortField("ts_echo", 0),
        ShortField("service_time", 0),
        XByteField("restore_pen", 0),
        BitField("rcv_bytes", 0, 24),
    ]

    def guess_payload_class(self, payload):
        return Raw


class MRC_NETH(Packet):
    """NACK extended header, 20 bytes (docs/protocol.md section 1, NACK)."""

    name = "MRC NETH"
    fields_desc = [
        ShortField("resv0", 0),
        ByteEnumField("code", NACK_TRIMMED, NACK_NAMES),
        ByteField("resv3", 0),
        XIntField("entropy_echo", 0),
        ByteField("resv8", 0),
        XBitField("responder_qpn", 0, 24),
        ByteField("resv12", 0),
        BitField("psn", 0, 24),
        BitField("cc_type", CC_TYPE_NSCC, 4),
        BitField("cc_flags", 0, 4),
        ByteField("resv17", 0),
        XShortField("ts_echo", 0),
    ]

    def guess_payload_class(self, payload):
        return Raw


class MRC_PETH(Packet):
    """Probe extended header, 16 bytes (docs/protocol.md section 1, Probe)."""

    name = "MRC PETH"
    fields_desc = [
        IntField("resv0", 0),
        ShortField("id", 0),
        ShortField("resv6", 0),
        IPField("prober", "0.0.0.0"),
        XShortField("ts", 0),
        ShortField("resv14", 0),
    ]

    def guess_payload_class(self, payload):
        return Raw


def _take_port_4791():
    """Make MRC_BTH the layer for UDP port 4791, ahead of the stock one."""
    roce = sys.modules.get("scapy.contrib.roce")
    if roce is not None:
        split_layers(UDP, roce.BTH, dport=ROCE_PORT)
    bind_layers(UDP, MRC_BTH, dport=ROCE_PORT)


def use_stock_roce():
    """Give UDP port 4791 back to scapy.contrib.roce's BTH."""
    import scapy.contrib.roce as roce

    split_layers(UDP, MRC_BTH, dport=ROCE_PORT)
    bind_layers(UDP, roce.BTH, dport=ROCE_PORT)


_take_port_4791()


def _ip32(addr):
    return int(ipaddress.IPv4Address(addr))


def payload_pattern(src_ip, msn, offset, length):
    """Bytes offset..offset+length-1 of message msn from src_ip: byte o is
    (o + 13*msn + s) mod 251, s the IPv4 source as a 32-bit number
    (docs/protocol.md section 1, Payload)."""
    base = 13 * msn + _ip32(src_ip)
    return bytes((o + base) % 251 for o in range(offset, offset + length))


def mrc_va(msg_index, offset):
    """RETH.VA = 0x1000_0000_0000 x message index (from 1) + byte offset."""
    return VA_MSG_STRIDE * msg_index + offset


def data_opcode(offset, length, total):
    """Write First/Middle/Last/Only from where the segment lies."""
    first = offset == 0
    last = offset + length >= total
    if first and last:
        return OP_WRITE_ONLY
    if first:
        return OP_WRITE_FIRST
    return OP_WRITE_LAST if last else OP_WRITE_MIDDLE


def dscp_role(dscp):
    """Role name of a codepoint at the default attributes, else 'other'."""
    return DSCP_ROLES.get(dscp, "other")


def mrc_is_trimmed(pkt):
    """True for a data packet cut to BTH + METH (+ TSETH) by a switch."""
    bth = pkt.getlayer(MRC_BTH)
    return bth is not None and bth.opcode in DATA_OPCODES and \
        not pkt.haslayer(MRC_RETH)


def _mac(ip):
    # Default MACs follow the topology's 02:00:00:00:00:NN style, NN from
    # the address's last byte (as in docs/vectors.md); pass src_mac/dst_mac to
    # address a real node.
    return "02:00:00:00:00:%02x" % (_ip32(ip) & 0xFF)


def _outer(src, dst, dscp, ecn, sport, ttl, src_mac, dst_mac):
    """Ether/IP/UDP as docs/protocol.md section 1 says: IHL 5, DF, id 0, the
    checksum computed on build, UDP to 4791 with checksum 0."""
    return (Ether(src=src_mac or _mac(src), dst=dst_mac or _mac(dst)) /
            IP(src=src, dst=dst, tos=(dscp << 2) | ecn, id=0, flags="DF",
               ttl=ttl) /
            UDP(sport=sport, dport=ROCE_PORT, chksum=0))


def _data_headers(dqpn, psn, msn, opcode, ackreq, conn, retx, ts, rqmsn):
    bth = MRC_BTH(opcode=opcode, dqpn=dqpn, psn=psn & 0xFFFFFF,
                  ackreq=int(ackreq), conn=int(conn), retx=int(retx),
                  ts=int(ts is not None))
    hdr = bth / MRC_METH(rqmsn=rqmsn, msn=msn)
    if ts is not None:
        hdr = hdr / MRC_TSETH(time=ts & 0xFFFF)
    return hdr


def mrc_data(src, dst, dqpn, psn, msn, offset, length, total, opcode=None,
             ackreq=False, conn=False, retx=False, ts=None, dscp=2,
             sport=DEFAULT_SPORT, msg_index=1, rqmsn=0, rkey=0, payload=None,
             ecn=ECN_ECT0, ttl=TTL, src_mac=None, dst_mac=None):
    """A data packet: bytes offset..offset+length-1 of a total-byte message.

    opcode defaults to First/Middle/Last/Only from the segment; ts (16-bit,
    128 ns units) adds a TSETH and the TS flag; payload defaults to the
    pattern.  conn=True means dqpn is the sender's own QP (C flag)."""
    if opcode is None:
        opcode = data_opcode(offset, length, total)
    if payload is None:
        payload = payload_pattern(src, msn, offset, length)
    pkt = (_outer(src, dst, dscp, ecn, sport, ttl, src_mac, dst_mac) /
           _data_headers(dqpn, psn, msn, opcode, ackreq, conn, retx, ts,
                         rqmsn) /
           MRC_RETH(va=mrc_va(msg_index, offset), rkey=rkey, dmalen=total))
    return pkt / Raw(payload) if payload else pkt


def mrc_trimmed(src, dst, dqpn, psn, msn, opcode=OP_WRITE_MIDDLE,
                ackreq=False, conn=False, retx=False, ts=None,
                dscp=DSCP_TRIMMED, sport=DEFAULT_SPORT, rqmsn=0,
                ecn=ECN_ECT0, ttl=TTL, src_mac=None, dst_mac=None):
    """A data packet as a trimming switch leaves it: BTH + METH (+ TSETH),
    re-marked DSCP trimmed (9) or trimmed-last-hop (10); ECN untouched."""
    return (_outer(src, dst, dscp, ecn, sport, ttl, src_mac, dst_mac) /
            _data_headers(dqpn, psn, msn, opcode, ackreq, conn, retx, ts,
                          rqmsn))


def mrc_ack(src, dst, dqpn, psn, msn, dscp=DSCP_CONTROL, sport=DEFAULT_SPORT,
            syndrome=AETH_ACK, ecn=ECN_NOT_ECT, ttl=TTL, src_mac=None,
            dst_mac=None):
    """Cumulative ACK: psn = highest PSN in order, msn = messages completed."""
    return (_outer(src, dst, dscp, ecn, sport, ttl, src_mac, dst_mac) /
            MRC_BTH(opcode=OP_ACK, dqpn=dqpn, psn=psn & 0xFFFFFF) /
            MRC_AETH(syndrome=syndrome, msn=msn))


def mrc_sack(src, dst, dqpn, cack, entropy_echo, responder_qpn, m=0, pr=False,
             ack_psn_offset=0, mpr=0, sack_offset=0, bitmap=0, ts_echo=0,
             service_time=0, restore_pen=0, rcv_bytes=0, cc_type=CC_TYPE_NSCC,
             cc_flags=0, dscp=DSCP_CONTROL, sport=DEFAULT_SPORT,
             ecn=ECN_NOT_ECT, ttl=TTL, src_mac=None, dst_mac=None):
    """SACK: cack is the cumulative PSN (BTH and SETH); rcv_bytes in
    256-byte units."""
    cack &= 0xFFFFFF
    return (_outer(src, dst, dscp, ecn, sport, ttl, src_mac, dst_mac) /
            MRC_BTH(opcode=OP_SACK, dqpn=dqpn, psn=cack) /
            MRC_SETH(m=m, pr=int(pr), ack_psn_offset=ack_psn_offset,
                     entropy_echo=entropy_echo, responder_qpn=responder_qpn,
                     cack=cack, cc_type=cc_type, cc_flags=cc_flags, mpr=mpr,
                     offset=sack_offset, bitmap=bitmap) /
            MRC_CCSTATE(ts_echo=ts_echo, service_time=service_time,
                        restore_pen=restore_pen,
                        rcv_bytes=rcv_bytes & 0xFFFFFF))


def mrc_nack(src, dst, dqpn, psn, code, entropy_echo, responder_qpn,
             ts_echo=0, cc_type=CC_TYPE_NSCC, cc_flags=0, dscp=DSCP_CONTROL,
             sport=None, ecn=ECN_NOT_ECT, ttl=TTL, src_mac=None,
             dst_mac=None):
    """NACK of psn; its UDP source port defaults to the echoed entropy
    (a NACK reflects the entropy of the packet that drew it)."""
    psn &= 0xFFFFFF
    if sport is None:
        sport = entropy_echo & 0xFFFF
    return (_outer(src, dst, dscp, ecn, sport, ttl, src_mac, dst_mac) /
            MRC_BTH(opcode=OP_NACK, dqpn=dqpn, psn=psn) /
            MRC_NETH(code=code, entropy_echo=entropy_echo,
                     responder_qpn=responder_qpn, psn=psn, cc_type=cc_type,
                     cc_flags=cc_flags, ts_echo=ts_echo))


def mrc_probe(src, dst, probe_id, ts=0, prober=None, dqpn=ENDPOINT_QPN,
              dscp=DSCP_TRIMMABLE, sport=DEFAULT_SPORT, ecn=ECN_ECT0, ttl=TTL,
              src_mac=None, dst_mac=None):
    """Probe to the endpoint QP 2, PSN 0, in the data class; the prober
    defaults to the source address."""
    return (_outer(src, dst, dscp, ecn, sport, ttl, src_mac, dst_mac) /
            MRC_BTH(opcode=OP_PROBE, dqpn=dqpn, psn=0) /
            MRC_PETH(id=probe_id, prober=prober or src, ts=ts & 0xFFFF))


def mrc_message(src, dst, dqpn, msn, total, mss=4096, psn=0, spray=1,
                sport=DEFAULT_SPORT, ackreq_last=False, **kw):
    """Every data packet of one total-byte message, MSS bytes each (one
    78-byte packet for an empty message); PSNs count up from psn and the
    source port walks spray entropy values from sport.  Further keywords go
    to mrc_data (conn, retx, ackreq, ts, dscp, msg_index ...)."""
    pkts, offset, i = [], 0, 0
    while True:
        length = min(mss, total - offset)
        args = dict(kw)
        if ackreq_last and offset + length >= total:
            args["ackreq"] = True
        pkts.append(mrc_data(src, dst, dqpn, psn + i, msn, offset, length,
                             total, sport=sport + i % spray, **args))
        offset += length
        i += 1
        if offset >= total:
            return pkts
