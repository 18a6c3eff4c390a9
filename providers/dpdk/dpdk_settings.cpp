#include "dpdk/dpdk_settings.hpp"

#include <charconv>
#include <sstream>

namespace uet::detail {

bool parse_ipv4(const std::string& text, std::uint32_t& out) {
    std::uint32_t ip = 0;
    const char* p = text.data();
    const char* end = p + text.size();
    for (int i = 0; i < 4; ++i) {
        unsigned octet = 0;
        auto [next, ec] = std::from_chars(p, end, octet);
        if (ec != std::errc{} || octet > 255 || next == p) return false;
        if (i < 3 && (next == end || *next != '.')) return false;
        ip = (ip << 8) | octet;
        p = i < 3 ? next + 1 : next;
    }
    if (p != end) return false;
    out = ip;
    return true;
}

namespace {

bool usable_host(std::uint32_t ip) {
    const std::uint32_t first = ip >> 24;
    return ip != 0 && first != 0 && first != 127 && first < 224;
}

bool parse_address(const std::string& text, dpdk_settings& s, std::string& why) {
    const auto slash = text.find('/');
    std::uint32_t ip = 0;
    unsigned len = 0;
    bool ok = slash != std::string::npos && parse_ipv4(text.substr(0, slash), ip);
    if (ok) {
        const char* p = text.data() + slash + 1;
        const char* end = text.data() + text.size();
        auto [next, ec] = std::from_chars(p, end, len);
        ok = ec == std::errc{} && next == end && next != p && len >= 1 && len <= 32;
    }
    if (!ok) {
        why = "dpdk.address \"" + text + "\" is not A.B.C.D/LEN (LEN 1..32)";
        return false;
    }
    if (!usable_host(ip)) {
        why = "dpdk.address " + text + " is not a unicast host address";
        return false;
    }
    s.ip = ip;
    s.prefix_len = static_cast<std::uint8_t>(len);
    return true;
}

std::uint32_t mask_of(std::uint8_t len) {
    return len == 0 ? 0 : ~std::uint32_t{0} << (32 - len);
}

bool parse_gateway(const std::string& text, dpdk_settings& s, std::string& why) {
    if (text.empty()) return true;
    std::uint32_t gw = 0;
    if (!parse_ipv4(text, gw) || !usable_host(gw)) {
        why = "dpdk.gateway \"" + text + "\" is not a unicast IPv4 address";
        return false;
    }
    const std::uint32_t mask = mask_of(s.prefix_len);
    if ((gw & mask) != (s.ip & mask) || gw == s.ip) {
        why = "dpdk.gateway " + text + " is not another address on the subnet of " +
              wire::ipv4_to_string(s.ip) + "/" + std::to_string(s.prefix_len);
        return false;
    }
    s.gateway = gw;
    return true;
}

bool parse_neighbor(const std::string& text, dpdk_settings& s, std::string& why) {
    const auto eq = text.find('=');
    std::uint32_t ip = 0;
    const auto mac =
        eq == std::string::npos ? std::nullopt : wire::mac_address::parse(text.substr(eq + 1));
    if (eq == std::string::npos || !parse_ipv4(text.substr(0, eq), ip) || !usable_host(ip) ||
        !mac || mac->is_multicast()) {
        why =
            "dpdk.neighbors entry \"" + text + "\" is not IP=MAC (e.g. 10.0.0.2=02:00:00:00:00:02)";
        return false;
    }
    const std::uint32_t mask = mask_of(s.prefix_len);
    if ((ip & mask) != (s.ip & mask)) {
        why = "dpdk.neighbors entry " + text + " is not on the subnet of dpdk.address";
        return false;
    }
    s.neighbors.emplace_back(ip, *mac);
    return true;
}

}  // namespace

bool parse_dpdk_settings(const fabric_attr& attr, dpdk_settings& out, std::string& why) {
    const dpdk_attr& d = attr.dpdk;
    dpdk_settings s;
    if (d.device.empty()) {
        why =
            "dpdk.device is empty (a vdev such as \"net_memif0,role=server\", an interface "
            "name, \"xdp:IFACE\" or a PCI address)";
        return false;
    }
    s.device = d.device;
    std::istringstream words(d.eal_args);
    for (std::string w; words >> w;)
        s.eal_args.push_back(w);
    if (!parse_address(d.address, s, why) || !parse_gateway(d.gateway, s, why)) return false;
    for (const auto& n : d.neighbors)
        if (!parse_neighbor(n, s, why)) return false;
    if (d.port_mtu != 0 && (d.port_mtu < 576 || d.port_mtu > 9000)) {
        why = "dpdk.port_mtu " + std::to_string(d.port_mtu) + " is outside 576..9000 (0: 1500)";
        return false;
    }
    s.port_mtu = d.port_mtu == 0 ? 1500 : d.port_mtu;
    if (attr.mtu < 64 || attr.mtu + frame_overhead > 9000 + wire::eth_header::wire_size) {
        why = "fabric_attr.mtu " + std::to_string(attr.mtu) + " is outside 64.." +
              std::to_string(9000 + wire::eth_header::wire_size - frame_overhead);
        return false;
    }
    if (d.rto_ns > 10'000'000'000ull) {
        why = "dpdk.rto_ns " + std::to_string(d.rto_ns) + " is above 10 s";
        return false;
    }
    if (d.max_retransmits > 1000) {
        why = "dpdk.max_retransmits " + std::to_string(d.max_retransmits) + " is above 1000";
        return false;
    }
    if (d.ack_every > dpdk_window_packets) {
        why = "dpdk.ack_every " + std::to_string(d.ack_every) + " is above " +
              std::to_string(dpdk_window_packets) + " (the window, in packets; 0: the default)";
        return false;
    }
    s.ack_every = d.ack_every;
    s.trust_link_mtu = d.trust_link_mtu;
    s.time_stages = d.time_stages;
    s.busy_poll = d.busy_poll;
    s.rto_ns = d.rto_ns == 0 ? dpdk_default_rto_ns : d.rto_ns;
    s.max_retransmits = d.max_retransmits == 0 ? dpdk_default_retransmits : d.max_retransmits;
    s.zero_copy_min = d.zero_copy_min;
    s.zero_copy = d.zero_copy;
    s.udp_checksum = d.udp_checksum;
    out = std::move(s);
    return true;
}

}  // namespace uet::detail
