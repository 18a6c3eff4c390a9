// Completion queue: bounded; every operation posted with a context ends in exactly one entry
// here (inject excepted), a success or an error entry (libfabric's fi_cq_read / fi_cq_readerr).
// Reading progresses the fabric: there is no background thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <system_error>

#include "uet/address_vector.hpp"

namespace uet {

enum class completion_flags : std::uint32_t {
    none = 0,
    send = 1,
    recv = 2,
    tagged = 4,
    rma = 8,
    atomic = 16,
    read = 32,
    write = 64,
    remote_cq_data = 128,  // data holds the initiator's immediate data
    remote_write = 256,    // a peer's write landed in one of our regions
    multi_recv = 512,      // the last entry of a multi-receive buffer: it is released
};
constexpr completion_flags operator|(completion_flags a, completion_flags b) noexcept {
    return static_cast<completion_flags>(static_cast<std::uint32_t>(a) |
                                         static_cast<std::uint32_t>(b));
}
constexpr bool has(completion_flags set, completion_flags flag) noexcept {
    return (static_cast<std::uint32_t>(set) & static_cast<std::uint32_t>(flag)) ==
           static_cast<std::uint32_t>(flag);
}

struct completion {
    void* context = nullptr;  // as posted (nullptr for remote write data)
    completion_flags flags = completion_flags::none;
    std::size_t len = 0;     // bytes received, read or written
    void* buf = nullptr;     // receives: the buffer the data is in
    std::uint64_t data = 0;  // remote_cq_data: the immediate data
    std::uint64_t tag = 0;   // tagged receives: the message's tag
    peer_addr from = any_peer;
    // Error entries only.
    std::error_code error;
    std::size_t olen = 0;     // truncated: bytes that did not fit
    int prov_errno = 0;       // the SES return code, when the target sent one
    std::string_view detail;  // e.g. "target answered BAD_MKEY"
};

namespace detail {
struct cq_impl;
}

class completion_queue {
  public:
    completion_queue() = default;
    ~completion_queue();
    completion_queue(completion_queue&&) noexcept;
    completion_queue& operator=(completion_queue&&) noexcept;
    completion_queue(const completion_queue&) = delete;
    completion_queue& operator=(const completion_queue&) = delete;

    // Progresses the fabric once, then copies successful entries up to out.size(); stops at an
    // error entry (see has_error / read_error). Returns how many were copied.
    std::size_t read(std::span<completion> out);
    bool has_error() const noexcept;
    // Pops the error entry at the head, if there is one.
    bool read_error(completion& out);
    // Progresses until an entry (of either kind) is there, pops it into out and returns its
    // error ({} for a success). errc::again when the fabric went idle, or max_steps progress
    // steps passed, with nothing for this queue. (The dpdk provider never goes idle while its
    // endpoint is open: a peer may send at any time. Bound the wait, or use wait_for.)
    std::error_code wait(completion& out, std::uint64_t max_steps = 50'000'000);
    // The same, bounded by wall-clock time rather than steps: errc::again once timeout passed
    // (or the fabric went idle) with nothing for this queue.
    std::error_code wait_for(completion& out, std::chrono::nanoseconds timeout);
    std::size_t size() const noexcept;      // entries waiting
    std::size_t capacity() const noexcept;  // operations that may await completion at once

  private:
    friend class domain;
    friend class endpoint;
    std::shared_ptr<detail::cq_impl> impl_;
};

}  // namespace uet
