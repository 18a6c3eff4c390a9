// Bytes on the wire: Ethernet/IPv4/UDP around a UET header stack; the data packets of a PDC, its
// CLOSE, and RUDI requests.
#include "engine/frame_builder.hpp"

#include <cstring>
#include <type_traits>

#include "engine/frame_builder_inline.hpp"
#include "wire/bytes.hpp"

namespace uet {

frame_builder::frame_builder(const engine_config& cfg)
    : staging_frame_size_(frame_header_room + cfg.mtu_payload),
      staging_(new std::uint8_t[cfg.tx_burst * staging_frame_size_]),
      zero_copy_(cfg.zero_copy),
      reference_min_bytes_(cfg.reference_min_bytes),
      ip_(cfg.ip),
      udp_checksum_(cfg.udp_checksum),
      ip_id_step_(cfg.path_ids ? 0 : 1) {}

template <class WriteHeaders>
std::size_t frame_builder::build_frame_with(const peer_state& to, std::uint16_t entropy, bool data,
                                            std::span<const std::uint8_t> payload,
                                            std::span<std::uint8_t> out,
                                            WriteHeaders&& write_headers) {
    constexpr std::size_t header = wire::udp_header_template::size;
    const std::uint16_t ip_id = next_ip_id();
    if (out.size() <= header) return 0;
    const auto l4 = out.subspan(header);
    const std::size_t uet_header = write_headers(l4);
    if (uet_header == 0 || l4.size() - uet_header < payload.size()) return 0;
    const std::size_t udp_payload = uet_header + payload.size();
    if (udp_payload > wire::udp_header_template::max_udp_payload) return 0;
    std::uint32_t sum = 0;
    bool referenced = false;
    if (data && by_reference_ && may_reference(payload.size())) {
        const std::uint32_t region = zero_copy_->find(payload.data(), payload.size());
        if (region != no_payload_region) {
            // The payload stays where it is; summing it is its only touch by the engine (and
            // without the UDP checksum, the engine never touches it).
            if (udp_checksum_) sum = wire::checksum_partial(payload);
            referenced_ = payload;
            referenced_region_ = region;
            referenced = true;
        }
    }
    // Otherwise the payload's only copy on the way out (from the sender's memory into the
    // frame) also sums it, so the UDP checksum reads just the headers.
    if (!referenced && udp_checksum_)
        sum = wire::checksum_copy(l4.data() + uet_header, payload);
    else if (!referenced && !payload.empty())
        std::memcpy(l4.data() + uet_header, payload.data(), payload.size());
    // Data is ECN-capable (the CC will read the echoes); ACKs and NACKs ride a priority class.
    (data ? to.data_header : to.control_header).write(out.data(), ip_id, entropy, udp_payload);
    if (udp_checksum_) {
        const auto datagram = out.subspan(header - wire::udp_header::wire_size,
                                          wire::udp_header::wire_size + udp_payload);
        wire::store_be16(&datagram[6],
                         wire::udp_checksum_presummed(
                             ip_, to.ip, datagram, wire::udp_header::wire_size + uet_header, sum));
    }
    return header + udp_payload - (referenced ? payload.size() : 0);
}

std::size_t frame_builder::build_frame(const peer_state& to, std::uint16_t entropy, bool data,
                                       const wire::uet_packet_spec& spec,
                                       std::span<std::uint8_t> out) {
    return build_frame_with(to, entropy, data, spec.payload, out, [&](std::span<std::uint8_t> l4) {
        return wire::encode_uet_headers(spec, l4);
    });
}

std::size_t frame_builder::build_next_request_frame(const peer_state& to, std::uint16_t entropy,
                                                    const wire::pds_rud_rod_request& pds,
                                                    std::uint32_t message_offset,
                                                    std::span<const std::uint8_t> payload,
                                                    std::span<std::uint8_t> out) {
    return build_frame_with(to, entropy, true, payload, out, [&](std::span<std::uint8_t> l4) {
        constexpr std::size_t size = wire::request_headers_template::size;
        if (l4.size() < size) return std::size_t{0};
        wire::write_next_request_headers(l4.data(), tx_template_.headers, pds, message_offset);
        return size;
    });
}

template <class SesHeader>
std::size_t frame_builder::build_request_frame(const peer_state& to, std::uint16_t entropy,
                                               const wire::pds_rud_rod_request& pds,
                                               const SesHeader& ses,
                                               std::span<const std::uint8_t> payload,
                                               std::span<std::uint8_t> out) {
    return build_frame_with(to, entropy, true, payload, out, [&](std::span<std::uint8_t> l4) {
        const std::size_t n = wire::encode(pds, l4);
        if (n == 0) return std::size_t{0};
        if constexpr (std::is_same_v<SesHeader, standard_header_of>) {
            constexpr std::size_t size = wire::ses_standard_fields::wire_size;
            if (l4.size() - n < size) return std::size_t{0};
            wire::store_standard_fields(ses::standard_fields(ses.m, ses.seg), l4.data() + n);
            return n + size;
        } else {
            const std::size_t m = wire::encode(ses, l4.subspan(n));
            return m == 0 ? std::size_t{0} : n + m;
        }
    });
}

template std::size_t frame_builder::build_request_frame(const peer_state&, std::uint16_t,
                                                        const wire::pds_rud_rod_request&,
                                                        const wire::ses_standard_request&,
                                                        std::span<const std::uint8_t>,
                                                        std::span<std::uint8_t>);
template std::size_t frame_builder::build_request_frame(const peer_state&, std::uint16_t,
                                                        const wire::pds_rud_rod_request&,
                                                        const standard_header_of&,
                                                        std::span<const std::uint8_t>,
                                                        std::span<std::uint8_t>);

std::size_t frame_builder::build_pdc_packet(const peer_state& to, pds::pdc& p,
                                            const message_pool& msgs, tx_entry& e, bool retx,
                                            bool ar, std::span<std::uint8_t> buf) {
    if (e.kind == tx_kind::close) return build_close(to, p, e, retx, buf);
    const ses::tx_message& m = msgs[e.message];
    // The segment is built where the header writer reads it: a copy of it into a temporary
    // loaded som and eom, just written as single bytes, as one word (a store-forwarding stall
    // perf put at a third of this function's samples).
    const standard_header_of standard{m, msgs.segment_at(m, e.offset)};
    const ses::segment& seg = standard.seg;
    const auto payload = std::span<const std::uint8_t>(m.data + e.offset, e.length);
    // The common packet (a request, no credit) is written from its two headers; the others go
    // through the header variants, in a function of their own: the 300-byte uet_packet_spec
    // they need was zeroed for every packet while it was declared here (~3% of the sender).
    wire::pds_rud_rod_request h = request_pds_header(p, e, retx, ar);
    if (m.fields.response || p.credit_cc)
        return build_general_request(to, p, e, h, m, seg, payload, buf);
    h.next_hdr = wire::pds_next_hdr::request_std;
    if (ses::has_extensions(m.fields))
        return build_request_frame(to, e.entropy, h, ses::request_header(m, seg), payload, buf);
    // Inside a message, on an established PDC, the next packet's headers are the last one's with
    // a few fields changed (the receiver predicts them the same way).
    const bool inside = !h.syn && !seg.som && !seg.eom;
    tx_headers_template& t = tx_template_;
    if (inside && t.pdc == p.index && t.message == e.message && t.length == seg.length)
        return build_next_request_frame(to, e.entropy, h, seg.offset, payload, buf);
    const std::size_t len = build_request_frame(to, e.entropy, h, standard, payload, buf);
    if (inside && len != 0) {
        std::memcpy(t.headers.bytes.data(), buf.data() + wire::udp_header_template::size,
                    t.headers.bytes.size());
        t.pdc = p.index;
        t.message = e.message;
        t.length = seg.length;
    }
    return len;
}

std::size_t frame_builder::build_close(const peer_state& to, pds::pdc& p, tx_entry& e, bool retx,
                                       std::span<std::uint8_t> buf) {
    wire::pds_ctrl c;
    c.ctrl_type = wire::ctrl_type::close;
    c.is_rod = p.ordered;
    c.retx = retx;
    c.ar = true;
    c.psn = e.psn;
    c.spdcid = p.local_id;
    c.dpdcid = p.remote_id;
    wire::uet_packet_spec spec;
    spec.pds = c;
    return build_frame(to, e.entropy, false, spec, buf);
}

// A response, or a request on a credit PDC: the SES header in the form packet_header() picks.
std::size_t frame_builder::build_general_request(const peer_state& to, pds::pdc& p,
                                                 const tx_entry& e, wire::pds_rud_rod_request h,
                                                 const ses::tx_message& m, const ses::segment& seg,
                                                 std::span<const std::uint8_t> payload,
                                                 std::span<std::uint8_t> buf) {
    wire::uet_packet_spec spec;
    spec.ses = ses::packet_header(m, seg);
    h.next_hdr = wire::next_hdr_for(*spec.ses);
    if (p.credit_cc) {
        // RUD_CC / ROD_CC: the same fields plus the cumulative credit this sender wants for
        // what it still has to send, this packet included (its credit is not spent yet): the
        // bytes queued for p and those it has to resend (the engine's credit_backlog).
        wire::pds_rud_rod_cc_request c;
        c.type = p.ordered ? wire::pds_type::rod_cc : wire::pds_type::rud_cc;
        c.next_hdr = h.next_hdr;
        c.retx = h.retx;
        c.ar = h.ar;
        c.syn = h.syn;
        c.psn = h.psn;
        c.spdcid = h.spdcid;
        c.dpdcid = h.dpdcid;
        c.psn_offset = h.psn_offset;
        c.credit_target = p.cc->credit_target(to.queued_bytes[p.slot] + p.retx_bytes + e.length) &
                          cc::credit::field_mask;
        p.credit_target_sent = c.credit_target;
        spec.pds = c;
    } else {
        spec.pds = h;
    }
    spec.payload = payload;
    return build_frame(to, e.entropy, true, spec, buf);
}

// ---- RUDI: no PDC; every request packet has its own id, timer and response ----

std::size_t frame_builder::build_rudi_request(const peer_table& peers, const message_pool& msgs,
                                              rng& random, pds::rudi_packet& r, bool retx,
                                              std::span<std::uint8_t> buf) {
    const ses::tx_message& m = msgs[r.message];
    const wire::ses_header ses = ses::packet_header(m, msgs.segment_at(m, r.offset));
    wire::pds_rudi h;
    h.type = wire::pds_type::rudi_req;
    h.next_hdr = wire::next_hdr_for(ses);
    h.retx = retx;
    h.pkt_id = r.pkt_id;
    wire::uet_packet_spec spec;
    spec.pds = h;
    spec.ses = ses;
    spec.payload = std::span<const std::uint8_t>(m.data + r.offset, r.length);
    // No PDC, so no path state: spray each packet.
    const auto entropy = static_cast<std::uint16_t>(random.next_u64() | 0xc000);
    return build_frame(peers.at(m.peer), entropy, true, spec, buf);
}

}  // namespace uet
