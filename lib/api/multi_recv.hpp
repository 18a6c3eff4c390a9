// Multi-receive buffers: one posted receive that takes eager sends one after another, each with a
// completion entry of its own, until too little room is left (multi_recv.cpp; the per-message
// placement in multi_recv_inline.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "api/op_pool.hpp"
#include "engine/engine.hpp"
#include "ses/matching.hpp"
#include "uet/uet.hpp"

namespace uet::detail {

struct endpoint_impl;

class multi_recv {
  public:
    explicit multi_recv(std::size_t max_rx_messages) : waiting_for_room_(max_rx_messages) {}

    // The multi-receive buffer buf in op `index` (taken, its entry reserved), from `source`:
    // posted, then filled from the held messages and the deferred sends it may take.
    errc post(endpoint_impl& ep, std::uint32_t index, std::span<std::byte> buf,
              std::uint32_t source, void* context);
    // A multi-receive buffer just posted takes the held messages it matches, oldest first.
    void fill_from_held(endpoint_impl& ep, std::uint32_t index);
    // A message for the multi-receive buffer `recv` (posted as `node` of the untagged receives):
    // placed, or failed as too long for a fresh buffer (true); or the buffer released for want of
    // room, the message still to match (false).
    // Inline (multi_recv_inline.hpp): once per message of such a buffer.
    bool place(endpoint_impl& ep, std::uint32_t recv, std::uint32_t node, received_message& m,
               bool answered);
    // A message for a multi-receive buffer while the queue has no room for its entry: answered,
    // and kept (its engine buffer held) until place_waiting() finds room.
    void wait_for_room(endpoint_impl& ep, received_message& m);
    bool place_waiting(endpoint_impl& ep);  // true if any went
    // A multi-receive buffer just posted asks the eager sends deferred for want of room to come
    // again (an RTR each, tied to no receive: they match as any message when they come).
    void ask_deferred(endpoint_impl& ep, std::uint32_t index);
    // The multi-receive buffer is done: its entry (the releasing one) and its op given back.
    void release(endpoint_impl& ep, std::uint32_t recv, std::uint32_t node);
    // Messages wait for room in the queue: newer ones wait behind them.
    bool waiting() const noexcept { return !waiting_for_room_.empty(); }
    std::uint32_t count() const noexcept { return count_; }  // buffers posted
    void drain() {
        count_ = 0;
        waiting_for_room_.drain([](const received_message&) {});
    }

  private:
    std::uint32_t count_ = 0;                               // multi-receive buffers posted
    ses::bounded_fifo<received_message> waiting_for_room_;  // wait_for_room()
};

}  // namespace uet::detail
