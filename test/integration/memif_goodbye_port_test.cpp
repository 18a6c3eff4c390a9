// The memif leave handshake on real ports: both ends of one memif link in this process, the
// client side driven by hand (raw bursts) so that each step is deterministic.
//
// Why: a peer resends `leaving` until it hears an answer, so one burst may carry several. A port
// that answered each copy could burst on rings the peer was already unmapping (a crash seen in
// perf_memif_pair, 1 pair in 40 under load). Once one answer is in the ring, no other may follow.
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "dpdk/dpdk_include.hpp"  // DPDK headers, with the warnings they raise in C++20 off
#include "dpdk/goodbye.hpp"
#include "dpdk/port.hpp"

namespace uet::dpdk {
namespace {

using clock_type = std::chrono::steady_clock;

// Counts what the port hands up; transmits `to_send` frames of 60 bytes when asked.
class counting_handler final : public host::frame_handler {
  public:
    std::size_t received = 0, to_send = 0;

    void on_receive(std::span<const std::uint8_t>, std::uint64_t) override { ++received; }
    std::size_t on_transmit(std::uint64_t, std::span<host::tx_frame> frames) override {
        std::size_t n = 0;
        for (; n < frames.size() && to_send != 0; ++n, --to_send) {
            std::fill_n(frames[n].buffer.begin(), 60, std::uint8_t{0xff});
            frames[n].length = 60;
        }
        return n;
    }
    std::uint64_t next_deadline() const override { return ~std::uint64_t{0}; }
};

class memif_pair : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = std::filesystem::temp_directory_path() / ("uet-goodbye-" + std::to_string(getpid()));
        std::filesystem::create_directories(dir_);
        const std::string sock = (dir_ / "s.sock").string();
        server_ = port::open(config("net_memif0,role=server,socket=" + sock));
        client_ = port::open(config("net_memif1,role=client,socket=" + sock));
        ASSERT_TRUE(server_->wait_link_up(10'000));
        ASSERT_TRUE(client_->wait_link_up(10'000));
        pool_ = rte_pktmbuf_pool_create("goodbye_test", 255, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
                                        SOCKET_ID_ANY);
        ASSERT_NE(pool_, nullptr);
        // memif's client hands the server room in the server-to-client ring on its receive
        // burst: until its first one, the server can send nothing.
        EXPECT_EQ(client_receive().others, 0u);
    }

    void TearDown() override {
        // Each test ends with the server having answered the client's goodbye, so that the
        // ports close one after the other: the server makes no burst any more, the client's
        // close() goes unanswered and closes after its (short) timeout, and the server then
        // waits, without a burst, for the link to go down.
        if (server_ && client_ && server_->counters().peer_left == 0) {
            counting_handler h;
            client_send(goodbye::kind::leaving, 1);
            server_receive(h, 1);
            client_receive();
        }
        client_.reset();
        server_.reset();
        if (pool_ != nullptr) rte_mempool_free(pool_);
        std::filesystem::remove_all(dir_);
    }

    static port_config config(std::string device) {
        port_config c;
        c.device = std::move(device) + ",socket-abstract=no";
        c.quiet = true;
        c.mbufs = 1023;
        c.goodbye_timeout_ms = 200;
        return c;
    }

    // The client's raw side: what the test sends as the peer, and every frame it gets back.
    void client_send(goodbye::kind k, unsigned copies) {
        std::vector<rte_mbuf*> ms(copies);
        ASSERT_EQ(rte_pktmbuf_alloc_bulk(pool_, ms.data(), copies), 0);
        for (rte_mbuf* m : ms) {
            const std::size_t len = goodbye::build(
                {rte_pktmbuf_mtod(m, std::uint8_t*), rte_pktmbuf_tailroom(m)}, client_->mac(), k);
            ASSERT_EQ(len, goodbye::frame_size);
            m->data_len = static_cast<std::uint16_t>(len);
            m->pkt_len = static_cast<std::uint32_t>(len);
        }
        ASSERT_EQ(rte_eth_tx_burst(client_->port_id(), 0, ms.data(), copies), copies);
    }

    struct client_view {
        unsigned acks = 0, others = 0;
    };
    // memif's tx puts a frame in the shared ring before it returns: what the server sent is
    // there now, so reading until the ring is empty sees all of it.
    client_view client_receive() {
        client_view v;
        std::array<rte_mbuf*, 32> pkts;
        for (std::uint16_t n;
             (n = rte_eth_rx_burst(client_->port_id(), 0, pkts.data(), 32)) != 0;) {
            for (std::uint16_t i = 0; i < n; ++i) {
                const auto g = goodbye::parse(
                    {rte_pktmbuf_mtod(pkts[i], const std::uint8_t*), pkts[i]->data_len});
                if (g && g->k == goodbye::kind::ack && g->sender == server_->mac())
                    ++v.acks;
                else
                    ++v.others;
            }
            rte_pktmbuf_free_bulk(pkts.data(), n);
        }
        return v;
    }

    // Bursts the server until it has taken `frames` frames (the ring has them: no timing).
    void server_receive(counting_handler& h, std::size_t frames) {
        const auto give_up = clock_type::now() + std::chrono::seconds(10);
        std::size_t got = 0;
        while (got < frames && clock_type::now() < give_up)
            got += server_->queue().receive_burst(h, 0);
        ASSERT_EQ(got, frames);
    }

    std::filesystem::path dir_;
    std::unique_ptr<port> server_, client_;
    rte_mempool* pool_ = nullptr;
};

TEST_F(memif_pair, several_goodbyes_in_one_burst_get_one_answer) {
    counting_handler h;
    client_send(goodbye::kind::leaving, 3);
    server_receive(h, 3);
    EXPECT_EQ(h.received, 0u);  // the handshake's frames are the port's own
    const client_view v = client_receive();
    EXPECT_EQ(v.acks, 1u);
    EXPECT_EQ(v.others, 0u);
    EXPECT_EQ(server_->counters().peer_left, 1u);

    // A copy that arrives later, in a burst of its own, is not answered either: the server
    // makes no burst at all now, so it is not even read.
    client_send(goodbye::kind::leaving, 1);
    EXPECT_EQ(server_->queue().receive_burst(h, 0), 0u);
    EXPECT_EQ(client_receive().acks, 0u);
}

TEST_F(memif_pair, after_the_answer_frames_to_the_peer_are_dropped_and_counted) {
    counting_handler h;
    h.to_send = 5;
    EXPECT_EQ(server_->queue().transmit_burst(h, 0), 5u);
    EXPECT_EQ(client_receive().others, 5u);  // the link works before the goodbye

    client_send(goodbye::kind::leaving, 1);
    server_receive(h, 1);
    EXPECT_EQ(client_receive().acks, 1u);
    h.to_send = 5;
    EXPECT_EQ(server_->queue().transmit_burst(h, 0), 0u);
    EXPECT_EQ(h.to_send, 0u);  // taken from the handler, as on a link that loses everything
    EXPECT_EQ(client_receive().others, 0u);
    EXPECT_EQ(server_->counters().tx_peer_left, 5u);
}

TEST_F(memif_pair, an_answer_nobody_asked_for_changes_nothing) {
    counting_handler h;
    client_send(goodbye::kind::ack, 1);
    server_receive(h, 1);
    EXPECT_EQ(server_->counters().peer_left, 0u);
    h.to_send = 2;
    EXPECT_EQ(server_->queue().transmit_burst(h, 0), 2u);
    EXPECT_EQ(client_receive().others, 2u);
}

}  // namespace
}  // namespace uet::dpdk
