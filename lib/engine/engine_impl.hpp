// Inside the engine: engine_impl holds its parts by value and coordinates them. The parts own
// their state and do not point at one another: engine_core (configuration, time, timers,
// counters), peer_table, pdc_table, message_pool, answer_tracker, ack_coalescer, control_queue
// and frame_builder (bytes on the wire). What is not yet a part is split by concern over
// engine.cpp (set-up, API), engine_tx.cpp (what goes out), engine_rx.cpp (what comes in) and
// engine_timers.cpp (what time does).
#pragma once

#include <memory>
#include <vector>

#include "core/flat_map.hpp"
#include "core/ring_index.hpp"
#include "core/rng.hpp"
#include "core/timer_wheel.hpp"
#include "engine/ack_coalescer.hpp"
#include "engine/answer_tracker.hpp"
#include "engine/control_queue.hpp"
#include "engine/engine.hpp"
#include "engine/engine_core.hpp"
#include "engine/frame_builder.hpp"
#include "engine/message_pool.hpp"
#include "engine/pdc_table.hpp"
#include "engine/peer_table.hpp"
#include "engine/request_index.hpp"
#include "engine/rx_context.hpp"
#include "pds/pdc.hpp"
#include "pds/rudi.hpp"
#include "ses/message.hpp"
#include "ses/reassembly.hpp"
#include "wire/frame.hpp"
#include "wire/plain_request.hpp"
#include "wire/uet_packet.hpp"

namespace uet {

// Responses are reassembled under (peer, mode | response_key_bit, request id): the ids of the
// requests a peer sends us and of the responses to ours are separate spaces.
inline constexpr std::uint8_t response_key_bit = 4;

class engine_impl final {
  public:
    explicit engine_impl(const engine_config& cfg);

    // engine.cpp
    peer_id add_peer(const wire::mac_address& mac, std::uint32_t ip);
    status post_send(peer_id to, delivery_mode mode, std::span<const std::uint8_t> data,
                     std::uint64_t context);
    status post_message(peer_id to, delivery_mode mode, const ses_fields& ses,
                        std::span<const std::uint8_t> data, std::uint64_t context,
                        std::uint16_t* message_id);
    status post_unsignaled_message(peer_id to, delivery_mode mode, const ses_fields& common,
                                   const unsignaled_request& r);
    std::size_t post_unsignaled_messages(peer_id to, delivery_mode mode, const ses_fields& common,
                                         std::span<const unsignaled_request> list);
    // post_message()'s checks and its message, taken from the pool, given its id and tracked,
    // not yet queued (index in m).
    status admit_message(peer_id to, delivery_mode mode, const ses_fields& ses,
                         std::span<const std::uint8_t> data, std::uint64_t context,
                         std::uint32_t& m);
    // An admitted message into the queue its mode sends from.
    void queue_message(std::uint32_t m);
    bool poll_received(received_message& out);
    void release(std::uint64_t handle);
    const engine_counters& counters() const;
    std::vector<pdc_info> pdcs() const;
    bool idle() const;
    std::uint64_t next_deadline() const;

    // engine_tx.cpp
    std::size_t transmit(std::uint64_t now, std::span<tx_frame> out);
    // engine_rx.cpp
    void receive(std::span<const std::uint8_t> frame, std::uint64_t now);
    // engine_rx_run.cpp
    void receive_burst(std::span<const std::span<const std::uint8_t>> frames,
                       const wire::frame_rest* rests, std::uint64_t now);
    // engine_timers.cpp
    void advance(std::uint64_t now);

    engine_core core_;

  private:
    friend class engine;
    friend class answer_tracker;
    friend class ack_coalescer;
    friend struct ack_listener;

