// The roce engine fuzzer's input format and set-up, shared by the harness (fuzz_roce_engine)
// and the seed writer (fuzz_seeds), which records engine traffic in the same format.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "roce_pair.hpp"

namespace uet::roce::fuzz {

inline constexpr std::uint8_t mode_mend = 1, mode_out_of_order = 2;  // the input's first byte
inline constexpr std::uint8_t record_to_a = 1, record_carry = 2;     // a record's flags
inline constexpr std::size_t max_record = 4224;  // the largest frame an engine sends

// Calls f(to_a, carry, frame) for each record {flags, 2-byte big-endian length, frame}; a
// length beyond the input takes what is left.
template <typename F>
void for_each_record(std::span<const std::uint8_t> in, F&& f) {
    std::vector<std::uint8_t> frame;
    while (in.size() >= 3) {
        const std::uint8_t flags = in[0];
        std::size_t len = std::size_t{in[1]} << 8 | in[2];
        in = in.subspan(3);
        len = std::min({len, in.size(), max_record});
        frame.assign(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(len));
        in = in.subspan(len);
        f((flags & record_to_a) != 0, (flags & record_carry) != 0, frame);
    }
}

inline void append_record(std::vector<std::uint8_t>& out, std::uint8_t flags,
                          std::span<const std::uint8_t> frame) {
    out.push_back(flags);
    out.push_back(static_cast<std::uint8_t>(frame.size() >> 8));
    out.push_back(static_cast<std::uint8_t>(frame.size()));
    out.insert(out.end(), frame.begin(), frame.end());
}

// Each end's memory: a region for WRITE and READ (rkey 1), one for READ (2), one for atomics
// (3), and `receives` posted receives of 4 KiB.
struct side_memory {
    std::vector<std::vector<std::uint8_t>> buffers;

    void give(test::memory_target& m, std::size_t receives) {
        m.add_region(16384, access_remote_write | access_remote_read);
        m.add_region(4096, access_remote_read);
        m.add_region(64, access_remote_atomic);
        for (std::size_t i = 0; i < receives; ++i) {
            auto& r = buffers.emplace_back(4096);
            m.receives.push_back({r.data(), 4096, 0, i});
        }
    }
};

// Every opcode once from QP q to its peer's regions; the number posted (wr_ids 0..n-1).
inline std::size_t post_work(engine& e, qpn_t q, std::vector<std::uint8_t>& buf) {
    const wr_opcode ops[] = {wr_opcode::send,      wr_opcode::write,    wr_opcode::read,
                             wr_opcode::fetch_add, wr_opcode::send_imm, wr_opcode::write_imm,
                             wr_opcode::cmp_swap};
    std::size_t id = 0;
    for (const wr_opcode op : ops) {
        const bool atomic = op == wr_opcode::fetch_add || op == wr_opcode::cmp_swap;
        const std::uint32_t rkey = atomic ? 3 : op == wr_opcode::read ? 2 : 1;
        const send_wr w = test::make_wr(id, op, buf.data() + 8 * id, atomic ? 8 : 2500, rkey);
        if (e.post_send(q, w) == post_error::none) ++id;
    }
    return id;
}

// The pair every input starts from: QPs connected, memory given, work posted both ways.
struct fuzz_pair {
    static constexpr std::size_t receives = 4;
    test::engine_pair p;
    side_memory at_a, at_b;
    std::vector<std::uint8_t> buf_a = std::vector<std::uint8_t>(8192, 1),
                              buf_b = std::vector<std::uint8_t>(8192, 2);
    std::size_t posted_a = 0, posted_b = 0;

    explicit fuzz_pair(std::uint8_t mode)
        : p((mode & mode_out_of_order) ? retransmit_mode::out_of_order
                                       : retransmit_mode::go_back_n) {
        at_a.give(p.mem_a, receives);
        at_b.give(p.mem_b, receives);
        posted_a = post_work(p.A, p.a, buf_a);
        posted_b = post_work(p.B, p.b, buf_b);
    }
};

}  // namespace uet::roce::fuzz
