// The secure domains the TSS fuzz harness and its seeds share: SDI 7 in cluster mode and SDI 9
// in client/server mode (SSI 0x11223344), both with the key 00..1f under AN 0.
#pragma once

#include <array>
#include <cstdint>

#include "tss/sublayer.hpp"

namespace uet::tss::fuzz {

inline void add_domains(sublayer& s) {
    std::array<std::uint8_t, key_size> key;
    for (std::size_t i = 0; i < key.size(); ++i)
        key[i] = static_cast<std::uint8_t>(i);
    // No failure limit in reach: a disabled domain would hide the paths after authentication.
    s.add_domain({.sdi = 7, .rekey_mask = 0xff0, .rekey_shift = 4, .failure_limit = 0xffffffff})
        ->set_key(false, key);
    s.add_domain({.sdi = 9,
                  .mode = domain_mode::client_server,
                  .failure_limit = 0xffffffff,
                  .ssi = 0x11223344})
        ->set_key(false, key);
}

// Input: a first byte, then a frame. First byte 0: the frame is opened as received. Otherwise the
// frame is sealed under SDI 7 (odd) or 9 (even), opened back, and must come back as it was.
inline constexpr std::uint8_t open_as_received = 0;

}  // namespace uet::tss::fuzz
