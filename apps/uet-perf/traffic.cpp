// A side's resources, its control channel, completion handling and the bandwidth tests' traffic.
// The latency tests' ping-pong is in lat.cpp.
#include "traffic.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <limits>
#include <utility>

#include "context.hpp"
#include "pattern.hpp"

namespace uet::perf {

namespace {

constexpr std::uint64_t in_flight_cap = 64u << 20;
constexpr std::uint64_t verify_region_cap = 256u << 20;
constexpr std::uint64_t unlimited = std::numeric_limits<std::uint64_t>::max();

using namespace detail;

}  // namespace

std::uint64_t steady_ns() {
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                          std::chrono::steady_clock::now().time_since_epoch())
                                          .count());
}

std::uint32_t depth_for(const settings& s, std::uint64_t size) noexcept {
    if (!is_bw(s.test)) return 2;  // a ping, and the completion of the previous one
    const std::uint64_t cap = std::max<std::uint64_t>(1, in_flight_cap / size);
    return static_cast<std::uint32_t>(std::min<std::uint64_t>(s.tx_depth, cap));
}

std::uint64_t slots_for(const settings& s, std::uint64_t size) noexcept {
    if (!is_bw(s.test)) return 1;
    const bool writes = s.test == test_kind::write_bw;
    if (s.verify && writes && !s.duration_ms) {
        const std::uint64_t cap = std::max<std::uint64_t>(1, verify_region_cap / size);
        return std::min(s.iterations, cap);
    }
    return depth_for(s, size);
}

bool shares_buffers(const settings& s) noexcept {
    return is_bw(s.test) && !s.verify && !s.distinct_buffers;
}

std::uint32_t cq_mod_for(const settings& s, std::uint64_t size) noexcept {
    if (!is_bw(s.test) || !shares_buffers(s)) return 1;
    return std::max<std::uint32_t>(1, std::min(s.cq_mod, depth_for(s, size)));
}

buffer_layout layout_for(const settings& s, std::uint64_t size) noexcept {
    buffer_layout l;
    l.shared = shares_buffers(s);
    if (!l.shared) {
        l.stride = size;
        return l;
    }
    l.stride = std::max<std::uint64_t>(64, (size + 63) / 64 * 64);
    l.count = size <= cycle_buffer_bytes / 2 ? cycle_buffer_bytes / l.stride : 1;
    return l;
}

bool multi_recv_for(const settings& s, std::uint64_t size) noexcept {
    return s.multi_recv && is_send(s.test) && size < multi_recv_below;
}

std::uint64_t multi_recv_buffer_bytes(const settings& s) {
    std::uint64_t bytes = 0;
    for (std::uint64_t size : s.sizes())
        if (multi_recv_for(s, size))
            bytes = std::max({bytes, multi_recv_min_bytes, depth_for(s, size) * size});
    return (bytes + 63) / 64 * 64;  // whole cache lines
}

std::uint64_t region_bytes_for(const settings& s) {
    // A cycle buffer's slots all lie within its first page.
    std::uint64_t bytes = cycle_buffer_bytes;
    for (std::uint64_t size : s.sizes())
        bytes = std::max(bytes, slots_for(s, size) * size);
    return bytes;
}

std::string tss_hint(const endpoint_counters& c) {
    return "; with --tss both sides need the same key and --tss-sdi: a peer with another key "
           "drops our frames unanswered (here " +
           std::to_string(c.tss.dropped(tss_drop::bad_icv)) + " frames failed authentication, " +
           std::to_string(c.tss.dropped(tss_drop::unknown_sdi)) +
           " came from another secure domain, " + std::to_string(c.tss.dropped(tss_drop::not_tss)) +
           " were not sealed)";
}

side::side(endpoint& ep, completion_queue& cq, address_vector& av, domain& dom, clock_fn clock)
    : ep_(ep), cq_(cq), av_(av), dom_(dom), clock_(std::move(clock)) {}

