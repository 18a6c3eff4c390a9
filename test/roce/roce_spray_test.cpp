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

#include "roce_engine/engine.hpp"
#include "roce_fabric.hpp"

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

outcome run(const setup& s, std::uint32_t writes_per_flow) {
    nm::topology t;
    t.leaves = 2;
    t.hosts_per_leaf = hosts_per_leaf;
    t.spines = 8;
    t.host_link = t.fabric_link = nm::link_params{};  // 100 Gb/s, 1 us, ECN 30-120 KB
    t.leaf_spray = s.leaf_spray;
    t.seed = 3;
    roce_fabric net(t, [&](std::uint32_t h) {
        engine_config c = config_of(0, {}, s.mode, 100 + h);
        c.dcqcn = true;
        c.spray = s.endpoint_spray;
        return c;
    });
    // Flow f: host f on leaf 0 writes into host 8 + f on leaf 1.
    struct flow {
        qpn_t qpn = 0;
        std::uint32_t rkey = 0;  // the receiver's region
        std::uint32_t posted = 0, done = 0;
    };
    std::vector<flow> fl(flows);
    for (std::uint32_t f = 0; f < flows; ++f) {
        fl[f].qpn = net.connect(f, hosts_per_leaf + f).first;
        fl[f].rkey = net.mem(hosts_per_leaf + f)
                         .add_region(std::size_t{write_bytes} * outstanding, access_remote_write);
    }
    std::vector<std::uint8_t> source(write_bytes, 0x5a);
    outcome o;
    const auto all_done = [&] {
        for (const flow& f : fl)
            if (f.done < writes_per_flow) return false;
        return true;
    };
    const auto top_up = [&] {
        for (std::uint32_t f = 0; f < flows; ++f) {
            flow& x = fl[f];
            while (x.posted < writes_per_flow && x.posted - x.done < outstanding) {
                send_wr wr;
                wr.wr_id = x.posted;
                wr.opcode = wr_opcode::write;
                wr.local = source.data();
                wr.length = write_bytes;
                wr.remote_va = std::uint64_t{x.posted % outstanding} * write_bytes;
                wr.rkey = x.rkey;
                if (net.eng(f).post_send(x.qpn, wr) != post_error::none) break;
                ++x.posted;
            }
        }
    };
    const auto on_completion = [&](std::uint32_t h, const work_completion& wc) {
        const bool ok = wc.status == wc_status::success;
        ok ? ++o.completed : ++o.failed;
        if (ok) o.bytes += write_bytes;
        ++fl[h].done;
        o.last_done_ns = net.now();
    };
    EXPECT_TRUE(net.run(all_done, on_completion, top_up)) << s.name << ": flows unfinished";
    for (std::uint32_t h = 0; h < net.host_count(); ++h)
        o.frames_tx += net.eng(h).counters().frames_tx;
    for (std::uint32_t f = 0; f < flows; ++f)
        if (const qp* q = net.eng(f).find(fl[f].qpn))
            o.go_back_rounds += q->counters.go_back_rounds;
    o.fabric_drops = net.net().counters().dropped;
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
