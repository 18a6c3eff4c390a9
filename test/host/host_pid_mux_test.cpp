// pid_mux: the endpoints behind one address, told apart by PIDonFEP (wire/uet_fep.hpp). A
// received UET frame reaches the handler of the PIDonFEP it names (DPDCID, SES pid_on_fep, a
// response's message id, a RUDI pkt_id) and no other; frames that name none, name one no
// handler holds, or do not read are counted by reason; transmit bursts are shared so that no
// handler starves another.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "host/pid_mux.hpp"
#include "wire/frame.hpp"
#include "wire/uet_packet.hpp"

namespace {

using namespace uet;
using host::pid_drop;

constexpr std::uint32_t our_ip = 0x0a000001, peer_ip = 0x0a000002;

// Records what it receives; transmits up to `backlog` frames, each a byte naming it.
struct recorder final : host::frame_handler {
    explicit recorder(std::uint8_t id_) : id(id_) {}
    void on_start(const host::io_caps&) override { ++starts; }
    void on_receive(std::span<const std::uint8_t> f, std::uint64_t) override {
        received.emplace_back(f.begin(), f.end());
    }
    void on_receive_burst(std::span<const host::rx_frame> frames, const host::steering_config*,
                          std::uint64_t now) override {
        for (const auto& f : frames)
            on_receive(f.bytes, now);
    }
    std::size_t on_transmit(std::uint64_t, std::span<host::tx_frame> frames) override {
        const std::size_t n = std::min(frames.size(), backlog);
        for (std::size_t i = 0; i < n; ++i) {
            frames[i].buffer[0] = id;
            frames[i].length = 1;
        }
        backlog -= n;
        return n;
    }
    std::uint64_t next_deadline() const override { return deadline; }

