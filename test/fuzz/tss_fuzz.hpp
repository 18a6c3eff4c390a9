// The secure domains the TSS fuzz harness and its seeds share: SDI 7 in cluster mode and SDI 9
// in client/server mode (SSI 0x11223344), both with the key 00..1f under AN 0.
#pragma once

#include <array>
#include <cstdint>

#include "tss/sublayer.hpp"

namespace uet::tss::fuzz {

inline std::array<std::uint8_t, key_size> key() {
    std::array<std::uint8_t, key_size> k;
    for (std::size_t i = 0; i < k.size(); ++i)
        k[i] = static_cast<std::uint8_t>(i);
    return k;
}

// No failure limit in reach: a disabled domain would hide the paths after authentication.
inline std::array<domain_config, 2> domain_configs() {
    return {
        domain_config{.sdi = 7, .rekey_mask = 0xff0, .rekey_shift = 4, .failure_limit = 0xffffffff},
        domain_config{.sdi = 9,
                      .mode = domain_mode::client_server,
                      .failure_limit = 0xffffffff,
                      .ssi = 0x11223344}};
}

inline void add_domains(sublayer& s) {
    const auto k = key();
    for (const domain_config& c : domain_configs())
        s.add_domain(c)->set_key(false, k);
}

// Input: a first byte, then a frame. First byte 0 (or in_two_pieces): the frame is opened as
// received. Otherwise the frame is sealed under SDI 7 (odd) or 9 (even) twice, opened back, and
// must come back as it was; the second, opened again with one bit flipped, must be refused.
// Every frame is also handed to a secure engine of each domain, whose receive path
// (open_frame_into, or the join of a frame in two pieces) must deliver what the in-place open
// gave, and only then: a received frame in two pieces when the first byte says so, the second
// of a round trip always; where it is cut, and the bit flipped, come from the input's middle
// and last bytes.
inline constexpr std::uint8_t open_as_received = 0;
inline constexpr std::uint8_t in_two_pieces = 0x80;

}  // namespace uet::tss::fuzz
