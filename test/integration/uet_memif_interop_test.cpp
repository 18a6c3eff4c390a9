// uet's own memif port against DPDK's net_memif, in this process, both roles each way: the
// protocol (handshake, ring layout, head/tail ownership, posted buffers) is the one net_memif
// and libmemif speak, so either end may be either.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <span>
#include <string>

#include "dpdk/port.hpp"
#include "memif/memif_port.hpp"

namespace uet {
namespace {

std::size_t frame_length(std::uint32_t seq) {
    return 60 + (seq * 53) % 1400;
}

// Sends numbered frames; counts those received in order with the right length and content.
// They are ARP frames to the broadcast address (DPDK's port passes only what the stack takes:
// UET, RoCE, ARP, ICMP), the number behind the Ethernet header, a pattern after it.
constexpr std::size_t seq_at = 14;
class sequence_handler final : public host::frame_handler {
  public:
    std::uint32_t to_send = 0, sent = 0, received = 0, bad = 0;

    void on_receive(std::span<const std::uint8_t> f, std::uint64_t) override {
        std::uint32_t seq = ~0u;
        if (f.size() >= seq_at + 4) std::memcpy(&seq, f.data() + seq_at, 4);
        bool ok = seq == received && f.size() == frame_length(seq);
        for (std::size_t i = seq_at + 4; ok && i < f.size(); ++i)
            ok = f[i] == static_cast<std::uint8_t>(seq + i);
        bad += !ok;
        received += ok;
    }
    std::size_t on_transmit(std::uint64_t, std::span<host::tx_frame> frames) override {
        std::size_t n = 0;
        for (; n < frames.size() && sent < to_send; ++n, ++sent) {
            const std::size_t len = frame_length(sent);
            std::uint8_t* b = frames[n].buffer.data();
            std::memset(b, 0xff, 12);
            b[12] = 0x08;
            b[13] = 0x06;
            std::memcpy(b + seq_at, &sent, 4);
            for (std::size_t i = seq_at + 4; i < len; ++i)
                frames[n].buffer[i] = static_cast<std::uint8_t>(sent + i);
            frames[n].length = len;
        }
        return n;
    }
    std::uint64_t next_deadline() const override { return host::no_deadline; }
};

class interop : public ::testing::TestWithParam<bool> {  // true: uet_memif is the server
  protected:
    void SetUp() override {
        dir_ = std::filesystem::temp_directory_path() / ("uet-interop-" + std::to_string(getpid()));
        std::filesystem::create_directories(dir_);
        const std::string sock = (dir_ / "s.sock").string();
        const bool uet_server = GetParam();
        dpdk::port_config dc;
        dc.device = std::string("net_memif0,role=") + (uet_server ? "client" : "server") +
                    ",socket=" + sock + ",socket-abstract=no";
        dc.quiet = true;
        dc.goodbye_timeout_ms = 200;
        std::string why;
        auto mc = memif::parse_device(std::string("uet_memif0,role=") +
                                          (uet_server ? "server" : "client") + ",socket=" + sock,
                                      why);
        ASSERT_TRUE(mc) << why;
        mc->quiet = true;
        if (uet_server) {
            uet_ = memif::port::open(*mc);
            dpdk_ = dpdk::port::open(dc);
        } else {
            dpdk_ = dpdk::port::open(dc);
            uet_ = memif::port::open(*mc);
        }
        for (int i = 0; i < 10000 && !(uet_->connected() && dpdk_->link().up); ++i) {
            uet_->queue().receive_burst(uh_, 0);
            usleep(1000);
        }
        ASSERT_TRUE(uet_->connected());
        ASSERT_TRUE(dpdk_->wait_link_up(10'000));
    }
    void TearDown() override {
        uet_.reset();  // DISCONNECT first: the DPDK port then closes on a link that is down
        dpdk_.reset();
        std::filesystem::remove_all(dir_);
    }

    std::filesystem::path dir_;
    std::unique_ptr<memif::port> uet_;
    std::unique_ptr<dpdk::port> dpdk_;
    sequence_handler uh_, dh_;
};

TEST_P(interop, frames_cross_both_ways_with_dpdk_net_memif) {
    uh_.to_send = 3000;
    dh_.to_send = 3000;
    for (int i = 0; i < 200000 && (uh_.received < 3000 || dh_.received < 3000); ++i) {
        uet_->queue().transmit_burst(uh_, 0);
        dpdk_->queue().transmit_burst(dh_, 0);
        dpdk_->queue().receive_burst(dh_, 0);
        uet_->queue().receive_burst(uh_, 0);
    }
    EXPECT_EQ(uh_.received, 3000u);
    EXPECT_EQ(dh_.received, 3000u);
    EXPECT_EQ(uh_.bad + dh_.bad, 0u);
    EXPECT_EQ(uet_->counters().rx_bad_descriptor, 0u);
}

INSTANTIATE_TEST_SUITE_P(roles, interop, ::testing::Bool(),
                         [](const auto& p) { return p.param ? "uet_server" : "uet_client"; });

}  // namespace
}  // namespace uet
