// IPv4 and UDP headers, the Internet checksum, ECN and DSCP.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>

#include "wire/fields.hpp"
#include "wire/reject.hpp"

namespace uet::wire {

// Default UDP destination port for UET. Only a default: every builder takes its ports from the
// caller (frame_spec), and receivers should match against a configured port.
#ifdef UET_DEFAULT_UDP_PORT
inline constexpr std::uint16_t uet_udp_port = UET_DEFAULT_UDP_PORT;
#else
inline constexpr std::uint16_t uet_udp_port = 4793;
#endif
inline constexpr std::uint16_t roce_udp_port = 4791;  // IANA RoCEv2

inline constexpr std::uint8_t ip_proto_udp = 17;
inline constexpr std::uint8_t ip_proto_uet = 253;  // UET directly over IP (entropy header first)

// ---- ECN (RFC 3168) and DSCP: the TOS byte is dscp(6) | ecn(2) ----

enum class ecn_codepoint : std::uint8_t { not_ect = 0, ect1 = 1, ect0 = 2, ce = 3 };

// "Not-ECT", "ECT(1)", "ECT(0)", "CE".
const char* to_string(ecn_codepoint e) noexcept;

inline constexpr std::uint8_t make_tos(std::uint8_t dscp, std::uint8_t ecn) noexcept {
    return static_cast<std::uint8_t>(((dscp & 0x3f) << 2) | (ecn & 3));
}
inline constexpr std::uint8_t make_tos(std::uint8_t dscp, ecn_codepoint ecn) noexcept {
    return make_tos(dscp, static_cast<std::uint8_t>(ecn));
}
inline constexpr std::uint8_t tos_dscp(std::uint8_t tos) noexcept {
    return tos >> 2;
}
inline constexpr ecn_codepoint tos_ecn(std::uint8_t tos) noexcept {
    return static_cast<ecn_codepoint>(tos & 3);
}
inline constexpr bool is_ect(ecn_codepoint e) noexcept {
    return e == ecn_codepoint::ect0 || e == ecn_codepoint::ect1;
}

// ---- Internet checksum (RFC 1071) ----
// checksum_partial() accumulates the ones'-complement sum of big-endian 16-bit words into a
// 32-bit partial sum; chain calls over pieces (every piece but the last must have even length),
// then checksum_finish() folds and complements. internet_checksum() does both for one buffer.

std::uint32_t checksum_partial(std::span<const std::uint8_t> data, std::uint32_t sum = 0) noexcept;
inline std::uint16_t checksum_finish(std::uint32_t sum) noexcept {
    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    return static_cast<std::uint16_t>(~sum);
}
// Copies src to dst (no overlap) and returns checksum_partial(src, sum): the one pass that
// builds a frame's payload also sums it, so the UDP checksum need not read it again.
std::uint32_t checksum_copy(std::uint8_t* dst, std::span<const std::uint8_t> src,
                            std::uint32_t sum = 0) noexcept;
inline std::uint16_t internet_checksum(std::span<const std::uint8_t> data) noexcept {
    return checksum_finish(checksum_partial(data));
}
// A sum of native 32-bit words folded to the 16-bit ones'-complement sum in network order: the
// sum does not care about byte order as long as the folded result is swapped once (RFC 1071
// section 2). checksum_partial's bulk loops end here too.
inline std::uint16_t checksum_fold_native(std::uint64_t total) noexcept {
    total = (total & 0xffffffffu) + (total >> 32);
    total = (total & 0xffffffffu) + (total >> 32);
    total = (total & 0xffff) + (total >> 16);
    total = (total & 0xffff) + (total >> 16);
    const auto folded = static_cast<std::uint16_t>(total);
    if constexpr (std::endian::native == std::endian::little)
        return static_cast<std::uint16_t>((folded >> 8) | (folded << 8));
    return folded;
}
// The checksum of an IPv4 header of `words32` 32-bit words at h (its checksum field counted as
// it stands): inline, for the per-frame build and verify.
inline std::uint16_t ipv4_header_checksum(const std::uint8_t* h, std::size_t words32 = 5) noexcept {
    std::uint64_t total = 0;
    for (std::size_t i = 0; i < words32; ++i) {
        std::uint32_t w;
        std::memcpy(&w, h + 4 * i, 4);
        total += w;
    }
    return static_cast<std::uint16_t>(~checksum_fold_native(total));
}
// RFC 1624 incremental update: the new checksum after one 16-bit word changed from old_word to
// new_word (e.g. a TTL/TOS rewrite on the forwarding path).
std::uint16_t checksum_update16(std::uint16_t checksum, std::uint16_t old_word,
                                std::uint16_t new_word) noexcept;

// ---- IPv4 ----

struct ipv4_header {
    static constexpr std::size_t wire_size = 20;  // without options
    std::uint8_t version = 4;
    std::uint8_t ihl = 5;  // in 32-bit words
    std::uint8_t dscp = 0;
    std::uint8_t ecn = 0;
    std::uint16_t total_length = 0;
    std::uint16_t id = 0;
    bool df = false;
    bool mf = false;
    std::uint16_t frag_offset = 0;  // in 8-byte units, 13 bits
    std::uint8_t ttl = 64;
    std::uint8_t protocol = 0;
    std::uint16_t checksum = 0;
    std::uint32_t src = 0;  // host order
    std::uint32_t dst = 0;

