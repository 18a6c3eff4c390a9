// The endpoint behind a FEP a UET packet is for (uet_fep.hpp).
#include "wire/uet_fep.hpp"

#include <variant>

#include "wire/bytes.hpp"

namespace uet::wire {

namespace {

constexpr std::uint8_t syn_flag = 0x04;  // requests and CTRL: in the prologue's second byte
constexpr std::uint8_t nack_nt_flag = 0x08;
constexpr std::size_t dpdcid_at = 10, pdc_header_min = 12;

fep_route to(std::uint16_t pid) noexcept {
    return {true, pid, fep_route_drop::truncated};
}
fep_route refused(fep_route_drop why) noexcept {
    return {false, 0, why};
}

// A decoded packet that names no DPDCID: the SES request's target, a response's message id, a
// RUDI response's (or NACK's) pkt_id.
fep_route route_decoded(const uet_packet& p) noexcept {
    if (const auto* r = std::get_if<pds_rudi>(&p.pds); r && r->type == pds_type::rudi_resp)
        return to(pid_of_pkt_id(r->pkt_id));
    if (const auto* n = std::get_if<pds_nack>(&p.pds)) return to(pid_of_pkt_id(n->nack_psn));
    if (const auto* n = std::get_if<pds_nack_ccx>(&p.pds)) return to(pid_of_pkt_id(n->nack_psn));
    if (!p.ses) return refused(fep_route_drop::unnamed);
    return std::visit(
        [](const auto& h) -> fep_route {
            using H = std::decay_t<decltype(h)>;
            if constexpr (std::is_same_v<H, ses_small_response_with_data>)
                return refused(fep_route_drop::unnamed);
            else if constexpr (std::is_same_v<H, ses_response> ||
                               std::is_same_v<H, ses_response_with_data>)
                return to(pid_of_id(h.message_id));
            else
                return to(h.pid_on_fep);
        },
        *p.ses);
}

}  // namespace

const char* to_string(fep_route_drop d) noexcept {
    switch (d) {
        case fep_route_drop::truncated:
            return "truncated";
        case fep_route_drop::undecodable:
            return "undecodable";
        case fep_route_drop::unnamed:
            return "unnamed";
        case fep_route_drop::count_:
            break;
    }
    return "unknown";
}

fep_route route_to_pid(std::span<const std::uint8_t> uet, uet_packet& scratch) noexcept {
    if (uet.size() < 2) return refused(fep_route_drop::truncated);
    const auto type = static_cast<pds_type>(uet[0] >> 3);
    const std::uint8_t flags = uet[1];
    switch (type) {
        case pds_type::rud:
        case pds_type::rod:
        case pds_type::rud_cc:
        case pds_type::rod_cc:
        case pds_type::ctrl:
            if (flags & syn_flag) break;  // no DPDCID yet
            [[fallthrough]];
        case pds_type::ack:
        case pds_type::ack_cc:
        case pds_type::ack_ccx:
            if (uet.size() < pdc_header_min) return refused(fep_route_drop::truncated);
            return to(pid_of_id(load_be16(uet.data() + dpdcid_at)));
        case pds_type::nack:
        case pds_type::nack_ccx:
            if (!(flags & nack_nt_flag)) {
                if (uet.size() < pdc_header_min) return refused(fep_route_drop::truncated);
                return to(pid_of_id(load_be16(uet.data() + dpdcid_at)));
            }
            break;
        case pds_type::tss:
            return refused(fep_route_drop::unnamed);
        default:
            break;
    }
    if (decode_uet(uet, false, scratch) != reject_reason::none)
        return refused(fep_route_drop::undecodable);
    return route_decoded(scratch);
}

}  // namespace uet::wire
