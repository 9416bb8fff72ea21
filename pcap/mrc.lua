-- pcap/mrc.lua — Wireshark/tshark dissector for MRC (Multipath Reliable
-- Connection), the RoCEv2 extension mrcemu emulates.  Decodes every header of
-- docs/protocol.md section 1 (BTH with MRC's A/C/RTX/TS flags, METH, TSETH, RETH,
-- AETH, SETH, CC_STATE, NETH, PETH, trimmed packets, the optional ICRC), the
-- 12-byte virtual-arrival trailer (arrival time and the link's sequence
-- number) and the daemons' promise frames, EtherType 0x88B5 (protocol "mrp";
-- docs/promises.md).
--
-- Load:   tshark -X lua_script:pcap/mrc.lua -r capture.pcap
--         or copy to ~/.local/lib/wireshark/plugins/
-- Filter: mrc.opcode == 0xdc, mrc.retx, mrc.nack.code == 2, mrc.trimmed ...
--
-- MRC lives beside RoCEv2 on UDP port 4791: a frame whose opcode is in
-- MRC's range (transport bits 110, docs/protocol.md section 1) is decoded here,
-- any other is handed to Wireshark's own InfiniBand dissector, so plain
-- RoCEv2 decodes as it does without this file.  The ICRC is checked here
-- (Wireshark only shows it), and every QP is analysed the way Wireshark's
-- TCP analysis follows a connection (see "MRC analysis" below);
-- `tshark -z mrc,qp` prints per-QP statistics.
--
-- Nothing in a packet may raise a Lua error: every header is bounds-checked
-- and a short one is flagged with the "malformed" expert info instead
-- (docs/protocol.md section 2: bad input is named, never a crash).

local mrc = Proto("mrc", "MRC (Multipath Reliable Connection)")

local ROCE_PORT = 4791

-- Header sizes, docs/protocol.md section 1.
local BTH_LEN, METH_LEN, TSETH_LEN, RETH_LEN = 12, 4, 4, 16
local AETH_LEN, SETH_LEN, CC_LEN, NETH_LEN, PETH_LEN = 4, 28, 8, 20, 16
local ICRC_LEN, TRAILER_LEN = 4, 12

local OP_WRITE_FIRST, OP_WRITE_MIDDLE, OP_WRITE_LAST = 0xC6, 0xC7, 0xC8
local OP_WRITE_LAST_IMM, OP_WRITE_ONLY, OP_WRITE_ONLY_IMM = 0xC9, 0xCA, 0xCB
local OP_ACK, OP_SACK, OP_NACK, OP_PROBE = 0xD1, 0xDC, 0xDD, 0xDE

local opcode_names = {
	[OP_WRITE_FIRST] = "WRITE_FIRST",
	[OP_WRITE_MIDDLE] = "WRITE_MIDDLE",
	[OP_WRITE_LAST] = "WRITE_LAST",
	[OP_WRITE_LAST_IMM] = "WRITE_LAST_IMM (unsupported)",
	[OP_WRITE_ONLY] = "WRITE_ONLY",
	[OP_WRITE_ONLY_IMM] = "WRITE_ONLY_IMM (unsupported)",
	[OP_ACK] = "ACK",
	[OP_SACK] = "SACK",
	[OP_NACK] = "NACK",
	[OP_PROBE] = "PROBE",
}

-- Short names for the Info column.
local opcode_short = {
	[OP_WRITE_LAST_IMM] = "WRITE_LAST_IMM",
	[OP_WRITE_ONLY_IMM] = "WRITE_ONLY_IMM",
}

local data_opcodes = {
	[OP_WRITE_FIRST] = true, [OP_WRITE_MIDDLE] = true, [OP_WRITE_LAST] = true,
	[OP_WRITE_LAST_IMM] = true, [OP_WRITE_ONLY] = true, [OP_WRITE_ONLY_IMM] = true,
}

-- NACK codes follow UET's numbering (docs/protocol.md section 1, NACK).
local nack_names = {
	[0x01] = "TRIMMED",
	[0x02] = "TRIMMED_LASTHOP",
	[0x0B] = "PSN_OOR_WINDOW",
}

-- SETH byte 1 bits 6..5: path feedback.
local sack_m_names = {
	[0] = "none",
	[1] = "skip_once (CE-marked)",
	[2] = "always_skip",
	[3] = "reserved",
}

local tseth_formats = { [1] = "WireTimestamp" }
local cc_types = { [1] = "NSCC" }

