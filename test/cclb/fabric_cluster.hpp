// Real uet::engine instances, one per host, exchanging real frames through the leaf-spine fabric
// model (sim/fabric) in virtual time. Each step jumps to the earliest of the fabric's
// next event, the engines' deadlines and the next flow start; arrivals are handed to their
// host's engine, and every engine that has something to do transmits into its NIC port.
// Flows are sequences of messages with a bounded number outstanding; the cluster records when
// each completes and how many payload bytes each receiver took from each source, per time bin.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/engine.hpp"
#include "fabric/fabric.hpp"
#include "wire/bytes.hpp"

namespace uet::test {

struct flow_spec {
    std::uint32_t src = 0, dst = 0;
    std::uint32_t message_bytes = 256 * 1024;
    std::uint32_t messages = 16;
    std::uint32_t outstanding = 4;  // messages posted and not yet completed
    std::uint64_t start_ns = 0;
    delivery_mode mode = delivery_mode::rud;
};

struct flow_state {
    flow_spec spec;
    std::uint32_t posted = 0, completed = 0, failed = 0;
    std::uint64_t first_post_ns = 0, done_ns = 0;
    bool started = false;
    bool finished() const { return completed + failed == spec.messages; }
    double gbps() const {
        const double ns = double(done_ns - first_post_ns);
        return ns > 0 ? double(completed) * spec.message_bytes * 8.0 / ns : 0;
    }
};

class fabric_cluster {
  public:
    static constexpr std::uint64_t never = ~std::uint64_t{0};

    // `bin_ns`: width of the receive-rate bins (0: none kept).
    fabric_cluster(const netmodel::topology& t, const engine_config& base, std::uint64_t bin_ns = 0)
        : fab_(t), bin_ns_(bin_ns) {
        for (std::uint32_t h = 0; h < fab_.host_count(); ++h) {
            engine_config c = base;
            c.mac = fab_.host_mac(h);
            c.ip = fab_.host_ip(h);
            c.seed = base.seed * 1000 + h;
            engines_.push_back(std::make_unique<engine>(c));
        }
        rx_bytes_.assign(fab_.host_count(), 0);
        spines_used_.assign(fab_.host_count(), 0);
    }

    netmodel::fabric& net() { return fab_; }
    engine& host(std::uint32_t h) { return *engines_[h]; }
    std::uint64_t now() const { return now_; }
    std::size_t max_frame() const { return max_frame_; }

    std::size_t add_flow(const flow_spec& f) {
        flows_.push_back(flow_state{f});
        if (data_.size() < f.message_bytes) data_.assign(f.message_bytes, 0x5a);
        return flows_.size() - 1;
    }
    const std::vector<flow_state>& flows() const { return flows_; }
    bool all_finished() const {
        return std::all_of(flows_.begin(), flows_.end(),
                           [](const flow_state& f) { return f.finished(); });
    }

    // Payload bytes host `to` received from host `from` in bin `b` (a flow is (from, to)).
    std::uint64_t received(std::uint32_t from, std::size_t b) const {
        return b < bins_.size() ? bins_[b][from] : 0;
    }
    std::size_t bin_count() const { return bins_.size(); }
    std::uint64_t received_total(std::uint32_t from) const { return rx_bytes_[from]; }
    // Spines that host h's full-size data frames to other leaves were hashed onto (bit i: spine
    // i, the first 64), as the source leaf's ECMP picks them.
    std::uint64_t spines_used(std::uint32_t h) const { return spines_used_[h]; }

    // Steps until every flow is done (true) or the next event is beyond limit (false).
    bool run_until_done(std::uint64_t limit) {
        while (!all_finished())
            if (!step(limit)) return all_finished();
        return true;
    }
    void run_to(std::uint64_t t) {
        while (step(t)) {
        }
        now_ = std::max(now_, t);
    }

