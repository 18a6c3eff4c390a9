// A requester and a responder (two QPs) joined by a simulated link that loses, duplicates and
// reorders packets, in virtual time: every work request must complete once, in order, with
// the right bytes in place, and every atomic must run exactly once.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "roce/completer.hpp"
#include "roce/psn24.hpp"
#include "roce/requester.hpp"
#include "roce/responder.hpp"
#include "roce_memory.hpp"
#include "roce_test_qp.hpp"
#include "roce_workload.hpp"

namespace {

using namespace uet::roce;
using uet::roce::test::memory_target;

struct impairment {
    double loss = 0;
    double duplicate = 0;
    std::uint64_t jitter_ns = 0;  // extra delay drawn per packet: packets overtake each other
    std::uint32_t receive_interval = 1;  // ticks between the responder's receive posts
};

// A packet on the link: a request (A to B) or a response-side packet (B to A), with copies of
// its headers and payload, as a frame would carry them.
struct wire_packet {
    std::uint64_t due = 0;
    bool request = true;
    req_in req;
    resp_in resp;
    uet::wire::reth_header reth;
    uet::wire::atomic_eth_header atomic;
    std::vector<std::uint8_t> payload;
};

struct link {
    impairment imp;
    std::mt19937_64 rng;
    std::uint64_t delay_ns = 2000;
    std::vector<wire_packet> in_flight;

    void send(wire_packet p, std::uint64_t now) {
        std::uniform_real_distribution<double> u(0, 1);
        if (u(rng) < imp.loss) return;
        const int copies = u(rng) < imp.duplicate ? 2 : 1;
        for (int i = 0; i < copies; ++i) {
            wire_packet c = p;
            c.due = now + delay_ns + (imp.jitter_ns ? rng() % imp.jitter_ns : 0);
            in_flight.push_back(std::move(c));
        }
    }
    std::vector<wire_packet> take_due(std::uint64_t now) {
        std::vector<wire_packet> due;
        std::stable_sort(in_flight.begin(), in_flight.end(),
                         [](const wire_packet& a, const wire_packet& b) { return a.due < b.due; });
        auto it = in_flight.begin();
        while (it != in_flight.end() && it->due <= now)
            ++it;
        due.assign(std::make_move_iterator(in_flight.begin()), std::make_move_iterator(it));
        in_flight.erase(in_flight.begin(), it);
        for (wire_packet& p : due) {  // the spans point into the packet's own copies
            p.req.payload = p.resp.payload = p.payload;
            if (p.req.reth) p.req.reth = &p.reth;
            if (p.req.atomic) p.req.atomic = &p.atomic;
        }
        return due;
    }
};

wire_packet from_request(const req_packet& p) {
    wire_packet w;
    w.request = true;
    w.req.opcode = p.opcode;
    w.req.psn = to_wire(p.psn);
    w.req.ack_req = p.ack_req;
    w.req.has_imm = p.has_imm;
    w.req.imm = p.imm;
    if (p.has_reth) {
        w.reth = p.reth;
        w.req.reth = &w.reth;
    }
    if (p.has_atomic) {
        w.atomic = p.atomic;
        w.req.atomic = &w.atomic;
    }
    if (p.length) w.payload.assign(p.payload, p.payload + p.length);
    return w;
}

wire_packet from_response(const resp_packet& p) {
    wire_packet w;
    w.request = false;
    w.resp.opcode = p.opcode;
    w.resp.psn = to_wire(p.psn);
    w.resp.has_aeth = p.has_aeth;
    w.resp.syndrome = p.syndrome;
    w.resp.msn = p.msn;
    w.resp.has_atomic_ack = p.has_atomic_ack;
    w.resp.original = p.original;
    if (p.length) w.payload.assign(p.payload, p.payload + p.length);
    return w;
}

wire_packet from_ack(const ack_out& a) {
    wire_packet w;
    w.request = false;
    w.resp.opcode = uet::wire::roce_opcode::rc_acknowledge;
    w.resp.psn = to_wire(a.psn);
    w.resp.has_aeth = true;
    w.resp.syndrome = a.syndrome;
    w.resp.msn = a.msn;
    return w;
}

struct outcome {
    std::vector<work_completion> completions;
    std::uint64_t steps = 0;
};

class pair_run {
  public:
    pair_run(impairment imp, retransmit_mode mode, std::uint64_t seed, std::uint32_t sq_psn)
        : a_(0x11, limits(mode)), b_(0x22, limits(mode)), work_(mem_), rng_(seed) {
        to_b_.imp = to_a_.imp = imp;
        to_b_.rng.seed(seed * 3 + 1);
        to_a_.rng.seed(seed * 5 + 2);
        qp_attr attr = test::connected_attr(sq_psn, 0);
        attr.timeout = 4;  // 65.5 us of virtual time
        test::connect(a_, attr);
        qp_attr battr = test::connected_attr(0, sq_psn);
        test::connect(b_, battr);
    }

