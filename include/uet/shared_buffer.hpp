// Memory another process on this host can map. A uet_memif port (the client's side) sends
// payloads straight out of it: registered with a domain, a shared_buffer is handed to the peer
// as a memif region, and each data packet's payload is named there by a descriptor instead of
// being copied into the ring (zero-copy transmit; see docs/running.md).
#pragma once

#include <cstddef>
#include <span>

#include "uet/status.hpp"

namespace uet {

// Move-only; unmaps its memory when destroyed. Close the memory_region registered over it
// first (a port stops referring to the memory when the region is closed).
class shared_buffer {
  public:
    // `bytes` (rounded up to whole pages) of zeroed memory backed by an anonymous shared file
    // (memfd). std::errc::invalid_argument for 0 bytes or more than 1 TiB; the system's error
    // otherwise.
    static result<shared_buffer> allocate(std::size_t bytes);

    shared_buffer() = default;
    ~shared_buffer();
    shared_buffer(shared_buffer&& o) noexcept;
    shared_buffer& operator=(shared_buffer&& o) noexcept;
    shared_buffer(const shared_buffer&) = delete;
    shared_buffer& operator=(const shared_buffer&) = delete;

    std::byte* data() const noexcept { return data_; }
    std::size_t size() const noexcept { return size_; }
    std::span<std::byte> span() const noexcept { return {data_, size_}; }
    bool empty() const noexcept { return size_ == 0; }

  private:
    void release() noexcept;
    std::byte* data_ = nullptr;
    std::size_t size_ = 0;
    int fd_ = -1;
};

}  // namespace uet