    // ---- set-up and tables (engine.cpp) ----
    std::uint32_t find_or_add_peer(const wire::mac_address& mac, std::uint32_t ip);
    // A new entry: a free one, a new one below max_peers, or one an evictable peer gives up.
    std::uint32_t add_peer_entry(const wire::mac_address& mac, std::uint32_t ip);
    // The peer's entry given back, with what remembers it (reassembly, closed PDCs).
    void forget_peer(std::uint32_t id);
    pds::pdc* allocate_pdc();
    // kick: hand the slot to flows waiting for one (not while allocating).
    void free_pdc(pds::pdc& p, bool kick = true);
    void open_initiator_pdc(std::uint32_t peer, std::size_t mode_slot, std::uint64_t now);
    void kick_waiting(std::uint64_t now);
    void complete_message(std::uint32_t index, status result, bool answered = false);
    // complete_message's body, forced inline where nearly every message ends (an ACK that
    // answers it, on_request_acked): there the call cost ~20 instructions a message.
    [[gnu::always_inline]] void end_message(std::uint32_t index, status result, bool answered);
    [[gnu::always_inline]] void untrack_message(std::uint32_t index) noexcept;
    [[gnu::always_inline]] void release_message(std::uint32_t index) noexcept;
    void queue_request(peer_state& ps, peer_id to, delivery_mode mode, std::uint32_t m,
                       std::size_t bytes);
    // Forced inline into its two callers: once per unsignaled request.
    [[gnu::always_inline]] bool queue_unsignaled(peer_state& ps, peer_id to, delivery_mode mode,
                                                 const ses_fields& common,
                                                 const unsignaled_request& r);
    std::size_t queue_unsignaled_list(peer_state& ps, peer_id to, delivery_mode mode,
                                      const ses_fields& common,
                                      std::span<const unsignaled_request> list);

    // ---- transmit (engine_tx.cpp) ----
    bool next_data_frame(std::uint64_t now, std::span<std::uint8_t> buf, std::size_t& len);
    // New RUDI and UUD requests: what goes once no PDC has anything to send.
    bool next_connectionless_frame(std::uint64_t now, std::span<std::uint8_t> buf,
                                   std::size_t& len);
    bool retransmit_from(pds::pdc& p, std::uint64_t now, std::span<std::uint8_t> buf,
                         std::size_t& len);
    bool send_new_from(pds::pdc& p, std::uint64_t now, std::span<std::uint8_t> buf,
                       std::size_t& len);
    std::uint64_t credit_backlog(const pds::pdc& p) const;
    void maybe_request_credit(pds::pdc& p);
    bool send_rudi(std::uint64_t now, std::span<std::uint8_t> buf, std::size_t& len,
                   bool retransmissions_only);
    std::uint64_t rudi_rto(std::uint32_t peer, std::uint16_t retries) const noexcept {
        return peers_[peer].rudi_rtt.rto(core_.params.rto_ns, core_.params.rto_max_ns, retries);
    }
    bool send_uud(std::uint64_t now, std::span<std::uint8_t> buf, std::size_t& len);
    void count_tx_call(bool exhausted, std::size_t built);

    // ---- transmit runs (engine_tx_run.cpp) ----
    // The packets inside the message at the head of p's queue that may leave now, built into
    // out (each in its room, or in staging slot staged + its index) from tx_template_ with the
    // work they share done once: how many (0 when the next packet is not one of them, or out
    // has fewer than two frames).
    std::size_t send_run(pds::pdc& p, std::span<tx_frame> out, std::size_t staged);
    // The head message of p's queue when its next packet is inside it and built from
    // tx_template_ (what build_pdc_packet would pick), else none.
    std::uint32_t run_message(const pds::pdc& p) const;
    // The one-packet messages at the head of p's queue that may leave now (a stream of small
    // sends), built into out as send_new_from() would build them one by one, with the PDC's
    // checks, the RTO deadline and the counters done once: how many (0 as send_run() says).
    std::size_t send_single_packet_run(pds::pdc& p, std::span<tx_frame> out, std::size_t staged);
    std::size_t end_tx_run(pds::pdc& p, std::uint64_t payload_bytes, std::size_t sent,
                           std::size_t bytes, std::size_t n);
    // Whether the message is one send_single_packet_run() takes: a plain request in one packet.
    bool single_packet_run_message(const ses::tx_message& m) const noexcept {
        return m.next_offset == 0 && m.length <= msgs_.mtu() && !m.fields.response &&
               !ses::has_extensions(m.fields);
    }