    bool step(std::uint64_t limit) {
        std::uint64_t t = std::min(fab_.next_event(), next_start());
        for (const auto& e : engines_)
            t = std::min(t, e->next_deadline());
        if (t == never || t > limit) return false;
        now_ = std::max(now_, t);
        start_flows();
        fab_.deliver(now_, [&](std::uint32_t h, std::span<const std::uint8_t> frame) {
            engines_[h]->receive(frame, now_);
        });
        for (std::uint32_t h = 0; h < engines_.size(); ++h) {
            engine& e = *engines_[h];
            if (e.next_deadline() > now_) continue;
            pump(h, e);
            collect(e);
        }
        return true;
    }

  private:
    std::uint64_t next_start() const {
        std::uint64_t t = never;
        for (const flow_state& f : flows_)
            if (!f.started) t = std::min(t, f.spec.start_ns);
        return t;
    }

    void start_flows() {
        for (std::size_t i = 0; i < flows_.size(); ++i) {
            flow_state& f = flows_[i];
            if (f.started || f.spec.start_ns > now_) continue;
            f.started = true;
            f.first_post_ns = now_;
            top_up(i);
        }
    }

    void top_up(std::size_t i) {
        flow_state& f = flows_[i];
        engine& e = *engines_[f.spec.src];
        const peer_id to = e.add_peer(fab_.host_mac(f.spec.dst), fab_.host_ip(f.spec.dst));
        while (f.posted < f.spec.messages &&
               f.posted - f.completed - f.failed < f.spec.outstanding) {
            const std::uint64_t ctx = (std::uint64_t{i} << 32) | f.posted;
            if (!e.post_send(to, f.spec.mode, {data_.data(), f.spec.message_bytes}, ctx).ok())
                break;
            ++f.posted;
        }
    }

    void pump(std::uint32_t h, engine& e) {
        for (;;) {
            const std::size_t n = e.transmit(now_, frames_);
            for (std::size_t i = 0; i < n; ++i) {
                const auto frame = frames_[i].data;
                max_frame_ = std::max(max_frame_, frame.size());
                note_spine(h, frame);
                fab_.send(h, frame, now_);
            }
            if (n < frames_.size()) break;
        }
    }

    void note_spine(std::uint32_t h, std::span<const std::uint8_t> frame) {
        if (frame.size() < 1024) return;  // full data frames only, not ACKs
        const std::uint32_t dst = fab_.host_of_ip(wire::load_be32(&frame[30]));
        const std::uint32_t leaf = fab_.leaf_of(h);
        if (dst == netmodel::fabric::no_host || fab_.leaf_of(dst) == leaf) return;
        const std::uint32_t s = fab_.uplink_for(leaf, frame);
        if (s < 64) spines_used_[h] |= std::uint64_t{1} << s;
    }

    void collect(engine& e) {
        std::array<send_completion, 64> done;
        for (std::size_t n; (n = e.poll_send_completions(done)) > 0;) {
            for (std::size_t k = 0; k < n; ++k) {
                const auto i = static_cast<std::size_t>(done[k].context >> 32);
                flow_state& f = flows_[i];
                (done[k].result.ok() ? f.completed : f.failed)++;
                if (f.finished()) f.done_ns = now_;
                top_up(i);
            }
        }
        received_message m;
        while (e.poll_received(m)) {
            const std::uint32_t from = fab_.host_of_ip(e.peer_ip(m.from));
            if (from < rx_bytes_.size()) {
                rx_bytes_[from] += m.data.size();
                if (bin_ns_ != 0) {
                    const std::size_t b = now_ / bin_ns_;
                    if (bins_.size() <= b)
                        bins_.resize(b + 1, std::vector<std::uint64_t>(rx_bytes_.size(), 0));
                    bins_[b][from] += m.data.size();
                }
            }
            e.release(m.handle);
        }
    }

    netmodel::fabric fab_;
    std::vector<std::unique_ptr<engine>> engines_;
    std::vector<flow_state> flows_;
    std::vector<std::uint8_t> data_;
    std::vector<std::uint64_t> rx_bytes_;
    std::vector<std::uint64_t> spines_used_;
    std::vector<std::vector<std::uint64_t>> bins_;
    std::uint64_t bin_ns_ = 0;
    std::uint64_t now_ = 0;
    std::size_t max_frame_ = 0;
    std::array<tx_frame, 64> frames_{};
};

}  // namespace uet::test
