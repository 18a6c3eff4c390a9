// Verified messages for the engine's integration tests: a plan (which messages, in which modes,
// of which sizes), the bytes of each message (a header, then a pattern derived from the message's
// index and byte offset) and the receiver's checks (byte-exact, checksum, exactly once, in order
// for ROD). Pure C++: shared by uet-itest-engine-peer and the DPDK-free unit test.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/engine.hpp"

namespace uet::itest {

// One group of a plan: count messages of size bytes in mode.
struct plan_group {
    delivery_mode mode = delivery_mode::rud;
    std::uint32_t size = 0, count = 0;
};

// "rud:1k*20,rod:64m*2,uud:1400*100": groups in order; sizes take k/m suffixes (KiB, MiB).
// Throws std::invalid_argument on a malformed plan or a message shorter than the header.
std::vector<plan_group> parse_plan(const std::string& text);
std::string describe(const plan_group& g);

// Every message starts with this header (little-endian on the wire of the message body):
// magic, epoch (a run of the sender), index in the plan, size, mode, checksum of the bytes
// after the header (FNV-1a over 64-bit words).
inline constexpr std::size_t message_header_size = 32;

struct message_header {
    std::uint32_t epoch = 0, index = 0, size = 0;
    delivery_mode mode = delivery_mode::rud;
    std::uint64_t checksum = 0;
};

// Fills out (its size is the message size) with message `index` of run `epoch`.
void fill_message(std::span<std::uint8_t> out, std::uint32_t epoch, std::uint32_t index,
                  delivery_mode mode);

enum class message_error : std::uint8_t {
    none,
    too_short,
    bad_magic,
    bad_size,
    bad_checksum,
    bad_byte
};
const char* to_string(message_error e) noexcept;

// Checks a received message against what fill_message wrote; fills h from its header. On
// bad_byte, *first_bad is the offset of the first wrong byte.
message_error check_message(std::span<const std::uint8_t> data, message_header& h,
                            std::size_t* first_bad = nullptr);

// The receiving side of a plan: every message of a reliable mode exactly once, ROD in order;
// UUD best effort (each one intact and at most once).
class plan_receiver {
  public:
    plan_receiver(std::vector<plan_group> plan, std::uint32_t epoch);

    // Checks one received message; false (and a reason in last_error()) if it is wrong.
    bool on_message(const received_message& m);
    bool complete() const noexcept { return reliable_seen_ == reliable_total_; }
    bool failed() const noexcept { return errors_ != 0; }
    std::uint64_t messages() const noexcept { return seen_count_; }
    std::uint64_t bytes() const noexcept { return bytes_; }
    std::uint64_t uud_seen() const noexcept { return uud_seen_; }
    std::uint64_t uud_total() const noexcept { return uud_total_; }
    std::uint64_t errors() const noexcept { return errors_; }
    const std::string& last_error() const noexcept { return last_error_; }
    std::string progress() const;

  private:
    bool fail(std::string why);

    std::vector<plan_group> plan_;
    std::vector<delivery_mode> mode_of_;  // per index
    std::vector<std::uint32_t> size_of_;
    std::vector<bool> seen_;
    std::uint32_t epoch_;
    std::int64_t last_rod_ = -1;
    std::uint64_t reliable_total_ = 0, reliable_seen_ = 0, uud_total_ = 0, uud_seen_ = 0;
    std::uint64_t seen_count_ = 0, bytes_ = 0, errors_ = 0;
    std::string last_error_;
};

// The sending side of a plan: posts its groups one after the other (a group starts once the
// previous one completed, so each group's rate can be measured), each with at most `window`
// messages and `window_bytes` posted and not completed. Message buffers live until completion.
struct sender_limits {
    std::uint32_t window = 32;
    std::uint64_t window_bytes = 192ull << 20;
};

struct group_result {
    plan_group group;
    std::uint64_t start_ns = 0, end_ns = 0;  // first post, last completion
    std::uint64_t ok = 0, failed = 0;
};

class plan_sender {
  public:
    plan_sender(engine& e, peer_id to, std::vector<plan_group> plan, std::uint32_t epoch,
                const sender_limits& limits = {});

    // Collects completions and posts what the window allows; call after every poll.
    void step(std::uint64_t now);
    bool complete() const noexcept { return completed_ == total_; }
    std::uint64_t total() const noexcept { return total_; }
    std::uint64_t completed() const noexcept { return completed_; }
    // Completions by engine status code (index = status_code), each message exactly once.
    const std::vector<std::uint64_t>& by_status() const noexcept { return by_status_; }
    std::uint64_t failures() const noexcept { return completed_ - by_status_[0]; }
    std::uint64_t duplicate_completions() const noexcept { return duplicates_; }
    const std::vector<group_result>& groups() const noexcept { return groups_; }
    std::string progress() const;

  private:
    void finish(std::uint32_t index, status s, std::uint64_t now);
    void post(std::uint64_t now);

    engine& engine_;
    peer_id to_;
    std::uint32_t epoch_;
    sender_limits limits_;
    std::vector<group_result> groups_;
    std::vector<std::uint32_t> group_of_;  // per index
    std::vector<std::vector<std::uint8_t>> buffers_;
    std::vector<bool> done_;
    std::vector<std::uint64_t> by_status_;
    std::size_t group_ = 0;
    std::uint32_t next_ = 0, group_end_ = 0;
    std::uint64_t total_ = 0, completed_ = 0, duplicates_ = 0;
    std::uint64_t inflight_ = 0, inflight_bytes_ = 0;
};

}  // namespace uet::itest
