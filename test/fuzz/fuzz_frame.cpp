// libFuzzer: whole Ethernet frames through dissect(), the path uet-dump takes, and through the
// engine's one-pass reading of data packets (read_plain_request), which must accept nothing the
// general path (parse_l2l4, decode_uet) refuses and read the same headers and payload.
#include <cstddef>
#include <cstdint>
#include <string>

#include "dissect.hpp"
#include "null_visitor.hpp"
#include "plain_request.hpp"
#include "uet_packet.hpp"

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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    uet::wire::dissection d;
    uet::wire::dissect({data, size}, d);
    uet::fuzz::null_visitor v;
    uet::wire::visit(d, v);
    std::string line;
    uet::wire::summarize(d, line);
    check_plain_request({data, size});
    return 0;
}
