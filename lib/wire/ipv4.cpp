#include "wire/ipv4.hpp"

#include <bit>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "wire/bytes.hpp"

namespace uet::wire {

const char* to_string(ecn_codepoint e) noexcept {
    switch (e) {
        case ecn_codepoint::not_ect:
            return "Not-ECT";
        case ecn_codepoint::ect1:
            return "ECT(1)";
        case ecn_codepoint::ect0:
            return "ECT(0)";
        case ecn_codepoint::ce:
            return "CE";
    }
    return "?";
}

namespace {

// The ones'-complement sum of 16-bit words is the same in either byte order up to one final
// swap (RFC 1071 section 2), so the bulk is summed as native 32-bit words into four 64-bit
// accumulators (independent chains the CPU overlaps; no byte swap per word) and only the folded
// 16-bit result is swapped into network order.
#if defined(__x86_64__) && defined(__GNUC__)
// 32 bytes a step: the eight native 32-bit words widened into 64-bit lanes and added (no carry
// to fold until the end). Compiled for AVX2 on its own and chosen at run time, so the library
// still runs on x86-64 CPUs without it. Returns the 32-bit words it summed.
__attribute__((target("avx2"))) std::size_t avx2_sum_words(const std::uint8_t* p,
                                                           std::size_t words32,
                                                           std::uint64_t& out) noexcept {
    __m256i lo = _mm256_setzero_si256(), hi = _mm256_setzero_si256();
    const __m256i zero = _mm256_setzero_si256();
    std::size_t i = 0;
    for (; i + 8 <= words32; i += 8) {
        const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 4 * i));
        lo = _mm256_add_epi64(lo, _mm256_unpacklo_epi32(v, zero));
        hi = _mm256_add_epi64(hi, _mm256_unpackhi_epi32(v, zero));
    }
    alignas(32) std::uint64_t lanes[4];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), _mm256_add_epi64(lo, hi));
    out = lanes[0] + lanes[1] + lanes[2] + lanes[3];
    return i;
}

const bool has_avx2 = __builtin_cpu_supports("avx2");
#endif

std::uint32_t native_sum_be(const std::uint8_t* p, std::size_t words32) noexcept {
    std::uint64_t acc[4] = {0, 0, 0, 0};
    std::size_t i = 0;
#if defined(__x86_64__) && defined(__GNUC__)
    if (has_avx2 && words32 >= 16) i = avx2_sum_words(p, words32, acc[0]);
#endif
    for (; i + 4 <= words32; i += 4) {
        for (std::size_t k = 0; k < 4; ++k) {
            std::uint32_t w;
            std::memcpy(&w, p + 4 * (i + k), 4);
            acc[k] += w;
        }
    }
    for (; i < words32; ++i) {
        std::uint32_t w;
        std::memcpy(&w, p + 4 * i, 4);
        acc[0] += w;
    }
    // Each accumulator is below 2^32 x words32, so their sum fits for any frame-sized input.
    return checksum_fold_native(acc[0] + acc[1] + acc[2] + acc[3]);
}

}  // namespace

std::uint32_t checksum_partial(std::span<const std::uint8_t> data, std::uint32_t sum) noexcept {
    const std::uint8_t* p = data.data();
    std::size_t n = data.size();
    std::uint64_t acc = std::uint64_t{sum} + native_sum_be(p, n / 4);
    p += n & ~std::size_t{3};
    n &= 3;
    if (n >= 2) {
        acc += load_be16(p);
        p += 2;
        n -= 2;
    }
    if (n) acc += std::uint32_t{p[0]} << 8;
    acc = (acc & 0xffffffffu) + (acc >> 32);
    acc = (acc & 0xffffffffu) + (acc >> 32);
    return static_cast<std::uint32_t>(acc);
}

std::uint32_t checksum_copy(std::uint8_t* dst, std::span<const std::uint8_t> src,
                            std::uint32_t sum) noexcept {
    const std::uint8_t* p = src.data();
    std::size_t n = src.size();
    std::uint64_t acc = sum;
#if defined(__SSE2__)
    // 16 bytes a step: load, store, and add the four native 32-bit words as 64-bit lanes (no
    // carry to fold until the end: each lane stays below 2^32 x steps).
    __m128i acc_lo = _mm_setzero_si128(), acc_hi = _mm_setzero_si128();
    const __m128i zero = _mm_setzero_si128();
    for (; n >= 16; n -= 16, p += 16, dst += 16) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), v);
        acc_lo = _mm_add_epi64(acc_lo, _mm_unpacklo_epi32(v, zero));
        acc_hi = _mm_add_epi64(acc_hi, _mm_unpackhi_epi32(v, zero));
    }
    alignas(16) std::uint64_t lanes[2];
    _mm_store_si128(reinterpret_cast<__m128i*>(lanes), _mm_add_epi64(acc_lo, acc_hi));
    std::uint64_t native = lanes[0] + lanes[1];
#else
    std::uint64_t native = 0;
