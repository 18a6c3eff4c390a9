#include "pds/counters.hpp"

namespace uet::pds {

nack_slot slot_of(wire::nack_code code) noexcept {
    using wire::nack_code;
    switch (code) {
        case nack_code::trimmed:
            return nack_slot::trimmed;
        case nack_code::trimmed_lasthop:
            return nack_slot::trimmed_lasthop;
        case nack_code::no_pdc_avail:
            return nack_slot::no_pdc_avail;
        case nack_code::rod_ooo:
            return nack_slot::rod_ooo;
        case nack_code::psn_oor_window:
            return nack_slot::psn_oor_window;
        case nack_code::no_pkt_buffer:
        case nack_code::no_ses_msg_avail:
        case nack_code::no_resource:
            return nack_slot::no_resource;
        case nack_code::rcvr_infer_loss:
            return nack_slot::inferred_loss;
        default:
            return nack_slot::other;
    }
}

const char* nack_slot_name(nack_slot s) noexcept {
    switch (s) {
        case nack_slot::trimmed:
            return "trimmed";
        case nack_slot::trimmed_lasthop:
            return "trimmed_lasthop";
        case nack_slot::no_pdc_avail:
            return "no_pdc_avail";
        case nack_slot::rod_ooo:
            return "rod_ooo";
        case nack_slot::psn_oor_window:
            return "psn_oor_window";
        case nack_slot::no_resource:
            return "no_resource";
        case nack_slot::inferred_loss:
            return "inferred_loss";
        case nack_slot::other:
        case nack_slot::count_:
            break;
    }
    return "other";
}

}  // namespace uet::pds
