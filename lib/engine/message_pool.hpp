// The messages an engine sends, from post to completion: the pool they live in, the index of
// tracked requests by id (how an answer that comes as a message finds its request), and the ring
// of completions not yet polled with the count of unsignaled requests that ended well.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "core/ring_index.hpp"
#include "engine/engine.hpp"
#include "engine/peer_table.hpp"
#include "engine/request_index.hpp"
#include "ses/message.hpp"

namespace uet {

class message_pool {
  public:
    explicit message_pool(const engine_config& cfg);

    ses::tx_message& operator[](std::uint32_t index) noexcept { return messages_[index]; }
    const ses::tx_message& operator[](std::uint32_t index) const noexcept {
        return messages_[index];
    }
    // The pool itself, through which the message queues are linked.
    ses::tx_messages& pool() noexcept { return messages_; }
    std::uint32_t mtu() const noexcept { return messages_.mtu(); }
    std::size_t capacity() const noexcept { return messages_.capacity(); }
    std::size_t in_use() const noexcept { return messages_.in_use(); }
    bool fully_segmented(const ses::tx_message& m) const noexcept {
        return messages_.fully_segmented(m);
    }
    ses::segment segment_at(const ses::tx_message& m, std::uint32_t offset) const noexcept {
        return messages_.segment_at(m, offset);
    }
    ses::segment next_segment(ses::tx_message& m) const noexcept {
        return messages_.next_segment(m);
    }
    void release(std::uint32_t index) noexcept { messages_.release(index); }

    // RUD/ROD requests are tracked in by_id_ from post to completion.
    static bool tracked_request(std::uint8_t mode, const ses::op_fields& f) noexcept {
        const auto m = static_cast<delivery_mode>(mode);
        return !f.response && (m == delivery_mode::rud || m == delivery_mode::rod);
    }
    // Whether unsignaled requests with these fields may end counted (tx_message::ends_counted).
    static bool may_end_counted(const ses_fields& common) noexcept {
        return !common.response && !ses::answer_needs_message(common.opcode);
    }
    // New messages the pool takes now (post_message's check). Completions not yet polled hold
    // their place in the pool too, so the completion ring never overflows; so do the response
    // messages ACKs announced and not yet posted (announced_unposted: answers in ACKs), which
    // must not fail. (The pool and the ring both have max_pending_messages entries: in_use +
    // held >= size.)
    std::size_t room(std::size_t announced_unposted) const noexcept {
        const std::size_t held = completion_count_ + announced_unposted;
        const std::size_t free = messages_.available();
        return free > held ? free - held : 0;
    }
    // A checked message to ps taken from the pool, given its id and tracked, not yet queued;
    // ses::no_index when the pool has no entry.
    std::uint32_t admit(peer_state& ps, peer_id to, delivery_mode mode, const ses_fields& ses,
                        std::span<const std::uint8_t> data, std::uint64_t context);
    // Inline in its two callers: once per unsignaled request.
    std::uint32_t allocate_unsignaled(peer_state& ps, peer_id to, delivery_mode mode,
                                      const ses_fields& common, const unsignaled_request& r,
                                      bool ends_counted);
    // An ended message is no longer found by its id.
    void untrack(std::uint32_t index) noexcept {
        const ses::tx_message& m = messages_[index];
        // Tracked and inserted: it has an entry (the overflow map is tried only when the entry
        // holds another request now).
        if (m.request_slot != ses::no_index) {
            const ses::message_key key{m.peer, m.mode, m.message_id};
            by_id_.erase(key, index, m.request_slot);
        }
    }
    std::optional<std::uint32_t> find_request(const ses::message_key& key) const noexcept {
        return by_id_.find(key);
    }
    std::optional<std::uint32_t> pending_request(peer_id to, delivery_mode mode,
                                                 std::uint16_t id) const {
        // Only tracked requests (RUD/ROD, not responses) are in the map, under a key with the
        // mode.
        const auto found = by_id_.find(ses::message_key{to, static_cast<std::uint8_t>(mode), id});
        if (!found || !messages_[*found].in_use) return std::nullopt;
        return *found;
    }
    std::uint32_t next_unsignaled(std::uint32_t from) const noexcept;
    void make_loud(std::uint32_t index, std::uint64_t context) noexcept {
        ses::tx_message& m = messages_[index];
        m.unsignaled = false;
        m.ends_counted = false;
        m.context = context;
    }

    // The ring has max_pending_messages entries, one per message that can be outstanding.
    void push_completion(const send_completion& c) noexcept {
        const std::size_t at = ring_add(completion_head_, completion_count_, completions_.size());
        completions_[at] = c;
        ++completion_count_;
    }
    std::size_t poll_completions(std::span<send_completion> out) noexcept {
        std::size_t n = 0;
        while (n < out.size() && completion_count_ > 0) {
            out[n++] = completions_[completion_head_];
            completion_head_ = ring_next(completion_head_, completions_.size());
            --completion_count_;
        }
        // Emptied, the ring starts again at its first entry: the next completions go to lines
        // just read (still cached) rather than on around a ring much larger than what is ever in
        // it.
        if (completion_count_ == 0) completion_head_ = 0;
        return n;
    }
    void add_unsignaled_ended(std::uint64_t n) noexcept { unsignaled_ended_ += n; }
    std::uint64_t take_unsignaled_ended() noexcept { return std::exchange(unsignaled_ended_, 0); }

  private:
    // The UET addresses a message's SES header carries: its peer's PIDonFEP (pid_on_fep) and,
    // with engine_config::fep_pids, ours (the initiator field; a RUDI/UUD target reads its
    // source from it).
    void address(ses::tx_message& m, const peer_state& to) const noexcept {
        m.fields.pid_on_fep = to.pid;
        if (fep_pids_) m.fields.initiator = pid_on_fep_;
    }

    bool fep_pids_ = false;
    std::uint16_t pid_on_fep_ = 0;
    ses::tx_messages messages_;
    // RUD/ROD requests from post until completion: ses::message_key (peer, mode, id) ->
    // message, so a response message finds the request it answers.
    request_index by_id_;
    std::vector<send_completion> completions_;  // ring
    std::size_t completion_head_ = 0, completion_count_ = 0;
    std::uint64_t unsignaled_ended_ = 0;  // unsignaled requests ended well, not yet taken
};

// An unsignaled request's message, not yet queued: allocated under the peer's next id with its own
// fields and tracked by id; ses::no_index when the pool had no entry after all.
inline std::uint32_t message_pool::allocate_unsignaled(peer_state& ps, peer_id to,
                                                       delivery_mode mode, const ses_fields& common,
                                                       const unsignaled_request& r,
                                                       bool ends_counted) {
    const auto mode_code = static_cast<std::uint8_t>(mode);
    const std::uint16_t id = ps.next_message_id[mode_code];
    const std::uint32_t m = messages_.allocate(r.data, r.context, to, mode_code, id, common);
    if (m == ses::no_index) return m;
    ps.advance_message_id(mode_code);
    ++ps.messages;
    ses::tx_message& msg = messages_[m];
    msg.unsignaled = true;
    msg.ends_counted = ends_counted;
    msg.fields.memory_key = r.own.memory_key;
    msg.fields.buffer_offset = r.own.buffer_offset;
    address(msg, ps);
    msg.request_slot = by_id_.insert(ses::message_key{to, mode_code, id}, m).slot;
    return m;
}

}  // namespace uet
