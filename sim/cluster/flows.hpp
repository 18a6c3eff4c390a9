// The flows a simulated cluster runs (sim/cluster's UET engines or roce_cluster's RoCE ones):
// sequences of messages with a bounded number outstanding, started at a time or once the flow
// they depend on has arrived in full, and what became of each. flow_table keeps them and their
// start order; the cluster posts, and tells it what completed and what arrived.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/engine.hpp"

namespace uet::sim {

struct flow_spec {
    std::uint32_t src = 0, dst = 0;
    std::uint32_t message_bytes = 256 * 1024;
    std::uint32_t messages = 16;
    std::uint32_t outstanding = 4;  // messages posted and not yet completed
    std::uint64_t start_ns = 0;
    delivery_mode mode = delivery_mode::rud;
    // Payload bytes of the whole flow; 0: messages x message_bytes. Otherwise the flow is
    // ceil(bytes / message_bytes) messages, all of message_bytes but the last.
    std::uint64_t bytes = 0;
    // A dependent flow (a collective's next step): it starts once flow `after` (added before
    // it) has been received in full at its destination, and not before start_ns. payload_kind
    // placed_writes only: the receiver tells the flows apart by the WRITE's memory key.
    static constexpr std::uint32_t no_flow = ~std::uint32_t{0};
    std::uint32_t after = no_flow;
};

struct flow_state {
    flow_spec spec;
    std::uint32_t posted = 0, completed = 0, failed = 0;
    std::uint64_t first_post_ns = 0, done_ns = 0;
    std::uint64_t completed_bytes = 0;
    std::uint64_t received_bytes = 0, received_ns = 0;  // at the destination (placed_writes)
    std::uint32_t first_dependent = flow_spec::no_flow, next_dependent = flow_spec::no_flow;
    bool started = false;
    bool received() const { return received_bytes >= total_bytes(); }
    bool finished() const { return completed + failed == spec.messages; }
    std::uint64_t total_bytes() const {
        return spec.bytes != 0 ? spec.bytes : std::uint64_t{spec.messages} * spec.message_bytes;
    }
    std::uint32_t message_size(std::uint32_t k) const {
        if (k + 1 < spec.messages) return spec.message_bytes;
        return static_cast<std::uint32_t>(total_bytes() -
                                          std::uint64_t{spec.messages - 1} * spec.message_bytes);
    }
    double gbps() const {
        const double ns = double(done_ns - first_post_ns);
        return ns > 0 ? double(completed_bytes) * 8.0 / ns : 0;
    }
};

// The flows of a run and the order they start in.
class flow_table {
  public:
    static constexpr std::uint64_t never = ~std::uint64_t{0};

    // Throws std::invalid_argument for a host out of range (of `hosts`), src == dst, no payload,
    // or a dependency on a flow not added yet (or when dependencies is false). Its index.
    std::uint32_t add(const flow_spec& spec, std::uint32_t hosts, bool dependencies);
    const std::vector<flow_state>& flows() const { return flows_; }
    flow_state& operator[](std::size_t i) { return flows_[i]; }
    std::size_t size() const { return flows_.size(); }
    bool all_finished() const { return finished_ == flows_.size(); }
    std::size_t finished() const { return finished_; }

    // When the next flow starts (never: none waits).
    std::uint64_t next_start() const;
    // The next flow whose start has come at `now`, marked started (flow_spec::no_flow: none).
    std::uint32_t start_next(std::uint64_t now);
    // Flow i's message m completed (ok) or failed at `now`.
    void complete(std::uint32_t i, std::uint32_t m, bool ok, std::uint64_t now);
    // `bytes` of flow i arrived at its destination at `now`; its dependents are due once all did.
    void arrived(std::uint32_t i, std::uint64_t bytes, std::uint64_t now);

  private:
    void schedule_start(std::uint32_t i);

    std::vector<flow_state> flows_;
    // Flows not started, by (start, index) from the back: the next to start is last.
    std::vector<std::uint32_t> start_order_;
    std::size_t finished_ = 0;
};

}  // namespace uet::sim
