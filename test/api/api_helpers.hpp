// Helpers of the API tests: a fabric over the pipe provider with n endpoints that all know each
// other, byte patterns, and waiting for completions.
#pragma once

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "uet/uet.hpp"

namespace uet::test {

// Pages of their own for a buffer or a region, so that a test can take every access to them away
// (mprotect PROT_NONE) once the library must no longer touch them.
struct mapping {
    explicit mapping(std::size_t n)
        : size(n),
          at(mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)) {}
    ~mapping() {
        if (at != MAP_FAILED) munmap(at, size);
    }
    mapping(const mapping&) = delete;
    mapping& operator=(const mapping&) = delete;
    std::span<std::byte> bytes() const { return {static_cast<std::byte*>(at), size}; }
    std::size_t size;
    void* at;
};

struct world {
    fabric fab;
    domain dom;
    address_vector av;
    std::vector<completion_queue> cqs;
    std::vector<endpoint> eps;
    std::vector<peer_addr> peers;  // peers[i] names eps[i]

    world(const fabric_attr& fa, std::size_t n, const endpoint_attr& ea = {},
          std::size_t cq_size = 4096) {
        fab = fabric::open(fa).value();
        dom = fab.open_domain().value();
        av = dom.open_av().value();
        for (std::size_t i = 0; i < n; ++i)
            add(ea, cq_size);
    }

    std::size_t add(const endpoint_attr& ea, std::size_t cq_size = 4096) {
        cqs.push_back(dom.open_cq(cq_size).value());
        eps.push_back(dom.open_endpoint(ea, cqs.back(), av).value());
        peers.push_back(av.insert(eps.back().address()).value());
        return eps.size() - 1;
    }
};

inline fabric_attr lossy_fabric(std::uint64_t seed = 1) {
    fabric_attr a;
    a.mtu = 8192;
    a.seed = seed;
    a.impairments.loss = 0.02;
    a.impairments.reorder = 0.02;
    a.impairments.reorder_max_distance = 16;
    return a;
}

// A pattern that differs for every byte position and seed; fast to make and check.
inline void fill(std::span<std::byte> buf, std::uint64_t seed) {
    std::uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
    std::size_t i = 0;
    for (; i + 8 <= buf.size(); i += 8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        std::memcpy(buf.data() + i, &x, 8);
    }
    for (; i < buf.size(); ++i)
        buf[i] = static_cast<std::byte>(x >> (8 * (i % 8)));
}

inline std::vector<std::byte> pattern(std::size_t n, std::uint64_t seed) {
    std::vector<std::byte> v(n);
    fill(v, seed);
    return v;
}

inline std::span<const std::byte> as_bytes_of(const std::vector<std::byte>& v) {
    return {v.data(), v.size()};
}

// Waits for one entry of cq; expects a success.
inline completion wait_ok(completion_queue& cq) {
    completion c;
    const std::error_code ec = cq.wait(c);
    EXPECT_FALSE(ec) << ec.message() << " (" << c.detail << ")";
    return c;
}

// Waits for one entry of cq; expects an error and returns it.
inline completion wait_error(completion_queue& cq) {
    completion c;
    const std::error_code ec = cq.wait(c);
    EXPECT_TRUE(ec) << "expected an error completion";
    return c;
}

// Hands every entry waiting in cq, errors included, to on_entry; returns how many there were.
template <class F>
std::size_t drain(completion_queue& cq, const F& on_entry) {
    completion c[16];
    std::size_t got_any = 0;
    for (std::size_t k; (k = cq.read(c)) > 0; got_any += k)
        for (std::size_t j = 0; j < k; ++j)
            on_entry(c[j]);
    while (cq.read_error(c[0])) {
        on_entry(c[0]);
        ++got_any;
    }
    return got_any;
}

// drain() of a queue of receives: counts them in done and the truncated ones in truncated,
// expecting no other error; returns how many there were.
inline std::size_t drain_receives(completion_queue& cq, int& done, int& truncated) {
    return drain(cq, [&](const completion& c) {
        if (c.error == errc::truncated)
            ++truncated;
        else
            EXPECT_FALSE(c.error) << c.error.message();
        ++done;
    });
}

// Progresses w until count() reaches 64 (a transfer into or out of mr is under way, eps[0]'s
// operation not complete), then closes mr and makes its pages inaccessible (PROT_NONE), as an
// application that frees the memory right after close() would: the library faults if it touches
// the memory after that.
template <class Count>
void close_midway(world& w, memory_region& mr, const mapping& m, Count count) {
    for (int i = 0; i < 1'000'000 && count() < 64; ++i)
        ASSERT_TRUE(w.fab.progress());
    ASSERT_GE(count(), 64u);
    ASSERT_EQ(w.cqs[0].size(), 0u);
    mr.close();
    ASSERT_EQ(mprotect(m.at, m.size, PROT_NONE), 0);
}

// A 4 MiB region of its own pages at eps[1] (filled with pattern 9) that eps[0] reads whole
// into `back`: once eps[1] has sent 64 frames (the responses are on their way; a read's data lands
// only once all of it is in), the region is closed and its pages made inaccessible (PROT_NONE),
// so that the library faults if it reads the memory after close() returned.
struct read_of_a_closed_region {
    static constexpr std::size_t size = 4u << 20;
    mapping region{size};
    std::vector<std::byte> back = std::vector<std::byte>(size);
    std::uint64_t key = 0;  // the closed region's

    void run(world& w, std::uint32_t job, void* ctx) {
        ASSERT_NE(region.at, MAP_FAILED);
        fill(region.bytes(), 9);
        memory_region mr = w.dom.register_memory(region.bytes(), access::remote_read, job).value();
        key = mr.key();
        ASSERT_FALSE(w.eps[0].read(w.peers[1], back, 0, key, ctx));
        close_midway(w, mr, region, [&] { return w.eps[1].counters().packets_sent; });
    }
    // The read (context ctx) completed with every byte, and a new read of the closed region is
    // refused with `refused`.
    void expect_whole_then_refused(world& w, void* ctx, errc refused) {
        const completion c = wait_ok(w.cqs[0]);
        EXPECT_EQ(c.context, ctx);
        EXPECT_TRUE(complete());
        ASSERT_FALSE(w.eps[0].read(w.peers[1], std::span(back).first(64), 0, key, ctx));
        EXPECT_EQ(wait_error(w.cqs[0]).error, refused);
    }
    // Whether back holds every byte of the region.
    bool complete() const {
        std::vector<std::byte> want(size);
        fill(want, 9);
        return back == want;
    }
};

}  // namespace uet::test
