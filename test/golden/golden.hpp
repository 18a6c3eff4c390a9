// Sample packets built by lib/wire, one per header type and variant, shared by the unit tests,
// the fuzz seed corpus and the uet-dump tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "wire/roce_cm.hpp"

namespace uet::golden {

struct named_bytes {
    std::string name;  // stable, file-name safe: "pds_rud_syn", "roce_write_first"
    std::vector<std::uint8_t> bytes;
};

// UET headers as they follow the UDP header (the UDP payload), one per PDS type / SES form / TSS
// form.
std::vector<named_bytes> uet_udp_payloads();

// UET headers (as uet_udp_payloads) that the engine's decode_uet rejects but the dissector
// (wire::dissect, uet-dump) shows: a payload_length larger than the bytes present.
std::vector<named_bytes> uet_dissector_only_payloads();

// Complete Ethernet frames of RoCEv2 packets (with a correct ICRC), one per opcode family.
std::vector<named_bytes> roce_frames();

// A connection manager message as RoCEv2 carries it: a UD SEND (DETH, the GSI's Q_Key) from
// 10.0.0.1 to QP 1 of 10.0.0.2, with m's MAD as its payload.
std::vector<std::uint8_t> cm_frame(const wire::cm_message& m);

// Complete Ethernet frames carrying each of uet_udp_payloads() over IPv4/UDP port 4793,
// plus ARP, VLAN-tagged and entropy-header (IP protocol 253) variants.
std::vector<named_bytes> uet_frames();

// uet_dissector_only_payloads() in IPv4/UDP frames to port 4793.
std::vector<named_bytes> uet_dissector_only_frames();

}  // namespace uet::golden
