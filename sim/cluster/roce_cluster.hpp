// uet-sim's flows (flows.hpp) over RoCEv2 RC engines, one per host, on the fabric model in
// virtual time (roce_fabric.hpp): the RoCE counterpart of cluster.hpp, with the same interface
// for uet-sim's run loop and report.
// Each ordered host pair that has a flow gets a connection: `qps` RC queue pairs, each with the
// UDP source port its QP number gives (its ECMP path), shared by the pair's flows. A message is
// one RDMA WRITE with immediate on the connection's QP, or (qps > 1) the subchunks lib/qp_sched
// splits it into, one per QP it picks, each scheduler hearing its subchunks' RTT from post to
// completion. Every WRITE lands in one scratch buffer the receiver shares (its payload is read
// by nobody); its immediate names the work request, so the receiver's cluster knows when a flow
// has arrived in full and starts the flows that wait for it (a ring's next step).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "cluster/cluster.hpp"
#include "cluster/flows.hpp"
#include "cluster/roce_fabric.hpp"
#include "qp_sched/qp_sched.hpp"

namespace uet::sim {

struct roce_cluster_config {
    // Every host's engine: its address is the fabric's and its seed engine.seed x 1000 + host.
    roce::engine_config engine;
    roce_fabric_options fabric;
    std::uint32_t qps = 1;   // RC QPs per connection
    qp_sched::params sched;  // qps > 1: how messages are split over them
    double link_gbps = 100;  // the scheduler's line rate and minimum latency
    std::uint64_t base_rtt_ns = 0;
};

class roce_cluster final : private roce::delivery_target {
  public:
    static constexpr std::uint64_t never = ~std::uint64_t{0};

    roce_cluster(const netmodel::topology& t, const roce_cluster_config& config);
    roce_cluster(const roce_cluster&) = delete;
    roce_cluster& operator=(const roce_cluster&) = delete;

    netmodel::fabric& net() { return fab_.net(); }
    const netmodel::fabric& net() const { return fab_.net(); }
    roce_fabric& hosts() { return fab_; }
    std::uint64_t now() const { return fab_.now(); }
    std::size_t max_frame() const { return fab_.max_frame(); }
    std::uint64_t steps() const { return steps_; }

    // Throws std::invalid_argument as cluster::add_flow does (flow_spec::mode is not used), and
    // std::runtime_error when an engine has no QP left for a new connection.
    std::size_t add_flow(const flow_spec& f);
    const std::vector<flow_state>& flows() const { return flows_.flows(); }
    bool all_finished() const { return flows_.all_finished(); }
    std::size_t finished_flows() const { return flows_.finished(); }
    // The QPs' counters summed over both ends of every connection (retransmits: packets sent
    // again, by any cause).
    engine_totals totals() const;
    // The scheduler of connection c (qps > 1), for its weights.
    std::size_t connection_count() const { return conns_.size(); }
    const qp_sched::scheduler_state* scheduler(std::size_t c) const {
        return conns_[c].sched.get();
    }

    // Steps until every flow is done (true) or the next event is beyond limit (false).
    bool run_until_done(std::uint64_t limit);
    bool step(std::uint64_t limit);

  private:
    struct connection {
        std::uint32_t src = 0, dst = 0;
        std::vector<roce::qpn_t> qpn, peer_qpn;
        std::unique_ptr<qp_sched::scheduler_state> sched;
    };
    // A message posted and not complete: how many of its work requests are out.
    struct message {
        std::uint32_t flow = 0, index = 0, left = 0;
        bool ok = true;
    };
    // A work request posted: its message, QP, size and post time. Its number is the WRITE's
    // immediate and its wr_id: slot | generation << slot_bits, so that a late arrival never
    // counts for the slot's next owner.
    struct work_request {
        std::uint32_t message = 0, connection = 0, qp = 0, generation = 0;
        std::uint64_t bytes = 0, post_ns = 0;
        bool live = false, arrived = false;
    };
    static constexpr std::uint32_t slot_bits = 20;

    void start_flows();
    void top_up(std::uint32_t i);
    void on_completion(const roce::work_completion& wc);
    void note_arrival(std::uint32_t id);
    work_request* find(std::uint64_t id);
    template <class T>
    static std::uint32_t take(std::vector<T>& slots, std::vector<std::uint32_t>& free);

    // delivery_target: every WRITE lands in sink_; nothing else is used.
    bool take_receive(roce::qp&, std::span<const std::uint8_t>, roce::recv_slot&) override {
        return false;
    }
    void receive_done(roce::qp&, std::uint64_t, std::uint32_t, bool, std::uint32_t,
                      roce::wc_status) override {}
    roce::remote_memory place_write(roce::qp&, std::uint32_t, std::uint64_t,
                                    std::uint32_t length) override {
        return {length <= sink_.size() ? sink_.data() : nullptr};
    }
    void remote_data(roce::qp&, std::uint32_t imm, std::uint32_t) override { note_arrival(imm); }
    roce::remote_memory read_source(roce::qp&, std::uint32_t, std::uint64_t,
                                    std::uint32_t) override {
        return {};
    }
    roce::atomic_outcome atomic(roce::qp&, std::uint32_t, std::uint64_t, roce::wr_opcode,
                                std::uint64_t, std::uint64_t) override {
        return {};
    }
    void on_qp_event(roce::qp&, roce::qp_event, std::uint16_t) override {}

    roce_cluster_config cfg_;
    roce_fabric fab_;
    flow_table flows_;
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> conn_of_;
    std::vector<connection> conns_;
    std::vector<std::uint32_t> conn_of_flow_;
    std::vector<message> messages_;
    std::vector<std::uint32_t> free_messages_;
    std::vector<work_request> wrs_;
    std::vector<std::uint32_t> free_wrs_;
    std::vector<std::uint8_t> data_;  // every message's payload (0x5a bytes)
    std::vector<std::uint8_t> sink_;  // where every WRITE's payload goes
    std::uint64_t steps_ = 0;
};

}  // namespace uet::sim
