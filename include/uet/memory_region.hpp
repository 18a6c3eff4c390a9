// Memory registration: a region of the application's memory a peer may read, write or operate on
// atomically, named on the wire by its key. A key is valid only in the job it was registered for.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

namespace uet {

enum class access : std::uint32_t {
    none = 0,
    local_read = 1,
    local_write = 2,
    remote_read = 4,
    remote_write = 8,
    remote_atomic = 16,
};
constexpr access operator|(access a, access b) noexcept {
    return static_cast<access>(static_cast<std::uint32_t>(a) | static_cast<std::uint32_t>(b));
}
constexpr bool has(access set, access flag) noexcept {
    return (static_cast<std::uint32_t>(set) & static_cast<std::uint32_t>(flag)) ==
           static_cast<std::uint32_t>(flag);
}

namespace detail {
struct domain_impl;
}

// Move-only; deregisters the region when destroyed (or at close()). Operations that target it
// after that fail with errc::bad_memory_key. Responses to peers' reads are sent from the region's
// memory (zero copy), and resent from it: close() progresses the fabric until the responses
// still in flight are done with (acknowledged, or given up on), so the memory may be freed once
// it returns.
class memory_region {
  public:
    memory_region() = default;
    ~memory_region();
    memory_region(memory_region&&) noexcept;
    memory_region& operator=(memory_region&&) noexcept;
    memory_region(const memory_region&) = delete;
    memory_region& operator=(const memory_region&) = delete;

    std::uint64_t key() const noexcept { return key_; }
    // The key as RoCEv2's 32-bit rkey: its low 32 bits, unique among the domain's regions.
    std::uint32_t rkey() const noexcept { return static_cast<std::uint32_t>(key_); }
    std::span<std::byte> span() const noexcept { return span_; }
    uet::access access() const noexcept { return access_; }
    std::uint32_t job_id() const noexcept { return job_; }
    void close() noexcept;

  private:
    friend class domain;
    std::shared_ptr<detail::domain_impl> domain_;
    std::uint64_t key_ = 0;
    std::span<std::byte> span_;
    uet::access access_ = access::none;
    std::uint32_t job_ = 0;
};

}  // namespace uet
