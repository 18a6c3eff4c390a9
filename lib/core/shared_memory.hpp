// The process's shared_buffers by address, for a port that can hand such memory to its peer
// (providers/memif): which one holds a range, and the file behind it. Set-up paths only (a
// mutex guards the list); never asked on the data path.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace uet::core {

struct shared_mapping {
    const std::uint8_t* base = nullptr;
    std::size_t size = 0;
    int fd = -1;  // the buffer's own: a port that keeps it dups it
};

// The shared_buffer holding all of [addr, addr + length), if any.
std::optional<shared_mapping> find_shared_mapping(const void* addr, std::size_t length);
void remember_shared_mapping(const shared_mapping& m);
void forget_shared_mapping(const void* base) noexcept;

}  // namespace uet::core
