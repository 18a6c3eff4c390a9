// Choosing a PDC's path selector at run time without a heap: any_selector holds one selector in
// place (a std::variant sized for the largest, the bitmap) and hands out the common interface.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <variant>

#include "lb/bitmap.hpp"
#include "lb/lb_context.hpp"
#include "lb/oblivious.hpp"
#include "lb/path_selector.hpp"
#include "lb/reps.hpp"

namespace uet::lb {

enum class algorithm : std::uint8_t { static_path, oblivious, bitmap, reps };

std::string_view algorithm_name(algorithm a) noexcept;
// "static" (or "ecmp"), "oblivious", "bitmap", "reps".
std::optional<algorithm> parse_algorithm(std::string_view name) noexcept;

class any_selector {
  public:
    any_selector() noexcept : v_(std::in_place_type<static_path>, 0) {}
    // `entropy` is the static path's value; the spraying selectors draw theirs from ctx.rng
    // (ctx must outlive the selector). Without a generator, falls back to the static path.
    any_selector(algorithm algo, lb_context& ctx, std::uint16_t entropy) noexcept {
        reset(algo, ctx, entropy);
    }

    void reset(algorithm algo, lb_context& ctx, std::uint16_t entropy) noexcept;

    path_selector& get() noexcept {
        return std::visit([](auto& s) -> path_selector& { return s; }, v_);
    }
    const path_selector& get() const noexcept {
        return std::visit([](const auto& s) -> const path_selector& { return s; }, v_);
    }
    path_selector* operator->() noexcept { return &get(); }
    algorithm kind() const noexcept { return static_cast<algorithm>(v_.index()); }
    // get().next_entropy(now), asked for every data packet: a static path (the default) answers
    // without the variant's dispatch and the two virtual calls of the general case.
    std::uint16_t next_entropy(std::uint64_t now) noexcept {
        if (static_path* s = std::get_if<static_path>(&v_)) return s->next_entropy();
        return get().next_entropy(now);
    }

    template <typename T>
    T* as() noexcept {
        return std::get_if<T>(&v_);
    }

  private:
    // Alternative order matches enum algorithm.
    std::variant<lb::static_path, lb::oblivious, lb::bitmap, lb::reps> v_;
};

inline any_selector make_selector(algorithm algo, lb_context& ctx, std::uint16_t entropy) noexcept {
    return any_selector(algo, ctx, entropy);
}

}  // namespace uet::lb