local f = {
	-- BTH
	opcode = ProtoField.uint8("mrc.opcode", "Opcode", base.HEX, opcode_names),
	se = ProtoField.bool("mrc.se", "Solicited event", 8, nil, 0x80),
	mig = ProtoField.bool("mrc.mig", "MigReq", 8, nil, 0x40),
	padcnt = ProtoField.uint8("mrc.padcnt", "Pad count", base.DEC, nil, 0x30),
	tver = ProtoField.uint8("mrc.tver", "Transport version", base.DEC, nil, 0x0F),
	pkey = ProtoField.uint16("mrc.pkey", "P_Key", base.HEX),
	fecn = ProtoField.bool("mrc.fecn", "FECN", 8, nil, 0x80),
	becn = ProtoField.bool("mrc.becn", "BECN", 8, nil, 0x40),
	dqpn = ProtoField.uint24("mrc.dqpn", "Destination QP", base.HEX),
	ackreq = ProtoField.bool("mrc.ackreq", "A (ACK request)", 8, nil, 0x80),
	conn = ProtoField.bool("mrc.conn", "C (DestQP is the sender's QP)", 8, nil, 0x40),
	retx = ProtoField.bool("mrc.retx", "RTX (retransmission)", 8, nil, 0x20),
	ts = ProtoField.bool("mrc.ts", "TS (TSETH follows METH)", 8, nil, 0x10),
	psn = ProtoField.uint24("mrc.psn", "PSN", base.DEC),
	-- Context
	entropy = ProtoField.uint16("mrc.entropy", "Entropy value (UDP source port)", base.DEC),
	role = ProtoField.string("mrc.role", "DSCP role"),
	trimmed = ProtoField.bool("mrc.trimmed", "Trimmed"),
	-- METH
	meth_rqmsn = ProtoField.uint16("mrc.meth.rqmsn", "RQMSN", base.DEC),
	meth_msn = ProtoField.uint16("mrc.meth.msn", "MSN", base.DEC),
	-- TSETH
	tseth_time = ProtoField.uint16("mrc.tseth.time", "Build time (128 ns units)", base.HEX),
	tseth_format = ProtoField.uint16("mrc.tseth.format", "Format type", base.DEC, tseth_formats, 0x000F),
	-- RETH and payload
	reth_va = ProtoField.uint64("mrc.reth.va", "Virtual address", base.HEX),
	reth_rkey = ProtoField.uint32("mrc.reth.rkey", "R_Key", base.HEX),
	reth_dmalen = ProtoField.uint32("mrc.reth.dmalen", "DMA length", base.DEC),
	payload_len = ProtoField.uint32("mrc.payload_len", "Payload length", base.DEC),
	payload = ProtoField.bytes("mrc.payload", "Payload"),
	-- AETH
	aeth_syndrome = ProtoField.uint8("mrc.aeth.syndrome", "Syndrome", base.HEX),
	aeth_msn = ProtoField.uint24("mrc.aeth.msn", "MSN (messages completed)", base.DEC),
	-- SETH
	sack_m = ProtoField.uint8("mrc.sack.m", "M (path feedback)", base.DEC, sack_m_names, 0x60),
	sack_pr = ProtoField.bool("mrc.sack.pr", "PR (answers a probe)", 8, nil, 0x02),
	sack_ack_psn_offset = ProtoField.int16("mrc.sack.ack_psn_offset", "ACK PSN offset", base.DEC),
	sack_entropy_echo = ProtoField.uint32("mrc.sack.entropy_echo", "Entropy echo", base.HEX),
	sack_responder_qpn = ProtoField.uint24("mrc.sack.responder_qpn", "Responder QP", base.HEX),
	sack_cack = ProtoField.uint24("mrc.sack.cack", "Cumulative PSN", base.DEC),
	sack_cc_type = ProtoField.uint8("mrc.sack.cc_type", "CC type", base.DEC, cc_types, 0xF0),
	sack_cc_flags = ProtoField.uint8("mrc.sack.cc_flags", "CC flags", base.HEX, nil, 0x0F),
	sack_mpr = ProtoField.uint8("mrc.sack.mpr", "MaxPSNRange (128-packet units)", base.DEC),
	sack_offset = ProtoField.int16("mrc.sack.offset", "SACK offset", base.DEC),
	sack_bitmap = ProtoField.uint64("mrc.sack.bitmap", "Bitmap", base.HEX),
	sack_base = ProtoField.uint24("mrc.sack.base", "Bitmap base PSN", base.DEC),
	sack_drawn_by = ProtoField.uint24("mrc.sack.drawn_by", "Drawn by PSN", base.DEC),
	-- CC_STATE
	cc_ts_echo = ProtoField.uint16("mrc.cc.ts_echo", "Echoed TSETH time", base.HEX),
	cc_service_time = ProtoField.uint16("mrc.cc.service_time", "Service time (128 ns units)", base.DEC),
	cc_restore_pen = ProtoField.uint8("mrc.cc.restore_pen", "restore_cwnd / rcv_cwnd_pen", base.HEX),
	cc_rcv_bytes = ProtoField.uint24("mrc.cc.rcv_bytes", "Received bytes (256-byte units)", base.HEX),
	-- NETH
	nack_code = ProtoField.uint8("mrc.nack.code", "NACK code", base.HEX, nack_names),
	nack_entropy_echo = ProtoField.uint32("mrc.nack.entropy_echo", "Entropy echo", base.HEX),
	nack_responder_qpn = ProtoField.uint24("mrc.nack.responder_qpn", "Responder QP", base.HEX),
	nack_psn = ProtoField.uint24("mrc.nack.psn", "NACKed PSN", base.DEC),
	nack_cc = ProtoField.uint8("mrc.nack.cc", "CC type / flags", base.HEX),
	nack_ts_echo = ProtoField.uint16("mrc.nack.ts_echo", "Echoed TSETH time", base.HEX),
	-- PETH
	probe_id = ProtoField.uint16("mrc.probe.id", "Probe id", base.DEC),
	probe_prober = ProtoField.ipv4("mrc.probe.prober", "Prober"),
	probe_ts = ProtoField.uint16("mrc.probe.ts", "Timestamp (128 ns units)", base.HEX),
	-- ICRC, leftovers, trailer
	icrc = ProtoField.uint32("mrc.icrc", "ICRC", base.HEX),
	icrc_status = ProtoField.string("mrc.icrc.status", "ICRC status"),
	icrc_computed = ProtoField.uint32("mrc.icrc.computed", "ICRC computed", base.HEX),
	extra = ProtoField.bytes("mrc.extra", "Unexpected bytes"),
	trailer_magic = ProtoField.string("mrc.trailer.magic", "Trailer magic"),
	trailer_stamp = ProtoField.uint64("mrc.trailer.stamp", "Virtual arrival time (ps)", base.DEC),
	-- Analysis (see "MRC analysis")
	an_qp = ProtoField.uint32("mrc.analysis.qp", "QP index", base.DEC),
	an_requester = ProtoField.string("mrc.analysis.requester", "Requester (IP, QP)"),
	an_retx = ProtoField.bool("mrc.analysis.retransmission", "Retransmission"),
	an_cause = ProtoField.string("mrc.analysis.rtx_cause", "Retransmission cause"),
	an_prev = ProtoField.framenum("mrc.analysis.previous_frame", "Previous transmission in frame"),
	an_dup = ProtoField.framenum("mrc.analysis.duplicate_of", "Duplicate of frame"),
	an_gap_first = ProtoField.uint24("mrc.analysis.gap_first", "First PSN not seen", base.DEC),
	an_gap_count = ProtoField.uint32("mrc.analysis.gap_count", "PSNs not seen before this one", base.DEC),
	an_ooo = ProtoField.bool("mrc.analysis.out_of_order", "Out of order"),
	an_answers = ProtoField.framenum("mrc.analysis.answers", "Answers the data packet in frame",
		base.NONE, frametype.ACK),
	an_answered_by = ProtoField.framenum("mrc.analysis.answered_by",
		"Answered (SACK, ACK or NACK) in frame", base.NONE, frametype.RESPONSE),
	an_rtt = ProtoField.relative_time("mrc.analysis.rtt", "RTT to the data packet"),
	trailer_seq = ProtoField.uint32("mrc.trailer.seq", "Link sequence number", base.DEC),
}

