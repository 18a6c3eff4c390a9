// One side of a uet-perf run: its endpoint, its registered region, its buffers, the control
// channel, and the traffic of one message size. Both roles (client, server) drive one; nothing
// here blocks: poll() reads one batch of completions and pump() posts what may be posted.
//
// Traffic of one size, in terms the control protocol uses:
//   initiator: posts operations (writes, reads, sends, atomics; latency tests: one ping at a time)
//              until its limit (-n) or until stopped (-D, Ctrl-C, the peer's STOP); `sent` is how
//              many completed.
//   receiver:  send tests keep receives posted until rx_limit; once the peer's final count is
//              known, receives posted beyond it are filled by the peer's drain messages, so no
//              receive is left over for the next size.
//              With --multi-recv, a few multi-receive buffers instead, each taking many messages:
//              posted once, posted again whenever the library releases one, and kept across sizes
//              (a receive cannot be cancelled short of closing the endpoint); nothing is left
//              over, so the receiver is done at the peer's count and no drain message is owed.
//   responder: latency tests answer each ping with a pong.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <uet/uet.hpp>

#include "control.hpp"
#include "options.hpp"
#include "slot_stack.hpp"

namespace uet::perf {

// The clock the measurements use (nanoseconds, monotonic): the fabric's on DPDK (the TSC, which
// the engine reads too, and cheaper than the vDSO clock_gettime that every poll would pay for),
// steady_clock over the pipe.
using clock_fn = std::function<std::uint64_t()>;
std::uint64_t steady_ns();

// Operations in flight, and remote slots, for one message size: at most tx_depth and at most
// 64 MiB in flight.
std::uint32_t depth_for(const settings& s, std::uint64_t size) noexcept;
// Slots of the region a peer targets (writes, reads, atomics) for one size; --verify on write
// tests gives a slot to every iteration when that fits in 256 MiB, so every byte is checked.
std::uint64_t slots_for(const settings& s, std::uint64_t size) noexcept;
std::uint64_t region_bytes_for(const settings& s);

// perftest's buffers: the operations of a bandwidth test all use one cycle buffer of a page on
// each side, local and remote, stepping by the size rounded up to a cache line and starting
// over at its end; a size above half the cycle uses one buffer for every operation. The data
// is the same whichever buffer it comes from; what changes is the working set: a few lines
// that stay in cache instead of tx depth x size (8 MiB at -s 65536). --verify, which needs
// each operation's own bytes, and --distinct-buffers give every operation its own slot.
constexpr std::uint64_t cycle_buffer_bytes = 4096;
struct buffer_layout {
    bool shared = false;       // the cycle buffer
    std::uint64_t stride = 0;  // bytes from one slot to the next
    std::uint64_t count = 0;   // shared: slots in the cycle (1 above half a cycle)
    std::uint64_t offset_of(std::uint64_t slot) const noexcept {
        return (shared ? slot % count : slot) * stride;
    }
};

// Slot k % slots of a layout and its offset for k = 0, 1, 2...: what offset_of(k % slots) gives,
// advanced by one without a division (a 64-bit divide, among the slowest integer instructions,
// on every message).
struct slot_cursor {
    std::uint64_t slot = 0, in_cycle = 0, offset = 0;
    void advance(std::uint64_t slots, const buffer_layout& l) noexcept {
        const bool wraps = ++slot == slots;
        if (wraps) slot = 0;
        const bool cycle_wraps = l.shared && ++in_cycle == l.count;
        if (wraps || cycle_wraps) {
            in_cycle = 0;
            offset = 0;
        } else {
            offset += l.stride;
        }
    }
};
bool shares_buffers(const settings& s) noexcept;  // the cycle buffer, not one per operation

// --multi-recv: whether the sends of one size are received in multi-receive buffers (the send
// tests, below multi_recv_below; larger sizes of -a use plain receives), how many buffers a
// receiving side keeps posted, and the bytes of each: at least 64 KiB, and at least the tx depth
// of the largest size they serve, so that while one is being posted again the other takes a
// whole window of messages and none waits as unexpected. 0 when no size uses them.
bool multi_recv_for(const settings& s, std::uint64_t size) noexcept;
inline constexpr std::uint32_t multi_recv_buffers = 2;
inline constexpr std::uint64_t multi_recv_min_bytes = 64u << 10;
std::uint64_t multi_recv_buffer_bytes(const settings& s);
// One operation in this many asks for a completion entry (-Q as it applies to one size).
std::uint32_t cq_mod_for(const settings& s, std::uint64_t size) noexcept;
buffer_layout layout_for(const settings& s, std::uint64_t size) noexcept;

struct verify_state {
    std::uint64_t checked = 0;   // messages or slots checked
    std::uint64_t failures = 0;  // of which wrong
    std::string first;           // the first failure, in words
    void fail(std::string what) {
        if (failures++ == 0) first = std::move(what);
    }
};

struct size_run {
    std::uint64_t size = 0;
    std::uint32_t depth = 1;
    std::uint64_t slots = 1;
    buffer_layout layout;  // where slot k of the local buffers and of the region lies
    bool initiator = false, receiver = false, responder = false;
    // This side receives this size's sends in its multi-receive buffers (--multi-recv): rx_done
    // counts messages, rx_posted stays 0, rx_limit is the peer's count once known.
    bool multi = false;
    // initiator
    std::uint64_t limit = 0;  // iterations to post (UINT64_MAX: until stopped)
    bool stopped = false;
    std::uint64_t posted = 0, completed = 0, outstanding = 0;
    std::uint32_t cq_mod = 1;       // cq_mod_for
    std::uint32_t unsignaled = 0;   // posted since the last operation that asked for an entry
    std::uint64_t silent_seen = 0;  // endpoint::silent_completions() when last read
    slot_cursor next_post;          // the region slot of operation `posted` (posted % slots)
    std::uint64_t t_first = 0, t_last = 0, deadline = 0;  // measurement clock
    std::uint64_t win_t = 0, win_count = 0;
    double peak_bps = 0;
    // receiver
    std::uint64_t rx_limit = 0, rx_posted = 0, rx_done = 0;
    bool peer_count_known = false;
    std::uint64_t peer_sent = 0;       // the peer's final count
    std::uint64_t pings_received = 0;  // responder
    // drain messages we owe the peer
    std::uint64_t drain_owed = 0, drain_posted = 0, drain_done = 0;
    // responder (latency): pongs to send
    std::uint64_t pongs_pending = 0, pongs_posted = 0, pongs_sent = 0;
    std::uint64_t pong_q = 0;         // the sequence number of the pong to send
    std::uint64_t atomic_expect = 0;  // atomic_lat: the value the next fetch must return
    // latency initiator
    bool ping_in_flight = false;
    std::uint64_t ping_t = 0;
    std::uint64_t samples_n = 0;
    verify_state verify;
};

// A control message as it arrived. from: the sender as the completion names it, any_peer for an
// address that is not in the address vector (the server's, before it answers a HELLO, is empty).
struct ctrl_arrival {
    ctrl_msg msg;
    peer_addr from = any_peer;
};

// Why a run with --tss may hear nothing from its peer, for a timeout's message: a peer with
// another key or SDI drops our frames unanswered; what this side dropped, by reason.
std::string tss_hint(const endpoint_counters& c);

class side {
  public:
    side(endpoint& ep, completion_queue& cq, address_vector& av, domain& dom, clock_fn clock);

