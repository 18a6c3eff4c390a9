// RoCEv2 RC over the leaf-spine fabric model (sim/fabric), in virtual time: eight WRITE flows
// from leaf 0 to leaf 1, one QP each, with DCQCN, in four setups. Go-back-N over ECMP is what
// RoCE NICs do by default: flows that hash onto one spine share it. Spraying packets in the
// switches breaks go-back-N (a packet that overtakes another is a PSN sequence error, and
// everything after it is dropped and sent again) but not the out-of-order mode, whose responder
// places every WRITE packet where its own RETH says. Endpoint spraying (a source port per packet)
// gets the same spread from plain ECMP switches.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <vector>

#include "fabric/fabric.hpp"
#include "roce_engine/engine.hpp"
#include "roce_link.hpp"
#include "roce_memory.hpp"
#include "roce_test_qp.hpp"

namespace {

using namespace uet::roce;
using namespace uet::roce::test;
using uet::psn_t;
namespace nm = uet::netmodel;

constexpr std::uint32_t hosts_per_leaf = 8, flows = 8;
constexpr std::uint32_t write_bytes = 64 * 1024, outstanding = 4;

struct setup {
    const char* name;
    retransmit_mode mode;
    bool leaf_spray;      // the switches spray per packet
    bool endpoint_spray;  // the engines do (engine_config::spray)
};

struct outcome {
    std::uint64_t last_done_ns = 0;
    std::uint64_t bytes = 0;
    std::uint64_t completed = 0, failed = 0;
    std::uint64_t go_back_rounds = 0, frames_tx = 0, fabric_drops = 0;
    double goodput_gbps() const {
        return last_done_ns ? double(bytes) * 8 / double(last_done_ns) : 0;
    }
};

struct host {
    memory_target mem;
    std::unique_ptr<engine> eng;
    qpn_t qpn = 0;
    std::uint32_t rkey = 0;  // the receiver's region
    std::uint32_t posted = 0, done = 0;
};

outcome run(const setup& s, std::uint32_t writes_per_flow) {
    nm::topology t;
    t.leaves = 2;
    t.hosts_per_leaf = hosts_per_leaf;
    t.spines = 8;
    t.host_link = t.fabric_link = nm::link_params{};  // 100 Gb/s, 1 us, ECN 30-120 KB
    t.leaf_spray = s.leaf_spray;
    t.seed = 3;
    nm::fabric fab(t);
    std::vector<host> hosts(2 * hosts_per_leaf);
    for (std::uint32_t h = 0; h < hosts.size(); ++h) {
        engine_config c = config_of(fab.host_ip(h), fab.host_mac(h), s.mode, 100 + h);
        c.dcqcn = true;
        c.spray = s.endpoint_spray;
        hosts[h].eng = std::make_unique<engine>(c, hosts[h].mem);
        hosts[h].qpn = hosts[h].eng->create_qp();
    }
    // Flow f: host f on leaf 0 writes into host 8 + f on leaf 1.
    std::vector<std::uint8_t> source(write_bytes, 0x5a);
    for (std::uint32_t f = 0; f < flows; ++f) {
        host& a = hosts[f];
        host& b = hosts[hosts_per_leaf + f];
        b.rkey = b.mem.add_region(std::size_t{write_bytes} * outstanding, access_remote_write);
        const auto side = [&](host& self, const host& peer, std::uint32_t peer_host, psn_t sq,
                              psn_t rq) {
            qp_attr at;
            at.access = access_remote_write;
            at.mtu = path_mtu::mtu_4096;
            at.dest_qpn = peer.qpn;
            at.peer_ip = fab.host_ip(peer_host);
            at.peer_mac = fab.host_mac(peer_host);
            at.sq_psn = sq;
            at.rq_psn = rq;
            at.max_rd_atomic = at.max_dest_rd_atomic = 8;
            at.min_rnr_timer = 1;
            at.timeout = 5;  // 131 us
            at.retry_cnt = 7;
            connect_with([&](const qp_attr& x,
                             std::uint32_t m) { return self.eng->modify_qp(self.qpn, x, m); },
                         at);
        };
        side(a, b, hosts_per_leaf + f, 1000 * f, 7000 * f);
        side(b, a, f, 7000 * f, 1000 * f);
    }
    outcome o;
    std::array<uet::tx_frame, 32> out{};
    std::array<work_completion, 32> wcs{};
    std::uint64_t now = 0;
    const auto all_done = [&] {
        for (std::uint32_t f = 0; f < flows; ++f)
            if (hosts[f].done < writes_per_flow) return false;
        return true;
    };
    const auto top_up = [&] {
        for (std::uint32_t f = 0; f < flows; ++f) {
            host& a = hosts[f];
            const host& b = hosts[hosts_per_leaf + f];
            while (a.posted < writes_per_flow && a.posted - a.done < outstanding) {
                send_wr wr;
                wr.wr_id = a.posted;
                wr.opcode = wr_opcode::write;
                wr.local = source.data();
                wr.length = write_bytes;
                wr.remote_va = std::uint64_t{a.posted % outstanding} * write_bytes;
                wr.rkey = b.rkey;
                if (a.eng->post_send(a.qpn, wr) != post_error::none) break;
                ++a.posted;
            }
        }
    };
    top_up();
    for (std::uint64_t steps = 0; !all_done() && steps < 50'000'000; ++steps) {
        fab.deliver(now, [&](std::uint32_t h, std::span<const std::uint8_t> frame) {
            const std::span<const std::uint8_t> one[] = {frame};
            hosts[h].eng->receive_burst(one, now);
        });
        for (std::uint32_t h = 0; h < hosts.size(); ++h) {
            engine& e = *hosts[h].eng;
            if (e.next_deadline() <= now) {
                for (std::size_t n; (n = e.transmit(now, out)) > 0;) {
                    for (std::size_t i = 0; i < n; ++i)
                        fab.send(h, out[i].data, now);
                    if (n < out.size()) break;
                }
            }
            for (std::size_t n; (n = e.poll_completions(wcs)) > 0;) {
                for (std::size_t i = 0; i < n; ++i) {
                    const bool ok = wcs[i].status == wc_status::success;
                    ok ? ++o.completed : ++o.failed;
                    if (ok) o.bytes += write_bytes;
                    ++hosts[h].done;
                }
                o.last_done_ns = now;
            }
        }
        top_up();
        std::uint64_t next = fab.next_event();
        for (const host& h : hosts)
            next = std::min(next, h.eng->next_deadline());
        if (next == nm::fabric::none) break;
        now = std::max(now, next);
    }
    for (const host& h : hosts) {
        o.frames_tx += h.eng->counters().frames_tx;
        if (const qp* q = h.eng->find(h.qpn)) o.go_back_rounds += q->counters.go_back_rounds;
    }
    o.fabric_drops = fab.counters().dropped;
    EXPECT_TRUE(all_done()) << s.name << ": flows unfinished at " << now << " ns";
    return o;
}

std::uint32_t writes_per_flow() {
    // The sanitizer build runs the same scenarios, shorter.
    const char* v = std::getenv("UET_ROCE_SPRAY_WRITES");
    return v != nullptr ? static_cast<std::uint32_t>(std::strtoul(v, nullptr, 10)) : 64;
}

TEST(roce_spray, go_back_n_wastes_the_wire_under_switch_spraying_and_out_of_order_mode_gains) {
    const setup setups[] = {
        {"go-back-N, ECMP", retransmit_mode::go_back_n, false, false},
        {"go-back-N, switch spray", retransmit_mode::go_back_n, true, false},
        {"out-of-order, switch spray", retransmit_mode::out_of_order, true, false},
        {"out-of-order, endpoint spray", retransmit_mode::out_of_order, false, true},
        {"out-of-order, ECMP", retransmit_mode::out_of_order, false, false},
    };
    const std::uint32_t n = writes_per_flow();
    outcome o[5];
    for (int i = 0; i < 5; ++i) {
        o[i] = run(setups[i], n);
        std::printf(
            "%-30s goodput %6.1f Gb/s, last completion %8.1f us, frames %8llu, go-back rounds "
            "%6llu, fabric drops %llu\n",
            setups[i].name, o[i].goodput_gbps(), double(o[i].last_done_ns) / 1000,
            static_cast<unsigned long long>(o[i].frames_tx),
            static_cast<unsigned long long>(o[i].go_back_rounds),
            static_cast<unsigned long long>(o[i].fabric_drops));
        EXPECT_EQ(o[i].failed, 0u) << setups[i].name;
        EXPECT_EQ(o[i].completed, std::uint64_t{flows} * n) << setups[i].name;
    }
    // Switch spraying: go-back-N resends what overtaken packets made it drop, several times the
    // frames the out-of-order mode sends for the same writes, for less goodput.
    EXPECT_GT(o[1].go_back_rounds, 0u);
    EXPECT_GT(o[1].frames_tx, 3 * o[2].frames_tx);
    EXPECT_LT(o[1].goodput_gbps(), o[2].goodput_gbps());
    // The out-of-order mode gains from spraying, in the switches or from the endpoints.
    EXPECT_GT(o[2].goodput_gbps(), 1.5 * o[0].goodput_gbps());
    EXPECT_GT(o[3].goodput_gbps(), o[0].goodput_gbps());
    EXPECT_GT(o[3].goodput_gbps(), o[4].goodput_gbps());  // the sprayed source ports spread
    EXPECT_EQ(o[2].go_back_rounds, 0u);
    EXPECT_EQ(o[3].go_back_rounds, 0u);
}

TEST(roce_spray, engine_refuses_spraying_in_go_back_n_mode) {
    memory_target mem;
    engine_config c = config_of(ip_a, mac_a, retransmit_mode::go_back_n, 1);
    c.spray = true;
    EXPECT_THROW(engine(c, mem), std::invalid_argument);
}

}  // namespace
