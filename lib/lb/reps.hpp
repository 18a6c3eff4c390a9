// REPS (recycled entropies, as in the REPS paper and htsim UecMpReps / CircularBufferREPS):
// entropy values whose ACK came back without an ECN mark are remembered in an 8-entry ring and
// reused oldest first; with nothing remembered a value is drawn at random. A retransmit timeout
// (a path may have failed) freezes the ring: for reps_freeze_ns only the remembered values are
// replayed, in turn, since they worked before the failure. Then the ring is cleared and the next
// reps_explore packets go to random values to find the surviving paths again. Freezes entered
// and left are counted in the engine-wide lb_context::stats, not in the per-PDC state.
//
// Per-PDC state is 26 bytes (ring 16, freeze start 4, upper bits 2, flags and cursors 4) plus the
// shared-context pointer and the vtable pointer.
#pragma once

#include <array>
#include <cstdint>

#include "lb/lb_context.hpp"
#include "lb/path_selector.hpp"

namespace uet::lb {

class reps final : public path_selector {
  public:
    static constexpr std::uint8_t cache_size = 8;  // htsim repsBufferSize
    // Freeze times are kept in 1.024 us ticks (now >> 10) so the start fits in 32 bits.
    static constexpr unsigned tick_shift = 10;

    explicit reps(lb_context& ctx) noexcept;

    // Without `now` a freeze started by on_timeout(entropy) begins at the next timed call and
    // an untimed call never ends a freeze.
    std::uint16_t next_entropy() noexcept override;
    std::uint16_t next_entropy(std::uint64_t now) noexcept override;
    void on_ack(std::uint16_t entropy, bool ecn) noexcept override;
    void on_nack(std::uint16_t) noexcept override {}
    void on_timeout(std::uint16_t entropy) noexcept override;
    void on_timeout(std::uint16_t entropy, std::uint64_t now) noexcept override;
    void on_path_switch(std::uint16_t entropy) noexcept override;

    bool frozen() const noexcept { return frozen_; }
    std::uint8_t cached() const noexcept;  // values ready for reuse
    std::uint8_t explore_left() const noexcept { return explore_left_; }

  private:
    std::uint16_t pick() noexcept;
    std::uint16_t random_value() noexcept;
    std::uint16_t take_oldest() noexcept;
    std::uint16_t replay() noexcept;
    void freeze(std::uint64_t now) noexcept;
    bool freeze_over(std::uint64_t now) const noexcept;
    void end_freeze() noexcept;

    lb_context* ctx_;
    std::array<std::uint16_t, cache_size> ring_{};
    std::uint32_t freeze_start_ = 0;  // ticks
    std::uint16_t upper_ = 0;
    std::uint8_t valid_ = 0;       // bit i: ring_[i] not yet reused
    std::uint8_t head_ : 3 = 0;    // next slot written; the oldest when the ring is full
    std::uint8_t filled_ : 4 = 0;  // slots holding a value since the last clear
    std::uint8_t frozen_ : 1 = 0;
    std::uint8_t replay_ : 3 = 0;          // next slot replayed while frozen
    std::uint8_t freeze_pending_ : 1 = 0;  // timed out without `now`: freeze at the next call
    std::uint8_t explore_left_ = 0;
};

}  // namespace uet::lb
