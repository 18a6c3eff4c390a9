// What a completion belongs to: the context of every operation uet-perf posts is a kind and a
// slot, packed into the pointer-sized context (no allocation per operation).
#pragma once

#include <cstdint>
#include <system_error>

#include <uet/uet.hpp>

namespace uet::perf::detail {

// ctx_multi_rx: a multi-receive buffer (--multi-recv), its slot the buffer's index.
enum ctx_kind : std::uintptr_t {
    ctx_ctrl_rx = 1,
    ctx_ctrl_tx = 2,
    ctx_tx = 3,
    ctx_rx = 4,
    ctx_multi_rx = 5,
};
// What a data transmit slot is doing.
enum tx_use : std::uint8_t { tx_op, tx_pong, tx_drain };

inline void* make_ctx(ctx_kind k, std::uint32_t slot) {
    return reinterpret_cast<void*>((static_cast<std::uintptr_t>(k) << 28) | slot);
}
inline ctx_kind kind_of(void* ctx) {
    return static_cast<ctx_kind>(reinterpret_cast<std::uintptr_t>(ctx) >> 28);
}
inline std::uint32_t slot_of(void* ctx) {
    return static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(ctx) & 0x0fffffff);
}
// An operation that cannot be posted for now (queues full) is tried again after the next batch
// of completions; anything else is an error.
inline bool transient(std::error_code ec) {
    return ec == errc::again || ec == errc::cq_full;
}

}  // namespace uet::perf::detail
