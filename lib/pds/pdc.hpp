// One packet delivery context (PDC) of RUD or ROD, in either role:
//   initiator: sends requests (SES packets), keeps them until acknowledged, retransmits;
//   target:    receives them, suppresses duplicates, acknowledges with cumulative ACK + SACK.
//
// Life cycle (ephemeral PDCs, UET 1.0 / kernel RFC):
//   initiator: free -> syn_sent (first packet carries data and SYN, random start PSN)
//              -> established (first ACK: learns the target's PDCID, SYN dropped)
//              -> closing (idle and all acknowledged: CTRL CLOSE at the next PSN)
//              -> free (the ACK covering the CLOSE PSN), or free on a retry-limit failure.
//   target:    free -> open (a SYN packet with an unknown (peer, SPDCID); NO_PDC_AVAIL NACK if
//              the table is full) -> free (CLOSE at cack + 1, acknowledged; or idle expiry).
// The logic here is sans-I/O and frame-free: the engine decodes, calls these, and encodes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>

#include "cc/cc_factory.hpp"
#include "core/rx_window.hpp"
#include "core/timer_wheel.hpp"
#include "core/tx_window.hpp"
#include "lb/lb_factory.hpp"
#include "pds/ack_policy.hpp"
#include "pds/counters.hpp"

namespace uet::pds {

enum class pdc_state : std::uint8_t { free, syn_sent, established, closing, open };
enum class pdc_role : std::uint8_t { initiator, target };

const char* to_string(pdc_state s) noexcept;

struct pdc_params {
    std::uint32_t mpr = 512;          // packets in flight (PSN span)
    std::uint32_t ooo_threshold = 8;  // later transmissions acknowledged before a hole is lost
    std::uint32_t max_retransmits = 24;
    // rto_ns: the RTO until the first RTT sample; then max(rto_min_ns, srtt + 4 rttvar), doubled
    // per timeout round until the next clean sample, never above rto_max_ns.
    std::uint64_t rto_ns = 200'000, rto_max_ns = 50'000'000, rto_min_ns = 100'000;
    std::uint64_t window_bytes = 0;  // fixed-window CC baseline
    // Congestion control and path selection of every initiator PDC (engine-owned parameters;
    // cc.fixed_window is overridden by window_bytes). Without lb_ctx every PDC is static.
    cc::cc_config cc;
    lb::algorithm lb = lb::algorithm::static_path;
    lb::lb_context* lb_ctx = nullptr;
};

// What the sender learns from one ACK.
struct ack_event {
    psn_t cack = 0;
    psn_t ack_psn = 0;  // the packet that triggered it (RTT sample)
    sack_block sack;
    bool ecn = false;
};

// Data packets of one message that an ACK acknowledged for the first time.
struct acked_message {
    std::uint32_t message = 0;
    std::uint32_t packets = 0;
};

class tx_listener {
  public:
    // The messages an ACK acknowledged data packets of, in PSN order, one entry per run of one
    // message's packets (a cumulative ACK of a burst of one large message: one entry of ~32
    // packets; of a burst of small sends: ~32 entries of one). One call per ACK, or per
    // acked_batch entries, so that a burst of small sends is not a virtual call per message.
    static constexpr std::size_t acked_batch = 32;
    virtual void on_data_acked(class pdc& p, std::span<const acked_message> runs) noexcept = 0;

  protected:
    ~tx_listener() = default;
};

struct ack_outcome {
    bool valid = true;  // false: the ACK named PSNs never sent (dropped)
    std::uint32_t newly_acked = 0;
    std::uint64_t acked_bytes = 0;
    std::uint64_t rtt_ns = 0;           // 0 when no clean sample
    std::uint16_t trigger_entropy = 0;  // entropy of the packet that triggered the ACK
    bool trigger_known = false;         // ... when it was still outstanding
    std::uint32_t sack_retransmits = 0;
    bool close_acked = false;
};

enum class nack_action : std::uint8_t {
    ignored,     // stale, or for a packet not in flight
    retransmit,  // queued for retransmission at once (trimmed)
    backoff,     // receiver out of resources: resend later
    rewind,      // ROD go-back-N from the NACKed PSN
};

enum class timeout_action : std::uint8_t { none, retransmit, rewind, failed };

class pdc {
  public:
    // ---- identity ----
    std::uint32_t index = 0;
    std::uint16_t local_id = 0, remote_id = 0;
    std::uint32_t peer = 0;
    pdc_state state = pdc_state::free;
    pdc_role role = pdc_role::initiator;
    bool ordered = false;   // ROD
    std::uint8_t slot = 0;  // initiator: which of its peer's PDC slots (engine's peer_state)
    timer_node idle_timer;  // initiator: close when idle; target: expire when abandoned
    timer_node ack_timer;   // target: bounds how long a coalesced ACK waits
    // initiator: due no later than the earliest tx_entry::deadline of its packets (sooner after
    // ACKs cleared that one: it then finds nothing due and moves to the next).
    timer_node rto_timer;
    std::uint64_t last_activity_ns = 0;
    pdc_counters counters;

