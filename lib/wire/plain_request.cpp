#include "wire/plain_request.hpp"

#include <bit>
#include <cstring>

#include "wire/bytes.hpp"
#include "wire/ipv4.hpp"

namespace uet::wire {

namespace {

constexpr std::size_t l3_at = eth_header::wire_size;
constexpr std::size_t udp_at = l3_at + ipv4_header::wire_size;
constexpr std::size_t pds_at = udp_at + udp_header::wire_size;
constexpr std::size_t ses_at = pds_at + pds_rud_rod_request::wire_size;
constexpr std::size_t headers_size = ses_at + ses_standard_fields::wire_size;

bool is_rud_or_rod(std::uint8_t first_byte) noexcept {
    const auto type = static_cast<pds_type>(first_byte >> 3);
    return type == pds_type::rud || type == pds_type::rod;
}

// The fields read_next_plain_request reads again rather than compares, as byte masks over the
// header: 0x00 where a byte may change, its bit mask where part of it may.
constexpr std::size_t ip_id_at = l3_at + 4, ip_checksum_at = l3_at + 10;
constexpr std::size_t udp_sport_at = udp_at, udp_checksum_at = udp_at + 6;
constexpr std::size_t pds_psn_fields_at = pds_at + 2;  // clear_psn_offset (2), PSN (4)
constexpr std::size_t ses_message_offset_at = ses_at + 36;
// A one-packet message's own fields: its id, buffer_offset, memory_key and header data.
constexpr std::size_t ses_message_id_at = ses_at + 2, ses_buffer_offset_at = ses_at + 12;
constexpr std::size_t ses_memory_key_at = ses_at + 24, ses_header_data_at = ses_at + 32;

using header_words = std::array<std::uint64_t, plain_request_template::words>;

constexpr header_words changing_field_masks(bool single_packet_messages) {
    std::array<std::uint8_t, plain_request_template::words * 8> bytes{};
    for (std::size_t i = 0; i < plain_request_template::header_bytes; ++i)
        bytes[i] = 0xff;
    auto clear = [&](std::size_t at, std::size_t n) {
        for (std::size_t i = at; i < at + n; ++i)
            bytes[i] = 0;
    };
    clear(ip_id_at, 2);
    clear(ip_checksum_at, 2);
    clear(udp_sport_at, 2);
    clear(udp_checksum_at, 2);
    bytes[pds_at + request_flags_byte] = static_cast<std::uint8_t>(~request_changing_flags);
    clear(pds_psn_fields_at, 6);
    if (single_packet_messages) {
        clear(ses_message_id_at, 2);
        clear(ses_buffer_offset_at, 8);
        clear(ses_memory_key_at, 8);
        clear(ses_header_data_at, 8);
    } else {
        clear(ses_message_offset_at, 4);
    }
    // As the words are loaded: little-endian on the hosts uet runs on (bytes.hpp's loads assume
    // nothing, but a mask must match the load below, a plain memcpy).
    header_words words{};
    for (std::size_t w = 0; w < words.size(); ++w)
        for (std::size_t b = 0; b < 8; ++b)
            words[w] |= std::uint64_t{bytes[w * 8 + b]}
                        << (std::endian::native == std::endian::little ? 8 * b : 8 * (7 - b));
    return words;
}

// [0] within a message, [1] from one one-packet message to the next.
constexpr std::array<header_words, 2> changing_masks = {changing_field_masks(false),
                                                        changing_field_masks(true)};

// The header's words masked, the last one holding the 2 bytes after 96 (the rest of it zero):
// fixed-size loads only, so that the compiler unrolls the loop into plain loads.
constexpr std::size_t full_words = plain_request_template::header_bytes / 8;
static_assert(full_words + 1 == plain_request_template::words &&
              plain_request_template::header_bytes % 8 == 2);

std::uint64_t masked_word(const std::uint8_t* b, std::size_t w, const header_words& m) noexcept {
    std::uint64_t v;
    std::memcpy(&v, b + w * 8, 8);
    return v & m[w];
}

std::uint64_t masked_tail(const std::uint8_t* b, const header_words& m) noexcept {
    std::uint16_t v;
    std::memcpy(&v, b + full_words * 8, 2);
    return v & m[full_words];
}

// The words of the comparison two at a time, in a 16-byte vector (SSE2 on x86-64, NEON on
// Arm): 6 loads, masks and compares for the 96 bytes instead of 12 of each, and no loop.
using word_pair = std::uint64_t __attribute__((vector_size(16)));
static_assert(full_words % 2 == 0);

word_pair pair_at(const void* p) noexcept {
    word_pair v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

// Nonzero where frame b differs from the remembered header h outside the fields of mask m.
std::uint64_t header_difference(const std::uint8_t* b, const header_words& h,
                                const header_words& m) noexcept {
    word_pair differ = {masked_tail(b, m) ^ h[full_words], 0};
#pragma GCC unroll 6
    for (std::size_t w = 0; w < full_words; w += 2)
        differ |= (pair_at(b + w * 8) & pair_at(&m[w])) ^ pair_at(&h[w]);
    return differ[0] | differ[1];
}

// The one's complement sum of an IPv4 header's 16-bit words (native order) but its id and
// checksum, the two fields prediction lets change: with them added, a valid header sums to
// 0xffff (in either byte order).
std::uint32_t ipv4_sum_but_id_and_checksum(const std::uint8_t* ip) noexcept {
    std::uint32_t sum = 0;
    for (const std::size_t at : {0, 2, 6, 8, 12, 14, 16, 18}) {
        std::uint16_t w;
        std::memcpy(&w, ip + at, 2);
        sum += w;
    }
    return sum;
}

// The header's checksum check when all but its id and checksum are those of a header whose
// other words sum to `rest` (RFC 1624's arithmetic): two loads and two folds instead of the
// whole header summed again.
bool ipv4_checksum_ok_given(std::uint32_t rest, const std::uint8_t* ip) noexcept {
    std::uint16_t id, checksum;
    std::memcpy(&id, ip + ip_id_at - l3_at, 2);
    std::memcpy(&checksum, ip + ip_checksum_at - l3_at, 2);
    std::uint32_t total = rest + id + checksum;
    total = (total & 0xffff) + (total >> 16);
    total = (total & 0xffff) + (total >> 16);
    return total == 0xffff;
}

}  // namespace

bool read_plain_request(std::span<const std::uint8_t> frame, plain_request& out) noexcept {
    // One bounds check for every header; the IP total length then bounds the payload.
    if (frame.size() < headers_size) return false;
    const std::uint8_t* b = frame.data();
    const std::uint8_t* ip = b + l3_at;
    // The PDS type first: an ACK or other control frame leaves at once for the general path.
    if (!is_rud_or_rod(b[pds_at]) || load_be16(b + 12) != ethertype_ipv4 || ip[0] != 0x45 ||
        ip[9] != ip_proto_udp)
        return false;
    const std::uint16_t total = load_be16(ip + 2);
    if (total < headers_size - l3_at || total > frame.size() - l3_at) return false;
    if ((load_be16(ip + 6) & 0x3fff) != 0) return false;  // MF or a fragment offset
    if (ipv4_header_checksum(ip) != 0) return false;
    const std::span<const std::uint8_t> datagram(b + udp_at, total - ipv4_header::wire_size);
    if (load_be16(&datagram[4]) != datagram.size()) return false;
    out.src_ip = load_be32(ip + 12);
    out.dst_ip = load_be32(ip + 16);
    if (!udp_checksum_ok(out.src_ip, out.dst_ip, datagram)) return false;
    const auto l4_payload = datagram.subspan(udp_header::wire_size);
    if (decode(l4_payload, out.pds) != reject_reason::none ||
        out.pds.next_hdr != pds_next_hdr::request_std)
        return false;
    if (load_standard_fields(b + ses_at, out.ses) != reject_reason::none ||
        ses_opcode_has_extension(out.ses.opcode))
        return false;
    out.payload =
        l4_payload.subspan(pds_rud_rod_request::wire_size + ses_standard_fields::wire_size);
    if (!out.ses.som && out.ses.payload_length > out.payload.size()) return false;
    std::memcpy(out.src_mac.octets.data(), b + 6, 6);
    out.dscp = tos_dscp(ip[1]);
    out.ecn = ip[1] & 3;
    out.ip_id = load_be16(ip + 4);
    out.src_port = load_be16(&datagram[0]);
    out.dst_port = load_be16(&datagram[2]);
    return true;
}

void remember_plain_request(std::span<const std::uint8_t> frame, const plain_request& r,
                            plain_request_template& t) noexcept {
    const bool whole = r.ses.som && r.ses.eom;
    if (r.pds.syn || (r.ses.som && !whole) || frame.size() < plain_request_template::header_bytes) {
        t.frame_size = 0;
        return;
    }
    const header_words& m = changing_masks[whole];
    for (std::size_t w = 0; w < full_words; ++w)
        t.header[w] = masked_word(frame.data(), w, m);
    t.header[full_words] = masked_tail(frame.data(), m);
    t.frame_size = frame.size();
    t.single_packet_messages = whole;
    t.ip_sum_rest = ipv4_sum_rest(frame.data());
    t.reading = r;
}

namespace {

// Whether frame is t's frame but for the fields that may change, and valid (IPv4 header checksum;
// the UDP checksum where there is one): the checks of read_next_plain_request.
// Inline (always: GCC otherwise keeps one copy for the two callers), so that the batch reader's
// loop loads the masks and the remembered header once for all its frames.
inline bool predicted(std::span<const std::uint8_t> frame, const plain_request_template& t,
                      const header_words& masks) noexcept {
    if (frame.size() != t.frame_size || t.frame_size == 0) return false;
    const std::uint8_t* b = frame.data();
    if (header_difference(b, t.header, masks) != 0) return false;
    // The compare above leaves only the IPv4 id and checksum free in the IPv4 header.
    if (!ipv4_checksum_ok_given(t.ip_sum_rest, b + l3_at)) return false;
    // The same IP total length as the last frame: the same datagram and payload bounds.
    const std::span<const std::uint8_t> datagram(b + udp_at, load_be16(&b[udp_at + 4]));
    return load_be16(b + udp_checksum_at) == 0 ||
           udp_checksum_ok(t.reading.src_ip, t.reading.dst_ip, datagram);
}

}  // namespace

const plain_request* read_next_plain_request(std::span<const std::uint8_t> frame,
                                             plain_request_template& t) noexcept {
    if (!predicted(frame, t, changing_masks[t.single_packet_messages])) return nullptr;
    const std::uint8_t* b = frame.data();
    plain_request& r = t.reading;
    r.src_port = load_be16(b + udp_sport_at);
    r.ip_id = load_be16(b + ip_id_at);
    load_request_changes(b + pds_at, r.pds);
    if (t.single_packet_messages) {
        r.ses.message_id = load_be16(b + ses_message_id_at);
        r.ses.buffer_offset = load_be64(b + ses_buffer_offset_at);
        r.ses.memory_key = load_be64(b + ses_memory_key_at);
        r.ses.header_data = load_be64(b + ses_header_data_at);
    } else {
        r.ses.message_offset = load_be32(b + ses_message_offset_at);
    }
    r.payload = {b + headers_size, r.payload.size()};
    return &r;
}

namespace {

// A frame in two pieces (rest) is predicted only split after its headers and without a UDP
// checksum (which would cover both pieces): its header words are all in the first piece.
inline bool predicted_split(std::span<const std::uint8_t> frame, const frame_rest& rest,
                            const plain_request_template& t, const header_words& masks) noexcept {
    if (rest.from != headers_size || frame.size() != t.frame_size || t.frame_size == 0)
        return false;
    const std::uint8_t* b = frame.data();
    return header_difference(b, t.header, masks) == 0 &&
           ipv4_checksum_ok_given(t.ip_sum_rest, b + l3_at) && load_be16(b + udp_checksum_at) == 0;
}

// read_next_plain_requests for a template of either kind: each frame's changing fields, then
// t.reading the last one's as read_next_plain_request leaves it.
template <bool whole>
std::size_t read_next_requests(std::span<const std::span<const std::uint8_t>> frames,
                               plain_request_template& t, next_request_fields* out,
                               const frame_rest* rests) noexcept {
    const header_words& masks = changing_masks[whole];
    std::size_t n = 0;
    for (; n < frames.size(); ++n) {
        const bool split = rests != nullptr && rests[n].at != nullptr;
        if (split ? !predicted_split(frames[n], rests[n], t, masks)
                  : !predicted(frames[n], t, masks))
            break;
        const std::uint8_t* b = frames[n].data();
        next_request_fields& f = out[n];
        f.payload = split ? rests[n].at : b + headers_size;
        f.src_port = load_be16(b + udp_sport_at);
        f.ip_id = load_be16(b + ip_id_at);
        f.pds_at = b + pds_at;
        if constexpr (whole) {
            f.message_id = load_be16(b + ses_message_id_at);
            f.buffer_offset = load_be64(b + ses_buffer_offset_at);
            f.memory_key = load_be64(b + ses_memory_key_at);
            f.header_data = load_be64(b + ses_header_data_at);
        } else {
            f.message_offset = load_be32(b + ses_message_offset_at);
        }
    }
    if (n == 0) return 0;
    plain_request& r = t.reading;
    const next_request_fields& last = out[n - 1];
    r.src_port = last.src_port;
    r.ip_id = last.ip_id;
    load_request_changes(last.pds_at, r.pds);
    if constexpr (whole) {
        r.ses.message_id = last.message_id;
        r.ses.buffer_offset = last.buffer_offset;
        r.ses.memory_key = last.memory_key;
        r.ses.header_data = last.header_data;
    } else {
        r.ses.message_offset = last.message_offset;
    }
    r.payload = {last.payload, r.payload.size()};
    return n;
}

}  // namespace

std::size_t read_next_plain_requests(std::span<const std::span<const std::uint8_t>> frames,
                                     plain_request_template& t, next_request_fields* out,
                                     const frame_rest* rests) noexcept {
    return t.single_packet_messages ? read_next_requests<true>(frames, t, out, rests)
                                    : read_next_requests<false>(frames, t, out, rests);
}

std::size_t plain_request_headers_size() noexcept {
    return headers_size;
}

void write_next_request_headers(std::uint8_t* out, const request_headers_template& t,
                                const pds_rud_rod_request& h,
                                std::uint32_t message_offset) noexcept {
    std::memcpy(out, t.bytes.data(), t.bytes.size());
    store_request_changes(out, h);
    store_be32(out + (ses_message_offset_at - pds_at), message_offset);
}

std::uint32_t ipv4_sum_rest(const std::uint8_t* frame) noexcept {
    return ipv4_sum_but_id_and_checksum(frame + l3_at);
}

}  // namespace uet::wire
