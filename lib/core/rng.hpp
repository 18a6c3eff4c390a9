// Small, fast, seeded pseudo-random generator for everything that must be reproducible:
// impairments, load-balancing entropy, jitter. xoshiro256** (Blackman & Vigna) seeded through
// splitmix64, so any 64-bit seed (0 included) gives a well-mixed, never all-zero state.
// Not cryptographic.
#pragma once

#include <cstdint>
#include <limits>

namespace uet {

// One splitmix64 step: advances state and returns the next output. Also the way to derive
// independent sub-seeds from one seed (call it repeatedly on a copy of the seed).
constexpr std::uint64_t splitmix64(std::uint64_t& state) noexcept {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

class rng {
  public:
    using result_type = std::uint64_t;

    constexpr explicit rng(std::uint64_t seed = 0) noexcept { reseed(seed); }

    constexpr void reseed(std::uint64_t seed) noexcept {
        for (auto& word : s_)
            word = splitmix64(seed);
    }

    // xoshiro256**: 64 uniformly distributed bits.
    constexpr std::uint64_t next_u64() noexcept {
        const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
        const std::uint64_t t = s_[1] << 17;
        s_[2] ^= s_[0];
        s_[3] ^= s_[1];
        s_[1] ^= s_[2];
        s_[0] ^= s_[3];
        s_[2] ^= t;
        s_[3] = rotl(s_[3], 45);
        return result;
    }

    // Uniform in [0, n); returns 0 when n == 0. Lemire's multiply-and-shift with rejection of
    // the short low range, so there is no modulo bias and usually no division at all.
    constexpr std::uint64_t uniform(std::uint64_t n) noexcept {
        if (n == 0) return 0;
        u128 m = static_cast<u128>(next_u64()) * n;
        auto low = static_cast<std::uint64_t>(m);
        if (low < n) {
            const std::uint64_t threshold = (0 - n) % n;  // 2^64 mod n
            while (low < threshold) {
                m = static_cast<u128>(next_u64()) * n;
                low = static_cast<std::uint64_t>(m);
            }
        }
        return static_cast<std::uint64_t>(m >> 64);
    }

    // Uniform in [lo, hi] (both inclusive); lo when hi < lo.
    constexpr std::uint64_t between(std::uint64_t lo, std::uint64_t hi) noexcept {
        if (hi <= lo) return lo;
        const std::uint64_t span = hi - lo;
        if (span == std::numeric_limits<std::uint64_t>::max()) return next_u64();
        return lo + uniform(span + 1);
    }

    // Uniform in [0, 1) with 53 bits of precision.
    constexpr double next_double() noexcept {
        return static_cast<double>(next_u64() >> 11) * 0x1.0p-53;
    }

    // True with probability p. p <= 0 (or NaN) and p >= 1 decide without drawing, so an
    // impairment that is switched off does not consume the stream.
    constexpr bool bernoulli(double p) noexcept {
        if (!(p > 0)) return false;
        if (p >= 1) return true;
        return next_double() < p;
    }

    // UniformRandomBitGenerator, so <random> distributions and std::shuffle accept it.
    static constexpr result_type min() noexcept { return 0; }
    static constexpr result_type max() noexcept { return std::numeric_limits<result_type>::max(); }
    constexpr result_type operator()() noexcept { return next_u64(); }

  private:
    __extension__ using u128 = unsigned __int128;

    static constexpr std::uint64_t rotl(std::uint64_t x, int k) noexcept {
        return (x << k) | (x >> (64 - k));
    }

    std::uint64_t s_[4] = {};
};

}  // namespace uet
