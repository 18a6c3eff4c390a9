-- Wireshark dissector for Ultra Ethernet Transport (UET 1.0) as uet sends and reads it.
--
-- Decodes the entropy header (UET over IP protocol 253), the TSS header, every PDS type and every
-- SES form with its extension headers (sync, atomic, compare-and-swap, rendezvous). Field layouts
-- follow docs/wire-format.md of the uet repository, which names the public source of each.
-- Field names are those of `uet-dump --json` under a prefix per header:
--   uet.entropy.*, uet.tss.*, uet.pds.*, uet.ses.* and uet.ses.sync.*, uet.ses.atomic.*,
--   uet.ses.cas.*, uet.ses.rndv.*; uet.header names each header as uet-dump does ("pds_rud").
-- Filter e.g. `uet.pds.psn == 1000`, `uet.ses.opcode == 5`, `uet.header == "ses_cas"`.
--
-- Install: copy this file to ~/.local/lib/wireshark/plugins/ (Wireshark 4.0: the personal Lua
-- plugins folder; see Help > About > Folders), or load it for one run:
--   tshark -X lua_script:tools/wireshark/uet.lua -r capture.pcap
-- The UDP port (default 4793) is a preference: Edit > Preferences > Protocols > UET, or
--   tshark -o uet.udp_port:49150 ...
--
-- Malformed fields are flagged with expert info (uet.malformed) and the dissection stops at the
-- first header it cannot read, after showing every header before it. A SES payload_length larger
-- than the bytes present is flagged (uet.truncated_payload) with the headers shown.
--
-- Numbers are read with explicit widths (UInt64 for 64-bit fields: Lua numbers are doubles).

local uet = Proto("uet", "Ultra Ethernet Transport")
local uet_ip = Proto("uet_ip", "Ultra Ethernet Transport over IP")

local default_udp_port = 4793
uet.prefs.udp_port = Pref.uint("UDP port", default_udp_port, "UDP destination port of UET")

local band, rshift = bit32.band, bit32.rshift

-- ---------------------------------------------------------------------------------------------
-- Value names (as uet-dump prints them)

