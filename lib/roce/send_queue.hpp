// The send queue of one RC queue pair: work requests in the order they were posted, each with
// the PSNs its packets took. WQEs complete in order from the front; the requester segments
// from `unsent`, and a resend finds the WQE of a PSN by binary search (PSNs grow along the queue).
#pragma once

#include <cstdint>
#include <vector>

#include "core/psn.hpp"
#include "roce/verbs.hpp"

namespace uet::roce {

struct swqe {
    send_wr wr;
    psn_t first_psn = 0;
    psn_t last_psn = 0;  // a READ reserves one PSN per response packet
    std::uint32_t npkts = 0;
    bool started = false;   // first_psn and last_psn are set
    bool answered = false;  // READ: every response packet arrived; atomic: its ACK came
    bool done = false;      // acknowledged (and answered): completes when it reaches the front
    std::uint32_t read_arrived = 0;  // READ: response packets placed so far
    std::uint64_t atomic_orig = 0;
    wc_status status = wc_status::success;

    bool needs_response() const noexcept {
        return wr.opcode == wr_opcode::read || wr.opcode == wr_opcode::cmp_swap ||
               wr.opcode == wr_opcode::fetch_add;
    }
};

// PSNs a message of `length` bytes takes at this MTU: a READ's response packets; an empty
// message or an atomic takes one. In out-of-order mode a WRITE with immediate adds a
// zero-length packet that carries the immediate after the data.
constexpr std::uint32_t packets_for(wr_opcode op, std::uint32_t length, std::uint32_t mtu,
                                    bool out_of_order = false) noexcept {
    if (op == wr_opcode::cmp_swap || op == wr_opcode::fetch_add) return 1;
    const std::uint32_t data = (length + mtu - 1) / mtu;
    if (out_of_order && op == wr_opcode::write_imm) return data + 1;
    return data == 0 ? 1 : data;
}

class send_queue {
  public:
    // depth: rounded up to a power of two.
    explicit send_queue(std::uint32_t depth = 256);

    std::uint32_t size() const noexcept { return tail_ - head_; }
    std::uint32_t capacity() const noexcept { return mask_ + 1; }
    bool empty() const noexcept { return head_ == tail_; }
    bool full() const noexcept { return size() == capacity(); }

    // Appends a WQE; nullptr when the queue is full.
    swqe* push(const send_wr& wr) noexcept;

    swqe* front() noexcept { return empty() ? nullptr : &ring_[head_ & mask_]; }
    void pop_front() noexcept {
        if (unsent_ == head_) ++unsent_;  // a flushed WQE that was never sent
        ++head_;
    }
    // The oldest WQE not yet segmented in full; nullptr when every WQE is.
    swqe* next_unsent() noexcept { return unsent_ == tail_ ? nullptr : &ring_[unsent_ & mask_]; }
    const swqe* next_unsent() const noexcept {
        return unsent_ == tail_ ? nullptr : &ring_[unsent_ & mask_];
    }
    void segmented() noexcept { ++unsent_; }
    bool all_segmented() const noexcept { return unsent_ == tail_; }

    // The started WQE whose PSNs hold `psn`, or nullptr.
    swqe* find_by_psn(psn_t psn) noexcept;

    // Calls f(swqe&) for each WQE from the front, oldest first, while f returns true.
    template <typename F>
    void for_each(F&& f) {
        for (std::uint32_t i = head_; i != tail_; ++i)
            if (!f(ring_[i & mask_])) return;
    }
    // Forgets every WQE (after they completed with a flush error).
    void clear() noexcept { head_ = unsent_ = tail_; }

  private:
    std::vector<swqe> ring_;
    std::uint32_t mask_ = 0;
    std::uint32_t head_ = 0, unsent_ = 0, tail_ = 0;
};

}  // namespace uet::roce
