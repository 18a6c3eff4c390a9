// DCQCN, RoCEv2's rate-based congestion control (Zhu et al., "Congestion Control for Large-Scale
// RDMA Deployments", SIGCOMM 2015), as RoCE NICs run it. Sans-I/O: every call takes `now` in
// nanoseconds; nothing here reads a clock, allocates or arms a timer (the periodic events are
// worked out from the time passed in).
//
// Three parties:
//   congestion point: a switch marks ECN-CE on packets it queues (the fabric model, the
//                     impairment pipe);
//   notification point (dcqcn_np, per QP at the responder): a CE-marked packet makes it send a
//                     CNP (BTH opcode 0x81) to the requester, at most one per QP per
//                     min_time_between_cnps;
//   reaction point (dcqcn_rp, per QP at the requester): paces its packets at a current rate RC.
//     CNP (at most one acted on per rate_reduce_monitor_period):
//         RT = RC (see clamp_target_rate), RC = RC x max(1 - alpha/2, min_dec_factor),
//         alpha = (1 - g) alpha + g; the increase stages restart.
//     alpha_update_period without a CNP: alpha = (1 - g) alpha.
//     Increase events, one per time_reset of sending and one per byte_reset bytes sent, count
//     the time stage T and the byte stage B since the last CNP:
//         fast recovery   max(T, B) <  threshold:  RC = (RT + RC) / 2
//         additive        max(T, B) >= threshold:  RT += ai_rate, RC = (RT + RC) / 2
//         hyper           min(T, B) >= threshold:  RT += i x hai_rate, i = min(T, B) - threshold +
//         1
//     Rates stay within [min_rate, line_rate].
// The parameters carry the names of NVIDIA's ConnectX settings (rpg_*, dce_tcp_*,
// min_time_between_cnps); defaults are those of the paper and the NICs, listed in
// docs/architecture.md (DCQCN).
#pragma once

#include <cstdint>

namespace uet::cc {

struct dcqcn_params {
    double line_rate_gbps = 100;     // rpg_max_rate: the ceiling, the port's rate
    double min_rate_gbps = 0.01;     // rpg_min_rate
    double first_cnp_rate_gbps = 0;  // rate_to_set_on_first_cnp; 0: cut from the current rate
    double min_dec_factor = 0.5;     // rpg_min_dec_fac / 100: one cut keeps at least this share
    std::uint64_t rate_reduce_monitor_period_ns = 4'000;  // CNPs closer than this: one cut
    double g = 1.0 / 256;                                 // dce_tcp_g: alpha's gain
    std::uint64_t alpha_update_period_ns = 55'000;        // dce_tcp_rtt
    double initial_alpha = 1.0;                           // initial_alpha_value / 1023
    std::uint64_t time_reset_ns = 300'000;                // rpg_time_reset
    std::uint64_t byte_reset = 32'767 * 64;               // rpg_byte_reset (64-byte units)
    std::uint32_t threshold = 5;                          // rpg_threshold (F)
    double ai_rate_gbps = 0.005;                          // rpg_ai_rate: 5 Mb/s
    double hai_rate_gbps = 0.05;                          // rpg_hai_rate: 50 Mb/s
    // clamp_tgt_rate: every CNP sets RT = RC. Otherwise (clamp_tgt_rate_after_time_inc) only a
    // CNP after a time-driven increase does; after byte-driven increases alone RT stays.
    bool clamp_target_rate = false;
    // Notification point: min_time_between_cnps.
    std::uint64_t min_time_between_cnps_ns = 4'000;
};

// The reaction point of one QP.
class dcqcn_rp {
  public:
    // Which rule the last event applied (for tests and traces).
    enum class action : std::uint8_t {
        none,
        cut,
        cnp_ignored,  // within rate_reduce_monitor_period of the last cut
        fast_recovery,
        additive_increase,
        hyper_increase,
    };

    explicit dcqcn_rp(const dcqcn_params& p) noexcept;

    // A CNP for this QP arrived.
    void on_cnp(std::uint64_t now) noexcept;
    // A packet of `bytes` (headers included: what the wire carries) left now: it advances the
    // byte counter and the pacer.
    void on_sent(std::uint32_t bytes, std::uint64_t now) noexcept;
    // The earliest time the next packet may leave (<= now: at once). Runs the timers up to now.
    std::uint64_t next_send_ns(std::uint64_t now) noexcept;
    // Runs the periodic events (alpha decay, time-driven increases) due by now.
    void advance(std::uint64_t now) noexcept;

    double rate_gbps() const noexcept { return rc_; }
    double target_gbps() const noexcept { return rt_; }
    double alpha() const noexcept { return alpha_; }
    std::uint32_t time_stage() const noexcept { return t_stage_; }
    std::uint32_t byte_stage() const noexcept { return b_stage_; }
    action last_action() const noexcept { return last_; }
    // Whether the QP runs below line rate: only then are its packets paced and its rate raised.
    bool limited() const noexcept { return limited_; }

  private:
    void increase(bool by_timer) noexcept;
    void clamp() noexcept;

    const dcqcn_params* p_;
    double rc_, rt_, alpha_;
    std::uint64_t last_cut_ = 0;
    std::uint64_t next_alpha_ = 0;     // the next alpha update, if no CNP comes first
    std::uint64_t next_increase_ = 0;  // the next time-driven increase event
    std::uint64_t bytes_ = 0;          // sent since the last byte-driven event
    std::uint64_t next_send_ = 0;      // the pacer: when the next packet may leave
    std::uint32_t t_stage_ = 0, b_stage_ = 0;
    bool cut_before_ = false;      // a CNP was acted on: alpha's timer runs from then on
    bool time_increased_ = false;  // a time-driven increase since the last cut
    bool limited_ = false;
    action last_ = action::none;
};

// The notification point of one QP: whether a CE-marked packet should make it send a CNP.
class dcqcn_np {
  public:
    explicit dcqcn_np(const dcqcn_params& p) noexcept : min_gap_(p.min_time_between_cnps_ns) {}
    // A packet arrived; ce: it carried ECN-CE. True when a CNP is to be sent now.
    bool on_packet(bool ce, std::uint64_t now) noexcept {
        if (!ce || (sent_ && now - last_ < min_gap_)) return false;
        sent_ = true;
        last_ = now;
        return true;
    }

  private:
    std::uint64_t min_gap_;
    std::uint64_t last_ = 0;
    bool sent_ = false;
};

}  // namespace uet::cc
