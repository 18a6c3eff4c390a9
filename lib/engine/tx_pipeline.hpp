// What goes out at each transmit() call: control frames first (ACKs, NACKs, RUDI responses),
// then retransmissions, then new data round-robin over the initiator PDCs, then RUDI and UUD
// requests (tx_pipeline.cpp). New data of one PDC leaves in batches where it can: the packets
// inside a message, or a stream of one-packet messages, built with the work they share done
// once (tx_batch.cpp).
//
// The functions are static and take the engine they work for: the hot loops reach this part's
// state and the other parts (frames, PDCs, messages, counters) from the one register that holds
// the engine, as they did when they were its members.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "engine/engine.hpp"
#include "pds/pdc.hpp"
#include "ses/message.hpp"

namespace uet {

class engine_impl;

class tx_pipeline {
  public:
    static std::size_t transmit(engine_impl& eng, std::uint64_t now, std::span<tx_frame> out);

  private:
    // ---- the sources of data frames, in transmit()'s order (tx_pipeline.cpp) ----
    // One retransmission (of the PDCs in order) or RUDI resend into buf: whether one was built.
    static bool resend_frame(engine_impl& eng, std::span<std::uint8_t> buf, std::size_t& len);
    // New data of the PDCs in turn, from rr_cursor_ on: the first with any sends a batch of up to
    // out.size() frames (send_new). How many; 0 when none has new data now.
    static std::size_t next_source(engine_impl& eng, std::span<tx_frame> out, std::size_t staged);
    static bool retransmit_from(engine_impl& eng, pds::pdc& p, std::uint64_t now,
                                std::span<std::uint8_t> buf, std::size_t& len);
    static std::uint64_t credit_backlog(const engine_impl& eng, const pds::pdc& p);
    static void maybe_request_credit(engine_impl& eng, pds::pdc& p);
    static void count_tx_call(engine_impl& eng, bool exhausted, std::size_t built);

    // ---- new data in batches (tx_batch.cpp) ----
    // The new packets of p that may leave now, built into out (each in its room, or in staging
    // slot staged + its index; as many as out has rooms at most): how many. Fewer than the rooms
    // when p has no more for this call; tx_stop_ says why. A closing PDC sends its CLOSE.
    static std::size_t send_new(engine_impl& eng, pds::pdc& p, std::span<tx_frame> out,
                                std::size_t staged);
    // send_new's batch from queue q once p may send: Credit for a credit PDC or a SYN, whose
    // controller is asked and told of every packet; else the controller's window is asked once.
    template <bool Credit>
    static std::size_t send_batch(engine_impl& eng, pds::pdc& p, ses::message_queue& q,
                                  std::span<tx_frame> out, std::size_t staged);
    // Whether the message is one a batch of one-packet messages takes: a plain request in one
    // packet.
    static bool single_packet_run_message(const engine_impl& eng,
                                          const ses::tx_message& m) noexcept;

    // Why send_new() last found nothing (more) to send (engine_counters::tx_calls_*).
    enum class tx_stop : std::uint8_t { nothing_queued, window, other };
    tx_stop tx_stop_ = tx_stop::nothing_queued;
    std::size_t rr_cursor_ = 0;  // the initiator next_source() asks first
};

}  // namespace uet
