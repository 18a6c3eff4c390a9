#include "wire/uet_pds.hpp"

#include <type_traits>

#include "wire/bytes.hpp"

namespace uet::wire {

namespace {

// Prologue flag bits (the low 7 bits of the first 16-bit word), per uet-ref-prov.
constexpr std::uint8_t req_retx = 0x10, req_ar = 0x08, req_syn = 0x04;
constexpr std::uint8_t ack_m = 0x20, ack_retx = 0x10, ack_p = 0x08, ack_req_close = 0x04,
                       ack_req_clear = 0x02;
constexpr std::uint8_t nack_m = 0x20, nack_retx = 0x10, nack_nt = 0x08;
constexpr std::uint8_t ctrl_is_rod = 0x20, ctrl_retx = 0x10, ctrl_ar = 0x08, ctrl_syn = 0x04;
constexpr std::uint8_t rudi_m = 0x20, rudi_retx = 0x10;

// SYN form of the dpdcid slot: pdc_info(4) | psn_offset(12); use_rsv_pdc is the bit of pdc_info
// named by pdc_info_use_rsv_pdc (uet_pds.hpp says why that one).
constexpr unsigned syn_pdc_info_shift = 12;
constexpr std::uint16_t syn_psn_offset_mask = 0x0fff;

constexpr std::uint8_t max_pds_type = 14;
constexpr std::uint8_t max_next_hdr = 6;
constexpr std::uint8_t max_ctrl_type = 9;

struct prologue {
    std::uint8_t type;
    std::uint8_t next;  // next_hdr or ctrl_type
    std::uint8_t flags;
};

prologue prologue_of(std::uint16_t v) noexcept {
    return {static_cast<std::uint8_t>(v >> 11), static_cast<std::uint8_t>((v >> 7) & 0x0f),
            static_cast<std::uint8_t>(v & 0x7f)};
}

prologue read_prologue(byte_reader& r) noexcept {
    return prologue_of(r.u16());
}

constexpr std::uint16_t prologue_word(pds_type t, std::uint8_t next, std::uint8_t flags) noexcept {
    return static_cast<std::uint16_t>((static_cast<unsigned>(t) << 11) | ((next & 0x0fu) << 7) |
                                      (flags & 0x7fu));
}

void write_prologue(byte_writer& w, pds_type t, std::uint8_t next, std::uint8_t flags) noexcept {
    w.u16(prologue_word(t, next, flags));
}

constexpr std::uint8_t flag(bool set, std::uint8_t mask) noexcept {
    return set ? mask : 0;
}
constexpr std::uint8_t raw(pds_next_hdr n) noexcept {
    return static_cast<std::uint8_t>(n);
}

// Checks the prologue against what the decoder for one struct accepts. Unknown types and
// next headers are errors; a known type that belongs to another struct is "not allowed".
reject_reason check_prologue(const prologue& p, pds_type a, pds_type b, bool has_next) noexcept {
    if (p.type == 0 || p.type > max_pds_type) return reject_reason::bad_pds_type;
    if (p.type != static_cast<std::uint8_t>(a) && p.type != static_cast<std::uint8_t>(b))
        return reject_reason::pds_type_not_allowed;
    if (has_next && p.next > max_next_hdr) return reject_reason::bad_pds_next_hdr;
    return reject_reason::none;
}

// --- RUD/ROD request body, shared by the plain and the CC form ---

template <class H>
std::uint8_t request_flags(const H& h) noexcept {
    return flag(h.retx, req_retx) | flag(h.ar, req_ar) | flag(h.syn, req_syn);
}

template <class H>
std::uint16_t dpdcid_slot(const H& h) noexcept {
    if (!h.syn) return h.dpdcid;
    const unsigned info = (h.use_rsv_pdc ? pdc_info_use_rsv_pdc : 0u) |
                          (h.pdc_info_rsvd & ~unsigned{pdc_info_use_rsv_pdc} & 0x0fu);
    return static_cast<std::uint16_t>((info << syn_pdc_info_shift) |
                                      (h.psn_offset & syn_psn_offset_mask));
}

template <class H>
void set_dpdcid_slot(H& h, std::uint16_t slot) noexcept {
    // All three fields, so that a header decoded in place holds nothing of the one before.
    const std::uint8_t info = h.syn ? static_cast<std::uint8_t>(slot >> syn_pdc_info_shift) : 0;
    h.dpdcid = h.syn ? 0 : slot;
    h.use_rsv_pdc = (info & pdc_info_use_rsv_pdc) != 0;
    h.pdc_info_rsvd = info & static_cast<std::uint8_t>(~pdc_info_use_rsv_pdc & 0x0f);
    h.psn_offset = h.syn ? slot & syn_psn_offset_mask : 0;
}

// The 12 bytes every request starts with, at fixed offsets: every data packet is written here,
// and the plain form needs no more (the caller has checked the room).
template <class H>
void store_request(std::uint8_t* p, const H& h) noexcept {
    store_be16(p, prologue_word(h.type, raw(h.next_hdr), request_flags(h)));
    store_be16(p + 2, static_cast<std::uint16_t>(h.clear_psn_offset));
    store_be32(p + 4, h.psn);
    store_be16(p + 8, h.spdcid);
    store_be16(p + 10, dpdcid_slot(h));
}

// The 12 bytes store_request writes, read back at fixed offsets (the caller has checked that
// they are there); returns their prologue for the caller to check.
template <class H>
prologue load_request(const std::uint8_t* b, H& h) noexcept {
    const prologue p = prologue_of(load_be16(b));
    h.type = static_cast<pds_type>(p.type);
    h.next_hdr = static_cast<pds_next_hdr>(p.next);
    h.retx = p.flags & req_retx;
    h.ar = p.flags & req_ar;
    h.syn = p.flags & req_syn;
    h.clear_psn_offset = static_cast<std::int16_t>(load_be16(b + 2));
    h.psn = load_be32(b + 4);
    h.spdcid = load_be16(b + 8);
    set_dpdcid_slot(h, load_be16(b + 10));
    return p;
}

// --- ACK body, shared by ACK, ACK_CC and ACK_CCX ---

// The 12 bytes every ACK starts with, as store_request.
template <class H>
void store_ack(std::uint8_t* p, const H& h) noexcept {
    const std::uint8_t flags = flag(h.m, ack_m) | flag(h.retx, ack_retx) | flag(h.p, ack_p) |
                               flag(h.req_close, ack_req_close) | flag(h.req_clear, ack_req_clear);
    store_be16(p, prologue_word(h.type, raw(h.next_hdr), flags));
    store_be16(p + 2, static_cast<std::uint16_t>(h.ack_psn_offset));
    store_be32(p + 4, h.cack_psn);
    store_be16(p + 8, h.spdcid);
    store_be16(p + 10, h.dpdcid);
}

template <class H>
void read_ack(byte_reader& r, const prologue& p, H& h) noexcept {
    h.next_hdr = static_cast<pds_next_hdr>(p.next);
    h.m = p.flags & ack_m;
    h.retx = p.flags & ack_retx;
    h.p = p.flags & ack_p;
    h.req_close = p.flags & ack_req_close;
    h.req_clear = p.flags & ack_req_clear;
    h.ack_psn_offset = static_cast<std::int16_t>(r.u16());
    h.cack_psn = r.u32();
    h.spdcid = r.u16();
    h.dpdcid = r.u16();
}

// ack_cc_state bit layout (xdp2 pds.h): NSCC service_time(16) restore_cwnd(1) rcv_cwnd_pend(7)
// rcvd_bytes(24) ooo_count(16); credit: credit(24) rsvd(24) ooo_count(16).
std::uint64_t pack_cc_state(cc_type t, const ack_cc_nscc_state& n, const ack_cc_credit_state& c,
                            std::uint64_t raw) noexcept {
    if (t != cc_type::nscc && t != cc_type::credit) return raw;
    if (t == cc_type::credit) return (std::uint64_t{c.credit & 0xffffffu} << 40) | c.ooo_count;
    return (std::uint64_t{n.service_time} << 48) | (std::uint64_t{n.restore_cwnd} << 47) |
           (std::uint64_t{n.rcv_cwnd_pend & 0x7fu} << 40) |
           (std::uint64_t{n.rcvd_bytes & 0xffffffu} << 16) | n.ooo_count;
}

void unpack_cc_state(std::uint64_t v, cc_type t, ack_cc_nscc_state& n, ack_cc_credit_state& c,
                     std::uint64_t& raw) noexcept {
    raw = 0;
    if (t != cc_type::nscc && t != cc_type::credit) {
        raw = v;
        return;
    }
    if (t == cc_type::credit) {
        c.credit = static_cast<std::uint32_t>((v >> 40) & 0xffffff);
        c.ooo_count = static_cast<std::uint16_t>(v);
        return;
    }
    n.service_time = static_cast<std::uint16_t>(v >> 48);
    n.restore_cwnd = (v >> 47) & 1;
    n.rcv_cwnd_pend = static_cast<std::uint8_t>((v >> 40) & 0x7f);
    n.rcvd_bytes = static_cast<std::uint32_t>((v >> 16) & 0xffffff);
    n.ooo_count = static_cast<std::uint16_t>(v);
}

template <class H>
void write_cc(byte_writer& w, const H& h) noexcept {
    w.u8(static_cast<std::uint8_t>((static_cast<unsigned>(h.cc_type) << 4) | (h.cc_flags & 0x0f)));
    w.u8(h.mpr);
    w.u16(static_cast<std::uint16_t>(h.sack_psn_offset));
    w.u64(h.sack_bitmap);
    w.u64(pack_cc_state(h.cc_type, h.nscc, h.credit, h.cc_state));
}

// Returns false when the cc_type is not one we know how to read the state of (the state is then
// in cc_state, raw).
template <class H>
bool read_cc(byte_reader& r, H& h) noexcept {
    const std::uint8_t tf = r.u8();
    h.cc_type = static_cast<cc_type>(tf >> 4);
    h.cc_flags = tf & 0x0f;
    h.mpr = r.u8();
    h.sack_psn_offset = static_cast<std::int16_t>(r.u16());
    h.sack_bitmap = r.u64();
    const std::uint64_t state = r.u64();
    unpack_cc_state(state, h.cc_type, h.nscc, h.credit, h.cc_state);
    return (tf >> 4) <= static_cast<std::uint8_t>(cc_type::credit);
}

// --- NACK body, shared by NACK and NACK_CCX ---

template <class H>
void write_nack(byte_writer& w, const H& h) noexcept {
    const std::uint8_t flags = flag(h.m, nack_m) | flag(h.retx, nack_retx) | flag(h.nt, nack_nt);
    write_prologue(w, h.type, raw(h.next_hdr), flags);
    w.u8(static_cast<std::uint8_t>(h.code));
    w.u8(h.vendor_code);
    w.u32(h.nack_psn);
    w.u16(h.spdcid);
    w.u16(h.dpdcid);
    w.u32(h.payload);
}

template <class H>
void read_nack(byte_reader& r, const prologue& p, H& h) noexcept {
    h.next_hdr = static_cast<pds_next_hdr>(p.next);
    h.m = p.flags & nack_m;
    h.retx = p.flags & nack_retx;
    h.nt = p.flags & nack_nt;
    h.code = static_cast<nack_code>(r.u8());
    h.vendor_code = r.u8();
    h.nack_psn = r.u32();
    h.spdcid = r.u16();
    h.dpdcid = r.u16();
    h.payload = r.u32();
}

// Shared tail of every fixed-size decode: a short buffer first, then the prologue's codes.
reject_reason finish(const byte_reader& r, reject_reason prologue_check) noexcept {
    return r.failed() ? reject_reason::truncated : prologue_check;
}

template <class H>
std::size_t encode_with(const H& h, std::span<std::uint8_t> out,
                        void (*body)(byte_writer&, const H&)) noexcept {
    if (out.size() < H::wire_size) return 0;
    byte_writer w(out);
    body(w, h);
    return w.result();
}

}  // namespace

// --- names ---

std::string_view pds_type_name(pds_type t) noexcept {
    switch (t) {
        case pds_type::tss:
            return "TSS";
        case pds_type::rud:
            return "RUD";
        case pds_type::rod:
            return "ROD";
        case pds_type::rudi_req:
            return "RUDI_REQ";
        case pds_type::rudi_resp:
            return "RUDI_RESP";
        case pds_type::uud:
            return "UUD";
        case pds_type::ack:
            return "ACK";
        case pds_type::ack_cc:
            return "ACK_CC";
        case pds_type::ack_ccx:
            return "ACK_CCX";
        case pds_type::nack:
            return "NACK";
        case pds_type::ctrl:
            return "CTRL";
        case pds_type::nack_ccx:
            return "NACK_CCX";
        case pds_type::rud_cc:
            return "RUD_CC";
        case pds_type::rod_cc:
            return "ROD_CC";
    }
    return "UNKNOWN";
}

std::string_view pds_next_hdr_name(pds_next_hdr n) noexcept {
    switch (n) {
        case pds_next_hdr::none:
            return "NONE";
        case pds_next_hdr::request_small:
            return "REQ_SMALL";
        case pds_next_hdr::request_medium:
            return "REQ_MEDIUM";
        case pds_next_hdr::request_std:
            return "REQ_STD";
        case pds_next_hdr::response:
            return "RSP";
        case pds_next_hdr::response_data:
            return "RSP_DATA";
        case pds_next_hdr::response_data_small:
            return "RSP_DATA_SMALL";
    }
    return "UNKNOWN";
}

std::string_view ctrl_type_name(ctrl_type c) noexcept {
    switch (c) {
        case ctrl_type::noop:
            return "NOOP";
        case ctrl_type::ack_req:
            return "ACK_REQ";
        case ctrl_type::clear:
            return "CLEAR";
        case ctrl_type::clear_req:
            return "CLEAR_REQ";
        case ctrl_type::close:
            return "CLOSE";
        case ctrl_type::close_req:
            return "CLOSE_REQ";
        case ctrl_type::probe:
            return "PROBE";
        case ctrl_type::credit:
            return "CREDIT";
        case ctrl_type::credit_req:
            return "CREDIT_REQ";
        case ctrl_type::negotiation:
            return "NEGOTIATION";
    }
    return "UNKNOWN";
}

std::string_view cc_type_name(cc_type c) noexcept {
    switch (c) {
        case cc_type::nscc:
            return "NSCC";
        case cc_type::credit:
            return "CREDIT";
    }
    return "UNKNOWN";
}

const char* to_string(nack_code c) noexcept {
    switch (c) {
        case nack_code::trimmed:
            return "TRIMMED";
        case nack_code::trimmed_lasthop:
            return "TRIMMED_LASTHOP";
        case nack_code::trimmed_ack:
            return "TRIMMED_ACK";
        case nack_code::no_pdc_avail:
            return "NO_PDC_AVAIL";
        case nack_code::no_ccc_avail:
            return "NO_CCC_AVAIL";
        case nack_code::no_bitmap:
            return "NO_BITMAP";
        case nack_code::no_pkt_buffer:
            return "NO_PKT_BUFFER";
        case nack_code::no_gtd_del_avail:
            return "NO_GTD_DEL_AVAIL";
        case nack_code::no_ses_msg_avail:
            return "NO_SES_MSG_AVAIL";
        case nack_code::no_resource:
            return "NO_RESOURCE";
        case nack_code::psn_oor_window:
            return "PSN_OOR_WINDOW";
        case nack_code::rod_ooo:
            return "ROD_OOO";
        case nack_code::inv_dpdcid:
            return "INV_DPDCID";
        case nack_code::pdc_hdr_mismatch:
            return "PDC_HDR_MISMATCH";
        case nack_code::closing:
            return "CLOSING";
        case nack_code::closing_in_err:
            return "CLOSING_IN_ERR";
        case nack_code::pkt_not_rcvd:
            return "PKT_NOT_RCVD";
        case nack_code::gtd_resp_unavail:
            return "GTD_RESP_UNAVAIL";
        case nack_code::ack_with_data:
            return "ACK_WITH_DATA";
        case nack_code::invalid_syn:
            return "INVALID_SYN";
        case nack_code::pdc_mode_mismatch:
            return "PDC_MODE_MISMATCH";
        case nack_code::new_start_psn:
            return "NEW_START_PSN";
        case nack_code::rcvd_ses_procg:
            return "RCVD_SES_PROCG";
        case nack_code::unexp_event:
            return "UNEXP_EVENT";
        case nack_code::rcvr_infer_loss:
            return "RCVR_INFER_LOSS";
        case nack_code::exp_nack_normal:
            return "EXP_NACK_NORMAL";
        case nack_code::exp_nack_err:
            return "EXP_NACK_ERR";
        case nack_code::exp_nack_fatal:
            return "EXP_NACK_FATAL";
    }
    return "UNKNOWN";
}

// --- encode ---

std::size_t encode(const pds_rud_rod_request& h, std::span<std::uint8_t> out) noexcept {
    if (out.size() < h.wire_size) return 0;
    store_request(out.data(), h);
    return h.wire_size;
}

std::size_t encode(const pds_rud_rod_cc_request& h, std::span<std::uint8_t> out) noexcept {
    if (out.size() < h.wire_size) return 0;
    store_request(out.data(), h);
    out[12] = h.ccc_id;
    store_be24(&out[13], h.credit_target & 0xffffff);
    return h.wire_size;
}

std::size_t encode(const pds_ack& h, std::span<std::uint8_t> out) noexcept {
    if (out.size() < h.wire_size) return 0;
    store_ack(out.data(), h);
    return h.wire_size;
}

// ACK_CC and ACK_CCX: the ACK's 12 bytes, then the CC state (and the CCX word).
template <class H>
std::size_t encode_ack_with_cc(const H& h, std::span<std::uint8_t> out) noexcept {
    if (out.size() < H::wire_size) return 0;
    store_ack(out.data(), h);
    byte_writer w(out.subspan(pds_ack::wire_size, H::wire_size - pds_ack::wire_size));
    write_cc(w, h);
    if constexpr (std::is_same_v<H, pds_ack_ccx>) w.u64(h.ack_ccx_state);
    return w.result() == H::wire_size - pds_ack::wire_size ? H::wire_size : 0;
}

std::size_t encode(const pds_ack_cc& h, std::span<std::uint8_t> out) noexcept {
    return encode_ack_with_cc(h, out);
}

std::size_t encode(const pds_ack_ccx& h, std::span<std::uint8_t> out) noexcept {
    return encode_ack_with_cc(h, out);
}

std::size_t encode(const pds_nack& h, std::span<std::uint8_t> out) noexcept {
    return encode_with<pds_nack>(h, out, write_nack);
}

std::size_t encode(const pds_nack_ccx& h, std::span<std::uint8_t> out) noexcept {
    return encode_with<pds_nack_ccx>(h, out, [](byte_writer& w, const auto& x) {
        write_nack(w, x);
        w.u64((std::uint64_t{x.nccx_type & 0x0fu} << 60) |
              (x.nack_ccx_state1 & 0x0fffffffffffffffULL));
        w.u64(x.nack_ccx_state2);
    });
}

std::size_t encode(const pds_ctrl& h, std::span<std::uint8_t> out) noexcept {
    return encode_with<pds_ctrl>(h, out, [](byte_writer& w, const auto& x) {
        const std::uint8_t flags = flag(x.is_rod, ctrl_is_rod) | flag(x.retx, ctrl_retx) |
                                   flag(x.ar, ctrl_ar) | flag(x.syn, ctrl_syn);
        write_prologue(w, x.type, static_cast<std::uint8_t>(x.ctrl_type), flags);
        w.u16(x.probe_opaque);
        w.u32(x.psn);
        w.u16(x.spdcid);
        w.u16(dpdcid_slot(x));
        w.u32(x.payload);
    });
}

std::size_t encode(const pds_rudi& h, std::span<std::uint8_t> out) noexcept {
    return encode_with<pds_rudi>(h, out, [](byte_writer& w, const auto& x) {
        write_prologue(w, x.type, raw(x.next_hdr), flag(x.m, rudi_m) | flag(x.retx, rudi_retx));
        w.u16(0);
        w.u32(x.pkt_id);
    });
}

std::size_t encode(const pds_uud& h, std::span<std::uint8_t> out) noexcept {
    return encode_with<pds_uud>(h, out, [](byte_writer& w, const auto& x) {
        write_prologue(w, x.type, raw(x.next_hdr), 0);
        w.u16(0);
    });
}

std::size_t encode(const pds_header& h, std::span<std::uint8_t> out) noexcept {
    return std::visit([out](const auto& x) { return encode(x, out); }, h);
}

// --- decode ---

reject_reason decode(std::span<const std::uint8_t> in, pds_rud_rod_request& out) noexcept {
    // Decoded in place (every data packet): out is partly written when this fails.
    if (in.size() < pds_rud_rod_request::wire_size) return reject_reason::truncated;
    const prologue p = load_request(in.data(), out);
    return check_prologue(p, pds_type::rud, pds_type::rod, true);
}

static_assert(request_retx_flag == req_retx && request_ar_flag == req_ar);

void store_request_changes(std::uint8_t* out, const pds_rud_rod_request& h) noexcept {
    out[request_flags_byte] =
        static_cast<std::uint8_t>((out[request_flags_byte] & ~request_changing_flags) |
                                  flag(h.retx, req_retx) | flag(h.ar, req_ar));
    store_be16(out + 2, static_cast<std::uint16_t>(h.clear_psn_offset));
    store_be32(out + 4, h.psn);
}

reject_reason decode(std::span<const std::uint8_t> in, pds_rud_rod_cc_request& out) noexcept {
    if (in.size() < pds_rud_rod_cc_request::wire_size) return reject_reason::truncated;
    pds_rud_rod_cc_request h;
    const prologue p = load_request(in.data(), h);
    h.ccc_id = in[12];
    h.credit_target = load_be24(&in[13]);
    const reject_reason rc = check_prologue(p, pds_type::rud_cc, pds_type::rod_cc, true);
    if (rc == reject_reason::none) out = h;
    return rc;
}

reject_reason decode(std::span<const std::uint8_t> in, pds_ack& out) noexcept {
    byte_reader r(in);
    const prologue p = read_prologue(r);
    pds_ack h;
    read_ack(r, p, h);
    const reject_reason rc = finish(r, check_prologue(p, pds_type::ack, pds_type::ack, true));
    if (rc == reject_reason::none) out = h;
    return rc;
}

reject_reason decode(std::span<const std::uint8_t> in, pds_ack_cc& out) noexcept {
    byte_reader r(in);
    const prologue p = read_prologue(r);
    pds_ack_cc h;
    read_ack(r, p, h);
    const bool cc_ok = read_cc(r, h);
    reject_reason rc = finish(r, check_prologue(p, pds_type::ack_cc, pds_type::ack_cc, true));
    if (rc == reject_reason::none && !cc_ok) rc = reject_reason::bad_pds_cc_type;
    if (rc == reject_reason::none) out = h;
    return rc;
}

reject_reason decode(std::span<const std::uint8_t> in, pds_ack_ccx& out) noexcept {
    byte_reader r(in);
    const prologue p = read_prologue(r);
    pds_ack_ccx h;
    read_ack(r, p, h);
    // Any CC type is legal in an extended ACK: one we do not know keeps its state raw.
    read_cc(r, h);
    h.ack_ccx_state = r.u64();
    const reject_reason rc =
        finish(r, check_prologue(p, pds_type::ack_ccx, pds_type::ack_ccx, true));
    if (rc == reject_reason::none) out = h;
    return rc;
}

reject_reason decode(std::span<const std::uint8_t> in, pds_nack& out) noexcept {
    byte_reader r(in);
    const prologue p = read_prologue(r);
    pds_nack h;
    read_nack(r, p, h);
    const reject_reason rc = finish(r, check_prologue(p, pds_type::nack, pds_type::nack, true));
    if (rc == reject_reason::none) out = h;
    return rc;
}

reject_reason decode(std::span<const std::uint8_t> in, pds_nack_ccx& out) noexcept {
    byte_reader r(in);
    const prologue p = read_prologue(r);
    pds_nack_ccx h;
    read_nack(r, p, h);
    const std::uint64_t s1 = r.u64();
    h.nccx_type = static_cast<std::uint8_t>(s1 >> 60);
    h.nack_ccx_state1 = s1 & 0x0fffffffffffffffULL;
    h.nack_ccx_state2 = r.u64();
    const reject_reason rc =
        finish(r, check_prologue(p, pds_type::nack_ccx, pds_type::nack_ccx, true));
    if (rc == reject_reason::none) out = h;
    return rc;
}

reject_reason decode(std::span<const std::uint8_t> in, pds_ctrl& out) noexcept {
    byte_reader r(in);
    const prologue p = read_prologue(r);
    pds_ctrl h;
    h.ctrl_type = static_cast<ctrl_type>(p.next);
    h.is_rod = p.flags & ctrl_is_rod;
    h.retx = p.flags & ctrl_retx;
    h.ar = p.flags & ctrl_ar;
    h.syn = p.flags & ctrl_syn;
    h.probe_opaque = r.u16();
    h.psn = r.u32();
    h.spdcid = r.u16();
    set_dpdcid_slot(h, r.u16());
    h.payload = r.u32();
    reject_reason rc = finish(r, check_prologue(p, pds_type::ctrl, pds_type::ctrl, false));
    if (rc == reject_reason::none && p.next > max_ctrl_type) rc = reject_reason::bad_pds_ctrl_type;
    if (rc == reject_reason::none) out = h;
    return rc;
}

reject_reason decode(std::span<const std::uint8_t> in, pds_rudi& out) noexcept {
    byte_reader r(in);
    const prologue p = read_prologue(r);
    pds_rudi h;
    h.type = static_cast<pds_type>(p.type);
    h.next_hdr = static_cast<pds_next_hdr>(p.next);
    h.m = p.flags & rudi_m;
    h.retx = p.flags & rudi_retx;
    r.skip(2);
    h.pkt_id = r.u32();
    const reject_reason rc =
        finish(r, check_prologue(p, pds_type::rudi_req, pds_type::rudi_resp, true));
    if (rc == reject_reason::none) out = h;
    return rc;
}

reject_reason decode(std::span<const std::uint8_t> in, pds_uud& out) noexcept {
    byte_reader r(in);
    const prologue p = read_prologue(r);
    pds_uud h;
    h.next_hdr = static_cast<pds_next_hdr>(p.next);
    r.skip(2);
    const reject_reason rc = finish(r, check_prologue(p, pds_type::uud, pds_type::uud, true));
    if (rc == reject_reason::none) out = h;
    return rc;
}

namespace {

template <class H>
reject_reason decode_as(std::span<const std::uint8_t> in, pds_header& out,
                        std::size_t& consumed) noexcept {
    // Into its place in the variant: a local copied in afterwards is read back right after the
    // decoder's narrower stores, a store-forwarding stall on every frame.
    const reject_reason rc = decode(in, out.emplace<H>());
    if (rc != reject_reason::none) return rc;
    consumed = H::wire_size;
    return rc;
}

}  // namespace

reject_reason decode_pds(std::span<const std::uint8_t> in, pds_header& out,
                         std::size_t& consumed) noexcept {
    consumed = 0;
    if (in.empty()) return reject_reason::truncated;
    switch (static_cast<pds_type>(in[0] >> 3)) {
        case pds_type::rud:
        case pds_type::rod:
            return decode_as<pds_rud_rod_request>(in, out, consumed);
        case pds_type::rud_cc:
        case pds_type::rod_cc:
            return decode_as<pds_rud_rod_cc_request>(in, out, consumed);
        case pds_type::rudi_req:
        case pds_type::rudi_resp:
            return decode_as<pds_rudi>(in, out, consumed);
        case pds_type::uud:
            return decode_as<pds_uud>(in, out, consumed);
        case pds_type::ack:
            return decode_as<pds_ack>(in, out, consumed);
        case pds_type::ack_cc:
            return decode_as<pds_ack_cc>(in, out, consumed);
        case pds_type::ack_ccx:
            return decode_as<pds_ack_ccx>(in, out, consumed);
        case pds_type::nack:
            return decode_as<pds_nack>(in, out, consumed);
        case pds_type::nack_ccx:
            return decode_as<pds_nack_ccx>(in, out, consumed);
        case pds_type::ctrl:
            return decode_as<pds_ctrl>(in, out, consumed);
        case pds_type::tss:
            return reject_reason::pds_type_not_allowed;
    }
    return reject_reason::bad_pds_type;
}

pds_type type_of(const pds_header& h) noexcept {
    return std::visit([](const auto& x) { return pds_type{x.type}; }, h);
}

pds_next_hdr next_hdr_of(const pds_header& h) noexcept {
    return std::visit(
        [](const auto& x) {
            if constexpr (std::is_same_v<std::decay_t<decltype(x)>, pds_ctrl>)
                return pds_next_hdr::none;
            else
                return x.next_hdr;
        },
        h);
}

std::size_t encoded_size(const pds_header& h) noexcept {
    return std::visit([](const auto& x) { return std::decay_t<decltype(x)>::wire_size; }, h);
}

// --- visit ---
//
// Every header the same shape: begin(its name), its type, its fields in wire order, end. The
// fields of a part that several headers share (the request, ACK, ACK_CC and NACK fields) are
// visited by one visit_fields for that part, as they are declared once in uet_pds.hpp.

namespace {

// "pds_" and the type in lower case; "pds" for a value outside the enumeration.
std::string_view header_name(pds_type t) noexcept {
    switch (t) {
        case pds_type::rud:
            return "pds_rud";
        case pds_type::rod:
            return "pds_rod";
        case pds_type::rud_cc:
            return "pds_rud_cc";
        case pds_type::rod_cc:
            return "pds_rod_cc";
        case pds_type::rudi_req:
            return "pds_rudi_req";
        case pds_type::rudi_resp:
            return "pds_rudi_resp";
        case pds_type::uud:
            return "pds_uud";
        case pds_type::ack:
            return "pds_ack";
        case pds_type::ack_cc:
            return "pds_ack_cc";
        case pds_type::ack_ccx:
            return "pds_ack_ccx";
        case pds_type::nack:
            return "pds_nack";
        case pds_type::nack_ccx:
            return "pds_nack_ccx";
        case pds_type::ctrl:
            return "pds_ctrl";
        case pds_type::tss:
            break;
    }
    return "pds";
}

void visit_next(pds_next_hdr n, field_visitor& v) {
    v.field("next_hdr", static_cast<std::uint8_t>(n), pds_next_hdr_name(n));
}

// Signed PSN offsets are reported as their 16 raw wire bits (the visitor takes unsigned values).
std::uint64_t bits16(std::int16_t x) noexcept {
    return static_cast<std::uint16_t>(x);
}

template <class H>
void visit_dpdcid_slot(const H& h, field_visitor& v) {
    if (h.syn) {
        v.field("pdc_info", (h.use_rsv_pdc ? pdc_info_use_rsv_pdc : 0u) | h.pdc_info_rsvd);
        v.field("use_rsv_pdc", h.use_rsv_pdc);
        v.field("psn_offset", h.psn_offset);
    } else {
        v.field("dpdcid", h.dpdcid);
    }
}

// The fields after the type; type is visited by visit_header.
template <pds_type default_type>
void visit_fields(const pds_request_fields<default_type>& h, field_visitor& v) {
    visit_next(h.next_hdr, v);
    v.field("retx", h.retx);
    v.field("ar", h.ar);
    v.field("syn", h.syn);
    v.field("clear_psn_offset", bits16(h.clear_psn_offset));
    v.field("psn", h.psn);
    v.field("spdcid", h.spdcid);
    visit_dpdcid_slot(h, v);
}

void visit_fields(const pds_rud_rod_cc_request& h, field_visitor& v) {
    visit_fields<pds_type::rud_cc>(h, v);
    v.field("ccc_id", h.ccc_id);
    v.field("credit_target", h.credit_target);
}

void visit_fields(const pds_ack_fields& h, field_visitor& v) {
    visit_next(h.next_hdr, v);
    v.field("m", h.m);
    v.field("retx", h.retx);
    v.field("p", h.p);
    v.field("req_close", h.req_close);
    v.field("req_clear", h.req_clear);
    v.field(h.p ? "probe_opaque" : "ack_psn_offset", bits16(h.ack_psn_offset));
    v.field("cack_psn", h.cack_psn);
    v.field("spdcid", h.spdcid);
    v.field("dpdcid", h.dpdcid);
}

void visit_fields(const pds_ack_cc_fields& h, field_visitor& v) {
    visit_fields(static_cast<const pds_ack_fields&>(h), v);
    v.field("cc_type", static_cast<std::uint8_t>(h.cc_type), cc_type_name(h.cc_type));
    v.field("cc_flags", h.cc_flags);
    v.field("mpr", h.mpr);
    v.field("sack_psn_offset", bits16(h.sack_psn_offset));
    v.field("sack_bitmap", h.sack_bitmap);
    if (h.cc_type == cc_type::credit) {
        v.field("credit", h.credit.credit);
        v.field("ooo_count", h.credit.ooo_count);
        return;
    }
    if (h.cc_type != cc_type::nscc) {
        v.field("cc_state", h.cc_state);
        return;
    }
    v.field("service_time", h.nscc.service_time);
    v.field("restore_cwnd", h.nscc.restore_cwnd);
    v.field("rcv_cwnd_pend", h.nscc.rcv_cwnd_pend);
    v.field("rcvd_bytes", h.nscc.rcvd_bytes);
    v.field("ooo_count", h.nscc.ooo_count);
}

void visit_fields(const pds_ack_ccx& h, field_visitor& v) {
    visit_fields(static_cast<const pds_ack_cc_fields&>(h), v);
    v.field("ack_ccx_state", h.ack_ccx_state);
}

void visit_fields(const pds_nack_fields& h, field_visitor& v) {
    visit_next(h.next_hdr, v);
    v.field("m", h.m);
    v.field("retx", h.retx);
    v.field("nt", h.nt);
    v.field("nack_code", static_cast<std::uint8_t>(h.code), to_string(h.code));
    v.field("vendor_code", h.vendor_code);
    v.field(h.nt ? "nack_pkt_id" : "nack_psn", h.nack_psn);
    v.field("spdcid", h.spdcid);
    v.field("dpdcid", h.dpdcid);
    v.field("payload", h.payload);
}

void visit_fields(const pds_nack_ccx& h, field_visitor& v) {
    visit_fields(static_cast<const pds_nack_fields&>(h), v);
    v.field("nccx_type", h.nccx_type);
    v.field("nack_ccx_state1", h.nack_ccx_state1);
    v.field("nack_ccx_state2", h.nack_ccx_state2);
}

void visit_fields(const pds_ctrl& h, field_visitor& v) {
    v.field("ctrl_type", static_cast<std::uint8_t>(h.ctrl_type), ctrl_type_name(h.ctrl_type));
    v.field("is_rod", h.is_rod);
    v.field("retx", h.retx);
    v.field("ar", h.ar);
    v.field("syn", h.syn);
    v.field(h.ctrl_type == ctrl_type::probe ? "probe_opaque" : "rsvd", h.probe_opaque);
    v.field("psn", h.psn);
    v.field("spdcid", h.spdcid);
    visit_dpdcid_slot(h, v);
    v.field("payload", h.payload);
}

void visit_fields(const pds_rudi& h, field_visitor& v) {
    visit_next(h.next_hdr, v);
    v.field("m", h.m);
    v.field("retx", h.retx);
    v.field("pkt_id", h.pkt_id);
}

void visit_fields(const pds_uud& h, field_visitor& v) {
    visit_next(h.next_hdr, v);
}

template <class H>
void visit_header(const H& h, field_visitor& v) {
    const pds_type t = h.type;
    v.begin(header_name(t));
    v.field("type", static_cast<std::uint8_t>(t), pds_type_name(t));
    visit_fields(h, v);
    v.end();
}

}  // namespace

void visit(const pds_rud_rod_request& h, field_visitor& v) {
    visit_header(h, v);
}
void visit(const pds_rud_rod_cc_request& h, field_visitor& v) {
    visit_header(h, v);
}
void visit(const pds_ack& h, field_visitor& v) {
    visit_header(h, v);
}
void visit(const pds_ack_cc& h, field_visitor& v) {
    visit_header(h, v);
}
void visit(const pds_ack_ccx& h, field_visitor& v) {
    visit_header(h, v);
}
void visit(const pds_nack& h, field_visitor& v) {
    visit_header(h, v);
}
void visit(const pds_nack_ccx& h, field_visitor& v) {
    visit_header(h, v);
}
void visit(const pds_ctrl& h, field_visitor& v) {
    visit_header(h, v);
}
void visit(const pds_rudi& h, field_visitor& v) {
    visit_header(h, v);
}
void visit(const pds_uud& h, field_visitor& v) {
    visit_header(h, v);
}

void visit(const pds_header& h, field_visitor& v) {
    std::visit([&v](const auto& x) { visit(x, v); }, h);
}

}  // namespace uet::wire
