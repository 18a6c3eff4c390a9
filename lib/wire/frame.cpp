#include "wire/frame.hpp"

#include <cstring>

#include "wire/bytes.hpp"

namespace uet::wire {

namespace {

constexpr std::size_t max_ip_total = 0xffff;

std::size_t l2_size(const frame_spec& s) noexcept {
    return eth_header::wire_size + (s.vlan ? vlan_tag::wire_size : 0);
}

// Writes Ethernet [+ VLAN] for the given ethertype; returns bytes written (0 if no room).
std::size_t write_l2(const frame_spec& s, std::uint16_t ethertype,
                     std::span<std::uint8_t> out) noexcept {
    eth_header eth{s.dst_mac, s.src_mac, s.vlan ? ethertype_vlan : ethertype};
    std::size_t n = encode(eth, out);
    if (!n) return 0;
    if (s.vlan) {
        vlan_tag tag = *s.vlan;
        tag.ethertype = ethertype;
        std::size_t m = encode(tag, out.subspan(n));
        if (!m) return 0;
        n += m;
    }
    return n;
}

// The first three 32-bit words of an IPv4 header without options (version 4, 5 words,
// checksum 0), from values in registers.
struct ipv4_words {
    std::uint32_t w0, w1, w2;
};

ipv4_words ipv4_header_words(const frame_spec& s, std::uint8_t protocol, std::uint16_t total_length,
                             std::uint16_t id) noexcept {
    return {(0x45u << 24) | (std::uint32_t{make_tos(s.dscp, s.ecn)} << 16) | total_length,
            (std::uint32_t{id} << 16) | (s.df ? 0x4000u : 0u),
            (std::uint32_t{s.ttl} << 24) | (std::uint32_t{protocol} << 16)};
}

// The header's 16-bit words summed (at most 10 x 0xffff), as checksum_partial sums them.
std::uint32_t ipv4_header_sum(const ipv4_words& w, const frame_spec& s) noexcept {
    const auto halves = [](std::uint32_t v) { return (v >> 16) + (v & 0xffff); };
    return halves(w.w0) + halves(w.w1) + halves(w.w2) + halves(s.src_ip) + halves(s.dst_ip);
}

// Writes L2 + IPv4 header (checksum filled) in front of ip_payload_len payload bytes.
// Every transmitted frame comes through here, so the 34 (or 38) bytes are stored at fixed
// offsets after one bounds check: the same bytes encode(eth_header) and encode(ipv4_header)
// write (wire_l2l4_test compares them).
std::size_t write_l2_ip(const frame_spec& s, std::uint8_t protocol, std::size_t ip_payload_len,
                        std::span<std::uint8_t> out) noexcept {
    if (ip_payload_len > max_ip_total - ipv4_header::wire_size) return 0;
    const std::size_t n = l2_size(s);
    if (out.size() < n + ipv4_header::wire_size) return 0;
    std::uint8_t* b = out.data();
    std::memcpy(b, s.dst_mac.octets.data(), 6);
    std::memcpy(b + 6, s.src_mac.octets.data(), 6);
    if (s.vlan) {
        store_be16(b + 12, ethertype_vlan);
        vlan_tag tag = *s.vlan;
        tag.ethertype = ethertype_ipv4;
        if (!encode(tag, out.subspan(eth_header::wire_size))) return 0;
    } else {
        store_be16(b + 12, ethertype_ipv4);
    }
    // The header's five 32-bit words (version 4, 5 words; checksum 0) and their checksum are
    // computed in registers: summing the bytes back from memory right after storing them in
    // narrower pieces stalls every load (store forwarding).
    const ipv4_words w = ipv4_header_words(
        s, protocol, static_cast<std::uint16_t>(ipv4_header::wire_size + ip_payload_len), s.ip_id);
    std::uint8_t* ip = b + n;
    store_be32(ip, w.w0);
    store_be32(ip + 4, w.w1);
    store_be32(ip + 8, w.w2);
    store_be32(ip + 12, s.src_ip);
    store_be32(ip + 16, s.dst_ip);
    store_be16(ip + 10, checksum_finish(ipv4_header_sum(w, s)));
    return n + ipv4_header::wire_size;
}

}  // namespace

bool udp_header_template::build(const frame_spec& s) noexcept {
    if (s.vlan) return false;
    frame_spec f = s;
    f.ip_id = 0;
    f.src_port = 0;
    f.udp_checksum = false;
    if (finish_udp_frame(f, 0, std::span<std::uint8_t>(bytes_)) != size) return false;
    // The header's sum without the total length and the ID, which write() adds per frame.
    fixed_sum_ = ipv4_header_sum(ipv4_header_words(s, ip_proto_udp, 0, 0), s);
    return true;
}

void udp_header_template::write(std::uint8_t* out, std::uint16_t ip_id, std::uint16_t src_port,
                                std::size_t udp_payload_len) const noexcept {
    constexpr std::size_t ip = eth_header::wire_size, udp = ip + ipv4_header::wire_size;
    std::memcpy(out, bytes_, size);
    const auto udp_len = static_cast<std::uint16_t>(udp_header::wire_size + udp_payload_len);
    const auto total = static_cast<std::uint16_t>(ipv4_header::wire_size + udp_len);
    store_be16(out + ip + 2, total);
    store_be16(out + ip + 4, ip_id);
    store_be16(out + ip + 10, checksum_finish(fixed_sum_ + total + ip_id));
    store_be16(out + udp, src_port);
    store_be16(out + udp + 4, udp_len);
}

std::size_t frame_header_size(const frame_spec& s, bool udp) noexcept {
    return l2_size(s) + ipv4_header::wire_size + (udp ? udp_header::wire_size : 0);
}

std::size_t finish_ip_frame(const frame_spec& s, std::uint8_t ip_protocol,
                            std::size_t ip_payload_len, std::span<std::uint8_t> out) noexcept {
    std::size_t hdr = frame_header_size(s, false);
    if (out.size() < hdr || out.size() - hdr < ip_payload_len) return 0;
    if (!write_l2_ip(s, ip_protocol, ip_payload_len, out)) return 0;
    return hdr + ip_payload_len;
}

std::size_t finish_udp_frame(const frame_spec& s, std::size_t udp_payload_len,
                             std::span<std::uint8_t> out) noexcept {
    std::size_t hdr = frame_header_size(s, true);
    if (out.size() < hdr || out.size() - hdr < udp_payload_len) return 0;
    std::size_t udp_len = udp_header::wire_size + udp_payload_len;
    if (udp_len > max_ip_total - ipv4_header::wire_size) return 0;
    std::size_t ip_end = write_l2_ip(s, ip_proto_udp, udp_len, out);
    if (!ip_end) return 0;
    udp_header udp{s.src_port, s.dst_port, static_cast<std::uint16_t>(udp_len), 0};
    encode(udp, out.subspan(ip_end));
    std::size_t total = hdr + udp_payload_len;
    refresh_udp_checksum(s, out.first(total));
    return total;
}

std::size_t finish_udp_frame(const frame_spec& s, std::size_t udp_payload_len,
                             std::span<std::uint8_t> out, std::size_t payload_summed_from,
                             std::uint32_t payload_sum) noexcept {
    if (s.udp_checksum == false || payload_summed_from > udp_payload_len)
        return finish_udp_frame(s, udp_payload_len, out);
    const std::size_t hdr = frame_header_size(s, true);
    if (out.size() < hdr || out.size() - hdr < udp_payload_len) return 0;
    const std::size_t udp_len = udp_header::wire_size + udp_payload_len;
    if (udp_len > max_ip_total - ipv4_header::wire_size) return 0;
    const std::size_t ip_end = write_l2_ip(s, ip_proto_udp, udp_len, out);
    if (!ip_end) return 0;
    encode(udp_header{s.src_port, s.dst_port, static_cast<std::uint16_t>(udp_len), 0},
           out.subspan(ip_end));
    const auto datagram = out.subspan(ip_end, udp_len);
    store_be16(&datagram[6],
               udp_checksum_presummed(s.src_ip, s.dst_ip, datagram,
                                      udp_header::wire_size + payload_summed_from, payload_sum));
    return hdr + udp_payload_len;
}

void refresh_udp_checksum(const frame_spec& s, std::span<std::uint8_t> frame) noexcept {
    std::size_t off = l2_size(s) + ipv4_header::wire_size;
    if (frame.size() < off + udp_header::wire_size) return;
    auto datagram = frame.subspan(off);
    std::uint16_t c = s.udp_checksum ? udp_checksum(s.src_ip, s.dst_ip, datagram) : 0;
    store_be16(&datagram[6], c);
}

std::size_t build_udp_frame(const frame_spec& s, std::span<const std::uint8_t> udp_payload,
                            std::span<std::uint8_t> out) noexcept {
    std::size_t hdr = frame_header_size(s, true);
    if (out.size() < hdr || out.size() - hdr < udp_payload.size()) return 0;
    if (!udp_payload.empty()) std::memmove(&out[hdr], udp_payload.data(), udp_payload.size());
    return finish_udp_frame(s, udp_payload.size(), out);
}

std::size_t build_ip_frame(const frame_spec& s, std::uint8_t ip_protocol,
                           std::span<const std::uint8_t> ip_payload,
                           std::span<std::uint8_t> out) noexcept {
    std::size_t hdr = frame_header_size(s, false);
    if (out.size() < hdr || out.size() - hdr < ip_payload.size()) return 0;
    if (!ip_payload.empty()) std::memmove(&out[hdr], ip_payload.data(), ip_payload.size());
    return finish_ip_frame(s, ip_protocol, ip_payload.size(), out);
}

std::size_t build_arp_frame(const frame_spec& s, const arp_packet& arp,
                            std::span<std::uint8_t> out) noexcept {
    std::size_t n = write_l2(s, ethertype_arp, out);
    if (!n) return 0;
    std::size_t m = encode(arp, out.subspan(n));
    return m ? n + m : 0;
}

namespace {

// What follows a valid IPv4 header (in out.ip) in both paths below: the packet within the
// frame, no fragment, then UDP (length and any checksum) or protocol 253.
reject_reason parse_ip_payload(std::span<const std::uint8_t> l3, l2l4_view& out) noexcept {
    const ipv4_header& ip = out.ip;
    if (ip.total_length > l3.size()) return reject_reason::truncated;
    if (ip.mf || ip.frag_offset != 0) return reject_reason::ip_fragment;
    auto packet = l3.first(ip.total_length);
    auto payload = packet.subspan(ip.header_length());
    if (ip.protocol == ip_proto_udp) {
        if (auto r = decode(payload, out.udp.emplace()); r != reject_reason::none) return r;
        if (out.udp->length != payload.size()) return reject_reason::bad_udp_length;
        if (!udp_checksum_ok(ip.src, ip.dst, payload)) return reject_reason::bad_udp_checksum;
        out.l4_payload = payload.subspan(udp_header::wire_size);
    } else if (ip.protocol == ip_proto_uet) {
        out.l4_payload = payload;
    } else {
        return reject_reason::unsupported_ip_protocol;
    }
    out.ip_packet = packet;
    return reject_reason::none;
}

reject_reason parse_ipv4(std::span<const std::uint8_t> l3, l2l4_view& out) noexcept {
    if (auto r = decode(l3, out.ip); r != reject_reason::none) return r;
    return parse_ip_payload(l3, out);
}

// Untagged IPv4 without options carrying UDP: nearly every frame a receive path sees. Its
// Ethernet and IPv4 headers are read at fixed offsets after the caller's one bounds check (the
// caller has seen the ethertype, version, IHL and protocol), with decode()'s remaining checks in
// its order, so a bad frame gets the same reason as on the general path.
reject_reason parse_plain_udp(std::span<const std::uint8_t> frame, l2l4_view& out) noexcept {
    constexpr std::size_t l3 = eth_header::wire_size;
    const std::uint8_t* b = frame.data();
    std::memcpy(out.eth.dst.octets.data(), b, 6);
    std::memcpy(out.eth.src.octets.data(), b + 6, 6);
    out.eth.ethertype = ethertype_ipv4;
    out.vlan.reset();
    out.l3 = l2l4_view::l3_kind::ipv4;
    load_fields(b + l3, out.ip);
    if (out.ip.total_length < ipv4_header::wire_size) return reject_reason::bad_ip_total_length;
    if (ipv4_header_checksum(b + l3) != 0) return reject_reason::bad_ip_checksum;
    return parse_ip_payload(frame.subspan(l3), out);
}

bool is_plain_udp(std::span<const std::uint8_t> frame) noexcept {
    constexpr std::size_t l3 = eth_header::wire_size;
    return frame.size() >= l3 + ipv4_header::wire_size + udp_header::wire_size &&
           load_be16(&frame[12]) == ethertype_ipv4 && frame[l3] == 0x45 &&
           frame[l3 + 9] == ip_proto_udp;
}

}  // namespace

reject_reason parse_l2l4(std::span<const std::uint8_t> frame, l2l4_view& out) noexcept {
    if (is_plain_udp(frame)) return parse_plain_udp(frame, out);
    // Decoded in place: a local view copied out at the end was read back in 16-byte pieces
    // right after the decoders' narrower stores, a store-forwarding stall on every frame.
    out.vlan.reset();
    out.udp.reset();
    out.ip_packet = {};
    out.l4_payload = {};
    if (auto r = decode(frame, out.eth); r != reject_reason::none) return r;
    std::size_t off = eth_header::wire_size;
    std::uint16_t type = out.eth.ethertype;
    if (type == ethertype_vlan) {
        if (auto r = decode(frame.subspan(off), out.vlan.emplace()); r != reject_reason::none)
            return r;
        type = out.vlan->ethertype;
        off += vlan_tag::wire_size;
    }
    auto l3 = frame.subspan(off);
    if (type == ethertype_arp) {
        if (auto r = decode(l3, out.arp); r != reject_reason::none) return r;
        out.l3 = l2l4_view::l3_kind::arp;
    } else if (type == ethertype_ipv4) {
        if (auto r = parse_ipv4(l3, out); r != reject_reason::none) return r;
        out.l3 = l2l4_view::l3_kind::ipv4;
    } else {
        return reject_reason::unsupported_ethertype;
    }
    return reject_reason::none;
}

}  // namespace uet::wire
