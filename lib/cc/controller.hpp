// Per-PDC congestion control hooks. The PDS engine calls them on every ACK, NACK and retransmit
// timeout and asks window_bytes() before sending new data. Controllers are small values that
// live inside the PDC table entry (no heap per PDC); NSCC (nscc.hpp) and RCCC (rccc.hpp) sit
// behind the same interface, any_controller (cc_factory.hpp) holds whichever one a PDC runs.
#pragma once

#include <cstdint>

namespace uet::cc {

class controller {
  public:
    virtual ~controller() = default;
    // bytes newly acknowledged by this ACK, its RTT sample (0 when the ACK gave none), whether
    // the ACK echoed an ECN-CE mark.
    virtual void on_ack(std::uint32_t bytes, std::uint64_t rtt_ns, bool ecn,
                        std::uint64_t now) noexcept = 0;
    // A NACK for a packet of `bytes`; trimmed when a switch cut it (congestion, not corruption).
    virtual void on_nack(std::uint32_t bytes, bool trimmed, std::uint64_t now) noexcept = 0;
    virtual void on_timeout(std::uint64_t now) noexcept = 0;
    // Bytes the PDC may have in flight.
    virtual std::uint64_t window_bytes() const noexcept = 0;

    // ---- optional hooks (compatible extensions; the defaults keep the window semantics) ----

    // A packet of `bytes` (new or retransmitted) leaves now. Credit-based control spends credit.
    // Only credit controllers (uses_credit()) may act on it, or gate on anything but the window
    // in may_send(): the engine's transmit runs, which credit PDCs do not take, ask
    // window_bytes() once and apply the window rule below to each packet without calling either.
    virtual void on_send(std::uint32_t /*bytes*/, std::uint64_t /*now*/) noexcept {}
    // May a packet of `bytes` leave with `inflight_bytes` outstanding? The window rule (one packet
    // always fits in an empty pipe) unless the controller gates on something else (RCCC: credit).
    virtual bool may_send(std::uint64_t inflight_bytes, std::uint32_t bytes) const noexcept {
        return window_admits(inflight_bytes, bytes, window_bytes());
    }
    // The window rule itself, for callers that asked window_bytes() once (transmit runs).
    static bool window_admits(std::uint64_t inflight_bytes, std::uint32_t bytes,
                              std::uint64_t window) noexcept {
        return inflight_bytes == 0 || inflight_bytes + bytes <= window;
    }
    // True once after the controller decided the last signal meant "this path is bad, the network
    // is not" (NSCC: ECN-marked but short delay); the engine then tells the path selector.
    virtual bool take_path_switch() noexcept { return false; }
    // Receiver credit arrived: the 24-bit credit field of an ACK_CC (credit form) or the payload
    // of a CTRL CREDIT. Ignored by controllers that do not run on credit.
    virtual void on_credit(std::uint32_t /*credit_field*/, std::uint64_t /*now*/) noexcept {}
    // Whether the engine must send RUD_CC/ROD_CC requests carrying credit_target().
    virtual bool uses_credit() const noexcept { return false; }
    // The 24-bit credit_target for the next request, given the bytes still waiting to be sent
    // (new data plus retransmissions).
    virtual std::uint32_t credit_target(std::uint64_t /*backlog_bytes*/) const noexcept {
        return 0;
    }

  protected:
    controller() = default;
    controller(const controller&) = default;
    controller& operator=(const controller&) = default;
};

// The baseline: a constant window, whatever the network says.
class fixed_window final : public controller {
  public:
    explicit fixed_window(std::uint64_t window = 0) noexcept : window_(window) {}
    void on_ack(std::uint32_t, std::uint64_t, bool, std::uint64_t) noexcept override {}
    void on_nack(std::uint32_t, bool, std::uint64_t) noexcept override {}
    void on_timeout(std::uint64_t) noexcept override {}
    std::uint64_t window_bytes() const noexcept override { return window_; }

  private:
    std::uint64_t window_;
};

}  // namespace uet::cc
