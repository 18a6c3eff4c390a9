#include "cc/cc_factory.hpp"

namespace uet::cc {

std::string_view algorithm_name(algorithm a) noexcept {
    switch (a) {
        case algorithm::none:
            return "none";
        case algorithm::nscc:
            return "nscc";
        case algorithm::rccc:
            return "rccc";
    }
    return "?";
}

std::optional<algorithm> parse_algorithm(std::string_view name) noexcept {
    if (name == "none" || name == "fixed") return algorithm::none;
    if (name == "nscc") return algorithm::nscc;
    if (name == "rccc") return algorithm::rccc;
    return std::nullopt;
}

void any_controller::reset(const cc_config& cfg) noexcept {
    if (cfg.algo == algorithm::nscc && cfg.nscc) {
        v_.emplace<nscc>(*cfg.nscc);
    } else if (cfg.algo == algorithm::rccc && cfg.rccc) {
        v_.emplace<rccc_sender>(*cfg.rccc);
    } else {
        v_.emplace<fixed_window>(cfg.fixed_window);
    }
}

}  // namespace uet::cc
