// The impairment matrix: both retransmission modes x each operation x each impairment of the
// link (loss, reordering, duplication, corruption that the ICRC catches, and all at once),
// seeded. In every cell every byte is checked where it landed, every work request completes
// once, in order, with success, and atomics run exactly once (their originals are the running
// sums). Out-of-order cells never go back N. Each case prints what go-back-N costs against
// out-of-order mode in the same cell. ROCE_MATRIX_MESSAGES sets the messages per cell.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "roce_pair.hpp"

namespace {

using namespace uet::roce;
using namespace uet::roce::test;

enum class op { send, send_imm, write, write_imm, read, atomic };
enum class impairment { clean, loss1, loss10, reorder, dup5, corrupt1, all };

const char* name_of(op o) {
    static const char* names[] = {"send", "send_imm", "write", "write_imm", "read", "atomic"};
    return names[static_cast<int>(o)];
}
const char* name_of(impairment i) {
    static const char* names[] = {"clean", "loss1", "loss10", "reorder", "dup5", "corrupt1", "all"};
    return names[static_cast<int>(i)];
}

// memcmp of n bytes, which may be none (an empty buffer's data() may be null).
bool same(const std::uint8_t* a, const std::uint8_t* b, std::size_t n) {
    return n == 0 || std::memcmp(a, b, n) == 0;
}

int messages_per_cell() {
    const char* env = std::getenv("ROCE_MATRIX_MESSAGES");
    const int n = env != nullptr ? std::atoi(env) : 0;
    return n > 0 ? n : 1000;
}

void impair(wire_link& l, impairment i, std::uint64_t seed) {
    l.rng.seed(seed);
    const bool all = i == impairment::all;
    l.loss = i == impairment::loss1 || all ? 0.01 : i == impairment::loss10 ? 0.10 : 0;
    l.reorder = i == impairment::reorder || all ? 0.05 : 0;
    l.duplicate = i == impairment::dup5 || all ? 0.05 : 0;
    l.corrupt = i == impairment::corrupt1 || all ? 0.01 : 0;
}

// What one cell cost: simulated time and frames on the wire.
struct cell_cost {
    std::uint64_t ns = 0;
    std::uint64_t frames = 0;
};

// One cell: `count` messages of `o` from A to B over links impaired by `imp`.
class cell {
  public:
    cell(retransmit_mode mode, op o, impairment imp, int count, std::uint64_t seed)
        : p_(mode), op_(o), rng_(seed) {
        impair(p_.ab, imp, seed * 2 + 1);
        impair(p_.ba, imp, seed * 2 + 2);
        generate(count);
    }

    cell_cost run() {
        EXPECT_TRUE(p_.connected);
        std::vector<work_completion> done;
        std::size_t posted = 0;
        const std::uint64_t limit = 60'000'000'000;  // simulated: a stuck cell ends
        while (done.size() < wrs_.size() && p_.now < limit) {
            while (posted < wrs_.size() && p_.A.post_send(p_.a, wrs_[posted]) == post_error::none)
                ++posted;
            const std::uint64_t bytes_before = bytes_sent();
            const std::size_t moved =
                p_.ab.carry(p_.A, p_.B, p_.now) + p_.ba.carry(p_.B, p_.A, p_.now);
            p_.poll(done);
            if (p_.qa().attr.state == qp_state::err) break;
            // A round trip of 1 us plus the bytes at 100 Gb/s; idle until a timer: jump to it.
            const std::uint64_t busy = 1'000 + (bytes_sent() - bytes_before) * 8 / 100;
            const std::uint64_t next =
                moved != 0 ? p_.now : std::min(p_.A.next_deadline(), p_.B.next_deadline());
            p_.now = std::max(p_.now + busy, next == std::numeric_limits<std::uint64_t>::max()
                                                 ? p_.now + 100'000
                                                 : next);
        }
        EXPECT_EQ(p_.qa().attr.state, qp_state::rts) << to_string(p_.qa().error);
        check(done);
        return {p_.now, p_.A.counters().frames_tx + p_.B.counters().frames_tx};
    }

    std::uint64_t bytes_sent() const { return p_.A.counters().bytes_tx + p_.B.counters().bytes_tx; }
    std::uint64_t go_back_rounds() { return p_.qa().counters.go_back_rounds; }
    std::uint64_t icrc_rejects() const {
        return p_.A.counters().rejected(uet::wire::reject_reason::bad_icrc) +
               p_.B.counters().rejected(uet::wire::reject_reason::bad_icrc);
    }

