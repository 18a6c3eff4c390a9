// Unsignaled sends: a send asked no completion of goes to the engine as an unsignaled request,
// with no operation entry unless its end needs one (it failed, its answer comes as a message, or a
// target's RTR names it): the operation is then adopted from what the engine kept.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "api/op_pool.hpp"
#include "engine/engine.hpp"
#include "uet/uet.hpp"

namespace uet::detail {

struct endpoint_impl;

// Restart tokens (a send's, in its buffer_offset; a target's RTR names it) of unsignaled sends have
// this bit; an operation's never do (its generation stays below 0x8000).
inline constexpr std::uint32_t unsignaled_token_bit = 0x80000000u;

class unsignaled_sends {
  public:
    // Which sends may go unsignaled, and the fields they go with.
    void configure(const endpoint_impl& ep, const endpoint_attr& at, const engine_config& ec);
    // A send asked no completion of, posted as an unsignaled engine request when it can go so
    // (shorter than the limit, nothing stalled before it): true if posted. An op slot and a record
    // are kept for it (op_pool::keep, record_pool::promise) and a CQ entry reserved, as an
    // operation would have them, so the rare end that needs its operation (adopt) always finds
    // one. Body in unsignaled_inline.hpp, inline in the post of a send.
    bool post(endpoint_impl& ep, peer_addr to, std::span<const std::byte> buf, bool tagged,
              std::uint64_t tag, void* context);
    // The leading sends of `list` that go unsignaled as post() would post them one by one, posted
    // to the engine together (engine::post_unsignaled_messages): how many.
    std::size_t post_list(endpoint_impl& ep, peer_addr to, std::span<const send_work> list,
                          bool tagged);
    // The buffer offset of the k-th unsignaled send from now: its restart token, which never has a
    // token of an operation's (unsignaled_token_bit set).
    std::uint64_t token_field(std::uint32_t k) const noexcept {
        const std::uint32_t token =
            unsignaled_token_bit | ((next_token_ + k) & ~unsignaled_token_bit);
        return std::uint64_t{token} << 32;
    }
    // n unsignaled sends went to the engine: their tokens used, an op slot and a record kept for
    // each.
    void took(endpoint_impl& ep, std::size_t n) noexcept;
    // The operation of the unsignaled engine message `message`, made now from what was posted.
    std::uint32_t adopt(endpoint_impl& ep, std::uint32_t message);
    // The same, and the engine message an ordinary one of that operation from now on.
    std::uint32_t adopt_in_flight(endpoint_impl& ep, std::uint32_t message);
    // Every unsignaled send still in the engine becomes an operation (close).
    void adopt_all(endpoint_impl& ep);
    void count_ended(endpoint_impl& ep);
    // The PDS completion of an unsignaled send whose end needs its operation.
    void on_completion(endpoint_impl& ep, const send_completion& c);
    std::uint32_t op_of_token(endpoint_impl& ep, std::uint32_t token, std::uint32_t engine_peer);

  private:
    std::size_t limit_ = 0;  // sends of fewer bytes may go unsignaled
    // An unsignaled SEND's and TSEND's fields but for their own (engine::post_unsignaled_message).
    std::array<ses_fields, 2> common_{};
    std::uint32_t next_token_ = 0;
};

}  // namespace uet::detail