    // ---- receive (engine_rx.cpp) ----
    using rx_context = ::uet::rx_context;
    // A data packet's SES part: its header, checked by place(), or (wire::read_plain_request's
    // path) the segment checked already.
    struct rx_ses {
        const wire::ses_header* header = nullptr;
        const ses::rx_segment* checked = nullptr;
        std::span<const std::uint8_t> payload;
    };
    static rx_ses ses_of(const wire::uet_packet& pkt) noexcept {
        return {pkt.ses ? &*pkt.ses : nullptr, nullptr, pkt.payload};
    }
    bool receive_plain(std::span<const std::uint8_t> frame);
    // Whether a plain request read from a frame is one receive_plain() takes: ours, and not
    // trimmed (a trimmed one goes to the general path, which NACKs it).
    bool takes_plain(const wire::plain_request& f) const noexcept {
        return f.dst_ip == core_.cfg.ip && f.dst_port == core_.cfg.udp_port &&
               f.dscp != core_.cfg.trim_dscp;
    }
    // ---- receive runs (engine_rx_run.cpp) ----
    // A data packet of a run: what differs from the packet before it.
    struct run_packet {
        wire::pds_rud_rod_request pds;
        ses::segment seg;
        std::uint32_t bytes = 0;  // the frame's payload (seg.length and any padding)
        std::uint16_t entropy = 0;
        bool ce = false;
    };
    static constexpr std::size_t max_run = 32;
    // rests: nullptr, or one per frame (frames in two pieces).
    std::size_t receive_run(std::span<const std::span<const std::uint8_t>> frames,
                            const wire::frame_rest* rests);
    std::size_t read_run(std::span<const std::span<const std::uint8_t>> frames,
                         const wire::frame_rest* rests);
    std::size_t read_single_packet_run(std::span<const std::span<const std::uint8_t>> frames,
                                       const wire::frame_rest* rests);
    const ses::rx_segment& single_packet_run_segment(std::size_t i) noexcept;
    pds::pdc* run_target(const rx_context& rx, std::size_t n);
    bool take_run(const rx_context& rx, std::size_t n);
    bool take_single_packet_run(const rx_context& rx, std::size_t n);
    void write_run(const rx_context& rx, std::uint32_t slot, std::size_t n);
    void accept_run(pds::pdc& p, const rx_context& rx, std::size_t n);
    void receive_run_one_by_one(const rx_context& rx, std::size_t n);
    // The run's context with packet i's entropy and CE mark.
    rx_context run_context(const rx_context& rx, std::size_t i) const noexcept {
        rx_context at = rx;
        at.entropy = run_[i].entropy;
        at.ce = run_[i].ce;
        return at;
    }
    void on_trimmed(const rx_context& rx, std::span<const std::uint8_t> l4);
    // A source about to get state here (a target PDC, a message in reassembly): its own entry,
    // taking the place of a learned peer that holds none when the table is full. False (and a
    // counted drop) when there is no room.
    bool learn_peer(rx_context& rx);
    void on_request(const rx_context& rx, const wire::pds_rud_rod_request& h, const rx_ses& in,
                    const std::uint32_t* credit_target = nullptr);
    void on_request_from_new_source(const rx_context& rx, const wire::pds_rud_rod_request& h,
                                    const rx_ses& in, const std::uint32_t* credit_target);
    // A request packet the PDC accepted and placed: into its window, and acknowledged now or
    // later by the ACK policy.
    void on_accepted(pds::pdc& p, const wire::pds_rud_rod_request& h, std::uint32_t bytes,
                     bool created, const rx_context& rx);
    void on_credit_target(pds::pdc& p, std::uint32_t target, std::uint64_t now);
    void on_credit(const rx_context& rx, const wire::pds_ctrl& c);
    pds::pdc* target_for(const rx_context& rx, const wire::pds_rud_rod_request& h, bool& created);
    // The open target PDC a request without SYN names; nullptr (nothing counted) if none.
    pds::pdc* established_target(const rx_context& rx, const wire::pds_rud_rod_request& h);
    void reopen_if_forged_close(pds::pdc& p, psn_t psn);
    // How long a target PDC lingers after its CLOSE (pdc::close_heard): as long as its
    // initiator may wait to resend, so a forged CLOSE is found out by the next data packet.
    std::uint64_t close_linger_ns() const noexcept { return core_.params.rto_max_ns; }
    // A lingering PDC freed for a new one when none is free.
    bool reclaim_lingering();
    void on_ctrl(const rx_context& rx, const wire::pds_ctrl& h);
    void on_ack(const rx_context& rx, const wire::pds_ack_cc& h, const wire::uet_packet& pkt);
    void on_nack(const rx_context& rx, const wire::pds_nack& h);
    void on_rudi_request(const rx_context& rx, const wire::pds_rudi& h,
                         const wire::uet_packet& pkt);
    void on_rudi_response(const rx_context& rx, const wire::pds_rudi& h);
    void on_uud(const rx_context& rx, const wire::uet_packet& pkt);
    // target: the PDC a RUD/ROD packet came on (answers in ACKs).
    // Into reassembly (and, for a WRITE, the region): the SES header checked here unless it
    // comes checked (the common data packet does, and then no segment is built and cleared).
    bool place(const rx_context& rx, delivery_mode mode, const rx_ses& in, bool remember,
               bool single_packet, ses::place_result& result, pds::pdc* target = nullptr) {
        return in.checked ? place_checked(rx, mode, *in.checked, in.payload, remember,
                                          single_packet, result, target)
                          : place_unchecked(rx, mode, in, remember, single_packet, result, target);
    }
    bool place_unchecked(const rx_context& rx, delivery_mode mode, const rx_ses& in, bool remember,
                         bool single_packet, ses::place_result& result, pds::pdc* target);
    bool place_checked(const rx_context& rx, delivery_mode mode, const ses::rx_segment& seg,
                       std::span<const std::uint8_t> payload, bool remember, bool single_packet,
                       ses::place_result& result, pds::pdc* target);
    // The reassembly key of a data packet's message, and whether its payload goes to the region
    // the placement hook names rather than into a reassembly buffer.
    static ses::message_key message_key_of(const rx_context& rx, delivery_mode mode,
                                           const ses::rx_segment& seg) noexcept {
        auto key_mode = static_cast<std::uint8_t>(mode);
        if (seg.fields.response) key_mode |= response_key_bit;
        return {rx.peer, key_mode, seg.message_id};
    }
    bool placed_externally(const ses::rx_segment& seg) const noexcept {
        return core_.places_writes && !seg.fields.response &&
               seg.fields.opcode == wire::ses_opcode::write;
    }
    void place_write(const rx_context& rx, const ses::rx_segment& seg,
                     std::span<const std::uint8_t> payload, std::uint32_t slot);