  private:
    std::uint32_t size() { return static_cast<std::uint32_t>(rng_() % 4097); }

    void generate(int count) {
        constexpr std::uint32_t source_size = 1 << 16;
        if (op_ == op::read) {
            read_rkey_ = p_.mem_b.add_region(source_size, access_remote_read);
            for (auto& byte : p_.mem_b.regions[read_rkey_ - 1].bytes)
                byte = static_cast<std::uint8_t>(rng_());
        }
        if (op_ == op::atomic) atomic_rkey_ = p_.mem_b.add_region(16, access_remote_atomic);
        std::uint64_t write_at = 0;
        for (int i = 0; i < count; ++i) {
            const auto id = static_cast<std::uint64_t>(i);
            auto& buf = buffers_.emplace_back(op_ == op::atomic ? 8 : size());
            for (auto& byte : buf)
                byte = static_cast<std::uint8_t>(rng_());
            const auto len = static_cast<std::uint32_t>(buf.size());
            send_wr w;
            switch (op_) {
                case op::send:
                case op::send_imm: {
                    w = make_wr(id, op_ == op::send ? wr_opcode::send : wr_opcode::send_imm,
                                buf.data(), len);
                    w.imm = 0x1000 + i;
                    auto& rb = receive_buffers_.emplace_back(4096);
                    p_.mem_b.receives.push_back({rb.data(), 4096, 0, id});
                    break;
                }
                case op::write:
                case op::write_imm:
                    w = make_wr(id, op_ == op::write ? wr_opcode::write : wr_opcode::write_imm,
                                buf.data(), len, 0, write_at);
                    w.imm = 0x2000 + i;
                    write_at += len;
                    break;
                case op::read:
                    w = make_wr(id, wr_opcode::read, buf.data(), len, read_rkey_,
                                rng_() % (source_size - len + 1));
                    break;
                case op::atomic: {
                    // Every fourth a compare-and-swap on a chain that only moves if each runs
                    // once; the rest add to a sum.
                    const bool cas = i % 4 == 3;
                    w = make_wr(id, cas ? wr_opcode::cmp_swap : wr_opcode::fetch_add, buf.data(), 8,
                                atomic_rkey_, cas ? 8 : 0);
                    if (cas) {
                        w.compare_add = cas_chain_;
                        w.swap = ++cas_chain_;
                    } else {
                        w.compare_add = 1 + rng_() % 1000;
                        sum_ += w.compare_add;
                    }
                    break;
                }
            }
            wrs_.push_back(w);
        }
        if (op_ == op::write || op_ == op::write_imm) {
            write_rkey_ = p_.mem_b.add_region(write_at, access_remote_write);
            for (send_wr& w : wrs_)
                w.rkey = write_rkey_;
        }
    }

