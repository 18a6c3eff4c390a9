// Ranges of bits in a bitmap of 64-bit words (bit i is bit i % 64 of word i / 64), taken a word
// at a time: a run of 32 packets touches one or two words, not 32 bits one by one.
#pragma once

#include <algorithm>
#include <cstdint>

namespace uet::bits {

// Bits [at, at + n) of one word: at < 64, 0 < n <= 64 - at.
constexpr std::uint64_t word_mask(std::uint32_t at, std::uint32_t n) noexcept {
    return (n == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << n) - 1) << at;
}

// Whether any of bits [first, first + n) is set.
inline bool any_in(const std::uint64_t* words, std::uint32_t first, std::uint32_t n) noexcept {
    while (n != 0) {
        const std::uint32_t at = first & 63, take = std::min<std::uint32_t>(n, 64 - at);
        if (words[first >> 6] & word_mask(at, take)) return true;
        first += take;
        n -= take;
    }
    return false;
}

// Sets bits [first, first + n).
inline void set_range(std::uint64_t* words, std::uint32_t first, std::uint32_t n) noexcept {
    while (n != 0) {
        const std::uint32_t at = first & 63, take = std::min<std::uint32_t>(n, 64 - at);
        words[first >> 6] |= word_mask(at, take);
        first += take;
        n -= take;
    }
}

}  // namespace uet::bits
