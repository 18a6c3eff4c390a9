// UET 1.0 SES (semantic sublayer) headers: encode/decode in network byte order.
//
// Layouts follow ultraethernet/uet-ref-prov uet_pkt_hdr.h (opcodes 0x10/0x11, the 14-bit payload
// length of a response with data, the 24-byte rendezvous extension and the atomic semantic-control
// bits are where xdp2-dev/xdp2 ses.h differs; we follow uet-ref-prov there). Request headers
// start with opcode(6) | version(2) + flags DC IE REL HD EOM SOM | msg_id or request_length(14) |
// ri_generation(8) job_id(24) | pid_on_fep(12) | resource_index(12).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <variant>

#include "wire/bytes.hpp"
#include "wire/fields.hpp"
#include "wire/reject.hpp"
#include "wire/uet_pds.hpp"

namespace uet::wire {

inline constexpr std::uint8_t ses_version = 0;

enum class ses_opcode : std::uint8_t {
    no_op = 0x00,
    write = 0x01,
    read = 0x02,
    atomic = 0x03,
    fetching_atomic = 0x04,
    send = 0x05,
    rendezvous_send = 0x06,
    datagram_send = 0x07,
    deferrable_send = 0x08,
    tagged_send = 0x09,
    rendezvous_tsend = 0x0a,
    deferrable_tsend = 0x0b,
    deferrable_rtr = 0x0c,
    tsend_atomic = 0x0d,
    tsend_fetch_atomic = 0x0e,
    msg_error = 0x0f,
    sync_write = 0x10,   // uet-ref-prov only; xdp2 calls 0x10.. reserved
    sync_atomic = 0x11,  // uet-ref-prov only
};

enum class ses_response_opcode : std::uint8_t {
    default_response = 0x00,
    response = 0x01,
    response_with_data = 0x02,
    no_response = 0x03,
};

// Return codes are carried as they are: an unknown one is the initiator's business, not a
// malformed header.
enum class ses_return_code : std::uint8_t {
    null = 0x00,
    ok = 0x01,
    bad_generation = 0x02,
    disabled = 0x03,
    disabled_gen = 0x04,
    no_match = 0x05,
    unsupported_op = 0x06,
    unsupported_size = 0x07,
    at_invalid = 0x08,
    at_perm = 0x09,
    at_ats_error = 0x0a,
    at_no_trans = 0x0b,
    at_out_of_range = 0x0c,
    host_poisoned = 0x0d,
    host_unsuccess_cmpl = 0x0e,
    amo_unsupported_op = 0x0f,
    amo_unsupported_dt = 0x10,
    amo_unsupported_size = 0x11,
    amo_unaligned = 0x12,
    amo_fp_nan = 0x13,
    amo_fp_underflow = 0x14,
    amo_fp_overflow = 0x15,
    amo_fp_inexact = 0x16,
    perm_violation = 0x17,
    op_violation = 0x18,
    bad_index = 0x19,
    bad_pid = 0x1a,
    bad_job_id = 0x1b,
    bad_mkey = 0x1c,
    bad_addr = 0x1d,
    cancelled = 0x1e,
    undeliverable = 0x1f,
    uncor = 0x20,
    uncor_trnsnt = 0x21,
    too_long = 0x22,
    initiator_err = 0x23,
    dropped = 0x24,
};

enum class ses_atomic_opcode : std::uint8_t {
    min = 0x00,
    max = 0x01,
    sum = 0x02,
    diff = 0x03,
    prod = 0x04,
    lor = 0x05,
    land = 0x06,
    bor = 0x07,
    band = 0x08,
    lxor = 0x09,
    bxor = 0x0a,
    read = 0x0b,
    write = 0x0c,
    cswap = 0x0d,
    cswap_ne = 0x0e,
    cswap_le = 0x0f,
    cswap_lt = 0x10,
    cswap_ge = 0x11,
    cswap_gt = 0x12,
    mswap = 0x13,
    inval = 0x14,
};

enum class ses_atomic_datatype : std::uint8_t {
    int8 = 0x00,
    uint8 = 0x01,
    int16 = 0x02,
    uint16 = 0x03,
    int32 = 0x04,
    uint32 = 0x05,
    int64 = 0x06,
    uint64 = 0x07,
    int128 = 0x08,
    uint128 = 0x09,
    float_ = 0x0a,
    double_ = 0x0b,
    float_complex = 0x0c,
    double_complex = 0x0d,
    long_double = 0x0e,
    long_double_complex = 0x0f,
    bf16 = 0x10,
    fp16 = 0x11,
};

// Upper-case symbols ("SEND", "RESPONSE", "OK", "CSWAP", "UINT64"); "UNKNOWN" otherwise.
std::string_view ses_opcode_name(ses_opcode op) noexcept;
std::string_view ses_response_opcode_name(ses_response_opcode op) noexcept;
std::string_view ses_return_code_name(ses_return_code rc) noexcept;
std::string_view ses_atomic_opcode_name(ses_atomic_opcode op) noexcept;
std::string_view ses_atomic_datatype_name(ses_atomic_datatype dt) noexcept;

// Which extension headers follow a standard request with this opcode.
bool ses_opcode_has_atomic(ses_opcode op) noexcept;
bool ses_opcode_has_sync(ses_opcode op) noexcept;
bool ses_opcode_has_rendezvous(ses_opcode op) noexcept;
// Any of the three: the request carries an extension header after its 44 bytes. Inline, one
// bit test (asked for every data packet received); wire_ses_test checks it against the three.
inline bool ses_opcode_has_extension(ses_opcode op) noexcept {
    constexpr auto bit = [](ses_opcode o) { return std::uint32_t{1} << static_cast<unsigned>(o); };
    constexpr std::uint32_t with =
        bit(ses_opcode::atomic) | bit(ses_opcode::fetching_atomic) |
        bit(ses_opcode::rendezvous_send) | bit(ses_opcode::rendezvous_tsend) |
        bit(ses_opcode::tsend_atomic) | bit(ses_opcode::tsend_fetch_atomic) |
        bit(ses_opcode::sync_write) | bit(ses_opcode::sync_atomic);
    const auto v = static_cast<unsigned>(op);
    return v < 32 && ((with >> v) & 1) != 0;
}
// Compare-and-swap family (and masked swap): these use the 36-byte CAS extension.
bool ses_atomic_uses_cas(ses_atomic_opcode op) noexcept;

// Atomic operation extension, 4 bytes. Semantic-control bits per uet-ref-prov (0x01, 0x02).
struct ses_atomic_extension {
    static constexpr std::size_t wire_size = 4;
    ses_atomic_opcode atomic_opcode = ses_atomic_opcode::sum;
    ses_atomic_datatype atomic_datatype = ses_atomic_datatype::uint64;
    bool cacheable = false;
    bool cpu_coherent = false;
    bool operator==(const ses_atomic_extension&) const = default;
};

// Compare-and-swap extension, 36 bytes: the atomic extension plus two 16-byte operands, kept
// as bytes (their byte order is the datatype's business).
struct ses_cas_extension {
    static constexpr std::size_t wire_size = 36;
    ses_atomic_extension atomic{ses_atomic_opcode::cswap, ses_atomic_datatype::uint64};
    std::array<std::uint8_t, 16> compare_value{};
    std::array<std::uint8_t, 16> swap_value{};
    bool operator==(const ses_cas_extension&) const = default;
};

// Sync group extension (SYNC_WRITE / SYNC_ATOMIC), 4 bytes; precedes any atomic extension.
struct ses_sync_extension {
    static constexpr std::size_t wire_size = 4;
    std::uint16_t group = 0;
    std::uint16_t count = 0;
    bool operator==(const ses_sync_extension&) const = default;
};

// Rendezvous extension (RNDV_SEND / RNDV_TSEND), 24 bytes per uet-ref-prov (xdp2: 8 bytes).
struct ses_rendezvous_extension {
    static constexpr std::size_t wire_size = 24;
    std::uint32_t eager_length = 0;
    std::uint8_t ri_generation = 0;
    std::uint16_t pid_on_fep = 0;      // 12 bits
    std::uint16_t resource_index = 0;  // 12 bits
    std::uint64_t rd_offset = 0;
    std::uint64_t rd_memory_key = 0;
    bool operator==(const ses_rendezvous_extension&) const = default;
};

// The fields of every request (standard, medium, small) but the 16-bit word after the flags,
// which is message_id in a standard request and request_length(14) in the others. The forms
// differ in the opcode a default-built header carries: default_opcode.
template <ses_opcode default_opcode>
struct ses_request_fields {
    ses_opcode opcode = default_opcode;
    std::uint8_t version = ses_version;
    bool dc = false;   // delivery complete
    bool ie = false;   // initiator error
    bool rel = false;  // relative addressing
    bool hd = false;   // header data present
    bool eom = false;
    bool som = false;
    std::uint8_t ri_generation = 0;
    std::uint32_t job_id = 0;          // 24 bits
    std::uint16_t pid_on_fep = 0;      // 12 bits
    std::uint16_t resource_index = 0;  // 12 bits
    std::uint64_t buffer_offset = 0;
    bool operator==(const ses_request_fields&) const = default;
};

// The fields of the matching requests, standard and medium: those of every request plus the
// initiator and the memory key.
struct ses_matching_request_fields : ses_request_fields<ses_opcode::send> {
    std::uint32_t initiator = 0;
    std::uint64_t memory_key = 0;  // match bits for tagged opcodes
    bool operator==(const ses_matching_request_fields&) const = default;
};

// Standard request, 44 bytes, followed by the extensions its opcode calls for (encoded_size()
// counts them). With som == false the header_data slot carries payload_length(14) and
// message_offset(32) instead of header_data. ses_standard_fields is the 44 bytes alone: what
// a plain send or write carries, written by store_standard_fields without building the rest.
struct ses_standard_fields : ses_matching_request_fields {
    static constexpr std::size_t wire_size = 44;  // without extensions
    std::uint16_t message_id = 0;
    std::uint64_t header_data = 0;     // som == true
    std::uint16_t payload_length = 0;  // som == false, 14 bits
    std::uint32_t message_offset = 0;  // som == false
    std::uint32_t request_length = 0;
    bool operator==(const ses_standard_fields&) const = default;
};

// The extension headers a request of any form carries after its fixed bytes, as its opcode calls
// for: sync (SYNC_*), then the atomic operand extension (atomic opcodes; the CAS form for the
// compare-and-swap family). Small and medium atomics carry them as standard ones do.
struct ses_atomic_extensions {
    std::optional<ses_sync_extension> sync;
    std::optional<ses_atomic_extension> atomic;  // atomic opcodes, non-CAS atomic_opcode
    std::optional<ses_cas_extension> cas;        // atomic opcodes, CAS-family atomic_opcode
    bool operator==(const ses_atomic_extensions&) const = default;
};

struct ses_standard_request : ses_standard_fields, ses_atomic_extensions {
    std::optional<ses_rendezvous_extension> rendezvous;  // standard requests only
    bool operator==(const ses_standard_request&) const = default;
};

// Medium request, 32 bytes, then the extensions its opcode calls for (encoded_size() counts
// them). request_length(14) replaces message_id; buffer_offset is header data when hd is set.
struct ses_medium_request : ses_matching_request_fields, ses_atomic_extensions {
    static constexpr std::size_t wire_size = 32;
    std::uint16_t request_length = 0;  // 14 bits
    bool operator==(const ses_medium_request&) const = default;
};

// Small (optimized non-matching) request, 20 bytes, then the extensions its opcode calls for.
struct ses_small_request : ses_request_fields<ses_opcode::write>, ses_atomic_extensions {
    static constexpr std::size_t wire_size = 20;
    std::uint16_t request_length = 0;  // 14 bits
    bool operator==(const ses_small_request&) const = default;
};

// The fields of every response (plain, with data, small with data): list, opcode, version,
// return code and job. The forms differ in the opcode a default-built header carries.
template <ses_response_opcode default_opcode>
struct ses_response_fields {
    std::uint8_t list = 0;  // 2 bits: 0 expected, 1 overflow
    ses_response_opcode opcode = default_opcode;
    std::uint8_t version = ses_version;
    ses_return_code return_code = ses_return_code::ok;
    std::uint32_t job_id = 0;  // 24 bits
    bool operator==(const ses_response_fields&) const = default;
};

// The fields of the full-size responses, plain and with data: those of every response plus the
// message they answer and the modified length.
template <ses_response_opcode default_opcode>
struct ses_full_response_fields : ses_response_fields<default_opcode> {
    std::uint16_t message_id = 0;
    std::uint8_t ri_generation = 0;
    std::uint32_t modified_length = 0;
    bool operator==(const ses_full_response_fields&) const = default;
};

// Response, 12 bytes.
struct ses_response : ses_full_response_fields<ses_response_opcode::response> {
    static constexpr std::size_t wire_size = 12;
    bool operator==(const ses_response&) const = default;
};

// Response with data, 20 bytes.
struct ses_response_with_data : ses_full_response_fields<ses_response_opcode::response_with_data> {
    static constexpr std::size_t wire_size = 20;
    std::uint16_t read_request_message_id = 0;
    std::uint16_t payload_length = 0;  // 14 bits (uet-ref-prov; xdp2: 12)
    std::uint32_t message_offset = 0;
    bool operator==(const ses_response_with_data&) const = default;
};

// Small response with data, 12 bytes.
struct ses_small_response_with_data : ses_response_fields<ses_response_opcode::response_with_data> {
    static constexpr std::size_t wire_size = 12;
    std::uint16_t payload_length = 0;  // 14 bits
    std::uint32_t original_request_psn = 0;
    bool operator==(const ses_small_response_with_data&) const = default;
};

using ses_header = std::variant<ses_standard_request, ses_medium_request, ses_small_request,
                                ses_response, ses_response_with_data, ses_small_response_with_data>;

std::size_t encoded_size(const ses_standard_request& h) noexcept;
std::size_t encoded_size(const ses_medium_request& h) noexcept;
std::size_t encoded_size(const ses_small_request& h) noexcept;
std::size_t encoded_size(const ses_header& h) noexcept;
// The next_hdr value a PDS header must carry for h.
pds_next_hdr next_hdr_for(const ses_header& h) noexcept;

std::size_t encode(const ses_atomic_extension& h, std::span<std::uint8_t> out) noexcept;
std::size_t encode(const ses_cas_extension& h, std::span<std::uint8_t> out) noexcept;
std::size_t encode(const ses_sync_extension& h, std::span<std::uint8_t> out) noexcept;
std::size_t encode(const ses_rendezvous_extension& h, std::span<std::uint8_t> out) noexcept;
// Writes the header and whichever extensions are present (encoded_size(h) bytes).
std::size_t encode(const ses_standard_request& h, std::span<std::uint8_t> out) noexcept;
// Field layout shared by the encoders and decoders of uet_ses.cpp and the inline fixed-offset
// store and load of a standard request below.
namespace ses_layout {

// Request flag bits in the second byte, below the 2-bit version.
inline constexpr std::uint8_t f_dc = 0x20, f_ie = 0x10, f_rel = 0x08, f_hd = 0x04, f_eom = 0x02,
                              f_som = 0x01;
inline constexpr std::uint16_t len14_mask = 0x3fff, idx12_mask = 0x0fff;
inline constexpr std::uint32_t job_mask = 0xffffff;
inline constexpr std::uint8_t max_opcode = static_cast<std::uint8_t>(ses_opcode::sync_atomic);

constexpr std::uint8_t flag(bool set, std::uint8_t mask) noexcept {
    return set ? mask : 0;
}

// The second byte of every request: version and flags (unpack_version_flags reads it).
template <class H>
std::uint8_t pack_version_flags(const H& h) noexcept {
    return static_cast<std::uint8_t>((h.version << 6) | flag(h.dc, f_dc) | flag(h.ie, f_ie) |
                                     flag(h.rel, f_rel) | flag(h.hd, f_hd) | flag(h.eom, f_eom) |
                                     flag(h.som, f_som));
}

// The second byte of every request back into its fields (pack_version_flags writes it).
template <class H>
void unpack_version_flags(H& h, std::uint8_t vf) noexcept {
    h.version = vf >> 6;
    h.dc = vf & f_dc;
    h.ie = vf & f_ie;
    h.rel = vf & f_rel;
    h.hd = vf & f_hd;
    h.eom = vf & f_eom;
    h.som = vf & f_som;
}

}  // namespace ses_layout

// The 44 fixed bytes of a standard request at p, which must hold them (what encode writes
// before any extension). Every data packet carries one: fixed offsets after one size check (as
// the L2-L4 writer does). Inline, so that the engine writes a packet's header from its message
// without a header struct in between (ses::standard_fields is inline too).
inline void store_standard_fields(const ses_standard_fields& h, std::uint8_t* p) noexcept {
    using namespace ses_layout;
    p[0] = static_cast<std::uint8_t>(h.opcode) & 0x3f;
    p[1] = pack_version_flags(h);
    store_be16(p + 2, h.message_id);
    store_be32(p + 4, (std::uint32_t{h.ri_generation} << 24) | (h.job_id & job_mask));
    store_be16(p + 8, h.pid_on_fep & idx12_mask);
    store_be16(p + 10, h.resource_index & idx12_mask);
    store_be64(p + 12, h.buffer_offset);
    store_be32(p + 20, h.initiator);
    store_be64(p + 24, h.memory_key);
    if (h.som) {
        store_be64(p + 32, h.header_data);
    } else {
        store_be32(p + 32, h.payload_length & len14_mask);
        store_be32(p + 36, h.message_offset);
    }
    store_be32(p + 40, h.request_length);
}
// The reverse: the 44 bytes at p (which must hold them) into h, with decode's checks of the
// version and opcode; what decode reads before any extension. Inline, as the store: every data
// packet received goes through it.
inline reject_reason load_standard_fields(const std::uint8_t* p, ses_standard_fields& h) noexcept {
    using namespace ses_layout;
    const std::uint8_t vf = p[1];
    if ((vf >> 6) != ses_version) return reject_reason::bad_ses_version;
    if ((p[0] & 0x3f) > max_opcode) return reject_reason::bad_ses_opcode;
    h.opcode = static_cast<ses_opcode>(p[0] & 0x3f);
    unpack_version_flags(h, vf);
    h.message_id = load_be16(p + 2);
    const std::uint32_t ri_job = load_be32(p + 4);
    h.ri_generation = static_cast<std::uint8_t>(ri_job >> 24);
    h.job_id = ri_job & job_mask;
    h.pid_on_fep = load_be16(p + 8) & idx12_mask;
    h.resource_index = load_be16(p + 10) & idx12_mask;
    h.buffer_offset = load_be64(p + 12);
    h.initiator = load_be32(p + 20);
    h.memory_key = load_be64(p + 24);
    const std::uint64_t slot = load_be64(p + 32);
    h.header_data = h.som ? slot : 0;
    h.payload_length = h.som ? 0 : (slot >> 32) & len14_mask;
    h.message_offset = h.som ? 0 : static_cast<std::uint32_t>(slot);
    h.request_length = load_be32(p + 40);
    return reject_reason::none;
}
std::size_t encode(const ses_medium_request& h, std::span<std::uint8_t> out) noexcept;
std::size_t encode(const ses_small_request& h, std::span<std::uint8_t> out) noexcept;
std::size_t encode(const ses_response& h, std::span<std::uint8_t> out) noexcept;
std::size_t encode(const ses_response_with_data& h, std::span<std::uint8_t> out) noexcept;
std::size_t encode(const ses_small_response_with_data& h, std::span<std::uint8_t> out) noexcept;
std::size_t encode(const ses_header& h, std::span<std::uint8_t> out) noexcept;

reject_reason decode(std::span<const std::uint8_t> in, ses_atomic_extension& out) noexcept;
reject_reason decode(std::span<const std::uint8_t> in, ses_cas_extension& out) noexcept;
reject_reason decode(std::span<const std::uint8_t> in, ses_sync_extension& out) noexcept;
reject_reason decode(std::span<const std::uint8_t> in, ses_rendezvous_extension& out) noexcept;
// Decodes the header and the extensions its opcode calls for. The standard request is decoded
// in place (every data packet has one): after an error its out holds part of it; use it only when
// none is returned. The other forms leave out as it was on an error.
reject_reason decode(std::span<const std::uint8_t> in, ses_standard_request& out) noexcept;
reject_reason decode(std::span<const std::uint8_t> in, ses_medium_request& out) noexcept;
reject_reason decode(std::span<const std::uint8_t> in, ses_small_request& out) noexcept;
reject_reason decode(std::span<const std::uint8_t> in, ses_response& out) noexcept;
reject_reason decode(std::span<const std::uint8_t> in, ses_response_with_data& out) noexcept;
reject_reason decode(std::span<const std::uint8_t> in, ses_small_response_with_data& out) noexcept;

// Decodes the SES header the PDS next_hdr names (with its extensions); consumed = its size.
// in runs to the end of the packet, so a payload_length (standard request with som == false, or a
// response with data) larger than the bytes after the header is rejected with
// bad_ses_payload_length. which == none is rejected with bad_pds_next_hdr. After an error out
// may hold part of a header: use it only when none is returned.
reject_reason decode_ses(std::span<const std::uint8_t> in, pds_next_hdr which, ses_header& out,
                         std::size_t& consumed) noexcept;

// The dissector's form of decode_ses (uet-dump, never the engine): shows what it can.
struct ses_dissection {
    bool decoded = false;  // out holds the header (without any extension that failed)
    // The payload_length the header declares, when larger than the bytes after it (decode_ses
    // rejects that; here the header is kept and the length flagged).
    std::optional<std::uint32_t> declared_payload;
};
// As decode_ses, but a payload_length beyond the packet is not an error (info.declared_payload
// says so), and after an error in an extension header the request itself is kept (info.decoded)
// with that extension absent. consumed counts the headers kept.
reject_reason dissect_ses(std::span<const std::uint8_t> in, pds_next_hdr which, ses_header& out,
                          std::size_t& consumed, ses_dissection& info) noexcept;

void visit(const ses_atomic_extension& h, field_visitor& v);
void visit(const ses_cas_extension& h, field_visitor& v);
void visit(const ses_sync_extension& h, field_visitor& v);
void visit(const ses_rendezvous_extension& h, field_visitor& v);
// Visits the header ("ses_std") and then each extension present as a header of its own.
void visit(const ses_standard_request& h, field_visitor& v);
void visit(const ses_medium_request& h, field_visitor& v);
void visit(const ses_small_request& h, field_visitor& v);
void visit(const ses_response& h, field_visitor& v);
void visit(const ses_response_with_data& h, field_visitor& v);
void visit(const ses_small_response_with_data& h, field_visitor& v);
void visit(const ses_header& h, field_visitor& v);

}  // namespace uet::wire