#endif
    for (; n >= 4; n -= 4, p += 4, dst += 4) {
        std::uint32_t w;
        std::memcpy(&w, p, 4);
        std::memcpy(dst, &w, 4);
        native += w;
    }
    // The native words' sum, folded to 16 bits, is the big-endian sum byte-swapped (RFC 1071).
    native = (native & 0xffffffffu) + (native >> 32);
    native = (native & 0xffffffffu) + (native >> 32);
    native = (native & 0xffff) + (native >> 16);
    native = (native & 0xffff) + (native >> 16);
    native = (native & 0xffff) + (native >> 16);
    if constexpr (std::endian::native == std::endian::little)
        native = ((native >> 8) | (native << 8)) & 0xffff;
    acc += native;
    if (n >= 2) {
        acc += load_be16(p);
        std::memcpy(dst, p, 2);
        p += 2;
        dst += 2;
        n -= 2;
    }
    if (n) {
        acc += std::uint32_t{p[0]} << 8;
        dst[0] = p[0];
    }
    acc = (acc & 0xffffffffu) + (acc >> 32);
    acc = (acc & 0xffffffffu) + (acc >> 32);
    return static_cast<std::uint32_t>(acc);
}

std::uint16_t checksum_update16(std::uint16_t checksum, std::uint16_t old_word,
                                std::uint16_t new_word) noexcept {
    // HC' = ~(~HC + ~m + m')  (RFC 1624 eqn. 3)
    std::uint32_t sum = static_cast<std::uint16_t>(~checksum);
    sum += static_cast<std::uint16_t>(~old_word);
    sum += new_word;
    return checksum_finish(sum);
}

std::size_t encode(const ipv4_header& h, std::span<std::uint8_t> out) noexcept {
    byte_writer w(out);
    w.u8(static_cast<std::uint8_t>((h.version << 4) | (h.ihl & 0x0f)));
    w.u8(make_tos(h.dscp, h.ecn));
    w.u16(h.total_length);
    w.u16(h.id);
    w.u16(static_cast<std::uint16_t>((h.df ? 0x4000 : 0) | (h.mf ? 0x2000 : 0) |
                                     (h.frag_offset & 0x1fff)));
    w.u8(h.ttl);
    w.u8(h.protocol);
    w.u16(h.checksum);
    w.u32(h.src);
    w.u32(h.dst);
    return w.result();
}

void load_fields(const std::uint8_t* b, ipv4_header& h) noexcept {
    const std::uint8_t vihl = b[0];
    const std::uint8_t tos = b[1];
    h.total_length = load_be16(b + 2);
    h.id = load_be16(b + 4);
    const std::uint16_t frag = load_be16(b + 6);
    h.ttl = b[8];
    h.protocol = b[9];
    h.checksum = load_be16(b + 10);
    h.src = load_be32(b + 12);
    h.dst = load_be32(b + 16);
    h.version = vihl >> 4;
    h.ihl = vihl & 0x0f;
    h.dscp = tos_dscp(tos);
    h.ecn = tos & 3;
    h.df = (frag & 0x4000) != 0;
    h.mf = (frag & 0x2000) != 0;
    h.frag_offset = frag & 0x1fff;
}

reject_reason decode(std::span<const std::uint8_t> in, ipv4_header& out) noexcept {
    // One bounds check, then fixed offsets.
    if (in.size() < ipv4_header::wire_size) return reject_reason::truncated;
    const std::uint8_t* b = in.data();
    ipv4_header h;
    load_fields(b, h);
    if (h.version != 4) return reject_reason::bad_ip_version;
    if (h.ihl < 5) return reject_reason::bad_ip_ihl;
    if (h.header_length() > in.size()) return reject_reason::truncated;
    if (h.total_length < h.header_length()) return reject_reason::bad_ip_total_length;
    if (ipv4_header_checksum(b, h.ihl) != 0) return reject_reason::bad_ip_checksum;
    out = h;
    return reject_reason::none;
}

void visit(const ipv4_header& h, field_visitor& v) {
    v.begin("ipv4");
    v.field("version", h.version);
    v.field("ihl", h.ihl);
    v.field("dscp", h.dscp);
    v.field("ecn", h.ecn, to_string(static_cast<ecn_codepoint>(h.ecn & 3)));
    v.field("total_length", h.total_length);
    v.field("id", h.id);
    v.field("df", h.df ? 1 : 0);
    v.field("mf", h.mf ? 1 : 0);
    v.field("frag_offset", h.frag_offset);
    v.field("ttl", h.ttl);
    switch (h.protocol) {
        case ip_proto_udp:
            v.field("protocol", h.protocol, "UDP");
            break;
        case ip_proto_uet:
            v.field("protocol", h.protocol, "UET");
            break;
        default:
            v.field("protocol", h.protocol);
            break;
    }
    v.field("checksum", h.checksum);
    v.field("src", h.src, ipv4_to_string(h.src));
    v.field("dst", h.dst, ipv4_to_string(h.dst));
    v.end();
}