local pds_type_names = {
    [1] = "TSS", [2] = "RUD", [3] = "ROD", [4] = "RUDI_REQ", [5] = "RUDI_RESP", [6] = "UUD",
    [7] = "ACK", [8] = "ACK_CC", [9] = "ACK_CCX", [10] = "NACK", [11] = "CTRL", [12] = "NACK_CCX",
    [13] = "RUD_CC", [14] = "ROD_CC",
}
-- uet-dump's header name per PDS type.
local pds_header_names = {
    [2] = "pds_rud", [3] = "pds_rod", [4] = "pds_rudi_req", [5] = "pds_rudi_resp", [6] = "pds_uud",
    [7] = "pds_ack", [8] = "pds_ack_cc", [9] = "pds_ack_ccx", [10] = "pds_nack", [11] = "pds_ctrl",
    [12] = "pds_nack_ccx", [13] = "pds_rud_cc", [14] = "pds_rod_cc",
}
local next_hdr_names = {
    [0] = "NONE", [1] = "REQ_SMALL", [2] = "REQ_MEDIUM", [3] = "REQ_STD", [4] = "RSP",
    [5] = "RSP_DATA", [6] = "RSP_DATA_SMALL",
}
local ctrl_type_names = {
    [0] = "NOOP", [1] = "ACK_REQ", [2] = "CLEAR", [3] = "CLEAR_REQ", [4] = "CLOSE",
    [5] = "CLOSE_REQ", [6] = "PROBE", [7] = "CREDIT", [8] = "CREDIT_REQ", [9] = "NEGOTIATION",
}
local cc_type_names = { [0] = "NSCC", [1] = "CREDIT" }
local nack_code_names = {
    [0x01] = "TRIMMED", [0x02] = "TRIMMED_LASTHOP", [0x03] = "TRIMMED_ACK",
    [0x04] = "NO_PDC_AVAIL", [0x05] = "NO_CCC_AVAIL", [0x06] = "NO_BITMAP",
    [0x07] = "NO_PKT_BUFFER", [0x08] = "NO_GTD_DEL_AVAIL", [0x09] = "NO_SES_MSG_AVAIL",
    [0x0a] = "NO_RESOURCE", [0x0b] = "PSN_OOR_WINDOW", [0x0d] = "ROD_OOO", [0x0e] = "INV_DPDCID",
    [0x0f] = "PDC_HDR_MISMATCH", [0x10] = "CLOSING", [0x11] = "CLOSING_IN_ERR",
    [0x12] = "PKT_NOT_RCVD", [0x13] = "GTD_RESP_UNAVAIL", [0x14] = "ACK_WITH_DATA",
    [0x15] = "INVALID_SYN", [0x16] = "PDC_MODE_MISMATCH", [0x17] = "NEW_START_PSN",
    [0x18] = "RCVD_SES_PROCG", [0x19] = "UNEXP_EVENT", [0x1a] = "RCVR_INFER_LOSS",
    [0xfd] = "EXP_NACK_NORMAL", [0xfe] = "EXP_NACK_ERR", [0xff] = "EXP_NACK_FATAL",
}
local ses_opcode_names = {
    [0x00] = "NO_OP", [0x01] = "WRITE", [0x02] = "READ", [0x03] = "ATOMIC",
    [0x04] = "FETCH_ATOMIC", [0x05] = "SEND", [0x06] = "RNDV_SEND", [0x07] = "DGRAM_SEND",
    [0x08] = "DEFER_SEND", [0x09] = "TAGGED_SEND", [0x0a] = "RNDV_TSEND", [0x0b] = "DEFER_TSEND",
    [0x0c] = "DEFER_RTR", [0x0d] = "TSEND_ATOMIC", [0x0e] = "TSEND_FETCH_ATOMIC",
    [0x0f] = "MSG_ERR", [0x10] = "SYNC_WRITE", [0x11] = "SYNC_ATOMIC",
}
local ses_rsp_opcode_names = {
    [0] = "DEFAULT_RESPONSE", [1] = "RESPONSE", [2] = "RESPONSE_W_DATA", [3] = "NO_RESPONSE",
}
local ses_rc_list = {
    "NULL", "OK", "BAD_GENERATION", "DISABLED", "DISABLED_GEN", "NO_MATCH", "UNSUPPORTED_OP",
    "UNSUPPORTED_SIZE", "AT_INVALID", "AT_PERM", "AT_ATS_ERROR", "AT_NO_TRANS", "AT_OUT_OF_RANGE",
    "HOST_POISONED", "HOST_UNSUCCESS_CMPL", "AMO_UNSUPPORTED_OP", "AMO_UNSUPPORTED_DT",
    "AMO_UNSUPPORTED_SIZE", "AMO_UNALIGNED", "AMO_FP_NAN", "AMO_FP_UNDERFLOW", "AMO_FP_OVERFLOW",
    "AMO_FP_INEXACT", "PERM_VIOLATION", "OP_VIOLATION", "BAD_INDEX", "BAD_PID", "BAD_JOB_ID",
    "BAD_MKEY", "BAD_ADDR", "CANCELLED", "UNDELIVERABLE", "UNCOR", "UNCOR_TRNSNT", "TOO_LONG",
    "INITIATOR_ERR", "DROPPED",
}
local ses_rc_names = {}
for i, n in ipairs(ses_rc_list) do ses_rc_names[i - 1] = n end
local atomic_op_list = {
    "MIN", "MAX", "SUM", "DIFF", "PROD", "LOR", "LAND", "BOR", "BAND", "LXOR", "BXOR", "READ",
    "WRITE", "CSWAP", "CSWAP_NE", "CSWAP_LE", "CSWAP_LT", "CSWAP_GE", "CSWAP_GT", "MSWAP", "INVAL",
}
local atomic_op_names = {}
for i, n in ipairs(atomic_op_list) do atomic_op_names[i - 1] = n end
local atomic_dt_list = {
    "INT8", "UINT8", "INT16", "UINT16", "INT32", "UINT32", "INT64", "UINT64", "INT128", "UINT128",
    "FLOAT", "DOUBLE", "FLOAT_COMPLEX", "DOUBLE_COMPLEX", "LONG_DOUBLE", "LONG_DOUBLE_COMPLEX",
    "BF16", "FP16",
}
local atomic_dt_names = {}
for i, n in ipairs(atomic_dt_list) do atomic_dt_names[i - 1] = n end

-- ---------------------------------------------------------------------------------------------
-- Fields: f[group][name]. Values are added explicitly (no masks), so one field serves every
-- form whose slot has another width.

local f = { entropy = {}, tss = {}, pds = {}, ses = {}, sync = {}, atomic = {}, cas = {}, rndv = {} }
local prefix = {
    entropy = "uet.entropy.", tss = "uet.tss.", pds = "uet.pds.", ses = "uet.ses.",
    sync = "uet.ses.sync.", atomic = "uet.ses.atomic.", cas = "uet.ses.cas.", rndv = "uet.ses.rndv.",
}
local all_fields = {}

