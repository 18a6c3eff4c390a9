// A pattern over the first N bytes of a frame: the bits that must hold given values. Matched
// with N/16 vector loads, ANDs and compares (SSE2 on x86-64, NEON on Arm) and one branch, where
// checking the same fields one by one takes a load, a compare and a branch each.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace uet {

template <std::size_t N>
class byte_pattern {
    static_assert(N % 16 == 0, "whole 16-byte words");

  public:
    static constexpr std::size_t size = N;

    // Byte `at` must hold `value` in the bits of `bits`.
    void require(std::size_t at, std::uint8_t value, std::uint8_t bits = 0xff) noexcept {
        mask_[at] = bits;
        want_[at] = value & bits;
    }
    // The caller checked that b holds at least N bytes.
    bool matches(const std::uint8_t* b) const noexcept {
        using word = std::uint64_t __attribute__((vector_size(16)));
        word differ = {0, 0};
        // Unrolled: at -O2 GCC keeps the loop, whose control then outweighs its few vector ops.
#pragma GCC unroll 16
        for (std::size_t i = 0; i < N; i += 16)
            differ |= (load(b + i) & load(&mask_[i])) ^ load(&want_[i]);
        return (differ[0] | differ[1]) == 0;
    }

  private:
    static auto load(const std::uint8_t* p) noexcept {
        std::uint64_t __attribute__((vector_size(16))) v;
        std::memcpy(&v, p, sizeof v);
        return v;
    }

    std::array<std::uint8_t, N> mask_{}, want_{};
};

}  // namespace uet
