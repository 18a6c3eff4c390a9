#include "ses/reassembly.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

#include "core/bit_range.hpp"
#include "core/small_copy.hpp"

namespace uet::ses {

namespace {

// Size class c holds buffers of 2^c bytes.
int size_class_of(std::uint32_t length) noexcept {
    return static_cast<int>(std::bit_width(std::bit_ceil(length) - 1));
}

}  // namespace

reassembly::reassembly(const rx_config& cfg)
    : cfg_(cfg),
      slots_(cfg.slots),
      inline_stride_(inline_stride_for(cfg.mtu)),
      inline_buffers_(new std::uint8_t[cfg.slots * inline_stride_]),
      assembling_(cfg.slots),
      recent_(cfg.remembered),
      recent_ring_(cfg.remembered, ~std::uint64_t{0}),
      size_classes_(33) {
    words_per_slot_ = (packets_for(cfg.max_message, cfg.mtu) + 63) / 64;
    bits_.assign(cfg.slots * words_per_slot_, 0);
    free_.reserve(cfg.slots);
    for (std::size_t i = cfg.slots; i-- > 0;)
        free_.push_back(static_cast<std::uint32_t>(i));
    for (auto& c : size_classes_)
        c.reserve(cfg.slots);
}

reassembly::~reassembly() {
    for (slot& s : slots_)
        if (s.size_class >= 0) delete[] s.buffer;
}

place_result reassembly::place(const message_key& key, std::uint32_t total_length,
                               const segment& seg, std::span<const std::uint8_t> payload,
                               bool remember_completed, std::uint64_t now, const op_fields* fields,
                               bool external, std::uint32_t* slot_index) noexcept {
    if (remember_completed && recently_completed(key)) return place_result::duplicate;
    // A stream of small messages looks up a new random slot of assembling_ per message (and
    // finds nothing): start loading the next message's while this one is handled.
    if (total_length <= cfg_.mtu) assembling_.prefetch(key.next().packed());
    std::uint32_t index;
    if (auto found = find_assembling(key)) {
        index = *found;
        if (slots_[index].length != total_length || slots_[index].external != external)
            return place_result::inconsistent;
    } else if (seg.som && seg.offset == 0 && seg.length == total_length &&
               total_length <= cfg_.mtu) {
        return place_single_packet(key, seg, payload, remember_completed, now, fields, external,
                                   slot_index);
    } else {
        index = open_slot(key, total_length, external, now);
        if (index == no_index) return place_result::no_resources;
        slots_[index].fields = fields ? *fields : op_fields{};
    }
    slot& s = slots_[index];
    if (fields && (fields->opcode != s.fields.opcode || fields->response != s.fields.response))
        return place_result::inconsistent;
    const std::uint32_t packet = seg.offset == 0 ? 0 : seg.offset / cfg_.mtu;  // no division
    std::uint64_t& word = packet_bits(index)[packet / 64];
    const std::uint64_t bit = std::uint64_t{1} << (packet % 64);
    if (word & bit) return place_result::duplicate;
    word |= bit;
    if (slot_index) *slot_index = index;
    if (seg.length != 0 && !external)
        std::memcpy(s.buffer + seg.offset, payload.data(), seg.length);
    if (fields && seg.som) s.fields.header_data = fields->header_data;
    s.last_update_ns = now;
    if (++s.packets_received < s.packets_total) return place_result::placed;
    return complete(key, index, remember_completed);
}

// A whole message in one packet (the common small message) completes in the slot it opens:
// none of a partial message's bookkeeping (its packet bitmap, the checks of later packets
// against the first). Places what place() would, in the same state.
place_result reassembly::place_single_packet(const message_key& key, const segment& seg,
                                             std::span<const std::uint8_t> payload,
                                             bool remember_completed, std::uint64_t now,
                                             const op_fields* fields, bool external,
                                             std::uint32_t* slot_index) noexcept {
    const std::uint32_t index = take_free_slot(now);
    if (index == no_index) return place_result::no_resources;
    fill_single_packet(index, key, seg, payload, now, fields, external);
    if (slot_index) *slot_index = index;
    return complete(key, index, remember_completed);
}

bool reassembly::place_run(const message_key& key, std::uint32_t total_length,
                           std::uint32_t first_offset, std::uint32_t length,
                           std::span<const std::uint8_t* const> payloads, const op_fields& fields,
                           bool external, std::uint64_t now, place_result& result,
                           std::uint32_t& slot_index) noexcept {
    const auto n = static_cast<std::uint32_t>(payloads.size());
    if (n == 0 || length != cfg_.mtu || first_offset % cfg_.mtu != 0) return false;
    const auto found = find_assembling(key);
    if (!found) return false;  // the packet that opens the slot is placed alone
    const std::uint32_t index = *found;
    slot& s = slots_[index];
    const std::uint32_t first = first_offset / cfg_.mtu;
    if (s.length != total_length || s.external != external || fields.opcode != s.fields.opcode ||
        fields.response != s.fields.response || first + n > s.packets_total)
        return false;
    std::uint64_t* received = packet_bits(index);
    if (bits::any_in(received, first, n)) return false;
    bits::set_range(received, first, n);
    if (!external) copy_payload_run(s.buffer + first_offset, payloads.data(), n, length);
    s.last_update_ns = now;
    slot_index = index;
    s.packets_received += n;
    result =
        s.packets_received < s.packets_total ? place_result::placed : complete(key, index, false);
    return true;
}

place_result reassembly::complete(const message_key& key, std::uint32_t index,
                                  bool remember_completed) noexcept {
    slot& s = slots_[index];
    if (s.packets_total > 1) assembling_.erase(key.packed());
    if (remember_completed) remember(key);
    append_delivered(index);
    return place_result::completed;
}

// The packets of a large message arrive one after another under one key: the slot found last is
// checked first: the map's slot for that key, found again per packet, would have been pushed
// out of L1 by the payload copies in between. A slot assembling a message of several packets is
// in the map under its key, and only then.
std::optional<std::uint32_t> reassembly::find_assembling(const message_key& key) noexcept {
    if (last_found_ != no_index) {
        const slot& s = slots_[last_found_];
        if (s.state == slot_state::assembling && s.packets_total > 1 &&
            s.key.packed() == key.packed())
            return last_found_;
    }
    // A stream of one-packet messages leaves the map empty: no lookup that must miss.
    if (assembling_.size() == 0) return std::nullopt;
    const auto found = assembling_.find(key.packed());
    if (found) last_found_ = *found;
    return found;
}

std::uint32_t reassembly::open_slot(const message_key& key, std::uint32_t length, bool external,
                                    std::uint64_t now) noexcept {
    const std::uint32_t index = take_free_slot(now);
    if (index == no_index) return no_index;
    slot& s = slots_[index];
    s.key = key;
    s.length = length;
    s.packets_total = packets_for(length, cfg_.mtu);
    s.packets_received = 0;
    s.last_update_ns = now;
    s.state = slot_state::assembling;
    s.external = external;
    s.failed = false;
    s.tag = 0;
    s.origin = 0;
    // Only the words this message's packets use (place() never looks past packets_total): a
    // small message clears 8 bytes (one store, not a call), not the bitmap of the largest one.
    if (s.packets_total <= 64)
        packet_bits(index)[0] = 0;
    else
        std::memset(packet_bits(index), 0, (s.packets_total + 63) / 64 * sizeof(std::uint64_t));
    // A single-packet message completes in the place() that opened it: it never needs finding
    // by key, so it skips the map (an insert and an erase per small message).
    const bool findable = s.packets_total > 1;
    if ((!external && !attach_buffer(s)) ||
        (findable && !assembling_.insert(key.packed(), index))) {
        free_slot(index);
        return no_index;
    }
    return index;
}

std::uint32_t reassembly::take_free_slot(std::uint64_t now) noexcept {
    if (free_.empty()) {
        // Out of slots: a partial message abandoned by its sender (retry limit, lost RUDI
        // request) may be reclaimed once it has been idle long enough. Rare path: a scan.
        std::uint32_t victim = no_index;
        for (std::uint32_t i = 0; i < slots_.size(); ++i) {
            const slot& s = slots_[i];
            if (s.state != slot_state::assembling || now - s.last_update_ns < cfg_.stale_ns)
                continue;
            if (victim == no_index || s.last_update_ns < slots_[victim].last_update_ns) victim = i;
        }
        if (victim == no_index) return no_index;
        assembling_.erase(slots_[victim].key.packed());
        free_slot(victim);
        ++evicted_;
    }
    const std::uint32_t index = free_.back();
    free_.pop_back();
    return index;
}

bool reassembly::attach_buffer(slot& s) noexcept {
    if (s.length > cfg_.mtu) return attach_pooled_buffer(s);
    const std::size_t index = static_cast<std::size_t>(&s - slots_.data());
    s.buffer = inline_buffer(index);
    s.size_class = -1;
    return true;
}

bool reassembly::attach_pooled_buffer(slot& s) noexcept {
    const int c = size_class_of(s.length);
    auto& pool = size_classes_[static_cast<std::size_t>(c)];
    if (!pool.empty()) {
        s.buffer = pool.back().release();
        pool.pop_back();
    } else {
        // A sender may announce any length up to max_message: the bytes held are capped, so
        // hostile announcements cannot exhaust memory (they get no_resources instead).
        const std::uint64_t bytes = std::uint64_t{1} << c;
        if (!make_room(bytes)) return false;
        s.buffer = new (std::nothrow) std::uint8_t[bytes];
        if (!s.buffer) return false;
        buffer_bytes_ += bytes;
        ++buffers_allocated_;
    }
    s.size_class = c;
    return true;
}

bool reassembly::make_room(std::uint64_t bytes) noexcept {
    // Pooled buffers of other sizes are given back before refusing.
    for (std::size_t c = 0;
         c < size_classes_.size() && buffer_bytes_ + bytes > cfg_.max_buffer_bytes; ++c) {
        while (!size_classes_[c].empty() && buffer_bytes_ + bytes > cfg_.max_buffer_bytes) {
            size_classes_[c].pop_back();
            buffer_bytes_ -= std::uint64_t{1} << c;
        }
    }
    return buffer_bytes_ + bytes <= cfg_.max_buffer_bytes;
}

void reassembly::free_slot(std::uint32_t index) noexcept {
    slot& s = slots_[index];
    if (s.size_class >= 0 && s.buffer)
        size_classes_[static_cast<std::size_t>(s.size_class)].emplace_back(s.buffer);
    s.buffer = nullptr;
    s.size_class = -1;
    s.state = slot_state::free;
    ++s.generation;
    free_.push_back(index);
}

void reassembly::remember(const message_key& key) noexcept {
    if (recent_ring_.empty()) return;
    std::uint64_t& oldest = recent_ring_[recent_head_];
    if (oldest != ~std::uint64_t{0}) recent_.erase(oldest);
    oldest = key.packed();
    recent_.insert(oldest, 1);
    recent_head_ = (recent_head_ + 1) % recent_ring_.size();
}

bool reassembly::holds_peer(std::uint32_t peer) const noexcept {
    return std::any_of(slots_.begin(), slots_.end(), [&](const slot& s) {
        return s.state != slot_state::free && s.key.peer == peer;
    });
}

void reassembly::forget_peer(std::uint32_t peer) noexcept {
    for (std::uint64_t& packed : recent_ring_) {
        if (packed == ~std::uint64_t{0} || (packed >> 24) != peer) continue;
        recent_.erase(packed);
        packed = ~std::uint64_t{0};
    }
}

bool reassembly::release(std::uint64_t handle) noexcept {
    const auto index = static_cast<std::uint32_t>(handle);
    if (index >= slots_.size()) return false;
    slot& s = slots_[index];
    if (s.state != slot_state::delivered ||
        s.generation != static_cast<std::uint32_t>(handle >> 32))
        return false;
    free_slot(index);
    return true;
}

}  // namespace uet::ses
