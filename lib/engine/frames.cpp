// Bytes on the wire: Ethernet/IPv4/UDP around a UET header stack, and the control-frame ring.
#include <cstring>
#include <type_traits>

#include "engine/engine_impl.hpp"
#include "wire/bytes.hpp"

namespace uet {

template <class WriteHeaders>
std::size_t engine_impl::build_frame_with(std::uint32_t peer, std::uint16_t entropy, bool data,
                                          std::span<const std::uint8_t> payload,
                                          std::span<std::uint8_t> out,
                                          WriteHeaders&& write_headers) {
    constexpr std::size_t header = wire::udp_header_template::size;
    const peer_state& to = peers_.at(peer);
    const std::uint16_t ip_id = ip_id_++;
    if (out.size() <= header) return 0;
    const auto l4 = out.subspan(header);
    const std::size_t uet_header = write_headers(l4);
    if (uet_header == 0 || l4.size() - uet_header < payload.size()) return 0;
    const std::size_t udp_payload = uet_header + payload.size();
    if (udp_payload > wire::udp_header_template::max_udp_payload) return 0;
    std::uint32_t sum = 0;
    bool referenced = false;
    if (data && by_reference_ && may_reference(payload.size())) {
        const std::uint32_t region = core_.cfg.zero_copy->find(payload.data(), payload.size());
        if (region != no_payload_region) {
            // The payload stays where it is; summing it is its only touch by the engine (and
            // without the UDP checksum, the engine never touches it).
            if (core_.cfg.udp_checksum) sum = wire::checksum_partial(payload);
            referenced_ = payload;
            referenced_region_ = region;
            referenced = true;
        }
    }
    // Otherwise the payload's only copy on the way out (from the sender's memory into the
    // frame) also sums it, so the UDP checksum reads just the headers.
    if (!referenced && core_.cfg.udp_checksum)
        sum = wire::checksum_copy(l4.data() + uet_header, payload);
    else if (!referenced && !payload.empty())
        std::memcpy(l4.data() + uet_header, payload.data(), payload.size());
    // Data is ECN-capable (the CC will read the echoes); ACKs and NACKs ride a priority class.
    (data ? to.data_header : to.control_header).write(out.data(), ip_id, entropy, udp_payload);
    if (core_.cfg.udp_checksum) {
        const auto datagram = out.subspan(header - wire::udp_header::wire_size,
                                          wire::udp_header::wire_size + udp_payload);
        wire::store_be16(&datagram[6], wire::udp_checksum_presummed(
                                           core_.cfg.ip, to.ip, datagram,
                                           wire::udp_header::wire_size + uet_header, sum));
    }
    return header + udp_payload - (referenced ? payload.size() : 0);
}

std::size_t engine_impl::build_frame(std::uint32_t peer, std::uint16_t entropy, bool data,
                                     const wire::uet_packet_spec& spec,
                                     std::span<std::uint8_t> out) {
    return build_frame_with(
        peer, entropy, data, spec.payload, out,
        [&](std::span<std::uint8_t> l4) { return wire::encode_uet_headers(spec, l4); });
}

std::size_t engine_impl::build_next_request_frame(std::uint32_t peer, std::uint16_t entropy,
                                                  const wire::pds_rud_rod_request& pds,
                                                  std::uint32_t message_offset,
                                                  std::span<const std::uint8_t> payload,
                                                  std::span<std::uint8_t> out) {
    return build_frame_with(peer, entropy, true, payload, out, [&](std::span<std::uint8_t> l4) {
        constexpr std::size_t size = wire::request_headers_template::size;
        if (l4.size() < size) return std::size_t{0};
        wire::write_next_request_headers(l4.data(), tx_template_.headers, pds, message_offset);
        return size;
    });
}

template <class SesHeader>
std::size_t engine_impl::build_request_frame(std::uint32_t peer, std::uint16_t entropy,
                                             const wire::pds_rud_rod_request& pds,
                                             const SesHeader& ses,
                                             std::span<const std::uint8_t> payload,
                                             std::span<std::uint8_t> out) {
    return build_frame_with(peer, entropy, true, payload, out, [&](std::span<std::uint8_t> l4) {
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

template std::size_t engine_impl::build_request_frame(std::uint32_t, std::uint16_t,
                                                      const wire::pds_rud_rod_request&,
                                                      const wire::ses_standard_request&,
                                                      std::span<const std::uint8_t>,
                                                      std::span<std::uint8_t>);
template std::size_t engine_impl::build_request_frame(std::uint32_t, std::uint16_t,
                                                      const wire::pds_rud_rod_request&,
                                                      const standard_header_of&,
                                                      std::span<const std::uint8_t>,
                                                      std::span<std::uint8_t>);

}  // namespace uet
