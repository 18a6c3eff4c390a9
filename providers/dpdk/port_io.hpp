// The burst paths of one port queue (private to the driver).
#pragma once

#include <array>
#include <chrono>
#include <vector>

#include "dpdk/goodbye.hpp"
#include "dpdk/port.hpp"
#include "host/frame_handler.hpp"

namespace uet::dpdk {

class port::queue_io final : public host::packet_io {
  public:
    queue_io(port& owner, std::uint16_t queue, std::size_t frame_room);
    ~queue_io() override;

    host::io_caps caps() const override { return owner_.caps_; }
    std::size_t receive_burst(host::frame_handler& h, std::uint64_t now) override;
    std::size_t transmit_burst(host::frame_handler& h, std::uint64_t now) override;

    void drain() noexcept;
    // close() on a memif port: says goodbye on this queue and waits for the answer.
    leave_outcome leave(std::uint32_t timeout_ms) noexcept;
    // close() after the peer said goodbye: waits, without a burst, for the peer to close first
    // (it bursts until it has our answer).
    leave_outcome after_peer_left(std::uint32_t timeout_ms) noexcept;
    void add_counters(port_counters& total) const noexcept;

  private:
    bool refill() noexcept;
    bool prepare(host::tx_frame& f) noexcept;
    bool attach_payload(rte_mbuf* m, const host::tx_frame& f) noexcept;
    rte_mbuf* take_ext_mbuf() noexcept;
    void apply_offloads(rte_mbuf* m, const host::tx_frame& f) noexcept;
    // The peer left: what the handler sends is dropped and counted, nothing touches the rings.
    std::size_t discard_burst(host::frame_handler& h, std::uint64_t now) noexcept;
    // A goodbye frame (memif) is acted on here and goes no further: true.
    bool take_goodbye(std::span<const std::uint8_t> frame) noexcept;
    // Hands the frames kept from a burst to h at once.
    void flush(host::frame_handler& h, host::burst_room<host::rx_frame>& frames, std::size_t& kept,
               std::uint64_t now);
    void on_goodbye(const goodbye::message& m) noexcept;
    bool send_goodbye(goodbye::kind k) noexcept;
    // Offers the answer to the peer's goodbye again if the TX ring refused it (ack_owed_).
    void retry_owed_ack() noexcept;
    bool wait_link_down(std::chrono::steady_clock::time_point deadline) noexcept;

    port& owner_;
    std::uint16_t queue_;
    std::size_t frame_room_;
    bool classify_;
    bool watch_goodbye_;  // memif: look for the peer's goodbye frames
    std::array<host::tx_frame, host::burst_size> slots_{};
    // The handler filled no slot since the last refill(): every slot still holds its mbuf and
    // its reset state, so an idle poll costs no refill.
    bool slots_ready_ = false;
    // Frames the TX ring had no room for: they go first in the next burst, and the handler is
    // asked for that many fewer. A full ring is back-pressure from a slow receiver, not loss;
    // dropping there would make the engine wait a retransmit timeout for frames it believes sent.
    std::array<rte_mbuf*, host::burst_size> out_{};
    std::uint16_t backlog_ = 0;          // out_[0, backlog_) are prepared and unsent
    std::vector<std::uint8_t> scratch_;  // a multi-segment frame made contiguous
    // Data-less mbufs for zero-copy payloads, taken from the pool a burst at a time: one
    // rte_pktmbuf_alloc per packet would cost a mempool call and a thread-local lookup each.
    std::array<rte_mbuf*, host::burst_size> ext_stash_{};
    unsigned ext_stashed_ = 0;  // ext_stash_[0, ext_stashed_) are ready
    bool iova_is_va_ = false;
    port_counters c_;
};

}  // namespace uet::dpdk
