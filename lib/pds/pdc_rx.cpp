// Target side of a PDC: classifying arriving PSNs for RUD (any order) and ROD (in order only).
#include "pds/pdc.hpp"

namespace uet::pds {

void pdc::open_target(std::span<std::uint64_t> ring, psn_t start, bool rod, std::uint32_t ack_bytes,
                      std::uint32_t ack_packets) noexcept {
    role = pdc_role::target;
    state = pdc_state::open;
    ordered = rod;
    start_psn = start;
    rx.reset(ring, start);
    acks.configure(ack_bytes, ack_packets);
    ce_since_ack = false;
    rod_nack_armed = true;
    credit_rx = cc::rccc_receiver(index);
    credit_mode = false;
    answers_owed = answers_as_messages = 0;
    close_heard = false;
    validated = false;
    counters = {};
}

pdc::rx_verdict pdc::classify(psn_t psn) const noexcept {
    switch (rx.classify(psn)) {
        case rx_window::verdict::duplicate:
            return rx_verdict::duplicate;
        case rx_window::verdict::beyond_window:
            return ordered ? rx_verdict::out_of_order : rx_verdict::beyond_window;
        case rx_window::verdict::fresh:
            break;
    }
    if (ordered && psn != rx.expected()) return rx_verdict::out_of_order;
    return rx_verdict::accept;
}

bool pdc::should_nack_out_of_order() noexcept {
    // One NACK per expected PSN: the sender rewinds once; if that NACK is lost, its timer does.
    if (!rod_nack_armed && rod_nacked_epsn == rx.expected()) return false;
    rod_nack_armed = false;
    rod_nacked_epsn = rx.expected();
    return true;
}

}  // namespace uet::pds
