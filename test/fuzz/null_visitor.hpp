// A field visitor that touches every value, so the fuzzers also exercise the printing paths.
#pragma once

#include "wire/fields.hpp"

namespace uet::fuzz {

class null_visitor final : public wire::field_visitor {
  public:
    void begin(std::string_view h) override { sink_ += h.size(); }
    void field(std::string_view n, std::uint64_t v) override { sink_ += n.size() + v; }
    void field(std::string_view n, std::uint64_t v, std::string_view s) override {
        sink_ += n.size() + v + s.size();
    }
    void bytes(std::string_view n, std::span<const std::uint8_t> b) override {
        for (auto x : b)
            sink_ += x;
        sink_ += n.size();
    }
    void end() override { ++sink_; }
    std::uint64_t sink_ = 0;
};

}  // namespace uet::fuzz
