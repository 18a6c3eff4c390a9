#include "plain_request.hpp"

#include <cstring>

#include "bytes.hpp"
#include "ipv4.hpp"

namespace uet::wire {

namespace {

constexpr std::size_t l3_at = eth_header::wire_size;
constexpr std::size_t udp_at = l3_at + ipv4_header::wire_size;
constexpr std::size_t pds_at = udp_at + udp_header::wire_size;
constexpr std::size_t ses_at = pds_at + pds_rud_rod_request::wire_size;
constexpr std::size_t headers_size = ses_at + ses_standard_fields::wire_size;

bool is_rud_or_rod(std::uint8_t first_byte) noexcept {
    const auto type = static_cast<pds_type>(first_byte >> 3);
    return type == pds_type::rud || type == pds_type::rod;
}

}  // namespace

bool read_plain_request(std::span<const std::uint8_t> frame, plain_request& out) noexcept {
    // One bounds check for every header; the IP total length then bounds the payload.
    if (frame.size() < headers_size) return false;
    const std::uint8_t* b = frame.data();
    const std::uint8_t* ip = b + l3_at;
    // The PDS type first: an ACK or other control frame leaves at once for the general path.
    if (!is_rud_or_rod(b[pds_at]) || load_be16(b + 12) != ethertype_ipv4 || ip[0] != 0x45 ||
        ip[9] != ip_proto_udp)
        return false;
    const std::uint16_t total = load_be16(ip + 2);
    if (total < headers_size - l3_at || total > frame.size() - l3_at) return false;
    if ((load_be16(ip + 6) & 0x3fff) != 0) return false;  // MF or a fragment offset
    if (ipv4_header_checksum(ip) != 0) return false;
    const std::span<const std::uint8_t> datagram(b + udp_at, total - ipv4_header::wire_size);
    if (load_be16(&datagram[4]) != datagram.size()) return false;
    out.src_ip = load_be32(ip + 12);
    out.dst_ip = load_be32(ip + 16);
    if (!udp_checksum_ok(out.src_ip, out.dst_ip, datagram)) return false;
    const auto l4_payload = datagram.subspan(udp_header::wire_size);
    if (decode(l4_payload, out.pds) != reject_reason::none ||
        out.pds.next_hdr != pds_next_hdr::request_std)
        return false;
    if (load_standard_fields(b + ses_at, out.ses) != reject_reason::none ||
        ses_opcode_has_extension(out.ses.opcode))
        return false;
    out.payload =
        l4_payload.subspan(pds_rud_rod_request::wire_size + ses_standard_fields::wire_size);
    if (!out.ses.som && out.ses.payload_length > out.payload.size()) return false;
    std::memcpy(out.src_mac.octets.data(), b + 6, 6);
    out.dscp = tos_dscp(ip[1]);
    out.ecn = ip[1] & 3;
    out.src_port = load_be16(&datagram[0]);
    out.dst_port = load_be16(&datagram[2]);
    return true;
}

}  // namespace uet::wire