    // ---- initiator ----
    tx_window tx;
    psn_t start_psn = 0;
    std::uint64_t tx_seq = 0;
    std::uint64_t highest_acked_seq = 0;
    std::uint64_t newest_acked_sent_ns = 0;  // send time of the latest-sent packet acknowledged
    psn_t highest_acked_psn = 0;             // highest PSN acknowledged (cumulatively or SACK)
    static constexpr std::int32_t sack_span = 64;  // PSNs one SACK bitmap reports
    std::uint64_t inflight_bytes = 0;
    std::uint64_t retx_bytes = 0;  // waiting in the retransmit queue (a credit sender's backlog)
    std::uint32_t credit_target_sent = 0;  // RCCC: the last credit target told to the receiver
    std::uint32_t backoff_level = 0;
    std::uint64_t min_rtt_ns = 0;
    // RFC 6298 estimator; rto_ns is the current base RTO (before back-off).
    std::uint64_t srtt_ns = 0, rttvar_ns = 0, rto_ns = 0;
    // Timeouts are counted per round, not per packet: a timer of a packet sent before the last
    // counted timeout (tx_seq <= timeout_mark_seq) belongs to that round. Consecutive rounds
    // without ACK progress back the RTO off and end the PDC after max_retransmits.
    std::uint64_t timeout_mark_seq = 0;
    std::uint32_t timeout_rounds = 0;
    // The RTO's back-off (a doubling per counted round), kept through progress until a clean RTT
    // sample (RFC 6298 5.7, Karn): an ACK of a resent packet says nothing of the RTT, and an RTO
    // below it would fire again for every packet.
    std::uint32_t rto_backoff = 0;
    // When an ACK last acknowledged something new: a packet's timer only declares it lost once
    // no ACK made progress for a whole RTO (RFC 6298 5.3: the timer restarts on progress).
    std::uint64_t last_progress_ns = 0;
    cc::any_controller cc;
    // cc->uses_credit(), asked for every data packet: the controller's kind is set when the PDC
    // opens and stays, so it is kept here rather than asked by a virtual call each time.
    bool credit_cc = false;
    lb::any_selector lb;
    // lb->hears_acks(), kept for the same reason: an ACK covers ~32 packets.
    bool lb_hears_acks = true;
    // Answers in ACKs (engine): response messages the target's ACKs announced for requests of
    // this PDC, and those received; acknowledged requests waiting until the two agree, linked
    // through ses::tx_message::next_undecided (oldest first).
    std::uint32_t answers_announced = 0, answers_received = 0;
    std::uint64_t last_answer_ns = 0;  // when the last response message was counted
    std::uint32_t undecided_head = 0xffffffffu, undecided_tail = 0xffffffffu;

