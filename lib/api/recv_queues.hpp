// The endpoint's receive queues: the receives posted, by kind (tagged or not), and the messages
// that arrived before their receive, held with their engine buffers until one matches them.
// Header only: matching a message and posting a receive are on every message's path.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "engine/engine.hpp"
#include "ses/matching.hpp"
#include "uet/uet.hpp"

namespace uet::detail {

// A received send's whole length: a rendezvous send's header announces it, other sends are all
// here.
inline std::size_t message_length(const received_message& m) noexcept {
    return m.ses->rendezvous ? m.ses->request_length : m.data.size();
}

// A message that arrived before its receive.
struct held_message {
    received_message msg;   // its engine buffer is held until it is matched
    bool answered = false;  // an eager send is answered OK when buffered
    bool tagged = false;
    std::uint64_t tag = 0;
};

class recv_queues {
  public:
    static constexpr std::uint32_t none = ses::bounded_fifo<std::uint32_t>::none;

    recv_queues(std::size_t rx_depth, std::size_t max_held)
        : posted_(rx_depth), held_(max_held), max_held_(max_held) {}

    // ---- receives posted (their op indexes) ----
    bool post(bool tagged, std::uint32_t index) noexcept { return posted_.push(tagged, index); }
    // The oldest posted receive of that kind for which pred holds, left in place: its node
    // (none if there is none), for at() and take_at().
    template <class Pred>
    std::uint32_t find_first(bool tagged, Pred&& pred) noexcept {
        return posted_.find_first(tagged, pred);
    }
    std::uint32_t at(bool tagged, std::uint32_t node) noexcept { return posted_.at(tagged, node); }
    void take_at(bool tagged, std::uint32_t node) noexcept { posted_.take_at(tagged, node); }

    // ---- messages held for a receive ----
    bool held_empty() const noexcept { return held_.empty(); }
    std::size_t held_count() const noexcept { return held_.size(); }
    // Whether a message of `bytes` more may be held (claimed ones count until received).
    bool room_for(std::size_t bytes, const endpoint_attr& attr) const noexcept {
        return held_.size() + claimed_ < max_held_ &&
               held_bytes_ + bytes <= attr.max_unexpected_bytes;
    }
    // room_for() must hold.
    void hold(const received_message& m, bool answered, bool tagged, std::uint64_t tag) noexcept {
        held_.push(held_message{m, answered, tagged, tag});
        held_bytes_ += m.data.size();
    }
    // The oldest held message for which pred holds, no longer held.
    template <class Pred>
    std::optional<held_message> take_held(Pred&& pred) noexcept {
        auto held = held_.take_first(pred);
        if (held) held_bytes_ -= held->msg.data.size();
        return held;
    }
    // The same left in place: its node (none if there is none), for held_at() and take_held_at().
    template <class Pred>
    std::uint32_t find_held(Pred&& pred) const noexcept {
        return held_.find_first(pred);
    }
    const held_message& held_at(std::uint32_t h) const noexcept { return held_.at(h); }
    void take_held_at(std::uint32_t h) noexcept {
        held_bytes_ -= held_.at(h).msg.data.size();
        held_.take_at(h);
    }

    // The held message at h, taken out of matching for a claim (claims.hpp): its engine buffer
    // is still held, and counted against the limits until release_claimed().
    held_message claim_held_at(std::uint32_t h) noexcept {
        const held_message m = held_.at(h);
        held_.take_at(h);
        ++claimed_;
        return m;
    }
    void release_claimed(const held_message& m) noexcept {
        --claimed_;
        held_bytes_ -= m.msg.data.size();
    }

    // Everything dropped (close: the engine, which held the buffers, is gone).
    void drain() {
        posted_.drain([](std::uint32_t) {});
        held_.drain([](const held_message&) {});
        claimed_ = 0;
    }

  private:
    ses::receive_queues<std::uint32_t> posted_;
    ses::bounded_fifo<held_message> held_;
    std::size_t max_held_;
    std::size_t claimed_ = 0;     // held messages claimed, not yet received
    std::size_t held_bytes_ = 0;  // of held and claimed messages
};

}  // namespace uet::detail
