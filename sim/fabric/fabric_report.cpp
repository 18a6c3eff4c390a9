// Printable names and summaries: kept apart from the event core, which never formats text.
#include <iomanip>
#include <sstream>

#include "fabric/fabric.hpp"

namespace uet::netmodel {

std::string fabric::port_name(std::uint32_t port) const {
    const std::uint32_t fabric_base = 2 * hosts_;
    // Two tiers: leaves and spines; a fat tree: edges, aggregation switches (numbered over every
    // pod) and cores.
    const bool three = topo_.pods != 0;
    const char* leaf = three ? "edge" : "leaf";
    const auto spine = [&](std::uint32_t leaf_index, std::uint32_t s) {
        return three ? "agg" + std::to_string(pod_of_leaf(leaf_index) * topo_.spines + s)
                     : "spine" + std::to_string(s);
    };
    std::ostringstream out;
    switch (kind(port)) {
        case port_kind::nic:
            out << 'h' << port << "->" << leaf << leaf_of(port);
            break;
        case port_kind::to_host:
            out << leaf << leaf_of(port - hosts_) << "->h" << port - hosts_;
            break;
        case port_kind::up: {
            const std::uint32_t l = (port - fabric_base) / topo_.spines;
            out << leaf << l << "->" << spine(l, (port - fabric_base) % topo_.spines);
            break;
        }
        case port_kind::down: {
            const std::uint32_t l = (port - fabric_base - links_) % topo_.leaves;
            out << spine(l, (port - fabric_base - links_) / topo_.leaves) << "->" << leaf << l;
            break;
        }
        case port_kind::agg_up: {
            const std::uint32_t i = port - agg_up_port(0, 0, 0);
            const std::uint32_t agg = i / topo_.cores_per_agg;
            out << "agg" << agg << "->core"
                << (agg % topo_.spines) * topo_.cores_per_agg + i % topo_.cores_per_agg;
            break;
        }
        case port_kind::core_down: {
            const std::uint32_t i = port - core_down_port(0, 0, 0);
            const std::uint32_t core = i / topo_.pods, pod = i % topo_.pods;
            out << "core" << core << "->agg" << pod * topo_.spines + core / topo_.cores_per_agg;
            break;
        }
    }
    return out.str();
}

namespace {

void print_port(std::ostream& out, const std::string& name, const port_stats& s) {
    out << "  " << std::left << std::setw(16) << name << std::right << " tx " << s.tx_packets
        << " pkts " << s.tx_bytes << " B, drop " << s.dropped << ", trim " << s.trimmed << ", ce "
        << s.ecn_marked << ", blackhole " << s.blackholed << ", peak q " << s.peak_queue_bytes
        << " B (prio " << s.peak_priority_bytes << "), mean q " << std::fixed
        << std::setprecision(0) << s.mean_queue_bytes << " B\n";
}

}  // namespace

std::string fabric::summary(bool per_port) const {
    std::ostringstream out;
    const fabric_stats& f = stats_;
    out << "fabric " << topo_.leaves << (topo_.pods ? " edges x " : " leaves x ")
        << topo_.hosts_per_leaf << " hosts, " << topo_.spines
        << (topo_.pods ? " aggregation switches a pod, " + std::to_string(topo_.pods) + " pods, " +
                             std::to_string(topo_.spines * topo_.cores_per_agg) + " cores"
                       : std::string(" spines"))
        << ", at " << now() << " ns\n"
        << "  sent " << f.sent << ", delivered " << f.delivered << ", in flight " << used_
        << ", hops " << f.hops << "\n"
        << "  dropped " << f.dropped << ", trimmed " << f.trimmed << ", ecn marked " << f.ecn_marked
        << ", blackholed " << f.blackholed << ", unroutable " << f.unroutable << ", oversized "
        << f.oversized << ", pool exhausted " << f.pool_exhausted << "\n";
    std::uint64_t total = 0;
    for (std::uint32_t s = 0; s < topo_.spines; ++s)
        total += spine_bytes(s);
    for (std::uint32_t s = 0; s < topo_.spines; ++s) {
        const std::uint64_t b = spine_bytes(s);
        out << "  spine" << s << ": " << spine_packets(s) << " pkts " << b << " B (" << std::fixed
            << std::setprecision(1)
            << (total ? 100.0 * static_cast<double>(b) / static_cast<double>(total) : 0.0)
            << "%)\n";
    }
    if (!per_port) return out.str();
    for (std::uint32_t p = 0; p < port_count(); ++p) {
        const port_stats s = port_counters(p);
        if (s.tx_packets || s.dropped || s.blackholed || s.queue_bytes || s.priority_bytes)
            print_port(out, port_name(p), s);
    }
    return out.str();
}

}  // namespace uet::netmodel
