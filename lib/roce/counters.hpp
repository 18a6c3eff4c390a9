// What a RoCE queue pair counts: traffic each way, resends by cause, NAKs by code, and the
// reasons it dropped received packets (roce_drop.def).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace uet::roce {

enum class roce_drop : std::uint8_t {
#define UET_ROCE_DROP(name, text) name,
#include "roce/roce_drop.def"
#undef UET_ROCE_DROP
    count_
};
inline constexpr std::size_t roce_drop_count = static_cast<std::size_t>(roce_drop::count_);
// A short description ("no queue pair with this destination QPN"). Never null.
const char* to_string(roce_drop d) noexcept;
// The enumerator's own name ("wrong_qpn"), for JSON and counters. Never null.
const char* drop_name(roce_drop d) noexcept;

// Why the requester sent a packet again.
enum class resend_cause : std::uint8_t {
    psn_nak,       // the responder NAKed a PSN sequence error
    implicit_nak,  // an ACK passed an outstanding READ or atomic without its response
    rnr,           // the RNR timer ran out after an RNR NAK
    timeout,       // the local ACK timeout
    count_
};
inline constexpr std::size_t resend_cause_count = static_cast<std::size_t>(resend_cause::count_);

// AETH NAK codes 0..4 (PSN sequence error, invalid request, remote access error, remote
// operational error, invalid RD request).
inline constexpr std::size_t nak_code_count = 5;

struct qp_counters {
    std::uint64_t tx_packets = 0, tx_bytes = 0;
    std::uint64_t rx_packets = 0, rx_bytes = 0;
    std::array<std::uint64_t, resend_cause_count> resends{};
    std::uint64_t go_back_rounds = 0;  // go-back-N restarts (each resends a range)
    std::uint64_t timeouts = 0;
    std::array<std::uint64_t, nak_code_count> naks_sent{}, naks_received{};
    std::uint64_t rnr_naks_sent = 0, rnr_naks_received = 0;
    std::uint64_t acks_sent = 0, acks_received = 0;
    std::uint64_t duplicates = 0;
    std::uint64_t placed_early = 0;  // out-of-order mode: packets placed ahead of a hole
    std::uint64_t cnps_sent = 0, cnps_received = 0;
    std::array<std::uint64_t, roce_drop_count> drops{};

    void count_drop(roce_drop d) noexcept { ++drops[static_cast<std::size_t>(d)]; }
    std::uint64_t dropped(roce_drop d) const noexcept { return drops[static_cast<std::size_t>(d)]; }
    std::uint64_t resent(resend_cause c) const noexcept {
        return resends[static_cast<std::size_t>(c)];
    }
    // Adds another QP's counts (an endpoint's sum over its QPs, those gone included).
    qp_counters& operator+=(const qp_counters& c) noexcept {
        tx_packets += c.tx_packets;
        tx_bytes += c.tx_bytes;
        rx_packets += c.rx_packets;
        rx_bytes += c.rx_bytes;
        for (std::size_t i = 0; i < resends.size(); ++i)
            resends[i] += c.resends[i];
        go_back_rounds += c.go_back_rounds;
        timeouts += c.timeouts;
        for (std::size_t i = 0; i < naks_sent.size(); ++i) {
            naks_sent[i] += c.naks_sent[i];
            naks_received[i] += c.naks_received[i];
        }
        rnr_naks_sent += c.rnr_naks_sent;
        rnr_naks_received += c.rnr_naks_received;
        acks_sent += c.acks_sent;
        acks_received += c.acks_received;
        duplicates += c.duplicates;
        placed_early += c.placed_early;
        cnps_sent += c.cnps_sent;
        cnps_received += c.cnps_received;
        for (std::size_t i = 0; i < drops.size(); ++i)
            drops[i] += c.drops[i];
        return *this;
    }
};

}  // namespace uet::roce