local field_list = {}
for _, v in pairs(f) do
	field_list[#field_list + 1] = v
end
mrc.fields = field_list

local ex = {
	malformed = ProtoExpert.new("mrc.malformed", "Malformed MRC packet",
		expert.group.MALFORMED, expert.severity.ERROR),
	unsupported = ProtoExpert.new("mrc.unsupported",
		"Write with Immediate: MRC defines it but this NIC never sends it; receivers drop it",
		expert.group.PROTOCOL, expert.severity.WARN),
	unknown = ProtoExpert.new("mrc.unknown_opcode", "Opcode outside MRC's set",
		expert.group.PROTOCOL, expert.severity.WARN),
	trimmed = ProtoExpert.new("mrc.trimmed.note", "Trimmed by a switch: payload removed",
		expert.group.SEQUENCE, expert.severity.NOTE),
	extra = ProtoExpert.new("mrc.extra.warn", "Bytes after the MRC headers",
		expert.group.PROTOCOL, expert.severity.WARN),
	short = ProtoExpert.new("mrc.cut_short", "Captured frame shorter than on the wire",
		expert.group.UNDECODED, expert.severity.NOTE),
	internal = ProtoExpert.new("mrc.internal_error", "Bug in mrc.lua",
		expert.group.UNDECODED, expert.severity.ERROR),
	icrc_bad = ProtoExpert.new("mrc.icrc.bad", "Bad ICRC",
		expert.group.CHECKSUM, expert.severity.ERROR),
	icrc_undeclared = ProtoExpert.new("mrc.icrc.undeclared",
		"Frame ends with a valid ICRC: set the ICRC preference (mrc.icrc:TRUE)",
		expert.group.PROTOCOL, expert.severity.WARN),
	-- Analysis (see "MRC analysis")
	retx = ProtoExpert.new("mrc.analysis.retransmission.expert", "Retransmission",
		expert.group.SEQUENCE, expert.severity.NOTE),
	rerequest = ProtoExpert.new("mrc.analysis.rerequest",
		"Completion re-request: the last packet again, already acknowledged",
		expert.group.SEQUENCE, expert.severity.NOTE),
	dup = ProtoExpert.new("mrc.analysis.duplicate", "Duplicate packet (no RTX flag)",
		expert.group.SEQUENCE, expert.severity.WARN),
	gap = ProtoExpert.new("mrc.analysis.gap", "Previous PSNs not seen (lost or not captured)",
		expert.group.SEQUENCE, expert.severity.WARN),
	ooo = ProtoExpert.new("mrc.analysis.out_of_order.expert", "Out-of-order packet",
		expert.group.SEQUENCE, expert.severity.NOTE),
}
mrc.experts = { ex.malformed, ex.unsupported, ex.unknown, ex.trimmed, ex.extra, ex.short,
	ex.internal, ex.icrc_bad, ex.icrc_undeclared, ex.retx, ex.rerequest, ex.dup, ex.gap,
	ex.ooo }

-- DSCP role codepoints (docs/protocol.md section 3); they must match the NIC's
-- and switches' attributes of the capture, hence preferences.
mrc.prefs.dscp_trimmable = Pref.uint("DSCP trimmable", 2, "DscpTrimmable")
mrc.prefs.dscp_trimmable_retx = Pref.uint("DSCP trimmable retransmission", 3, "DscpTrimmableRetx")
mrc.prefs.dscp_no_trim = Pref.uint("DSCP no-trim", 1, "DscpNoTrim")
mrc.prefs.dscp_control = Pref.uint("DSCP control", 17, "DscpControl")
mrc.prefs.dscp_trimmed = Pref.uint("DSCP trimmed", 9, "DscpTrimmed")
mrc.prefs.dscp_trimmed_last_hop = Pref.uint("DSCP trimmed on the last hop", 10, "DscpTrimmedLastHop")
mrc.prefs.icrc = Pref.bool("ICRC present", false,
	"IcrcEnabled: the last 4 bytes of the UDP payload are the RoCEv2 ICRC")
mrc.prefs.entropy_start = Pref.uint("First entropy port", 256,
	"StartingPortOffset: source ports used as entropy values")
mrc.prefs.entropy_count = Pref.uint("Entropy count", 128, "EntropyCount")
mrc.prefs.sack_loss_min_retx = Pref.uint("SACK loss reorder allowance", 512,
	"SACKLossMinRetxPkts: a retransmission counts as caused by a SACK gap when a SACK "
	.. "listed a PSN more than this beyond it")

local f_dscp = Field.new("ip.dsfield.dscp")
local f_dscp6 = Field.new("ipv6.tclass.dscp")

-- The innermost DSCP of this packet, or nil.
local function packet_dscp()
	local all = { f_dscp() }
	if #all == 0 then
		all = { f_dscp6() }
	end
	if #all == 0 then
		return nil
	end
	return all[#all].value
end

local function dscp_role(dscp)
	local p = mrc.prefs
	if dscp == nil then
		return "other"
	elseif dscp == p.dscp_trimmed then
		return "trimmed"
	elseif dscp == p.dscp_trimmed_last_hop then
		return "trimmed_last_hop"
	elseif dscp == p.dscp_trimmable then
		return "trimmable"
	elseif dscp == p.dscp_trimmable_retx then
		return "trimmable_retx"
	elseif dscp == p.dscp_no_trim then
		return "no_trim"
	elseif dscp == p.dscp_control then
		return "control"
	end
	return "other"
end

-- Parsing state of one packet: cursor, usable end (reported length, less
-- any ICRC), the tree, the Info fragments and the facts the analysis uses.
local function cursor(tvb, root)
	return { tvb = tvb, tree = root, root = root, pos = 0,
		stop = tvb:reported_len(), info = {}, bad = false, pkt = {} }
end

-- True when `len` bytes at the cursor are inside the packet and captured;
-- otherwise flags the header as truncated (once) and returns false.
local function have(c, len, what)
	if c.pos + len <= c.stop and c.pos + len <= c.tvb:len() then
		return true
	end
	if not c.bad then
		local avail = math.max(math.min(c.stop, c.tvb:len()) - c.pos, 0)
		local msg = string.format("%s truncated: %d of %d bytes", what, avail, len)
		if c.pos + len <= c.stop then
			-- The packet was whole on the wire; the capture kept less.
			c.root:add_proto_expert_info(ex.short, msg)
			c.info[#c.info + 1] = " [CUT SHORT]"
		else
			c.root:add_proto_expert_info(ex.malformed, msg)
			c.info[#c.info + 1] = " [MALFORMED]"
		end
		c.bad = true
	end
	return false
end

local function range(c, len)
	return c.tvb(c.pos, len)
end

local function add_info(c, fmt, ...)
	c.info[#c.info + 1] = string.format(fmt, ...)
end

local function dissect_bth(c)
	local r = range(c, BTH_LEN)
	local t = c.tree:add(r, "Base Transport Header")
	t:add(f.opcode, r(0, 1))
	t:add(f.se, r(1, 1))
	t:add(f.mig, r(1, 1))
	t:add(f.padcnt, r(1, 1))
	t:add(f.tver, r(1, 1))
	t:add(f.pkey, r(2, 2))
	t:add(f.fecn, r(4, 1))
	t:add(f.becn, r(4, 1))
	t:add(f.dqpn, r(5, 3))
	t:add(f.ackreq, r(8, 1))
	t:add(f.conn, r(8, 1))
	t:add(f.retx, r(8, 1))
	t:add(f.ts, r(8, 1))
	t:add(f.psn, r(9, 3))
	c.pos = c.pos + BTH_LEN
	return {
		opcode = r(0, 1):uint(),
		dqpn = r(5, 3):uint(),
		a = r(8, 1):bitfield(0, 1) == 1,
		c = r(8, 1):bitfield(1, 1) == 1,
		rtx = r(8, 1):bitfield(2, 1) == 1,
		ts = r(8, 1):bitfield(3, 1) == 1,
		psn = r(9, 3):uint(),
	}
end

local function bth_flags(bth)
	local s = ""
	if bth.a then s = s .. " A" end
	if bth.rtx then s = s .. " RTX" end
	if bth.c then s = s .. " C" end
	if bth.ts then s = s .. " TS" end
	return s
end

-- METH, optional TSETH, then RETH and payload unless the packet was trimmed
-- (docs/protocol.md section 1, "Trimmed packet": recognised by codepoint; a data
-- packet with no room left for RETH is a trimmed one too).
local function dissect_data(c, bth, role)
	if not have(c, METH_LEN, "METH") then
		return false
	end
	local r = range(c, METH_LEN)
	local t = c.tree:add(r, "MRC Extended Transport Header (METH)")
	t:add(f.meth_rqmsn, r(0, 2))
	t:add(f.meth_msn, r(2, 2))
	c.pkt.msn = r(2, 2):uint()
	c.pos = c.pos + METH_LEN
	if bth.ts then
		if not have(c, TSETH_LEN, "TSETH") then
			return false
		end
		r = range(c, TSETH_LEN)
		t = c.tree:add(r, "Timestamp Extended Transport Header (TSETH)")
		t:add(f.tseth_time, r(0, 2))
		t:add(f.tseth_format, r(2, 2))
		c.pos = c.pos + TSETH_LEN
	end
	local left = c.stop - c.pos
	local trimmed = role == "trimmed" or role == "trimmed_last_hop" or left < RETH_LEN
	if trimmed then
		return true, left
	end
	if not have(c, RETH_LEN, "RETH") then
		return false
	end
	r = range(c, RETH_LEN)
	t = c.tree:add(r, "RDMA Extended Transport Header (RETH)")
	t:add(f.reth_va, r(0, 8))
	t:add(f.reth_rkey, r(8, 4))
	t:add(f.reth_dmalen, r(12, 4))
	c.pos = c.pos + RETH_LEN
	local plen = c.stop - c.pos
	c.tree:add(f.payload_len, plen):set_generated()
	c.pkt.payload = plen
	if plen > 0 and c.pos + plen <= c.tvb:len() then
		c.tree:add(f.payload, range(c, plen))
	end
	c.pos = c.stop
	add_info(c, " len=%d", plen)
	return false, 0
end

local function dissect_aeth(c)
	if not have(c, AETH_LEN, "AETH") then
		return
	end
	local r = range(c, AETH_LEN)
	local t = c.tree:add(r, "ACK Extended Transport Header (AETH)")
	t:add(f.aeth_syndrome, r(0, 1))
	t:add(f.aeth_msn, r(1, 3))
	c.pos = c.pos + AETH_LEN
	c.pkt.msn = r(1, 3):uint()
	add_info(c, " msn=%d", c.pkt.msn)
end

local function dissect_seth(c)
	if not have(c, SETH_LEN, "SETH") then
		return
	end
	local r = range(c, SETH_LEN)
	local t = c.tree:add(r, "SACK Extended Transport Header (SETH)")
	t:add(f.sack_m, r(1, 1))
	t:add(f.sack_pr, r(1, 1))
	t:add(f.sack_ack_psn_offset, r(2, 2))
	t:add(f.sack_entropy_echo, r(4, 4))
	t:add(f.sack_responder_qpn, r(9, 3))
	t:add(f.sack_cack, r(13, 3))
	t:add(f.sack_cc_type, r(16, 1))
	t:add(f.sack_cc_flags, r(16, 1))
	t:add(f.sack_mpr, r(17, 1))
	t:add(f.sack_offset, r(18, 2))
	t:add(f.sack_bitmap, r(20, 8))
	local cack = r(13, 3):uint()
	local ack_off, sack_off = r(2, 2):int(), r(18, 2):int()
	local pr = r(1, 1):bitfield(6, 1) == 1
	-- PSN arithmetic is modulo 2^24 (docs/protocol.md section 1).
	t:add(f.sack_base, (cack + sack_off) % 0x1000000):set_generated()
	if not pr then
		t:add(f.sack_drawn_by, (cack + ack_off) % 0x1000000):set_generated()
	end
	c.pos = c.pos + SETH_LEN
	c.pkt.sack = { cack = cack, drawn_by = not pr and (cack + ack_off) % 0x1000000 or nil,
		responder = r(9, 3):uint(), base = (cack + sack_off) % 0x1000000,
		hi = r(20, 4):uint(), lo = r(24, 4):uint() }
	add_info(c, " cack=%d bitmap=0x%s", cack, r(20, 8):uint64():tohex(16))
	if pr then
		add_info(c, " PR id=%d", ack_off % 0x10000)
	end
	local m = r(1, 1):bitfield(1, 2)
	if m ~= 0 then
		add_info(c, " M=%d", m)
	end
end

local function dissect_cc_state(c)
	if not have(c, CC_LEN, "CC_STATE") then
		return
	end
	local r = range(c, CC_LEN)
	local t = c.tree:add(r, "Congestion control state (CC_STATE)")
	t:add(f.cc_ts_echo, r(0, 2))
	t:add(f.cc_service_time, r(2, 2))
	t:add(f.cc_restore_pen, r(4, 1))
	t:add(f.cc_rcv_bytes, r(5, 3))
	c.pos = c.pos + CC_LEN
end

local function dissect_neth(c)
	if not have(c, NETH_LEN, "NETH") then
		return
	end
	local r = range(c, NETH_LEN)
	local t = c.tree:add(r, "NACK Extended Transport Header (NETH)")
	t:add(f.nack_code, r(2, 1))
	t:add(f.nack_entropy_echo, r(4, 4))
	t:add(f.nack_responder_qpn, r(9, 3))
	t:add(f.nack_psn, r(13, 3))
	t:add(f.nack_cc, r(16, 1))
	t:add(f.nack_ts_echo, r(18, 2))
	c.pos = c.pos + NETH_LEN
	local code = r(2, 1):uint()
	c.pkt.nack = { psn = r(13, 3):uint(), responder = r(9, 3):uint(), code = code }
	add_info(c, " %s psn=%d", nack_names[code] or string.format("code=0x%02x", code),
		r(13, 3):uint())
end

local function dissect_peth(c)
	if not have(c, PETH_LEN, "PETH") then
		return
	end
	local r = range(c, PETH_LEN)
	local t = c.tree:add(r, "Probe Extended Transport Header (PETH)")
	t:add(f.probe_id, r(4, 2))
	t:add(f.probe_prober, r(8, 4))
	t:add(f.probe_ts, r(12, 2))
	c.pos = c.pos + PETH_LEN
	add_info(c, " id=%d prober=%s", r(4, 2):uint(), tostring(r(8, 4):ipv4()))
end

-- Bytes the opcode needs after BTH, before any payload: used to tell
-- whether a trailing ICRC fits (a trimmed data packet keeps none).
local function min_after_bth(opcode, ts)
	if data_opcodes[opcode] then
		return METH_LEN + (ts and TSETH_LEN or 0)
	end
	return ({ [OP_ACK] = AETH_LEN, [OP_SACK] = SETH_LEN + CC_LEN,
		[OP_NACK] = NETH_LEN, [OP_PROBE] = PETH_LEN })[opcode] or 0
end

-- ICRC ---------------------------------------------------------------------
-- CRC-32 as Linux Soft-RoCE computes the RoCEv2 ICRC (rxe_icrc.c), the way
-- the codec does (emulator/core/wire.c, wire_icrc): reflected polynomial
-- 0xEDB88320 seeded with all ones over 8 bytes of 0xFF for the absent LRH,
-- the IPv4 header with TOS, TTL and checksum set to ones, the UDP header
-- with its checksum set to ones, the BTH with byte 4 set to ones, then the
-- rest of the datagram; inverted, stored least significant byte first.
local crc_table = {}
for i = 0, 255 do
	local v = i
	for _ = 1, 8 do
		v = bit32.band(v, 1) == 1 and bit32.bxor(bit32.rshift(v, 1), 0xEDB88320)
			or bit32.rshift(v, 1)
	end
	crc_table[i] = v
end

local function crc32(crc, s)
	local band, bxor, rshift = bit32.band, bit32.bxor, bit32.rshift
	for i = 1, #s do
		crc = bxor(crc_table[band(bxor(crc, s:byte(i)), 0xFF)], rshift(crc, 8))
	end
	return crc
end

local f_ip, f_udp = Field.new("ip"), Field.new("udp")

-- The ICRC the datagram carrying `tvb` (the UDP payload, ICRC at `at`)
-- should end with, or nil when the IPv4 or UDP header is not at hand.
local function icrc_compute(tvb, at)
	local ips, udps = { f_ip() }, { f_udp() }
	if #ips == 0 or #udps == 0 or at < BTH_LEN then
		return nil
	end
	local ip, udp, body = ips[#ips].range:raw(), udps[#udps].range:raw(), tvb:raw(0, at)
	if #ip < 20 or #udp ~= 8 then
		return nil
	end
	local ones = "\255\255"
	local crc = crc32(0xFFFFFFFF, ones:rep(4))
	crc = crc32(crc, ip:sub(1, 1) .. "\255" .. ip:sub(3, 8) .. "\255" .. ip:sub(10, 10) .. ones
		.. ip:sub(13))
	crc = crc32(crc, udp:sub(1, 6) .. ones)
	crc = crc32(crc, body:sub(1, 4) .. "\255" .. body:sub(6))
	return bit32.bnot(crc)
end

-- Without the preference, small frames are checked for an ICRC all the
-- same (a capture's SACKs and ACKs tell soon enough), and once one has been
-- found every frame is; the verdict of each frame is kept so that it reads
-- the same on every pass.
local ICRC_PROBE_MAX = 128
local icrc_found, icrc_verdict = false, {}

-- IcrcEnabled appends 4 bytes to the UDP payload (docs/protocol.md section 1),
-- except to a trimmed data packet (cut with the payload).  Returns where
-- the ICRC is, or nil, and its status: "good", "bad", "unchecked" (not
-- captured whole) or "undeclared" (found without the preference).
local function take_icrc(c, bth, pinfo)
	local need = BTH_LEN + min_after_bth(bth.opcode, bth.ts) + ICRC_LEN
	if c.stop < need then
		return nil
	end
	local at, whole = c.stop - ICRC_LEN, c.stop <= c.tvb:len()
	local status
	if mrc.prefs.icrc then
		local want = whole and icrc_compute(c.tvb, at)
		status = not want and "unchecked"
			or (want == c.tvb(at, ICRC_LEN):le_uint() and "good" or "bad")
	else
		local verdict = icrc_verdict[pinfo.number]
		if verdict == nil then
			verdict = whole and (c.stop <= ICRC_PROBE_MAX or icrc_found)
				and icrc_compute(c.tvb, at) == c.tvb(at, ICRC_LEN):le_uint()
			icrc_verdict[pinfo.number] = verdict
			icrc_found = icrc_found or verdict
		end
		if not verdict then
			return nil
		end
		status = "undeclared"
	end
	c.stop = at
	return at, status
end

local function show_icrc(c, at, status)
	if at + ICRC_LEN > c.tvb:len() then
		return
	end
	local item = c.root:add(f.icrc, c.tvb(at, ICRC_LEN))
	c.root:add(f.icrc_status, status):set_generated()
	if status == "bad" then
		local want = icrc_compute(c.tvb, at)
		c.root:add(f.icrc_computed, want):set_generated()
		item:add_proto_expert_info(ex.icrc_bad, string.format(
			"Bad ICRC (computed 0x%08x); a capture of a run without IcrcEnabled has none: "
			.. "set the ICRC preference off (mrc.icrc:FALSE)", want))
		c.info[#c.info + 1] = " [BAD ICRC]"
	elseif status == "undeclared" then
		item:add_proto_expert_info(ex.icrc_undeclared)
	end
end

local function dissect_body(c, bth, role)
	local op = bth.opcode
	local trimmed, left = false, 0
	if data_opcodes[op] then
		if op == OP_WRITE_LAST_IMM or op == OP_WRITE_ONLY_IMM then
			c.root:add_proto_expert_info(ex.unsupported)
		end
		trimmed, left = dissect_data(c, bth, role)
	elseif op == OP_ACK then
		dissect_aeth(c)
	elseif op == OP_SACK then
		dissect_seth(c)
		dissect_cc_state(c)
	elseif op == OP_NACK then
		dissect_neth(c)
	elseif op == OP_PROBE then
		dissect_peth(c)
	else
		c.root:add_proto_expert_info(ex.unknown)
	end
	return trimmed, left
end

-- MRC analysis ---------------------------------------------------------------
-- Follows each QP the way Wireshark's TCP analysis follows a connection.  A
-- QP here is one sending direction: the requester (source IPv4, its QP
-- number) writing to a responder.  Data packets name the requester's QP
-- while C is set and the responder's afterwards; SACKs and NACKs name both,
-- so the responder's number maps back to the requester's (docs/protocol.md
-- section 1, Connection fields).  State is built on the first pass only and
-- kept per frame, so that a frame reads the same whenever it is shown.
local PSN_MOD, PSN_HALF = 0x1000000, 0x800000

local an -- analysis state, see analysis_reset

local function analysis_reset()
	an = {
		qps = {},       -- requester key -> QP state
		order = {},     -- QP states by first appearance (the statistics)
		responder = {}, -- "responder ip|responder QPN|requester ip" -> requester QPN
		frames = {},    -- frame number -> what the analysis found
	}
end
analysis_reset()

-- Signed distance from PSN b to PSN a, modulo 2^24.
local function psn_diff(a, b)
	return (a - b + PSN_HALF) % PSN_MOD - PSN_HALF
end

local function qp_state(req_ip, req_qpn, resp_ip)
	local key = req_ip .. "|" .. req_qpn .. "|" .. resp_ip
	local q = an.qps[key]
	if not q then
		q = { index = #an.order + 1, req_ip = req_ip, req_qpn = req_qpn, resp_ip = resp_ip,
			tx = {}, acked = {}, nacked = {}, cack = nil, high = nil, sack_high = nil,
			data = 0, bytes = 0, ctrl = 0, rtx = 0, causes = {}, dup = 0, gaps = 0, ooo = 0,
			trims = 0, msgs = {}, nmsgs = 0, acked_msn = 0, rtts = 0, rtt_sum = 0, rtt_min = nil,
			rtt_max = nil }
		an.qps[key] = q
		an.order[#an.order + 1] = q
	end
	return q
end

local function is_acked(q, psn)
	return q.acked[psn] or (q.cack ~= nil and psn_diff(psn, q.cack) <= 0)
end

-- Why a packet is sent again, from what this capture saw since its last
-- transmission (seed: Loss detection from SACK gaps, Retransmission timer):
-- already acknowledged, it is a completion re-request (docs/protocol.md section
-- 12, rule 10); NACKed, the NACK; listed missing by a SACK reaching more
-- than SACKLossMinRetxPkts beyond it, the SACK gap; otherwise the timer.
local function rtx_cause(q, psn)
	if is_acked(q, psn) then
		return "rerequest"
	elseif q.nacked[psn] then
		return "nack"
	elseif q.sack_high and psn_diff(q.sack_high, psn) > mrc.prefs.sack_loss_min_retx then
		return "sack_gap"
	end
	return "timeout"
end

local function analyse_data(q, bth, pkt, trimmed, now, num)
	local r, psn = {}, bth.psn
	local prev = q.tx[psn]
	q.data = q.data + 1
	q.bytes = q.bytes + (pkt.payload or 0)
	if pkt.msn and not q.msgs[pkt.msn] then
		q.msgs[pkt.msn], q.nmsgs = true, q.nmsgs + 1
	end
	if bth.rtx then
		r.cause, r.prev = rtx_cause(q, psn), prev and prev.frame
		q.rtx = q.rtx + 1
		q.causes[r.cause] = (q.causes[r.cause] or 0) + 1
	elseif prev then
		r.dup = prev.frame
		q.dup = q.dup + 1
	end
	-- Every QP starts at PSN 0 (docs/protocol.md section 1).
	local ahead = q.high and psn_diff(psn, q.high) or psn + 1
	if ahead > 1 then
		r.gap_first, r.gap_count = (psn - ahead + 1) % PSN_MOD, ahead - 1
		q.gaps = q.gaps + ahead - 1
	elseif ahead <= 0 and not prev and not bth.rtx then
		r.ooo = true
		q.ooo = q.ooo + 1
	end
	if ahead > 0 then
		q.high = psn
	end
	if trimmed then
		q.trims = q.trims + 1
	end
	q.tx[psn] = { frame = num, time = now }
	q.nacked[psn] = nil
	return r
end

-- An answer (SACK, ACK, NACK) to the latest transmission of `psn`.
local function answer(q, psn, now, r)
	local sent = psn and q.tx[psn]
	if not sent or now < sent.time then
		return
	end
	r.answers, r.rtt = sent.frame, now - sent.time
	if not an.frames[sent.frame].answered_by then
		an.frames[sent.frame].answered_by = r.num
	end
	q.rtts, q.rtt_sum = q.rtts + 1, q.rtt_sum + r.rtt
	q.rtt_min = math.min(q.rtt_min or r.rtt, r.rtt)
	q.rtt_max = math.max(q.rtt_max or r.rtt, r.rtt)
end

local function learn_responder(q, responder_qpn)
	q.resp_qpn = responder_qpn
	an.responder[q.resp_ip .. "|" .. responder_qpn .. "|" .. q.req_ip] = q.req_qpn
end

local function analyse_sack(q, s, r, now)
	learn_responder(q, s.responder)
	if q.cack == nil or psn_diff(s.cack, q.cack) > 0 then
		q.cack = s.cack
	end
	for bit = 0, 63 do
		local word = bit < 32 and s.lo or s.hi
		if bit32.extract(word, bit % 32) == 1 then
			local psn = (s.base + bit) % PSN_MOD
			q.acked[psn] = true
			if q.sack_high == nil or psn_diff(psn, q.sack_high) > 0 then
				q.sack_high = psn
			end
		end
	end
	answer(q, s.drawn_by, now, r)
end

-- The QP a frame belongs to, or nil (probes, malformed frames).
local function frame_qp(pinfo, bth, pkt)
	local src, dst = tostring(pinfo.net_src), tostring(pinfo.net_dst)
	if data_opcodes[bth.opcode] then
		local req_qpn = bth.dqpn
		if not bth.c then
			req_qpn = an.responder[dst .. "|" .. bth.dqpn .. "|" .. src]
				or string.format("responder 0x%06x", bth.dqpn)
		end
		return qp_state(src, req_qpn, dst)
	elseif bth.opcode == OP_ACK or pkt.sack or pkt.nack then
		return qp_state(dst, bth.dqpn, src)
	end
	return nil
end

local function analyse_first(pinfo, bth, pkt, trimmed)
	local q = frame_qp(pinfo, bth, pkt)
	if not q then
		return nil
	end
	local now = math.floor(pinfo.rel_ts * 1e9 + 0.5) -- ns
	local r
	if data_opcodes[bth.opcode] then
		r = analyse_data(q, bth, pkt, trimmed, now, pinfo.number)
		r.num = pinfo.number
		an.frames[pinfo.number] = r
	else
		r = { num = pinfo.number }
		an.frames[pinfo.number] = r
		q.ctrl = q.ctrl + 1
		if pkt.sack then
			analyse_sack(q, pkt.sack, r, now)
		elseif pkt.nack then
			learn_responder(q, pkt.nack.responder)
			q.nacked[pkt.nack.psn] = pinfo.number
			answer(q, pkt.nack.psn, now, r)
		else -- cumulative ACK: PSN = highest in order, MSN = messages done
			if q.cack == nil or psn_diff(bth.psn, q.cack) > 0 then
				q.cack = bth.psn
			end
			q.acked_msn = math.max(q.acked_msn, pkt.msn or 0)
			answer(q, bth.psn, now, r)
		end
	end
	r.qp = q
	return r
end

local function ns_time(ns)
	return NSTime.new(math.floor(ns / 1e9), ns % 1e9)
end

-- Shows what the analysis found; returns the Info column tags.
local function show_analysis(root, r)
	local q, tags = r.qp, {}
	local t = root:add(mrc, "MRC analysis")
	t:set_generated()
	t:add(f.an_qp, q.index):set_generated()
	t:add(f.an_requester, string.format("%s QP %s", q.req_ip, type(q.req_qpn) == "number"
		and string.format("0x%06x", q.req_qpn) or q.req_qpn)):set_generated()
	if r.cause then
		local item = t:add(f.an_retx, true)
		item:set_generated()
		t:add(f.an_cause, r.cause):set_generated()
		if r.prev then
			t:add(f.an_prev, r.prev):set_generated()
		end
		if r.cause == "rerequest" then
			item:add_proto_expert_info(ex.rerequest)
		else
			item:add_proto_expert_info(ex.retx, "Retransmission (" .. r.cause .. ")")
		end
		tags[#tags + 1] = r.cause == "rerequest" and "RE-REQUEST" or "RETRANSMISSION " .. r.cause
	end
	if r.dup then
		t:add(f.an_dup, r.dup):set_generated():add_proto_expert_info(ex.dup)
		tags[#tags + 1] = "DUPLICATE"
	end
	if r.gap_count then
		t:add(f.an_gap_first, r.gap_first):set_generated()
		local item = t:add(f.an_gap_count, r.gap_count)
		item:set_generated()
		item:add_proto_expert_info(ex.gap, string.format("%d PSN(s) from %d not seen",
			r.gap_count, r.gap_first))
		tags[#tags + 1] = "GAP"
	end
	if r.ooo then
		t:add(f.an_ooo, true):set_generated():add_proto_expert_info(ex.ooo)
		tags[#tags + 1] = "OUT-OF-ORDER"
	end
	if r.answers then
		t:add(f.an_answers, r.answers):set_generated()
		t:add(f.an_rtt, ns_time(r.rtt)):set_generated()
	end
	if r.answered_by then
		t:add(f.an_answered_by, r.answered_by):set_generated()
	end
	return #tags > 0 and " [" .. table.concat(tags, ", ") .. "]" or ""
end

local function analyse(pinfo, root, bth, pkt, trimmed)
	local r = an.frames[pinfo.number]
	if not pinfo.visited and not r then
		r = analyse_first(pinfo, bth, pkt, trimmed)
	end
	return r and show_analysis(root, r) or ""
end

-- `tshark -z mrc,qp`: one line per QP at the end of the capture.
local function stats_draw()
	print("================================================================================")
	print("MRC QPs (requester -> responder)")
	print(string.format("%-4s %-28s %-24s %6s %10s %5s %-26s %4s %5s %4s %5s %5s %-11s %s",
		"QP", "requester", "responder", "data", "payload", "rtx", "causes", "dup", "gaps",
		"ooo", "trims", "ctrl", "msgs done", "RTT us min/avg/max"))
	for _, q in ipairs(an.order) do
		local causes = {}
		for _, k in ipairs({ "timeout", "nack", "sack_gap", "rerequest" }) do
			if q.causes[k] then
				causes[#causes + 1] = k .. "=" .. q.causes[k]
			end
		end
		local rtt = q.rtts > 0 and string.format("%.3f/%.3f/%.3f", q.rtt_min / 1e3,
			q.rtt_sum / q.rtts / 1e3, q.rtt_max / 1e3) or "-"
		local req = type(q.req_qpn) == "number" and string.format("0x%06x", q.req_qpn) or "?"
		local resp = q.resp_qpn and string.format("0x%06x", q.resp_qpn) or "?"
		print(string.format("%-4d %-28s %-24s %6d %10d %5d %-26s %4d %5d %4d %5d %5d %-11s %s",
			q.index, q.req_ip .. " " .. req, q.resp_ip .. " " .. resp, q.data, q.bytes, q.rtx,
			#causes > 0 and table.concat(causes, ",") or "-", q.dup, q.gaps, q.ooo, q.trims,
			q.ctrl, string.format("%d/%d", q.acked_msn, q.nmsgs), rtt))
	end
	print("================================================================================")
end

register_stat_cmd_arg("mrc,qp", function()
	-- The dissector keeps the counts; a tap only brings the end of the pass.
	local tap = Listener.new(nil, "mrc")
	function tap.draw()
		stats_draw()
	end
end)

function mrc.init()
	analysis_reset()
	icrc_found, icrc_verdict = false, {}
end

local function dissect_mrc(tvb, pinfo, tree)
	pinfo.cols.protocol:set("MRC")
	local root = tree:add(mrc, tvb())
	local c = cursor(tvb, root)
	local dscp = packet_dscp()
	local role = dscp_role(dscp)
	root:add(f.entropy, pinfo.src_port):set_generated()
	root:add(f.role, role):set_generated()
	if not have(c, BTH_LEN, "BTH") then
		pinfo.cols.info:set("MRC" .. table.concat(c.info))
		root:add(f.trimmed, false):set_generated()
		return tvb:len()
	end
	local bth = dissect_bth(c)
	local icrc_at, icrc_status = take_icrc(c, bth, pinfo)
	local name = opcode_short[bth.opcode] or opcode_names[bth.opcode]
		or string.format("opcode=0x%02x", bth.opcode)
	add_info(c, "%s dqp=0x%06x", name, bth.dqpn)
	if bth.opcode ~= OP_NACK then
		add_info(c, " psn=%d", bth.psn)
	end
	-- Every read is bounds-checked; this only keeps a bug in this file
	-- from hiding the rest of the frame.
	local ok, trimmed, left = pcall(dissect_body, c, bth, role)
	if not ok then
		root:add_proto_expert_info(ex.internal, tostring(trimmed))
		trimmed, left = false, 0
	end
	root:add(f.trimmed, trimmed and true or false):set_generated()
	if trimmed then
		root:add_proto_expert_info(ex.trimmed)
		-- A switch cuts right after METH/TSETH; leftovers are a partial RETH.
		if left > 0 and c.pos + left <= tvb:len() then
			root:add(f.extra, range(c, left)):add_proto_expert_info(ex.extra)
		end
		c.pos = c.stop
	elseif not c.bad and c.pos < c.stop then
		local extra = math.min(c.stop, tvb:len()) - c.pos
		if extra > 0 then
			root:add(f.extra, range(c, extra)):add_proto_expert_info(ex.extra)
		end
	end
	if icrc_at then
		show_icrc(c, icrc_at, icrc_status)
	end
	local tags = ""
	if not c.bad and ok then
		tags = analyse(pinfo, root, bth, c.pkt, trimmed)
	end
	local info = table.concat(c.info) .. bth_flags(bth) .. (trimmed and " [TRIMMED]" or "")
		.. tags
	pinfo.cols.info:set(info)
	root:append_text(", " .. info)
	return tvb:len()
end

-- Dissectors displaced from entropy ports (see claim_entropy_ports), and
-- Wireshark's RoCEv2 (InfiniBand) dissector, displaced from 4791.
local displaced = {}
local udp_port = DissectorTable.get("udp.port")
local roce = udp_port:get_dissector(ROCE_PORT)

-- MRC's opcodes are those with transport bits 110 (docs/protocol.md section 1);
-- an empty frame is ours too, to be called malformed.
local function is_mrc(tvb)
	return tvb:len() == 0 or bit32.rshift(tvb(0, 1):uint(), 5) == 6
end

function mrc.dissector(tvb, pinfo, tree)
	if pinfo.dst_port ~= ROCE_PORT then
		local other = displaced[pinfo.match_uint]
		if other then
			return other:call(tvb, pinfo, tree)
		end
		return 0
	end
	if roce and not is_mrc(tvb) then
		return roce:call(tvb, pinfo, tree)
	end
	return dissect_mrc(tvb, pinfo, tree)
end

-- UDP tries the lower port first, and MRC's entropy values (source ports
-- 256..383 by default, docs/protocol.md section 6) include ports with stock
-- dissectors (PTP on 319/320, packetbb on 269): take those ports too and
-- hand anything not sent to 4791 back to the dissector that owned them.

local function claim_entropy_ports()
	for port, handle in pairs(displaced) do
		udp_port:add(port, handle)
	end
	displaced = {}
	local first = mrc.prefs.entropy_start
	local last = math.min(first + mrc.prefs.entropy_count - 1, 0xFFFF)
	for port = first, last do
		local handle = port ~= ROCE_PORT and udp_port:get_dissector(port)
		if handle then
			displaced[port] = handle
			udp_port:add(port, mrc)
		end
	end
end

udp_port:add(ROCE_PORT, mrc)
claim_entropy_ports()

function mrc.prefs_changed()
	claim_entropy_ports()
end

-- Virtual-arrival trailer: 12 bytes after the IP datagram, "MR", the
-- arrival time in ps (48 bits big-endian) and the link's sequence number
-- (32 bits) (docs/promises.md).  The Ethernet dissector offers the bytes
-- after the IP datagram to its "eth.trailer" heuristic list, whole (any FCS
-- guess comes after).
local function dissect_trailer(tvb, pinfo, tree)
	if tvb:len() < TRAILER_LEN or tvb(0, 2):uint() ~= 0x4D52 then
		return false
	end
	local t = tree:add(mrc, tvb(0, TRAILER_LEN), "MRC virtual-arrival trailer")
	t:add(f.trailer_magic, tvb(0, 2))
	local stamp = tvb(2, 6):uint64()
	t:add(f.trailer_stamp, tvb(2, 6), stamp)
	t:add(f.trailer_seq, tvb(8, 4))
	t:append_text(", arrival " .. tostring(stamp) .. " ps, seq " .. tvb(8, 4):uint())
	return true
end

-- Promise frames between two daemons (docs/promises.md): EtherType 0x88B5,
-- "MRP1", the promise in ps (64 bits), the link's sequence number (32 bits),
-- the sender's want and its end bound (T_end is at least this) in ps (64
-- bits each), big-endian: no frame below the promise comes on this link
-- any more.
local mrp = Proto("mrp", "MRC promise")
local PROMISE_LEN = 16
local pf = {
	magic = ProtoField.string("mrp.magic", "Magic"),
	promise = ProtoField.uint64("mrp.promise", "Promise (ps)", base.DEC),
	seq = ProtoField.uint32("mrp.seq", "Link sequence number", base.DEC),
	want = ProtoField.uint64("mrp.want", "Want (ps)", base.DEC),
	end_bound = ProtoField.uint64("mrp.end", "End bound (ps)", base.DEC),
}
mrp.fields = {pf.magic, pf.promise, pf.seq, pf.want, pf.end_bound}
local ef_promise_short = ProtoExpert.new("mrp.short", "Promise frame too short",
	expert.group.MALFORMED, expert.severity.ERROR)
mrp.experts = {ef_promise_short}

function mrp.dissector(tvb, pinfo, tree)
	pinfo.cols.protocol = "MRP"
	local t = tree:add(mrp, tvb(0, math.min(tvb:len(), PROMISE_LEN)))
	if tvb:len() < PROMISE_LEN or tvb(0, 4):string() ~= "MRP1" then
		t:add_proto_expert_info(ef_promise_short)
		pinfo.cols.info = "MRC promise (malformed)"
		return tvb:len()
	end
	local promise = tvb(4, 8):uint64()
	t:add(pf.magic, tvb(0, 4))
	t:add(pf.promise, tvb(4, 8))
	t:add(pf.seq, tvb(12, 4))
	if tvb:len() >= PROMISE_LEN + 8 then
		t:set_len(PROMISE_LEN + 8)
		t:add(pf.want, tvb(16, 8))
	end
	if tvb:len() >= PROMISE_LEN + 16 then
		t:set_len(PROMISE_LEN + 16)
		t:add(pf.end_bound, tvb(24, 8))
	end
	t:append_text(", " .. tostring(promise) .. " ps, seq " .. tvb(12, 4):uint())
	pinfo.cols.info = "Promise " .. tostring(promise) .. " ps, seq " .. tvb(12, 4):uint()
	return tvb:len()
end

DissectorTable.get("ethertype"):add(0x88B5, mrp)

mrc:register_heuristic("eth.trailer", dissect_trailer)
