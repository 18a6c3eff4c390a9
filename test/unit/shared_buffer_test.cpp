// uet::shared_buffer and the process's list of them (lib/core/shared_memory.hpp), which a
// uet_memif client asks whether registered memory can be handed to its peer.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <system_error>
#include <vector>

#include "core/shared_memory.hpp"
#include "uet/shared_buffer.hpp"

namespace uet {
namespace {

TEST(shared_buffer, is_zeroed_whole_pages_found_by_any_range_inside_it) {
    auto b = shared_buffer::allocate(5000);
    ASSERT_TRUE(b);
    const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    EXPECT_EQ(b->size(), (5000 + page - 1) / page * page);
    for (std::size_t i = 0; i < b->size(); ++i)
        ASSERT_EQ(b->data()[i], std::byte{0});
    const auto* base = reinterpret_cast<const std::uint8_t*>(b->data());
    const auto m = core::find_shared_mapping(base + 100, 1000);
    ASSERT_TRUE(m);
    EXPECT_EQ(m->base, base);
    EXPECT_EQ(m->size, b->size());
    struct stat st {};
    ASSERT_EQ(fstat(m->fd, &st), 0);
    EXPECT_EQ(static_cast<std::size_t>(st.st_size), b->size());
    // Ranges that leave it, or memory that is not a shared_buffer, are not found.
    EXPECT_FALSE(core::find_shared_mapping(base + b->size() - 10, 11));
    EXPECT_FALSE(core::find_shared_mapping(base - 1, 2));
    std::vector<std::uint8_t> heap(100);
    EXPECT_FALSE(core::find_shared_mapping(heap.data(), heap.size()));
}

TEST(shared_buffer, moved_keeps_its_memory_and_freed_is_forgotten) {
    auto b = shared_buffer::allocate(4096);
    ASSERT_TRUE(b);
    shared_buffer kept = std::move(*b);
    EXPECT_TRUE(b->empty());
    const auto* base = reinterpret_cast<const std::uint8_t*>(kept.data());
    kept.data()[10] = std::byte{7};
    EXPECT_TRUE(core::find_shared_mapping(base, 4096));
    kept = shared_buffer{};
    EXPECT_FALSE(core::find_shared_mapping(base, 1));
}

TEST(shared_buffer, refuses_nothing_and_absurd_sizes) {
    EXPECT_EQ(shared_buffer::allocate(0).error(),
              std::make_error_code(std::errc::invalid_argument));
    EXPECT_EQ(shared_buffer::allocate(std::size_t{1} << 50).error(),
              std::make_error_code(std::errc::invalid_argument));
}

}  // namespace
}  // namespace uet
