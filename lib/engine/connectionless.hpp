// RUDI and UUD, the delivery modes without a PDC: their send queues, the window of RUDI request
// packets awaiting a response (each with its own id, timer and retries), and what comes in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "engine/engine.hpp"
#include "engine/message_pool.hpp"
#include "engine/peer_table.hpp"
#include "engine/rx_context.hpp"
#include "pds/pdc.hpp"
#include "pds/rudi.hpp"
#include "ses/message.hpp"
#include "wire/uet_packet.hpp"

namespace uet {

class engine_impl;

class connectionless {
  public:
    explicit connectionless(const engine_config& cfg);

    bool retransmit_pending() const noexcept { return rudi_.retransmit_pending(); }
    // New RUDI and UUD requests: what goes once no PDC has anything to send.
    bool next_frame(engine_impl& e, std::uint64_t now, std::span<std::uint8_t> buf,
                    std::size_t& len) {
        return (!rudi_queue_.empty() && send_rudi(e, now, buf, len, false)) ||
               (!uud_queue_.empty() && send_uud(e, now, buf, len));
    }
    bool send_rudi(engine_impl& e, std::uint64_t now, std::span<std::uint8_t> buf, std::size_t& len,
                   bool retransmissions_only);
    bool send_uud(engine_impl& e, std::uint64_t now, std::span<std::uint8_t> buf, std::size_t& len);
    // An admitted RUDI or UUD message into the queue its mode sends from.
    void queue(delivery_mode mode, std::uint32_t m, message_pool& msgs) {
        (mode == delivery_mode::rudi ? rudi_queue_ : uud_queue_).push(msgs.pool(), m);
    }
    static std::uint64_t rto(const peer_table& peers, const pds::pdc_params& params,
                             std::uint32_t peer, std::uint16_t retries) noexcept {
        return peers[peer].rudi_rtt.rto(params.rto_ns, params.rto_max_ns, retries);
    }

    void on_request(engine_impl& e, const rx_context& rx, const wire::pds_rudi& h,
                    const wire::uet_packet& pkt);
    void on_response(engine_impl& e, const rx_context& rx, const wire::pds_rudi& h);
    static bool from_peer_of(engine_impl& e, const rx_context& rx, std::uint32_t message);
    // A NACK of a RUDI request packet (pds_nack::nt).
    void on_nack(engine_impl& e, const rx_context& rx, const wire::pds_nack& n);
    void on_timer(engine_impl& e, std::uint32_t index);
    void fail_message(engine_impl& e, std::uint32_t message, status result);
    void on_uud(engine_impl& e, const rx_context& rx, const wire::uet_packet& pkt);

  private:
    ses::message_queue rudi_queue_, uud_queue_;
    pds::rudi_window rudi_;
};

}  // namespace uet