bool ipv4_fill_checksum(std::span<std::uint8_t> header) noexcept {
    if (header.size() < ipv4_header::wire_size) return false;
    std::size_t len = std::size_t{header[0] & 0x0fu} * 4;
    if (len < ipv4_header::wire_size || len > header.size()) return false;
    store_be16(&header[10], 0);
    store_be16(&header[10], ipv4_header_checksum(header.data(), len / 4));
    return true;
}

std::string ipv4_to_string(std::uint32_t addr) {
    std::string s;
    for (int shift = 24; shift >= 0; shift -= 8) {
        if (shift != 24) s += '.';
        s += std::to_string((addr >> shift) & 0xff);
    }
    return s;
}

std::size_t encode(const udp_header& h, std::span<std::uint8_t> out) noexcept {
    byte_writer w(out);
    w.u16(h.sport);
    w.u16(h.dport);
    w.u16(h.length);
    w.u16(h.checksum);
    return w.result();
}

reject_reason decode(std::span<const std::uint8_t> in, udp_header& out) noexcept {
    if (in.size() < udp_header::wire_size) return reject_reason::truncated;
    udp_header h;
    h.sport = load_be16(in.data());
    h.dport = load_be16(in.data() + 2);
    h.length = load_be16(in.data() + 4);
    h.checksum = load_be16(in.data() + 6);
    if (h.length < udp_header::wire_size) return reject_reason::bad_udp_length;
    out = h;
    return reject_reason::none;
}

void visit(const udp_header& h, field_visitor& v) {
    v.begin("udp");
    v.field("sport", h.sport);
    v.field("dport", h.dport);
    v.field("length", h.length);
    v.field("checksum", h.checksum);
    v.end();
}

namespace {
// Ones'-complement sum of the pseudo-header and the whole datagram as it stands.
std::uint32_t udp_sum(std::uint32_t src_ip, std::uint32_t dst_ip,
                      std::span<const std::uint8_t> datagram) noexcept {
    std::uint64_t acc = src_ip;
    acc += dst_ip;
    acc += ip_proto_udp;
    acc += datagram.size() & 0xffff;
    acc = (acc & 0xffffffffu) + (acc >> 32);
    return checksum_partial(datagram, static_cast<std::uint32_t>(acc));
}
}  // namespace

std::uint16_t udp_checksum(std::uint32_t src_ip, std::uint32_t dst_ip,
                           std::span<const std::uint8_t> datagram) noexcept {
    std::uint32_t sum = udp_sum(src_ip, dst_ip, datagram);
    // Take the stored checksum back out so its current value does not matter.
    if (datagram.size() >= udp_header::wire_size) {
        std::uint16_t stored = load_be16(&datagram[6]);
        sum = (sum & 0xffff) + (sum >> 16);  // fold first so the addition cannot overflow
        sum += static_cast<std::uint16_t>(~stored);
    }
    std::uint16_t c = checksum_finish(sum);
    return c == 0 ? 0xffff : c;
}

std::uint16_t udp_checksum_presummed(std::uint32_t src_ip, std::uint32_t dst_ip,
                                     std::span<const std::uint8_t> datagram,
                                     std::size_t summed_from, std::uint32_t summed) noexcept {
    if (summed_from > datagram.size()) summed_from = datagram.size();
    // Pseudo-header (with the whole datagram's length), then the bytes before summed_from.
    std::uint64_t acc = std::uint64_t{src_ip} + dst_ip + ip_proto_udp + (datagram.size() & 0xffff);
    acc = (acc & 0xffffffffu) + (acc >> 32);
    acc = checksum_partial(datagram.first(summed_from), static_cast<std::uint32_t>(acc));
    // The tail's sum folded to 16 bits; starting at an odd offset its bytes sit in the other
    // half of every 16-bit word, which one swap of the folded sum accounts for (RFC 1071).
    std::uint32_t tail = (summed & 0xffff) + (summed >> 16);
    tail = (tail & 0xffff) + (tail >> 16);
    if (summed_from & 1) tail = ((tail >> 8) | (tail << 8)) & 0xffff;
    acc += tail;
    if (summed_from >= udp_header::wire_size) {
        // As udp_checksum: the stored checksum's current value does not count.
        acc += static_cast<std::uint16_t>(~load_be16(&datagram[6]));
    }
    acc = (acc & 0xffffffffu) + (acc >> 32);
    acc = (acc & 0xffffffffu) + (acc >> 32);
    const std::uint16_t c = checksum_finish(static_cast<std::uint32_t>(acc));
    return c == 0 ? 0xffff : c;
}

bool udp_checksum_ok(std::uint32_t src_ip, std::uint32_t dst_ip,
                     std::span<const std::uint8_t> datagram) noexcept {
    if (datagram.size() < udp_header::wire_size) return false;
    if (load_be16(&datagram[6]) == 0) return true;
    return checksum_finish(udp_sum(src_ip, dst_ip, datagram)) == 0;
}

}  // namespace uet::wire