std::error_code side::setup(const settings& s) {
    s_ = s;
    region_.assign(region_bytes_for(s), std::byte{0});
    auto mr = dom_.register_memory(
        region_, access::remote_read | access::remote_write | access::remote_atomic, s.job_id);
    if (!mr) return mr.error();
    mr_ = std::move(*mr);
    std::uint64_t stride = 16, slots = 2;
    for (std::uint64_t size : s.sizes()) {
        stride = std::max(stride, size);
        slots = std::max<std::uint64_t>(slots, depth_for(s, size));
    }
    // Local slots: sized for the largest message, as many as the most in flight (<= 64 MiB).
    std::uint64_t bytes = 0;
    for (std::uint64_t size : s.sizes())
        bytes = std::max(bytes, depth_for(s, size) * size);
    const std::uint64_t nslots = std::max<std::uint64_t>(slots, 2);
    tx_mr_.close();  // before its memory moves
    bytes = std::max({bytes, 2 * stride, cycle_buffer_bytes});
    tx_ = {};
    tx_shared_ = {};
    tx_heap_.clear();
    if (auto shared = shared_buffer::allocate(bytes)) {
        tx_shared_ = std::move(*shared);
        tx_ = tx_shared_.span().first(bytes);
    } else {
        tx_heap_.assign(bytes, std::byte{0});
        tx_ = tx_heap_;
    }
    rx_.assign(bytes, std::byte{0});
    // Registered as perftest registers its buffers: the provider may then send payloads from
    // them without a copy (fabric_attr::dpdk.zero_copy_min).
    auto tx_mr = dom_.register_memory(tx_, access::local_read, s.job_id);
    if (!tx_mr) return tx_mr.error();
    tx_mr_ = std::move(*tx_mr);
    // Allocated on both sides (either may be the one that receives), posted by begin().
    multi_bytes_ = multi_recv_buffer_bytes(s);
    multi_rx_.assign(multi_recv_buffers * multi_bytes_, std::byte{0});
    multi_state_.fill(multi_idle);
    multi_idle_ = multi_bytes_ ? multi_recv_buffers : 0;
    free_tx_.reserve(nslots);
    free_rx_.reserve(nslots);
    tx_iter_.assign(nslots, 0);
    tx_kind_.assign(nslots, 0);
    list_.assign(s.post_list, send_work{});
    list_after_.assign(s.post_list, list_state{});
    recv_list_.assign(s.recv_post_list, recv_work{});
    if (!is_bw(s.test))
        samples_.reserve(s.duration_ms ? (1u << 20)
                                       : std::min<std::uint64_t>(s.iterations, 1u << 24));
    return {};
}

void side::set_peer(peer_addr p, std::uint64_t key, std::uint64_t region_bytes) {
    peer_ = p;
    peer_key_ = key;
    peer_region_ = region_bytes;
}

// ---- control channel ----

std::error_code side::post_ctrl_recv() {
    if (ctrl_rx_posted_) return {};
    const std::error_code ec =
        ep_.trecv(ctrl_rx_, ctrl_tag, ctrl_tag_ignore, make_ctx(ctx_ctrl_rx, 0));
    if (!ec) ctrl_rx_posted_ = true;
    return ec;
}

std::error_code side::send_ctrl_to(peer_addr to, const ctrl_msg& m) {
    for (std::size_t k = 0; k < ctrl_tx_slots; ++k) {
        if (ctrl_tx_used_[k]) continue;
        const std::size_t n = encode(m, ctrl_tx_[k]);
        const std::error_code ec = ep_.tsend(to, std::span(ctrl_tx_[k].data(), n),
                                             ctrl_tag | static_cast<std::uint64_t>(m.kind),
                                             make_ctx(ctx_ctrl_tx, static_cast<std::uint32_t>(k)));
        if (!ec) {
            ctrl_tx_used_[k] = true;
            ctrl_tx_to_[k] = to;
        }
        return ec;
    }
    return errc::again;
}

bool side::ctrl_sends_idle() const noexcept {
    for (std::size_t k = 0; k < ctrl_tx_slots; ++k)
        if (ctrl_tx_used_[k] && ctrl_tx_to_[k] == peer_) return false;
    return true;
}

std::optional<ctrl_arrival> side::take_ctrl() {
    if (!inbox_) return std::nullopt;  // every step asks: no 230-byte message built for nothing
    std::optional<ctrl_arrival> m;
    m.swap(inbox_);
    if (const auto ec = post_ctrl_recv()) fail("cannot post a control receive: " + ec.message());
    return m;
}

