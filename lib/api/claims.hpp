// Messages claimed by a probe (endpoint::probe with probe_flags::claim; libfabric's FI_PEEK |
// FI_CLAIM, MPI_Improbe): out of matching, each waiting for the recv_claimed() that names it.
// A held message keeps its engine buffer, and its place in the limits of held messages
// (recv_queues), until then; a deferred send waits for the RTR that recv_claimed() sends it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "api/recv_queues.hpp"
#include "api/rendezvous.hpp"
#include "ses/matching.hpp"

namespace uet::detail {

struct claimed_message {
    std::uint64_t id = 0;
    bool deferred = false;
    held_message held;   // !deferred
    deferred_send send;  // deferred
};

class claims {
  public:
    explicit claims(std::size_t capacity) : claimed_(capacity) {}

    bool full() const noexcept { return claimed_.full(); }
    // The claim's id (never 0); full() must not hold.
    std::uint64_t add(const held_message& m) noexcept {
        return add(claimed_message{0, false, m, {}});
    }
    std::uint64_t add(const deferred_send& d) noexcept {
        return add(claimed_message{0, true, {}, d});
    }
    bool has(std::uint64_t id) const noexcept {
        return claimed_.find_first([&](const claimed_message& c) { return c.id == id; }) !=
               ses::bounded_fifo<claimed_message>::none;
    }
    std::optional<claimed_message> take(std::uint64_t id) noexcept {
        return claimed_.take_first([&](const claimed_message& c) { return c.id == id; });
    }
    void drain() {
        claimed_.drain([](const claimed_message&) {});
    }

  private:
    std::uint64_t add(claimed_message c) noexcept {
        c.id = next_id_++;
        claimed_.push(c);
        return c.id;
    }

    ses::bounded_fifo<claimed_message> claimed_;
    std::uint64_t next_id_ = 1;
};

}  // namespace uet::detail
