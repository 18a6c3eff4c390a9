// What every endpoint has, whichever transport runs it: the objects it was opened with, its
// address and counters, and the calls the fabric's network makes on it (process, frames, close).
// endpoint_impl (UET) derives from it. The public endpoint holds one and branches once on
// `kind` before casting to the transport's endpoint, so a transport's posts stay inlined into
// the public calls.
#pragma once

#include <cstdint>
#include <memory>

#include "uet/endpoint.hpp"
#include "wire/frame_engine.hpp"

namespace uet::detail {

struct domain_impl;
struct cq_impl;
struct av_impl;

struct endpoint_base {
    endpoint_base(transport k, std::shared_ptr<domain_impl> d, std::shared_ptr<cq_impl> c,
                  std::shared_ptr<av_impl> a, const endpoint_attr& at, endpoint_address addr)
        : kind(k),
          domain(std::move(d)),
          cq(std::move(c)),
          av(std::move(a)),
          attr(at),
          address(addr) {}
    virtual ~endpoint_base() = default;
    endpoint_base(const endpoint_base&) = delete;
    endpoint_base& operator=(const endpoint_base&) = delete;

    // What the engine finished or received, at `now` (the network's time read by the caller),
    // or at the network's time: true if anything happened.
    virtual bool process(std::uint64_t now) = 0;
    virtual bool process() = 0;
    // The engine the network carries frames for; nullptr once closed.
    virtual frame_engine* frames() noexcept = 0;
    // Cancels what is outstanding and leaves the network. Idempotent.
    virtual void close() noexcept = 0;
    // The engine's counters, added into `c` (the endpoint's own are `counters`).
    virtual void add_engine_counters(endpoint_counters& c) const noexcept = 0;

    const transport kind;
    std::shared_ptr<domain_impl> domain;
    std::shared_ptr<cq_impl> cq;
    std::shared_ptr<av_impl> av;
    endpoint_attr attr;
    endpoint_address address;
    endpoint_counters counters{};
    std::uint64_t silent_completions = 0;  // op_flags::no_completion operations ended well
    std::uint64_t now = 0;                 // the network's clock, read once per process()
};

}  // namespace uet::detail