std::optional<peer_addr> side::take_undelivered_ctrl() {
    if (undelivered_ctrl_.empty()) return std::nullopt;
    const peer_addr p = undelivered_ctrl_.back();
    undelivered_ctrl_.pop_back();
    return p;
}

void side::drop_malformed_ctrl(std::string why) {
    ++ctrl_counts_.malformed;
    if (first_malformed_.empty()) first_malformed_ = std::move(why);
    // Nothing waits in the inbox: the next message may come.
    if (const auto ec = post_ctrl_recv()) fail("cannot post a control receive: " + ec.message());
}

void side::on_ctrl_recv(const completion& c) {
    ctrl_rx_posted_ = false;
    std::string why;
    auto m = decode(std::span(ctrl_rx_.data(), std::min(c.len, ctrl_rx_.size())), why);
    // Anyone may send a tagged message: one that is not ours is dropped, never a failure.
    if (!m) return drop_malformed_ctrl(std::move(why));
    if (inbox_) {  // cannot happen: the receive is posted again only once the inbox is empty
        fail(std::string("control message ") + std::string(name_of(m->kind)) + " came before " +
             std::string(name_of(inbox_->msg.kind)) + " was handled");
        return;
    }
    inbox_ = ctrl_arrival{std::move(*m), c.from};
}

// ---- errors ----

void side::fail(std::string why) {
    if (error_.empty()) error_ = std::move(why);
}

void side::handle_error(const completion& c) {
    if (kind_of(c.context) == ctx_multi_rx && c.error == errc::canceled) {
        // A multi-receive buffer still posted when the endpoint closed (they outlive the sizes
        // and a receive has no cancel of its own): the end of the run, not a failure.
        const std::uint32_t k = slot_of(c.context);
        if (k < multi_recv_buffers && multi_state_[k] == multi_posted)
            multi_state_[k] = multi_retired;
        return;
    }
    if (kind_of(c.context) == ctx_ctrl_rx && c.error == errc::truncated) {
        // A tagged message longer than any control message: someone else's, dropped.
        ctrl_rx_posted_ = false;
        return drop_malformed_ctrl("a control message of more than " +
                                   std::to_string(ctrl_rx_.size()) + " bytes");
    }
    if (kind_of(c.context) == ctx_ctrl_tx) {
        const std::uint32_t k = slot_of(c.context);
        if (k < ctrl_tx_slots && ctrl_tx_used_[k]) {
            ctrl_tx_used_[k] = false;
            // An answer to a HELLO that named an address nobody answers at: the role's news
            // (that HELLO lapses), not a failure of the run with our peer.
            if (ctrl_tx_to_[k] != peer_) {
                undelivered_ctrl_.push_back(ctrl_tx_to_[k]);
                return;
            }
        }
    }
    std::string peer = "the peer";
    if (const auto a = av_.lookup(peer_)) peer = to_string(*a);
    std::string what = c.error.message();
    if (!c.detail.empty() && c.detail != what) what += " (" + std::string(c.detail) + ")";
    if (c.error == errc::peer_unreachable || c.error == errc::retry_limit) {
        peer_silent_ = true;
        fail("no answer from " + peer + ": " + what + (s_.tss ? tss_hint(ep_.counters()) : ""));
    } else if (c.error == errc::job_mismatch) {
        fail(peer + " runs another uet job: both sides need the same -p (" + what + ")");
    } else if (kind_of(c.context) == ctx_ctrl_tx || kind_of(c.context) == ctx_ctrl_rx) {
        fail("control message to " + peer + " failed: " + what);
    } else if (kind_of(c.context) == ctx_multi_rx) {
        fail("a multi-receive buffer failed (" + std::string(name_of(s_.test)) + " with " + peer +
             "): " + what);
    } else {
        fail(std::string(name_of(s_.test)) + " operation with " + peer + " failed: " + what);
    }
}

// ---- completions ----

