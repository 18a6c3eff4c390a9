// Index arithmetic for fixed rings whose size is not a power of two: the operands are already
// in range, so one compare replaces the modulo (a 64-bit division, which the hot path would
// otherwise pay several times per message).
#pragma once

#include <cstddef>

namespace uet {

// (base + offset) mod size, for base < size and offset <= size.
constexpr std::size_t ring_add(std::size_t base, std::size_t offset, std::size_t size) noexcept {
    const std::size_t i = base + offset;
    return i >= size ? i - size : i;
}

// The slot after i (i < size).
constexpr std::size_t ring_next(std::size_t i, std::size_t size) noexcept {
    return i + 1 == size ? 0 : i + 1;
}

}  // namespace uet
