// What every part of the engine reads or counts: the configuration (sanitized once), the PDC
// parameters with the congestion-control and path-selection ones they point at, the random
// generator, the timer wheel, the engine's time and its counters. A value held by engine_impl;
// the parts reach it through the engine they are handed.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "core/rng.hpp"
#include "core/timer_wheel.hpp"
#include "engine/engine.hpp"
#include "pds/pdc.hpp"

namespace uet {

// Timer cookies: kind in the top 4 bits.
enum class timer_kind : std::uint64_t { packet = 1, pdc_idle = 2, rudi = 3, pacer = 4, ack = 5 };
constexpr std::uint64_t make_cookie(timer_kind k, std::uint64_t a, std::uint64_t b = 0) noexcept {
    return (static_cast<std::uint64_t>(k) << 60) | (a << 32) | b;
}

class engine_core {
  public:
    explicit engine_core(const engine_config& c);
    // The PDC parameters point into this object.
    engine_core(const engine_core&) = delete;
    engine_core& operator=(const engine_core&) = delete;

    void count_drop(drop_reason r) noexcept { ++counters.drops[static_cast<std::size_t>(r)]; }
    void count_reject(wire::reject_reason r) noexcept {
        ++counters.rejects[static_cast<std::size_t>(r)];
    }
    // A frame handed out: on its PDC's counters (the connectionless ones without a PDC) and the
    // engine's.
    void count_tx(pds::pdc* p, std::size_t bytes, bool data) noexcept {
        auto& c = p ? p->counters : connectionless;
        ++c.tx_packets;
        c.tx_bytes += bytes;
        if (data) ++c.tx_data_packets;
        ++counters.frames_tx;
        counters.bytes_tx += bytes;
    }
    // Time never goes back, whatever the caller passes.
    void tick(std::uint64_t t) noexcept { now = std::max(now, t); }

    const engine_config cfg;
    // What cfg.deliver_to takes, asked once.
    bool places_writes = false, takes_single_packet_messages = false;
    bool data_stopped = false;  // stop_data(): control frames only
    bool tx_ready = false;      // something may be sendable right now
    std::uint64_t now = 0;
    pds::pdc_params params;
    ::uet::rng rng;
    // Congestion control and path selection parameters every PDC points at.
    cc::nscc_params nscc_params;
    cc::rccc_params rccc_params;
    lb::lb_context lb_ctx;
    timer_wheel timers;
    pds::pdc_counters connectionless;  // RUDI / UUD
    pds::pdc_counters closed_totals;   // PDCs freed so far
    mutable engine_counters counters;
};

}  // namespace uet
