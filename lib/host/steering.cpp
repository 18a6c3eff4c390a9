#include "host/steering.hpp"

#include "wire/bytes.hpp"
#include "wire/eth.hpp"

namespace uet::host {

const char* to_string(traffic_class c) noexcept {
    switch (c) {
        case traffic_class::uet:
            return "uet";
        case traffic_class::roce:
            return "roce";
        case traffic_class::arp:
            return "arp";
        case traffic_class::icmp:
            return "icmp";
        case traffic_class::other_udp:
            return "other_udp";
        case traffic_class::other_ip:
            return "other_ip";
        case traffic_class::other_ethertype:
            return "other_ethertype";
        case traffic_class::runt:
            return "runt";
        case traffic_class::count_:
            break;
    }
    return "unknown";
}

classification classify_general(std::span<const std::uint8_t> frame,
                                const steering_config& cfg) noexcept {
    classification out;
    std::size_t off = wire::eth_header::wire_size;
    if (frame.size() < off) return out;
    std::uint16_t ethertype = wire::load_be16(&frame[12]);
    if (ethertype == wire::ethertype_vlan) {
        if (frame.size() < off + wire::vlan_tag::wire_size) return out;
        ethertype = wire::load_be16(&frame[16]);
        off += wire::vlan_tag::wire_size;
    }
    out.l3_offset = static_cast<std::uint16_t>(off);
    if (ethertype == wire::ethertype_arp) {
        out.cls = frame.size() < off + wire::arp_packet::wire_size ? traffic_class::runt
                                                                   : traffic_class::arp;
        return out;
    }
    if (ethertype != wire::ethertype_ipv4) {
        out.cls = traffic_class::other_ethertype;
        return out;
    }
    if (frame.size() < off + wire::ipv4_header::wire_size) return out;
    const std::uint8_t* ip = &frame[off];
    const std::size_t ihl = std::size_t{ip[0] & 0x0fu} * 4;
    if ((ip[0] >> 4) != 4 || ihl < wire::ipv4_header::wire_size) {
        out.cls = traffic_class::other_ip;
        return out;
    }
    out.dst_ip = wire::load_be32(ip + 16);
    const std::uint16_t frag = wire::load_be16(ip + 6);
    const bool fragment = (frag & 0x3fff) != 0;  // MF set or a non-zero offset
    const std::uint8_t proto = ip[9];
    if (fragment) {
        out.cls = traffic_class::other_ip;
        return out;
    }
    if (proto == 1) {
        out.cls = traffic_class::icmp;
        return out;
    }
    if (proto != wire::ip_proto_udp) {
        out.cls = traffic_class::other_ip;
        return out;
    }
    if (frame.size() < off + ihl + wire::udp_header::wire_size) return out;
    const std::uint16_t dport = wire::load_be16(&frame[off + ihl + 2]);
    out.cls = dport == cfg.uet_port    ? traffic_class::uet
              : dport == cfg.roce_port ? traffic_class::roce
                                       : traffic_class::other_udp;
    return out;
}

}  // namespace uet::host
