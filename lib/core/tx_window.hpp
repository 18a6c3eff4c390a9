// Send-side state of one PDC: a ring of packets in flight indexed by PSN (as wide as the window)
// and the queue of those waiting to be retransmitted, which goes ahead of new data.
#pragma once

#include <cstdint>
#include <span>

#include "core/psn.hpp"

namespace uet {

enum class tx_state : std::uint8_t {
    free,         // slot not in use
    in_flight,    // sent, not yet acknowledged; its retransmit timeout runs
    retx_queued,  // waiting in the retransmit queue
    backoff,      // the receiver had no room (NO_PDC_AVAIL...): resent when its timeout is due
    acked,        // acknowledged, waiting for the packets before it
};

enum class tx_kind : std::uint8_t { data, close };

// Why a packet waits in the retransmit queue (counted per cause when it goes out again).
enum class retx_cause : std::uint8_t { sack, timeout, nack, count_ };

// A packet's retransmit (or back-off) timeout: when it is due, no_deadline when none runs. The
// wheel holds one timer per PDC (pdc::rto_timer), not one per packet: arming a packet is a store
// (and a wheel operation only when it becomes the earliest), its ACK another store.
constexpr std::uint64_t no_deadline = 0;

struct tx_entry {
    std::uint64_t deadline = no_deadline;
    std::uint64_t sent_ns = 0;
    std::uint64_t tx_seq = 0;   // order of the last transmission within the PDC
    std::uint32_t message = 0;  // the SES message this packet carries a piece of
    std::uint32_t offset = 0;
    std::uint32_t length = 0;
    psn_t psn = 0;
    std::uint32_t retx_next = 0;  // retransmit queue link (slot index)
    std::uint16_t retries = 0;
    std::uint16_t entropy = 0;
    tx_state state = tx_state::free;
    tx_kind kind = tx_kind::data;
    retx_cause cause = retx_cause::timeout;  // why it is queued, counted when it goes out
    bool in_retx_list = false;
    bool resent = false;   // the last transmission was a retransmission
    bool counted = false;  // its bytes are in the PDC's inflight_bytes
};

class tx_window {
  public:
    void reset(std::span<tx_entry> ring, psn_t start_psn) noexcept;

    psn_t una() const noexcept { return una_; }    // oldest unacknowledged PSN
    psn_t next() const noexcept { return next_; }  // PSN of the next new packet
    std::uint32_t outstanding() const noexcept { return next_ - una_; }
    std::uint32_t capacity() const noexcept { return mask_ + 1; }
    bool empty() const noexcept { return una_ == next_; }

    // The packet with this PSN if it is in [una, next).
    tx_entry* find(psn_t psn) noexcept;
    // The ring entry of a PSN the caller knows is in [una, next) (it may be free).
    tx_entry& entry(psn_t psn) noexcept { return ring_[psn & mask_]; }
    tx_entry& at_slot(std::uint32_t slot) noexcept { return ring_[slot]; }
    std::uint32_t slot_of(const tx_entry& e) const noexcept {
        return static_cast<std::uint32_t>(&e - ring_.data());
    }

    // A new packet at next (caller checked outstanding() < capacity()).
    tx_entry& push(tx_kind kind) noexcept;
    // A new data packet sent at once (a transmit run's, pdc::push_run_packet): what push() and
    // pdc::on_sent_until() make of its entry, each field stored once. Inline: once per packet
    // of a run.
    tx_entry& push_sent(std::uint32_t message, std::uint32_t offset, std::uint32_t length,
                        std::uint16_t entropy, std::uint64_t now, std::uint64_t deadline,
                        std::uint64_t tx_seq) noexcept {
        tx_entry& e = ring_[next_ & mask_];
        e.deadline = deadline;
        e.sent_ns = now;
        e.tx_seq = tx_seq;
        e.message = message;
        e.offset = offset;
        e.length = length;
        e.psn = next_++;
        e.retries = 0;
        e.entropy = entropy;
        e.state = tx_state::in_flight;
        e.kind = tx_kind::data;
        e.resent = false;
        e.counted = true;
        return e;
    }
    // Frees acknowledged packets at the front; returns how many.
    std::uint32_t advance() noexcept;
    // The front moves to `to` (in [una, next]): every packet before it is acknowledged, whatever
    // its entry says (a cumulative ACK's, pdc::on_ack). Nothing reads an entry behind the
    // front; push() and push_sent() set each one again.
    void pass(psn_t to) noexcept { una_ = to; }

    void queue_retransmit(tx_entry& e, retx_cause cause) noexcept;
    // The next packet still waiting for retransmission, unlinked; nullptr when none.
    tx_entry* pop_retransmit() noexcept;
    // The packet pop_retransmit() would return, left queued (stale links are dropped).
    tx_entry* peek_retransmit() noexcept;
    bool has_retransmit() const noexcept { return retx_head_ != none; }
    // Forgets the queue (go-back-N rebuilds it in PSN order).
    void clear_retransmits() noexcept;

  private:
    static constexpr std::uint32_t none = 0xffffffffu;

    std::span<tx_entry> ring_;
    std::uint32_t mask_ = 0;
    psn_t una_ = 0, next_ = 0;
    std::uint32_t retx_head_ = none, retx_tail_ = none;
};

}  // namespace uet
