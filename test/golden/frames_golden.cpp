// Complete Ethernet frames around the UET samples: IPv4/UDP to port 4793 with a distinct entropy
// (source port) each, one behind an 802.1Q tag, one over IP protocol 253, and ARP both ways.
#include "golden.hpp"
#include "wire/frame.hpp"
#include "wire/uet_tss.hpp"

namespace uet::golden {

namespace {

using wire::mac_address;

wire::frame_spec base_spec() {
    wire::frame_spec s;
    s.src_mac = mac_address{{0x02, 0x00, 0x00, 0x00, 0x00, 0x01}};
    s.dst_mac = mac_address{{0x02, 0x00, 0x00, 0x00, 0x00, 0x02}};
    s.src_ip = 0x0a000001;  // 10.0.0.1
    s.dst_ip = 0x0a000002;  // 10.0.0.2
    s.dscp = 26;
    s.ecn = 2;  // ECT(0): UET senders mark ECT
    s.ttl = 63;
    s.ip_id = 0x1234;
    s.dst_port = wire::uet_udp_port;
    return s;
}

named_bytes udp_frame(const std::string& name, const wire::frame_spec& s,
                      const std::vector<std::uint8_t>& payload) {
    std::vector<std::uint8_t> buf(payload.size() + 64);
    buf.resize(wire::build_udp_frame(s, payload, buf));
    return {name, std::move(buf)};
}

named_bytes uet_over_ip(const named_bytes& sample, std::uint16_t entropy) {
    std::vector<std::uint8_t> inner(wire::entropy_header::wire_size + sample.bytes.size());
    wire::encode(wire::entropy_header{.entropy = entropy}, inner);
    std::copy(sample.bytes.begin(), sample.bytes.end(),
              inner.begin() + wire::entropy_header::wire_size);
    std::vector<std::uint8_t> buf(inner.size() + 64);
    buf.resize(wire::build_ip_frame(base_spec(), wire::ip_proto_uet, inner, buf));
    return {"ip253_" + sample.name, std::move(buf)};
}

named_bytes arp_frame(const std::string& name, std::uint16_t op) {
    auto s = base_spec();
    wire::arp_packet a;
    a.op = op;
    a.sha = s.src_mac;
    a.spa = s.src_ip;
    a.tha = op == wire::arp_op_request ? mac_address{} : s.dst_mac;
    a.tpa = s.dst_ip;
    if (op == wire::arp_op_request) s.dst_mac = mac_address::broadcast();
    std::vector<std::uint8_t> buf(64);
    buf.resize(wire::build_arp_frame(s, a, buf));
    return {name, std::move(buf)};
}

}  // namespace

std::vector<named_bytes> uet_frames() {
    std::vector<named_bytes> out;
    auto payloads = uet_udp_payloads();
    std::uint16_t entropy = 0xc000;
    for (const auto& p : payloads) {
        auto s = base_spec();
        s.src_port = entropy++;
        out.push_back(udp_frame("udp_" + p.name, s, p.bytes));
    }
    auto tagged = base_spec();
    tagged.src_port = 0xd000;
    tagged.vlan = wire::vlan_tag{.pcp = 3, .dei = false, .vid = 100, .ethertype = 0};
    out.push_back(udp_frame("vlan_" + payloads.front().name, tagged, payloads.front().bytes));
    out.push_back(uet_over_ip(payloads.front(), 0xbeef));
    out.push_back(arp_frame("arp_request", wire::arp_op_request));
    out.push_back(arp_frame("arp_reply", wire::arp_op_reply));
    return out;
}

std::vector<named_bytes> uet_dissector_only_frames() {
    std::vector<named_bytes> out;
    std::uint16_t entropy = 0xe000;
    for (const auto& p : uet_dissector_only_payloads()) {
        auto s = base_spec();
        s.src_port = entropy++;
        out.push_back(udp_frame("udp_" + p.name, s, p.bytes));
    }
    return out;
}

}  // namespace uet::golden
