// The anti-replay window of one source in a secure domain: RFC 4303's sliding window (section
// 3.4.3, with the extended sequence numbers of appendix A) kept as RFC 6479 lays it out, a ring
// of 64-bit blocks of which whole blocks are cleared as the window moves.
//
// The sequence number is the header's 64 bits epoch (16) || TSC (48): unlike ESP, which sends
// only the low 32 bits of its 64-bit number and infers the rest, TSS carries all of it, so the
// window compares full 64-bit numbers and never guesses a high half.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace uet::tss {

class replay_window {
  public:
    // Packets up to this far behind the highest accepted one are checked bit by bit; older ones
    // are refused as replays (RFC 4303: "falls to the left of the window").
    static constexpr std::uint64_t size = 1024;

    // True when seq was accepted before or is too old; the window does not change.
    bool rejects(std::uint64_t seq) const noexcept;
    // Records seq (which rejects() passed and whose ICV verified) and moves the window up.
    void accept(std::uint64_t seq) noexcept;
    std::uint64_t highest() const noexcept { return top_; }

  private:
    static constexpr std::size_t blocks = size / 64 + 1;  // one spare block, cleared ahead
    std::array<std::uint64_t, blocks> bits_{};
    std::uint64_t top_ = 0;
    bool any_ = false;
};

}  // namespace uet::tss
