// uet-copy-stages: a model of a memif sender's memory work per frame, without DPDK or uet, to
// see what the copy into an mbuf costs next to the copy into the shared ring.
//   staged: per frame, a header and a payload from the application's buffer into one of a
//           burst's mbufs (uet's transmit), then the whole frame from the mbuf into the next
//           ring slot (memif's copy mode);
//   direct: the header and the payload straight into the ring slot (a sender that builds its
//           frames in the ring).
// A reader thread on the other CPU copies every slot out after it is written (memif's
// receiver), so the ring's lines move between the cores as on a real link. Prints ns per frame
// of each stage.
//   uet-copy-stages [staged|direct] [SLOTS (1024)] [BURST (32)] [FRAMES (20000000)]
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "pin.hpp"

namespace {

constexpr std::size_t frame_bytes = 1442, header_bytes = 98;
constexpr std::size_t payload_bytes = frame_bytes - header_bytes;
constexpr std::size_t slot_bytes = 2048, mbuf_bytes = 2304, mbuf_headroom = 128;
constexpr std::size_t app_buffer = 65536;  // a 64 KiB message, as write_bw -s 65536

using clock_type = std::chrono::steady_clock;
double ns_since(clock_type::time_point t) {
    return std::chrono::duration<double, std::nano>(clock_type::now() - t).count();
}

struct ring {
    std::vector<std::uint8_t> slots;
    std::size_t count;
    alignas(64) std::atomic<std::uint64_t> head{0};  // frames written
    alignas(64) std::atomic<std::uint64_t> tail{0};  // frames read
    alignas(64) std::atomic<bool> stop{false};
    explicit ring(std::size_t n) : slots(n * slot_bytes), count(n) {}
    std::uint8_t* slot(std::uint64_t i) { return &slots[(i % count) * slot_bytes]; }
};

// memif's receiver: every frame copied out of its slot once it is written.
void read_frames(ring& r) {
    std::vector<std::uint8_t> out(slot_bytes);
    std::uint64_t t = 0;
    while (!r.stop.load(std::memory_order_relaxed)) {
        const std::uint64_t h = r.head.load(std::memory_order_acquire);
        for (; t < h; ++t)
            std::memcpy(out.data(), r.slot(t), frame_bytes);
        r.tail.store(t, std::memory_order_release);
    }
}

struct stage_times {
    double build_ns = 0, ring_ns = 0;
};

stage_times write_frames(ring& r, bool direct, std::size_t burst, std::uint64_t frames) {
    std::vector<std::uint8_t> app(app_buffer, 0x5a), mbufs(burst * mbuf_bytes);
    std::uint8_t header[header_bytes] = {0x02};
    std::size_t at = 0;  // in the application's buffer
    stage_times t;
    for (std::uint64_t i = 0; i < frames; i += burst) {
        while (r.head.load(std::memory_order_relaxed) - r.tail.load(std::memory_order_acquire) >
               r.count - burst) {
        }
        auto start = clock_type::now();
        for (std::size_t k = 0; k < burst; ++k) {
            std::uint8_t* f = direct ? r.slot(i + k) : &mbufs[k * mbuf_bytes + mbuf_headroom];
            std::memcpy(f, header, header_bytes);
            std::memcpy(f + header_bytes, &app[at], payload_bytes);
            at = (at + payload_bytes) % (app_buffer - payload_bytes);
        }
        t.build_ns += ns_since(start);
        if (!direct) {
            start = clock_type::now();
            for (std::size_t k = 0; k < burst; ++k)
                std::memcpy(r.slot(i + k), &mbufs[k * mbuf_bytes + mbuf_headroom], frame_bytes);
            t.ring_ns += ns_since(start);
        }
        r.head.store(i + burst, std::memory_order_release);
    }
    t.build_ns /= static_cast<double>(frames);
    t.ring_ns /= static_cast<double>(frames);
    return t;
}

}  // namespace

int main(int argc, char** argv) {
    const std::string mode = argc > 1 ? argv[1] : "staged";
    const std::size_t slots = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 1024;
    const std::size_t burst = argc > 3 ? std::strtoul(argv[3], nullptr, 10) : 32;
    const std::uint64_t frames = argc > 4 ? std::strtoull(argv[4], nullptr, 10) : 20'000'000;
    if ((mode != "staged" && mode != "direct") || burst == 0 || slots < 2 * burst ||
        frames < burst) {
        std::fprintf(stderr,
                     "usage: uet-copy-stages [staged|direct] [SLOTS >= 2*BURST] [BURST > 0] "
                     "[FRAMES >= BURST]\n");
        return 2;
    }
    ring r(slots);
    bool reader_pinned = false;
    std::thread reader([&] {
        reader_pinned = uet::probe::pin_to_cpu(0);
        read_frames(r);
    });
    if (!uet::probe::pin_to_cpu(1)) {
        std::fprintf(stderr, "uet-copy-stages: cannot pin to CPU 1\n");
        std::exit(1);
    }
    const stage_times t = write_frames(r, mode == "direct", burst, frames);
    r.stop = true;
    reader.join();
    if (!reader_pinned) {
        std::fprintf(stderr, "uet-copy-stages: cannot pin to CPU 0\n");
        return 1;
    }
    std::printf(
        "%s, %zu slots, bursts of %zu: %s %.1f ns per frame, copy into the ring %.1f, "
        "total %.1f\n",
        mode.c_str(), slots, burst,
        mode == "direct" ? "frame written in the ring" : "frame built in an mbuf", t.build_ns,
        t.ring_ns, t.build_ns + t.ring_ns);
    return 0;
}
