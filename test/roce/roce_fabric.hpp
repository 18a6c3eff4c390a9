// RoCEv2 engines, one per host, exchanging real frames through the leaf-spine fabric model
// (sim/fabric) in virtual time: QP pairs connected the verbs way, and a loop that jumps to the
// earliest of the fabric's next event and the engines' deadlines, hands arrivals to their hosts,
// lets every engine that has something to do transmit, and reports each completion.
// By default an engine hands the fabric everything it may send at once (the NIC port's queue is
// an unbounded FIFO). With options::nic_backlog_bytes the harness asks an engine for one frame
// at a time while its NIC port holds less than that, as a NIC's transmit arbiter picks the next
// packet among its QPs when the wire is free: the QPs share the port by the engine's round robin
// rather than by who posted first.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "fabric/fabric.hpp"
#include "roce_engine/engine.hpp"
#include "roce_link.hpp"
#include "roce_memory.hpp"
#include "roce_test_qp.hpp"

namespace uet::roce::test {

struct roce_fabric_options {
    std::uint64_t nic_backlog_bytes = 0;  // 0: unbounded, everything at once
    std::uint8_t timeout = 5;             // every QP's local ACK timeout (5: 131 us)
    std::uint8_t retry_cnt = 7;           // and its retry count
};

class roce_fabric {
  public:
    struct host {
        memory_target mem;
        std::unique_ptr<engine> eng;
    };

    using options = roce_fabric_options;

    // config(h): host h's engine configuration; its address and MAC are the fabric's.
    roce_fabric(const netmodel::topology& t,
                const std::function<engine_config(std::uint32_t)>& config, options o = {})
        : fab_(t), hosts_(fab_.host_count()), opt_(o), held_(hosts_.size(), false) {
        for (std::uint32_t h = 0; h < hosts_.size(); ++h) {
            engine_config c = config(h);
            c.ip = fab_.host_ip(h);
            c.mac = fab_.host_mac(h);
            hosts_[h].eng = std::make_unique<engine>(c, hosts_[h].mem);
        }
    }

    netmodel::fabric& net() { return fab_; }
    std::uint32_t host_count() const { return static_cast<std::uint32_t>(hosts_.size()); }
    engine& eng(std::uint32_t h) { return *hosts_[h].eng; }
    memory_target& mem(std::uint32_t h) { return hosts_[h].mem; }
    std::uint64_t now() const { return now_; }

    // A QP on a and one on b, brought to RTS facing each other; a's packets leave with UDP
    // source port sport_a (0: from its number), b's with sport_b. {a's QPN, b's QPN}.
    std::pair<qpn_t, qpn_t> connect(std::uint32_t a, std::uint32_t b, std::uint16_t sport_a = 0,
                                    std::uint16_t sport_b = 0) {
        const qpn_t qa = eng(a).create_qp(), qb = eng(b).create_qp();
        const psn_t pa = 0x1000 * (++pairs_), pb = 0x700000 + pairs_;
        side(a, qa, b, qb, sport_a, pa, pb);
        side(b, qb, a, qa, sport_b, pb, pa);
        return {qa, qb};
    }

    // Runs until done() or until nothing is left to happen (false). on_completion(h, wc) hears
    // every completion; top_up() is called before the loop and after each round, to post more.
    bool run(const std::function<bool()>& done,
             const std::function<void(std::uint32_t, const work_completion&)>& on_completion,
             const std::function<void()>& top_up, std::uint64_t max_rounds = 50'000'000) {
        top_up();
        for (std::uint64_t round = 0; !done(); ++round) {
            if (round == max_rounds) return false;
            fab_.deliver(now_, [&](std::uint32_t h, std::span<const std::uint8_t> frame) {
                const std::span<const std::uint8_t> one[] = {frame};
                hosts_[h].eng->receive_burst(one, now_);
            });
            for (std::uint32_t h = 0; h < hosts_.size(); ++h) {
                engine& e = *hosts_[h].eng;
                held_[h] = false;
                if (e.next_deadline() <= now_) {
                    if (opt_.nic_backlog_bytes == 0) {
                        for (std::size_t n; (n = e.transmit(now_, out_)) > 0;) {
                            for (std::size_t i = 0; i < n; ++i)
                                fab_.send(h, out_[i].data, now_);
                            if (n < out_.size()) break;
                        }
                    } else {
                        const std::uint32_t nic = fab_.nic_port(h);
                        while (!(held_[h] = fab_.port_counters(nic).queue_bytes >=
                                            opt_.nic_backlog_bytes) &&
                               e.transmit(now_, std::span(out_).first(1)) == 1)
                            fab_.send(h, out_[0].data, now_);
                    }
                }
                for (std::size_t n; (n = e.poll_completions(wcs_)) > 0;)
                    for (std::size_t i = 0; i < n; ++i)
                        on_completion(h, wcs_[i]);
            }
            top_up();
            std::uint64_t next = fab_.next_event();
            // A host whose NIC port is full waits for it to drain (a fabric event).
            for (std::uint32_t h = 0; h < hosts_.size(); ++h)
                if (!held_[h]) next = std::min(next, hosts_[h].eng->next_deadline());
            if (next == netmodel::fabric::none) return done();
            now_ = std::max(now_, next);
        }
        return true;
    }

  private:
    void side(std::uint32_t self, qpn_t q, std::uint32_t peer, qpn_t peer_q, std::uint16_t sport,
              psn_t sq, psn_t rq) {
        qp_attr at;
        at.access = access_remote_write | access_remote_read;
        at.mtu = path_mtu::mtu_4096;
        at.dest_qpn = peer_q;
        at.peer_ip = fab_.host_ip(peer);
        at.peer_mac = fab_.host_mac(peer);
        at.udp_sport = sport;
        at.sq_psn = sq;
        at.rq_psn = rq;
        at.max_rd_atomic = at.max_dest_rd_atomic = 8;
        at.min_rnr_timer = 1;
        at.timeout = opt_.timeout;
        at.retry_cnt = opt_.retry_cnt;
        connect_with(
            [&](const qp_attr& x, std::uint32_t m) { return eng(self).modify_qp(q, x, m); }, at);
    }

    netmodel::fabric fab_;
    std::vector<host> hosts_;
    options opt_;
    std::vector<bool> held_;  // NIC port full this round (options::nic_backlog_bytes)
    std::uint64_t now_ = 0;
    std::uint32_t pairs_ = 0;
    std::array<tx_frame, 32> out_{};
    std::array<work_completion, 32> wcs_{};
};

}  // namespace uet::roce::test
