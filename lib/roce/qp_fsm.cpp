#include "roce/qp_fsm.hpp"

#include <bit>

namespace uet::roce {

namespace {

// Alternate paths (APM), SQD's async event and Q_Keys (UD) are not implemented, so the state
// machine refuses those attributes rather than accept and ignore them.
constexpr std::uint32_t rtr_required = attr_av | attr_path_mtu | attr_dest_qpn | attr_rq_psn |
                                       attr_max_dest_rd_atomic | attr_min_rnr_timer;
constexpr std::uint32_t rts_required =
    attr_sq_psn | attr_max_qp_rd_atomic | attr_retry_cnt | attr_rnr_retry | attr_timeout;
constexpr std::uint32_t rts_optional = attr_cur_state | attr_access_flags | attr_min_rnr_timer;
constexpr std::uint32_t sqd_optional =
    attr_av | attr_access_flags | attr_min_rnr_timer | attr_pkey_index | attr_port | attr_timeout |
    attr_retry_cnt | attr_rnr_retry | attr_max_qp_rd_atomic | attr_max_dest_rd_atomic;

constexpr std::uint32_t lowest_bit(std::uint32_t bits) noexcept {
    return bits & (~bits + 1);
}

constexpr bool valid_mtu(path_mtu m) noexcept {
    const auto v = static_cast<std::uint16_t>(m);
    return v >= 256 && v <= 4096 && std::has_single_bit(v);
}

// The first attribute named in `mask` whose value is out of range, or 0.
std::uint32_t bad_value(const qp_attr& a, std::uint32_t mask) noexcept {
    const auto check = [mask](std::uint32_t bit, bool ok) { return (mask & bit) && !ok; };
    constexpr std::uint32_t known_access =
        access_local_write | access_remote_write | access_remote_read | access_remote_atomic;
    if (check(attr_access_flags, (a.access & ~known_access) == 0)) return attr_access_flags;
    if (check(attr_pkey_index, a.pkey_index == 0)) return attr_pkey_index;
    if (check(attr_port, a.port == 1)) return attr_port;
    if (check(attr_av, a.peer_ip != 0)) return attr_av;
    if (check(attr_path_mtu, valid_mtu(a.mtu))) return attr_path_mtu;
    if (check(attr_timeout, a.timeout <= 31)) return attr_timeout;
    if (check(attr_retry_cnt, a.retry_cnt <= 7)) return attr_retry_cnt;
    if (check(attr_rnr_retry, a.rnr_retry <= 7)) return attr_rnr_retry;
    if (check(attr_min_rnr_timer, a.min_rnr_timer <= 31)) return attr_min_rnr_timer;
    if (check(attr_rq_psn, a.rq_psn <= 0xffffffu)) return attr_rq_psn;
    if (check(attr_sq_psn, a.sq_psn <= 0xffffffu)) return attr_sq_psn;
    // QPs 0 and 1 are the management QPs; an RC peer is 2 or above.
    if (check(attr_dest_qpn, a.dest_qpn >= 2 && a.dest_qpn <= 0xffffffu)) return attr_dest_qpn;
    if (check(attr_max_qp_rd_atomic, a.max_rd_atomic <= max_rd_atomic_limit))
        return attr_max_qp_rd_atomic;
    if (check(attr_max_dest_rd_atomic, a.max_dest_rd_atomic <= max_rd_atomic_limit))
        return attr_max_dest_rd_atomic;
    return 0;
}

void apply(qp_attr& to, const qp_attr& from, std::uint32_t mask) noexcept {
    if (mask & attr_state) to.state = from.state;
    if (mask & attr_access_flags) to.access = from.access;
    if (mask & attr_pkey_index) to.pkey_index = from.pkey_index;
    if (mask & attr_port) to.port = from.port;
    if (mask & attr_av) {
        to.peer_ip = from.peer_ip;
        to.peer_mac = from.peer_mac;
        to.udp_sport = from.udp_sport;
    }
    if (mask & attr_path_mtu) to.mtu = from.mtu;
    if (mask & attr_timeout) to.timeout = from.timeout;
    if (mask & attr_retry_cnt) to.retry_cnt = from.retry_cnt;
    if (mask & attr_rnr_retry) to.rnr_retry = from.rnr_retry;
    if (mask & attr_min_rnr_timer) to.min_rnr_timer = from.min_rnr_timer;
    if (mask & attr_rq_psn) to.rq_psn = from.rq_psn;
    if (mask & attr_sq_psn) to.sq_psn = from.sq_psn;
    if (mask & attr_dest_qpn) to.dest_qpn = from.dest_qpn;
    if (mask & attr_max_qp_rd_atomic) to.max_rd_atomic = from.max_rd_atomic;
    if (mask & attr_max_dest_rd_atomic) to.max_dest_rd_atomic = from.max_dest_rd_atomic;
}

}  // namespace

const char* to_string(fsm_error e) noexcept {
    switch (e) {
        case fsm_error::none:
            return "ok";
        case fsm_error::bad_transition:
            return "no such state transition";
        case fsm_error::missing_attribute:
            return "required attribute missing from the mask";
        case fsm_error::unsupported_attribute:
            return "attribute not allowed in this transition";
        case fsm_error::bad_value:
            return "attribute value out of range";
        case fsm_error::cur_state_mismatch:
            return "IBV_QP_CUR_STATE is not the QP's state";
    }
    return "unknown";
}

bool transition_masks(qp_state from, qp_state to, std::uint32_t& required,
                      std::uint32_t& optional) noexcept {
    required = 0;
    optional = 0;
    if (to == qp_state::reset || to == qp_state::err) return true;
    switch (from) {
        case qp_state::reset:
            if (to != qp_state::init) return false;
            required = attr_pkey_index | attr_port | attr_access_flags;
            return true;
        case qp_state::init:
            if (to == qp_state::init) {
                optional = attr_pkey_index | attr_port | attr_access_flags;
                return true;
            }
            if (to != qp_state::rtr) return false;
            required = rtr_required;
            optional = attr_access_flags | attr_pkey_index;
            return true;
        case qp_state::rtr:
            if (to != qp_state::rts) return false;
            required = rts_required;
            optional = rts_optional;
            return true;
        case qp_state::rts:
            if (to == qp_state::rts) {
                optional = rts_optional;
                return true;
            }
            return to == qp_state::sqd;
        case qp_state::sqd:
            if (to == qp_state::rts) {
                optional = rts_optional;
                return true;
            }
            if (to != qp_state::sqd) return false;
            optional = sqd_optional;
            return true;
        case qp_state::sqe:
            if (to != qp_state::rts) return false;
            optional = attr_cur_state | attr_access_flags;
            return true;
        case qp_state::err:
            return false;
    }
    return false;
}

fsm_result modify(qp_attr& current, const qp_attr& wanted, std::uint32_t mask) noexcept {
    const qp_state to = (mask & attr_state) ? wanted.state : current.state;
    std::uint32_t required = 0, optional = 0;
    if (!transition_masks(current.state, to, required, optional))
        return {fsm_error::bad_transition, attr_state};
    const std::uint32_t given = mask & ~attr_state;
    if (const std::uint32_t missing = required & ~given)
        return {fsm_error::missing_attribute, lowest_bit(missing)};
    if (const std::uint32_t extra = given & ~(required | optional))
        return {fsm_error::unsupported_attribute, lowest_bit(extra)};
    if ((given & attr_cur_state) && wanted.cur_state != current.state)
        return {fsm_error::cur_state_mismatch, attr_cur_state};
    if (const std::uint32_t bit = bad_value(wanted, given)) return {fsm_error::bad_value, bit};
    apply(current, wanted, mask);
    return {};
}

}  // namespace uet::roce
