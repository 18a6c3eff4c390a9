// One DPDK ethdev port: opened from a vdev string, an interface name or a PCI address
// (device.hpp), with its mbuf pools, RX/TX queues, offloads, steering and a clean shutdown that
// detaches the device so the same vdev can be opened again in the same process.
// Each queue is a host::packet_io that a dpdk::poll_loop drives.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "host/frame_handler.hpp"
#include "host/net_port.hpp"
#include "host/steering.hpp"
#include "wire/eth.hpp"

struct rte_mempool;
struct rte_mbuf;
struct rte_flow;
struct rte_mbuf_ext_shared_info;

namespace uet::dpdk {

struct port_config {
    std::string device;  // see device.hpp
    std::uint16_t rx_queues = 1, tx_queues = 1;
    std::uint16_t rx_descriptors = 1024, tx_descriptors = 1024;
    std::uint32_t mtu = 1500;  // up to 9000; clamped to what the port allows
    // Use mtu for buffers and frame sizes even where ethdev refuses it, because the caller has
    // configured the link for it (the kernel interface of af_packet/tap, both memif ends).
    bool trust_link_mtu = false;
    std::uint32_t mbufs = 8191;  // per pool (2^n - 1 is what rte_mempool likes best)
    // rte_flow rules send UDP to these ports to steer_queue; other traffic stays on queue 0.
    host::steering_config steering;
    std::uint16_t steer_queue = 0;
    bool try_flow_rules = true;
    bool quiet = false;  // no log lines on open/close
    // Count the TSC ticks of each stage of the bursts that move frames (port_counters::*_ticks):
    // a clock read around the driver's and the stack's part of each busy burst, for --stats.
    bool time_stages = false;
    // memif only: how long close() waits for the peer to answer that this port is leaving
    // (goodbye.hpp). Only a peer that does not poll its port (or is not uet) makes close() wait
    // this long. Generous: a peer that polls only after we gave up may crash on our close, and
    // two busy processes on a loaded host can take seconds to answer.
    std::uint32_t goodbye_timeout_ms = 10'000;
};

enum class steering_mode : std::uint8_t { hardware, software };

struct offload_info {
    bool multi_seg_tx = false, ipv4_cksum_tx = false, udp_cksum_tx = false;
    bool ipv4_cksum_rx = false, udp_cksum_rx = false, scatter_rx = false;
    std::uint32_t max_rx_pktlen = 0, min_rx_bufsize = 0;
    std::uint16_t min_mtu = 0, max_mtu = 0;
    std::string driver;
    std::string describe() const;  // one line, for logs and reports
};

using port_counters = host::port_counters;

class port final : public host::net_port {
  public:
    // Opens and starts the port (starting the EAL with defaults if it is not up). Throws
    // std::runtime_error with the reason on failure, having undone what it did.
    static std::unique_ptr<port> open(const port_config& cfg);
    ~port() override;
    port(const port&) = delete;
    port& operator=(const port&) = delete;

    // Stops the port, drains its queues, closes it, frees its pools and detaches the device.
    // Idempotent; the destructor calls it.
    void close() noexcept override;

    host::packet_io& queue(std::uint16_t q = 0) override;
    std::uint16_t port_id() const noexcept { return port_id_; }
    const std::string& name() const noexcept { return name_; }
    wire::mac_address mac() const noexcept override { return mac_; }
    std::uint32_t mtu() const noexcept override { return mtu_; }
    bool set_mtu(std::uint32_t mtu);
    const offload_info& offloads() const noexcept { return offloads_; }
    const std::string& driver() const noexcept override { return offloads_.driver; }
    host::io_caps caps() const noexcept override { return caps_; }
    // A virtual device (--vdev: memif, af_packet, af_xdp, tap, pcap...), not a device probed on
    // a bus: its driver copies every frame it sends into a ring or socket of its own.
    bool is_virtual() const noexcept override { return is_vdev_; }
    steering_mode steering() const noexcept { return steering_; }
    bool flow_rules_accepted() const noexcept { return !flows_.empty(); }
    const std::string& flow_refusal() const noexcept { return flow_refusal_; }

    struct link_state {
        bool up = false;
        std::uint32_t speed_mbps = 0;
    };
    link_state link() const;
    // Polls the link until it is up or timeout_ms passed.
    bool wait_link_up(std::uint32_t timeout_ms) const;

    // Memory a tx_frame::ext may point into. Returns the region handle for ext_payload::region.
    // The memory must stay valid until unregister_memory; in_flight() says how many transmitted
    // frames still reference it (the NIC has not released them yet).
    std::uint32_t register_memory(const void* addr, std::size_t length) override;
    bool unregister_memory(std::uint32_t region) override;
    std::uint32_t in_flight(std::uint32_t region) const override;
    // Asks the PMD to free the mbufs it has transmitted (NICs free them lazily), so that
    // in_flight() falls to what is really still queued.
    void reclaim_tx() noexcept override;

    port_counters counters() const override;

  private:
    // memif: how close() left the peer, for its log line (goodbye.hpp). not_tried: not memif,
    // never started, or the link was down. acknowledged: the peer answered our goodbye;
    // yielded: we answered the peer's goodbye while both were closing; peer_closed: the peer
    // closed first (after its goodbye, or without one); timed_out: neither in time.
    enum class leave_outcome : std::uint8_t {
        not_tried,
        acknowledged,
        yielded,
        peer_closed,
        timed_out
    };

    class queue_io;
    struct region {
        const std::uint8_t* addr = nullptr;
        std::size_t length = 0;
        rte_mbuf_ext_shared_info* shinfo = nullptr;
        bool extmem = false, dma_mapped = false;
    };

    explicit port(const port_config& cfg);
    void probe();
    void configure();
    void setup_steering();
    bool is_memif() const noexcept { return is_vdev_ && name_.starts_with("net_memif"); }
    bool memif_zero_copy() const noexcept;
    void log(const std::string& line) const;
    // The peer left and the link has since gone down and come up again (a new connection):
    // clears peer_left_. Called only while peer_left_ is set.
    bool peer_back() noexcept;
    void leave_peer() noexcept;
    bool link_up() const noexcept;
    void settle_peer_disconnect() noexcept;

    port_config cfg_;
    std::string name_, devargs_;
    std::uint16_t port_id_ = 0;
    bool probed_ = false, started_ = false, closed_ = false, detach_ = false;
    bool is_vdev_ = true;
    wire::mac_address mac_;
    std::uint32_t mtu_ = 1500, link_mtu_ = 1500;
    offload_info offloads_;
    host::io_caps caps_;
    steering_mode steering_ = steering_mode::software;
    std::string flow_refusal_;
    std::vector<rte_flow*> flows_;
    rte_mempool* pool_ = nullptr;      // data mbufs
    rte_mempool* ext_pool_ = nullptr;  // data-less mbufs for attached external buffers
    std::vector<std::unique_ptr<queue_io>> queues_;
    std::vector<region> regions_;
    std::uint64_t tx_offload_flags_ = 0;
    // Set by the queue that received the peer's goodbye; read by every queue each burst.
    std::atomic<bool> peer_left_{false}, link_went_down_{false};
    // The answer to the peer's goodbye found the TX ring full: each burst offers it again (the
    // peer waits for it, draining the ring, before it closes).
    std::atomic<bool> ack_owed_{false};
    leave_outcome left_ = leave_outcome::not_tried;
};

}  // namespace uet::dpdk