    // Allocates buffers and registers the region for the run's settings (sizes, depth).
    std::error_code setup(const settings& s);
    void set_peer(peer_addr p, std::uint64_t key, std::uint64_t region_bytes);
    peer_addr peer() const noexcept { return peer_; }
    std::uint64_t region_key() const noexcept { return mr_.key(); }
    std::uint64_t region_size() const noexcept { return region_.size(); }
    endpoint& ep() noexcept { return ep_; }

    // ---- control channel ----
    // One control receive is posted at a time, and posted again when its message is taken (or
    // dropped as malformed), so a burst of messages never outruns the one-message inbox: the
    // rest wait in the library until then.
    std::error_code post_ctrl_recv();
    // To the peer (set_peer).
    std::error_code send_ctrl(const ctrl_msg& m) { return send_ctrl_to(peer_, m); }
    // To any address: the server's answers to HELLOs, before it has a peer.
    std::error_code send_ctrl_to(peer_addr to, const ctrl_msg& m);
    // The control message that arrived, if any (taken: the next poll may bring another).
    std::optional<ctrl_arrival> take_ctrl();
    // No control message to the peer still in flight (answers to others' HELLOs do not count:
    // one to an address where nobody answers stays in flight until the transport gives up).
    bool ctrl_sends_idle() const noexcept;
    // A control send to an address other than the peer's that the transport could not deliver
    // (the server's answer to a HELLO naming an address where nobody answers): not this side's
    // failure, so it is handed to the role instead.
    std::optional<peer_addr> take_undelivered_ctrl();
    ctrl_counters& ctrl_counts() noexcept { return ctrl_counts_; }
    const ctrl_counters& ctrl_counts() const noexcept { return ctrl_counts_; }
    // Why the first malformed control message was dropped (empty: none was).
    const std::string& first_malformed_ctrl() const noexcept { return first_malformed_; }

