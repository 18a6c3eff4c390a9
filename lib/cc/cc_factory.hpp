// Choosing a PDC's congestion control at run time without a heap: any_controller holds one of
// the controllers in place (a std::variant sized for the largest) and hands out the common
// interface. The engine keeps one any_controller per PDC and the parameter structs once.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <variant>

#include "cc/controller.hpp"
#include "cc/nscc.hpp"
#include "cc/rccc.hpp"

namespace uet::cc {

enum class algorithm : std::uint8_t { none, nscc, rccc };

std::string_view algorithm_name(algorithm a) noexcept;
// "none" (or "fixed"), "nscc", "rccc".
std::optional<algorithm> parse_algorithm(std::string_view name) noexcept;

// What a PDC needs to build its controller. The pointed-to parameters are engine-owned and must
// outlive every PDC built from them; only the one the algorithm needs has to be set.
struct cc_config {
    algorithm algo = algorithm::none;
    std::uint64_t fixed_window = 0;     // algorithm::none
    const nscc_params* nscc = nullptr;  // algorithm::nscc
    const rccc_params* rccc = nullptr;  // algorithm::rccc (sender side)
};

class any_controller {
  public:
    any_controller() noexcept : v_(std::in_place_type<fixed_window>, 0) {}
    explicit any_controller(const cc_config& cfg) noexcept { reset(cfg); }

    // Rebuilds in place (a PDC slot being reused). Falls back to a fixed window when the
    // algorithm's parameters are missing.
    void reset(const cc_config& cfg) noexcept;

    controller& get() noexcept {
        return std::visit([](auto& c) -> controller& { return c; }, v_);
    }
    const controller& get() const noexcept {
        return std::visit([](const auto& c) -> const controller& { return c; }, v_);
    }
    controller* operator->() noexcept { return &get(); }
    const controller* operator->() const noexcept { return &get(); }
    algorithm kind() const noexcept { return static_cast<algorithm>(v_.index()); }

    // The concrete controller, for what only it offers (tests, traces).
    template <typename T>
    T* as() noexcept {
        return std::get_if<T>(&v_);
    }

  private:
    // Alternative order matches enum algorithm.
    std::variant<fixed_window, nscc, rccc_sender> v_;
};

// Free-function form of the factory.
inline any_controller make_controller(const cc_config& cfg) noexcept {
    return any_controller(cfg);
}

}  // namespace uet::cc
