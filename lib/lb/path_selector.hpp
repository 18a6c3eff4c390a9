// Per-PDC path selection: picks the entropy value (the UDP source port) of each packet and hears
// what happened to the paths it picked. Selectors are small values inside the PDC table entry (no
// heap per PDC); oblivious, bitmap and REPS spraying (oblivious.hpp, bitmap.hpp, reps.hpp) sit
// behind the same interface; any_selector (lb_factory.hpp) holds whichever one a PDC runs.
#pragma once

#include <cstdint>

namespace uet::lb {

class path_selector {
  public:
    virtual ~path_selector() = default;
    virtual std::uint16_t next_entropy() noexcept = 0;
    virtual void on_ack(std::uint16_t entropy, bool ecn) noexcept = 0;
    virtual void on_nack(std::uint16_t entropy) noexcept = 0;
    virtual void on_timeout(std::uint16_t entropy) noexcept = 0;

    // ---- optional hooks (compatible extensions) ----

    // The entropy of a packet leaving at `now`; selectors with timed state (REPS freezing)
    // override it. Derived classes re-export these overloads with `using`.
    virtual std::uint16_t next_entropy(std::uint64_t /*now*/) noexcept { return next_entropy(); }
    // A retransmit timeout at `now` for a packet sent with `entropy`.
    virtual void on_timeout(std::uint16_t entropy, std::uint64_t /*now*/) noexcept {
        on_timeout(entropy);
    }
    // Congestion control judged that `entropy`'s path, not the network, is congested (NSCC:
    // ECN echoed with a short delay; see cc::controller::take_path_switch()).
    virtual void on_path_switch(std::uint16_t /*entropy*/) noexcept {}
    // Whether on_ack() does anything: a PDC asks once, when it opens, and then skips the call
    // for each packet an ACK covers (~32 per cumulative ACK of a bulk transfer).
    virtual bool hears_acks() const noexcept { return true; }

  protected:
    path_selector() = default;
    path_selector(const path_selector&) = default;
    path_selector& operator=(const path_selector&) = default;
};

// One entropy value for the PDC's whole life: plain ECMP, every packet on the same path.
class static_path final : public path_selector {
  public:
    using path_selector::next_entropy;
    using path_selector::on_timeout;
    explicit static_path(std::uint16_t entropy = 0) noexcept : entropy_(entropy) {}
    std::uint16_t next_entropy() noexcept override { return entropy_; }
    void on_ack(std::uint16_t, bool) noexcept override {}
    bool hears_acks() const noexcept override { return false; }
    void on_nack(std::uint16_t) noexcept override {}
    void on_timeout(std::uint16_t) noexcept override {}

  private:
    std::uint16_t entropy_;
};

}  // namespace uet::lb