    // The answers held on p (answer_tracker) go, its initiator known (engine.cpp).
    void validate(pds::pdc& p);

    // ---- timers (engine_timers.cpp) ----
    void on_timer(timer_node& n, std::uint64_t now);
    void on_rto_timer(pds::pdc& p, std::uint64_t now);
    // False when the PDC failed (and was freed) on it.
    bool on_packet_timer(pds::pdc& p, tx_entry& e, std::uint64_t now);
    void on_idle_timer(pds::pdc& p, std::uint64_t now);
    void on_rudi_timer(std::uint32_t index);
    void arm_pacer();
    void on_pacer_timer(std::uint64_t now);
    void fail_initiator(pds::pdc& p, status result, std::uint64_t now);
    void fail_rudi_message(std::uint32_t message, status result);
    void maybe_schedule_close(pds::pdc& p, std::uint64_t now);

    // ---- state ----
    // RCCC receiver: one pull pacer for this engine's port, on the timer wheel.
    std::unique_ptr<cc::rccc_pacer> pacer_;
    timer_node pacer_timer_;
    // The decoded headers of the frame receive() is handling. Members, not locals: fresh ones
    // are zeroed on every frame (432 bytes); the decoders reset what they use.
    wire::l2l4_view rx_l2_;
    wire::uet_packet rx_pkt_;
    wire::plain_request rx_plain_;
    frame_builder frames_;
    wire::plain_request_template rx_template_;  // the last data frame, for the next
    ses::rx_segment rx_segment_;                // the segment of the data frame being received ...
    bool rx_segment_of_template_ = false;       // ... checked in full from rx_template_'s frame
    std::array<run_packet, max_run> run_;       // the run receive_run() is taking
    std::array<const std::uint8_t*, max_run> run_payloads_{};
    // A run of one-packet messages (run_single_packet_): the segment their template's reading
    // checked, which all of them share but for each message's own fields
    // (single_packet_run_segment()), and those fields as read.
    ses::rx_segment single_packet_run_segment_;
    std::array<wire::next_request_fields, max_run> single_packet_run_fields_;
    bool run_single_packet_ = false;
    // Why send_new_from() last found nothing to send (engine_counters::tx_calls_*).
    enum class tx_stop : std::uint8_t { nothing_queued, window, other };
    tx_stop tx_stop_ = tx_stop::nothing_queued;

    peer_table peers_;

    pdc_table pdcs_;
    std::size_t rr_cursor_ = 0;

    message_pool msgs_;
    answer_tracker answers_;
    ses::message_queue rudi_queue_, uud_queue_;
    ses::reassembly reassembly_;

    pds::rudi_window rudi_;

    // Control frames (ACK, NACK, RUDI responses): a ring of fixed-size slots. Slots handed to
    // the caller by transmit() are reclaimed at the next transmit() call.
    control_queue control_;
    ack_coalescer acks_;

    // A frame in two pieces read outside a run, joined (receive_burst with rests).
    std::array<std::uint8_t, 16384> joined_;
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
