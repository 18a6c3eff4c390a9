// A delivery target over plain memory for the lib/roce tests: numbered regions (the rkey is
// the index + 1), a queue of posted receives, and a log of what arrived.
#pragma once

#include <cstdint>
#include <cstring>
#include <deque>
#include <vector>

#include "roce/delivery.hpp"
#include "roce/qp.hpp"

namespace uet::roce::test {

struct memory_target : delivery_target {
    struct region {
        std::vector<std::uint8_t> bytes;
        std::uint32_t access = 0;
    };
    struct arrival {
        std::uint64_t cookie;
        std::uint32_t length;
        bool with_imm;
        std::uint32_t imm;
        wc_status status;
    };
    std::vector<region> regions;
    std::deque<recv_slot> receives;
    std::vector<arrival> arrivals;
    std::vector<std::uint32_t> remote_imms;
    std::uint64_t atomics_run = 0;
    struct event {
        qpn_t qpn;
        qp_event what;
        std::uint16_t detail;
    };
    std::vector<event> events;

    std::uint32_t add_region(std::size_t size, std::uint32_t access) {
        regions.push_back({std::vector<std::uint8_t>(size), access});
        return static_cast<std::uint32_t>(regions.size());
    }
    std::uint8_t* at(std::uint32_t rkey, std::uint64_t va, std::uint64_t len, std::uint32_t need) {
        if (rkey == 0 || rkey > regions.size()) return nullptr;
        region& r = regions[rkey - 1];
        if (!(r.access & need) || va > r.bytes.size() || len > r.bytes.size() - va) return nullptr;
        return r.bytes.data() + va;
    }

    bool take_receive(qp&, std::span<const std::uint8_t>, recv_slot& out) override {
        if (receives.empty()) return false;
        out = receives.front();
        receives.pop_front();
        return true;
    }
    void receive_done(qp&, std::uint64_t cookie, std::uint32_t length, bool with_imm,
                      std::uint32_t imm, wc_status status) override {
        arrivals.push_back({cookie, length, with_imm, imm, status});
    }
    remote_memory place_write(qp&, std::uint32_t rkey, std::uint64_t va,
                              std::uint32_t length) override {
        return {at(rkey, va, length, access_remote_write)};
    }
    void remote_data(qp&, std::uint32_t imm, std::uint32_t) override { remote_imms.push_back(imm); }
    // READ holds: read_source gives out 0, 1, 2, ...; returned[h] counts read_done(h).
    std::vector<std::uint32_t> returned;
    std::uint64_t unknown_returns = 0;
    remote_memory read_source(qp&, std::uint32_t rkey, std::uint64_t va,
                              std::uint32_t length) override {
        std::uint8_t* p = at(rkey, va, length, access_remote_read);
        if (p == nullptr) return {};
        returned.push_back(0);
        return {p, static_cast<std::uint32_t>(returned.size() - 1)};
    }
    void read_done(qp&, std::uint32_t hold) override {
        if (hold < returned.size())
            ++returned[hold];
        else
            ++unknown_returns;
    }
    // Holds given out and not returned yet; false when one came back twice or unknown.
    bool holds_out(std::size_t& out) const {
        out = 0;
        for (std::uint32_t n : returned) {
            if (n > 1) return false;
            out += n == 0;
        }
        return unknown_returns == 0;
    }
    atomic_outcome atomic(qp&, std::uint32_t rkey, std::uint64_t va, wr_opcode op,
                          std::uint64_t swap_add, std::uint64_t compare) override {
        std::uint8_t* p = at(rkey, va, 8, access_remote_atomic);
        if (p == nullptr) return {};
        ++atomics_run;
        std::uint64_t v;
        std::memcpy(&v, p, 8);
        const std::uint64_t next =
            op == wr_opcode::fetch_add ? v + swap_add : (v == compare ? swap_add : v);
        std::memcpy(p, &next, 8);
        return {true, v};
    }
    void on_qp_event(qp& q, qp_event what, std::uint16_t detail) override {
        events.push_back({q.qpn, what, detail});
    }
    std::size_t count(qp_event what) const {
        std::size_t n = 0;
        for (const event& e : events)
            n += e.what == what;
        return n;
    }
};

}  // namespace uet::roce::test
