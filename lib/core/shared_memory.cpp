#include "core/shared_memory.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <mutex>
#include <system_error>
#include <utility>
#include <vector>

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
}  // namespace uet
