// Several endpoints behind one address (one UET fabric endpoint), told apart by PIDonFEP, end
// to end without DPDK: on each of two addresses a host stack, a pid_mux and two engines with
// engine_config::fep_pids (PIDonFEP 0 and 1), joined by an in-memory wire with loss. Both of
// one side's engines send to the same engine of the other (PDCs between one pair of addresses
// to one target from two initiators, whose message ids would collide without their PIDonFEPs);
// every mode's messages arrive verified, each from the sender the receiving engine names.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/rng.hpp"
#include "host/engine_handler.hpp"
#include "host/host_stack.hpp"
#include "host/pid_mux.hpp"
#include "messages.hpp"

namespace {

using namespace uet;

constexpr std::uint32_t ip_a = 0x0a000001, ip_b = 0x0a000002;
constexpr const char* plan_text = "uud:1k*20,rud:1k*30,rud:300k*2,rod:64k*6,rudi:100k*3,rudi:1k*20";

struct endpoint {
    endpoint(std::uint32_t ip, std::uint16_t pid, std::uint64_t seed)
        : e(config(ip, pid, seed)), handler(e) {}
    static engine_config config(std::uint32_t ip, std::uint16_t pid, std::uint64_t seed) {
        engine_config c;
        c.ip = ip;
        c.seed = seed;
        c.mtu_payload = 1400;
        c.mpr = 256;
        c.max_message_size = 4u << 20;
        c.fep_pids = true;
        c.pid_on_fep = pid;
        return c;
    }
    uet::engine e;
    host::engine_handler handler;
};

struct fep {
    fep(std::uint32_t ip, std::uint8_t id) : host(make_host(ip, id), mux) {
        for (std::uint16_t pid = 0; pid < 2; ++pid) {
            eps[pid] = std::make_unique<endpoint>(ip, pid, id * 16 + pid);
            mux.add(pid, eps[pid]->handler);
        }
        host.on_start({});
    }
    static host::host_config make_host(std::uint32_t ip, std::uint8_t id) {
        host::host_config h;
        h.iface = {{{0x02, 0, 0, 0, 0, id}}, ip, 24, 0};
        return h;
    }
    host::pid_mux mux;
    host::host_stack host;
    std::array<std::unique_ptr<endpoint>, 2> eps;
};

// One burst from `from` to `to`, each frame lost with probability p.
void transfer(fep& from, fep& to, std::uint64_t now, uet::rng& loss, double p) {
    std::vector<std::vector<std::uint8_t>> bufs(host::burst_size, std::vector<std::uint8_t>(9216));
    std::vector<host::tx_frame> frames(host::burst_size);
    for (std::size_t i = 0; i < frames.size(); ++i)
        frames[i].reset(bufs[i], nullptr);
    const std::size_t n = from.host.on_transmit(now, frames);
    for (std::size_t i = 0; i < n; ++i) {
        if (loss.uniform(1'000'000) < p * 1e6) continue;
        to.host.on_receive({frames[i].buffer.data(), frames[i].length}, now);
    }
}

// A sending engine and the receiver checking its messages at the other side.
struct flow {
    endpoint* from;
    endpoint* to;
    std::uint16_t to_pid, from_pid;
    std::uint32_t ip_to;
    std::unique_ptr<itest::plan_sender> sender;
    std::unique_ptr<itest::plan_receiver> receiver;
};

TEST(fep, endpoints_behind_one_address_each_get_their_own_traffic) {
    fep a(ip_a, 1), b(ip_b, 2);
    const auto plan = itest::parse_plan(plan_text);
    // a0 and a1 both to b1; b0 to a0, b1 to a1.
    std::vector<flow> flows;
    flows.push_back({a.eps[0].get(), b.eps[1].get(), 1, 0, ip_b, nullptr, nullptr});
    flows.push_back({a.eps[1].get(), b.eps[1].get(), 1, 1, ip_b, nullptr, nullptr});
    flows.push_back({b.eps[0].get(), a.eps[0].get(), 0, 0, ip_a, nullptr, nullptr});
    flows.push_back({b.eps[1].get(), a.eps[1].get(), 1, 1, ip_a, nullptr, nullptr});
    for (std::size_t i = 0; i < flows.size(); ++i) {
        flow& f = flows[i];
        const peer_id to = f.from->e.add_peer({}, f.ip_to, f.to_pid);
        const auto epoch = static_cast<std::uint32_t>(100 + i);
        f.sender = std::make_unique<itest::plan_sender>(f.from->e, to, plan, epoch);
        f.receiver = std::make_unique<itest::plan_receiver>(plan, epoch);
    }
    // A received message goes to the receiver of the flow from its sender's address.
    const auto drain = [&](endpoint& ep, std::uint32_t from_ip) {
        received_message m;
        while (ep.e.poll_received(m)) {
            flow* f = nullptr;
            for (flow& g : flows)
                if (g.to == &ep && ep.e.peer_ip(m.from) == from_ip &&
                    ep.e.peer_pid(m.from) == g.from_pid)
                    f = &g;
            ASSERT_NE(f, nullptr) << "a message from a sender with no flow to this endpoint";
            EXPECT_TRUE(f->receiver->on_message(m)) << f->receiver->last_error();
            ep.e.release(m.handle);
        }
    };
    const auto done = [&] {
        for (const flow& f : flows)
            if (!f.sender->complete() || !f.receiver->complete()) return false;
        return true;
    };
    uet::rng loss(9);
    std::uint64_t now = 1'000'000;
    for (int step = 0; step < 400000 && !done(); ++step) {
        now += 5'000;
        for (flow& f : flows)
            f.sender->step(now);
        const double p = step < 20 ? 0.0 : 0.01;
        transfer(a, b, now, loss, p);
        transfer(b, a, now, loss, p);
        for (auto& ep : b.eps)
            drain(*ep, ip_a);
        for (auto& ep : a.eps)
            drain(*ep, ip_b);
    }
    for (const flow& f : flows) {
        EXPECT_TRUE(f.sender->complete()) << f.sender->progress();
        EXPECT_TRUE(f.receiver->complete()) << f.receiver->progress();
        EXPECT_EQ(f.sender->failures(), 0u);
        EXPECT_EQ(f.receiver->errors(), 0u) << f.receiver->last_error();
    }
    // Nothing reached an endpoint it was not for, nor failed to find one.
    EXPECT_EQ(a.mux.stats().dropped(), 0u);
    EXPECT_EQ(b.mux.stats().dropped(), 0u);
    for (const fep* s : {&a, &b})
        for (const auto& ep : s->eps)
            EXPECT_EQ(ep->e.counters().drops[static_cast<std::size_t>(drop_reason::wrong_pid)], 0u);
    // b1's two sources are two peers at one address.
    EXPECT_GE(b.eps[1]->e.counters().target_pdcs_opened, 2u);
}

}  // namespace
