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
};

}  // namespace uet::roce
