// Receive-side PSN tracking of one PDC: the cumulative ACK point plus a bitmap of everything
// received beyond it, over a ring as wide as the window (any power of two, so an MPR of 1024
// packets is tracked whole, not just the 64 a SACK can report). Duplicates are recognised
// exactly within the window; below it everything is a duplicate by definition.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>

#include "core/psn.hpp"

namespace uet {

struct sack_block {
    psn_t base = 0;            // PSN of bit 0
    std::uint64_t bitmap = 0;  // bit i: base + i received
};

class rx_window {
  public:
    enum class verdict : std::uint8_t { fresh, duplicate, beyond_window };

    // ring: storage for the bitmap, a power-of-two number of words; the window is 64x that.
    // Every PSN before start_psn counts as received.
    void reset(std::span<std::uint64_t> ring, psn_t start_psn) noexcept;

    verdict classify(psn_t psn) const noexcept;
    // Whether classify() says fresh of each of first, first + 1, ..., first + n - 1: their bits
    // looked at a word at a time.
    bool all_fresh(psn_t first, std::uint32_t n) const noexcept;
    // Records a PSN classify() called fresh and moves the cumulative point over what is now
    // contiguous.
    void accept(psn_t psn) noexcept;
    // accept() of first, first + 1, ..., first + n - 1, each new (not received, in the window).
    void accept_run(psn_t first, std::uint32_t n) noexcept;

    // Undoes the accept() of the PSN at the cumulative point, when nothing beyond it was
    // received (a CLOSE acknowledged, which must not count as data that may still come).
    void retract_last() noexcept {
        if (highest_ != cack_) return;
        --cack_;
        highest_ = cack_;
    }

    psn_t cack() const noexcept { return cack_; }  // every PSN up to here is received
    psn_t expected() const noexcept { return cack_ + 1; }
    psn_t highest() const noexcept { return highest_; }  // highest PSN received so far
    std::uint32_t capacity() const noexcept { return capacity_; }
    bool received(psn_t psn) const noexcept;

    // 64 PSNs from base = max(epsn - 63, cack + 1) (as uet-htsim builds it): the newest
    // arrivals, never anything already covered by the cumulative ACK.
    sack_block sack(psn_t epsn) const noexcept;

  private:
    void advance_cumulative() noexcept;
    // Calls f(at, count) for the ring's bit ranges of PSNs first .. first + n - 1: one range, or
    // two where the ring wraps (capacity_ is a multiple of 64, so at a word's end). n is taken
    // as at most capacity_, whose bits are every bit of the ring.
    template <typename F>
    bool ring_ranges(psn_t first, std::uint32_t n, F&& f) const {
        n = std::min(n, capacity_);
        const std::uint32_t at = first & (capacity_ - 1);
        const std::uint32_t head = std::min(n, capacity_ - at);
        return f(at, head) || (head != n && f(0, n - head));
    }
    bool test(psn_t psn) const noexcept {
        const std::uint32_t bit = psn & (capacity_ - 1);
        return (ring_[bit >> 6] >> (bit & 63)) & 1;
    }
    void set(psn_t psn, bool on) noexcept {
        const std::uint32_t bit = psn & (capacity_ - 1);
        const std::uint64_t mask = std::uint64_t{1} << (bit & 63);
        ring_[bit >> 6] = on ? (ring_[bit >> 6] | mask) : (ring_[bit >> 6] & ~mask);
    }

    std::span<std::uint64_t> ring_;
    std::uint32_t capacity_ = 0;
    psn_t cack_ = 0;
    psn_t highest_ = 0;
};

}  // namespace uet
