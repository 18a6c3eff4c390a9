// Real uet::engine instances, one per host, exchanging real frames through the fabric model
// (sim/fabric) in virtual time: the driver shared by the cc_lb_scenarios test and uet-sim.
// Each step jumps to the earliest of the fabric's next event, the engines' deadlines and the
// next flow start; arrivals are handed to their host's engine, and every engine whose deadline
// has come transmits into its NIC port, in host order. The engines' deadlines are kept in an
// indexed heap (refreshed only for the engines a step touched) and flow starts in a sorted list,
// so a step costs O(log hosts) plus the work it does, not O(hosts + flows).
// Flows are sequences of messages with a bounded number outstanding; the cluster records when
// each completes and how many payload bytes each receiver took from each source, per time bin.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "cluster/flows.hpp"
#include "engine/engine.hpp"
#include "fabric/event_heap.hpp"
#include "fabric/fabric.hpp"

namespace uet::sim {

// The hosts' engine counters summed.
struct engine_totals {
    std::uint64_t timeouts = 0, retransmits = 0, repaths = 0;
    std::uint64_t trimmed_received = 0, duplicates = 0;
    std::uint64_t go_back_rounds = 0, cnps = 0;  // RoCE (roce_cluster): go-back-N, DCQCN
    // Path-ID loss detection: holes NACKed as lost, path IDs out of range.
    std::uint64_t inferred_losses = 0, path_ids_out_of_range = 0;
    lb::lb_stats lb;
    std::array<std::uint64_t, drop_reason_count> drops{};  // frames the engines dropped, by reason
};

// The unloaded round trip of a data frame of data_frame bytes out and an ACK back over a path of
// `links` links each way (2 within a leaf, 4 through a spine, 6 through a fat tree's core):
// each link adds its delay and the frame's serialisation (store and forward).
std::uint64_t path_rtt(const netmodel::topology& t, std::uint32_t links, double data_frame,
                       double ack_frame = 80);
// path_rtt over the fabric's longest path: what the engines take as their base RTT.
std::uint64_t base_rtt(const netmodel::topology& t, double data_frame = 4096 + 110,
                       double ack_frame = 80);

// How a flow's messages travel. sends: SEND requests, each reassembled at the receiver into a
// buffer of its own (what the engine does for an application's receive). placed_writes: RMA
// WRITEs whose packets the receiver places (delivery_target::place_write) into one scratch
// buffer the whole cluster shares: the same packets and protocol, without a message-sized
// buffer per message in flight, which at a thousand hosts is gigabytes of page faults.
enum class payload_kind : std::uint8_t { sends, placed_writes };

class cluster final : private delivery_target {
  public:
    static constexpr std::uint64_t never = ~std::uint64_t{0};

    // `bin_ns`: width of the receive-rate bins (0: none kept). The engines take base's
    // configuration with their own address and seed base.seed x 1000 + host.
    cluster(const netmodel::topology& t, const engine_config& base, std::uint64_t bin_ns = 0,
            payload_kind payload = payload_kind::sends);
    cluster(const cluster&) = delete;
    cluster& operator=(const cluster&) = delete;

    netmodel::fabric& net() { return fab_; }
    const netmodel::fabric& net() const { return fab_; }
    engine& host(std::uint32_t h) { return *engines_[h]; }
    std::uint64_t now() const { return now_; }
    std::size_t max_frame() const { return max_frame_; }
    std::uint64_t steps() const { return steps_; }

    // Throws std::invalid_argument for a host out of range, src == dst, no payload, or a
    // dependency on a flow not added yet (or with sends).
    std::size_t add_flow(const flow_spec& f);
    const std::vector<flow_state>& flows() const { return flows_.flows(); }
    bool all_finished() const { return flows_.all_finished(); }
    std::size_t finished_flows() const { return flows_.finished(); }

    // Payload bytes host `to` received from host `from` in bin `b` (a flow is (from, to)).
    std::uint64_t received(std::uint32_t from, std::size_t b) const {
        return b < bins_.size() ? bins_[b][from] : 0;
    }
    std::size_t bin_count() const { return bins_.size(); }
    std::uint64_t received_total(std::uint32_t from) const { return rx_bytes_[from]; }
    // Spines that host h's full-size data frames to other leaves were hashed onto (bit i: spine
    // i, the first 64), as the source leaf's ECMP picks them.
    std::uint64_t spines_used(std::uint32_t h) const { return spines_used_[h]; }
    engine_totals totals() const;

    // Steps until every flow is done (true) or the next event is beyond limit (false).
    bool run_until_done(std::uint64_t limit);
    void run_to(std::uint64_t t);
    bool step(std::uint64_t limit);

  private:
    void start_flows();
    void top_up(std::size_t i);
    void pump(std::uint32_t h, engine& e);
    void note_spine(std::uint32_t h, std::span<const std::uint8_t> frame);
    void collect(engine& e);
    void take_received(engine& e);
    void refresh(std::uint32_t h) { deadlines_.set(h, engines_[h]->next_deadline()); }

    // delivery_target: every WRITE lands in sink_, whatever its offset.
    bool places_writes() const noexcept override { return payload_ == payload_kind::placed_writes; }
    std::uint8_t* place_write(std::uint32_t from, const ses::op_fields& f, std::uint32_t offset,
                              std::uint32_t length) noexcept override;

    netmodel::fabric fab_;
    std::vector<std::unique_ptr<engine>> engines_;
    netmodel::event_heap deadlines_;  // engines by next_deadline()
    std::vector<std::uint32_t> due_;  // engines to serve in this step
    flow_table flows_;
    payload_kind payload_;
    std::vector<std::uint8_t> data_;  // every message's payload (0x5a bytes)
    std::vector<std::uint8_t> sink_;  // placed_writes: where every WRITE's payload goes
    std::vector<std::uint64_t> rx_bytes_;
    std::vector<std::uint64_t> spines_used_;
    std::vector<std::vector<std::uint64_t>> bins_;
    std::uint64_t bin_ns_ = 0;
    std::uint64_t now_ = 0;
    std::uint64_t steps_ = 0;
    std::size_t max_frame_ = 0;
    std::array<tx_frame, 64> frames_{};
};

}  // namespace uet::sim
