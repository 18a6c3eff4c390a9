// Whole-frame dissection: Ethernet -> [802.1Q] -> ARP | IPv4 -> UDP -> UET or RoCEv2, or
// IPv4 protocol 253 -> UET. Used by uet-dump, the fuzzers and the truncation tests; the engine's
// receive path will use the per-layer decoders directly.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "wire/fields.hpp"
#include "wire/frame.hpp"
#include "wire/reject.hpp"
#include "wire/roce.hpp"
#include "wire/roce_cm.hpp"
#include "wire/uet_packet.hpp"

namespace uet::wire {

struct dissect_options {
    std::uint16_t uet_port = uet_udp_port;
    std::uint16_t roce_port = roce_udp_port;
};

// What the frame carries, as far as dissection got.
enum class frame_kind : std::uint8_t {
    unknown,  // rejected before the protocol was known
    arp,
    uet_udp,    // UET over UDP (the UDP source port is the entropy)
    uet_ip,     // UET over IPv4 protocol 253 (entropy header)
    roce,       // RoCEv2
    other_udp,  // UDP to another port: not ours, not malformed
    other_ip,   // another IP protocol: not ours, not malformed
    other_l2,   // another ethertype (IPv6, LLDP...): not ours, not malformed
};

const char* kind_name(frame_kind k) noexcept;

struct dissection {
    frame_kind kind = frame_kind::unknown;
    bool l2l4_ok = false;  // l2l4 holds a decoded frame (else only the headers below)
    // When l2l4_ok is false: the headers of l2l4 that decoded before the fault.
    struct {
        bool eth = false, vlan = false, ip = false, udp = false;
    } l2l4_decoded;
    l2l4_view l2l4;
    // When kind is uet_*: what dissect_uet decoded, also of a packet it rejected (upper_ok false).
    uet_dissection uet;
    roce_packet roce;  // valid when kind is roce and it decoded
    // A connection manager MAD (a UD SEND to QP 1) in a decoded RoCEv2 packet.
    std::optional<cm_message> cm;
    bool upper_ok = false;  // the UET / RoCEv2 layer decoded
    // On a reject: the layer that refused the packet ("l2l4", "uet", "roce"); null when accepted.
    const char* failed_layer = nullptr;
};

// Decodes every layer it can. Returns none when the frame is well-formed (including frames that
// are not UET or RoCEv2, which are reported by kind), otherwise the reason and failed_layer.
reject_reason dissect(std::span<const std::uint8_t> frame, dissection& out,
                      const dissect_options& options = {}) noexcept;

// Every decoded header of every layer, outermost first; of a rejected frame, every header decoded
// before the fault.
void visit(const dissection& d, field_visitor& v);

// One line without a newline: "10.0.0.1.49152 > 10.0.0.2.4793: UET <uet summary>", with
// " [truncated payload: 0x345 declared, 0 present]" when the SES payload_length exceeds the bytes.
void summarize(const dissection& d, std::string& out);

}  // namespace uet::wire
