#include "pipe/frame_edit.hpp"

#include <algorithm>

#include "wire/bytes.hpp"
#include "wire/eth.hpp"
#include "wire/ipv4.hpp"

namespace uet::pipe {

namespace {

using wire::load_be16;
using wire::store_be16;

// Replaces one 16-bit word of an IPv4 header and patches the header checksum incrementally,
// as a forwarding ASIC does (an already wrong checksum stays wrong).
void rewrite_ip_word(std::uint8_t* ip, std::size_t offset, std::uint16_t value) noexcept {
    const std::uint16_t old = load_be16(ip + offset);
    store_be16(ip + offset, value);
    store_be16(ip + 10, wire::checksum_update16(load_be16(ip + 10), old, value));
}

std::size_t l2_length(std::span<const std::uint8_t> frame, std::uint16_t& ethertype) noexcept {
    if (frame.size() < wire::eth_header::wire_size) return 0;
    ethertype = load_be16(&frame[12]);
    if (ethertype != wire::ethertype_vlan) return wire::eth_header::wire_size;
    const std::size_t l2 = wire::eth_header::wire_size + wire::vlan_tag::wire_size;
    if (frame.size() < l2) return 0;
    ethertype = load_be16(&frame[16]);
    return l2;
}

}  // namespace

frame_layout locate(std::span<const std::uint8_t> frame) noexcept {
    frame_layout out;
    std::uint16_t type = 0;
    const std::size_t ip = l2_length(frame, type);
    if (ip == 0 || type != wire::ethertype_ipv4) return out;
    if (frame.size() - ip < wire::ipv4_header::wire_size) return out;
    const std::uint8_t vihl = frame[ip];
    const std::size_t ihl = std::size_t{vihl & 0x0fu} * 4;
    const std::size_t total = load_be16(&frame[ip + 2]);
    if ((vihl >> 4) != 4 || ihl < wire::ipv4_header::wire_size) return out;
    if (total < ihl || total > frame.size() - ip) return out;
    out.ip = ip;
    out.ip_end = ip + total;
    if (frame[ip + 9] == wire::ip_proto_udp && total - ihl >= wire::udp_header::wire_size) {
        out.udp = ip + ihl;
    }
    return out;
}

bool mark_ce(std::span<std::uint8_t> frame) noexcept {
    const frame_layout l = locate(frame);
    if (!l.ipv4()) return false;
    std::uint8_t* ip = &frame[l.ip];
    if (!wire::is_ect(wire::tos_ecn(ip[1]))) return false;
    const auto ce = static_cast<std::uint8_t>(wire::ecn_codepoint::ce);
    rewrite_ip_word(ip, 0, static_cast<std::uint16_t>((ip[0] << 8) | ip[1] | ce));
    return true;
}

bool set_ip_id(std::span<std::uint8_t> frame, std::uint16_t id) noexcept {
    const frame_layout l = locate(frame);
    if (!l.ipv4()) return false;
    rewrite_ip_word(&frame[l.ip], 4, id);
    return true;
}

std::size_t trim_frame(std::span<std::uint8_t> frame, std::uint16_t keep,
                       std::uint8_t dscp) noexcept {
    const frame_layout l = locate(frame);
    if (!l.is_udp()) return 0;
    const std::size_t payload = l.udp + wire::udp_header::wire_size;
    const std::size_t kept = std::min<std::size_t>(keep, l.ip_end - payload);
    std::uint8_t* ip = &frame[l.ip];
    const std::size_t ihl = l.udp - l.ip;
    const std::uint8_t tos = wire::make_tos(dscp, static_cast<std::uint8_t>(ip[1] & 3));
    rewrite_ip_word(ip, 0, static_cast<std::uint16_t>((ip[0] << 8) | tos));
    rewrite_ip_word(ip, 2, static_cast<std::uint16_t>(ihl + wire::udp_header::wire_size + kept));
    std::uint8_t* udp = &frame[l.udp];
    store_be16(udp + 4, static_cast<std::uint16_t>(wire::udp_header::wire_size + kept));
    store_be16(udp + 6, 0);
    return payload + kept;
}

bool flip_bit(std::span<std::uint8_t> frame, rng& r) noexcept {
    const frame_layout l = locate(frame);
    std::size_t begin = wire::eth_header::wire_size;
    std::size_t end = frame.size();
    if (l.is_udp() && l.ip_end > l.udp + wire::udp_header::wire_size) {
        begin = l.udp + wire::udp_header::wire_size;
        end = l.ip_end;
    }
    if (end <= begin) return false;
    const std::uint64_t bit = r.uniform((end - begin) * 8);
    frame[begin + bit / 8] ^= static_cast<std::uint8_t>(1u << (bit % 8));
    return true;
}

}  // namespace uet::pipe