    std::size_t header_length() const noexcept { return std::size_t{ihl} * 4; }
};

// encode writes the 20 fixed bytes as given, checksum included (see ipv4_fill_checksum).
std::size_t encode(const ipv4_header& h, std::span<std::uint8_t> out) noexcept;
// The fields of the 20 fixed bytes at b, unchecked: decode checks them.
void load_fields(const std::uint8_t* b, ipv4_header& h) noexcept;
// decode checks version 4, IHL >= 5, that the options fit in the buffer, total_length >= the
// header, and the header checksum. Options are skipped, not interpreted. Fragments are accepted
// here (parse_l2l4 refuses them).
reject_reason decode(std::span<const std::uint8_t> in, ipv4_header& out) noexcept;
void visit(const ipv4_header& h, field_visitor& v);

// Computes and stores the header checksum of an encoded IPv4 header (IHL taken from byte 0).
// Returns false if the buffer is shorter than the header.
bool ipv4_fill_checksum(std::span<std::uint8_t> header) noexcept;

// "10.0.0.1" from a host-order address.
std::string ipv4_to_string(std::uint32_t addr);

// ---- UDP ----

struct udp_header {
    static constexpr std::size_t wire_size = 8;
    std::uint16_t sport = 0;
    std::uint16_t dport = 0;
    std::uint16_t length = 0;    // header + payload
    std::uint16_t checksum = 0;  // 0 = none (allowed over IPv4)
};

std::size_t encode(const udp_header& h, std::span<std::uint8_t> out) noexcept;
// decode checks only that length >= 8; the checksum needs the IP addresses (udp_checksum_ok).
reject_reason decode(std::span<const std::uint8_t> in, udp_header& out) noexcept;
void visit(const udp_header& h, field_visitor& v);

// The checksum to store for a UDP datagram (header + payload, its checksum field taken as 0 so
// whatever it holds is ignored) over the IPv4 pseudo-header; never 0 (0 is sent as 0xffff).
std::uint16_t udp_checksum(std::uint32_t src_ip, std::uint32_t dst_ip,
                           std::span<const std::uint8_t> datagram) noexcept;
// True if the datagram's checksum is 0 (none) or verifies.
// udp_checksum() of a datagram whose bytes from offset summed_from to the end have the partial
// sum `summed` (checksum_copy of them, at any offset parity): those bytes are not read again.
std::uint16_t udp_checksum_presummed(std::uint32_t src_ip, std::uint32_t dst_ip,
                                     std::span<const std::uint8_t> datagram,
                                     std::size_t summed_from, std::uint32_t summed) noexcept;
bool udp_checksum_ok(std::uint32_t src_ip, std::uint32_t dst_ip,
                     std::span<const std::uint8_t> datagram) noexcept;

}  // namespace uet::wire