    void check(const std::vector<work_completion>& done) {
        // Each work request once, in posting order, with success.
        ASSERT_EQ(done.size(), wrs_.size());
        for (std::size_t i = 0; i < done.size(); ++i) {
            ASSERT_EQ(done[i].wr_id, i);
            ASSERT_EQ(done[i].status, wc_status::success) << "wr " << i;
        }
        const memory_target& m = p_.mem_b;
        switch (op_) {
            case op::send:
            case op::send_imm:
                ASSERT_EQ(m.arrivals.size(), wrs_.size());
                for (std::size_t i = 0; i < wrs_.size(); ++i) {
                    const auto& a = m.arrivals[i];
                    ASSERT_EQ(a.cookie, i);
                    ASSERT_EQ(a.status, wc_status::success);
                    ASSERT_EQ(a.length, wrs_[i].length);
                    ASSERT_EQ(a.with_imm, op_ == op::send_imm);
                    if (a.with_imm) {
                        ASSERT_EQ(a.imm, wrs_[i].imm);
                    }
                    ASSERT_TRUE(
                        same(receive_buffers_[i].data(), buffers_[i].data(), buffers_[i].size()))
                        << "send " << i;
                }
                break;
            case op::write:
            case op::write_imm:
                for (std::size_t i = 0; i < wrs_.size(); ++i)
                    ASSERT_TRUE(same(m.regions[write_rkey_ - 1].bytes.data() + wrs_[i].remote_va,
                                     buffers_[i].data(), buffers_[i].size()))
                        << "write " << i;
                if (op_ == op::write_imm) {
                    ASSERT_EQ(m.remote_imms.size(), wrs_.size());
                    for (std::size_t i = 0; i < wrs_.size(); ++i)
                        ASSERT_EQ(m.remote_imms[i], wrs_[i].imm);
                } else {
                    EXPECT_TRUE(m.remote_imms.empty());
                }
                break;
            case op::read:
                for (std::size_t i = 0; i < wrs_.size(); ++i)
                    ASSERT_TRUE(same(buffers_[i].data(),
                                     m.regions[read_rkey_ - 1].bytes.data() + wrs_[i].remote_va,
                                     buffers_[i].size()))
                        << "read " << i;
                break;
            case op::atomic: {
                // Run once each, in order: every fetch-and-add saw the sum before it, every
                // compare-and-swap its own link of the chain.
                EXPECT_EQ(m.atomics_run, wrs_.size());
                std::uint64_t sum = 0;
                for (std::size_t i = 0; i < wrs_.size(); ++i) {
                    std::uint64_t original;
                    std::memcpy(&original, buffers_[i].data(), 8);
                    if (wrs_[i].opcode == wr_opcode::cmp_swap) {
                        ASSERT_EQ(original, wrs_[i].compare_add) << "cmp_swap " << i;
                    } else {
                        ASSERT_EQ(original, sum) << "fetch_add " << i;
                        sum += wrs_[i].compare_add;
                    }
                }
                std::uint64_t counters[2];
                std::memcpy(counters, m.regions[atomic_rkey_ - 1].bytes.data(), 16);
                EXPECT_EQ(counters[0], sum_);
                EXPECT_EQ(counters[1], cas_chain_);
                break;
            }
        }
    }

    engine_pair p_;
    op op_;
    std::mt19937_64 rng_;
    std::vector<send_wr> wrs_;
    std::deque<std::vector<std::uint8_t>> buffers_, receive_buffers_;
    std::uint32_t write_rkey_ = 0, read_rkey_ = 0, atomic_rkey_ = 0;
    std::uint64_t sum_ = 0, cas_chain_ = 0;
};

class roce_impairment_matrix : public ::testing::TestWithParam<std::tuple<op, impairment>> {};

TEST_P(roce_impairment_matrix, every_message_arrives_once_in_both_modes) {
    const auto [o, imp] = GetParam();
    const int count = messages_per_cell();
    const std::uint64_t seed = 1 + static_cast<std::uint64_t>(o) * 16 + static_cast<int>(imp);
    cell gbn(retransmit_mode::go_back_n, o, imp, count, seed);
    const cell_cost g = gbn.run();
    cell ooo(retransmit_mode::out_of_order, o, imp, count, seed);
    const cell_cost r = ooo.run();
    EXPECT_EQ(ooo.go_back_rounds(), 0u);
    if (imp == impairment::corrupt1 || imp == impairment::all) {
        EXPECT_GT(gbn.icrc_rejects(), 0u);
        EXPECT_GT(ooo.icrc_rejects(), 0u);
    }
    std::printf(
        "%-9s %-8s %5d msgs: go-back-N %9.1f us %7llu frames (%llu rounds), "
        "out-of-order %9.1f us %7llu frames; slowdown %.2fx time, %.2fx frames\n",
        name_of(o), name_of(imp), count, static_cast<double>(g.ns) / 1e3,
        static_cast<unsigned long long>(g.frames),
        static_cast<unsigned long long>(gbn.go_back_rounds()), static_cast<double>(r.ns) / 1e3,
        static_cast<unsigned long long>(r.frames),
        static_cast<double>(g.ns) / static_cast<double>(r.ns),
        static_cast<double>(g.frames) / static_cast<double>(r.frames));
}

INSTANTIATE_TEST_SUITE_P(
    cells, roce_impairment_matrix,
    ::testing::Combine(::testing::Values(op::send, op::send_imm, op::write, op::write_imm, op::read,
                                         op::atomic),
                       ::testing::Values(impairment::clean, impairment::loss1, impairment::loss10,
                                         impairment::reorder, impairment::dup5,
                                         impairment::corrupt1, impairment::all)),
    [](const auto& info) {
        return std::string(name_of(std::get<0>(info.param))) + "_" +
               name_of(std::get<1>(info.param));
    });

}  // namespace
