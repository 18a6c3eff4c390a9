// Bytes on the wire: Ethernet/IPv4/UDP around a UET header stack, and the control-frame ring.
#include <cstring>

#include "engine_impl.hpp"

namespace uet {

template <class WriteHeaders>
std::size_t engine_impl::build_frame_with(std::uint32_t peer, std::uint16_t entropy, bool data,
                                          std::span<const std::uint8_t> payload,
                                          std::span<std::uint8_t> out,
                                          WriteHeaders&& write_headers) {
    const peer_state& to = peers_[peer];
    wire::frame_spec fs;
    fs.src_mac = cfg_.mac;
    fs.dst_mac = to.mac;
    fs.src_ip = cfg_.ip;
    fs.dst_ip = to.ip;
    // Data is ECN-capable (the CC will read the echoes); ACKs and NACKs ride a priority class.
    fs.dscp = data ? cfg_.data_dscp : cfg_.ack_dscp;
    fs.ecn =
        static_cast<std::uint8_t>(data ? wire::ecn_codepoint::ect0 : wire::ecn_codepoint::not_ect);
    fs.ip_id = ip_id_++;
    fs.src_port = entropy;
    fs.dst_port = cfg_.udp_port;
    fs.udp_checksum = cfg_.udp_checksum;
    const std::size_t header = wire::frame_header_size(fs, true);
    if (out.size() <= header) return 0;
    const auto l4 = out.subspan(header);
    const std::size_t uet_header = write_headers(l4);
    if (uet_header == 0 || l4.size() - uet_header < payload.size()) return 0;
    if (data && by_reference_ && !payload.empty()) {
        const std::uint32_t region =
            cfg_.reference_payload(cfg_.reference_payload_ctx, payload.data(), payload.size());
        if (region != no_payload_region) {
            // The payload stays where it is; summing it is its only touch by the engine (and
            // without the UDP checksum, the engine never touches it).
            const std::uint32_t sum = cfg_.udp_checksum ? wire::checksum_partial(payload) : 0;
            const std::size_t total =
                wire::finish_udp_frame(fs, uet_header + payload.size(), out, uet_header, sum);
            if (total == 0) return 0;
            referenced_ = payload;
            referenced_region_ = region;
            return total - payload.size();
        }
    }
    // The payload's only copy on the way out (from the sender's memory into the frame) also
    // sums it, so the UDP checksum reads just the headers.
    std::uint32_t sum = 0;
    if (cfg_.udp_checksum)
        sum = wire::checksum_copy(l4.data() + uet_header, payload);
    else if (!payload.empty())
        std::memcpy(l4.data() + uet_header, payload.data(), payload.size());
    return wire::finish_udp_frame(fs, uet_header + payload.size(), out, uet_header, sum);
}

std::size_t engine_impl::build_frame(std::uint32_t peer, std::uint16_t entropy, bool data,
                                     const wire::uet_packet_spec& spec,
                                     std::span<std::uint8_t> out) {
    return build_frame_with(
        peer, entropy, data, spec.payload, out,
        [&](std::span<std::uint8_t> l4) { return wire::encode_uet_headers(spec, l4); });
}

std::size_t engine_impl::build_request_frame(std::uint32_t peer, std::uint16_t entropy,
                                             const wire::pds_rud_rod_request& pds,
                                             const wire::ses_standard_request& ses,
                                             std::span<const std::uint8_t> payload,
                                             std::span<std::uint8_t> out) {
    return build_frame_with(peer, entropy, true, payload, out, [&](std::span<std::uint8_t> l4) {
        const std::size_t n = wire::encode(pds, l4);
        if (n == 0) return std::size_t{0};
        const std::size_t m = wire::encode(ses, l4.subspan(n));
        return m == 0 ? std::size_t{0} : n + m;
    });
}

std::span<std::uint8_t> engine_impl::control_slot() {
    if (control_head_ - control_tail_ >= cfg_.control_queue) return {};
    const std::size_t at = control_head_ % cfg_.control_queue;
    return {&control_buf_[at * control_frame_size], control_frame_size};
}

void engine_impl::commit_control(std::size_t length) {
    if (length == 0) return;
    control_len_[control_head_ % cfg_.control_queue] = static_cast<std::uint16_t>(length);
    ++control_head_;
}

void engine_impl::queue_nack(const rx_context& rx, wire::nack_code code, std::uint32_t psn,
                             std::uint16_t spdcid, std::uint16_t dpdcid, bool rudi, pds::pdc* p,
                             bool retx) {
    const auto slot = control_slot();
    if (slot.empty()) return count_drop(drop_reason::control_queue_full);
    wire::pds_nack n;
    n.code = code;
    n.nt = rudi;
    n.retx = retx;  // echoes the NACKed packet's: which transmission it was
    n.nack_psn = psn;
    n.spdcid = spdcid;
    n.dpdcid = dpdcid;
    n.m = rx.ce;
    wire::uet_packet_spec spec;
    spec.pds = n;
    const std::size_t len = build_frame(rx.peer, rx.entropy, false, spec, slot);
    commit_control(len);
    auto& c = p ? p->counters : connectionless_;
    ++c.nacks_sent[static_cast<std::size_t>(pds::slot_of(code))];
    count_tx(p, len, false);
}

void engine_impl::count_tx(pds::pdc* p, std::size_t bytes, bool data) {
    auto& c = p ? p->counters : connectionless_;
    ++c.tx_packets;
    c.tx_bytes += bytes;
    if (data) ++c.tx_data_packets;
    ++counters_.frames_tx;
    counters_.bytes_tx += bytes;
}

}  // namespace uet
