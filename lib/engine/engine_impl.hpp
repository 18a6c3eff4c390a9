// Inside the engine: engine_impl holds its parts by value and coordinates them. The parts own
// their state and do not point at one another: engine_core (configuration, time, timers,
// counters), peer_table, pdc_table, message_pool, answer_tracker, ack_coalescer, control_queue,
// frame_builder (bytes on the wire), credit_pacer (RCCC), connectionless (RUDI, UUD), what goes
// out: tx_pipeline (tx_pipeline.cpp, tx_batch.cpp) and send_queue (posting), and what comes in:
// rx_pipeline (rx_read.cpp, rx_take.cpp, rx_target.cpp) and rx_control. What is not yet a part
// is split by concern over engine.cpp (set-up, API) and engine_timers.cpp (what time does).
#pragma once

#include <memory>
#include <vector>

#include "core/flat_map.hpp"
#include "core/ring_index.hpp"
#include "core/rng.hpp"
#include "core/timer_wheel.hpp"
#include "engine/ack_coalescer.hpp"
#include "engine/answer_tracker.hpp"
#include "engine/connectionless.hpp"
#include "engine/control_queue.hpp"
#include "engine/credit_pacer.hpp"
#include "engine/engine.hpp"
#include "engine/engine_core.hpp"
#include "engine/frame_builder.hpp"
#include "engine/message_pool.hpp"
#include "engine/path_loss.hpp"
#include "engine/pdc_table.hpp"
#include "engine/peer_table.hpp"
#include "engine/request_index.hpp"
#include "engine/rx_context.hpp"
#include "engine/rx_pipeline.hpp"
#include "engine/send_queue.hpp"
#include "engine/tx_pipeline.hpp"
#include "pds/pdc.hpp"
#include "pds/rudi.hpp"
#include "ses/message.hpp"
#include "ses/reassembly.hpp"
#include "wire/frame.hpp"
#include "wire/plain_request.hpp"
#include "wire/uet_packet.hpp"

namespace uet {

class engine_impl final {
  public:
    explicit engine_impl(const engine_config& cfg);

    // engine.cpp
    peer_id add_peer(const wire::mac_address& mac, std::uint32_t ip, std::uint16_t pid);
    // post_message()'s checks and its message, taken from the pool, given its id and tracked,
    // not yet queued (index in m).
    status admit_message(peer_id to, delivery_mode mode, const ses_fields& ses,
                         std::span<const std::uint8_t> data, std::uint64_t context,
                         std::uint32_t& m);
    bool poll_received(received_message& out);
    void release(std::uint64_t handle);
    const engine_counters& counters() const;
    std::vector<pdc_info> pdcs() const;
    bool idle() const;
    std::uint64_t next_deadline() const;

    // rx_pipeline (rx_read.cpp)
    void receive_burst(std::span<const std::span<const std::uint8_t>> frames,
                       const wire::frame_rest* rests, std::uint64_t now) {
        rx_.receive_burst(*this, frames, rests, now);
    }
    // engine_timers.cpp
    void advance(std::uint64_t now);

    engine_core core_;

  private:
    friend class engine;
    friend class answer_tracker;
    friend class ack_coalescer;
    friend class connectionless;
    friend class credit_pacer;
    friend class path_loss;
    friend class rx_pipeline;
    friend class rx_control;
    friend class tx_pipeline;
    friend class send_queue;
    friend struct ack_listener;

