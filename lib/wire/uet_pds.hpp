// UET 1.0 PDS (packet delivery sublayer) headers: encode/decode in network byte order.
//
// Layouts follow ultraethernet/uet-ref-prov uet_pkt_hdr.h; the ACK_CC state field widths follow
// xdp2-dev/xdp2 src/include/uet/pds.h. Every header starts with the 2-byte prologue
// type(5) | next_hdr or ctrl_type(4) | flags(7), which is folded into each struct below.
// Reserved bits are ignored on decode and written as zero; unknown type codes are rejected.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <variant>

#include "wire/bytes.hpp"
#include "wire/fields.hpp"
#include "wire/reject.hpp"

namespace uet::wire {

enum class pds_type : std::uint8_t {
    tss = 1,  // not a PDS header: the TSS security header that precedes one
    rud = 2,
    rod = 3,
    rudi_req = 4,
    rudi_resp = 5,
    uud = 6,
    ack = 7,
    ack_cc = 8,
    ack_ccx = 9,
    nack = 10,
    ctrl = 11,
    nack_ccx = 12,
    rud_cc = 13,
    rod_cc = 14,
};

// Which SES header follows the PDS header.
enum class pds_next_hdr : std::uint8_t {
    none = 0,
    request_small = 1,
    request_medium = 2,
    request_std = 3,
    response = 4,
    response_data = 5,
    response_data_small = 6,
};

// CTRL packets carry this in the prologue's next_hdr slot.
enum class ctrl_type : std::uint8_t {
    noop = 0,
    ack_req = 1,
    clear = 2,
    clear_req = 3,
    close = 4,
    close_req = 5,
    probe = 6,
    credit = 7,
    credit_req = 8,
    negotiation = 9,
};

// NACK codes. Codes outside this list are kept as they are (a NACK is still a NACK).
enum class nack_code : std::uint8_t {
    trimmed = 0x01,
    trimmed_lasthop = 0x02,
    trimmed_ack = 0x03,
    no_pdc_avail = 0x04,
    no_ccc_avail = 0x05,
    no_bitmap = 0x06,
    no_pkt_buffer = 0x07,
    no_gtd_del_avail = 0x08,
    no_ses_msg_avail = 0x09,
    no_resource = 0x0a,
    psn_oor_window = 0x0b,
    rod_ooo = 0x0d,
    inv_dpdcid = 0x0e,
    pdc_hdr_mismatch = 0x0f,
    closing = 0x10,
    closing_in_err = 0x11,
    pkt_not_rcvd = 0x12,
    gtd_resp_unavail = 0x13,
    ack_with_data = 0x14,
    invalid_syn = 0x15,
    pdc_mode_mismatch = 0x16,
    new_start_psn = 0x17,
    rcvd_ses_procg = 0x18,
    unexp_event = 0x19,
    rcvr_infer_loss = 0x1a,
    exp_nack_normal = 0xfd,
    exp_nack_err = 0xfe,
    exp_nack_fatal = 0xff,
};

// Congestion control type of ACK_CC / ACK_CCX. The field is 4 bits: ACK_CCX may carry any
// value (its state is then kept raw, see pds_ack_cc_fields::cc_state); ACK_CC only these two.
enum class cc_type : std::uint8_t { nscc = 0, credit = 1 };

// The SYN form of the dpdcid slot is pdc_info(4) | psn_offset(12). Every source agrees on that
// split; they disagree on which bit of pdc_info is use_rsv_pdc (docs/wire-format.md lists them).
// We read and write it here, the bit of the majority (xdp2, Wireshark, suet: 0x8000 of the
// slot); the other three bits are kept as received (pdc_info_rsvd) and never cause a reject.
inline constexpr std::uint8_t pdc_info_use_rsv_pdc = 0x8;

// Upper-case symbols as in the spec ("RUD", "REQ_STD", "ACK_REQ", "TRIMMED", "NSCC"); "UNKNOWN"
// for values outside the enumeration.
std::string_view pds_type_name(pds_type t) noexcept;
std::string_view pds_next_hdr_name(pds_next_hdr n) noexcept;
std::string_view ctrl_type_name(ctrl_type c) noexcept;
std::string_view cc_type_name(cc_type c) noexcept;
const char* to_string(nack_code c) noexcept;

// The fields of every RUD/ROD request, plain or CC: the 12 bytes each starts with. The two forms
// take different type codes; default_type is the one a default-built header carries.
template <pds_type default_type>
struct pds_request_fields {
    pds_type type = default_type;
    pds_next_hdr next_hdr = pds_next_hdr::none;
    bool retx = false;
    bool ar = false;
    bool syn = false;
    std::int16_t clear_psn_offset = 0;
    std::uint32_t psn = 0;
    std::uint16_t spdcid = 0;
    std::uint16_t dpdcid = 0;        // when syn == false
    bool use_rsv_pdc = false;        // when syn == true: pdc_info & pdc_info_use_rsv_pdc
    std::uint8_t pdc_info_rsvd = 0;  // when syn == true: the other bits of pdc_info (send 0)
    std::uint16_t psn_offset = 0;    // when syn == true, 12 bits
    bool operator==(const pds_request_fields&) const = default;
};

// RUD or ROD request, 12 bytes.
struct pds_rud_rod_request : pds_request_fields<pds_type::rud> {  // type rud or rod
    static constexpr std::size_t wire_size = 12;
    bool operator==(const pds_rud_rod_request&) const = default;
};

// RUD_CC or ROD_CC request, 16 bytes: a request plus the req_cc_state word.
struct pds_rud_rod_cc_request : pds_request_fields<pds_type::rud_cc> {  // type rud_cc or rod_cc
    static constexpr std::size_t wire_size = 16;
    std::uint8_t ccc_id = 0;
    std::uint32_t credit_target = 0;  // 24 bits
    bool operator==(const pds_rud_rod_cc_request&) const = default;
};

// The fields of every ACK (ACK, ACK_CC, ACK_CCX): the 12 bytes each starts with. With p (probe)
// set the ack_psn_offset slot is the probe's opaque value.
struct pds_ack_fields {
    pds_next_hdr next_hdr = pds_next_hdr::none;
    bool m = false;  // the acknowledged packet was ECN-marked
    bool retx = false;
    bool p = false;
    bool req_close = false;
    bool req_clear = false;
    std::int16_t ack_psn_offset = 0;  // probe_opaque when p
    std::uint32_t cack_psn = 0;
    std::uint16_t spdcid = 0;
    std::uint16_t dpdcid = 0;
    bool operator==(const pds_ack_fields&) const = default;
};

// ACK, 12 bytes.
struct pds_ack : pds_ack_fields {
    static constexpr std::size_t wire_size = 12;
    static constexpr pds_type type = pds_type::ack;
    bool operator==(const pds_ack&) const = default;
};

// The 64-bit ack_cc_state in its NSCC form.
struct ack_cc_nscc_state {
    std::uint16_t service_time = 0;
    bool restore_cwnd = false;
    std::uint8_t rcv_cwnd_pend = 0;  // 7 bits
    std::uint32_t rcvd_bytes = 0;    // 24 bits
    std::uint16_t ooo_count = 0;
    bool operator==(const ack_cc_nscc_state&) const = default;
};

// The 64-bit ack_cc_state in its credit form: credit(24), rsvd(24), ooo_count(16).
struct ack_cc_credit_state {
    std::uint32_t credit = 0;  // 24 bits
    std::uint16_t ooo_count = 0;
    bool operator==(const ack_cc_credit_state&) const = default;
};

// The fields of ACK_CC and ACK_CCX: an ACK's plus the 20 bytes of CC state. Only the state
// selected by cc_type is encoded; decode fills only that one. A cc_type that is neither NSCC nor
// credit (legal in ACK_CCX only) has its state word kept raw in cc_state, and encoded from it.
struct pds_ack_cc_fields : pds_ack_fields {
    wire::cc_type cc_type = wire::cc_type::nscc;
    std::uint8_t cc_flags = 0;  // 4 bits
    std::uint8_t mpr = 0;
    std::int16_t sack_psn_offset = 0;
    std::uint64_t sack_bitmap = 0;
    ack_cc_nscc_state nscc;
    ack_cc_credit_state credit;
    std::uint64_t cc_state = 0;  // the raw state word of any other cc_type
    bool operator==(const pds_ack_cc_fields&) const = default;
};

// ACK_CC, 32 bytes.
struct pds_ack_cc : pds_ack_cc_fields {
    static constexpr std::size_t wire_size = 32;
    static constexpr pds_type type = pds_type::ack_cc;
    bool operator==(const pds_ack_cc&) const = default;
};

// ACK_CCX, 40 bytes: ACK_CC plus 8 bytes of extended state (uet-ref-prov; xdp2 has 32 bytes).
struct pds_ack_ccx : pds_ack_cc_fields {
    static constexpr std::size_t wire_size = 40;
    static constexpr pds_type type = pds_type::ack_ccx;
    std::uint64_t ack_ccx_state = 0;
    bool operator==(const pds_ack_ccx&) const = default;
};

// The fields of every NACK (NACK, NACK_CCX): the 16 bytes each starts with. With nt set (a RUDI
// NACK) nack_psn carries the pkt_id.
struct pds_nack_fields {
    pds_next_hdr next_hdr = pds_next_hdr::none;
    bool m = false;
    bool retx = false;
    bool nt = false;
    nack_code code = nack_code::trimmed;
    std::uint8_t vendor_code = 0;
    std::uint32_t nack_psn = 0;  // pkt_id when nt
    std::uint16_t spdcid = 0;
    std::uint16_t dpdcid = 0;
    std::uint32_t payload = 0;
    bool operator==(const pds_nack_fields&) const = default;
};

// NACK, 16 bytes.
struct pds_nack : pds_nack_fields {
    static constexpr std::size_t wire_size = 16;
    static constexpr pds_type type = pds_type::nack;
    bool operator==(const pds_nack&) const = default;
};

// NACK_CCX, 32 bytes: NACK plus nccx_type(4), nack_ccx_state1(60), nack_ccx_state2(64).
struct pds_nack_ccx : pds_nack_fields {
    static constexpr std::size_t wire_size = 32;
    static constexpr pds_type type = pds_type::nack_ccx;
    std::uint8_t nccx_type = 0;         // 4 bits
    std::uint64_t nack_ccx_state1 = 0;  // 60 bits
    std::uint64_t nack_ccx_state2 = 0;
    bool operator==(const pds_nack_ccx&) const = default;
};

// CTRL, 16 bytes. The control type rides in the prologue's next_hdr slot; never followed by SES.
struct pds_ctrl {
    static constexpr std::size_t wire_size = 16;
    static constexpr pds_type type = pds_type::ctrl;
    wire::ctrl_type ctrl_type = wire::ctrl_type::noop;
    bool is_rod = false;
    bool retx = false;
    bool ar = false;
    bool syn = false;
    std::uint16_t probe_opaque = 0;  // reserved unless ctrl_type == probe
    std::uint32_t psn = 0;
    std::uint16_t spdcid = 0;
    std::uint16_t dpdcid = 0;        // when syn == false
    bool use_rsv_pdc = false;        // when syn == true, as in pds_request_fields
    std::uint8_t pdc_info_rsvd = 0;  // when syn == true, as in pds_request_fields
    std::uint16_t psn_offset = 0;
    std::uint32_t payload = 0;  // meaning depends on ctrl_type
    bool operator==(const pds_ctrl&) const = default;
};

// RUDI request or response, 8 bytes.
struct pds_rudi {
    static constexpr std::size_t wire_size = 8;
    pds_type type = pds_type::rudi_req;  // rudi_req or rudi_resp
    pds_next_hdr next_hdr = pds_next_hdr::none;
    bool m = false;
    bool retx = false;
    std::uint32_t pkt_id = 0;
    bool operator==(const pds_rudi&) const = default;
};

// UUD request, 4 bytes.
struct pds_uud {
    static constexpr std::size_t wire_size = 4;
    static constexpr pds_type type = pds_type::uud;
    pds_next_hdr next_hdr = pds_next_hdr::none;
    bool operator==(const pds_uud&) const = default;
};

using pds_header = std::variant<pds_rud_rod_request, pds_rud_rod_cc_request, pds_ack, pds_ack_cc,
                                pds_ack_ccx, pds_nack, pds_nack_ccx, pds_ctrl, pds_rudi, pds_uud>;

std::size_t encode(const pds_rud_rod_request& h, std::span<std::uint8_t> out) noexcept;
std::size_t encode(const pds_rud_rod_cc_request& h, std::span<std::uint8_t> out) noexcept;
std::size_t encode(const pds_ack& h, std::span<std::uint8_t> out) noexcept;
std::size_t encode(const pds_ack_cc& h, std::span<std::uint8_t> out) noexcept;
std::size_t encode(const pds_ack_ccx& h, std::span<std::uint8_t> out) noexcept;
std::size_t encode(const pds_nack& h, std::span<std::uint8_t> out) noexcept;
std::size_t encode(const pds_nack_ccx& h, std::span<std::uint8_t> out) noexcept;
std::size_t encode(const pds_ctrl& h, std::span<std::uint8_t> out) noexcept;
std::size_t encode(const pds_rudi& h, std::span<std::uint8_t> out) noexcept;
std::size_t encode(const pds_uud& h, std::span<std::uint8_t> out) noexcept;
std::size_t encode(const pds_header& h, std::span<std::uint8_t> out) noexcept;

reject_reason decode(std::span<const std::uint8_t> in, pds_rud_rod_request& out) noexcept;
// The fields of a RUD/ROD request (in, at least 12 bytes, decoded without error before) that
// change from one packet of a message to the next: the retx and ar flags, clear_psn_offset and
// the PSN; everything else in out is left as it is (wire::read_next_plain_request).
// Inline: read for every packet of a receive run.
inline void load_request_changes(const std::uint8_t* in, pds_rud_rod_request& out) noexcept;
// And the other way: those fields of h written over the 12 bytes of an earlier packet's request
// (same type, next header, SYN flag and PDCIDs) at out (wire::write_next_request_headers).
void store_request_changes(std::uint8_t* out, const pds_rud_rod_request& h) noexcept;
// The byte of the prologue that holds those two flags, and their bits there.
inline constexpr std::size_t request_flags_byte = 1;
inline constexpr std::uint8_t request_retx_flag = 0x10, request_ar_flag = 0x08;
inline constexpr std::uint8_t request_changing_flags = request_retx_flag | request_ar_flag;

inline void load_request_changes(const std::uint8_t* in, pds_rud_rod_request& out) noexcept {
    const std::uint8_t flags = in[request_flags_byte];
    out.retx = flags & request_retx_flag;
    out.ar = flags & request_ar_flag;
    out.clear_psn_offset = static_cast<std::int16_t>(load_be16(in + 2));
    out.psn = load_be32(in + 4);
}
reject_reason decode(std::span<const std::uint8_t> in, pds_rud_rod_cc_request& out) noexcept;
reject_reason decode(std::span<const std::uint8_t> in, pds_ack& out) noexcept;
reject_reason decode(std::span<const std::uint8_t> in, pds_ack_cc& out) noexcept;
reject_reason decode(std::span<const std::uint8_t> in, pds_ack_ccx& out) noexcept;
reject_reason decode(std::span<const std::uint8_t> in, pds_nack& out) noexcept;
reject_reason decode(std::span<const std::uint8_t> in, pds_nack_ccx& out) noexcept;
reject_reason decode(std::span<const std::uint8_t> in, pds_ctrl& out) noexcept;
reject_reason decode(std::span<const std::uint8_t> in, pds_rudi& out) noexcept;
reject_reason decode(std::span<const std::uint8_t> in, pds_uud& out) noexcept;

// Decodes whichever PDS header the 5-bit type names; consumed = its wire_size on success.
// Type 1 (TSS) is rejected with pds_type_not_allowed: it is not a PDS header.
reject_reason decode_pds(std::span<const std::uint8_t> in, pds_header& out,
                         std::size_t& consumed) noexcept;

// The type of whichever header h holds, and its next header (none for CTRL).
pds_type type_of(const pds_header& h) noexcept;
pds_next_hdr next_hdr_of(const pds_header& h) noexcept;
std::size_t encoded_size(const pds_header& h) noexcept;

void visit(const pds_rud_rod_request& h, field_visitor& v);
void visit(const pds_rud_rod_cc_request& h, field_visitor& v);
void visit(const pds_ack& h, field_visitor& v);
void visit(const pds_ack_cc& h, field_visitor& v);
void visit(const pds_ack_ccx& h, field_visitor& v);
void visit(const pds_nack& h, field_visitor& v);
void visit(const pds_nack_ccx& h, field_visitor& v);
void visit(const pds_ctrl& h, field_visitor& v);
void visit(const pds_rudi& h, field_visitor& v);
void visit(const pds_uud& h, field_visitor& v);
void visit(const pds_header& h, field_visitor& v);

}  // namespace uet::wire
