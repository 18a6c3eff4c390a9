// Several endpoints behind one fabric endpoint (FEP: one IPv4 address): UET tells them apart by
// PIDonFEP. Each has a PIDonFEP below max_fep_pids, and everything a peer sends back to it names
// it in its top fep_pid_bits: its PDC IDs (so every ACK, NACK, CTRL and data packet on an
// established PDC, which names a DPDCID), the message ids of its RUD/ROD requests (so a response
// message opening a PDC of its own) and the pkt_ids of its RUDI requests (so their responses).
// What opens state without naming any of these (a SYN request, a RUDI request, a UUD datagram)
// names its target in the SES header's pid_on_fep. A FEP's engines keep to this whether one or
// several endpoints run behind it, and its peers read a PDC packet's source PIDonFEP from its
// SPDCID the same way: uet's dpdk provider does both (engine_config::fep_pids).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "wire/uet_packet.hpp"

namespace uet::wire {

inline constexpr unsigned fep_pid_bits = 4;
inline constexpr std::uint16_t max_fep_pids = 1u << fep_pid_bits;
inline constexpr std::uint16_t fep_id_low_mask = 0xffff >> fep_pid_bits;  // a PDC or message id

constexpr std::uint16_t pid_of_id(std::uint16_t pdc_or_message_id) noexcept {
    return pdc_or_message_id >> (16 - fep_pid_bits);
}
constexpr std::uint16_t pid_of_pkt_id(std::uint32_t pkt_id) noexcept {
    return static_cast<std::uint16_t>(pkt_id >> (32 - fep_pid_bits));
}

// Why a UET packet names no endpoint behind the FEP.
enum class fep_route_drop : std::uint8_t {
    truncated,    // shorter than the header that names it
    undecodable,  // a header that names it does not decode
    unnamed,      // it names none: a SYN CTRL, a small response, a TSS-encrypted packet
    count_
};
inline constexpr std::size_t fep_route_drop_count =
    static_cast<std::size_t>(fep_route_drop::count_);
const char* to_string(fep_route_drop d) noexcept;

struct fep_route {
    bool ok = false;
    std::uint16_t pid = 0;  // ok: the PIDonFEP it is for (may be one no endpoint holds)
    fep_route_drop why = fep_route_drop::truncated;  // !ok
};

// The endpoint a UET packet (the UDP payload: the PDS header first) is for. Most packets name a
// DPDCID at a fixed offset, read without decoding; the others are decoded into scratch.
fep_route route_to_pid(std::span<const std::uint8_t> uet, uet_packet& scratch) noexcept;

}  // namespace uet::wire
