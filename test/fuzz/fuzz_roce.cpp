// libFuzzer: the RoCEv2 decoders (BTH and extension headers, pad, ICRC) on the bytes after UDP.
// The IP header the ICRC covers is a fixed template; a mutated packet mostly fails the ICRC,
// which is checked after the headers are parsed, so the header code is still exercised. The
// bytes after a BTH and DETH are also read as a CM MAD, whatever the ICRC says.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "null_visitor.hpp"
#include "wire/roce.hpp"
#include "wire/roce_cm.hpp"

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
    constexpr std::size_t bth_deth = 12 + 8;
    uet::wire::cm_message m;
    if (size > bth_deth && uet::wire::decode_cm(std::span(data + bth_deth, size - bth_deth), m) ==
                               uet::wire::reject_reason::none) {
        uet::fuzz::null_visitor v;
        uet::wire::visit(m, v);
        std::string line;
        uet::wire::summarize(m, line);
        uet::wire::uet_cm_private own;
        uet::wire::read_private(m, own);
    }
    return 0;
}
