-- pcap/mrc.lua — Wireshark/tshark dissector for MRC (Multipath Reliable
-- Connection), the RoCEv2 extension mrcemu emulates.  Decodes every header of
-- docs/protocol.md section 1 (BTH with MRC's A/C/RTX/TS flags, METH, TSETH, RETH,
-- AETH, SETH, CC_STATE, NETH, PETH, trimmed packets, the optional ICRC) and
-- the 8-byte virtual-arrival trailer of docs/architecture.md ("Stamped frames").
--
-- Load:   tshark -X lua_script:pcap/mrc.lua -r capture.pcap
--         or copy to ~/.local/lib/wireshark/plugins/
-- Filter: mrc.opcode == 0xdc, mrc.retx, mrc.nack.code == 2, mrc.trimmed ...
--
-- UDP port 4791 is taken from the stock InfiniBand/RoCEv2 dissector on
-- purpose: MRC reuses the RoCEv2 port with its own opcodes and headers.
--
-- Nothing in a packet may raise a Lua error: every header is bounds-checked
-- and a short one is flagged with the "malformed" expert info instead
-- (docs/protocol.md section 2: bad input is named, never a crash).

local mrc = Proto("mrc", "MRC (Multipath Reliable Connection)")

local ROCE_PORT = 4791

-- Header sizes, docs/protocol.md section 1.
local BTH_LEN, METH_LEN, TSETH_LEN, RETH_LEN = 12, 4, 4, 16
local AETH_LEN, SETH_LEN, CC_LEN, NETH_LEN, PETH_LEN = 4, 28, 8, 20, 16
local ICRC_LEN, TRAILER_LEN = 4, 8

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
	extra = ProtoField.bytes("mrc.extra", "Unexpected bytes"),
	trailer_magic = ProtoField.string("mrc.trailer.magic", "Trailer magic"),
	trailer_stamp = ProtoField.uint64("mrc.trailer.stamp", "Virtual arrival time (ps)", base.DEC),
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
}
mrc.experts = { ex.malformed, ex.unsupported, ex.unknown, ex.trimmed, ex.extra, ex.short,
	ex.internal }

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
-- any ICRC), the tree and the Info fragments.
local function cursor(tvb, root)
	return { tvb = tvb, tree = root, root = root, pos = 0,
		stop = tvb:reported_len(), info = {}, bad = false }
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
	add_info(c, " msn=%d", r(1, 3):uint())
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

-- IcrcEnabled appends 4 bytes to the UDP payload (docs/protocol.md section 1).
local function take_icrc(c, bth)
	if not mrc.prefs.icrc then
		return nil
	end
	local need = BTH_LEN + min_after_bth(bth.opcode, bth.ts) + ICRC_LEN
	if c.stop < need then
		return nil
	end
	c.stop = c.stop - ICRC_LEN
	return c.stop
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
	local icrc_at = take_icrc(c, bth)
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
	if icrc_at and icrc_at + ICRC_LEN <= tvb:len() then
		root:add(f.icrc, tvb(icrc_at, ICRC_LEN))
	end
	local info = table.concat(c.info) .. bth_flags(bth) .. (trimmed and " [TRIMMED]" or "")
	pinfo.cols.info:set(info)
	root:append_text(", " .. info)
	return tvb:len()
end

-- Dissectors displaced from entropy ports (see claim_entropy_ports).
local displaced = {}

function mrc.dissector(tvb, pinfo, tree)
	if pinfo.dst_port ~= ROCE_PORT then
		local other = displaced[pinfo.match_uint]
		if other then
			return other:call(tvb, pinfo, tree)
		end
		return 0
	end
	return dissect_mrc(tvb, pinfo, tree)
end

-- UDP tries the lower port first, and MRC's entropy values (source ports
-- 256..383 by default, docs/protocol.md section 6) include ports with stock
-- dissectors (PTP on 319/320, packetbb on 269): take those ports too and
-- hand anything not sent to 4791 back to the dissector that owned them.
local udp_port = DissectorTable.get("udp.port")

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

-- Virtual-arrival trailer: 8 bytes after the IP datagram, "MR" then the
-- arrival time in ps, 48 bits big-endian (docs/architecture.md, Stamped frames).
-- The Ethernet dissector offers the bytes after the IP datagram to its
-- "eth.trailer" heuristic list, whole (any FCS guess comes after).
local function dissect_trailer(tvb, pinfo, tree)
	if tvb:len() < TRAILER_LEN or tvb(0, 2):uint() ~= 0x4D52 then
		return false
	end
	local t = tree:add(mrc, tvb(0, TRAILER_LEN), "MRC virtual-arrival trailer")
	t:add(f.trailer_magic, tvb(0, 2))
	local stamp = tvb(2, 6):uint64()
	t:add(f.trailer_stamp, tvb(2, 6), stamp)
	t:append_text(", arrival " .. tostring(stamp) .. " ps")
	return true
end

mrc:register_heuristic("eth.trailer", dissect_trailer)