bool side::poll() {
    if (!error_.empty()) return false;
    const std::size_t n = cq_.read(batch_);
    const std::uint64_t completed_before = run_.completed;
    for (std::size_t i = 0; i < n && error_.empty(); ++i)
        handle(batch_[i]);
    // --multi-recv: a message's entry asks for nothing to be posted back, so a full batch is
    // followed by the next at once (up to the queue's capacity). Entries left unread would
    // make the library hold the arrivals behind them for want of room in the queue.
    for (std::size_t more = n, left = cq_.capacity();
         run_.multi && more == batch_.size() && left > batch_.size() && error_.empty();
         left -= more) {
        more = cq_.read(batch_);
        for (std::size_t i = 0; i < more && error_.empty(); ++i)
            handle(batch_[i]);
    }
    if (error_.empty() && cq_.has_error()) {
        completion c;
        if (cq_.read_error(c)) handle_error(c);
    }
    if (n) ++activity_;
    if (!error_.empty()) return false;
    if (run_.initiator) {
        if (run_.cq_mod > 1) count_silent_completions();
        const std::uint64_t now = clock_();  // once per batch
        if (run_.completed != completed_before) account(now, run_.completed - completed_before);
        if (s_.duration_ms && run_.posted && now >= run_.deadline) run_.stopped = true;
    }
    pump();
    return error_.empty();
}

inline void side::handle(const completion& c) {
    if (has(c.flags, completion_flags::remote_cq_data)) {
        on_remote_data(c);
        return;
    }
    switch (kind_of(c.context)) {
        case ctx_ctrl_rx:
            on_ctrl_recv(c);
            break;
        case ctx_ctrl_tx: {
            const std::uint32_t k = slot_of(c.context);
            if (k < ctrl_tx_slots) ctrl_tx_used_[k] = false;
            break;
        }
        case ctx_tx:
            on_data(c, slot_of(c.context), false);
            break;
        case ctx_rx:
            on_data(c, slot_of(c.context), true);
            break;
        case ctx_multi_rx:
            on_multi_recv(c, slot_of(c.context));
            break;
        default:
            fail("a completion with an unknown context");
    }
}

std::span<std::byte> side::region_slot(std::uint64_t k) noexcept {
    return std::span(region_).subspan(run_.layout.offset_of(k), run_.size);
}

void side::verify_received(std::span<const std::byte> buf, std::uint64_t expected_q, bool exact) {
    ++run_.verify.checked;
    const std::uint64_t q = buf.size() >= 8 ? sequence_of(buf) : expected_q;
    if (exact && q != expected_q) {
        run_.verify.fail("message " + std::to_string(expected_q) + " carries sequence " +
                         std::to_string(q));
        return;
    }
    if (!exact && q != drain_sequence && run_.limit != unlimited && q >= s_.iterations) {
        run_.verify.fail("a message carries sequence " + std::to_string(q) + " (beyond -n)");
        return;
    }
    if (const auto at = check_pattern(buf, q))
        run_.verify.fail("message " + std::to_string(q) + ": wrong byte at offset " +
                         std::to_string(*at));
}

std::error_code side::post_atomic_op(std::span<std::byte> operand, std::span<std::byte> result,
                                     std::uint64_t n, bool bad, std::uint64_t offset, void* ctx,
                                     op_flags flags) {
    if (!s_.compare_and_swap) {
        const std::uint64_t add = bad ? 2 : 1;
        std::memcpy(operand.data(), &add, 8);
        return ep_.fetch_atomic(peer_, atomic_op::sum, atomic_type::uint64, operand.first(8),
                                result.first(8), offset, peer_key_, ctx, flags);
    }
    // The library copies the compare value when the operation is posted.
    const std::uint64_t swap = bad ? ~n : n + 1;
    std::array<std::byte, 8> compare;
    std::memcpy(compare.data(), &n, 8);
    std::memcpy(operand.data(), &swap, 8);
    return ep_.compare_atomic(peer_, atomic_type::uint64, compare, operand.first(8),
                              result.first(8), offset, peer_key_, ctx, flags);
}

void side::check_fetched(std::uint32_t slot, std::uint64_t n) {
    std::uint64_t got = 0;
    std::memcpy(&got, rx_slot(slot).data(), 8);
    ++run_.verify.checked;
    if (got != n)
        run_.verify.fail(std::string(atomic_name()) + " " + std::to_string(n) +
                         " of its slot returned " + std::to_string(got) + " (" + std::to_string(n) +
                         " expected)");
}

}  // namespace uet::perf