local function def(group, name, kind, base_, names)
    local abbr = prefix[group] .. name
    local label = name
    local field
    if kind == "bool" then
        field = ProtoField.bool(abbr, label)
    elseif kind == "bytes" then
        field = ProtoField.bytes(abbr, label)
    else
        field = ProtoField.new(label, abbr, kind, names, base_ or base.DEC)
    end
    f[group][name] = field
    all_fields[#all_fields + 1] = field
end

local U8, U16, U32, U64 = ftypes.UINT8, ftypes.UINT16, ftypes.UINT32, ftypes.UINT64

def("entropy", "entropy", U16, base.HEX)

def("tss", "type", U8)
def("tss", "sp", "bool")
def("tss", "an", "bool")
def("tss", "sdi", U32, base.HEX)
def("tss", "ssi", U32, base.HEX)
def("tss", "epoch", U16)
def("tss", "tsc", U64)

for _, spec in ipairs({
    { "type", U8, base.DEC, pds_type_names }, { "next_hdr", U8, base.DEC, next_hdr_names },
    { "ctrl_type", U8, base.DEC, ctrl_type_names }, { "retx", "bool" }, { "ar", "bool" },
    { "syn", "bool" }, { "m", "bool" }, { "p", "bool" }, { "req_close", "bool" },
    { "req_clear", "bool" }, { "nt", "bool" }, { "is_rod", "bool" },
    { "clear_psn_offset", U16 }, { "psn", U32 }, { "spdcid", U16 }, { "dpdcid", U16 },
    { "pdc_info", U8, base.HEX }, { "use_rsv_pdc", "bool" }, { "psn_offset", U16 },
    { "ccc_id", U8 }, { "credit_target", U32 }, { "ack_psn_offset", U16 },
    { "probe_opaque", U16 }, { "rsvd", U16 }, { "cack_psn", U32 },
    { "cc_type", U8, base.DEC, cc_type_names }, { "cc_flags", U8 }, { "mpr", U8 },
    { "sack_psn_offset", U16 }, { "sack_bitmap", U64, base.HEX }, { "service_time", U16 },
    { "restore_cwnd", "bool" }, { "rcv_cwnd_pend", U8 }, { "rcvd_bytes", U32 },
    { "ooo_count", U16 }, { "credit", U32 }, { "cc_state", U64, base.HEX },
    { "ack_ccx_state", U64, base.HEX }, { "nack_code", U8, base.HEX, nack_code_names },
    { "vendor_code", U8 }, { "nack_psn", U32 }, { "nack_pkt_id", U32 }, { "payload", U32 },
    { "nccx_type", U8 }, { "nack_ccx_state1", U64, base.HEX }, { "nack_ccx_state2", U64, base.HEX },
    { "pkt_id", U32 },
}) do
    def("pds", spec[1], spec[2], spec[3], spec[4])
end

for _, spec in ipairs({
    { "opcode", U8, base.HEX }, { "version", U8 }, { "dc", "bool" }, { "ie", "bool" },
    { "rel", "bool" }, { "hd", "bool" }, { "eom", "bool" }, { "som", "bool" },
    { "message_id", U16 }, { "request_length", U32 }, { "ri_generation", U8 }, { "job_id", U32 },
    { "pid_on_fep", U16 }, { "resource_index", U16 }, { "buffer_offset", U64, base.HEX },
    { "initiator", U32 }, { "memory_key", U64, base.HEX }, { "match_bits", U64, base.HEX },
    { "header_data", U64, base.HEX }, { "payload_length", U16 }, { "message_offset", U32 },
    { "list", U8 }, { "return_code", U8, base.DEC, ses_rc_names }, { "modified_length", U32 },
    { "read_request_message_id", U16 }, { "original_request_psn", U32 },
}) do
    def("ses", spec[1], spec[2], spec[3], spec[4])
end
def("sync", "group", U16)
def("sync", "count", U16)
for _, g in ipairs({ "atomic", "cas" }) do
    def(g, "atomic_opcode", U8, base.HEX, atomic_op_names)
    def(g, "atomic_datatype", U8, base.HEX, atomic_dt_names)
    def(g, "cacheable", "bool")
    def(g, "cpu_coherent", "bool")
end
def("cas", "compare_value", "bytes")
def("cas", "swap_value", "bytes")
for _, spec in ipairs({
    { "eager_length", U32 }, { "ri_generation", U8 }, { "pid_on_fep", U16 },
    { "resource_index", U16 }, { "rd_offset", U64, base.HEX }, { "rd_memory_key", U64, base.HEX },
}) do
    def("rndv", spec[1], spec[2], spec[3])
end

local f_header = ProtoField.string("uet.header", "Header")
all_fields[#all_fields + 1] = f_header
uet.fields = all_fields

local ef_malformed = ProtoExpert.new("uet.malformed", "Malformed UET header",
                                     expert.group.MALFORMED, expert.severity.ERROR)
local ef_truncated_payload = ProtoExpert.new("uet.truncated_payload",
                                             "SES payload_length exceeds the bytes present",
                                             expert.group.MALFORMED, expert.severity.WARN)
local ef_unknown_cc = ProtoExpert.new("uet.unknown_cc_type",
                                      "CC type neither NSCC nor credit: state kept raw",
                                      expert.group.PROTOCOL, expert.severity.NOTE)
uet.experts = { ef_malformed, ef_truncated_payload, ef_unknown_cc }

-- ---------------------------------------------------------------------------------------------
-- Helpers

-- A header's subtree; nil (after expert info) when fewer than len bytes are left.
local function header(tree, tvb, off, len, name, label)
    if tvb:len() - off < len then
        local item = tree:add(uet, tvb(off), label .. " (truncated)")
        item:add_proto_expert_info(ef_malformed, label .. ": " .. len .. " bytes needed, " ..
                                       (tvb:len() - off) .. " present")
        return nil
    end
    local t = tree:add(uet, tvb(off, len), label)
    t:add(f_header, tvb(off, len), name)
    return t
end

local function malformed(t, range, text)
    local item = t:add(range, text)
    item:add_proto_expert_info(ef_malformed, text)
    return nil
end

local function bit(v, mask) return band(v, mask) ~= 0 end

-- Which SES opcodes carry which extension header (docs/wire-format.md).
local has_sync = { [0x10] = true, [0x11] = true }
local has_atomic = { [0x03] = true, [0x04] = true, [0x0d] = true, [0x0e] = true, [0x11] = true }
local has_rndv = { [0x06] = true, [0x0a] = true }
local is_tagged = { [0x09] = true, [0x0a] = true, [0x0b] = true, [0x0d] = true, [0x0e] = true }
local max_ses_opcode = 0x11

-- ---------------------------------------------------------------------------------------------
-- PDS

-- The dpdcid slot (offset 10 of requests and CTRL): pdc_info(4) | psn_offset(12) while SYN.
-- use_rsv_pdc is 0x8 of pdc_info (0x8000 of the slot), as uet::wire::pdc_info_use_rsv_pdc.
local function dpdcid_slot(t, tvb, off, syn)
    local r = tvb(off, 2)
    local v = r:uint()
    if syn then
        local info = rshift(v, 12)
        t:add(f.pds.pdc_info, r, info)
        t:add(f.pds.use_rsv_pdc, r, bit(info, 0x8))
        t:add(f.pds.psn_offset, r, band(v, 0x0fff))
    else
        t:add(f.pds.dpdcid, r, v)
    end
end

local function pds_request(t, tvb, off, ptype, flags)
    local syn = bit(flags, 0x04)
    t:add(f.pds.retx, tvb(off, 2), bit(flags, 0x10))
    t:add(f.pds.ar, tvb(off, 2), bit(flags, 0x08))
    t:add(f.pds.syn, tvb(off, 2), syn)
    t:add(f.pds.clear_psn_offset, tvb(off + 2, 2))
    t:add(f.pds.psn, tvb(off + 4, 4))
    t:add(f.pds.spdcid, tvb(off + 8, 2))
    dpdcid_slot(t, tvb, off + 10, syn)
    if ptype == 13 or ptype == 14 then
        t:add(f.pds.ccc_id, tvb(off + 12, 1))
        t:add(f.pds.credit_target, tvb(off + 13, 3))
    end
    return tvb(off + 4, 4):uint()
end

local function pds_ack(t, tvb, off, ptype, flags)
    t:add(f.pds.m, tvb(off, 2), bit(flags, 0x20))
    t:add(f.pds.retx, tvb(off, 2), bit(flags, 0x10))
    t:add(f.pds.p, tvb(off, 2), bit(flags, 0x08))
    t:add(f.pds.req_close, tvb(off, 2), bit(flags, 0x04))
    t:add(f.pds.req_clear, tvb(off, 2), bit(flags, 0x02))
    t:add(bit(flags, 0x08) and f.pds.probe_opaque or f.pds.ack_psn_offset, tvb(off + 2, 2))
    t:add(f.pds.cack_psn, tvb(off + 4, 4))
    t:add(f.pds.spdcid, tvb(off + 8, 2))
    t:add(f.pds.dpdcid, tvb(off + 10, 2))
    if ptype == 7 then return true end
    local cc = rshift(tvb(off + 12, 1):uint(), 4)
    t:add(f.pds.cc_type, tvb(off + 12, 1), cc)
    t:add(f.pds.cc_flags, tvb(off + 12, 1), band(tvb(off + 12, 1):uint(), 0x0f))
    t:add(f.pds.mpr, tvb(off + 13, 1))
    t:add(f.pds.sack_psn_offset, tvb(off + 14, 2))
    t:add(f.pds.sack_bitmap, tvb(off + 16, 8))
    local s = off + 24
    if cc == 0 then
        t:add(f.pds.service_time, tvb(s, 2))
        local b = tvb(s + 2, 1):uint()
        t:add(f.pds.restore_cwnd, tvb(s + 2, 1), bit(b, 0x80))
        t:add(f.pds.rcv_cwnd_pend, tvb(s + 2, 1), band(b, 0x7f))
        t:add(f.pds.rcvd_bytes, tvb(s + 3, 3))
        t:add(f.pds.ooo_count, tvb(s + 6, 2))
    elseif cc == 1 then
        t:add(f.pds.credit, tvb(s, 3))
        t:add(f.pds.ooo_count, tvb(s + 6, 2))
    elseif ptype == 9 then
        local item = t:add(f.pds.cc_state, tvb(s, 8))
        item:add_proto_expert_info(ef_unknown_cc)
    else
        -- ACK_CC's state is read by receivers: a type they cannot read is an error there.
        t:add(f.pds.cc_state, tvb(s, 8))
        return malformed(t, tvb(off + 12, 1), "ACK_CC with an unknown CC type " .. cc)
    end
    if ptype == 9 then t:add(f.pds.ack_ccx_state, tvb(off + 32, 8)) end
    return true
end

local function pds_nack(t, tvb, off, ptype, flags)
    local nt = bit(flags, 0x08)
    t:add(f.pds.m, tvb(off, 2), bit(flags, 0x20))
    t:add(f.pds.retx, tvb(off, 2), bit(flags, 0x10))
    t:add(f.pds.nt, tvb(off, 2), nt)
    t:add(f.pds.nack_code, tvb(off + 2, 1))
    t:add(f.pds.vendor_code, tvb(off + 3, 1))
    t:add(nt and f.pds.nack_pkt_id or f.pds.nack_psn, tvb(off + 4, 4))
    t:add(f.pds.spdcid, tvb(off + 8, 2))
    t:add(f.pds.dpdcid, tvb(off + 10, 2))
    t:add(f.pds.payload, tvb(off + 12, 4))
    if ptype == 12 then
        local s1 = tvb(off + 16, 8):uint64()
        t:add(f.pds.nccx_type, tvb(off + 16, 1), rshift(tvb(off + 16, 1):uint(), 4))
        t:add(f.pds.nack_ccx_state1, tvb(off + 16, 8), s1:band(UInt64.new(0xffffffff, 0x0fffffff)))
        t:add(f.pds.nack_ccx_state2, tvb(off + 24, 8))
    end
end

local function pds_ctrl(t, tvb, off, ctype, flags)
    local syn = bit(flags, 0x04)
    t:add(f.pds.ctrl_type, tvb(off, 2), ctype)
    if not ctrl_type_names[ctype] then
        return malformed(t, tvb(off, 2), "unknown control type " .. ctype)
    end
    t:add(f.pds.is_rod, tvb(off, 2), bit(flags, 0x20))
    t:add(f.pds.retx, tvb(off, 2), bit(flags, 0x10))
    t:add(f.pds.ar, tvb(off, 2), bit(flags, 0x08))
    t:add(f.pds.syn, tvb(off, 2), syn)
    t:add(ctype == 6 and f.pds.probe_opaque or f.pds.rsvd, tvb(off + 2, 2))
    t:add(f.pds.psn, tvb(off + 4, 4))
    t:add(f.pds.spdcid, tvb(off + 8, 2))
    dpdcid_slot(t, tvb, off + 10, syn)
    t:add(f.pds.payload, tvb(off + 12, 4))
    return true
end

local pds_sizes = {
    [2] = 12, [3] = 12, [4] = 8, [5] = 8, [6] = 4, [7] = 12, [8] = 32, [9] = 40, [10] = 16,
    [11] = 16, [12] = 32, [13] = 16, [14] = 16,
}

-- Returns the PDS header's size and next header, or nil when it is malformed.
local function dissect_pds(tree, tvb, off, info)
    if tvb:len() - off < 2 then
        return malformed(tree, tvb(off), "PDS header truncated")
    end
    local word = tvb(off, 2):uint()
    local ptype = rshift(word, 11)
    local nxt = band(rshift(word, 7), 0x0f)
    local flags = band(word, 0x7f)
    local size = pds_sizes[ptype]
    if not size then
        return malformed(tree, tvb(off, 1), "unknown PDS type " .. ptype)
    end
    local t = header(tree, tvb, off, size, pds_header_names[ptype], "PDS " .. pds_type_names[ptype])
    if not t then return nil end
    t:add(f.pds.type, tvb(off, 1), ptype)
    info[#info + 1] = pds_type_names[ptype]
    if ptype == 11 then
        if not pds_ctrl(t, tvb, off, nxt, flags) then return nil end
        info[#info + 1] = ctrl_type_names[nxt]
        return size, 0
    end
    t:add(f.pds.next_hdr, tvb(off, 2), nxt)
    if nxt > 6 then return malformed(t, tvb(off, 2), "unknown next header " .. nxt) end
    if ptype == 2 or ptype == 3 or ptype == 13 or ptype == 14 then
        info[#info + 1] = "psn " .. pds_request(t, tvb, off, ptype, flags)
    elseif ptype >= 7 and ptype <= 9 then
        if not pds_ack(t, tvb, off, ptype, flags) then return nil end
        info[#info + 1] = "cack " .. tvb(off + 4, 4):uint()
    elseif ptype == 10 or ptype == 12 then
        pds_nack(t, tvb, off, ptype, flags)
        local code = tvb(off + 2, 1):uint()
        info[#info + 1] = nack_code_names[code] or string.format("code 0x%02x", code)
    elseif ptype == 4 or ptype == 5 then
        t:add(f.pds.m, tvb(off, 2), bit(flags, 0x20))
        t:add(f.pds.retx, tvb(off, 2), bit(flags, 0x10))
        t:add(f.pds.pkt_id, tvb(off + 4, 4))
    end
    return size, nxt
end

-- ---------------------------------------------------------------------------------------------
-- SES

-- The 12 bytes every request starts with; third is message_id (standard) or request_length.
local function ses_request_common(t, tvb, off, third_is_length)
    local op = band(tvb(off, 1):uint(), 0x3f)
    local vf = tvb(off + 1, 1)
    local v = vf:uint()
    t:add(f.ses.opcode, tvb(off, 1), op)
    t:add(f.ses.version, vf, rshift(v, 6))
    t:add(f.ses.dc, vf, bit(v, 0x20))
    t:add(f.ses.ie, vf, bit(v, 0x10))
    t:add(f.ses.rel, vf, bit(v, 0x08))
    t:add(f.ses.hd, vf, bit(v, 0x04))
    t:add(f.ses.eom, vf, bit(v, 0x02))
    t:add(f.ses.som, vf, bit(v, 0x01))
    if third_is_length then
        t:add(f.ses.request_length, tvb(off + 2, 2), band(tvb(off + 2, 2):uint(), 0x3fff))
    else
        t:add(f.ses.message_id, tvb(off + 2, 2))
    end
    t:add(f.ses.ri_generation, tvb(off + 4, 1))
    t:add(f.ses.job_id, tvb(off + 5, 3))
    t:add(f.ses.pid_on_fep, tvb(off + 8, 2), band(tvb(off + 8, 2):uint(), 0x0fff))
    t:add(f.ses.resource_index, tvb(off + 10, 2), band(tvb(off + 10, 2):uint(), 0x0fff))
    if rshift(v, 6) ~= 0 then return malformed(t, vf, "SES version " .. rshift(v, 6)) end
    if op > max_ses_opcode then return malformed(t, tvb(off, 1), "unknown SES opcode " .. op) end
    return op, v
end

local function atomic_fields(t, tvb, off, g)
    local op = tvb(off, 1):uint()
    local dt = tvb(off + 1, 1):uint()
    local ctrl = tvb(off + 2, 1):uint()
    t:add(f[g].atomic_opcode, tvb(off, 1))
    t:add(f[g].atomic_datatype, tvb(off + 1, 1))
    t:add(f[g].cacheable, tvb(off + 2, 1), bit(ctrl, 0x01))
    t:add(f[g].cpu_coherent, tvb(off + 2, 1), bit(ctrl, 0x02))
    if op > 0x14 then return malformed(t, tvb(off, 1), "unknown atomic opcode " .. op) end
    if dt > 0x11 then return malformed(t, tvb(off + 1, 1), "unknown atomic datatype " .. dt) end
    return true
end

-- The extension headers after a request's fixed bytes; returns the offset after them, or nil.
local function ses_extensions(tree, tvb, off, op, standard, info)
    if has_sync[op] then
        local t = header(tree, tvb, off, 4, "ses_sync", "SES sync extension")
        if not t then return nil end
        t:add(f.sync.group, tvb(off, 2))
        t:add(f.sync.count, tvb(off + 2, 2))
        off = off + 4
    end
    if has_atomic[op] then
        if tvb:len() - off < 1 then
            return malformed(tree, tvb(off), "SES atomic extension truncated")
        end
        local aop = tvb(off, 1):uint()
        if aop >= 0x0d and aop <= 0x13 then
            local t = header(tree, tvb, off, 36, "ses_cas", "SES compare-and-swap extension")
            if not t then return nil end
            if not atomic_fields(t, tvb, off, "cas") then return nil end
            t:add(f.cas.compare_value, tvb(off + 4, 16))
            t:add(f.cas.swap_value, tvb(off + 20, 16))
            off = off + 36
        else
            local t = header(tree, tvb, off, 4, "ses_atomic", "SES atomic extension")
            if not t then return nil end
            if not atomic_fields(t, tvb, off, "atomic") then return nil end
            off = off + 4
        end
        info[#info + 1] = atomic_op_names[aop]
    end
    if standard and has_rndv[op] then
        local t = header(tree, tvb, off, 24, "ses_rndv", "SES rendezvous extension")
        if not t then return nil end
        t:add(f.rndv.eager_length, tvb(off, 4))
        local w = tvb(off + 4, 4):uint()
        t:add(f.rndv.ri_generation, tvb(off + 4, 1))
        t:add(f.rndv.pid_on_fep, tvb(off + 5, 2), band(rshift(w, 12), 0x0fff))
        t:add(f.rndv.resource_index, tvb(off + 6, 2), band(w, 0x0fff))
        t:add(f.rndv.rd_offset, tvb(off + 8, 8))
        t:add(f.rndv.rd_memory_key, tvb(off + 16, 8))
        off = off + 24
    end
    return off
end

-- The SES header each PDS next header names: its size, uet-dump's name and a label.
local ses_forms = {
    [1] = { 20, "ses_small", "SES small request" },
    [2] = { 32, "ses_medium", "SES medium request" },
    [3] = { 44, "ses_std", "SES standard request" },
    [4] = { 12, "ses_rsp", "SES response" },
    [5] = { 20, "ses_rsp_data", "SES response with data" },
    [6] = { 12, "ses_rsp_data_small", "SES small response with data" },
}

-- Returns the offset after the SES headers, the payload_length they declare (or nil) and the
-- SES header's tree; nil when a header is malformed.
local function dissect_ses_request(tree, tvb, off, nxt, info)
    local size = ses_forms[nxt][1]
    local t = header(tree, tvb, off, size, ses_forms[nxt][2], ses_forms[nxt][3])
    if not t then return nil end
    local op, vf = ses_request_common(t, tvb, off, nxt ~= 3)
    if not op then return nil end
    info[#info + 1] = ses_opcode_names[op]
    local declared = nil
    if nxt == 1 then
        t:add(f.ses.buffer_offset, tvb(off + 12, 8))
    elseif nxt == 2 then
        t:add(bit(vf, 0x04) and f.ses.header_data or f.ses.buffer_offset, tvb(off + 12, 8))
        t:add(f.ses.initiator, tvb(off + 20, 4))
        t:add(is_tagged[op] and f.ses.match_bits or f.ses.memory_key, tvb(off + 24, 8))
    else
        t:add(f.ses.buffer_offset, tvb(off + 12, 8))
        t:add(f.ses.initiator, tvb(off + 20, 4))
        t:add(is_tagged[op] and f.ses.match_bits or f.ses.memory_key, tvb(off + 24, 8))
        if bit(vf, 0x01) then
            t:add(f.ses.header_data, tvb(off + 32, 8))
        else
            declared = band(tvb(off + 32, 4):uint(), 0x3fff)
            t:add(f.ses.payload_length, tvb(off + 32, 4), declared)
            t:add(f.ses.message_offset, tvb(off + 36, 4))
        end
        t:add(f.ses.request_length, tvb(off + 40, 4))
    end
    local after = ses_extensions(tree, tvb, off + size, op, nxt == 3, info)
    return after, declared, t
end

local function dissect_ses_response(tree, tvb, off, nxt, info)
    local size = ses_forms[nxt][1]
    local t = header(tree, tvb, off, size, ses_forms[nxt][2], ses_forms[nxt][3])
    if not t then return nil end
    local b0, b1 = tvb(off, 1):uint(), tvb(off + 1, 1):uint()
    local op = band(b0, 0x3f)
    t:add(f.ses.list, tvb(off, 1), rshift(b0, 6))
    t:add(f.ses.opcode, tvb(off, 1), op)
    t:add(f.ses.version, tvb(off + 1, 1), rshift(b1, 6))
    t:add(f.ses.return_code, tvb(off + 1, 1), band(b1, 0x3f))
    local declared = nil
    if nxt == 6 then
        declared = band(tvb(off + 2, 2):uint(), 0x3fff)
        t:add(f.ses.payload_length, tvb(off + 2, 2), declared)
    else
        t:add(f.ses.message_id, tvb(off + 2, 2))
        t:add(f.ses.ri_generation, tvb(off + 4, 1))
    end
    t:add(f.ses.job_id, tvb(off + 5, 3))
    if nxt == 4 then
        t:add(f.ses.modified_length, tvb(off + 8, 4))
    elseif nxt == 5 then
        t:add(f.ses.read_request_message_id, tvb(off + 8, 2))
        declared = band(tvb(off + 10, 2):uint(), 0x3fff)
        t:add(f.ses.payload_length, tvb(off + 10, 2), declared)
        t:add(f.ses.modified_length, tvb(off + 12, 4))
        t:add(f.ses.message_offset, tvb(off + 16, 4))
    else
        t:add(f.ses.original_request_psn, tvb(off + 8, 4))
    end
    if rshift(b1, 6) ~= 0 then return malformed(t, tvb(off + 1, 1), "SES version") end
    if op > 3 then return malformed(t, tvb(off, 1), "unknown SES response opcode " .. op) end
    info[#info + 1] = ses_rsp_opcode_names[op]
    return off + size, declared, t
end

-- ---------------------------------------------------------------------------------------------
-- The UET layers after UDP, or after the IP header with the entropy header first.

local function dissect_uet(tvb, pinfo, tree, with_entropy)
    pinfo.cols.protocol = "UET"
    local root = tree:add(uet, tvb(), "Ultra Ethernet Transport")
    local info = {}
    local off = 0
    if with_entropy then
        local t = header(root, tvb, 0, 4, "entropy", "Entropy header")
        if not t then return tvb:len() end
        t:add(f.entropy.entropy, tvb(0, 2))
        info[#info + 1] = string.format("entropy 0x%04x", tvb(0, 2):uint())
        off = 4
    end
    if tvb:len() - off >= 1 and rshift(tvb(off, 1):uint(), 3) == 1 then
        local first = tvb:len() - off >= 4 and tvb(off, 4):uint() or 0
        local sp = bit(first, 0x04000000)
        local t = header(root, tvb, off, sp and 16 or 12, "tss", "TSS")
        if not t then return tvb:len() end
        t:add(f.tss.type, tvb(off, 1), 1)
        t:add(f.tss.sp, tvb(off, 1), sp)
        t:add(f.tss.an, tvb(off, 1), bit(first, 0x01000000))
        t:add(f.tss.sdi, tvb(off + 1, 3))
        off = off + 4
        if sp then
            t:add(f.tss.ssi, tvb(off, 4))
            off = off + 4
        end
        t:add(f.tss.epoch, tvb(off, 2))
        t:add(f.tss.tsc, tvb(off + 2, 6), tvb(off + 2, 6):uint64())
        off = off + 8
        info[#info + 1] = "TSS"
        -- Everything after the TSS header, from the PDS header on, is ciphertext and the ICV.
        pinfo.cols.info = "UET " .. table.concat(info, " ")
        if tvb:len() - off < 16 then
            malformed(root, tvb(off), "TSS: no room for the 16-byte ICV")
        end
        return tvb:len()
    end
    local size, nxt = dissect_pds(root, tvb, off, info)
    pinfo.cols.info = "UET " .. table.concat(info, " ")
    if not size then return tvb:len() end
    off = off + size
    if nxt ~= 0 then
        local after, declared, t
        if nxt <= 3 then
            after, declared, t = dissect_ses_request(root, tvb, off, nxt, info)
        else
            after, declared, t = dissect_ses_response(root, tvb, off, nxt, info)
        end
        pinfo.cols.info = "UET " .. table.concat(info, " ")
        if not after then return tvb:len() end
        off = after
        local present = tvb:len() - off
        if declared and declared > present then
            t:add_proto_expert_info(ef_truncated_payload,
                string.format("truncated payload: %#x declared, %#x present", declared, present))
        end
    end
    return tvb:len()
end

function uet.dissector(tvb, pinfo, tree)
    return dissect_uet(tvb, pinfo, tree, false)
end

function uet_ip.dissector(tvb, pinfo, tree)
    return dissect_uet(tvb, pinfo, tree, true)
end

local registered_port = nil
local function register_port()
    local udp = DissectorTable.get("udp.port")
    if registered_port then udp:remove(registered_port, uet) end
    registered_port = uet.prefs.udp_port
    if registered_port ~= 0 then udp:add(registered_port, uet) end
end

function uet.prefs_changed()
    if registered_port ~= uet.prefs.udp_port then register_port() end
end

register_port()
DissectorTable.get("ip.proto"):add(253, uet_ip)
