#include "messages.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <stdexcept>

namespace uet::itest {

namespace {

constexpr std::uint32_t magic = 0x55455431;  // "UET1"
constexpr std::uint64_t fnv_offset = 0xcbf29ce484222325ull, fnv_prime = 0x100000001b3ull;

std::uint64_t splitmix(std::uint64_t x) noexcept {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

// The pattern word at 8-byte word w of the body: distinct per (epoch, index, offset), so a
// segment placed at the wrong offset or in the wrong message shows.
std::uint64_t pattern_word(std::uint32_t epoch, std::uint32_t index, std::uint64_t w) noexcept {
    return splitmix((std::uint64_t{epoch} << 56) ^ (std::uint64_t{index} << 32) ^ w);
}

void fill_body(std::span<std::uint8_t> body, std::uint32_t epoch, std::uint32_t index) noexcept {
    std::size_t i = 0;
    for (std::uint64_t w = 0; i + 8 <= body.size(); ++w, i += 8) {
        const std::uint64_t v = pattern_word(epoch, index, w);
        std::memcpy(&body[i], &v, 8);
    }
    const std::uint64_t v = pattern_word(epoch, index, i / 8);
    std::memcpy(&body[i], &v, body.size() - i);
}

std::uint64_t checksum(std::span<const std::uint8_t> body) noexcept {
    std::uint64_t h = fnv_offset;
    std::size_t i = 0;
    for (; i + 8 <= body.size(); i += 8) {
        std::uint64_t v;
        std::memcpy(&v, &body[i], 8);
        h = (h ^ v) * fnv_prime;
    }
    for (; i < body.size(); ++i)
        h = (h ^ body[i]) * fnv_prime;
    return h;
}

template <typename T>
void put(std::span<std::uint8_t> out, std::size_t at, T v) noexcept {
    std::memcpy(&out[at], &v, sizeof v);
}
template <typename T>
T get(std::span<const std::uint8_t> in, std::size_t at) noexcept {
    T v;
    std::memcpy(&v, &in[at], sizeof v);
    return v;
}

constexpr const char* mode_names[delivery_mode_count] = {"rud", "rod", "rudi", "uud"};

delivery_mode parse_mode(const std::string& s) {
    for (std::size_t m = 0; m < delivery_mode_count; ++m) {
        if (s == mode_names[m]) return static_cast<delivery_mode>(m);
    }
    throw std::invalid_argument("unknown delivery mode '" + s + "'");
}

std::uint32_t parse_size(const std::string& s) {
    std::size_t used = 0;
    std::uint64_t v = std::stoull(s, &used);
    const std::string unit = s.substr(used);
    if (unit == "k" || unit == "K")
        v <<= 10;
    else if (unit == "m" || unit == "M")
        v <<= 20;
    else if (!unit.empty())
        throw std::invalid_argument("bad size '" + s + "'");
    if (v > UINT32_MAX) throw std::invalid_argument("size too large '" + s + "'");
    return static_cast<std::uint32_t>(v);
}

}  // namespace

std::vector<plan_group> parse_plan(const std::string& text) {
    std::vector<plan_group> plan;
    std::size_t at = 0;
    while (at < text.size()) {
        std::size_t end = text.find(',', at);
        if (end == std::string::npos) end = text.size();
        const std::string item = text.substr(at, end - at);
        const auto colon = item.find(':');
        if (colon == std::string::npos)
            throw std::invalid_argument("expected MODE:SIZE*COUNT, got '" + item + "'");
        const auto star = item.find('*', colon);
        plan_group g;
        g.mode = parse_mode(item.substr(0, colon));
        g.size = parse_size(item.substr(
            colon + 1, star == std::string::npos ? std::string::npos : star - colon - 1));
        g.count = star == std::string::npos
                      ? 1
                      : static_cast<std::uint32_t>(std::stoul(item.substr(star + 1)));
        if (g.size < message_header_size) {
            throw std::invalid_argument("messages need at least " +
                                        std::to_string(message_header_size) + " bytes: '" + item +
                                        "'");
        }
        plan.push_back(g);
        at = end + 1;
    }
    return plan;
}

std::string describe(const plan_group& g) {
    std::string size = g.size % (1u << 20) == 0 ? std::to_string(g.size >> 20) + "m"
                       : g.size % 1024 == 0     ? std::to_string(g.size >> 10) + "k"
                                                : std::to_string(g.size);
    return std::string(mode_names[static_cast<std::size_t>(g.mode)]) + ":" + size + "*" +
           std::to_string(g.count);
}

void fill_message(std::span<std::uint8_t> out, std::uint32_t epoch, std::uint32_t index,
                  delivery_mode mode) {
    const auto body = out.subspan(message_header_size);
    fill_body(body, epoch, index);
    put(out, 0, magic);
    put(out, 4, epoch);
    put(out, 8, index);
    put(out, 12, static_cast<std::uint32_t>(out.size()));
    put(out, 16, static_cast<std::uint32_t>(mode));
    put(out, 20, std::uint32_t{0});
    put(out, 24, checksum(body));
}

const char* to_string(message_error e) noexcept {
    switch (e) {
        case message_error::none:
            return "none";
        case message_error::too_short:
            return "too_short";
        case message_error::bad_magic:
            return "bad_magic";
        case message_error::bad_size:
            return "bad_size";
        case message_error::bad_checksum:
            return "bad_checksum";
        case message_error::bad_byte:
            return "bad_byte";
    }
    return "unknown";
}

message_error check_message(std::span<const std::uint8_t> data, message_header& h,
                            std::size_t* first_bad) {
    if (data.size() < message_header_size) return message_error::too_short;
    if (get<std::uint32_t>(data, 0) != magic) return message_error::bad_magic;
    h.epoch = get<std::uint32_t>(data, 4);
    h.index = get<std::uint32_t>(data, 8);
    h.size = get<std::uint32_t>(data, 12);
    h.mode = static_cast<delivery_mode>(get<std::uint32_t>(data, 16));
    h.checksum = get<std::uint64_t>(data, 24);
    if (h.size != data.size()) return message_error::bad_size;
    const auto body = data.subspan(message_header_size);
    if (checksum(body) != h.checksum) return message_error::bad_checksum;
    // The checksum could collide; the pattern cannot lie about a byte.
    std::size_t i = 0;
    for (std::uint64_t w = 0; i < body.size(); ++w, i += 8) {
        const std::uint64_t v = pattern_word(h.epoch, h.index, w);
        const std::size_t n = std::min<std::size_t>(8, body.size() - i);
        if (std::memcmp(&body[i], &v, n) != 0) {
            if (first_bad) *first_bad = message_header_size + i;
            return message_error::bad_byte;
        }
    }
    return message_error::none;
}

plan_receiver::plan_receiver(std::vector<plan_group> plan, std::uint32_t epoch)
    : plan_(std::move(plan)), epoch_(epoch) {
    for (const auto& g : plan_) {
        for (std::uint32_t i = 0; i < g.count; ++i) {
            mode_of_.push_back(g.mode);
            size_of_.push_back(g.size);
        }
        (g.mode == delivery_mode::uud ? uud_total_ : reliable_total_) += g.count;
    }
    seen_.assign(mode_of_.size(), false);
}

bool plan_receiver::fail(std::string why) {
    ++errors_;
    last_error_ = std::move(why);
    return false;
}

bool plan_receiver::on_message(const received_message& m) {
    message_header h;
    std::size_t bad = 0;
    const message_error e = check_message(m.data, h, &bad);
    const std::string what = "message of " + std::to_string(m.data.size()) + " bytes (" +
                             to_string(m.mode) + ", index " + std::to_string(h.index) + ")";
    if (e == message_error::bad_byte)
        return fail(what + ": wrong byte at offset " + std::to_string(bad));
    if (e != message_error::none) return fail(what + ": " + to_string(e));
    if (h.epoch != epoch_)
        return fail(what + ": from epoch " + std::to_string(h.epoch) + ", expected " +
                    std::to_string(epoch_));
    if (h.index >= seen_.size()) return fail(what + ": index beyond the plan");
    if (mode_of_[h.index] != m.mode || h.mode != m.mode || size_of_[h.index] != h.size) {
        return fail(what + ": mode or size differs from the plan");
    }
    if (seen_[h.index]) return fail(what + ": delivered twice");
    if (m.mode == delivery_mode::rod) {
        if (static_cast<std::int64_t>(h.index) <= last_rod_) {
            return fail(what + ": ROD out of order after index " + std::to_string(last_rod_));
        }
        // Every earlier ROD message must have arrived: in order means no gaps either.
        for (std::int64_t i = last_rod_ + 1; i < h.index; ++i) {
            if (mode_of_[static_cast<std::size_t>(i)] == delivery_mode::rod) {
                return fail(what + ": ROD index " + std::to_string(i) + " skipped");
            }
        }
        last_rod_ = h.index;
    }
    seen_[h.index] = true;
    ++seen_count_;
    bytes_ += m.data.size();
    ++(m.mode == delivery_mode::uud ? uud_seen_ : reliable_seen_);
    return true;
}

std::string plan_receiver::progress() const {
    return "received " + std::to_string(reliable_seen_) + "/" + std::to_string(reliable_total_) +
           " reliable, " + std::to_string(uud_seen_) + "/" + std::to_string(uud_total_) + " uud, " +
           std::to_string(errors_) + " errors";
}

plan_sender::plan_sender(engine& e, peer_id to, std::vector<plan_group> plan, std::uint32_t epoch,
                         const sender_limits& limits)
    : engine_(e), to_(to), epoch_(epoch), limits_(limits), by_status_(8, 0) {
    for (std::uint32_t g = 0; g < plan.size(); ++g) {
        groups_.push_back({plan[g], 0, 0, 0, 0});
        group_of_.insert(group_of_.end(), plan[g].count, g);
        total_ += plan[g].count;
    }
    buffers_.resize(total_);
    done_.assign(total_, false);
    group_end_ = groups_.empty() ? 0 : groups_[0].group.count;
}

void plan_sender::finish(std::uint32_t index, status s, std::uint64_t now) {
    if (index >= done_.size() || done_[index]) {
        ++duplicates_;
        return;
    }
    done_[index] = true;
    ++completed_;
    ++by_status_[static_cast<std::size_t>(s.code)];
    group_result& g = groups_[group_of_[index]];
    ++(s.ok() ? g.ok : g.failed);
    g.end_ns = now;
    --inflight_;
    inflight_bytes_ -= buffers_[index].size();
    std::vector<std::uint8_t>().swap(buffers_[index]);
}

void plan_sender::post(std::uint64_t now) {
    while (group_ < groups_.size()) {
        group_result& g = groups_[group_];
        if (next_ == group_end_) {
            // The next group starts once this one is over, so that its rate is its own.
            if (inflight_ != 0) return;
            if (++group_ == groups_.size()) return;
            group_end_ += groups_[group_].group.count;
            continue;
        }
        const std::uint32_t size = g.group.size;
        if (inflight_ >= limits_.window ||
            (inflight_ != 0 && inflight_bytes_ + size > limits_.window_bytes)) {
            return;
        }
        auto& buf = buffers_[next_];
        if (buf.empty()) {
            buf.resize(size);
            fill_message(buf, epoch_, next_, g.group.mode);
        }
        const status s = engine_.post_send(to_, g.group.mode, buf, next_);
        if (s.code == status_code::too_many_pending) return;  // the engine is full: later
        if (g.start_ns == 0) g.start_ns = now;
        ++inflight_;
        inflight_bytes_ += size;
        if (!s.ok()) finish(next_, s, now);
        ++next_;
    }
}

void plan_sender::step(std::uint64_t now) {
    std::array<send_completion, 64> out;
    for (std::size_t n; (n = engine_.poll_send_completions(out)) != 0;) {
        for (std::size_t i = 0; i < n; ++i)
            finish(static_cast<std::uint32_t>(out[i].context), out[i].result, now);
    }
    post(now);
}

std::string plan_sender::progress() const {
    return "completed " + std::to_string(completed_) + "/" + std::to_string(total_) + " (" +
           std::to_string(failures()) + " failed), group " +
           std::to_string(std::min(group_ + 1, groups_.size())) + "/" +
           std::to_string(groups_.size());
}

}  // namespace uet::itest
