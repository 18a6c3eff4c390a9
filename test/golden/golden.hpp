// Sample packets built by lib/wire, one per header type and variant, shared by the unit tests,
// the fuzz seed corpus and the uet-dump tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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

// Complete Ethernet frames carrying each of uet_udp_payloads() over IPv4/UDP port 4793,
// plus ARP, VLAN-tagged and entropy-header (IP protocol 253) variants.
std::vector<named_bytes> uet_frames();

// uet_dissector_only_payloads() in IPv4/UDP frames to port 4793.
std::vector<named_bytes> uet_dissector_only_frames();

}  // namespace uet::golden
