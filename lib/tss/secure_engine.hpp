// A frame engine whose every frame is secured: it wraps the engine of one endpoint (UET's) and
// stands between it and whatever carries its frames. Each frame the engine hands out is sealed
// as it leaves (transmit), so every transmission, a retransmission too, takes a fresh TSC; each
// received burst is authenticated and decrypted before the engine sees it, and a frame that
// fails is dropped and counted by reason (sublayer counters) without reaching the PDS.
//
// One sublayer (its OpenSSL contexts made once) per wrapper, hence per engine and core; the
// buffers are sized when it is built, so a burst allocates nothing. Sans-I/O like the engine.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "tss/sublayer.hpp"
#include "wire/frame_engine.hpp"

namespace uet::tss {

// Bytes a frame grows by when sealed under a domain of this configuration: the payload per
// packet of a secured engine shrinks by this much, so that its frames keep to the MTU.
std::size_t seal_overhead(const domain_config& cfg) noexcept;

class secure_engine final : public frame_engine {
  public:
    // inner must outlive this. max_plain_frame: the longest frame inner builds (and accepts:
    // a received frame that opens to more is no peer's of the same MTU). burst: frames sealed
    // or opened per step (a larger call is taken in steps of this many).
    // Throws std::invalid_argument as secure_domain does.
    secure_engine(frame_engine& inner, const domain_config& cfg,
                  std::span<const std::uint8_t, key_size> key, std::size_t max_plain_frame,
                  std::size_t burst = 64);
    secure_engine(const secure_engine&) = delete;
    secure_engine& operator=(const secure_engine&) = delete;

    void receive_burst(std::span<const std::span<const std::uint8_t>> frames,
                       const wire::frame_rest* rests, std::uint64_t now) override;
    // inner's frames, sealed into the caller's rooms where they fit, else into buffers of this
    // wrapper (valid until the next call). A frame that cannot be sealed (the TSC used up) is
    // counted (counters::seal_errors) and not sent: the engine's retransmission ends its
    // message in an error.
    std::size_t transmit(std::uint64_t now, std::span<tx_frame> out) override;
    std::uint64_t next_deadline() const override { return inner_.next_deadline(); }
    void stop_data() noexcept override { inner_.stop_data(); }

    // The sublayer's counters; drops[malformed] also counts received frames longer than any
    // sealed frame of this MTU, or handed over in two pieces that do not add up.
    counters stats() const noexcept;
    secure_domain& domain() noexcept { return *domain_; }

  private:
    frame_engine& inner_;
    sublayer sublayer_;
    secure_domain* domain_ = nullptr;
    std::size_t slot_size_, burst_;
    std::unique_ptr<std::uint8_t[]> tx_buf_, rx_buf_;
    std::vector<tx_frame> plain_out_;
    std::vector<seal_item> seals_;
    std::vector<std::span<const std::uint8_t>> plain_in_;
    std::uint64_t unreadable_ = 0;
};

}  // namespace uet::tss
