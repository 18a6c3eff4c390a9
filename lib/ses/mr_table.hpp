// Memory-region table: key -> (memory, length, access, job). Remote RMA and atomics name a region
// by key and an offset from its start; check() says whether the access may go ahead and, if not,
// which SES return code the initiator gets. Fixed capacity, no allocation after construction.
// Keys are 64 random bits (never 0, never two alike at once), found through a hash map: the key
// is all that stands between a peer of the same job and a region, so none of its bits is given
// away to a slot index, and a stale key does not name the next region registered. The low 32
// bits are unique too (and never 0): RoCEv2's RETH carries a 32-bit rkey, so the same region
// serves both transports.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/flat_map.hpp"
#include "core/rng.hpp"
#include "wire/uet_ses.hpp"

namespace uet::ses {

// Access bits (the public uet::access values).
inline constexpr std::uint32_t mr_remote_read = 4, mr_remote_write = 8, mr_remote_atomic = 16;

class mr_table {
  public:
    mr_table(std::size_t capacity, std::uint64_t seed);

    // The new region's key; 0 when the table is full.
    std::uint64_t add(std::uint8_t* base, std::uint64_t length, std::uint32_t access,
                      std::uint32_t job) noexcept;
    // No check finds the region from here on; false when no region has the key. While responses
    // in flight still read its memory (hold()), its slot stays taken: still_read() says so.
    bool remove(std::uint64_t key) noexcept;

    // A response about to read the region of key (just checked) from its memory, as it is sent
    // and each time it is resent: the region's slot, for release() once the engine is done with
    // the response. Keeps remove() from giving the slot, and the application its memory, back.
    std::uint32_t hold(std::uint64_t key) noexcept;
    // The same for the region of a RoCE rkey (check_rkey).
    std::uint32_t hold_rkey(std::uint32_t rkey) noexcept;
    void release(std::uint32_t slot) noexcept;
    // Whether responses in flight still read the region of key (removed or not).
    bool still_read(std::uint64_t key) const noexcept;

    // ok with where = the first byte, or the reason the access is refused: BAD_MKEY (no such
    // key, or a key of another job), PERM_VIOLATION (access not granted), BAD_ADDR (the range
    // is not inside the region).
    wire::ses_return_code check(std::uint64_t key, std::uint32_t job, std::uint64_t offset,
                                std::uint64_t length, std::uint32_t access,
                                std::uint8_t*& where) const noexcept;
    // The same checks for a RoCE rkey: the region whose key's low 32 bits are `rkey`.
    wire::ses_return_code check_rkey(std::uint32_t rkey, std::uint32_t job, std::uint64_t offset,
                                     std::uint64_t length, std::uint32_t access,
                                     std::uint8_t*& where) const noexcept;
    std::size_t size() const noexcept { return entries_.size() - free_.size(); }

  private:
    struct entry {
        std::uint8_t* base = nullptr;
        std::uint64_t length = 0;
        std::uint64_t key = 0;  // 0: free
        std::uint32_t access = 0;
        std::uint32_t job = 0;
        std::uint32_t readers = 0;  // responses in flight reading it (hold())
        bool removed = false;       // by remove(), kept until its readers are done
    };
    void free_slot(std::uint32_t index) noexcept;
    std::uint32_t hold_index(std::optional<std::uint32_t> index) noexcept;
    std::vector<entry> entries_;
    std::vector<std::uint32_t> free_;
    wire::ses_return_code check_entry(std::optional<std::uint32_t> index, std::uint32_t job,
                                      std::uint64_t offset, std::uint64_t length,
                                      std::uint32_t access, std::uint8_t*& where) const noexcept;

    pds::flat_map index_of_;       // key -> entry
    pds::flat_map index_of_rkey_;  // the key's low 32 bits -> entry
    pds::flat_map removed_;        // key -> entry, of removed regions still read
    rng rng_;
};

}  // namespace uet::ses
