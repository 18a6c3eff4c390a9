#include "ses/mr_table.hpp"

namespace uet::ses {

mr_table::mr_table(std::size_t capacity, std::uint64_t seed)
    : entries_(capacity),
      index_of_(capacity),
      index_of_rkey_(capacity),
      removed_(capacity),
      rng_(seed) {
    free_.reserve(capacity);
    for (std::size_t i = capacity; i-- > 0;)
        free_.push_back(static_cast<std::uint32_t>(i));
}

std::uint64_t mr_table::add(std::uint8_t* base, std::uint64_t length, std::uint32_t access,
                            std::uint32_t job) noexcept {
    if (free_.empty()) return 0;
    const std::uint32_t index = free_.back();
    free_.pop_back();
    std::uint64_t key = 0;
    do {
        key = rng_.next_u64();
    } while (static_cast<std::uint32_t>(key) == 0 || index_of_.find(key) || removed_.find(key) ||
             index_of_rkey_.find(static_cast<std::uint32_t>(key)));
    index_of_.insert(key, index);
    index_of_rkey_.insert(static_cast<std::uint32_t>(key), index);
    entries_[index] = entry{base, length, key, access, job};
    return key;
}

bool mr_table::remove(std::uint64_t key) noexcept {
    const auto index = index_of_.find(key);
    if (!index) return false;
    index_of_.erase(key);
    index_of_rkey_.erase(static_cast<std::uint32_t>(key));
    entry& e = entries_[*index];
    if (e.readers == 0) {
        free_slot(*index);
    } else {
        e.removed = true;
        removed_.insert(key, *index);
    }
    return true;
}

void mr_table::free_slot(std::uint32_t index) noexcept {
    entries_[index] = entry{};
    free_.push_back(index);
}

std::uint32_t mr_table::hold_index(std::optional<std::uint32_t> index) noexcept {
    if (!index) return static_cast<std::uint32_t>(-1);
    ++entries_[*index].readers;
    return *index;
}

std::uint32_t mr_table::hold(std::uint64_t key) noexcept {
    return hold_index(index_of_.find(key));
}

std::uint32_t mr_table::hold_rkey(std::uint32_t rkey) noexcept {
    return hold_index(index_of_rkey_.find(rkey));
}

void mr_table::release(std::uint32_t slot) noexcept {
    if (slot >= entries_.size() || entries_[slot].readers == 0) return;
    entry& e = entries_[slot];
    if (--e.readers != 0 || !e.removed) return;
    removed_.erase(e.key);
    free_slot(slot);
}

bool mr_table::still_read(std::uint64_t key) const noexcept {
    const auto index = index_of_.find(key);
    if (index) return entries_[*index].readers != 0;
    return removed_.find(key).has_value();
}

wire::ses_return_code mr_table::check(std::uint64_t key, std::uint32_t job, std::uint64_t offset,
                                      std::uint64_t length, std::uint32_t access,
                                      std::uint8_t*& where) const noexcept {
    return check_entry(index_of_.find(key), job, offset, length, access, where);  // 0: never a key
}

wire::ses_return_code mr_table::check_rkey(std::uint32_t rkey, std::uint32_t job,
                                           std::uint64_t offset, std::uint64_t length,
                                           std::uint32_t access,
                                           std::uint8_t*& where) const noexcept {
    return check_entry(index_of_rkey_.find(rkey), job, offset, length, access, where);
}

wire::ses_return_code mr_table::check_entry(std::optional<std::uint32_t> index, std::uint32_t job,
                                            std::uint64_t offset, std::uint64_t length,
                                            std::uint32_t access,
                                            std::uint8_t*& where) const noexcept {
    if (!index) return wire::ses_return_code::bad_mkey;
    const entry& e = entries_[*index];
    if (e.job != job) return wire::ses_return_code::bad_mkey;
    if ((e.access & access) != access) return wire::ses_return_code::perm_violation;
    if (offset > e.length || length > e.length - offset) return wire::ses_return_code::bad_addr;
    where = e.base + offset;
    return wire::ses_return_code::ok;
}

}  // namespace uet::ses
