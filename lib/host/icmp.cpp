#include "host/icmp.hpp"

#include <cstring>

#include "wire/bytes.hpp"
#include "wire/frame.hpp"

namespace uet::host {

const char* to_string(icmp_error e) noexcept {
    switch (e) {
        case icmp_error::none:
            return "ok";
        case icmp_error::truncated:
            return "truncated ICMP message";
        case icmp_error::bad_checksum:
            return "bad ICMP checksum";
        case icmp_error::not_echo:
            return "ICMP type is not echo";
    }
    return "unknown";
}

icmp_error parse_icmp_echo(std::span<const std::uint8_t> message, icmp_echo& out) noexcept {
    if (message.size() < icmp_echo_header_size) return icmp_error::truncated;
    // The checksum covers the whole message; summing it with its checksum field gives 0.
    if (wire::internet_checksum(message) != 0) return icmp_error::bad_checksum;
    const std::uint8_t type = message[0];
    if ((type != icmp_echo_request && type != icmp_echo_reply) || message[1] != 0) {
        return icmp_error::not_echo;
    }
    out.type = type;
    out.id = wire::load_be16(message.data() + 4);
    out.sequence = wire::load_be16(message.data() + 6);
    out.data = message.subspan(icmp_echo_header_size);
    return icmp_error::none;
}

std::size_t build_icmp_echo(const icmp_echo& e, std::span<std::uint8_t> out) noexcept {
    const std::size_t size = icmp_echo_header_size + e.data.size();
    if (out.size() < size) return 0;
    out[0] = e.type;
    out[1] = 0;
    wire::store_be16(out.data() + 2, 0);
    wire::store_be16(out.data() + 4, e.id);
    wire::store_be16(out.data() + 6, e.sequence);
    // memmove: the data may alias the output when a request is turned around in place.
    if (!e.data.empty())
        std::memmove(out.data() + icmp_echo_header_size, e.data.data(), e.data.size());
    wire::store_be16(out.data() + 2, wire::internet_checksum(out.first(size)));
    return size;
}

ipv4_frame_error parse_ipv4_frame(std::span<const std::uint8_t> frame,
                                  ipv4_frame_view& out) noexcept {
    if (wire::decode(frame, out.eth) != wire::reject_reason::none) {
        return ipv4_frame_error::truncated;
    }
    std::size_t offset = wire::eth_header::wire_size;
    std::uint16_t ethertype = out.eth.ethertype;
    out.vlan.reset();
    if (ethertype == wire::ethertype_vlan) {
        wire::vlan_tag tag;
        if (wire::decode(frame.subspan(offset), tag) != wire::reject_reason::none) {
            return ipv4_frame_error::truncated;
        }
        out.vlan = tag;
        ethertype = tag.ethertype;
        offset += wire::vlan_tag::wire_size;
    }
    if (ethertype != wire::ethertype_ipv4) return ipv4_frame_error::not_ipv4;
    const auto ip_bytes = frame.subspan(offset);
    const wire::reject_reason r = wire::decode(ip_bytes, out.ip);
    if (r == wire::reject_reason::truncated) return ipv4_frame_error::truncated;
    if (r != wire::reject_reason::none) return ipv4_frame_error::bad_ip_header;
    if (out.ip.total_length > ip_bytes.size()) return ipv4_frame_error::truncated;
    if (out.ip.mf || out.ip.frag_offset != 0) return ipv4_frame_error::fragment;
    out.payload =
        ip_bytes.subspan(out.ip.header_length(), out.ip.total_length - out.ip.header_length());
    return ipv4_frame_error::none;
}

std::size_t build_echo_reply_frame(const ipv4_frame_view& request, const icmp_echo& echo,
                                   const wire::mac_address& our_mac, std::uint32_t our_ip,
                                   std::span<std::uint8_t> out) noexcept {
    wire::frame_spec spec;
    spec.src_mac = our_mac;
    spec.dst_mac = request.eth.src;
    spec.vlan = request.vlan;
    spec.src_ip = our_ip;
    spec.dst_ip = request.ip.src;
    spec.dscp = request.ip.dscp;
    spec.ip_id = request.ip.id;
    spec.df = request.ip.df;
    const std::size_t header = wire::frame_header_size(spec, false);
    if (out.size() < header) return 0;
    icmp_echo reply = echo;
    reply.type = icmp_echo_reply;
    const std::size_t message = build_icmp_echo(reply, out.subspan(header));
    if (message == 0) return 0;
    return wire::finish_ip_frame(spec, ip_proto_icmp, message, out);
}

}  // namespace uet::host
