// The traffic of one message size: the bandwidth tests' initiator (tx depth kept posted), the
// send tests' receiver, drain messages, region preparation and checks, and the figures.
#include <algorithm>
#include <cstring>
#include <limits>

#include "context.hpp"
#include "pattern.hpp"
#include "traffic.hpp"

namespace uet::perf {

namespace {

using namespace detail;
constexpr std::uint64_t unlimited = std::numeric_limits<std::uint64_t>::max();

void corrupt(std::span<std::byte> buf) {
    buf.back() ^= std::byte{0x5a};
}

}  // namespace

void side::begin(std::uint64_t size, bool initiator, bool receiver, bool responder) {
    run_ = size_run{};
    run_.size = size;
    run_.depth = depth_for(s_, size);
    run_.slots = slots_for(s_, size);
    run_.layout = layout_for(s_, size);
    run_.cq_mod = cq_mod_for(s_, size);
    run_.silent_seen = ep_.silent_completions();
    run_.initiator = initiator;
    run_.receiver = receiver;
    run_.responder = responder;
    run_.limit = s_.duration_ms ? unlimited : s_.iterations;
    run_.rx_limit = receiver ? run_.limit : 0;
    // send_lat's client receives the pongs without being the receiver of the control protocol.
    run_.multi = multi_recv_for(s_, size) && (receiver || s_.test == test_kind::send_lat);
    // Room for every slot of the run (run_.depth may exceed what open() reserved for).
    free_tx_.reserve(run_.depth);
    free_rx_.reserve(run_.depth);
    slot_offset_.resize(run_.depth);
    for (std::uint32_t k = run_.depth; k-- > 0;) {
        (void)free_tx_.push_back(k);
        (void)free_rx_.push_back(k);
        slot_offset_[k] = run_.layout.offset_of(k);
    }
    samples_.clear();
    // Our region as the target of the peer's reads, writes and atomics.
    const std::uint64_t used = std::min<std::uint64_t>(run_.slots * size, region_.size());
    std::memset(region_.data(), 0, used);
    if (s_.test == test_kind::read_bw || s_.test == test_kind::read_lat) {
        for (std::uint64_t k = 0; k < run_.slots; ++k)
            fill_pattern(region_slot(k), k);
        if (s_.corrupt_iteration) corrupt(region_slot((s_.corrupt_iteration - 1) % run_.slots));
    }
    if (!s_.verify) {
        for (std::uint32_t k = 0; k < run_.depth; ++k)
            fill_pattern(tx_slot(k), 0);
    }
    // Before READY (or START) goes, so that the peer's first message finds a buffer.
    if (run_.multi) post_multi_recv();
}

bool side::initiator_done() const noexcept {
    const bool initiator_idle = !run_.initiator || ((run_.stopped || run_.posted == run_.limit) &&
                                                    run_.outstanding == 0 && !run_.ping_in_flight);
    const bool responder_idle = run_.pongs_pending == 0 && run_.pongs_posted == run_.pongs_sent;
    return initiator_idle && responder_idle;
}

std::uint64_t side::sent_count() const noexcept {
    if (run_.initiator) return is_bw(s_.test) ? run_.completed : run_.posted;
    return run_.pongs_sent;
}

std::uint64_t side::peer_sent(std::uint64_t n) {
    run_.peer_count_known = true;
    run_.peer_sent = n;
    if (run_.multi) {
        // The buffers take whatever comes: done at the peer's count, nothing to drain.
        run_.rx_limit = n;
        return 0;
    }
    if (!run_.receiver && run_.rx_posted == 0) return 0;
    run_.rx_limit = std::max(run_.rx_posted, n);
    return run_.rx_limit - n;
}

bool side::drained() const noexcept {
    const bool received =
        run_.rx_done == run_.rx_limit && (run_.multi || run_.rx_posted == run_.rx_limit);
    return received && run_.drain_done == run_.drain_owed && initiator_done();
}

side::bw_figures side::bw() const noexcept {
    bw_figures f;
    f.completed = run_.completed;
    f.elapsed_ns = run_.t_last > run_.t_first ? run_.t_last - run_.t_first : 0;
    f.peak_bps = run_.peak_bps;
    return f;
}

void side::account(std::uint64_t now, std::uint64_t delta) {
    run_.t_last = now;
    run_.win_count += delta;
    // The peak is the best rate over windows of at least one tx depth of completions.
    const std::uint64_t window = std::max<std::uint64_t>(run_.depth, 32);
    if (run_.win_count >= window && now > run_.win_t) {
        const double bps = static_cast<double>(run_.win_count * run_.size) * 1e9 /
                           static_cast<double>(now - run_.win_t);
        run_.peak_bps = std::max(run_.peak_bps, bps);
        run_.win_t = now;
        run_.win_count = 0;
    }
}

// The post of a bandwidth test's operation i from slot `slot`. Each case returns its post's
// status: a blank std::error_code assigned later costs a call into libstdc++ (system_category())
// per operation.
inline std::error_code side::post_bw_op(std::uint32_t slot, std::uint64_t i, op_flags flags) {
    const std::uint64_t size = run_.size;
    const std::uint64_t k = run_.next_post.slot, offset = run_.next_post.offset;
    const bool bad = s_.corrupt_iteration && i + 1 == s_.corrupt_iteration;
    std::span<std::byte> buf = tx_slot(slot);
    void* ctx = make_ctx(ctx_tx, slot);
    switch (s_.test) {
        case test_kind::write_bw:
            if (s_.verify) fill_pattern(buf, size >= 8 ? i : k);
            if (bad) corrupt(buf);
            return ep_.write(peer_, buf, offset, peer_key_, ctx, flags);
        case test_kind::read_bw:
            return ep_.read(peer_, buf, offset, peer_key_, ctx, flags);
        case test_kind::send_bw:
            if (s_.verify) fill_pattern(buf, size >= 8 ? i : 0);
            if (bad) corrupt(buf);
            return ep_.send(peer_, buf, ctx, flags);
        default:  // atomic_bw, the last of the bandwidth tests
            // Operation i is region slot k's (i / slots)-th (post_bw_ops goes round the slots).
            return post_atomic_op(buf, rx_slot(slot), i / run_.slots, bad, offset, ctx, flags);
    }
}

// Operation i of a bandwidth test from slot `slot`; an unsignaled one (-Q) leaves the slot free
// (its buffer is the cycle buffer's, shared) and ends in endpoint::silent_completions().
inline bool side::post_initiator_op(std::uint32_t slot, std::uint64_t i, bool signaled) {
    if (!is_bw(s_.test)) return post_lat_ping(slot);
    const std::error_code ec =
        post_bw_op(slot, i, signaled ? op_flags::none : op_flags::no_completion);
    if (ec) {
        if (!transient(ec)) fail("cannot post: " + ec.message());
        return false;
    }
    tx_iter_[slot] = i;
    tx_kind_[slot] = tx_op;
    return true;
}

inline bool side::post_receive() {
    const std::uint32_t slot = free_rx_.back();
    const std::error_code ec = ep_.recv(rx_slot(slot), make_ctx(ctx_rx, slot), peer_);
    if (ec) {
        if (!transient(ec)) fail("cannot post a receive: " + ec.message());
        return false;
    }
    free_rx_.pop_back();
    ++run_.rx_posted;
    return true;
}

// Posts the multi-receive buffers that are not posted: at the start of a size, and after the
// library released one (its last message counted). One the queue has no room for now
// (errc::cq_full) is tried again after the next batch of completions.
void side::post_multi_recv() {
    for (std::uint32_t k = 0; k < multi_recv_buffers && multi_idle_; ++k) {
        if (multi_state_[k] != multi_idle) continue;
        const std::error_code ec =
            ep_.recv(multi_buffer(k), make_ctx(ctx_multi_rx, k), peer_, op_flags::multi_recv);
        if (ec) {
            if (!transient(ec)) fail("cannot post a multi-receive buffer: " + ec.message());
            return;
        }
        multi_state_[k] = multi_posted;
        --multi_idle_;
    }
}

bool side::post_drain() {
    const std::uint32_t slot = free_tx_.back();
    std::span<std::byte> buf = tx_slot(slot);
    fill_pattern(buf, run_.size >= 8 ? drain_sequence : 0);
    const std::error_code ec = ep_.send(peer_, buf, make_ctx(ctx_tx, slot));
    if (ec) {
        if (!transient(ec)) fail("cannot post a drain message: " + ec.message());
        return false;
    }
    free_tx_.pop_back();
    tx_kind_[slot] = tx_drain;
    ++run_.drain_posted;
    return true;
}

// As many operations as the depth and the run's limit allow, with the bounds and counters held
// in locals for the pass: as members behind the endpoint's call (opaque to the compiler) they
// would be read again and stored per operation.
inline void side::post_bw_ops() {
    if (run_.stopped || run_.posted >= run_.limit || run_.outstanding >= run_.depth) return;
    if (run_.posted == 0) {
        run_.t_first = run_.win_t = run_.t_last = clock_();
        run_.deadline = run_.t_first + s_.duration_ms * 1'000'000;
    }
    if (s_.post_list > 1) return post_send_lists();
    const std::uint64_t room =
        std::min(run_.limit - run_.posted, std::uint64_t{run_.depth} - run_.outstanding);
    const std::uint64_t last = run_.limit - 1, first = run_.posted;
    const std::uint32_t cq_mod = run_.cq_mod;
    std::uint64_t i = first;
    std::uint32_t unsignaled = run_.unsignaled;
    while (i - first < room && !free_tx_.empty()) {
        // perftest's -Q: one in cq_mod asks for an entry, and the last of an -n run.
        const bool signaled = unsignaled + 1 >= cq_mod || i == last;
        if (!post_initiator_op(free_tx_.back(), i, signaled)) break;
        if (signaled) {
            free_tx_.pop_back();
            unsignaled = 0;
        } else {
            ++unsignaled;
        }
        ++i;
        run_.next_post.advance(run_.slots, run_.layout);
    }
    run_.unsignaled = unsignaled;
    run_.posted = i;
    run_.outstanding += i - first;
}

// -l: send_bw's sends in lists of post_list (endpoint::send_list), a list once the depth has
// room for all of it (perftest's post list); which ask for an entry, and their slots, as in
// post_bw_ops. (Sends use no region slot: run_.next_post stays.) A run that ends on a partial list
// posts it too (perftest refuses an -n that is not a multiple of -l).
void side::post_send_lists() {
    const std::uint64_t last = run_.limit - 1;
    const std::uint32_t cq_mod = run_.cq_mod;
    // Held in locals: the stores into tx_kind_ (bytes, which may alias anything) would make the
    // compiler read each member again for every send.
    const bool verify = s_.verify;
    const std::uint64_t corrupt_at = s_.corrupt_iteration;
    const std::size_t size = run_.size;
    std::byte* const tx = tx_.data();
    const std::uint64_t* const offsets = slot_offset_.data();
    std::uint64_t* const iters = tx_iter_.data();
    std::uint8_t* const kinds = tx_kind_.data();
    send_work* const list = list_.data();
    list_state* const after = list_after_.data();
    for (;;) {
        // Shorter only where the depth (large sizes) or the run's end leaves less.
        const auto length = static_cast<std::uint32_t>(
            std::min<std::uint64_t>({s_.post_list, run_.depth, run_.limit - run_.posted}));
        if (length == 0 || std::uint64_t{run_.depth} - run_.outstanding < length) return;
        const std::uint64_t first = run_.posted;
        const std::uint32_t* const free_slots = free_tx_.data();
        const std::size_t free_count = free_tx_.size();
        std::uint32_t unsignaled = run_.unsignaled, taken = 0;
        for (std::uint32_t k = 0; k < length; ++k) {
            // An unsignaled send uses the slot the next signaled one takes (post_bw_ops).
            if (taken == free_count) return;  // the list waits for completions
            const std::uint64_t i = first + k;
            const bool signaled = unsignaled + 1 >= cq_mod || i == last;
            const std::uint32_t slot = free_slots[free_count - 1 - taken];
            const std::span<std::byte> buf{tx + offsets[slot], size};
            if (verify) fill_pattern(buf, size >= 8 ? i : 0);
            if (corrupt_at != 0 && i + 1 == corrupt_at) corrupt(buf);
            list[k] = {buf, make_ctx(ctx_tx, slot),
                       signaled ? op_flags::none : op_flags::no_completion};
            iters[slot] = i;
            kinds[slot] = tx_op;
            taken += signaled;
            unsignaled = signaled ? 0 : unsignaled + 1;
            after[k] = {taken, unsignaled};
        }
        std::size_t posted = 0;
        const std::error_code ec = ep_.send_list(peer_, std::span(list, length), posted);
        if (posted != 0) {
            free_tx_.drop(after[posted - 1].taken);
            run_.unsignaled = after[posted - 1].unsignaled;
            run_.posted += posted;
            run_.outstanding += posted;
        }
        if (ec) {
            if (!transient(ec)) fail("cannot post: " + ec.message());
            return;
        }
    }
}

// --recv_post_list: the receives in lists (endpoint::recv_list), a list once that many slots are
// free (shorter only where the receives still to post are fewer).
void side::post_receive_lists() {
    for (;;) {
        const auto length = static_cast<std::uint32_t>(
            std::min<std::uint64_t>(s_.recv_post_list, run_.rx_limit - run_.rx_posted));
        if (length == 0 || free_rx_.size() < length) return;
        for (std::uint32_t k = 0; k < length; ++k) {
            const std::uint32_t slot = free_rx_[free_rx_.size() - 1 - k];
            recv_list_[k] = {rx_slot(slot), make_ctx(ctx_rx, slot)};
        }
        std::size_t posted = 0;
        const std::error_code ec =
            ep_.recv_list(std::span(recv_list_.data(), length), posted, peer_);
        free_rx_.drop(posted);
        run_.rx_posted += posted;
        if (ec) {
            if (!transient(ec)) fail("cannot post a receive: " + ec.message());
            return;
        }
    }
}

void side::pump() {
    if (run_.size == 0) return;
    // A released buffer goes back first: before the next ping, whose answer it may take.
    if (multi_idle_ && run_.multi) post_multi_recv();
    if (run_.initiator) {
        if (is_bw(s_.test))
            post_bw_ops();
        else
            post_pings();
    }
    while (run_.pongs_pending && !free_tx_.empty() && post_pong()) {
    }
    if (s_.recv_post_list > 1 && run_.receiver && !run_.multi) {
        post_receive_lists();
    } else {
        while (run_.receiver && !run_.multi && run_.rx_posted < run_.rx_limit &&
               !free_rx_.empty() && post_receive()) {
        }
    }
    while (run_.drain_posted < run_.drain_owed && !free_tx_.empty() && post_drain()) {
    }
}

// The unsignaled operations that ended since the last look: completed as an entry would.
void side::count_silent_completions() {
    const std::uint64_t seen = ep_.silent_completions();
    const std::uint64_t ended = seen - run_.silent_seen;
    run_.silent_seen = seen;
    run_.outstanding -= ended;
    run_.completed += ended;
}

inline void side::on_received(const completion& c, std::span<const std::byte> msg) {
    ++run_.rx_done;
    if (!is_bw(s_.test)) {
        lat_on_rx(c, msg.first(std::min<std::size_t>(c.len, msg.size())));
        return;
    }
    if (!s_.verify) return;
    if (c.len != run_.size) {
        ++run_.verify.checked;
        run_.verify.fail("a message of " + std::to_string(c.len) + " bytes (" +
                         std::to_string(run_.size) + " expected)");
        return;
    }
    verify_received(msg, 0, false);
}

void side::on_data(const completion& c, std::uint32_t slot, bool rx) {
    if (rx && slot < run_.depth && !s_.verify && is_bw(s_.test) && free_rx_.push_back(slot))
        [[likely]] {
        ++run_.rx_done;
        return;
    }
    on_data_slow(c, slot, rx);
}

void side::on_data_slow(const completion& c, std::uint32_t slot, bool rx) {
    if (slot >= run_.depth) {
        fail("a completion for slot " + std::to_string(slot) + " of " + std::to_string(run_.depth));
        return;
    }
    // More slots given back than the run has: a completion came twice.
    if (!(rx ? free_rx_ : free_tx_).push_back(slot)) {
        fail("a second completion for " + std::string(rx ? "rx" : "tx") + " slot " +
             std::to_string(slot));
        return;
    }
    if (rx) {
        on_received(c, rx_slot(slot));
        return;
    }
    switch (tx_kind_[slot]) {
        case tx_drain:
            ++run_.drain_done;
            return;
        case tx_pong:
            ++run_.pongs_sent;
            return;
        default:
            break;
    }
    if (!is_bw(s_.test)) {
        lat_on_tx(slot);
        return;
    }
    --run_.outstanding;
    ++run_.completed;
    if (s_.verify && s_.test == test_kind::read_bw)
        verify_received(tx_slot(slot), tx_iter_[slot] % run_.slots, true);
    else if (s_.verify && s_.compare_and_swap)
        check_fetched(slot, tx_iter_[slot] / run_.slots);
}

// An entry of multi-receive buffer k: a message placed in it (at c.buf, c.len bytes), counted
// as a plain receive's would be; and, with completion_flags::multi_recv, the buffer released
// (that entry's message, if any, is its last), to be posted again by pump() once handled.
void side::on_multi_recv(const completion& c, std::uint32_t k) {
    if (k >= multi_recv_buffers || multi_state_[k] != multi_posted) {
        fail("a completion for multi-receive buffer " + std::to_string(k) + ", not posted");
        return;
    }
    const bool released = has(c.flags, completion_flags::multi_recv);
    if (c.len != 0 || !released) {
        const auto* at = static_cast<const std::byte*>(c.buf);
        if (s_.verify) {
            // The bytes checked must be the buffer's own: a message said to be elsewhere would be
            // read from memory the library did not write (a library fault: the run stops).
            const auto base = reinterpret_cast<std::uintptr_t>(multi_buffer(k).data());
            const auto p = reinterpret_cast<std::uintptr_t>(at);
            if (!at || p < base || p - base > multi_bytes_ || c.len > multi_bytes_ - (p - base)) {
                fail("a message of " + std::to_string(c.len) +
                     " bytes outside its multi-receive buffer");
                return;
            }
        }
        on_received(c, std::span(at, c.len));
    }
    if (released) {
        multi_state_[k] = multi_idle;
        ++multi_idle_;
    }
}

void side::verify_region(std::uint64_t sent) {
    if (!s_.verify) return;
    const std::uint64_t size = run_.size, slots = run_.slots;
    if (s_.test == test_kind::write_bw) {
        for (std::uint64_t k = 0; k < std::min(sent, slots); ++k) {
            const std::uint64_t last = k + (sent - 1 - k) / slots * slots;
            ++run_.verify.checked;
            if (const auto at = check_pattern(region_slot(k), size >= 8 ? last : k))
                run_.verify.fail("write " + std::to_string(last) + " (slot " + std::to_string(k) +
                                 "): wrong byte at offset " + std::to_string(*at));
        }
    } else if (is_atomic(s_.test)) {
        for (std::uint64_t k = 0; k < slots; ++k) {
            const std::uint64_t want = k < sent ? (sent - 1 - k) / slots + 1 : 0;
            std::uint64_t got = 0;
            std::memcpy(&got, region_.data() + k * 8, 8);
            ++run_.verify.checked;
            if (got != want)
                run_.verify.fail("atomic slot " + std::to_string(k) + " holds " +
                                 std::to_string(got) + " after " + std::to_string(want) + " " +
                                 std::string(atomic_name()) + "s");
        }
    }
}

}  // namespace uet::perf
