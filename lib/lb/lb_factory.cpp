#include "lb/lb_factory.hpp"

namespace uet::lb {

std::string_view algorithm_name(algorithm a) noexcept {
    switch (a) {
        case algorithm::static_path:
            return "static";
        case algorithm::oblivious:
            return "oblivious";
        case algorithm::bitmap:
            return "bitmap";
        case algorithm::reps:
            return "reps";
    }
    return "?";
}

std::optional<algorithm> parse_algorithm(std::string_view name) noexcept {
    if (name == "static" || name == "ecmp") return algorithm::static_path;
    if (name == "oblivious") return algorithm::oblivious;
    if (name == "bitmap") return algorithm::bitmap;
    if (name == "reps") return algorithm::reps;
    return std::nullopt;
}

void any_selector::reset(algorithm algo, lb_context& ctx, std::uint16_t entropy) noexcept {
    if (!ctx.rng) algo = algorithm::static_path;
    switch (algo) {
        case algorithm::oblivious:
            v_.emplace<lb::oblivious>(ctx);
            return;
        case algorithm::bitmap:
            v_.emplace<lb::bitmap>(ctx);
            return;
        case algorithm::reps:
            v_.emplace<lb::reps>(ctx);
            return;
        case algorithm::static_path:
            break;
    }
    v_.emplace<lb::static_path>(entropy);
}

}  // namespace uet::lb
