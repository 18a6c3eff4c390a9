// The frame exchange of the integration tests, as a sans-I/O frame_handler that sits under a
// host::host_stack (so it works at the IP level; ARP and MACs are the host stack's job).
// Each side sends `count` UDP frames whose sizes sweep min_frame..max_frame, with a sequence
// number and a payload pattern the receiver checks byte by byte. A go-back-N window with
// cumulative acks makes it reliable over links that drop (af_packet rings, the kernel), so the
// test asserts on content, never on timing. Every frame carries the sender's nonce (random per
// process), so a restarted peer is recognised and the exchange starts over with it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "host/frame_handler.hpp"
#include "wire/reject.hpp"

namespace uet::itest {

struct exchange_config {
    std::uint32_t my_ip = 0, peer_ip = 0;  // host order
    std::uint32_t count = 3000;            // frames each side sends
    std::uint32_t min_frame = 64, max_frame = 9014;
    std::uint32_t window = 64;
    std::uint64_t rto_ns = 50'000'000;  // go back to the last ack after this
    std::uint64_t fin_interval_ns = 20'000'000;
    std::uint64_t linger_ns = 2'000'000'000;  // done, peer's fin not seen: quiet this long
    std::uint16_t udp_port = 4793;
    std::uint32_t nonce = 1;  // ours; never 0
};

struct exchange_counters {
    std::uint64_t data_rx = 0, data_tx = 0, acks_tx = 0, fins_tx = 0, retransmits = 0;
    std::uint64_t duplicates = 0, out_of_order = 0, corrupt = 0, bad_magic = 0, wrong_peer = 0;
    std::uint64_t stale_nonce = 0, abandoned = 0, bytes_rx = 0;
    std::array<std::uint64_t, wire::reject_reason_count> rejects{};
};

class exchange final : public host::frame_handler {
  public:
    explicit exchange(const exchange_config& cfg);

    void on_start(const host::io_caps& caps) override { caps_ = caps; }
    void on_receive(std::span<const std::uint8_t> frame, std::uint64_t now) override;
    std::size_t on_transmit(std::uint64_t now, std::span<host::tx_frame> frames) override;
    std::uint64_t next_deadline() const override;

    // All our frames acked and all of the peer's received, in order and intact.
    bool done() const noexcept { return acked_ == cfg_.count && expected_ == cfg_.count; }
    // Done, and the peer said it is done too (and our last fin went out), or the peer went
    // quiet for linger_ns after we were done.
    bool finished(std::uint64_t now) const noexcept;
    std::uint64_t last_rx() const noexcept { return last_rx_; }
    const exchange_counters& counters() const noexcept { return c_; }
    std::string progress() const;  // "sent-acked 12/3000 received 40/3000 ..."

    // Frame size of sequence number seq (deterministic, both sides agree), and the pattern byte.
    static std::uint32_t frame_size(const exchange_config& cfg, std::uint32_t seq) noexcept;
    static std::uint8_t pattern(std::uint32_t seq, std::size_t i) noexcept {
        return static_cast<std::uint8_t>(seq * 131u + i * 7u + 1u);
    }
    static constexpr std::size_t header_size = 22;  // our header inside the UDP payload

  private:
    enum kind : std::uint8_t { data = 1, ack = 2, fin = 3 };
    void restart(std::uint32_t peer_nonce) noexcept;
    bool adopt(std::uint32_t nonce) noexcept;
    std::size_t build(host::tx_frame& f, kind k, std::uint32_t seq) noexcept;

    exchange_config cfg_;
    host::io_caps caps_;
    std::uint32_t peer_nonce_ = 0;
    std::array<std::uint32_t, 4> old_nonces_{};
    std::uint32_t expected_ = 0;  // next in-order sequence number from the peer
    std::uint32_t acked_ = 0;     // the peer has received our [0, acked_)
    std::uint32_t next_ = 0;      // next sequence number to send
    std::uint32_t sent_max_ = 0;  // highest next_ ever reached (acks beyond it are bogus)
    bool ack_due_ = false, peer_done_ = false, final_fin_sent_ = false;
    std::uint64_t last_progress_ = 0, last_tx_ = 0, last_rx_ = 0, done_at_ = 0;
    std::uint16_t ip_id_ = 0;
    exchange_counters c_;
};

}  // namespace uet::itest
