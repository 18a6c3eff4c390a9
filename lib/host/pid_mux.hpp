// Several endpoints behind one fabric endpoint (one IPv4 address, one host stack): the frame
// handler between the host stack and the endpoints' own handlers (their engines). UET tells the
// endpoints apart by PIDonFEP (wire/uet_fep.hpp): a received UET frame goes to the handler of the
// PIDonFEP it names (its DPDCID's top bits for a packet on an established PDC, ACKs, NACKs and
// CTRLs; the SES header's pid_on_fep for a packet that opens state; a response's message id; a
// RUDI response's pkt_id), read at fixed offsets without decoding for most packets. What names
// none, names one no endpoint holds or does not read is counted by reason and dropped.
//
// Transmit shares each burst among the handlers: every one is offered an equal share of the
// slots first, the slots left go round again, and the handler asked first moves on by one each
// burst, so no endpoint starves another. With one handler the mux passes bursts through whole,
// as a port of one endpoint always did (its engine drops requests for another PIDonFEP itself).
// Sized when built: no allocation after construction.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "host/frame_handler.hpp"
#include "wire/uet_fep.hpp"
#include "wire/uet_packet.hpp"

namespace uet::host {

enum class pid_drop : std::uint8_t {
    truncated,    // too short for the header that names the endpoint
    undecodable,  // that header does not decode
    unnamed,      // names no endpoint (a SYN CTRL, a small response, TSS ciphertext)
    no_endpoint,  // names a PIDonFEP no open endpoint holds
    not_uet,      // not a UET frame (RoCEv2 with several endpoints open)
    count_
};
inline constexpr std::size_t pid_drop_count = static_cast<std::size_t>(pid_drop::count_);
const char* to_string(pid_drop d) noexcept;

struct pid_mux_stats {
    std::array<std::uint64_t, pid_drop_count> drops{};
    std::uint64_t operator[](pid_drop d) const noexcept {
        return drops[static_cast<std::size_t>(d)];
    }
    std::uint64_t dropped() const noexcept;
};

class pid_mux final : public frame_handler {
  public:
    pid_mux();

    // Frames for pid go to h from now on (h is started first when the port already is). False
    // when pid is out of range or has a handler.
    bool add(std::uint16_t pid, frame_handler& h);
    // pid's frames are dropped from now on.
    void remove(std::uint16_t pid) noexcept;
    std::size_t size() const noexcept { return open_; }
    // With one handler: its PIDonFEP.
    std::uint16_t only() const noexcept { return only_; }
    // The lowest PIDonFEP no handler holds, or wire::max_fep_pids when every one is taken.
    std::uint16_t free_pid() const noexcept;

    void on_start(const io_caps& caps) override;
    void on_receive(std::span<const std::uint8_t> frame, std::uint64_t now) override;
    void on_receive_burst(std::span<const rx_frame> frames, const steering_config* by,
                          std::uint64_t now) override;
    bool takes_split_frames() const noexcept override { return true; }
    std::size_t on_transmit(std::uint64_t now, std::span<tx_frame> frames) override;
    std::uint64_t next_deadline() const override;

    const pid_mux_stats& stats() const noexcept { return stats_; }

  private:
    struct route {
        frame_handler* h = nullptr;
        std::size_t pending = 0;  // frames of the burst being split, in rx_[pid * burst_size]
        bool more = false;        // filled its share of the last transmit burst
    };
    // The PIDonFEP a frame is for, or max_fep_pids (counted).
    std::uint16_t route_of(const rx_frame& f, const classification& c) noexcept;
    void drop(pid_drop d) noexcept { ++stats_.drops[static_cast<std::size_t>(d)]; }

    std::array<route, wire::max_fep_pids> routes_{};
    std::vector<rx_frame> rx_;  // a burst's frames, by route
    std::size_t open_ = 0;
    std::uint16_t only_ = 0;   // with one route open: its PIDonFEP
    std::uint16_t first_ = 0;  // the route asked first at the next transmit
    bool started_ = false;
    io_caps caps_;
    wire::uet_packet scratch_;          // a packet decoded to find its endpoint
    std::vector<std::uint8_t> joined_;  // a frame in pieces, joined to be decoded (max_frame)
    pid_mux_stats stats_;
};

}  // namespace uet::host
