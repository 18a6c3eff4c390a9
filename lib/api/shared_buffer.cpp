// The public shared_buffer: memory another process can map, remembered with lib/core's table of
// shared mappings so that a port can name it to its peer.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>
#include <utility>

#include "core/shared_memory.hpp"
#include "uet/shared_buffer.hpp"

namespace uet {

result<shared_buffer> shared_buffer::allocate(std::size_t bytes) {
    if (bytes == 0 || bytes > (std::size_t{1} << 40))
        return std::make_error_code(std::errc::invalid_argument);
    const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    const std::size_t size = (bytes + page - 1) / page * page;
    const int fd = memfd_create("uet_shared_buffer", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) return std::error_code(errno, std::system_category());
    // Sealed against shrinking: a peer that mapped it can never fault past its end.
    if (ftruncate(fd, static_cast<off_t>(size)) != 0 ||
        fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK) != 0) {
        const int e = errno;
        ::close(fd);
        return std::error_code(e, std::system_category());
    }
    void* base = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) {
        const int e = errno;
        ::close(fd);
        return std::error_code(e, std::system_category());
    }
    shared_buffer b;
    b.data_ = static_cast<std::byte*>(base);
    b.size_ = size;
    b.fd_ = fd;
    core::remember_shared_mapping({static_cast<const std::uint8_t*>(base), size, fd});
    return b;
}

shared_buffer::~shared_buffer() {
    release();
}

shared_buffer::shared_buffer(shared_buffer&& o) noexcept
    : data_(std::exchange(o.data_, nullptr)),
      size_(std::exchange(o.size_, 0)),
      fd_(std::exchange(o.fd_, -1)) {}

shared_buffer& shared_buffer::operator=(shared_buffer&& o) noexcept {
    if (this != &o) {
        release();
        data_ = std::exchange(o.data_, nullptr);
        size_ = std::exchange(o.size_, 0);
        fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
}

void shared_buffer::release() noexcept {
    if (data_ == nullptr) return;
    core::forget_shared_mapping(data_);
    munmap(data_, size_);
    ::close(fd_);
    data_ = nullptr;
    size_ = 0;
    fd_ = -1;
}

}  // namespace uet