    // ---- set-up and tables (engine.cpp) ----
    std::uint32_t find_or_add_peer(const wire::mac_address& mac, std::uint32_t ip,
                                   std::uint16_t pid);
    // A new entry: a free one, a new one below max_peers, or one an evictable peer gives up.
    std::uint32_t add_peer_entry(const wire::mac_address& mac, std::uint32_t ip, std::uint16_t pid);
    // The peer's entry given back, with what remembers it (reassembly, closed PDCs).
    void forget_peer(std::uint32_t id);
    pds::pdc* allocate_pdc();
    // kick: hand the slot to flows waiting for one (not while allocating).
    void free_pdc(pds::pdc& p, bool kick = true);
    void open_initiator_pdc(std::uint32_t peer, std::size_t mode_slot, std::uint64_t now);
    void kick_waiting(std::uint64_t now);
    void complete_message(std::uint32_t index, status result, bool answered = false);
    // complete_message's body, inline where nearly every message ends (an ACK that answers it,
    // on_request_acked).
    void end_message(std::uint32_t index, status result, bool answered);
    void untrack_message(std::uint32_t index) noexcept;
    void release_message(std::uint32_t index) noexcept;

    // ---- receive: rx_pipeline, rx_control ----
    using rx_context = ::uet::rx_context;
    // A source about to get state here (a target PDC, a message in reassembly): its own entry,
    // taking the place of a learned peer that holds none when the table is full. False (and a
    // counted drop) when there is no room.
    bool learn_peer(rx_context& rx);
    // How long a target PDC lingers after its CLOSE (pdc::close_heard): as long as its
    // initiator may wait to resend, so a forged CLOSE is found out by the next data packet.
    std::uint64_t close_linger_ns() const noexcept { return core_.params.rto_max_ns; }
    // A lingering PDC freed for a new one when none is free.
    bool reclaim_lingering();

    // The answers held on p (answer_tracker) go, its initiator known (engine.cpp).
    void validate(pds::pdc& p);

    // ---- timers (engine_timers.cpp) ----
    void on_timer(timer_node& n, std::uint64_t now);
    void on_rto_timer(pds::pdc& p, std::uint64_t now);
    // False when the PDC failed (and was freed) on it.
    bool on_packet_timer(pds::pdc& p, tx_entry& e, std::uint64_t now);
    void on_idle_timer(pds::pdc& p, std::uint64_t now);
    void fail_initiator(pds::pdc& p, status result, std::uint64_t now);
    void maybe_schedule_close(pds::pdc& p, std::uint64_t now);

    // ---- state ----
    credit_pacer pacer_;
    rx_pipeline rx_;
    frame_builder frames_;
    tx_pipeline tx_;

    peer_table peers_;

    pdc_table pdcs_;

    message_pool msgs_;
    answer_tracker answers_;
    connectionless connectionless_;
    ses::reassembly reassembly_;

    // Control frames (ACK, NACK, RUDI responses): a ring of fixed-size slots. Slots handed to
    // the caller by transmit() are reclaimed at the next transmit() call.
    control_queue control_;
    ack_coalescer acks_;
    path_loss paths_;
};

void add_counters(pds::pdc_counters& into, const pds::pdc_counters& from) noexcept;

inline void engine_impl::end_message(std::uint32_t index, status result, bool answered) {
    ses::tx_message& m = msgs_[index];
    if (!m.in_use || m.kept) return;
    const bool counted_only = m.unsignaled && answered && result.ok();
    if (counted_only) [[likely]] {
        msgs_.add_unsignaled_ended(1);
    } else {
        msgs_.push_completion(send_completion{m.context, result, answered, m.unsignaled, index});
    }
    if (result.ok())
        ++core_.counters.messages_completed;
    else
        ++core_.counters.messages_failed;
    if (answered) ++core_.counters.answered_by_ack;
    if (m.unsignaled && !counted_only) {
        untrack_message(index);
        m.kept = true;  // for the caller to read (release_unsignaled_message)
        m.ends_counted = false;
    } else {
        release_message(index);
    }
}

// An ended message no longer found by its id, nor the transmit template's.
inline void engine_impl::untrack_message(std::uint32_t index) noexcept {
    msgs_.untrack(index);
    frames_.forget_message(index);  // the slot's next message
}

// An ended message untracked and back in the pool.
inline void engine_impl::release_message(std::uint32_t index) noexcept {
    untrack_message(index);
    --peers_[msgs_[index].peer].messages;
    msgs_.release(index);
}

}  // namespace uet
