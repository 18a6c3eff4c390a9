#include "shared_memory.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <mutex>
#include <system_error>
#include <utility>
#include <vector>

#include "uet/shared_buffer.hpp"

namespace uet {
namespace core {
namespace {

std::mutex& mappings_mutex() {
    static std::mutex m;
    return m;
}

std::vector<shared_mapping>& mappings() {
    static std::vector<shared_mapping> v;
    return v;
}

}  // namespace

std::optional<shared_mapping> find_shared_mapping(const void* addr, std::size_t length) {
    const auto* p = static_cast<const std::uint8_t*>(addr);
    std::lock_guard lock(mappings_mutex());
    for (const shared_mapping& m : mappings())
        if (p >= m.base && length <= m.size && std::size_t(p - m.base) <= m.size - length) return m;
    return std::nullopt;
}

void remember_shared_mapping(const shared_mapping& m) {
    std::lock_guard lock(mappings_mutex());
    mappings().push_back(m);
}

void forget_shared_mapping(const void* base) noexcept {
    std::lock_guard lock(mappings_mutex());
    std::erase_if(mappings(), [base](const shared_mapping& m) { return m.base == base; });
}

}  // namespace core

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
