// Counters kept per PDC and summed per engine.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "core/tx_window.hpp"
#include "wire/uet_pds.hpp"

namespace uet::pds {

// NACK codes get one slot each for the ones the engine acts on, the rest share `other`.
enum class nack_slot : std::uint8_t {
    trimmed,
    trimmed_lasthop,
    no_pdc_avail,
    rod_ooo,
    psn_oor_window,
    no_resource,    // no packet buffer / SES message / generic resource
    inferred_loss,  // RCVR_INFER_LOSS: the target found a hole lost (path-ID loss detection)
    other,
    count_
};
inline constexpr std::size_t nack_slot_count = static_cast<std::size_t>(nack_slot::count_);

nack_slot slot_of(wire::nack_code code) noexcept;
const char* nack_slot_name(nack_slot s) noexcept;

struct rtt_stats {
    std::uint64_t count = 0;
    std::uint64_t min_ns = std::numeric_limits<std::uint64_t>::max();
    std::uint64_t sum_ns = 0;

    void add(std::uint64_t rtt) noexcept {
        ++count;
        sum_ns += rtt;
        if (rtt < min_ns) min_ns = rtt;
    }
    std::uint64_t mean_ns() const noexcept { return count ? sum_ns / count : 0; }
};

struct pdc_counters {
    std::uint64_t tx_packets = 0, tx_bytes = 0;  // every frame sent for this PDC (data+control)
    std::uint64_t rx_packets = 0, rx_bytes = 0;  // every frame received for it
    std::uint64_t tx_data_packets = 0, rx_data_packets = 0;
    std::array<std::uint64_t, static_cast<std::size_t>(retx_cause::count_)> retransmits{};
    std::uint64_t timeouts = 0;  // retransmit timer expiries
    std::uint64_t repaths = 0;   // static entropy redrawn after a timeout round
    std::array<std::uint64_t, nack_slot_count> nacks_sent{}, nacks_received{};
    std::uint64_t acks_sent = 0, acks_received = 0;
    std::uint64_t trimmed_received = 0;  // trimmed data packets that arrived here
    std::uint64_t duplicates = 0;        // data packets received again
    rtt_stats rtt;

    std::uint64_t retransmitted(retx_cause c) const noexcept {
        return retransmits[static_cast<std::size_t>(c)];
    }
    std::uint64_t nacks_received_of(nack_slot s) const noexcept {
        return nacks_received[static_cast<std::size_t>(s)];
    }
};

}  // namespace uet::pds
