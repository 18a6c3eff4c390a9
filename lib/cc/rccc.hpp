// RCCC, receiver-controlled (credit) congestion control in the EQDS style: the receiver paces out
// credit ("pulls") for its port at just under line rate, round robin over the senders that want
// to send to it; a sender sends only with credit, except for a first speculative window.
// Sans-I/O: the engine moves the credit values in packets; these classes only do the arithmetic.
//
// Design (UET 1.0 RCCC as uet-htsim models it: htsim/sim/uec.cpp UecPullPacer, UecSink::pull,
// UecSrc::computePullTarget/handlePull/stopSpeculating; our own code):
// - One rccc_pacer per receiving port, shared by every PDC that receives on it. The resource
//   being protected is the receiver's downlink: pacing per PDC would grant N x line rate in an
//   N:1 incast. Each receiving PDC embeds an rccc_receiver (its grant and target counters and an
//   intrusive queue link), so the pacer never allocates.
// - Credit is counted in 256-byte quanta (htsim UEC_PULL_QUANTUM) and carried as a CUMULATIVE
//   24-bit counter, wrapping modulo 2^24 (htsim pull numbers): a lost, duplicated or reordered
//   credit packet is repaired by the next one and can never grant twice.
//     receiver -> sender: ACK_CC with cc_type CREDIT, ack_cc_state.credit (24 bits) =
//                         rccc_receiver::credit_field(); CTRL with ctrl_type CREDIT, payload =
//                         the same value (the 8 upper bits zero).
//     sender -> receiver: RUD_CC/ROD_CC request credit_target (24 bits) =
//                         controller::credit_target(backlog): the cumulative credit it wants.
#pragma once

#include <cstdint>
#include <optional>

#include "cc/controller.hpp"

namespace uet::cc {

// 24-bit serial arithmetic on credit counters.
namespace credit {
inline constexpr std::uint32_t field_mask = 0xFFFFFF;
inline constexpr std::uint32_t quantum = 256;  // bytes per credit unit (htsim UEC_PULL_QUANTUM)

// a - b as a signed 24-bit distance: positive when a is ahead of b.
constexpr std::int32_t distance(std::uint32_t a, std::uint32_t b) noexcept {
    const std::uint32_t d = (a - b) & field_mask;
    return d & 0x800000u ? static_cast<std::int32_t>(d) - 0x1000000 : static_cast<std::int32_t>(d);
}
constexpr std::uint32_t advance(std::uint32_t field, std::uint32_t quanta) noexcept {
    return (field + quanta) & field_mask;
}
constexpr std::uint32_t quanta_ceil(std::uint64_t bytes) noexcept {
    return static_cast<std::uint32_t>((bytes + quantum - 1) / quantum);
}
}  // namespace credit

// Engine-wide RCCC parameters; senders and pacers keep a pointer, so it must outlive them.
struct rccc_params {
    double bytes_per_ns = 12.5;   // receiver port line rate
    double pace_fraction = 0.99;  // grant at just under line rate (htsim pull_rate_modifier)
    std::uint32_t mtu = 4096;     // payload bytes of a full packet
    std::uint32_t credit_per_pull = 4 * 4096;  // 4 MTU per pull (htsim _mtus_per_pull = 4)
    std::uint64_t speculative_bytes = 150000;  // a new sender's credit before any grant: ~1 BDP
    std::uint64_t max_credit = 225000;         // credit cap, 1.5 x BDP (htsim caps at maxwnd)

    static rccc_params from_link(double gbps, std::uint64_t base_rtt_ns,
                                 std::uint32_t mtu) noexcept;
};

// Sender side, one per sending PDC. window_bytes() is the credit in hand; the engine must gate
// with may_send() (credit, not in-flight bytes) and report every packet with on_send().
class rccc_sender final : public controller {
  public:
    explicit rccc_sender(const rccc_params& params) noexcept;

