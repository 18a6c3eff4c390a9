// Helpers shared by the wire tests (test/unit/wire_*_test.cpp): a field_visitor that records what
// it is given, and the checks every header's golden bytes go through. Header-only; the tests
// that include it link GoogleTest.
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "wire/fields.hpp"
#include "wire/reject.hpp"

namespace uet::wire {
// Failed expectations on a reject_reason print its name.
inline void PrintTo(reject_reason r, std::ostream* os) {
    *os << reject_name(r);
}
}  // namespace uet::wire

namespace uet::wire_test {

// Records every call, to check the names, order and values a visit() reports.
struct recorder : wire::field_visitor {
    std::vector<std::string> headers;  // every begin()
    std::vector<std::string> names;    // "header.field", fields and bytes
    std::vector<std::string> symbols;  // of the fields that have one
    // "header.field=value", "header.field=value(symbol)", "header.field=[size]", "header.end"
    std::vector<std::string> lines;

    void begin(std::string_view h) override {
        current = h;
        headers.emplace_back(h);
    }
    void field(std::string_view n, std::uint64_t v) override { add(n, std::to_string(v)); }
    void field(std::string_view n, std::uint64_t v, std::string_view s) override {
        symbols.emplace_back(s);
        add(n, std::to_string(v) + "(" + std::string(s) + ")");
    }
    void bytes(std::string_view n, std::span<const std::uint8_t> b) override {
        add(n, "[" + std::to_string(b.size()) + "]");
    }
    void end() override {
        lines.push_back(current + ".end");
        current.clear();
    }

  private:
    void add(std::string_view n, const std::string& value) {
        names.push_back(current + "." + std::string(n));
        lines.push_back(names.back() + "=" + value);
    }
    std::string current;
};

// Every strict prefix of a header's bytes is rejected as truncated.
template <class H, std::size_t N>
void expect_truncations(const std::array<std::uint8_t, N>& wire) {
    for (std::size_t n = 0; n < N; ++n) {
        H h{};
        EXPECT_EQ(decode(std::span(wire).first(n), h), wire::reject_reason::truncated)
            << "length " << n;
    }
}

// encode into buffers one byte too small .. empty gives 0.
template <class H>
void expect_encode_too_small(const H& h) {
    std::array<std::uint8_t, 128> buf{};
    static_assert(H::wire_size <= buf.size());
    for (std::size_t n = 0; n < H::wire_size; ++n)
        EXPECT_EQ(encode(h, std::span(buf).first(n)), 0u) << "room " << n;
}

// encode(fields) == bytes, decode(bytes) == fields, a short output buffer gives 0 and every
// truncated input is rejected with `truncated`.
template <class H, std::size_t N>
void check_golden(const std::array<std::uint8_t, N>& bytes, const H& fields) {
    std::vector<std::uint8_t> buf(N + 4, 0xee);
    ASSERT_EQ(encode(fields, buf), N);
    EXPECT_EQ(std::vector<std::uint8_t>(buf.begin(), buf.begin() + N),
              std::vector<std::uint8_t>(bytes.begin(), bytes.end()));
    H out{};
    ASSERT_EQ(decode(bytes, out), wire::reject_reason::none);
    EXPECT_TRUE(out == fields);
    std::vector<std::uint8_t> small(N - 1);
    EXPECT_EQ(encode(fields, small), 0u);
    expect_truncations<H>(bytes);
}

}  // namespace uet::wire_test
