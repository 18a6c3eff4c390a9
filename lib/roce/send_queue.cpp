#include "roce/send_queue.hpp"

#include <bit>

namespace uet::roce {

send_queue::send_queue(std::uint32_t depth)
    : ring_(std::bit_ceil(depth < 2 ? 2u : depth)),
      mask_(static_cast<std::uint32_t>(ring_.size() - 1)) {}

swqe* send_queue::push(const send_wr& wr) noexcept {
    if (full()) return nullptr;
    swqe& w = ring_[tail_++ & mask_];
    w = swqe{};
    w.wr = wr;
    return &w;
}

swqe* send_queue::find_by_psn(psn_t psn) noexcept {
    // Started WQEs are the first `started` from head_ (the one at unsent_ may be part-way);
    // their PSN ranges follow one another, so the one that holds psn is found by bisection.
    // Positions are relative to head_ so that the counters may wrap.
    const std::uint32_t started = unsent_ - head_ + (unsent_ == tail_ ? 0 : 1);
    std::uint32_t lo = 0, hi = started;
    while (lo < hi) {
        const std::uint32_t mid = lo + (hi - lo) / 2;
        swqe& w = ring_[(head_ + mid) & mask_];
        if (!w.started || psn_before(psn, w.first_psn))
            hi = mid;
        else if (psn_after(psn, w.last_psn))
            lo = mid + 1;
        else
            return &w;
    }
    return nullptr;
}

}  // namespace uet::roce