    void on_ack(std::uint32_t, std::uint64_t, bool, std::uint64_t) noexcept override;
    void on_nack(std::uint32_t, bool, std::uint64_t) noexcept override;
    void on_timeout(std::uint64_t) noexcept override {}
    std::uint64_t window_bytes() const noexcept override {
        return credit_ > 0 ? static_cast<std::uint64_t>(credit_) : 0;
    }
    void on_send(std::uint32_t bytes, std::uint64_t now) noexcept override;
    bool may_send(std::uint64_t inflight_bytes, std::uint32_t bytes) const noexcept override;
    void on_credit(std::uint32_t credit_field, std::uint64_t now) noexcept override;
    bool uses_credit() const noexcept override { return true; }
    std::uint32_t credit_target(std::uint64_t backlog_bytes) const noexcept override;

    bool speculating() const noexcept { return speculating_; }
    std::int64_t credit_bytes() const noexcept { return credit_; }

  private:
    void stop_speculating() noexcept;

    const rccc_params* p_;
    std::int64_t credit_;      // bytes we may still send
    std::uint32_t seen_ = 0;   // highest cumulative grant heard (24-bit)
    bool speculating_ = true;  // no feedback yet: sending on speculative credit
};

class rccc_pacer;

// Receiver side, one per receiving PDC; linked into its port's rccc_pacer while it has demand.
// It must stay at a fixed address while queued (PDC tables do not move their entries) and be
// forget()-ed from the pacer before it is destroyed.
class rccc_receiver {
  public:
    explicit rccc_receiver(std::uint32_t cookie = 0) noexcept : cookie_(cookie) {}

    // A request's credit_target arrived; targets only move forward.
    void on_credit_target(std::uint32_t target_field) noexcept;
    // What to put in ACK_CC credit and CTRL CREDIT: the cumulative grant so far.
    std::uint32_t credit_field() const noexcept { return granted_; }
    // Quanta wanted and not yet granted.
    std::uint32_t demand_quanta() const noexcept;
    bool queued() const noexcept { return queued_; }
    // The engine's handle for the PDC this belongs to (e.g. its index).
    std::uint32_t cookie() const noexcept { return cookie_; }

  private:
    friend class rccc_pacer;
    rccc_receiver* next_ = nullptr;
    std::uint32_t cookie_;
    std::uint32_t granted_ = 0;  // cumulative quanta granted (24-bit)
    std::uint32_t target_ = 0;   // cumulative quanta the sender asked for (24-bit)
    bool queued_ = false;
};

// One pull: send `credit_field` to the PDC of `receiver` (ACK_CC or CTRL CREDIT).
struct credit_grant {
    rccc_receiver* receiver = nullptr;
    std::uint32_t credit_field = 0;
    std::uint32_t bytes = 0;  // credit newly granted by this pull
};

// The per-port pull pacer. The engine calls on_demand() after feeding a receiver a new target,
// and poll(now) whenever now >= next_deadline(); each poll grants at most one pull.
class rccc_pacer {
  public:
    static constexpr std::uint64_t idle = ~std::uint64_t{0};

    explicit rccc_pacer(const rccc_params& params) noexcept;

    void on_demand(rccc_receiver& r, std::uint64_t now) noexcept;
    void forget(rccc_receiver& r) noexcept;
    // When the next pull is due (ns), or idle when nobody wants credit.
    std::uint64_t next_deadline() const noexcept;
    std::optional<credit_grant> poll(std::uint64_t now) noexcept;
    std::uint64_t granted_bytes() const noexcept { return granted_bytes_; }

  private:
    void push_back(rccc_receiver& r) noexcept;
    rccc_receiver* pop_front() noexcept;
    std::uint64_t pull_time_ps(std::uint64_t bytes) const noexcept;

    const rccc_params* p_;
    double ps_per_byte_;
    rccc_receiver* head_ = nullptr;
    rccc_receiver* tail_ = nullptr;
    std::uint64_t next_ps_ = 0;  // picoseconds, so the pacing rate does not drift by rounding
    std::uint64_t granted_bytes_ = 0;
};

}  // namespace uet::cc
