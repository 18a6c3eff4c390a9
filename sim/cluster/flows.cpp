#include "cluster/flows.hpp"

#include <algorithm>
#include <stdexcept>

namespace uet::sim {

std::uint32_t flow_table::add(const flow_spec& spec, std::uint32_t hosts, bool dependencies) {
    if (spec.src >= hosts || spec.dst >= hosts) throw std::invalid_argument("flow: no such host");
    if (spec.src == spec.dst) throw std::invalid_argument("flow: source is its destination");
    if (spec.message_bytes == 0 || spec.outstanding == 0 || (spec.bytes == 0 && spec.messages == 0))
        throw std::invalid_argument("flow: no payload");
    flow_state f{spec};
    if (spec.bytes != 0) {
        const std::uint64_t n = (spec.bytes + spec.message_bytes - 1) / spec.message_bytes;
        if (n > 0xffffffffu) throw std::invalid_argument("flow: too many messages");
        f.spec.messages = static_cast<std::uint32_t>(n);
    }
    const auto i = static_cast<std::uint32_t>(flows_.size());
    if (spec.after != flow_spec::no_flow) {
        if (spec.after >= i) throw std::invalid_argument("flow: depends on a later flow");
        if (!dependencies) throw std::invalid_argument("flow: dependencies need placed_writes");
        flow_state& first = flows_[spec.after];
        f.next_dependent = first.first_dependent;
        first.first_dependent = i;
    }
    flows_.push_back(f);
    // Waiting for its dependency: arrived() schedules it.
    if (spec.after == flow_spec::no_flow || flows_[spec.after].received()) schedule_start(i);
    return i;
}

void flow_table::schedule_start(std::uint32_t i) {
    // Descending by (start, index): the new flow goes after every one that starts later or at
    // the same time, and so before none it ties with.
    const auto later = [&](std::uint32_t a, std::uint32_t b) {
        const std::uint64_t sa = flows_[a].spec.start_ns, sb = flows_[b].spec.start_ns;
        return sa != sb ? sa > sb : a > b;
    };
    start_order_.insert(std::upper_bound(start_order_.begin(), start_order_.end(), i, later), i);
}

std::uint64_t flow_table::next_start() const {
    return start_order_.empty() ? never : flows_[start_order_.back()].spec.start_ns;
}

std::uint32_t flow_table::start_next(std::uint64_t now) {
    if (start_order_.empty() || flows_[start_order_.back()].spec.start_ns > now)
        return flow_spec::no_flow;
    const std::uint32_t i = start_order_.back();
    start_order_.pop_back();
    flows_[i].started = true;
    flows_[i].first_post_ns = now;
    return i;
}

void flow_table::complete(std::uint32_t i, std::uint32_t m, bool ok, std::uint64_t now) {
    flow_state& f = flows_[i];
    if (ok) {
        ++f.completed;
        f.completed_bytes += f.message_size(m);
    } else {
        ++f.failed;
    }
    if (f.finished()) {
        f.done_ns = now;
        ++finished_;
    }
}

void flow_table::arrived(std::uint32_t i, std::uint64_t bytes, std::uint64_t now) {
    flow_state& f = flows_[i];
    if (f.received()) return;
    f.received_bytes += bytes;
    if (!f.received()) return;
    f.received_ns = now;
    for (std::uint32_t d = f.first_dependent; d != flow_spec::no_flow;
         d = flows_[d].next_dependent) {
        flows_[d].spec.start_ns = std::max(flows_[d].spec.start_ns, now);
        schedule_start(d);
    }
}

}  // namespace uet::sim
