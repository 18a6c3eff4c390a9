#include "wire/dissect.hpp"

#include <cstdio>

namespace uet::wire {

namespace {

void append_ipv4(std::string& out, std::uint32_t addr) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%u.%u.%u.%u", addr >> 24, (addr >> 16) & 0xff,
                  (addr >> 8) & 0xff, addr & 0xff);
    out += buf;
}

void append_endpoint(std::string& out, std::uint32_t addr, std::uint16_t port) {
    append_ipv4(out, addr);
    out += '.';
    out += std::to_string(port);
}

frame_kind classify_udp(const udp_header& udp, const dissect_options& o) noexcept {
    if (udp.dport == o.uet_port) return frame_kind::uet_udp;
    if (udp.dport == o.roce_port) return frame_kind::roce;
    return frame_kind::other_udp;
}

frame_kind classify(const l2l4_view& v, const dissect_options& o) noexcept {
    if (v.l3 == l2l4_view::l3_kind::arp) return frame_kind::arp;
    if (v.udp) return classify_udp(*v.udp, o);
    return v.ip.protocol == ip_proto_uet ? frame_kind::uet_ip : frame_kind::other_ip;
}

reject_reason dissect_upper(dissection& d) noexcept {
    reject_reason r = reject_reason::none;
    switch (d.kind) {
        case frame_kind::uet_udp:
        case frame_kind::uet_ip:
            r = dissect_uet(d.l2l4.l4_payload, d.kind == frame_kind::uet_ip, d.uet);
            if (r != reject_reason::none) d.failed_layer = "uet";
            break;
        case frame_kind::roce:
            r = decode_roce(d.l2l4.l4_payload, d.l2l4.ip_packet, d.roce);
            if (r != reject_reason::none) {
                d.failed_layer = "roce";
                break;
            }
            if (d.roce.deth && d.roce.bth.dest_qp == gsi_qpn) {
                d.upper_ok = true;  // the RoCEv2 headers are shown; the MAD may still be bad
                cm_message m;
                r = decode_cm(d.roce.payload, m);
                if (r != reject_reason::none) {
                    d.failed_layer = "cm";
                    return r;
                }
                d.cm = m;
            }
            break;
        default:
            return reject_reason::none;
    }
    d.upper_ok = r == reject_reason::none;
    return r;
}

// After parse_l2l4 refused the frame: decodes its headers one by one, up to the fault, for
// visit() to show. The reason stays parse_l2l4's.
void decode_l2l4_prefix(std::span<const std::uint8_t> frame, dissection& d) noexcept {
    l2l4_view& v = d.l2l4;
    v = l2l4_view{};
    if (decode(frame, v.eth) != reject_reason::none) return;
    d.l2l4_decoded.eth = true;
    std::size_t off = eth_header::wire_size;
    std::uint16_t type = v.eth.ethertype;
    if (type == ethertype_vlan) {
        if (decode(frame.subspan(off), v.vlan.emplace()) != reject_reason::none) {
            v.vlan.reset();
            return;
        }
        d.l2l4_decoded.vlan = true;
        type = v.vlan->ethertype;
        off += vlan_tag::wire_size;
    }
    if (type != ethertype_ipv4) return;
    const auto l3 = frame.subspan(off);
    if (decode(l3, v.ip) != reject_reason::none) return;
    d.l2l4_decoded.ip = true;
    const std::size_t ihl = std::size_t{v.ip.ihl} * 4;
    if (v.ip.protocol != ip_proto_udp || l3.size() < ihl) return;
    udp_header u;
    if (decode(l3.subspan(ihl), u) != reject_reason::none) return;
    v.udp = u;
    d.l2l4_decoded.udp = true;
}

void summarize_l3(const l2l4_view& v, std::string& out) {
    if (v.udp) {
        append_endpoint(out, v.ip.src, v.udp->sport);
        out += " > ";
        append_endpoint(out, v.ip.dst, v.udp->dport);
    } else {
        append_ipv4(out, v.ip.src);
        out += " > ";
        append_ipv4(out, v.ip.dst);
    }
    out += ": ";
}

void summarize_arp(const arp_packet& a, std::string& out) {
    if (a.op == arp_op_request) {
        out += "ARP who-has ";
        append_ipv4(out, a.tpa);
        out += " tell ";
        append_ipv4(out, a.spa);
    } else {
        out += "ARP reply ";
        append_ipv4(out, a.spa);
        out += " is-at ";
        out += a.sha.to_string();
    }
}

}  // namespace

