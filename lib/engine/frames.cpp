// NACKs: built when the packet they answer arrives, into the control queue.
#include "engine/engine_impl.hpp"

namespace uet {

void engine_impl::queue_nack(const rx_context& rx, wire::nack_code code, std::uint32_t psn,
                             std::uint16_t spdcid, std::uint16_t dpdcid, bool rudi, pds::pdc* p,
                             bool retx) {
    const auto slot = control_.slot();
    if (slot.empty()) return core_.count_drop(drop_reason::control_queue_full);
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
    const std::size_t len = frames_.build_frame(peers_.at(rx.peer), rx.entropy, false, spec, slot);
    control_.commit(len);
    auto& c = p ? p->counters : core_.connectionless;
    ++c.nacks_sent[static_cast<std::size_t>(pds::slot_of(code))];
    core_.count_tx(p, len, false);
}

}  // namespace uet
