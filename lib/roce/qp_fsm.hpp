// The RC queue pair state machine of ibv_modify_qp: which transitions exist and which attributes
// each one requires and allows, with the values checked. A modify that breaks a rule changes
// nothing and says which attribute was wrong.
#pragma once

#include <cstdint>

#include "roce/verbs.hpp"

namespace uet::roce {

enum class fsm_error : std::uint8_t {
    none,
    bad_transition,         // no such transition from the current state
    missing_attribute,      // a required attribute is not in the mask (`bits` says which)
    unsupported_attribute,  // an attribute the transition does not take (`bits`)
    bad_value,              // an attribute's value is out of range (`bits` names it)
    cur_state_mismatch,     // IBV_QP_CUR_STATE given and not the QP's state
};
const char* to_string(fsm_error e) noexcept;

struct fsm_result {
    fsm_error error = fsm_error::none;
    std::uint32_t bits = 0;  // the attribute mask bits the error is about
    explicit operator bool() const noexcept { return error == fsm_error::none; }
};

// The required and optional attribute masks of a transition of an RC QP, or false when the
// transition does not exist. `attr_state` is implied by every transition and not listed.
bool transition_masks(qp_state from, qp_state to, std::uint32_t& required,
                      std::uint32_t& optional) noexcept;

// Checks `mask` and the values it names against the transition from `current.state` to
// `wanted.state` (or to the same state without attr_state), and on success copies the named
// attributes into `current`. `current` is unchanged on failure.
fsm_result modify(qp_attr& current, const qp_attr& wanted, std::uint32_t mask) noexcept;

// Whether the requester may send (RTS, SQD drains) and the responder may accept (RTR or later).
constexpr bool requester_ready(qp_state s) noexcept {
    return s == qp_state::rts || s == qp_state::sqd;
}
constexpr bool responder_ready(qp_state s) noexcept {
    return s == qp_state::rtr || s == qp_state::rts || s == qp_state::sqd || s == qp_state::sqe;
}

// RESET -> INIT -> RTR -> RTS with `a` (its state fields are set here), each step through
// `modify(attr, mask)`: a bare QP's modify_qp, or an engine's. false at the first step refused.
template <typename Modify>
bool connect_rc(Modify&& modify, qp_attr a) {
    a.state = qp_state::init;
    if (!modify(a, attr_state | attr_pkey_index | attr_port | attr_access_flags)) return false;
    a.state = qp_state::rtr;
    if (!modify(a, attr_state | attr_av | attr_path_mtu | attr_dest_qpn | attr_rq_psn |
                       attr_max_dest_rd_atomic | attr_min_rnr_timer))
        return false;
    a.state = qp_state::rts;
    return static_cast<bool>(modify(a, attr_state | attr_sq_psn | attr_max_qp_rd_atomic |
                                           attr_retry_cnt | attr_rnr_retry | attr_timeout));
}

}  // namespace uet::roce
