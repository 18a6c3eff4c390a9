// The RoCEv2 engine under a host_stack through engine_handler, the seam UET's engine uses too:
// two engines that know each other only by IP (the host stacks resolve the MACs by ARP) connect
// a QP pair by the connection manager and move a SEND and a WRITE over a lossy in-memory wire.
#include <gtest/gtest.h>

#include <vector>

#include "host/engine_handler.hpp"
#include "host/host_stack.hpp"
#include "lossy_wire.hpp"
#include "roce_engine/engine.hpp"
#include "roce_memory.hpp"

namespace {

using namespace uet;
using roce::qp_event;

constexpr std::uint32_t ip_a = 0x0a000001, ip_b = 0x0a000002;

struct side {
    side(std::uint32_t ip, std::uint8_t id)
        : e(make_engine(ip, id), mem), handler(e), host(make_host(ip, id), handler) {
        host.on_start({});
    }
    static roce::engine_config make_engine(std::uint32_t ip, std::uint8_t id) {
        roce::engine_config c;
        c.ip = ip;
        c.mac = {{0x02, 0, 0, 0, 0, id}};
        c.seed = id;
        c.cm.timeout_ns = 100'000;
        c.cm.ack_timeout = 5;  // 131 us
        return c;
    }
    static host::host_config make_host(std::uint32_t ip, std::uint8_t id) {
        host::host_config h;
        h.iface = {{{0x02, 0, 0, 0, 0, id}}, ip, 24, 0};
        return h;
    }
    roce::test::memory_target mem;
    roce::engine e;
    host::engine_handler handler;
    host::host_stack host;
};

TEST(host_roce_handler, connects_by_cm_after_arp_and_moves_a_send_and_a_write) {
    side a(ip_a, 1), b(ip_b, 2);
    test::lossy_wire link(3);
    std::uint64_t now = 1'000'000;
    const auto step = [&](double p) {
        now += 5'000;
        link.transfer(a.host, b.host, now, p);
        link.transfer(b.host, a.host, now, p);
    };
    // The MAC is left to the host stack, which resolves it by ARP first.
    const roce::qpn_t qa = a.e.connect({ip_b, {}, 0}, 1, now);
    ASSERT_NE(qa, 0u);
    for (int i = 0; i < 20000 && a.mem.count(qp_event::established) == 0; ++i)
        step(0.05);
    ASSERT_EQ(a.mem.count(qp_event::established), 1u);

    std::vector<std::uint8_t> msg(5000), got(5000), block(20000);
    for (std::size_t i = 0; i < msg.size(); ++i)
        msg[i] = static_cast<std::uint8_t>(i * 7);
    for (std::size_t i = 0; i < block.size(); ++i)
        block[i] = static_cast<std::uint8_t>(i * 13 + 1);
    b.mem.receives.push_back({got.data(), 5000, 0, 1});
    b.mem.regions.push_back({std::vector<std::uint8_t>(20000), roce::access_remote_write});
    roce::send_wr send;
    send.opcode = roce::wr_opcode::send;
    send.local = msg.data();
    send.length = 5000;
    send.wr_id = 1;
    roce::send_wr write;
    write.opcode = roce::wr_opcode::write;
    write.local = block.data();
    write.length = 20000;
    write.rkey = 1;
    write.wr_id = 2;
    ASSERT_EQ(a.e.post_send(qa, send), roce::post_error::none);
    ASSERT_EQ(a.e.post_send(qa, write), roce::post_error::none);
    std::vector<roce::work_completion> done;
    for (int i = 0; i < 20000 && done.size() < 2; ++i) {
        step(0.02);
        roce::work_completion wc[4];
        const std::size_t n = a.e.poll_completions(wc);
        done.insert(done.end(), wc, wc + n);
    }
    ASSERT_EQ(done.size(), 2u);
    for (const auto& wc : done)
        EXPECT_EQ(wc.status, roce::wc_status::success) << wc.wr_id;
    ASSERT_EQ(b.mem.arrivals.size(), 1u);
    EXPECT_EQ(b.mem.arrivals[0].length, 5000u);
    EXPECT_EQ(got, msg);
    EXPECT_EQ(b.mem.regions[0].bytes, block);
    EXPECT_EQ(b.mem.count(qp_event::established), 1u);
    EXPECT_GT(a.handler.stats().frames_tx, 0u);
    EXPECT_GT(b.handler.stats().frames_rx, 0u);
}

}  // namespace
