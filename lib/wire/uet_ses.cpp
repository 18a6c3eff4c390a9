#include "wire/uet_ses.hpp"

#include <algorithm>
#include <iterator>
#include <type_traits>

#include "wire/bytes.hpp"

namespace uet::wire {

namespace {

using namespace ses_layout;
constexpr std::uint8_t max_response_opcode =
    static_cast<std::uint8_t>(ses_response_opcode::no_response);
constexpr std::uint8_t max_atomic_opcode = static_cast<std::uint8_t>(ses_atomic_opcode::inval);
constexpr std::uint8_t max_atomic_datatype = static_cast<std::uint8_t>(ses_atomic_datatype::fp16);
constexpr std::uint8_t amo_cacheable = 0x01, amo_cpu_coherent = 0x02;

// The 12-byte common part of every request. `third` is the 16-bit word after the flags:
// message_id for standard requests, request_length(14) for small and medium ones.
template <class H>
void write_request_common(byte_writer& w, const H& h, std::uint16_t third) noexcept {
    w.u8(static_cast<std::uint8_t>(h.opcode) & 0x3f);
    w.u8(pack_version_flags(h));
    w.u16(third);
    w.u32((std::uint32_t{h.ri_generation} << 24) | (h.job_id & job_mask));
    w.u16(h.pid_on_fep & idx12_mask);
    w.u16(h.resource_index & idx12_mask);
}

template <class H>
std::uint16_t read_request_common(byte_reader& r, H& h) noexcept {
    h.opcode = static_cast<ses_opcode>(r.u8() & 0x3f);
    unpack_version_flags(h, r.u8());
    const std::uint16_t third = r.u16();
    const std::uint32_t ri_job = r.u32();
    h.ri_generation = static_cast<std::uint8_t>(ri_job >> 24);
    h.job_id = ri_job & job_mask;
    h.pid_on_fep = r.u16() & idx12_mask;
    h.resource_index = r.u16() & idx12_mask;
    return third;
}

template <class H>
reject_reason check_request(const byte_reader& r, const H& h) noexcept {
    if (r.failed()) return reject_reason::truncated;
    if (h.version != ses_version) return reject_reason::bad_ses_version;
    if (static_cast<std::uint8_t>(h.opcode) > max_opcode) return reject_reason::bad_ses_opcode;
    return reject_reason::none;
}

// The 8-byte common part of every response; `third` is message_id or rsvd|payload_length(14).
template <class H>
void write_response_common(byte_writer& w, const H& h, std::uint16_t third,
                           std::uint8_t ri_generation) noexcept {
    w.u8(static_cast<std::uint8_t>((h.list << 6) | (static_cast<std::uint8_t>(h.opcode) & 0x3f)));
    w.u8(static_cast<std::uint8_t>((h.version << 6) |
                                   (static_cast<std::uint8_t>(h.return_code) & 0x3f)));
    w.u16(third);
    w.u32((std::uint32_t{ri_generation} << 24) | (h.job_id & job_mask));
}

// Returns the third word; the ri_generation byte goes to *ri when the form has one.
template <class H>
std::uint16_t read_response_common(byte_reader& r, H& h, std::uint8_t* ri) noexcept {
    const std::uint8_t lo = r.u8();
    h.list = lo >> 6;
    h.opcode = static_cast<ses_response_opcode>(lo & 0x3f);
    const std::uint8_t vr = r.u8();
    h.version = vr >> 6;
    h.return_code = static_cast<ses_return_code>(vr & 0x3f);
    const std::uint16_t third = r.u16();
    const std::uint32_t ri_job = r.u32();
    if (ri) *ri = static_cast<std::uint8_t>(ri_job >> 24);
    h.job_id = ri_job & job_mask;
    return third;
}

template <class H>
reject_reason check_response(const byte_reader& r, const H& h) noexcept {
    if (r.failed()) return reject_reason::truncated;
    if (h.version != ses_version) return reject_reason::bad_ses_version;
    if (static_cast<std::uint8_t>(h.opcode) > max_response_opcode)
        return reject_reason::bad_ses_response_opcode;
    return reject_reason::none;
}

template <class H>
std::size_t finish_encode(std::span<std::uint8_t> out, std::size_t need,
                          void (*body)(byte_writer&, const H&), const H& h) noexcept {
    if (out.size() < need) return 0;
    byte_writer w(out);
    body(w, h);
    return w.result();
}

void write_atomic(byte_writer& w, const ses_atomic_extension& h) noexcept {
    w.u8(static_cast<std::uint8_t>(h.atomic_opcode));
    w.u8(static_cast<std::uint8_t>(h.atomic_datatype));
    w.u8(flag(h.cacheable, amo_cacheable) | flag(h.cpu_coherent, amo_cpu_coherent));
    w.u8(0);
}

reject_reason read_atomic(byte_reader& r, ses_atomic_extension& h) noexcept {
    const std::uint8_t op = r.u8();
    const std::uint8_t dt = r.u8();
    const std::uint8_t ctrl = r.u8();
    r.skip(1);
    if (r.failed()) return reject_reason::truncated;
    if (op > max_atomic_opcode) return reject_reason::bad_ses_atomic_opcode;
    if (dt > max_atomic_datatype) return reject_reason::bad_ses_atomic_datatype;
    h.atomic_opcode = static_cast<ses_atomic_opcode>(op);
    h.atomic_datatype = static_cast<ses_atomic_datatype>(dt);
    h.cacheable = ctrl & amo_cacheable;
    h.cpu_coherent = ctrl & amo_cpu_coherent;
    return reject_reason::none;
}

void write_cas(byte_writer& w, const ses_cas_extension& h) noexcept {
    write_atomic(w, h.atomic);
    w.bytes(h.compare_value);
    w.bytes(h.swap_value);
}

reject_reason read_cas(byte_reader& r, ses_cas_extension& h) noexcept {
    ses_atomic_extension a;
    const reject_reason rc = read_atomic(r, a);
    const auto cmp = r.bytes(16);
    const auto swp = r.bytes(16);
    if (r.failed()) return reject_reason::truncated;
    if (rc != reject_reason::none) return rc;
    h.atomic = a;
    std::copy(cmp.begin(), cmp.end(), h.compare_value.begin());
    std::copy(swp.begin(), swp.end(), h.swap_value.begin());
    return reject_reason::none;
}

void write_sync(byte_writer& w, const ses_sync_extension& h) noexcept {
    w.u16(h.group);
    w.u16(h.count);
}

reject_reason read_sync(byte_reader& r, ses_sync_extension& h) noexcept {
    h.group = r.u16();
    h.count = r.u16();
    return r.failed() ? reject_reason::truncated : reject_reason::none;
}

void write_rendezvous(byte_writer& w, const ses_rendezvous_extension& h) noexcept {
    w.u32(h.eager_length);
    w.u32((std::uint32_t{h.ri_generation} << 24) |
          (static_cast<std::uint32_t>(h.pid_on_fep & idx12_mask) << 12) |
          (h.resource_index & idx12_mask));
    w.u64(h.rd_offset);
    w.u64(h.rd_memory_key);
}

reject_reason read_rendezvous(byte_reader& r, ses_rendezvous_extension& h) noexcept {
    h.eager_length = r.u32();
    const std::uint32_t word = r.u32();
    h.ri_generation = static_cast<std::uint8_t>(word >> 24);
    h.pid_on_fep = (word >> 12) & idx12_mask;
    h.resource_index = word & idx12_mask;
    h.rd_offset = r.u64();
    h.rd_memory_key = r.u64();
    return r.failed() ? reject_reason::truncated : reject_reason::none;
}

template <class H>
reject_reason decode_ext(std::span<const std::uint8_t> in, H& out,
                         reject_reason (*read)(byte_reader&, H&)) noexcept {
    byte_reader r(in);
    H h;
    const reject_reason rc = read(r, h);
    if (rc == reject_reason::none) out = h;
    return rc;
}

// The atomic operand extension: which form depends on its first byte. Each extension is read
// into a local and kept only when it decoded, so a request whose extension fails holds none of it.
reject_reason read_atomic_or_cas(byte_reader& r, ses_atomic_extensions& h) noexcept {
    const auto rest = r.rest();
    if (rest.empty()) return reject_reason::truncated;
    if (ses_atomic_uses_cas(static_cast<ses_atomic_opcode>(rest[0]))) {
        ses_cas_extension c;
        const reject_reason rc = read_cas(r, c);
        if (rc == reject_reason::none) h.cas = c;
        return rc;
    }
    ses_atomic_extension a;
    const reject_reason rc = read_atomic(r, a);
    if (rc == reject_reason::none) h.atomic = a;
    return rc;
}

// The extensions of a request of any form, after its fixed bytes; r is left after them.
reject_reason read_extensions(byte_reader& r, ses_opcode op, ses_atomic_extensions& h) noexcept {
    h.sync.reset();
    h.atomic.reset();
    h.cas.reset();
    if (ses_opcode_has_sync(op)) {
        ses_sync_extension s;
        if (auto rc = read_sync(r, s); rc != reject_reason::none) return rc;
        h.sync = s;
    }
    if (ses_opcode_has_atomic(op)) return read_atomic_or_cas(r, h);
    return reject_reason::none;
}

reject_reason read_extensions(byte_reader& r, ses_standard_request& h) noexcept {
    h.rendezvous.reset();
    if (auto rc = read_extensions(r, h.opcode, static_cast<ses_atomic_extensions&>(h));
        rc != reject_reason::none)
        return rc;
    if (ses_opcode_has_rendezvous(h.opcode)) {
        ses_rendezvous_extension x;
        if (auto rc = read_rendezvous(r, x); rc != reject_reason::none) return rc;
        h.rendezvous = x;
    }
    return reject_reason::none;
}

std::size_t extensions_size(const ses_atomic_extensions& h) noexcept {
    return (h.sync ? ses_sync_extension::wire_size : 0) +
           (h.atomic ? ses_atomic_extension::wire_size : 0) +
           (h.cas ? ses_cas_extension::wire_size : 0);
}

void write_extensions(byte_writer& w, const ses_atomic_extensions& h) noexcept {
    if (h.sync) write_sync(w, *h.sync);
    if (h.atomic) write_atomic(w, *h.atomic);
    if (h.cas) write_cas(w, *h.cas);
}

}  // namespace

// --- names and opcode properties ---

std::string_view ses_opcode_name(ses_opcode op) noexcept {
    switch (op) {
        case ses_opcode::no_op:
            return "NO_OP";
        case ses_opcode::write:
            return "WRITE";
        case ses_opcode::read:
            return "READ";
        case ses_opcode::atomic:
            return "ATOMIC";
        case ses_opcode::fetching_atomic:
            return "FETCH_ATOMIC";
        case ses_opcode::send:
            return "SEND";
        case ses_opcode::rendezvous_send:
            return "RNDV_SEND";
        case ses_opcode::datagram_send:
            return "DGRAM_SEND";
        case ses_opcode::deferrable_send:
            return "DEFER_SEND";
        case ses_opcode::tagged_send:
            return "TAGGED_SEND";
        case ses_opcode::rendezvous_tsend:
            return "RNDV_TSEND";
        case ses_opcode::deferrable_tsend:
            return "DEFER_TSEND";
        case ses_opcode::deferrable_rtr:
            return "DEFER_RTR";
        case ses_opcode::tsend_atomic:
            return "TSEND_ATOMIC";
        case ses_opcode::tsend_fetch_atomic:
            return "TSEND_FETCH_ATOMIC";
        case ses_opcode::msg_error:
            return "MSG_ERR";
        case ses_opcode::sync_write:
            return "SYNC_WRITE";
        case ses_opcode::sync_atomic:
            return "SYNC_ATOMIC";
    }
    return "UNKNOWN";
}

std::string_view ses_response_opcode_name(ses_response_opcode op) noexcept {
    switch (op) {
        case ses_response_opcode::default_response:
            return "DEFAULT_RESPONSE";
        case ses_response_opcode::response:
            return "RESPONSE";
        case ses_response_opcode::response_with_data:
            return "RESPONSE_W_DATA";
        case ses_response_opcode::no_response:
            return "NO_RESPONSE";
    }
    return "UNKNOWN";
}

std::string_view ses_return_code_name(ses_return_code rc) noexcept {
    static constexpr std::string_view names[] = {
        "NULL",
        "OK",
        "BAD_GENERATION",
        "DISABLED",
        "DISABLED_GEN",
        "NO_MATCH",
        "UNSUPPORTED_OP",
        "UNSUPPORTED_SIZE",
        "AT_INVALID",
        "AT_PERM",
        "AT_ATS_ERROR",
        "AT_NO_TRANS",
        "AT_OUT_OF_RANGE",
        "HOST_POISONED",
        "HOST_UNSUCCESS_CMPL",
        "AMO_UNSUPPORTED_OP",
        "AMO_UNSUPPORTED_DT",
        "AMO_UNSUPPORTED_SIZE",
        "AMO_UNALIGNED",
        "AMO_FP_NAN",
        "AMO_FP_UNDERFLOW",
        "AMO_FP_OVERFLOW",
        "AMO_FP_INEXACT",
        "PERM_VIOLATION",
        "OP_VIOLATION",
        "BAD_INDEX",
        "BAD_PID",
        "BAD_JOB_ID",
        "BAD_MKEY",
        "BAD_ADDR",
        "CANCELLED",
        "UNDELIVERABLE",
        "UNCOR",
        "UNCOR_TRNSNT",
        "TOO_LONG",
        "INITIATOR_ERR",
        "DROPPED",
    };
    const auto i = static_cast<std::size_t>(rc);
    return i < std::size(names) ? names[i] : "UNKNOWN";
}

std::string_view ses_atomic_opcode_name(ses_atomic_opcode op) noexcept {
    static constexpr std::string_view names[] = {
        "MIN",      "MAX",      "SUM",      "DIFF",     "PROD",     "LOR",   "LAND",
        "BOR",      "BAND",     "LXOR",     "BXOR",     "READ",     "WRITE", "CSWAP",
        "CSWAP_NE", "CSWAP_LE", "CSWAP_LT", "CSWAP_GE", "CSWAP_GT", "MSWAP", "INVAL",
    };
    const auto i = static_cast<std::size_t>(op);
    return i < std::size(names) ? names[i] : "UNKNOWN";
}

std::string_view ses_atomic_datatype_name(ses_atomic_datatype dt) noexcept {
    static constexpr std::string_view names[] = {
        "INT8",          "UINT8",          "INT16",       "UINT16",
        "INT32",         "UINT32",         "INT64",       "UINT64",
        "INT128",        "UINT128",        "FLOAT",       "DOUBLE",
        "FLOAT_COMPLEX", "DOUBLE_COMPLEX", "LONG_DOUBLE", "LONG_DOUBLE_COMPLEX",
        "BF16",          "FP16",
    };
    const auto i = static_cast<std::size_t>(dt);
    return i < std::size(names) ? names[i] : "UNKNOWN";
}

bool ses_opcode_has_atomic(ses_opcode op) noexcept {
    return op == ses_opcode::atomic || op == ses_opcode::fetching_atomic ||
           op == ses_opcode::tsend_atomic || op == ses_opcode::tsend_fetch_atomic ||
           op == ses_opcode::sync_atomic;
}

bool ses_opcode_has_sync(ses_opcode op) noexcept {
    return op == ses_opcode::sync_write || op == ses_opcode::sync_atomic;
}

bool ses_opcode_has_rendezvous(ses_opcode op) noexcept {
    return op == ses_opcode::rendezvous_send || op == ses_opcode::rendezvous_tsend;
}

bool ses_atomic_uses_cas(ses_atomic_opcode op) noexcept {
    return op >= ses_atomic_opcode::cswap && op <= ses_atomic_opcode::mswap;
}

// --- sizes ---

std::size_t encoded_size(const ses_standard_request& h) noexcept {
    return ses_standard_request::wire_size + extensions_size(h) +
           (h.rendezvous ? ses_rendezvous_extension::wire_size : 0);
}

std::size_t encoded_size(const ses_medium_request& h) noexcept {
    return ses_medium_request::wire_size + extensions_size(h);
}

std::size_t encoded_size(const ses_small_request& h) noexcept {
    return ses_small_request::wire_size + extensions_size(h);
}

std::size_t encoded_size(const ses_header& h) noexcept {
    return std::visit(
        [](const auto& x) -> std::size_t {
            using H = std::decay_t<decltype(x)>;
            if constexpr (std::is_base_of_v<ses_atomic_extensions, H>)
                return encoded_size(x);
            else
                return H::wire_size;
        },
        h);
}

pds_next_hdr next_hdr_for(const ses_header& h) noexcept {
    static constexpr pds_next_hdr by_index[] = {
        pds_next_hdr::request_std, pds_next_hdr::request_medium, pds_next_hdr::request_small,
        pds_next_hdr::response,    pds_next_hdr::response_data,  pds_next_hdr::response_data_small,
    };
    return by_index[h.index()];
}

// --- encode ---

std::size_t encode(const ses_atomic_extension& h, std::span<std::uint8_t> out) noexcept {
    return finish_encode(out, h.wire_size, write_atomic, h);
}

std::size_t encode(const ses_cas_extension& h, std::span<std::uint8_t> out) noexcept {
    return finish_encode(out, h.wire_size, write_cas, h);
}

std::size_t encode(const ses_sync_extension& h, std::span<std::uint8_t> out) noexcept {
    return finish_encode(out, h.wire_size, write_sync, h);
}

std::size_t encode(const ses_rendezvous_extension& h, std::span<std::uint8_t> out) noexcept {
    return finish_encode(out, h.wire_size, write_rendezvous, h);
}

std::size_t encode(const ses_standard_request& h, std::span<std::uint8_t> out) noexcept {
    const std::size_t need = encoded_size(h);
    if (out.size() < need) return 0;
    store_standard_fields(h, out.data());
    if (need == ses_standard_request::wire_size) return need;
    byte_writer w(out.subspan(ses_standard_request::wire_size));
    write_extensions(w, h);
    if (h.rendezvous) write_rendezvous(w, *h.rendezvous);
    return ses_standard_request::wire_size + w.result();
}

std::size_t encode(const ses_medium_request& h, std::span<std::uint8_t> out) noexcept {
    return finish_encode<ses_medium_request>(
        out, encoded_size(h),
        [](byte_writer& w, const auto& x) {
            write_request_common(w, x, x.request_length & len14_mask);
            w.u64(x.buffer_offset);
            w.u32(x.initiator);
            w.u64(x.memory_key);
            write_extensions(w, x);
        },
        h);
}

std::size_t encode(const ses_small_request& h, std::span<std::uint8_t> out) noexcept {
    return finish_encode<ses_small_request>(
        out, encoded_size(h),
        [](byte_writer& w, const auto& x) {
            write_request_common(w, x, x.request_length & len14_mask);
            w.u64(x.buffer_offset);
            write_extensions(w, x);
        },
        h);
}

std::size_t encode(const ses_response& h, std::span<std::uint8_t> out) noexcept {
    return finish_encode<ses_response>(
        out, h.wire_size,
        [](byte_writer& w, const auto& x) {
            write_response_common(w, x, x.message_id, x.ri_generation);
            w.u32(x.modified_length);
        },
        h);
}

std::size_t encode(const ses_response_with_data& h, std::span<std::uint8_t> out) noexcept {
    return finish_encode<ses_response_with_data>(
        out, h.wire_size,
        [](byte_writer& w, const auto& x) {
            write_response_common(w, x, x.message_id, x.ri_generation);
            w.u16(x.read_request_message_id);
            w.u16(x.payload_length & len14_mask);
            w.u32(x.modified_length);
            w.u32(x.message_offset);
        },
        h);
}

std::size_t encode(const ses_small_response_with_data& h, std::span<std::uint8_t> out) noexcept {
    return finish_encode<ses_small_response_with_data>(
        out, h.wire_size,
        [](byte_writer& w, const auto& x) {
            write_response_common(w, x, x.payload_length & len14_mask, 0);
            w.u32(x.original_request_psn);
        },
        h);
}

std::size_t encode(const ses_header& h, std::span<std::uint8_t> out) noexcept {
    return std::visit([out](const auto& x) { return encode(x, out); }, h);
}

// --- decode ---

reject_reason decode(std::span<const std::uint8_t> in, ses_atomic_extension& out) noexcept {
    return decode_ext(in, out, read_atomic);
}

reject_reason decode(std::span<const std::uint8_t> in, ses_cas_extension& out) noexcept {
    return decode_ext(in, out, read_cas);
}

reject_reason decode(std::span<const std::uint8_t> in, ses_sync_extension& out) noexcept {
    return decode_ext(in, out, read_sync);
}

reject_reason decode(std::span<const std::uint8_t> in, ses_rendezvous_extension& out) noexcept {
    return decode_ext(in, out, read_rendezvous);
}

reject_reason decode(std::span<const std::uint8_t> in, ses_standard_request& out) noexcept {
    if (in.size() < ses_standard_request::wire_size) return reject_reason::truncated;
    ses_standard_request& h = out;
    if (auto rc = load_standard_fields(in.data(), h); rc != reject_reason::none) return rc;
    byte_reader r(in.subspan(ses_standard_request::wire_size));
    return read_extensions(r, h);
}

namespace {

// The fixed bytes of a medium or small request, before any extension.
reject_reason read_fixed(byte_reader& r, ses_medium_request& h) noexcept {
    h.request_length = read_request_common(r, h) & len14_mask;
    h.buffer_offset = r.u64();
    h.initiator = r.u32();
    h.memory_key = r.u64();
    return check_request(r, h);
}

reject_reason read_fixed(byte_reader& r, ses_small_request& h) noexcept {
    h.request_length = read_request_common(r, h) & len14_mask;
    h.buffer_offset = r.u64();
    return check_request(r, h);
}

template <class H>
reject_reason decode_small_or_medium(std::span<const std::uint8_t> in, H& out) noexcept {
    byte_reader r(in);
    H h;
    reject_reason rc = read_fixed(r, h);
    if (rc == reject_reason::none) rc = read_extensions(r, h.opcode, h);
    if (rc == reject_reason::none) out = h;
    return rc;
}

}  // namespace

reject_reason decode(std::span<const std::uint8_t> in, ses_medium_request& out) noexcept {
    return decode_small_or_medium(in, out);
}

reject_reason decode(std::span<const std::uint8_t> in, ses_small_request& out) noexcept {
    return decode_small_or_medium(in, out);
}

reject_reason decode(std::span<const std::uint8_t> in, ses_response& out) noexcept {
    byte_reader r(in);
    ses_response h;
    h.message_id = read_response_common(r, h, &h.ri_generation);
    h.modified_length = r.u32();
    const reject_reason rc = check_response(r, h);
    if (rc == reject_reason::none) out = h;
    return rc;
}

reject_reason decode(std::span<const std::uint8_t> in, ses_response_with_data& out) noexcept {
    byte_reader r(in);
    ses_response_with_data h;
    h.message_id = read_response_common(r, h, &h.ri_generation);
    h.read_request_message_id = r.u16();
    h.payload_length = r.u16() & len14_mask;
    h.modified_length = r.u32();
    h.message_offset = r.u32();
    const reject_reason rc = check_response(r, h);
    if (rc == reject_reason::none) out = h;
    return rc;
}

reject_reason decode(std::span<const std::uint8_t> in, ses_small_response_with_data& out) noexcept {
    byte_reader r(in);
    ses_small_response_with_data h;
    h.payload_length = read_response_common(r, h, nullptr) & len14_mask;
    h.original_request_psn = r.u32();
    const reject_reason rc = check_response(r, h);
    if (rc == reject_reason::none) out = h;
    return rc;
}

namespace {

// The payload length a header declares for the bytes after it, or nullopt when it has none.
template <class H>
std::optional<std::size_t> declared_payload(const H& h) noexcept {
    if constexpr (std::is_same_v<H, ses_standard_request>) {
        if (!h.som) return h.payload_length;
    } else if constexpr (std::is_same_v<H, ses_response_with_data> ||
                         std::is_same_v<H, ses_small_response_with_data>) {
        return h.payload_length;
    }
    return std::nullopt;
}

// Checked on the concrete header and copied into the variant once: this runs for every packet
// received.
template <class H>
reject_reason decode_as(std::span<const std::uint8_t> in, ses_header& out,
                        std::size_t& consumed) noexcept {
    if constexpr (std::is_same_v<H, ses_standard_request>) {
        // The common case, decoded in place (a packet's header variant usually holds one).
        auto* h = std::get_if<ses_standard_request>(&out);
        if (!h) h = &out.emplace<ses_standard_request>();
        if (auto rc = decode(in, *h); rc != reject_reason::none) return rc;
        const std::size_t size = encoded_size(*h);
        if (!h->som && h->payload_length > in.size() - size)
            return reject_reason::bad_ses_payload_length;
        consumed = size;
        return reject_reason::none;
    }
    H h;
    const reject_reason rc = decode(in, h);
    if (rc != reject_reason::none) return rc;
    std::size_t size = H::wire_size;
    if constexpr (std::is_base_of_v<ses_atomic_extensions, H>) size = encoded_size(h);
    const auto declared = declared_payload(h);
    if (declared && *declared > in.size() - size) return reject_reason::bad_ses_payload_length;
    out.emplace<H>(h);
    consumed = size;
    return rc;
}

template <class H>
struct ses_type {
    using type = H;
};

// Calls fn(ses_type<H>{}) with the SES header type that `which` announces; none has no SES
// header and is bad_pds_next_hdr, fn not called.
template <class Fn>
reject_reason with_ses_type(pds_next_hdr which, Fn&& fn) noexcept {
    switch (which) {
        case pds_next_hdr::request_small:
            return fn(ses_type<ses_small_request>{});
        case pds_next_hdr::request_medium:
            return fn(ses_type<ses_medium_request>{});
        case pds_next_hdr::request_std:
            return fn(ses_type<ses_standard_request>{});
        case pds_next_hdr::response:
            return fn(ses_type<ses_response>{});
        case pds_next_hdr::response_data:
            return fn(ses_type<ses_response_with_data>{});
        case pds_next_hdr::response_data_small:
            return fn(ses_type<ses_small_response_with_data>{});
        case pds_next_hdr::none:
            break;
    }
    return reject_reason::bad_pds_next_hdr;
}

}  // namespace

reject_reason decode_ses(std::span<const std::uint8_t> in, pds_next_hdr which, ses_header& out,
                         std::size_t& consumed) noexcept {
    consumed = 0;
    return with_ses_type(
        which, [&]<class T>(T) { return decode_as<typename T::type>(in, out, consumed); });
}

// --- dissect (uet-dump's lenient decode) ---

namespace {

// A request whose fixed bytes decoded is kept even when an extension after them fails.
template <class H>
reject_reason dissect_request(std::span<const std::uint8_t> in, ses_header& out,
                              ses_dissection& info) noexcept {
    H h;
    reject_reason rc = reject_reason::none;
    if constexpr (std::is_same_v<H, ses_standard_request>) {
        if (in.size() < ses_standard_request::wire_size) return reject_reason::truncated;
        if (rc = load_standard_fields(in.data(), h); rc != reject_reason::none) return rc;
        byte_reader r(in.subspan(ses_standard_request::wire_size));
        rc = read_extensions(r, h);
    } else {
        byte_reader r(in);
        if (rc = read_fixed(r, h); rc != reject_reason::none) return rc;
        rc = read_extensions(r, h.opcode, h);
    }
    out.emplace<H>(h);
    info.decoded = true;
    return rc;
}

template <class H>
reject_reason dissect_response(std::span<const std::uint8_t> in, ses_header& out,
                               ses_dissection& info) noexcept {
    H h;
    const reject_reason rc = decode(in, h);
    if (rc != reject_reason::none) return rc;
    out.emplace<H>(h);
    info.decoded = true;
    return rc;
}

}  // namespace

reject_reason dissect_ses(std::span<const std::uint8_t> in, pds_next_hdr which, ses_header& out,
                          std::size_t& consumed, ses_dissection& info) noexcept {
    consumed = 0;
    info = {};
    const reject_reason rc = with_ses_type(which, [&]<class T>(T) {
        using H = typename T::type;
        if constexpr (std::is_same_v<H, ses_response> ||
                      std::is_same_v<H, ses_response_with_data> ||
                      std::is_same_v<H, ses_small_response_with_data>)
            return dissect_response<H>(in, out, info);
        else
            return dissect_request<H>(in, out, info);
    });
    if (!info.decoded) return rc;
    consumed = encoded_size(out);
    if (rc == reject_reason::none) {
        const auto declared = std::visit([](const auto& h) { return declared_payload(h); }, out);
        if (declared && *declared > in.size() - consumed)
            info.declared_payload = static_cast<std::uint32_t>(*declared);
    }
    return rc;
}

// --- visit ---
//
// Every header the same shape: begin(its name), its fields in wire order, end. The fields of a
// part that several headers share (ses_request_fields, ses_response_fields, ...) are visited by
// one function for that part, as they are declared once in uet_ses.hpp; a form's own word that
// sits inside the part on the wire (the one after the flags) is passed in.

namespace {

bool is_tagged(ses_opcode op) noexcept {
    return op == ses_opcode::tagged_send || op == ses_opcode::rendezvous_tsend ||
           op == ses_opcode::deferrable_tsend || op == ses_opcode::tsend_atomic ||
           op == ses_opcode::tsend_fetch_atomic;
}

// A form's own field that sits inside a shared part on the wire.
struct inner_field {
    std::string_view name;
    std::uint64_t value;
};

template <ses_opcode default_opcode>
void visit_request_fields(const ses_request_fields<default_opcode>& h, inner_field third,
                          std::string_view buffer_offset_name, field_visitor& v) {
    v.field("opcode", static_cast<std::uint8_t>(h.opcode), ses_opcode_name(h.opcode));
    v.field("version", h.version);
    v.field("dc", h.dc);
    v.field("ie", h.ie);
    v.field("rel", h.rel);
    v.field("hd", h.hd);
    v.field("eom", h.eom);
    v.field("som", h.som);
    v.field(third.name, third.value);
    v.field("ri_generation", h.ri_generation);
    v.field("job_id", h.job_id);
    v.field("pid_on_fep", h.pid_on_fep);
    v.field("resource_index", h.resource_index);
    v.field(buffer_offset_name, h.buffer_offset);
}

void visit_matching_fields(const ses_matching_request_fields& h, field_visitor& v) {
    v.field("initiator", h.initiator);
    v.field(is_tagged(h.opcode) ? "match_bits" : "memory_key", h.memory_key);
}

template <ses_response_opcode default_opcode>
void visit_response_fields(const ses_response_fields<default_opcode>& h, inner_field third,
                           field_visitor& v) {
    v.field("list", h.list);
    v.field("opcode", static_cast<std::uint8_t>(h.opcode), ses_response_opcode_name(h.opcode));
    v.field("version", h.version);
    v.field("return_code", static_cast<std::uint8_t>(h.return_code),
            ses_return_code_name(h.return_code));
    v.field(third.name, third.value);
}

// Up to job_id; modified_length comes later in the response with data.
template <ses_response_opcode default_opcode>
void visit_full_response_fields(const ses_full_response_fields<default_opcode>& h,
                                field_visitor& v) {
    visit_response_fields(h, {"message_id", h.message_id}, v);
    v.field("ri_generation", h.ri_generation);
    v.field("job_id", h.job_id);
}

void visit_fields(const ses_atomic_extension& h, field_visitor& v) {
    v.field("atomic_opcode", static_cast<std::uint8_t>(h.atomic_opcode),
            ses_atomic_opcode_name(h.atomic_opcode));
    v.field("atomic_datatype", static_cast<std::uint8_t>(h.atomic_datatype),
            ses_atomic_datatype_name(h.atomic_datatype));
    v.field("cacheable", h.cacheable);
    v.field("cpu_coherent", h.cpu_coherent);
}

void visit_fields(const ses_cas_extension& h, field_visitor& v) {
    visit_fields(h.atomic, v);
    v.bytes("compare_value", h.compare_value);
    v.bytes("swap_value", h.swap_value);
}

void visit_fields(const ses_sync_extension& h, field_visitor& v) {
    v.field("group", h.group);
    v.field("count", h.count);
}

void visit_fields(const ses_rendezvous_extension& h, field_visitor& v) {
    v.field("eager_length", h.eager_length);
    v.field("ri_generation", h.ri_generation);
    v.field("pid_on_fep", h.pid_on_fep);
    v.field("resource_index", h.resource_index);
    v.field("rd_offset", h.rd_offset);
    v.field("rd_memory_key", h.rd_memory_key);
}

void visit_fields(const ses_standard_fields& h, field_visitor& v) {
    visit_request_fields(h, {"message_id", h.message_id}, "buffer_offset", v);
    visit_matching_fields(h, v);
    if (h.som) {
        v.field("header_data", h.header_data);
    } else {
        v.field("payload_length", h.payload_length);
        v.field("message_offset", h.message_offset);
    }
    v.field("request_length", h.request_length);
}

void visit_fields(const ses_medium_request& h, field_visitor& v) {
    visit_request_fields(h, {"request_length", h.request_length},
                         h.hd ? "header_data" : "buffer_offset", v);
    visit_matching_fields(h, v);
}

void visit_fields(const ses_small_request& h, field_visitor& v) {
    visit_request_fields(h, {"request_length", h.request_length}, "buffer_offset", v);
}

void visit_fields(const ses_response& h, field_visitor& v) {
    visit_full_response_fields(h, v);
    v.field("modified_length", h.modified_length);
}

void visit_fields(const ses_response_with_data& h, field_visitor& v) {
    visit_full_response_fields(h, v);
    v.field("read_request_message_id", h.read_request_message_id);
    v.field("payload_length", h.payload_length);
    v.field("modified_length", h.modified_length);
    v.field("message_offset", h.message_offset);
}

void visit_fields(const ses_small_response_with_data& h, field_visitor& v) {
    visit_response_fields(h, {"payload_length", h.payload_length}, v);
    v.field("job_id", h.job_id);
    v.field("original_request_psn", h.original_request_psn);
}

template <class H>
void visit_header(std::string_view name, const H& h, field_visitor& v) {
    v.begin(name);
    visit_fields(h, v);
    v.end();
}

}  // namespace

void visit(const ses_atomic_extension& h, field_visitor& v) {
    visit_header("ses_atomic", h, v);
}
void visit(const ses_cas_extension& h, field_visitor& v) {
    visit_header("ses_cas", h, v);
}
void visit(const ses_sync_extension& h, field_visitor& v) {
    visit_header("ses_sync", h, v);
}
void visit(const ses_rendezvous_extension& h, field_visitor& v) {
    visit_header("ses_rndv", h, v);
}
namespace {
void visit_extensions(const ses_atomic_extensions& h, field_visitor& v) {
    if (h.sync) visit(*h.sync, v);
    if (h.atomic) visit(*h.atomic, v);
    if (h.cas) visit(*h.cas, v);
}
}  // namespace

void visit(const ses_standard_request& h, field_visitor& v) {
    visit_header("ses_std", static_cast<const ses_standard_fields&>(h), v);
    visit_extensions(h, v);
    if (h.rendezvous) visit(*h.rendezvous, v);
}
void visit(const ses_medium_request& h, field_visitor& v) {
    visit_header("ses_medium", h, v);
    visit_extensions(h, v);
}
void visit(const ses_small_request& h, field_visitor& v) {
    visit_header("ses_small", h, v);
    visit_extensions(h, v);
}
void visit(const ses_response& h, field_visitor& v) {
    visit_header("ses_rsp", h, v);
}
void visit(const ses_response_with_data& h, field_visitor& v) {
    visit_header("ses_rsp_data", h, v);
}
void visit(const ses_small_response_with_data& h, field_visitor& v) {
    visit_header("ses_rsp_data_small", h, v);
}

void visit(const ses_header& h, field_visitor& v) {
    std::visit([&v](const auto& x) { visit(x, v); }, h);
}

}  // namespace uet::wire