    // ---- traffic ----
    // Prepares one size: fills or clears the region, allocates nothing.
    void begin(std::uint64_t size, bool initiator, bool receiver, bool responder);
    void stop_initiator() noexcept { run_.stopped = true; }
    bool initiator_done() const noexcept;
    // The peer's final count of what it sent us: the receives beyond it await drain messages.
    // Returns how many drain messages the peer owes.
    std::uint64_t peer_sent(std::uint64_t n);
    // The peer's receives left over beyond what we sent: never more than the receives it may
    // post ahead (the depth); a larger count is refused (false).
    bool owe_drain(std::uint64_t n) {
        if (n > run_.depth) return false;
        run_.drain_owed = n;
        return true;
    }
    bool drained() const noexcept;
    // Checks the region after the peer's writes / atomics (--verify).
    void verify_region(std::uint64_t peer_sent_count);
    const size_run& run() const noexcept { return run_; }
    size_run& run() noexcept { return run_; }
    std::vector<std::uint64_t>& samples() noexcept { return samples_; }
    // What this side sent in the size that ended (the peer's receives wait for that many).
    std::uint64_t sent_count() const noexcept;
    // Bandwidth figures of this side's initiator.
    struct bw_figures {
        std::uint64_t completed = 0, elapsed_ns = 0;
        double peak_bps = 0;
    };
    bw_figures bw() const noexcept;

    // Reads one batch of completions (progressing the provider) and handles them; then posts.
    // False once an error stopped this side (see error()).
    bool poll();
    std::uint64_t activity() const noexcept { return activity_; }
    const std::string& error() const noexcept { return error_; }
    bool peer_silent() const noexcept { return peer_silent_; }
    void fail(std::string why);

  private:
    friend struct side_access;
    // Forced inline into poll(), its one caller: once per completion.
    [[gnu::always_inline]] void handle(const completion& c);
    void handle_error(const completion& c);
    void on_ctrl_recv(const completion& c);
    // on_data's every case but a bandwidth test's plain receive without --verify, out of line:
    // their strings (verification and failure messages) would make on_data save registers and
    // build a stack frame for every completion.
    void on_data(const completion& c, std::uint32_t slot, bool rx);
    [[gnu::noinline]] void on_data_slow(const completion& c, std::uint32_t slot, bool rx);
    void on_multi_recv(const completion& c, std::uint32_t k);
    // A message received (plain receive or multi-receive buffer): msg is where it is (a plain
    // receive's whole slot). Forced inline into its two callers, once per message.
    [[gnu::always_inline]] void on_received(const completion& c, std::span<const std::byte> msg);
    void on_remote_data(const completion& c);
    void pump();
    void post_bw_ops();         // pump()'s posts of the bandwidth tests
    void post_send_lists();     // post_bw_ops with -l
    void post_receive_lists();  // pump()'s receives with --recv_post_list
    // Forced inline, post_bw_op into post_initiator_op and that into pump(), each its one
    // caller: once per operation of a bandwidth test.
    [[gnu::always_inline]] std::error_code post_bw_op(std::uint32_t slot, std::uint64_t i,
                                                      op_flags flags);
    [[gnu::always_inline]] bool post_initiator_op(std::uint32_t slot, std::uint64_t i,
                                                  bool signaled);
    void count_silent_completions();
    // Forced inline into pump(), its one caller: once per message of a receiving side.
    [[gnu::always_inline]] bool post_receive();
    void post_multi_recv();
    bool post_drain();
    void post_pings();
    bool post_pong();
    void account(std::uint64_t now, std::uint64_t delta);
    void on_pong(std::uint64_t now);
    void lat_on_tx(std::uint32_t slot);
    void lat_on_rx(const completion& c, std::span<const std::byte> buf);
    bool post_lat_ping(std::uint32_t slot);
    // An atomic test's operation, the n-th on its region slot: FETCH_AND_ADD of 1, or
    // CMP_AND_SWAP of n for n + 1 (-A). `bad` (--corrupt) adds 2, or swaps in ~n (which no
    // later compare matches).
    std::error_code post_atomic_op(std::span<std::byte> operand, std::span<std::byte> result,
                                   std::uint64_t n, bool bad, std::uint64_t offset, void* ctx,
                                   op_flags flags);
    // --verify: the n-th atomic on a region slot fetched n (run in the order posted).
    void check_fetched(std::uint32_t slot, std::uint64_t n);
    std::string_view atomic_name() const noexcept {
        return s_.compare_and_swap ? "compare-and-swap" : "fetch-and-add";
    }
    // Inline: a bandwidth test asks for one per operation.
    std::span<std::byte> tx_slot(std::uint32_t k) noexcept {
        return std::span(tx_).subspan(slot_offset_[k], run_.size);
    }
    std::span<std::byte> rx_slot(std::uint32_t k) noexcept {
        return std::span(rx_).subspan(slot_offset_[k], run_.size);
    }
    std::span<std::byte> region_slot(std::uint64_t k) noexcept;
    std::span<std::byte> multi_buffer(std::uint32_t k) noexcept {
        return std::span(multi_rx_).subspan(k * multi_bytes_, multi_bytes_);
    }
    void verify_received(std::span<const std::byte> buf, std::uint64_t expected_q, bool exact);

