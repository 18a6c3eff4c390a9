// CRC-32 (IEEE 802.3 polynomial, reflected) and the RoCEv2 invariant CRC (ICRC).
//
// The ICRC (IBA annex A17, as Linux rxe computes it) is the CRC-32 over
//   8 bytes of 0xff (standing in for the masked LRH of native InfiniBand),
//   the IPv4 header with TOS (DSCP+ECN), TTL and header checksum set to all 1s,
//   the UDP header with its checksum set to all 1s,
//   the BTH with byte 4 (resv8a, which carries FECN/BECN) set to all 1s,
//   the rest of the transport headers, payload and pad, up to but not including the ICRC,
// i.e. the fields a router may rewrite are masked out. It is stored least significant byte first
// on the wire (the CRC register as a little-endian word, as rxe and hardware NICs do).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace uet::wire {

inline constexpr std::size_t icrc_size = 4;

// Standard CRC-32 (zlib/Ethernet): crc32(data) == crc32_finish(crc32_update(crc32_init, data)).
// On x86 CPUs with carry-less multiplication (PCLMULQDQ) runs of 16 bytes and more are folded (64
// bytes at a time from 64 on); elsewhere, and for tails under 16 bytes, eight table lookups per 8
// bytes.
inline constexpr std::uint32_t crc32_init = 0xffffffffu;
std::uint32_t crc32_update(std::uint32_t state, std::span<const std::uint8_t> data) noexcept;
// The table path alone (slice-by-8), whatever the CPU: the reference the folding is tested
// against, and the baseline of its benchmark.
std::uint32_t crc32_update_table(std::uint32_t state, std::span<const std::uint8_t> data) noexcept;
// Whether crc32_update folds with PCLMULQDQ on this CPU, and whether runs of 256 bytes and more
// fold four times as wide with VPCLMULQDQ (AVX-512).
bool crc32_folds() noexcept;
bool crc32_folds_wide() noexcept;
// Copies n bytes from src to dst (which must not overlap) and folds them into the CRC state in
// the same pass, reading each byte once: memcpy(dst, src, n), then crc32_update(state, src..n).
std::uint32_t crc32_copy(std::uint32_t state, std::uint8_t* dst, const std::uint8_t* src,
                         std::size_t n) noexcept;
inline std::uint32_t crc32_finish(std::uint32_t state) noexcept {
    return ~state;
}
inline std::uint32_t crc32(std::span<const std::uint8_t> data) noexcept {
    return crc32_finish(crc32_update(crc32_init, data));
}

// The ICRC of a RoCEv2-over-IPv4 packet. ip_packet runs from the first byte of the IPv4 header
// to the last byte before the ICRC (IP header with options, UDP header, BTH, extension headers,
// payload, pad). The IP header length is taken from byte 0. If the span is too short to hold the
// IP, UDP and BTH headers the result is meaningless but nothing outside the span is read.
std::uint32_t roce_icrc(std::span<const std::uint8_t> ip_packet) noexcept;
// The same over a packet in pieces: the CRC state after its first piece (which must hold the
// IP, UDP and BTH headers), to go on with crc32_update over the others and end with
// crc32_finish. roce_icrc(p) == crc32_finish(roce_icrc_state(p)).
std::uint32_t roce_icrc_state(std::span<const std::uint8_t> ip_head) noexcept;

inline std::uint32_t load_le32(const std::uint8_t* p) noexcept {
    return std::uint32_t{p[0]} | (std::uint32_t{p[1]} << 8) | (std::uint32_t{p[2]} << 16) |
           (std::uint32_t{p[3]} << 24);
}
inline void store_le32(std::uint8_t* p, std::uint32_t v) noexcept {
    p[0] = static_cast<std::uint8_t>(v);
    p[1] = static_cast<std::uint8_t>(v >> 8);
    p[2] = static_cast<std::uint8_t>(v >> 16);
    p[3] = static_cast<std::uint8_t>(v >> 24);
}

}  // namespace uet::wire
