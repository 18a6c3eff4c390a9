// RoCEv2 engines (lib/roce_engine), one per host, exchanging real frames through the fabric
// model (sim/fabric) in virtual time: QP pairs connected the verbs way, and rounds that hand the
// arrivals due to their hosts, let every engine that has something to do transmit, and report
// each completion. The roce tests and uet-sim's RoCE cluster (roce_cluster.hpp) drive it.
// A round serves, in host order, only the hosts it concerns: those with arrivals, those whose
// deadline has come (an indexed heap of them) and those whose NIC port was full; whoever posts
// work requests outside a round says so with touch(h), as a doorbell.
// By default an engine hands the fabric everything it may send at once (the NIC port's queue is
// an unbounded FIFO). With options::nic_backlog_bytes an engine is asked for one frame at a time
// while its NIC port holds less than that, as a NIC's transmit arbiter picks the next packet
// among its QPs when the wire is free: the QPs share the port by the engine's round robin rather
// than by who posted first.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "fabric/event_heap.hpp"
#include "fabric/fabric.hpp"
#include "roce_engine/engine.hpp"

namespace uet::sim {

struct roce_fabric_options {
    std::uint64_t nic_backlog_bytes = 0;  // 0: unbounded, everything at once
    std::uint8_t timeout = 5;             // every QP's local ACK timeout (5: 131 us)
    std::uint8_t retry_cnt = 7;           // and its retry count
};

class roce_fabric {
  public:
    using options = roce_fabric_options;
    using completion_fn = std::function<void(std::uint32_t, const roce::work_completion&)>;

    // config(h): host h's engine configuration (its address and MAC are the fabric's);
    // target(h): where its responder places what arrives, which must outlive the fabric.
    roce_fabric(const netmodel::topology& t,
                const std::function<roce::engine_config(std::uint32_t)>& config,
                const std::function<roce::delivery_target&(std::uint32_t)>& target, options o = {});

    netmodel::fabric& net() { return fab_; }
    const netmodel::fabric& net() const { return fab_; }
    std::uint32_t host_count() const { return static_cast<std::uint32_t>(engines_.size()); }
    roce::engine& eng(std::uint32_t h) { return *engines_[h]; }
    const roce::engine& eng(std::uint32_t h) const { return *engines_[h]; }
    std::uint64_t now() const { return now_; }
    std::size_t max_frame() const { return max_frame_; }

    // A QP on a and one on b, brought to RTS facing each other; a's packets leave with UDP
    // source port sport_a (0: from its number), b's with sport_b. {a's QPN, b's QPN}. Throws
    // std::runtime_error when an engine has no QP left or refuses a transition.
    std::pair<roce::qpn_t, roce::qpn_t> connect(std::uint32_t a, std::uint32_t b,
                                                std::uint16_t sport_a = 0,
                                                std::uint16_t sport_b = 0);

    // One round at now(): the arrivals due go to their hosts, every engine whose deadline has
    // come transmits (into its NIC port, as far as the backlog allows), and on_completion(h, wc)
    // hears every completion.
    void round(const completion_fn& on_completion);
    // When the next round has something to do: the fabric's next event or the deadline of a
    // host whose NIC port is not full (one that is waits for it to drain, a fabric event);
    // netmodel::fabric::none when nothing is left.
    std::uint64_t next_time() const;
    void advance(std::uint64_t t) { now_ = std::max(now_, t); }
    // Host h's engine has new work (a post_send): its deadline is read again.
    void touch(std::uint32_t h);

    // Runs until done() or until nothing is left to happen (false). top_up() is called before
    // the loop and after each round, to post more.
    bool run(const std::function<bool()>& done, const completion_fn& on_completion,
             const std::function<void()>& top_up, std::uint64_t max_rounds = 50'000'000);

  private:
    void side(std::uint32_t self, roce::qpn_t q, std::uint32_t peer, roce::qpn_t peer_q,
              std::uint16_t sport, psn_t sq, psn_t rq);
    void send(std::uint32_t h, std::span<const std::uint8_t> frame);
    void serve(std::uint32_t h);
    void mark(std::uint32_t h);

    netmodel::fabric fab_;
    std::vector<std::unique_ptr<roce::engine>> engines_;
    options opt_;
    std::vector<bool> held_;          // NIC port full this round (options::nic_backlog_bytes)
    netmodel::event_heap deadlines_;  // hosts neither held nor being served, by next_deadline()
    std::vector<std::uint32_t> due_;  // hosts this round serves; marked_ says who is in it
    std::vector<bool> marked_;
    std::vector<std::uint32_t> held_hosts_;  // served again next round
    std::uint64_t now_ = 0;
    std::uint32_t pairs_ = 0;
    std::size_t max_frame_ = 0;
    std::array<tx_frame, 32> out_{};
    std::array<roce::work_completion, 32> wcs_{};
};

}  // namespace uet::sim
