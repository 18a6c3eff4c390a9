#include "wire/eth.hpp"

#include "wire/bytes.hpp"
#include "wire/ipv4.hpp"

namespace uet::wire {

namespace {

void put_mac(byte_writer& w, const mac_address& m) noexcept {
    w.bytes(m.octets);
}

mac_address get_mac(byte_reader& r) noexcept {
    mac_address m;
    auto b = r.bytes(6);
    if (b.size() == 6) std::memcpy(m.octets.data(), b.data(), 6);
    return m;
}

int hex_value(char c) noexcept {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

const char* arp_op_name(std::uint16_t op) noexcept {
    switch (op) {
        case arp_op_request:
            return "request";
        case arp_op_reply:
            return "reply";
        default:
            return "unknown";
    }
}

void ethertype_field(field_visitor& v, std::uint16_t type) {
    const char* name = ethertype_name(type);
    if (name)
        v.field("ethertype", type, name);
    else
        v.field("ethertype", type);
}

}  // namespace

const char* ethertype_name(std::uint16_t ethertype) noexcept {
    switch (ethertype) {
        case ethertype_ipv4:
            return "IPv4";
        case ethertype_arp:
            return "ARP";
        case ethertype_vlan:
            return "802.1Q";
        default:
            return nullptr;
    }
}

std::string mac_address::to_string() const {
    static constexpr char digits[] = "0123456789abcdef";
    std::string s;
    s.reserve(17);
    for (std::size_t i = 0; i < octets.size(); ++i) {
        if (i) s += ':';
        s += digits[octets[i] >> 4];
        s += digits[octets[i] & 15];
    }
    return s;
}

std::optional<mac_address> mac_address::parse(std::string_view text) noexcept {
    if (text.size() != 17) return std::nullopt;
    mac_address m;
    for (std::size_t i = 0; i < 6; ++i) {
        int hi = hex_value(text[i * 3]);
        int lo = hex_value(text[i * 3 + 1]);
        if (hi < 0 || lo < 0) return std::nullopt;
        // One separator style throughout, so "aa:bb-cc..." is refused.
        if (i < 5 && text[i * 3 + 2] != text[2]) return std::nullopt;
        m.octets[i] = static_cast<std::uint8_t>(hi * 16 + lo);
    }
    if (text[2] != ':' && text[2] != '-') return std::nullopt;
    return m;
}

std::size_t encode(const eth_header& h, std::span<std::uint8_t> out) noexcept {
    byte_writer w(out);
    put_mac(w, h.dst);
    put_mac(w, h.src);
    w.u16(h.ethertype);
    return w.result();
}

reject_reason decode(std::span<const std::uint8_t> in, eth_header& out) noexcept {
    // Every received frame comes through here: one bounds check, then fixed offsets.
    if (in.size() < eth_header::wire_size) return reject_reason::truncated;
    std::memcpy(out.dst.octets.data(), in.data(), 6);
    std::memcpy(out.src.octets.data(), in.data() + 6, 6);
    out.ethertype = load_be16(in.data() + 12);
    return reject_reason::none;
}

void visit(const eth_header& h, field_visitor& v) {
    v.begin("eth");
    v.bytes("dst", h.dst.octets);
    v.bytes("src", h.src.octets);
    ethertype_field(v, h.ethertype);
    v.end();
}

std::size_t encode(const vlan_tag& h, std::span<std::uint8_t> out) noexcept {
    byte_writer w(out);
    w.u16(static_cast<std::uint16_t>(((h.pcp & 7u) << 13) | (h.dei ? 0x1000u : 0u) |
                                     (h.vid & 0x0fffu)));
    w.u16(h.ethertype);
    return w.result();
}

reject_reason decode(std::span<const std::uint8_t> in, vlan_tag& out) noexcept {
    byte_reader r(in);
    std::uint16_t tci = r.u16();
    std::uint16_t type = r.u16();
    if (r.failed()) return reject_reason::truncated;
    out.pcp = static_cast<std::uint8_t>(tci >> 13);
    out.dei = (tci & 0x1000) != 0;
    out.vid = tci & 0x0fff;
    out.ethertype = type;
    return reject_reason::none;
}

void visit(const vlan_tag& h, field_visitor& v) {
    v.begin("vlan");
    v.field("pcp", h.pcp);
    v.field("dei", h.dei ? 1 : 0);
    v.field("vid", h.vid);
    ethertype_field(v, h.ethertype);
    v.end();
}

std::size_t encode(const arp_packet& h, std::span<std::uint8_t> out) noexcept {
    byte_writer w(out);
    w.u16(1);  // htype Ethernet
    w.u16(ethertype_ipv4);
    w.u8(6);
    w.u8(4);
    w.u16(h.op);
    put_mac(w, h.sha);
    w.u32(h.spa);
    put_mac(w, h.tha);
    w.u32(h.tpa);
    return w.result();
}

reject_reason decode(std::span<const std::uint8_t> in, arp_packet& out) noexcept {
    byte_reader r(in);
    std::uint16_t htype = r.u16();
    std::uint16_t ptype = r.u16();
    std::uint8_t hlen = r.u8();
    std::uint8_t plen = r.u8();
    arp_packet a;
    a.op = r.u16();
    a.sha = get_mac(r);
    a.spa = r.u32();
    a.tha = get_mac(r);
    a.tpa = r.u32();
    if (r.failed()) return reject_reason::truncated;
    if (htype != 1 || ptype != ethertype_ipv4 || hlen != 6 || plen != 4 ||
        (a.op != arp_op_request && a.op != arp_op_reply))
        return reject_reason::bad_arp;
    out = a;
    return reject_reason::none;
}

void visit(const arp_packet& h, field_visitor& v) {
    v.begin("arp");
    v.field("htype", 1, "Ethernet");
    v.field("ptype", ethertype_ipv4, "IPv4");
    v.field("hlen", 6);
    v.field("plen", 4);
    v.field("op", h.op, arp_op_name(h.op));
    v.bytes("sha", h.sha.octets);
    v.field("spa", h.spa, ipv4_to_string(h.spa));
    v.bytes("tha", h.tha.octets);
    v.field("tpa", h.tpa, ipv4_to_string(h.tpa));
    v.end();
}

}  // namespace uet::wire
