#include "core/tx_window.hpp"

namespace uet {

void tx_window::reset(std::span<tx_entry> ring, psn_t start_psn) noexcept {
    ring_ = ring;
    mask_ = static_cast<std::uint32_t>(ring.size() - 1);
    una_ = next_ = start_psn;
    retx_head_ = retx_tail_ = none;
    for (tx_entry& e : ring_) {
        e.state = tx_state::free;
        e.in_retx_list = false;
        e.deadline = no_deadline;
    }
}

tx_entry* tx_window::find(psn_t psn) noexcept {
    if (static_cast<std::uint32_t>(psn - una_) >= outstanding()) return nullptr;
    tx_entry& e = ring_[psn & mask_];
    return e.state == tx_state::free ? nullptr : &e;
}

tx_entry& tx_window::push(tx_kind kind) noexcept {
    tx_entry& e = ring_[next_ & mask_];
    e.psn = next_++;
    e.kind = kind;
    e.state = tx_state::in_flight;
    e.retries = 0;
    e.tx_seq = 0;
    e.counted = false;
    e.message = 0;
    e.offset = e.length = 0;
    return e;
}

std::uint32_t tx_window::advance() noexcept {
    std::uint32_t freed = 0;
    while (una_ != next_ && ring_[una_ & mask_].state == tx_state::acked) {
        ring_[una_ & mask_].state = tx_state::free;
        ++una_;
        ++freed;
    }
    return freed;
}

void tx_window::queue_retransmit(tx_entry& e, retx_cause cause) noexcept {
    e.state = tx_state::retx_queued;
    e.cause = cause;
    if (e.in_retx_list) return;
    const std::uint32_t slot = slot_of(e);
    e.in_retx_list = true;
    e.retx_next = none;
    if (retx_tail_ == none)
        retx_head_ = slot;
    else
        ring_[retx_tail_].retx_next = slot;
    retx_tail_ = slot;
}

tx_entry* tx_window::pop_retransmit() noexcept {
    while (retx_head_ != none) {
        tx_entry& e = ring_[retx_head_];
        retx_head_ = e.retx_next;
        if (retx_head_ == none) retx_tail_ = none;
        e.in_retx_list = false;
        // Entries acknowledged (or resent by go-back-N) after they were queued stay linked
        // until they reach the head; they are skipped here.
        if (e.state == tx_state::retx_queued) return &e;
    }
    return nullptr;
}

tx_entry* tx_window::peek_retransmit() noexcept {
    while (retx_head_ != none) {
        tx_entry& e = ring_[retx_head_];
        if (e.state == tx_state::retx_queued) return &e;
        retx_head_ = e.retx_next;
        if (retx_head_ == none) retx_tail_ = none;
        e.in_retx_list = false;
    }
    return nullptr;
}

void tx_window::clear_retransmits() noexcept {
    while (retx_head_ != none) {
        tx_entry& e = ring_[retx_head_];
        retx_head_ = e.retx_next;
        e.in_retx_list = false;
    }
    retx_tail_ = none;
}

}  // namespace uet
