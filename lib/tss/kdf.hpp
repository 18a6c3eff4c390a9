// Key derivation of TSS: NIST SP 800-108 in counter mode with AES-CMAC as the PRF, and the
// per-packet key and IV mask it derives from a secure domain's key (docs/wire-format.md, TSS).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "tss/cmac.hpp"
#include "tss/secret.hpp"

namespace uet::tss {

// SP 800-108 counter mode: K(i) = CMAC(key, [i]_8 || label || 0x00 || context || [L]_32) for
// i = 1, 2, ..., out = K(1) || K(2) || ... cut to out.size() bytes, L = 8 * out.size() bits.
// The counter is one byte placed first, so out holds at most 255 blocks. False on a bad length
// or an OpenSSL failure (out is then zeroed).
bool kdf_ctr_cmac(cmac& prf, std::span<const std::uint8_t> key, std::span<const std::uint8_t> label,
                  std::span<const std::uint8_t> context, std::span<std::uint8_t> out) noexcept;

// The secure domain's mode picks the KDF label: "U1" cluster, "U2" client/server.
enum class domain_mode : std::uint8_t { cluster, client_server };

// What a packet's key depends on besides the domain key: the IPv4 context of the KDF is
// epoch (2) || rekey (4) || source (4), big-endian, where source is the SSI when the TSS header
// carries one and the IPv4 source address otherwise.
struct key_context {
    std::uint16_t epoch = 0;
    std::uint32_t rekey = 0;  // (TSC & rekey_mask) >> rekey_shift
    std::uint32_t source = 0;
    bool operator==(const key_context&) const = default;
};
inline constexpr std::size_t key_context_size = 10;
std::array<std::uint8_t, key_context_size> encode(const key_context& c) noexcept;

// L = 352 bits: the AES-256-GCM key, then the 12-byte mask XORed into every IV.
struct packet_key {
    key256 key;
    secret<iv_size> iv_mask;
};
inline constexpr std::size_t packet_key_bits = (key_size + iv_size) * 8;

bool derive_packet_key(cmac& prf, std::span<const std::uint8_t, key_size> domain_key,
                       domain_mode mode, const key_context& ctx, packet_key& out) noexcept;

}  // namespace uet::tss