const char* kind_name(frame_kind k) noexcept {
    switch (k) {
        case frame_kind::unknown:
            return "unknown";
        case frame_kind::arp:
            return "arp";
        case frame_kind::uet_udp:
            return "uet";
        case frame_kind::uet_ip:
            return "uet_ip";
        case frame_kind::roce:
            return "rocev2";
        case frame_kind::other_udp:
            return "udp";
        case frame_kind::other_ip:
            return "ipv4";
        case frame_kind::other_l2:
            return "ethernet";
    }
    return "unknown";
}

reject_reason dissect(std::span<const std::uint8_t> frame, dissection& out,
                      const dissect_options& options) noexcept {
    out = dissection{};
    reject_reason r = parse_l2l4(frame, out.l2l4);
    if (r == reject_reason::unsupported_ethertype || r == reject_reason::unsupported_ip_protocol) {
        // Well-formed traffic that is simply not ours (IPv6, LLDP, TCP, ICMP...): not malformed.
        out.kind =
            r == reject_reason::unsupported_ethertype ? frame_kind::other_l2 : frame_kind::other_ip;
        decode(frame, out.l2l4.eth);  // for the summary's ethertype
        return reject_reason::none;
    }
    if (r != reject_reason::none) {
        out.failed_layer = "l2l4";
        decode_l2l4_prefix(frame, out);
        return r;
    }
    out.l2l4_ok = true;
    out.kind = classify(out.l2l4, options);
    return dissect_upper(out);
}

void visit(const dissection& d, field_visitor& v) {
    if (!d.l2l4_ok) {
        if (d.l2l4_decoded.eth) visit(d.l2l4.eth, v);
        if (d.l2l4_decoded.vlan) visit(*d.l2l4.vlan, v);
        if (d.l2l4_decoded.ip) visit(d.l2l4.ip, v);
        if (d.l2l4_decoded.udp) visit(*d.l2l4.udp, v);
        return;
    }
    const l2l4_view& l = d.l2l4;
    visit(l.eth, v);
    if (l.vlan) visit(*l.vlan, v);
    if (l.l3 == l2l4_view::l3_kind::arp) {
        visit(l.arp, v);
        return;
    }
    visit(l.ip, v);
    if (l.udp) visit(*l.udp, v);
    if (d.kind == frame_kind::uet_udp || d.kind == frame_kind::uet_ip)
        visit(d.uet, v);  // what decoded, also before a fault
    else if (d.kind == frame_kind::roce && d.upper_ok) {
        visit(d.roce, v);
        if (d.cm) visit(*d.cm, v);
    }
}

void summarize(const dissection& d, std::string& out) {
    if (d.kind == frame_kind::other_l2 || d.kind == frame_kind::other_ip) {
        // parse_l2l4 stopped early: only the Ethernet type / IP protocol are known for sure.
        const char* name = ethertype_name(d.l2l4.eth.ethertype);
        char buf[64];
        std::snprintf(buf, sizeof buf, "ethertype 0x%04x (%s)%s", d.l2l4.eth.ethertype,
                      name ? name : "unknown",
                      d.kind == frame_kind::other_ip ? ", not UDP or UET" : "");
        out += buf;
        return;
    }
    if (!d.l2l4_ok) {
        out += "frame";
        return;
    }
    if (d.kind == frame_kind::arp) {
        summarize_arp(d.l2l4.arp, out);
        return;
    }
    summarize_l3(d.l2l4, out);
    switch (d.kind) {
        case frame_kind::uet_udp:
        case frame_kind::uet_ip:
            out += d.kind == frame_kind::uet_ip ? "UET/IP" : "UET";
            if (d.upper_ok) {
                out += ' ';
                summarize(d.uet, out);
            }
            if (d.upper_ok && d.uet.declared_payload) {
                char buf[80];
                std::snprintf(buf, sizeof buf, " [truncated payload: %#x declared, %#zx present]",
                              static_cast<unsigned>(*d.uet.declared_payload),
                              d.uet.packet.payload.size());
                out += buf;
            }
            break;
        case frame_kind::roce:
            out += "RoCEv2";
            if (d.upper_ok) {
                out += ' ';
                summarize(d.roce, out);
            }
            if (d.cm) {
                out += " | ";
                summarize(*d.cm, out);
            }
            break;
        default:
            out += "UDP length " + std::to_string(d.l2l4.l4_payload.size());
            break;
    }
}

}  // namespace uet::wire
