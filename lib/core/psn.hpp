// Packet sequence numbers: 32-bit serial numbers that wrap, compared by signed distance.
#pragma once

#include <cstdint>

namespace uet {

using psn_t = std::uint32_t;

// How far `to` is ahead of `from` (negative when behind).
constexpr std::int32_t psn_distance(psn_t from, psn_t to) noexcept {
    return static_cast<std::int32_t>(to - from);
}
constexpr bool psn_before(psn_t a, psn_t b) noexcept {
    return psn_distance(b, a) < 0;
}
constexpr bool psn_after(psn_t a, psn_t b) noexcept {
    return psn_before(b, a);
}
constexpr psn_t psn_max(psn_t a, psn_t b) noexcept {
    return psn_before(a, b) ? b : a;
}

}  // namespace uet
