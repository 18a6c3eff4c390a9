// A random mix of SENDs (with and without immediate), WRITEs, READs and fetch-and-adds from one
// QP to a peer's memory_target, and the checks that everything arrived once, in order, intact.
// Shared by the QP pair test (packets handed across) and the engine test (frames).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <random>
#include <utility>
#include <vector>

#include "roce/verbs.hpp"
#include "roce_memory.hpp"

namespace uet::roce::test {

class workload {
  public:
    explicit workload(memory_target& peer) : mem_(peer) {
        write_rkey_ = mem_.add_region(1 << 20, access_remote_write);
        read_rkey_ = mem_.add_region(1 << 20, access_remote_read);
        atomic_rkey_ = mem_.add_region(64, access_remote_atomic);
        auto& r = mem_.regions[read_rkey_ - 1].bytes;
        for (std::size_t i = 0; i < r.size(); ++i)
            r[i] = static_cast<std::uint8_t>(i * 7 + 3);
    }

    void generate(int count, std::mt19937_64& rng, std::uint32_t max_size = 20000) {
        std::uniform_int_distribution<std::uint32_t> size(0, max_size);
        std::uint32_t write_at = 0;
        for (int i = 0; i < count; ++i) {
            send_wr w;
            w.wr_id = static_cast<std::uint64_t>(i);
            auto& buf = buffers_.emplace_back(size(rng));
            for (auto& byte : buf)
                byte = static_cast<std::uint8_t>(rng());
            w.local = buf.data();
            w.length = static_cast<std::uint32_t>(buf.size());
            const std::uint64_t kind = rng() % 5;
            if (kind == 0) {
                w.opcode = (i % 2) ? wr_opcode::send_imm : wr_opcode::send;
                w.imm = 1000u + static_cast<std::uint32_t>(i);
                sends_.push_back(i);
            } else if (kind == 1) {
                w.opcode = (i % 3) ? wr_opcode::write : wr_opcode::write_imm;
                w.rkey = write_rkey_;
                if (write_at + w.length > (1u << 20)) {
                    write_at = 0;
                    writes_.clear();  // later writes may land over these
                }
                w.remote_va = write_at;
                writes_.push_back({i, write_at});
                write_at += w.length;
            } else if (kind == 2) {
                w.opcode = wr_opcode::read;
                w.rkey = read_rkey_;
                w.remote_va = rng() % 100000;
                reads_.push_back(i);
            } else {
                buf.assign(8, 0);
                w.local = buf.data();
                w.length = 8;
                w.opcode = wr_opcode::fetch_add;
                w.rkey = atomic_rkey_;
                w.remote_va = 8;
                w.compare_add = 1;
                fetch_adds_.push_back(i);
            }
            wrs_.push_back(w);
        }
    }

    const std::vector<send_wr>& wrs() const { return wrs_; }

    // Keeps `depth` receives posted at the peer, max_size bytes each.
    void refill_receives(std::size_t depth = 64, std::uint32_t max_size = 20000) {
        while (mem_.receives.size() < depth) {
            auto& rb = receive_buffers_.emplace_back(max_size);
            mem_.receives.push_back({rb.data(), max_size, 0, receive_buffers_.size() - 1});
        }
    }
    void post_one_receive(std::uint32_t max_size = 20000) {
        refill_receives(mem_.receives.size() + 1, max_size);
    }

    void check(const std::vector<work_completion>& completions) const {
        ASSERT_EQ(completions.size(), wrs_.size());
        for (std::size_t i = 0; i < wrs_.size(); ++i) {
            EXPECT_EQ(completions[i].wr_id, i);
            EXPECT_EQ(completions[i].status, wc_status::success) << i;
        }
        // SENDs arrived in order, whole, with their immediates.
        ASSERT_EQ(mem_.arrivals.size(), sends_.size());
        for (std::size_t k = 0; k < sends_.size(); ++k) {
            const auto& a = mem_.arrivals[k];
            const auto& src = buffers_[sends_[k]];
            EXPECT_EQ(a.status, wc_status::success);
            ASSERT_EQ(a.length, src.size());
            EXPECT_EQ(std::memcmp(receive_buffers_[a.cookie].data(), src.data(), src.size()), 0)
                << "send " << sends_[k];
            EXPECT_EQ(a.with_imm, sends_[k] % 2 == 1);
        }
        for (const auto& [i, at] : writes_)
            EXPECT_EQ(std::memcmp(mem_.regions[write_rkey_ - 1].bytes.data() + at,
                                  buffers_[i].data(), buffers_[i].size()),
                      0)
                << "write " << i;
        for (int i : reads_)
            EXPECT_EQ(std::memcmp(buffers_[i].data(),
                                  mem_.regions[read_rkey_ - 1].bytes.data() + wrs_[i].remote_va,
                                  buffers_[i].size()),
                      0)
                << "read " << i;
        // Each fetch-and-add ran once: the counter is their number and the originals are
        // 0 .. n-1, each once.
        EXPECT_EQ(mem_.atomics_run, fetch_adds_.size());
        std::uint64_t counter;
        std::memcpy(&counter, mem_.regions[atomic_rkey_ - 1].bytes.data() + 8, 8);
        EXPECT_EQ(counter, fetch_adds_.size());
        std::vector<std::uint64_t> originals;
        for (int i : fetch_adds_) {
            std::uint64_t v;
            std::memcpy(&v, buffers_[i].data(), 8);
            originals.push_back(v);
        }
        std::sort(originals.begin(), originals.end());
        for (std::size_t k = 0; k < originals.size(); ++k)
            EXPECT_EQ(originals[k], k);
    }

  private:
    memory_target& mem_;
    std::uint32_t write_rkey_ = 0, read_rkey_ = 0, atomic_rkey_ = 0;
    std::vector<send_wr> wrs_;
    std::deque<std::vector<std::uint8_t>> buffers_, receive_buffers_;
    std::vector<int> sends_, reads_, fetch_adds_;
    std::vector<std::pair<int, std::uint32_t>> writes_;
};

}  // namespace uet::roce::test
