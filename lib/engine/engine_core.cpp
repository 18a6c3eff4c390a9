// The engine's configuration and the parameters drawn from it.
#include "engine/engine_core.hpp"

#include <algorithm>

#include "wire/uet_fep.hpp"

namespace uet {

namespace {

engine_config sanitized(engine_config c) {
    // With PIDonFEPs in the top bits of PDC ids, a slot and at least one generation bit below.
    c.max_pdcs = std::clamp<std::uint32_t>(c.max_pdcs, 1, c.fep_pids ? 2047 : 4095);
    c.pid_on_fep = c.fep_pids ? c.pid_on_fep & (wire::max_fep_pids - 1) : 0;
    c.mpr = std::clamp<std::uint32_t>(c.mpr, 1, 4095);
    c.mtu_payload = std::clamp<std::uint32_t>(c.mtu_payload, 64, 16383);
    c.max_message_size = std::max(c.max_message_size, c.mtu_payload);
    c.max_peers = std::clamp<std::uint32_t>(c.max_peers, 1, 1u << 24);
    c.max_pending_messages = std::max<std::size_t>(c.max_pending_messages, 1);
    c.max_rx_messages = std::max<std::size_t>(c.max_rx_messages, 1);
    c.rudi_max_in_flight = std::clamp<std::uint32_t>(c.rudi_max_in_flight, 1, 65535);
    c.control_queue = std::max<std::size_t>(c.control_queue, 16);
    c.tx_burst = std::max<std::size_t>(c.tx_burst, 1);
    c.parallel_pdcs = std::clamp<std::uint32_t>(c.parallel_pdcs, 1, max_parallel_pdcs);
    c.ack_every_packets = std::max<std::uint32_t>(c.ack_every_packets, 1);
    c.path_ids = std::min(c.path_ids, max_path_ids);
    if (!(c.link_gbps > 0)) c.link_gbps = 100;
    c.base_rtt_ns = std::max<std::uint64_t>(c.base_rtt_ns, 1);
    if (c.window_bytes == 0) c.window_bytes = std::uint64_t{c.mpr} * c.mtu_payload;
    return c;
}

}  // namespace

engine_core::engine_core(const engine_config& c)
    : cfg(sanitized(c)), rng(cfg.seed), timers(cfg.timer_tick_ns) {
    if (cfg.deliver_to != nullptr) {
        places_writes = cfg.deliver_to->places_writes();
        takes_single_packet_messages = cfg.deliver_to->takes_single_packet_messages();
    }
    params.mpr = cfg.mpr;
    params.ooo_threshold = cfg.ooo_threshold;
    params.max_retransmits = cfg.max_retransmits;
    params.rto_ns = std::max<std::uint64_t>(cfg.rto_ns, 1);
    params.rto_max_ns = std::max(cfg.rto_max_ns, params.rto_ns);
    params.window_bytes = cfg.window_bytes;
    params.rto_min_ns = std::min(std::max<std::uint64_t>(cfg.rto_min_ns, 1), params.rto_max_ns);
    nscc_params =
        cc::nscc_params::from_link(cfg.link_gbps, cfg.base_rtt_ns, cfg.mtu_payload, cfg.trimming);
    rccc_params = cc::rccc_params::from_link(cfg.link_gbps, cfg.base_rtt_ns, cfg.mtu_payload);
    params.cc.algo = cfg.cc;
    params.cc.nscc = &nscc_params;
    params.cc.rccc = &rccc_params;
    lb_ctx.rng = &rng;
    lb_ctx.params.path_bits = cfg.lb_path_bits;
    lb_ctx.params.reps_freeze_ns = cfg.reps_freeze_ns;
    params.lb = cfg.lb;
    params.lb_ctx = &lb_ctx;
}

}  // namespace uet
