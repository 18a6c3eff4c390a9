// The --verify data pattern. A buffer of 8 bytes or more starts with its sequence number q
// (little endian) and every later byte is a function of (q, offset), so a receiver that does not
// know which message it got (RUD reorders) reads q and checks the rest. Shorter buffers hold a
// function of (key, offset) only, key being something both sides know (the slot).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>

namespace uet::perf {

// Sequence number of the drain messages that fill a receiver's leftover receives.
inline constexpr std::uint64_t drain_sequence = ~std::uint64_t{0};

inline std::uint8_t pattern_byte(std::uint64_t q, std::size_t offset) noexcept {
    const std::uint64_t x = (q + 1) * 0x9e3779b97f4a7c15ull;
    return static_cast<std::uint8_t>((x >> 56) + offset * 31 + (offset >> 8) * 7 + (x >> 40));
}

inline void fill_pattern(std::span<std::byte> buf, std::uint64_t q) noexcept {
    std::size_t start = 0;
    if (buf.size() >= 8) {
        std::memcpy(buf.data(), &q, 8);  // the hosts are little endian (x86-64, arm64)
        start = 8;
    }
    for (std::size_t o = start; o < buf.size(); ++o)
        buf[o] = static_cast<std::byte>(pattern_byte(q, o));
}

// The sequence number a buffer of 8 bytes or more carries.
inline std::uint64_t sequence_of(std::span<const std::byte> buf) noexcept {
    std::uint64_t q = 0;
    if (buf.size() >= 8) std::memcpy(&q, buf.data(), 8);
    return q;
}

// Checks buf against the pattern of q (for short buffers, of `key`); returns the offset of the
// first wrong byte.
inline std::optional<std::size_t> check_pattern(std::span<const std::byte> buf,
                                                std::uint64_t q) noexcept {
    std::size_t start = 0;
    if (buf.size() >= 8) {
        if (sequence_of(buf) != q) return 0;
        start = 8;
    }
    for (std::size_t o = start; o < buf.size(); ++o)
        if (buf[o] != static_cast<std::byte>(pattern_byte(q, o))) return o;
    return std::nullopt;
}

// The sequence number a side expects for a buffer: what it carries when it is long enough to
// carry one, else the key both sides agreed on.
inline std::uint64_t expected_sequence(std::span<const std::byte> buf, std::uint64_t key) noexcept {
    return buf.size() >= 8 ? sequence_of(buf) : key;
}

}  // namespace uet::perf