    void open_initiator(std::span<tx_entry> ring, psn_t start, std::uint16_t entropy,
                        const pdc_params& params) noexcept;
    // The current retransmit timeout, back-off included. Inline for the common case, no timeout
    // round since the last progress: every packet sent arms its timer with it.
    std::uint64_t current_rto(const pdc_params& params) const noexcept {
        if (rto_backoff != 0) return backed_off_rto(params);
        return std::min(std::max<std::uint64_t>(rto_ns, 1), params.rto_max_ns);
    }
    bool syn() const noexcept { return state == pdc_state::syn_sent; }
    // How many packets may be outstanding: the PSN span the receiver tracks, within the ring.
    std::uint32_t psn_limit(const pdc_params& params) const noexcept {
        return std::min(params.mpr, tx.capacity());
    }
    // Room for one more new packet of `bytes` (PSN span and congestion window). Inline: asked
    // before every new data packet.
    bool can_send_new(std::uint32_t bytes, const pdc_params& params) const noexcept {
        if (tx.outstanding() >= psn_limit(params)) return false;
        return cc_allows(bytes);
    }
    // A data packet of `bytes` may leave now (congestion control: window or credit).
    bool cc_allows(std::uint32_t bytes) const noexcept {
        return cc->may_send(inflight_bytes, bytes);
    }
    // Whether, once a packet of `bytes` is out, the controller holds back the next `next` bytes:
    // the sender then asks for an ACK at once (AR), as the receiver would otherwise wait to
    // coalesce packets that cannot come.
    bool cc_full_after(std::uint32_t bytes, std::uint32_t next) const noexcept {
        return credit_cc ? cc->window_bytes() < std::uint64_t{bytes} + next
                         : window_full_after(bytes, next, cc->window_bytes());
    }
    bool window_full_after(std::uint32_t bytes, std::uint32_t next,
                           std::uint64_t window) const noexcept {
        return inflight_bytes + bytes + next > window;
    }
    // can_send_new() and cc_full_after() for a packet of a transmit run (never a credit PDC's):
    // `window` is the controller's window_bytes(), asked once for the run (no ACK comes within
    // it), `limit` psn_limit(); the window rule of cc::controller without a call per packet.
    bool run_may_send(std::uint32_t bytes, std::uint64_t window,
                      std::uint32_t limit) const noexcept {
        return tx.outstanding() < limit &&
               cc::controller::window_admits(inflight_bytes, bytes, window);
    }
    // Asked after the packet is pushed, before it is stamped in flight (as for any new packet).
    bool run_full_after(std::uint32_t bytes, std::uint32_t next, std::uint64_t window,
                        std::uint32_t limit) const noexcept {
        return tx.outstanding() >= limit || window_full_after(bytes, next, window);
    }
    // A packet (new or retransmitted) leaves now: picks its entropy (data), stamps it, accounts
    // it in flight and to the controller, and arms its timer.
    void on_sent(tx_entry& e, std::uint64_t now, timer_wheel& timers,
                 const pdc_params& params) noexcept;
    ack_outcome on_ack(const ack_event& ack, std::uint16_t from_pdcid, std::uint64_t now,
                       timer_wheel& timers, tx_listener& listener,
                       const pdc_params& params) noexcept;
    // nack_retx: the NACK's echo of the NACKed packet's retx flag (1 or 0), -1 when unknown.
    nack_action on_nack(wire::nack_code code, psn_t psn, std::uint64_t now, timer_wheel& timers,
                        const pdc_params& params, int nack_retx = -1) noexcept;
    // A packet's timeout is due: what to do about it (its deadline is cleared, or moved).
    timeout_action on_timer(tx_entry& e, std::uint64_t now, timer_wheel& timers,
                            const pdc_params& params) noexcept;
    // Times e out at `deadline`; the PDC's rto_timer fires no later. Inline: once per packet
    // sent.
    void arm(tx_entry& e, std::uint64_t deadline, timer_wheel& timers) noexcept {
        e.deadline = std::max<std::uint64_t>(deadline, 1);  // 0 means none
        arm_timer(e.deadline, timers);
    }
    // A transmit run's new data packet, sent at `now` with the run's RTO deadline (at least 1):
    // on_sent_until() of a pushed entry but for three things. Its bytes go into inflight_bytes
    // by the caller, once it has asked run_full_after() about this packet; the RTO timer is
    // armed once the run is built (arm_timer(): its packets share their deadline); and the
    // controller hears nothing (on_send), which only credit PDCs need, and runs are never a
    // credit PDC's. Inline: once per packet of a run.
    tx_entry& push_run_packet(std::uint32_t message, std::uint32_t offset, std::uint32_t length,
                              std::uint16_t entropy, std::uint64_t now,
                              std::uint64_t deadline) noexcept {
        return tx.push_sent(message, offset, length, entropy, now, deadline, ++tx_seq);
    }
    // The PDC's rto_timer fires no later than `deadline` (at least 1): once per packet (arm),
    // or once per transmit run, whose packets share their deadline.
    void arm_timer(std::uint64_t deadline, timer_wheel& timers) noexcept {
        if (!rto_timer.scheduled() || deadline < rto_timer.deadline())
            timers.schedule(rto_timer, deadline);
    }
    // on_sent() with the RTO deadline given (a credit PDC's or SYN's new packet, or a retransmit).
    void on_sent_until(tx_entry& e, std::uint64_t now, std::uint64_t deadline,
                       timer_wheel& timers) noexcept {
        e.resent = e.tx_seq != 0;
        e.sent_ns = now;
        e.tx_seq = ++tx_seq;
        e.state = tx_state::in_flight;
        if (!e.counted) {
            e.counted = true;
            inflight_bytes += e.length;
        }
        arm(e, deadline, timers);
        if (e.kind == tx_kind::data) cc->on_send(e.length, now);
    }
    // When rto_timer fires: the ring slots of the packets due at `now`, in the order per-packet
    // timers would have fired (deadline, then transmission); at most slots.size().
    std::size_t collect_due(std::uint64_t now, std::span<std::uint32_t> slots);
    // After the due packets were handled: rto_timer at the earliest deadline left, or none.
    void rearm(timer_wheel& timers) noexcept;
    // Everything sent has been acknowledged.
    bool drained() const noexcept { return tx.empty(); }
    // Cancels every timer (before the slot is freed).
    void cancel_timers(timer_wheel& timers) noexcept;

