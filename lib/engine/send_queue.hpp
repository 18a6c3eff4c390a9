// Posting messages into the queues they are sent from: a RUD or ROD request into its peer's PDC
// slot queue (opening the PDC for the slot's first message), a RUDI or UUD message into the
// engine's connectionless queues. No state of its own: the functions are static and take the
// engine they post into, whose message pool, peers and counters they fill.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "engine/engine.hpp"
#include "engine/peer_table.hpp"

namespace uet {

class engine_impl;

class send_queue {
  public:
    static status post_send(engine_impl& e, peer_id to, delivery_mode mode,
                            std::span<const std::uint8_t> data, std::uint64_t context);
    static status post_message(engine_impl& e, peer_id to, delivery_mode mode,
                               const ses_fields& ses, std::span<const std::uint8_t> data,
                               std::uint64_t context, std::uint16_t* message_id);
    static status post_unsignaled_message(engine_impl& e, peer_id to, delivery_mode mode,
                                          const ses_fields& common, const unsignaled_request& r);
    static std::size_t post_unsignaled_messages(engine_impl& e, peer_id to, delivery_mode mode,
                                                const ses_fields& common,
                                                std::span<const unsignaled_request> list);
    // An admitted message (engine_impl::admit_message) into the queue its mode sends from.
    static void queue_message(engine_impl& e, std::uint32_t m);

  private:
    static void queue_request(engine_impl& e, peer_state& ps, peer_id to, delivery_mode mode,
                              std::uint32_t m, std::size_t bytes);
    // Inline in its two callers: once per unsignaled request.
    static bool queue_unsignaled(engine_impl& e, peer_state& ps, peer_id to, delivery_mode mode,
                                 const ses_fields& common, const unsignaled_request& r);
    static std::size_t queue_unsignaled_list(engine_impl& e, peer_state& ps, peer_id to,
                                             delivery_mode mode, const ses_fields& common,
                                             std::span<const unsignaled_request> list);
};

}  // namespace uet
