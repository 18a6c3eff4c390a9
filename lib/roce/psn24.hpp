// RoCE's 24-bit PSNs and MSNs. Inside, a QP works on 32-bit extended PSNs (core/psn.hpp) so the
// core send and receive windows serve RoCE unchanged; the wire carries the low 24 bits.
#pragma once

#include <cstdint>

#include "core/psn.hpp"

namespace uet::roce {

inline constexpr std::uint32_t psn24_mask = 0xffffffu;

constexpr std::uint32_t to_wire(psn_t psn) noexcept {
    return psn & psn24_mask;
}

// How far the 24-bit `to` is ahead of the 24-bit `from`, in [-2^23, 2^23).
constexpr std::int32_t psn24_distance(std::uint32_t from, std::uint32_t to) noexcept {
    // Shift the 24-bit difference to the top and back: an arithmetic shift sign-extends it.
    return static_cast<std::int32_t>(((to - from) & psn24_mask) << 8) >> 8;
}

// The extended PSN whose low 24 bits are `wire` and that is nearest `near` (within 2^23 either
// way): `near` is the responder's expected PSN or the requester's oldest unacknowledged one.
constexpr psn_t extend(std::uint32_t wire, psn_t near) noexcept {
    return near + static_cast<std::uint32_t>(psn24_distance(to_wire(near), wire));
}

}  // namespace uet::roce
