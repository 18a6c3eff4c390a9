// Why a received packet was rejected. Decoders return one of these (none = accepted); later layers
// keep a counter per reason, so every value must name one cause a user can act on.
#pragma once

#include <cstddef>
#include <cstdint>

namespace uet::wire {

enum class reject_reason : std::uint8_t {
    none = 0,
    truncated,  // the buffer ends inside a header or before a length field says it should
#define UET_REJECT_REASON(name, text) name,
#include "wire/reject_l2l4.def"
#include "wire/reject_roce.def"
#include "wire/reject_uet.def"
#undef UET_REJECT_REASON
    count_
};

inline constexpr std::size_t reject_reason_count = static_cast<std::size_t>(reject_reason::count_);

// A short lower-case description, e.g. "bad UDP checksum". Never null.
const char* to_string(reject_reason r) noexcept;
// The enumerator's own name, e.g. "bad_udp_checksum" (for JSON and counters). Never null.
const char* reject_name(reject_reason r) noexcept;

}  // namespace uet::wire