    static qp_limits limits(retransmit_mode mode) {
        qp_limits l{.sq_depth = 512, .max_outstanding = 64, .ack_req_every = 8};
        l.mode = mode;
        l.reorder_window_ns = 3000;
        l.nak_repeat_ns = 10000;
        return l;
    }

    // Posts `count` random work requests and runs until each completed (or a step limit).
    void run(int count) {
        work_.generate(count, rng_);
        const auto& wrs = work_.wrs();
        std::size_t posted = 0;
        for (std::uint64_t now = 0; out_.completions.size() < wrs.size() && out_.steps < 400000;
             now += 1000, ++out_.steps) {
            while (posted < wrs.size() && post_send(a_, wrs[posted]) == post_error::none)
                ++posted;
            if (out_.steps % to_b_.imp.receive_interval == 0 && mem_.receives.size() < 64)
                work_.post_one_receive();
            on_timer(a_, now);
            req_packet p;
            req_stop stop;
            for (int k = 0; k < 32 && next_request(a_, now, p, stop); ++k)
                to_b_.send(from_request(p), now);
            for (const wire_packet& w : to_b_.take_due(now))
                on_request(b_, w.req, now, mem_);
            resp_packet rp;
            for (int k = 0; k < 32 && next_response(b_, rp, mem_); ++k)
                to_a_.send(from_response(rp), now);
            ack_out ack;
            if (take_ack(b_, ack)) to_a_.send(from_ack(ack), now);
            for (const wire_packet& w : to_a_.take_due(now))
                on_response(a_, w.resp, now);
            work_completion wc[16];
            const std::size_t n = poll_completions(a_, wc);
            out_.completions.insert(out_.completions.end(), wc, wc + n);
            ASSERT_NE(a_.attr.state, qp_state::err)
                << to_string(a_.error) << " una " << a_.req.una << " next " << a_.req.next_psn
                << " rnr " << a_.counters.rnr_naks_received << " timeouts " << a_.counters.timeouts;
            ASSERT_NE(b_.attr.state, qp_state::err) << to_string(b_.error);
        }
    }

    void check() { work_.check(out_.completions); }

    qp a_, b_;
    memory_target mem_;
    test::workload work_;
    outcome out_;

  private:
    std::mt19937_64 rng_;
    link to_b_, to_a_;
};

struct pair_case {
    const char* name;
    impairment imp;
};

class roce_pair
    : public ::testing::TestWithParam<std::tuple<pair_case, retransmit_mode, std::uint64_t>> {};

TEST_P(roce_pair, every_work_request_completes_once_in_order) {
    const auto& [c, mode, seed] = GetParam();
    // Start near the 24-bit wrap so that every run crosses it.
    pair_run run(c.imp, mode, seed, 0xffffff - 40);
    run.run(300);
    run.check();
    if (c.imp.loss > 0) {
        if (mode == retransmit_mode::go_back_n) {
            EXPECT_GT(run.a_.counters.go_back_rounds, 0u);
        } else {
            EXPECT_GT(run.a_.counters.resent(resend_cause::psn_nak), 0u);
            EXPECT_GT(run.b_.counters.placed_early, 0u);
        }
        EXPECT_GT(run.b_.counters.naks_sent[0] + run.a_.counters.timeouts, 0u);
    }
    if (c.imp.duplicate > 0) {
        EXPECT_GT(run.b_.counters.duplicates, 0u);
    }
    if (c.imp.receive_interval > 1) {
        EXPECT_GT(run.a_.counters.rnr_naks_received, 0u);
    }
}

INSTANTIATE_TEST_SUITE_P(
    links, roce_pair,
    ::testing::Combine(
        ::testing::Values(pair_case{"clean", {}}, pair_case{"loss5", {.loss = 0.05}},
                          pair_case{"reorder_dup", {.duplicate = 0.05, .jitter_ns = 3000}},
                          pair_case{"all", {.loss = 0.03, .duplicate = 0.03, .jitter_ns = 2000}},
                          pair_case{"rnr", {.receive_interval = 200}}),
        ::testing::Values(retransmit_mode::go_back_n, retransmit_mode::out_of_order),
        ::testing::Range<std::uint64_t>(1, 5)),
    [](const auto& info) {
        return std::string(std::get<0>(info.param).name) +
               (std::get<1>(info.param) == retransmit_mode::go_back_n ? "_gbn_" : "_ooo_") +
               std::to_string(std::get<2>(info.param));
    });

}  // namespace