    std::uint8_t id;
    std::vector<std::vector<std::uint8_t>> received;
    std::size_t starts = 0, backlog = 0;
    std::uint64_t deadline = host::no_deadline;
};

std::vector<std::uint8_t> frame_of(const wire::uet_packet_spec& p,
                                   std::uint16_t port = wire::uet_udp_port) {
    std::vector<std::uint8_t> uet(512);
    uet.resize(wire::encode_uet(p, uet));
    wire::frame_spec s;
    s.src_ip = peer_ip;
    s.dst_ip = our_ip;
    s.src_port = 1234;
    s.dst_port = port;
    std::vector<std::uint8_t> f(600);
    f.resize(wire::build_udp_frame(s, uet, f));
    return f;
}

wire::uet_packet_spec ack_to(std::uint16_t dpdcid) {
    wire::pds_ack a;
    a.spdcid = 0x0123;
    a.dpdcid = dpdcid;
    wire::uet_packet_spec p;
    p.pds = a;
    return p;
}

wire::uet_packet_spec request(bool syn, std::uint16_t dpdcid, wire::ses_header ses) {
    wire::pds_rud_rod_request r;
    r.syn = syn;
    r.spdcid = 0x0456;
    r.dpdcid = syn ? 0 : dpdcid;
    r.next_hdr = wire::next_hdr_for(ses);
    wire::uet_packet_spec p;
    p.pds = r;
    p.ses = ses;
    return p;
}

wire::ses_standard_request send_to(std::uint16_t pid) {
    wire::ses_standard_request h;
    h.som = h.eom = true;
    h.pid_on_fep = pid;
    return h;
}

wire::ses_response response_to(std::uint16_t message_id) {
    wire::ses_response r;
    r.message_id = message_id;
    return r;
}

wire::uet_packet_spec rudi(wire::pds_type type, std::uint32_t pkt_id,
                           std::optional<wire::ses_header> ses) {
    wire::pds_rudi h;
    h.type = type;
    h.pkt_id = pkt_id;
    if (ses) h.next_hdr = wire::next_hdr_for(*ses);
    wire::uet_packet_spec p;
    p.pds = h;
    p.ses = ses;
    return p;
}

wire::uet_packet_spec uud_to(std::uint16_t pid) {
    wire::pds_uud h;
    const wire::ses_header ses = send_to(pid);
    h.next_hdr = wire::next_hdr_for(ses);
    wire::uet_packet_spec p;
    p.pds = h;
    p.ses = ses;
    return p;
}

void receive(host::frame_handler& h, const std::vector<std::vector<std::uint8_t>>& frames) {
    std::vector<host::rx_frame> burst;
    for (const auto& f : frames)
        burst.push_back({f, {}, {}});
    h.on_receive_burst(burst, nullptr, 0);
}

struct two_endpoints : ::testing::Test {
    void SetUp() override {
        ASSERT_TRUE(mux.add(0, a));
        ASSERT_TRUE(mux.add(3, b));
        mux.on_start({});
    }
    host::pid_mux mux;
    recorder a{0}, b{3};
};

TEST_F(two_endpoints, each_packet_reaches_the_pid_it_names) {
    const std::vector<std::vector<std::uint8_t>> to_a = {
        frame_of(ack_to(0x0005)),
        frame_of(request(false, 0x0abc, send_to(3))),  // established: the DPDCID decides
        frame_of(request(true, 0, send_to(0))),
        frame_of(request(true, 0, response_to(0x0007))),
        frame_of(rudi(wire::pds_type::rudi_req, 0x30000001, wire::ses_header{send_to(0)})),
    };
    const std::vector<std::vector<std::uint8_t>> to_b = {
        frame_of(ack_to(0x3005)),
        frame_of(request(false, 0x3abc, send_to(0))),
        frame_of(request(true, 0, send_to(3))),
        frame_of(request(true, 0, response_to(0x3007))),
        frame_of(rudi(wire::pds_type::rudi_resp, 0x30020001, std::nullopt)),
        frame_of(uud_to(3)),
    };
    std::vector<std::vector<std::uint8_t>> all;
    for (std::size_t i = 0; i < std::max(to_a.size(), to_b.size()); ++i) {
        if (i < to_a.size()) all.push_back(to_a[i]);
        if (i < to_b.size()) all.push_back(to_b[i]);
    }
    receive(mux, all);
    EXPECT_EQ(a.received, to_a);
    EXPECT_EQ(b.received, to_b);
    EXPECT_EQ(mux.stats().dropped(), 0u);
}

TEST_F(two_endpoints, hostile_frames_are_counted_and_dropped) {
    std::vector<std::vector<std::uint8_t>> bad;
    bad.push_back(frame_of(ack_to(0x7005)));                         // slot 7: nobody
    bad.push_back(frame_of(request(true, 0, send_to(9))));           // pid 9: nobody
    bad.push_back(frame_of(request(true, 0, response_to(0xf001))));  // message id of pid 15
    bad.push_back(frame_of(rudi(wire::pds_type::rudi_resp, 0x50000001, std::nullopt)));
    // A PDC header cut short of its DPDCID, and a SYN request whose SES header is cut.
    auto short_ack = frame_of(ack_to(0x0005));
    short_ack.resize(short_ack.size() - 4);
    bad.push_back(short_ack);
    auto cut_syn = frame_of(request(true, 0, send_to(0)));
    cut_syn.resize(cut_syn.size() - 30);
    bad.push_back(cut_syn);
    // A SYN CTRL names no endpoint; nor does ciphertext after a TSS header.
    wire::pds_ctrl c;
    c.syn = true;
    wire::uet_packet_spec ctrl;
    ctrl.pds = c;
    bad.push_back(frame_of(ctrl));
    auto tss = frame_of(ack_to(0x0005));
    tss[14 + 20 + 8] = static_cast<std::uint8_t>(1u << 3);  // PDS type 1: TSS
    bad.push_back(tss);
    bad.push_back(frame_of(ack_to(0x0005), wire::roce_udp_port));  // RoCEv2, not UET
    receive(mux, bad);
    EXPECT_TRUE(a.received.empty());
    EXPECT_TRUE(b.received.empty());
    const auto& s = mux.stats();
    EXPECT_EQ(s[pid_drop::no_endpoint], 4u);
    EXPECT_EQ(s[pid_drop::truncated], 1u);
    EXPECT_EQ(s[pid_drop::undecodable], 1u);
    EXPECT_EQ(s[pid_drop::unnamed], 2u);
    EXPECT_EQ(s[pid_drop::not_uet], 1u);
    EXPECT_EQ(s.dropped(), bad.size());
}

TEST(pid_mux, one_endpoint_takes_bursts_whole) {
    host::pid_mux mux;
    recorder a{0};
    ASSERT_TRUE(mux.add(0, a));
    // Whatever the frames name: its engine drops a request for another PIDonFEP itself.
    const std::vector<std::vector<std::uint8_t>> frames = {frame_of(ack_to(0x7005)),
                                                           frame_of(ack_to(0x0005))};
    receive(mux, frames);
    EXPECT_EQ(a.received, frames);
    EXPECT_EQ(mux.stats().dropped(), 0u);
}

TEST(pid_mux, pids_are_taken_once_and_in_range) {
    host::pid_mux mux;
    recorder a{0}, b{1};
    EXPECT_EQ(mux.free_pid(), 0);
    EXPECT_TRUE(mux.add(0, a));
    EXPECT_FALSE(mux.add(0, b));
    EXPECT_FALSE(mux.add(wire::max_fep_pids, b));
    EXPECT_EQ(mux.free_pid(), 1);
    mux.on_start({});
    EXPECT_TRUE(mux.add(1, b));
    EXPECT_EQ(b.starts, 1u);  // started when added to a running port
    mux.remove(0);
    EXPECT_EQ(mux.free_pid(), 0);
    EXPECT_EQ(mux.size(), 1u);
}

TEST_F(two_endpoints, transmit_bursts_are_shared) {
    std::vector<std::uint8_t> room(32 * 16);
    std::vector<host::tx_frame> slots(32);
    const auto fill = [&] {
        for (std::size_t i = 0; i < slots.size(); ++i)
            slots[i].reset(std::span(room).subspan(i * 16, 16), nullptr);
        return mux.on_transmit(0, slots);
    };
    a.backlog = b.backlog = 100;
    ASSERT_EQ(fill(), 32u);
    EXPECT_EQ(std::count_if(slots.begin(), slots.end(),
                            [](const host::tx_frame& f) { return f.buffer[0] == 0; }),
              16);
    // An idle one leaves its share to the busy one.
    a.backlog = 0;
    ASSERT_EQ(fill(), 32u);
    EXPECT_EQ(b.backlog, 100u - 16 - 32);
    a.deadline = 7;
    b.deadline = 9;
    EXPECT_EQ(mux.next_deadline(), 7u);
}

}  // namespace
