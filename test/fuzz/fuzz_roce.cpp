// libFuzzer: the RoCEv2 decoders (BTH and extension headers, pad, ICRC) on the bytes after UDP.
// The IP header the ICRC covers is a fixed template; a mutated packet mostly fails the ICRC,
// which is checked after the headers are parsed, so the header code is still exercised.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "null_visitor.hpp"
#include "wire/roce.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static constexpr std::array<std::uint8_t, 28> ip_udp{
        0x45, 0x00, 0x00, 0x00, 0x00, 0x01, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 0x0a, 0x00,
        0x00, 0x01, 0x0a, 0x00, 0x00, 0x02, 0xc0, 0x00, 0x12, 0xb7, 0x00, 0x00, 0x00, 0x00};
    std::vector<std::uint8_t> ip(ip_udp.begin(), ip_udp.end());
    ip.insert(ip.end(), data, data + size);
    std::span<const std::uint8_t> udp_payload(ip.data() + ip_udp.size(), size);
    uet::wire::roce_packet p;
    if (uet::wire::decode_roce(udp_payload, ip, p) == uet::wire::reject_reason::none) {
        uet::fuzz::null_visitor v;
        uet::wire::visit(p, v);
        std::string line;
        uet::wire::summarize(p, line);
    }
    return 0;
}
