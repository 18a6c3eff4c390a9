// libFuzzer: whole Ethernet frames through dissect(), the path uet-dump takes, and through the
// engine's one-pass reading of data packets (read_plain_request), which must accept nothing the
// general path (parse_l2l4, decode_uet) refuses and read the same headers and payload. A frame
// read in one pass then stands for a "next packet" made from it (header prediction,
// read_next_plain_request; a one-packet message stands for the next one-packet message), which
// must read exactly as read_plain_request reads that packet.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "null_visitor.hpp"
#include "wire/bytes.hpp"
#include "wire/dissect.hpp"
#include "wire/ipv4.hpp"
#include "wire/plain_request.hpp"
#include "wire/uet_packet.hpp"

namespace {

void check_plain_request(std::span<const std::uint8_t> frame) {
    using namespace uet::wire;
    plain_request p;
    if (!read_plain_request(frame, p)) return;
    l2l4_view v;
    uet_packet pkt;
    if (parse_l2l4(frame, v) != reject_reason::none || !v.udp ||
        decode_uet(v.l4_payload, false, pkt) != reject_reason::none)
        __builtin_trap();
    const auto* req = std::get_if<pds_rud_rod_request>(&pkt.pds);
    const auto* ses = pkt.ses ? std::get_if<ses_standard_request>(&*pkt.ses) : nullptr;
    if (!req || !ses || !(*req == p.pds) ||
        !(static_cast<const ses_standard_fields&>(*ses) == p.ses) ||
        pkt.payload.data() != p.payload.data() || pkt.payload.size() != p.payload.size() ||
        v.ip.src != p.src_ip || v.ip.dst != p.dst_ip || v.udp->dport != p.dst_port)
        __builtin_trap();
}

bool same(const uet::wire::plain_request& a, const uet::wire::plain_request& b) {
    return a.src_mac == b.src_mac && a.src_ip == b.src_ip && a.dst_ip == b.dst_ip &&
           a.dscp == b.dscp && a.ecn == b.ecn && a.src_port == b.src_port &&
           a.dst_port == b.dst_port && a.pds == b.pds && a.ses == b.ses &&
           a.payload.data() == b.payload.data() && a.payload.size() == b.payload.size();
}

// The next packet: the frame with one of the bytes that change from packet to packet and one
// byte anywhere in the header XORed with bytes of the fuzzer's choosing (the input's last four),
// the IPv4 checksum made right again half the time; SOM and SYN cleared in the frame that stands
// for it when the input has them (a first packet cannot stand for the next), and its UDP
// checksum taken out. Whatever the prediction then reads, the full reading must read alike.
void check_prediction(std::span<const std::uint8_t> input) {
    using namespace uet::wire;
    constexpr std::size_t header = plain_request_template::header_bytes;
    constexpr std::size_t ip = 14, pds_flags = 43, ses_flags = 55;
    if (input.size() < header + 4) return;
    std::vector<std::uint8_t> frame(input.begin(), input.end());
    const std::uint8_t* noise = input.data() + input.size() - 4;
    frame[pds_flags] &= static_cast<std::uint8_t>(~0x04);  // SYN
    // A one-packet message (SOM and EOM) stands for the next one-packet messages; else SOM goes.
    const bool whole = (frame[ses_flags] & 0x03) == 0x03 && (noise[3] & 4) != 0;
    if (!whole && (frame[ses_flags] & 0x01)) {
        // SOM: its slot held header data; a later packet's holds its payload length there.
        frame[ses_flags] &= static_cast<std::uint8_t>(~0x01);
        const std::size_t ip_total = load_be16(&frame[ip + 2]);
        if (ip_total >= header - ip) store_be32(&frame[86], (ip_total - (header - ip)) & 0x3fff);
    }
    store_be16(&frame[40], 0);  // no UDP checksum (one the changes below would break)
    store_be16(&frame[ip + 10], 0);
    store_be16(&frame[ip + 10], ipv4_header_checksum(&frame[ip]));
    plain_request first;
    if (!read_plain_request(frame, first)) return;
    plain_request_template t;
    remember_plain_request(frame, first, t);
    static constexpr std::size_t changing[] = {18, 19, 24, 25, 34, 35, 40, 41, 43, 44,
                                               45, 46, 47, 48, 49, 90, 91, 92, 93};
    // One message to the next: its id, buffer_offset, memory_key and header data as well.
    static constexpr std::size_t changing_single_packet[] = {
        18, 19, 24, 25, 34, 35, 40, 41, 43, 44, 45, 46, 47, 48, 49, 56, 57, 66, 67, 68, 69,
        70, 71, 72, 73, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93};
    std::vector<std::uint8_t> next = frame;
    if (whole)
        next[changing_single_packet[noise[0] % std::size(changing_single_packet)]] ^= noise[1];
    else
        next[changing[noise[0] % std::size(changing)]] ^= noise[1];
    if (noise[3] & 2) next[noise[2] % header] ^= static_cast<std::uint8_t>(noise[3] >> 2);
    if (noise[3] & 1) {
        store_be16(&next[ip + 10], 0);
        store_be16(&next[ip + 10], ipv4_header_checksum(&next[ip]));
    }
    const plain_request* predicted = read_next_plain_request(next, t);
    if (!predicted) return;
    plain_request full;
    if (!read_plain_request(next, full) || !same(*predicted, full)) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    uet::wire::dissection d;
    uet::wire::dissect({data, size}, d);
    uet::fuzz::null_visitor v;
    uet::wire::visit(d, v);
    std::string line;
    uet::wire::summarize(d, line);
    check_plain_request({data, size});
    check_prediction({data, size});
    return 0;
}
