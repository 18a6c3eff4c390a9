// ACKs and the other control frames a receiver sends: the list of PDCs whose ACK is due at the
// next transmit() (coalesced: one ACK for what a receive burst asks), and the building of ACKs,
// NACKs, CTRL packets, the stateless ACK of a CLOSE for a PDC gone and the RUDI response into
// the control queue or straight into transmit()'s rooms.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "engine/engine.hpp"
#include "engine/rx_context.hpp"
#include "pds/pdc.hpp"
#include "wire/uet_packet.hpp"

namespace uet {

class engine_impl;

class ack_coalescer {
  public:
    explicit ack_coalescer(const engine_config& cfg);

    // An ACK for p at the next transmit(): control frames leave only then anyway, so waiting
    // costs no latency and folds the ACKs one receive burst asks for into one.
    void defer(engine_impl& e, pds::pdc& p, psn_t trigger, const rx_context& rx) {
        if (rx.ce) p.ce_since_ack = true;
        p.ack_trigger = trigger;
        p.ack_entropy = rx.entropy;
        if (p.ack_due) return;
        if (acks_due_.size() == acks_due_.capacity()) return send_ack(e, p, trigger, rx);
        p.ack_due = true;
        acks_due_.push_back(p.index);
    }
    // Whether defer() would wait for p's ACK rather than send it at once.
    bool has_room_for(const pds::pdc& p) const noexcept {
        return p.ack_due || acks_due_.size() != acks_due_.capacity();
    }
    bool empty() const noexcept { return acks_due_.empty(); }
    // What a deferred ACK is sent as: to the peer, on the entropy of the packet that made it due.
    static rx_context due_context(const pds::pdc& p, std::uint64_t now) noexcept;
    void send_ack(engine_impl& e, pds::pdc& p, psn_t trigger, const rx_context& rx);
    // The ACK p owes, built in `slot` and counted as sent (send_ack queues it; transmit's
    // flush_into builds it in a room): its length, 0 when it could not be built.
    std::size_t build_ack(engine_impl& e, pds::pdc& p, psn_t trigger, const rx_context& rx,
                          std::span<std::uint8_t> slot);
    void flush(engine_impl& e);
    // transmit()'s flush of the due ACKs while no control frame waits: each built straight into
    // the next room of out (from n on, advancing n) rather than in the control queue and then
    // copied. The copy's wide loads of the frame just written by narrow stores cannot be served
    // from the store buffer: they waited for every older store to reach the cache, those into
    // the memif ring's lines among them.
    void flush_into(engine_impl& e, std::span<tx_frame> out, std::size_t& n);
    void queue_nack(engine_impl& e, const rx_context& rx, wire::nack_code code, std::uint32_t psn,
                    std::uint16_t spdcid, std::uint16_t dpdcid, bool rudi, pds::pdc* p,
                    bool retx = false);
    // One CTRL packet on p; false (and a counted drop) when the control queue is full.
    bool send_ctrl(engine_impl& e, pds::pdc& p, wire::ctrl_type type, std::uint32_t psn,
                   std::uint32_t payload, std::uint16_t entropy);
    void send_credit(engine_impl& e, pds::pdc& p, std::uint32_t credit_field);
    // A CLOSE for a PDC closed already (our ACK of the CLOSE was lost): acknowledged without
    // state so the initiator can finish too.
    void ack_stale_close(engine_impl& e, const rx_context& rx, const wire::pds_ctrl& c);
    // The response every RUDI request packet gets, duplicate or not.
    void answer_rudi(engine_impl& e, const rx_context& rx, const wire::pds_rudi& h);
    void on_ack_timer(engine_impl& e, pds::pdc& p, std::uint64_t now);

  private:
    // A control frame of `spec` to the peer, built in the next control slot and counted as sent
    // (on p, or connectionless when null); false, with a drop counted, when the queue is full.
    static bool emit(engine_impl& e, std::uint32_t peer, std::uint16_t entropy,
                     const wire::uet_packet_spec& spec, pds::pdc* p);
    std::vector<std::uint32_t> acks_due_;  // PDC indices with ack_due set (may hold stale ones)
};

}  // namespace uet
