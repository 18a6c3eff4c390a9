// UET TSS (transport security sublayer) header and the entropy header of UET over raw IP.
//
// TSS layout as issue 55 gives it (after uet-ref-prov uet_pkt_hdr.h uet_sec / uet_sec_ssi):
// type(5)=1 | SP | rsvd | AN | SDI(24), then the SSI (32) only when SP is set, then
// epoch(16) | TSC(48). Everything after it, from the PDS header on, is ciphertext ending in a
// 16-byte ICV (lib/tss seals and opens it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "wire/fields.hpp"
#include "wire/reject.hpp"

namespace uet::wire {

inline constexpr std::size_t tss_icv_size = 16;
inline constexpr std::uint8_t tss_type_value = 1;  // the TSS header's type shares PDS type 1

struct tss_header {
    static constexpr std::size_t wire_size = 12;           // without the SSI
    static constexpr std::size_t wire_size_with_ssi = 16;  // with it
    bool an = false;                   // association number (key generation) in use
    std::uint32_t sdi = 0;             // 24 bits: secure domain index
    std::optional<std::uint32_t> ssi;  // present exactly when the SP flag is set
    std::uint16_t epoch = 0;
    std::uint64_t tsc = 0;  // 48 bits: transmit security counter
    bool operator==(const tss_header&) const = default;
};

std::size_t encoded_size(const tss_header& h) noexcept;
std::size_t encode(const tss_header& h, std::span<std::uint8_t> out) noexcept;
reject_reason decode(std::span<const std::uint8_t> in, tss_header& out) noexcept;
void visit(const tss_header& h, field_visitor& v);

// Precedes the PDS (or TSS) header when UET runs directly over IP protocol 253; over UDP the
// entropy rides in the UDP source port instead.
struct entropy_header {
    static constexpr std::size_t wire_size = 4;
    std::uint16_t entropy = 0;
    bool operator==(const entropy_header&) const = default;
};

std::size_t encode(const entropy_header& h, std::span<std::uint8_t> out) noexcept;
reject_reason decode(std::span<const std::uint8_t> in, entropy_header& out) noexcept;
void visit(const entropy_header& h, field_visitor& v);

}  // namespace uet::wire
