// What the path selectors of one engine share: the engine's seeded generator (all randomness
// comes from it, so a run is reproducible from one seed) and the policy parameters. Selectors
// keep a pointer to it, so it must outlive every PDC.
#pragma once

#include <cstdint>

#include "core/rng.hpp"

namespace uet::lb {

struct lb_params {
    // Entropy values sprayed over: 2^path_bits, the low bits of the 16-bit entropy; the upper
    // bits are fixed per PDC (htsim UecMpOblivious: _no_of_paths, _path_random). 8 bits = 256
    // values, enough to cover the 64-path fabrics of the htsim studies several times.
    std::uint8_t path_bits = 8;
    // REPS: how long a retransmit timeout freezes the cache (htsim buffer_reps exit_freeze_after,
    // REPS paper: 10 ms) and how many random values are explored after it.
    std::uint64_t reps_freeze_ns = 10'000'000;
    std::uint8_t reps_explore = 16;
};

// Events of the selectors of one engine, summed over its PDCs (engine_counters::lb). Kept here,
// not per PDC, so a selector's state stays small.
struct lb_stats {
    std::uint64_t reps_freezes = 0;        // REPS freezes entered (a timeout with values to replay)
    std::uint64_t reps_freezes_ended = 0;  // REPS freezes left after reps_freeze_ns
};

struct lb_context {
    uet::rng* rng = nullptr;
    lb_params params;
    lb_stats stats;

    std::uint16_t path_count() const noexcept {
        return static_cast<std::uint16_t>(1u << path_bits());
    }
    std::uint16_t path_mask() const noexcept { return path_count() - 1; }
    std::uint8_t path_bits() const noexcept {
        return params.path_bits < 1 ? 1 : params.path_bits > 15 ? 15 : params.path_bits;
    }
};

// The walk oblivious and bitmap spraying share: index 0..2^k-1 XOR a mask that is redrawn each
// time the index wraps, so every wrap visits every value exactly once, in a fresh order
// (htsim UecMpOblivious::nextEntropy). The upper bits never change.
class spray_walk {
  public:
    void init(uet::rng& rng, std::uint8_t bits) noexcept {
        bits_ = bits;
        upper_ = static_cast<std::uint16_t>(rng.next_u64()) & static_cast<std::uint16_t>(~mask());
        xor_ = static_cast<std::uint16_t>(rng.uniform(count()));
        index_ = 0;
    }
    std::uint16_t current() const noexcept { return (index_ ^ xor_) & mask(); }
    void advance(uet::rng& rng) noexcept {
        if (++index_ < count()) return;
        index_ = 0;
        xor_ = static_cast<std::uint16_t>(rng.uniform(count()));
    }
    std::uint16_t value(std::uint16_t path) const noexcept { return upper_ | path; }
    std::uint16_t upper() const noexcept { return upper_; }
    std::uint32_t count() const noexcept { return 1u << bits_; }
    std::uint16_t mask() const noexcept { return static_cast<std::uint16_t>(count() - 1); }

  private:
    std::uint16_t upper_ = 0;
    std::uint16_t index_ = 0;
    std::uint16_t xor_ = 0;
    std::uint8_t bits_ = 1;
};

}  // namespace uet::lb
