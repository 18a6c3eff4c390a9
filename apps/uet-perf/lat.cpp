// The latency tests: one ping in flight, timed from its post to its answer.
//   send_lat   ping = send, pong = send back          half the round trip (perftest's rule)
//   write_lat  ping = write_data, pong = write_data    half the round trip; the target learns of
//              the write from its remote-data completion (placement is out of order, so polling
//              the last byte, as perftest does on RDMA, would not prove the whole write is in)
//   read_lat   a read                                  the whole round trip
//   atomic_lat a fetch-and-add of 1 (or -A's compare-and-swap) the whole round trip
#include <cstring>

#include "context.hpp"
#include "pattern.hpp"
#include "traffic.hpp"

namespace uet::perf {

namespace {

using namespace detail;
bool halves(test_kind t) {
    return t == test_kind::send_lat || t == test_kind::write_lat;
}

}  // namespace

void side::post_pings() {
    if (run_.ping_in_flight || run_.stopped || run_.posted >= run_.limit || free_tx_.empty())
        return;
    if (run_.posted == 0) {
        run_.t_first = clock_();
        run_.deadline = run_.t_first + s_.duration_ms * 1'000'000;
    }
    const std::uint32_t slot = free_tx_.back();
    if (!post_lat_ping(slot)) return;
    free_tx_.pop_back();
    ++run_.posted;
    ++run_.outstanding;
    run_.ping_in_flight = true;
}

bool side::post_lat_ping(std::uint32_t slot) {
    const std::uint64_t i = run_.posted, size = run_.size;
    const bool bad = s_.corrupt_iteration && i + 1 == s_.corrupt_iteration;
    std::span<std::byte> buf = tx_slot(slot);
    void* ctx = make_ctx(ctx_tx, slot);
    std::error_code ec;
    if (s_.verify && (s_.test == test_kind::send_lat || s_.test == test_kind::write_lat)) {
        fill_pattern(buf, size >= 8 ? i : 0);
        if (bad) buf.back() ^= std::byte{0x5a};
    }
    switch (s_.test) {
        case test_kind::send_lat:
            // The pong's receive goes first, so the pong never waits as unexpected (with
            // --multi-recv, a multi-receive buffer is posted throughout instead).
            if (!run_.multi && run_.rx_posted == run_.posted) {
                if (free_rx_.empty()) return false;
                const std::uint32_t r = free_rx_.back();
                ec = ep_.recv(rx_slot(r), make_ctx(ctx_rx, r), peer_);
                if (ec) break;
                free_rx_.pop_back();
                ++run_.rx_posted;
            }
            run_.ping_t = clock_();
            ec = ep_.send(peer_, buf, ctx);
            break;
        case test_kind::write_lat:
            run_.ping_t = clock_();
            ec = ep_.write_data(peer_, buf, 0, peer_key_, i, ctx);
            break;
        case test_kind::read_lat:
            run_.ping_t = clock_();
            ec = ep_.read(peer_, buf, 0, peer_key_, ctx);
            break;
        default:  // atomic_lat: every operation on region slot 0
            run_.ping_t = clock_();
            ec = post_atomic_op(buf, rx_slot(slot), i, bad, 0, ctx, op_flags::none);
    }
    if (ec) {
        if (!transient(ec)) fail("cannot post: " + ec.message());
        return false;
    }
    tx_iter_[slot] = i;
    tx_kind_[slot] = tx_op;
    return true;
}

void side::on_pong(std::uint64_t now) {
    std::uint64_t t = now - run_.ping_t;
    if (halves(s_.test)) t /= 2;
    if (samples_.size() < samples_.capacity()) samples_.push_back(t);
    ++run_.samples_n;
    ++run_.completed;
    run_.ping_in_flight = false;
    run_.t_last = now;
}

void side::lat_on_tx(std::uint32_t slot) {
    --run_.outstanding;
    const std::uint64_t i = tx_iter_[slot];
    if (s_.test == test_kind::read_lat) {
        if (s_.verify) verify_received(tx_slot(slot), 0, true);
        on_pong(clock_());
    } else if (s_.test == test_kind::atomic_lat) {
        if (s_.verify) check_fetched(slot, i);
        on_pong(clock_());
    }
}

// buf: the bytes received (at most the size), in a receive slot or a multi-receive buffer.
void side::lat_on_rx(const completion& c, std::span<const std::byte> buf) {
    const std::uint64_t size = run_.size;
    if (s_.verify && c.len != size) {
        ++run_.verify.checked;
        run_.verify.fail("a message of " + std::to_string(c.len) + " bytes (" +
                         std::to_string(size) + " expected)");
    }
    if (!run_.responder) {  // the client: our pong
        if (s_.verify && c.len == size) verify_received(buf, size >= 8 ? run_.posted - 1 : 0, true);
        on_pong(clock_());
        return;
    }
    if (run_.peer_count_known && run_.pings_received >= run_.peer_sent) {  // a drain message
        if (s_.verify && c.len == size) verify_received(buf, size >= 8 ? drain_sequence : 0, true);
        return;
    }
    const std::uint64_t q = run_.pings_received++;
    if (s_.verify && c.len == size) verify_received(buf, size >= 8 ? q : 0, true);
    if (run_.pongs_pending) {
        fail("a ping came before the previous pong was sent");
        return;
    }
    run_.pongs_pending = 1;
    run_.pong_q = q;
}

void side::on_remote_data(const completion& c) {
    if (s_.test != test_kind::write_lat || run_.size == 0) {
        fail("remote write data outside a write_lat run");
        return;
    }
    const std::uint64_t q = c.data, size = run_.size;
    if (s_.verify) verify_received(region_slot(0), size >= 8 ? q : 0, true);
    if (!run_.responder) {
        if (s_.verify && q + 1 != run_.posted)
            run_.verify.fail("pong " + std::to_string(q) + " for ping " +
                             std::to_string(run_.posted - 1));
        on_pong(clock_());
        return;
    }
    ++run_.pings_received;
    if (run_.pongs_pending) {
        fail("a ping came before the previous pong was sent");
        return;
    }
    run_.pongs_pending = 1;
    run_.pong_q = q;
}

bool side::post_pong() {
    const std::uint32_t slot = free_tx_.back();
    std::span<std::byte> buf = tx_slot(slot);
    const std::uint64_t q = run_.pong_q;
    if (s_.verify) fill_pattern(buf, run_.size >= 8 ? q : 0);
    void* ctx = make_ctx(ctx_tx, slot);
    const std::error_code ec = s_.test == test_kind::write_lat
                                   ? ep_.write_data(peer_, buf, 0, peer_key_, q, ctx)
                                   : ep_.send(peer_, buf, ctx);
    if (ec) {
        if (!transient(ec)) fail("cannot post a pong: " + ec.message());
        return false;
    }
    free_tx_.pop_back();
    tx_kind_[slot] = tx_pong;
    --run_.pongs_pending;
    ++run_.pongs_posted;
    return true;
}

}  // namespace uet::perf
