#include "garbage.hpp"

#include <cstring>

#include "core/rng.hpp"
#include "host/icmp.hpp"
#include "wire/bytes.hpp"
#include "wire/frame.hpp"

namespace uet::itest {

std::vector<std::vector<std::uint8_t>> make_garbage(std::uint32_t n, std::uint32_t my_ip,
                                                    std::uint32_t peer_ip,
                                                    const wire::mac_address& me,
                                                    const wire::mac_address& peer_mac) {
    uet::rng rng(0x5eed);
    std::vector<std::vector<std::uint8_t>> out;
    wire::frame_spec s;
    s.src_mac = me;
    s.dst_mac = peer_mac;
    s.src_ip = my_ip;
    s.dst_ip = peer_ip;
    s.src_port = 50000;
    s.dst_port = wire::uet_udp_port;
    for (std::uint32_t i = 0; i < n; ++i) {
        std::vector<std::uint8_t> payload(24 + rng.uniform(200));
        for (auto& b : payload)
            b = static_cast<std::uint8_t>(rng.next_u64());
        std::vector<std::uint8_t> f(1600);
        wire::frame_spec spec = s;
        const unsigned kind = i % 11;
        if (kind == 1) spec.dst_port = 9999;
        std::size_t len = wire::build_udp_frame(spec, payload, f);
        switch (kind) {
            case 0:  // random bytes behind a valid destination MAC
                for (std::size_t j = 6; j < len; ++j)
                    f[j] = static_cast<std::uint8_t>(rng.next_u64());
                break;
            case 2:
                len = 14 + rng.uniform(28);
                break;  // cut inside the IP/UDP headers
            case 3:
                f[24] ^= 0x5a;
                break;  // IP header checksum
            case 4:
                f[len - 1] ^= 0xff;
                break;  // payload after the UDP checksum
            case 5:
                break;  // valid UDP, random payload: bad magic
            case 6:
                wire::store_be16(&f[38], static_cast<std::uint16_t>(wire::load_be16(&f[38]) + 3));
                break;
            case 7: {  // ICMP echo request with a bad checksum
                host::icmp_echo e;
                e.data = std::span<const std::uint8_t>(payload).first(16);
                std::vector<std::uint8_t> msg(64);
                const std::size_t m = host::build_icmp_echo(e, msg);
                msg[2] ^= 1;
                len = wire::build_ip_frame(spec, host::ip_proto_icmp,
                                           std::span<const std::uint8_t>(msg).first(m), f);
                break;
            }
            case 8:
                wire::store_be16(&f[12], 0x86dd);
                break;  // IPv6 ethertype, IPv4 inside
            case 9: {   // ARP with a wrong hardware type
                wire::arp_packet arp;
                arp.sha = me;
                arp.spa = my_ip;
                arp.tpa = peer_ip;
                len = wire::build_arp_frame(spec, arp, f);
                f[15] = 7;
                break;
            }
            case 10:
                f[20] |= 0x20;
                wire::ipv4_fill_checksum(std::span(f).subspan(14, 20));
                break;
        }
        f.resize(len);
        out.push_back(std::move(f));
    }
    return out;
}

}  // namespace uet::itest
