#include "wire/reject.hpp"

#include <iterator>

namespace uet::wire {

namespace {
struct reason_text {
    const char* name;
    const char* text;
};

constexpr reason_text reason_texts[] = {
    {"none", "accepted"},
    {"truncated", "truncated"},
#define UET_REJECT_REASON(name, text) {#name, text},
#include "wire/reject_l2l4.def"
#include "wire/reject_roce.def"
#include "wire/reject_uet.def"
#undef UET_REJECT_REASON
};
static_assert(std::size(reason_texts) == reject_reason_count);

const reason_text& lookup(reject_reason r) noexcept {
    auto i = static_cast<std::size_t>(r);
    static constexpr reason_text unknown{"unknown", "unknown reason"};
    return i < reject_reason_count ? reason_texts[i] : unknown;
}
}  // namespace

const char* to_string(reject_reason r) noexcept {
    return lookup(r).text;
}
const char* reject_name(reject_reason r) noexcept {
    return lookup(r).name;
}

}  // namespace uet::wire