    endpoint& ep_;
    completion_queue& cq_;
    address_vector& av_;
    domain& dom_;
    clock_fn clock_;
    settings s_;
    peer_addr peer_ = any_peer;
    std::uint64_t peer_key_ = 0, peer_region_ = 0;

    std::vector<std::byte> region_;
    memory_region mr_;
    // The send buffers: shared memory (uet::shared_buffer) where the system gives it, so that a
    // uet_memif client sends payloads from it without a copy; heap memory otherwise.
    shared_buffer tx_shared_;
    std::vector<std::byte> tx_heap_, rx_;
    std::span<std::byte> tx_;
    // The registration of tx_ (zero-copy transmit): declared after it, so it goes first.
    memory_region tx_mr_;
    slot_stack free_tx_, free_rx_;
    std::vector<std::uint64_t> tx_iter_;      // the iteration each tx slot carries
    std::vector<std::uint64_t> slot_offset_;  // layout.offset_of(k) of each tx and rx slot
    std::vector<std::uint8_t> tx_kind_;  // what each tx slot is doing (tx_op, tx_pong, tx_drain)
    std::vector<std::uint64_t> samples_;
    // -l: the list being posted, and after each of its sends the tx slots the list took so far
    // and run_.unsignaled as it would then be (what a list posted in part leaves).
    struct list_state {
        std::uint32_t taken = 0, unsignaled = 0;
    };
    std::vector<send_work> list_;
    std::vector<list_state> list_after_;
    std::vector<recv_work> recv_list_;  // --recv_post_list

    // --multi-recv: the buffers (multi_recv_buffers of multi_bytes_ each, allocated by setup) and
    // where each is. They outlive a size: a buffer stays posted until the library releases it,
    // and one still posted when the endpoint closes ends cancelled (retired, not a failure).
    enum multi_state : std::uint8_t { multi_idle, multi_posted, multi_retired };
    std::vector<std::byte> multi_rx_;
    std::uint64_t multi_bytes_ = 0;
    std::array<std::uint8_t, multi_recv_buffers> multi_state_{};
    std::uint32_t multi_idle_ = 0;  // buffers in multi_idle: pump() posts them

    void drop_malformed_ctrl(std::string why);

    ctrl_buffer ctrl_rx_{};
    bool ctrl_rx_posted_ = false;
    std::optional<ctrl_arrival> inbox_;
    // Room for a few answers to HELLOs (some to addresses that never answer, until the transport
    // gives up on them) besides the run's own messages.
    static constexpr std::size_t ctrl_tx_slots = 8;
    std::array<ctrl_buffer, ctrl_tx_slots> ctrl_tx_{};
    std::array<bool, ctrl_tx_slots> ctrl_tx_used_{};
    std::array<peer_addr, ctrl_tx_slots> ctrl_tx_to_{};
    std::vector<peer_addr> undelivered_ctrl_;  // at most ctrl_tx_slots
    ctrl_counters ctrl_counts_;
    std::string first_malformed_;

    size_run run_;
    std::array<completion, 32> batch_{};
    std::uint64_t activity_ = 0;
    std::string error_;
    bool peer_silent_ = false;  // the error was the peer not answering
};

}  // namespace uet::perf
