// pds_impairment_matrix: every delivery mode between two engines against every impairment,
// each cell >= 1,000 messages of mixed sizes, checked for exactly-once byte-exact delivery
// (in order for ROD; for UUD: nothing corrupted or duplicated) before a virtual deadline.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "workload.hpp"

namespace uet::test {
namespace {

using cell = impairment_cell;

std::vector<cell> cells() {
    const pipe::impairments base = impaired([](auto&) {});
    std::vector<cell> extra;
    // UET_PDS_EXTRA_CELLS=1 adds harsher cells for exploration (not part of the CI matrix).
    if (env_count("UET_PDS_EXTRA_CELLS", 0, 0)) {
        extra.push_back({"burst loss", impaired([](auto& i) {
                             i.burst_enter = 0.01;
                             i.burst_exit = 0.3;
                         })});
        extra.push_back({"reorder 30%", impaired([](auto& i) {
                             i.reorder = 0.3;
                             i.reorder_max_distance = 400;
                             i.reorder_max_hold_ns = 50'000;
                         })});
        extra.push_back({"queue+ecn", impaired([](auto& i) {
                             i.rate_gbps = 100;
                             i.queue_limit = 256;
                             i.ecn_mark = 0.2;
                         })});
    }
    std::vector<cell> all = {
        {"clean", base},
        {"loss 1%", impaired([](auto& i) { i.loss = 0.01; })},
        {"loss 5%", impaired([](auto& i) { i.loss = 0.05; })},
        {"loss 20%", impaired([](auto& i) { i.loss = 0.20; })},
        {"reorder d<=400", impaired([](auto& i) {
             i.reorder = 0.05;
             i.reorder_max_distance = 400;
         })},
        {"dup 5%", impaired([](auto& i) { i.duplicate = 0.05; })},
        {"corrupt 1%", impaired([](auto& i) { i.corrupt = 0.01; })},
        {"trim 10%", impaired([](auto& i) { i.trim = 0.10; })},
        {"all", impaired([](auto& i) {
             i.loss = 0.05;
             i.reorder = 0.05;
             i.reorder_max_distance = 400;
             i.duplicate = 0.05;
             i.corrupt = 0.01;
             i.trim = 0.10;
         })},
    };
    all.insert(all.end(), extra.begin(), extra.end());
    return all;
}

struct row {
    delivery_mode mode;
    std::string cell;
    outcome out;
};

std::vector<row>& table() {
    static std::vector<row> t;
    return t;
}

void print_table() {
    std::printf(
        "\n%-5s %-15s %11s %4s %4s %4s %4s | %6s %6s %6s %6s | %6s %6s %6s | %9s %8s %4s %s\n",
        "mode", "cell", "delivered", "dup", "bad", "ooo", "fail", "rx_sck", "rx_tmo", "rx_nak",
        "tmo", "nk_trm", "nk_ooo", "nk_oth", "virt_ms", "wall_ms", "pdcs", "closed");
    for (const row& r : table()) {
        const auto& p = r.out.a.pds;
        const auto nacks_other = p.nacks_received_of(pds::nack_slot::no_pdc_avail) +
                                 p.nacks_received_of(pds::nack_slot::psn_oor_window) +
                                 p.nacks_received_of(pds::nack_slot::no_resource) +
                                 p.nacks_received_of(pds::nack_slot::other);
        char delivered[32];
        std::snprintf(delivered, sizeof delivered, "%zu/%zu", r.out.delivered, r.out.expected);
        std::printf(
            "%-5s %-15s %11s %4zu %4zu %4zu %4zu | %6llu %6llu %6llu %6llu | %6llu %6llu %6llu | "
            "%9.3f %8.1f %4llu %s\n",
            to_string(r.mode), r.cell.c_str(), delivered, r.out.duplicates, r.out.corrupted,
            r.out.out_of_order, r.out.failed,
            (unsigned long long)p.retransmitted(uet::retx_cause::sack),
            (unsigned long long)p.retransmitted(uet::retx_cause::timeout),
            (unsigned long long)p.retransmitted(uet::retx_cause::nack),
            (unsigned long long)p.timeouts,
            (unsigned long long)(p.nacks_received_of(pds::nack_slot::trimmed) +
                                 p.nacks_received_of(pds::nack_slot::trimmed_lasthop)),
            (unsigned long long)p.nacks_received_of(pds::nack_slot::rod_ooo),
            (unsigned long long)nacks_other, r.out.virtual_ns / 1e6, r.out.wall_ms,
            (unsigned long long)r.out.a.pdcs_opened, r.out.quiescent ? "yes" : "NO");
    }
    std::fflush(stdout);
}

class matrix : public ::testing::TestWithParam<delivery_mode> {};

TEST_P(matrix, every_cell_delivers) {
    const delivery_mode mode = GetParam();
    const std::size_t n = env_count("UET_PDS_MATRIX_MESSAGES", 1000, 1000);
    // UET_PDS_SEED explores other runs (the default is what CI checks).
    std::uint64_t seed =
        env_count("UET_PDS_SEED", 0, 0) * 100'000 + 100 + static_cast<std::uint64_t>(mode) * 1000;
    // UET_PDS_CELL=<name> runs one cell only (debugging).
    const char* only = std::getenv("UET_PDS_CELL");
    for (const cell& c : cells()) {
        ++seed;  // per cell, whichever cells run
        if (only && std::string(only) != c.name) continue;
        SCOPED_TRACE(std::string(to_string(mode)) + " / " + c.name);
        workload w;
        w.mode = mode;
        w.imp = c.imp;
        w.seed = seed;
        w.sizes = mixed_sizes(n, seed, mode == delivery_mode::uud ? w.a_cfg.mtu_payload : 0);
        const outcome o = run(w);
        table().push_back({mode, c.name, o});
        EXPECT_TRUE(o.finished) << "stalled at " << o.virtual_ns << " ns";
        if (c.imp.queue_limit == 0) {  // the pipe itself must not have dropped for lack of room
            EXPECT_EQ(o.ab.queue_dropped + o.ba.queue_dropped + o.ab.oversized + o.ba.oversized,
                      0u);
        }
        EXPECT_EQ(o.duplicates, 0u);
        EXPECT_EQ(o.corrupted, 0u);
        if (mode == delivery_mode::uud) {
            EXPECT_LE(o.delivered, n);
            if (std::string(c.name) == "clean") {
                EXPECT_EQ(o.delivered, n);
            }
            continue;
        }
        EXPECT_EQ(o.delivered, n);
        EXPECT_EQ(o.completed, n);
        EXPECT_EQ(o.failed, 0u);
        EXPECT_TRUE(o.quiescent) << "PDCs left open";
        if (mode == delivery_mode::rod) {
            EXPECT_EQ(o.out_of_order, 0u);
        }
        // Trimmed packets come back through NACKs, never through the retransmit timer.
        if (mode == delivery_mode::rud && std::string(c.name) == "trim 10%") {
            EXPECT_EQ(o.a.pds.timeouts, 0u);
            EXPECT_GT(o.a.pds.retransmitted(uet::retx_cause::nack), 0u);
        }
    }
}

INSTANTIATE_TEST_SUITE_P(pds, matrix,
                         ::testing::Values(delivery_mode::rud, delivery_mode::rod,
                                           delivery_mode::rudi, delivery_mode::uud),
                         [](const auto& info) { return std::string(to_string(info.param)); });

class print_at_exit : public ::testing::Environment {
  public:
    void TearDown() override { print_table(); }
};
const auto* const printer = ::testing::AddGlobalTestEnvironment(new print_at_exit);

}  // namespace
}  // namespace uet::test