    // ---- target ----
    rx_window rx;
    ack_policy acks;
    // RCCC receiver side: the credit granted to this PDC's sender by the engine's pull pacer;
    // credit_mode once the sender asked for credit (RUD_CC/ROD_CC), then ACKs carry the grant.
    cc::rccc_receiver credit_rx;
    bool credit_mode = false;
    // An ACK is owed and goes out with the next transmit() (the engine's ack_coalescer): every
    // packet of one receive burst that asks for an ACK gets the same one.
    bool ack_due = false;
    psn_t ack_trigger = 0;
    std::uint16_t ack_entropy = 0;
    bool ce_since_ack = false;
    // Answers in ACKs (engine): delivered requests whose answer is still owed, and how many of
    // this PDC's requests were (or will be) answered by a response message (what ACKs announce).
    std::uint32_t answers_owed = 0, answers_as_messages = 0;
    // The stamp of the requests owed now (in their answer tokens): a new one at each ACK that
    // announces them, 0 once the PDC is gone (answer_tracker::owe).
    std::uint32_t owed_stamp = 0;
    psn_t rod_nacked_epsn = 0;  // ROD: the expected PSN last NACKed as out of order
    bool rod_nack_armed = false;
    // A CLOSE was acknowledged: the PDC lingers, closed to the application, and is freed when
    // its time is up, unless a data packet shows that the CLOSE was not its initiator's (who
    // never sends data after its CLOSE): anyone who knows the PDC ids and the PSN can forge one.
    bool close_heard = false;
    // Its initiator has shown that it receives what we send: a packet without SYN named our
    // PDC id, which only our ACK told it. Until then the source address may be forged, and an
    // error answer to a request of this PDC is held (engine: held answers), not sent to whoever
    // the address names.
    bool validated = false;

    enum class rx_verdict : std::uint8_t { accept, duplicate, beyond_window, out_of_order };
    void open_target(std::span<std::uint64_t> ring, psn_t start, bool rod, std::uint32_t ack_bytes,
                     std::uint32_t ack_packets) noexcept;
    rx_verdict classify(psn_t psn) const noexcept;
    // ROD: whether this out-of-order arrival should be NACKed (once per expected PSN).
    bool should_nack_out_of_order() noexcept;

  private:
    std::uint64_t backed_off_rto(const pdc_params& params) const noexcept;
    // Marks e acknowledged; true the first time.
    bool ack_one(tx_entry& e, const ack_event& ack, ack_outcome& out) noexcept;
    struct plain_acks {
        std::uint32_t packets = 0;
        std::uint64_t bytes = 0, released = 0;  // acknowledged; of them, in inflight_bytes
    };
    void ack_plain(const tx_entry& e, plain_acks& acks) noexcept;
    void repath_static(const pdc_params& params) noexcept;
    bool acked_any_ = false;
    void infer_losses(psn_t up_to, const pdc_params& params, ack_outcome& out) noexcept;
    void rewind(psn_t from, retx_cause cause) noexcept;

  public:
    // A packet leaves the retransmit queue to be resent (retransmit backlog accounting).
    void on_retransmit_popped(const tx_entry& e) noexcept {
        retx_bytes -= std::min<std::uint64_t>(retx_bytes, e.length);
    }

  private:
    // Queues for retransmission, taking its bytes out of flight (they are added back on resend).
    void requeue(tx_entry& e, retx_cause cause) noexcept;
    void release_inflight(tx_entry& e) noexcept;
    void on_rtt_sample(std::uint64_t rtt_ns, const pdc_params& params) noexcept;
    std::uint64_t resend_guard(const pdc_params& params) const noexcept;
};

}  // namespace uet::pds
