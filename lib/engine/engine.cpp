// Engine set-up, tables and the application-facing calls.
#include <algorithm>
#include <bit>
#include <utility>

#include "core/ring_index.hpp"
#include "engine/engine_impl.hpp"

namespace uet {

const char* to_string(delivery_mode m) noexcept {
    switch (m) {
        case delivery_mode::rud:
            return "RUD";
        case delivery_mode::rod:
            return "ROD";
        case delivery_mode::rudi:
            return "RUDI";
        case delivery_mode::uud:
            return "UUD";
    }
    return "?";
}

const char* status::message() const noexcept {
    switch (code) {
        case status_code::ok:
            return "ok";
        case status_code::retry_limit:
            return "retransmit limit reached";
        case status_code::peer_unreachable:
            return "peer never answered";
        case status_code::message_too_long:
            return "message too long for this mode";
        case status_code::too_many_pending:
            return "too many messages pending";
        case status_code::unknown_peer:
            return "unknown peer";
        case status_code::not_unsignaled:
            return "only RUD and ROD requests can be unsignaled";
    }
    return "unknown status";
}

const char* to_string(drop_reason r) noexcept {
    static constexpr const char* names[] = {
        "not_udp",          "not_for_us",        "wrong_port",         "peer_table_full",
        "unsupported_type", "unknown_pdc",       "stale_syn",          "beyond_window",
        "out_of_order",     "malformed_ses",     "no_rx_buffer",       "bad_ack",
        "stale_response",   "trimmed_dropped",   "control_queue_full", "unknown_source",
        "forged_close",     "unvalidated_reply", "wrong_pid"};
    static_assert(std::size(names) == drop_reason_count);
    const auto i = static_cast<std::size_t>(r);
    return i < drop_reason_count ? names[i] : "unknown";
}

void add_counters(pds::pdc_counters& into, const pds::pdc_counters& from) noexcept {
    into.tx_packets += from.tx_packets;
    into.tx_bytes += from.tx_bytes;
    into.rx_packets += from.rx_packets;
    into.rx_bytes += from.rx_bytes;
    into.tx_data_packets += from.tx_data_packets;
    into.rx_data_packets += from.rx_data_packets;
    for (std::size_t i = 0; i < into.retransmits.size(); ++i)
        into.retransmits[i] += from.retransmits[i];
    into.timeouts += from.timeouts;
    into.repaths += from.repaths;
    for (std::size_t i = 0; i < pds::nack_slot_count; ++i) {
        into.nacks_sent[i] += from.nacks_sent[i];
        into.nacks_received[i] += from.nacks_received[i];
    }
    into.acks_sent += from.acks_sent;
    into.acks_received += from.acks_received;
    into.trimmed_received += from.trimmed_received;
    into.duplicates += from.duplicates;
    into.rtt.count += from.rtt.count;
    into.rtt.sum_ns += from.rtt.sum_ns;
    into.rtt.min_ns = std::min(into.rtt.min_ns, from.rtt.min_ns);
}

namespace {

ses::rx_config reassembly_config(const engine_config& c) {
    ses::rx_config r;
    r.slots = c.max_rx_messages;
    r.mtu = c.mtu_payload;
    r.max_message = c.max_message_size;
    r.remembered = c.remembered_messages;
    r.max_buffer_bytes = c.max_rx_buffer_bytes;
    return r;
}

}  // namespace

engine_impl::engine_impl(const engine_config& cfg)
    : core_(cfg),
      pacer_(core_.rccc_params),
      frames_(core_.cfg),
      peers_(core_.cfg),
      pdcs_(core_.cfg, core_.rng),
      msgs_(core_.cfg),
      answers_(core_.cfg, core_.params),
      connectionless_(core_.cfg),
      reassembly_(reassembly_config(core_.cfg)),
      control_(core_.cfg.control_queue),
      acks_(core_.cfg),
      paths_(core_.cfg) {}

// ---- peers ----

std::uint32_t engine_impl::add_peer_entry(const wire::mac_address& mac, std::uint32_t ip,
                                          std::uint16_t pid) {
    if (!peers_.has_room()) {
        const std::uint32_t victim = peers_.evictable(reassembly_);
        if (victim == none) return none;
        forget_peer(victim);  // its entry goes to the free list
    }
    return peers_.add_entry(mac, ip, pid);
}

std::uint32_t engine_impl::find_or_add_peer(const wire::mac_address& mac, std::uint32_t ip,
                                            std::uint16_t pid) {
    const std::uint32_t p = peers_.find_source(ip, pid);
    return p != none ? p : add_peer_entry(mac, ip, pid);
}

bool engine_impl::learn_peer(rx_context& rx) {
    if (rx.peer != transient_peer) return true;
    // Added by an earlier packet of the same burst, which carries the scratch entry still.
    const peer_state& source = peers_.transient();
    if (const std::uint32_t known = peers_.find(source.ip, source.pid); known != none) {
        rx.peer = known;
        return true;
    }
    const std::uint32_t id = add_peer_entry(source.mac, source.ip, source.pid);
    if (id == none) {
        core_.count_drop(drop_reason::peer_table_full);
        return false;
    }
    peers_[id].learned = true;
    ++core_.counters.peers_learned;
    rx.peer = id;
    return true;
}

// The entry of a learned peer that holds no state is given back: nothing refers to its id
// but what remembers completed messages (forgotten here) and closed PDCs (likewise).
void engine_impl::forget_peer(std::uint32_t id) {
    reassembly_.forget_peer(id);
    pdcs_.forget_peer(id);
    peers_.forget(id);
    ++core_.counters.peers_forgotten;
}

peer_id engine_impl::add_peer(const wire::mac_address& mac, std::uint32_t ip, std::uint16_t pid) {
    const std::uint32_t p = find_or_add_peer(mac, ip, pid & 0xfff);
    if (p == none) return invalid_peer;
    peers_[p].learned = false;  // the caller refers to it from now on
    if (peers_[p].mac != mac) peers_.set_mac(p, mac);
    return p;
}

// ---- PDC table ----

pds::pdc* engine_impl::allocate_pdc() {
    if (!pdcs_.has_free() && !reclaim_lingering()) return nullptr;
    return pdcs_.allocate();
}

bool engine_impl::reclaim_lingering() {
    pds::pdc* p = pdcs_.first_lingering_target();
    if (!p) return false;
    free_pdc(*p, false);
    return true;
}

void engine_impl::free_pdc(pds::pdc& p, bool kick) {
    frames_.forget_pdc(p.index);
    if (p.close_heard) {
        p.close_heard = false;
        pdcs_.drop_lingering();
    }
    p.cancel_timers(core_.timers);
    add_counters(core_.closed_totals, p.counters);
    if (p.role == pds::pdc_role::initiator) {
        auto& owner = peers_[p.peer].pdc[p.slot];
        if (owner == p.index) owner = none;
        pdcs_.remove_initiator(p.index);
    } else {
        pacer_.forget(p);
        answers_.forget(p);
        answers_.drop_held(*this, p);
        --peers_[p.peer].target_pdcs;
        pdcs_.erase_syn(p.peer, p.remote_id);
        pdcs_.remember_closed(p);
    }
    p.state = pds::pdc_state::free;
    p.ack_due = false;
    pdcs_.release_slot(p);
    // Initiator or target, a freed slot goes to the flows that found the table full.
    if (kick) kick_waiting(core_.now);
}

void engine_impl::open_initiator_pdc(std::uint32_t peer, std::size_t mode_slot, std::uint64_t now) {
    peer_state& ps = peers_[peer];
    if (ps.pdc[mode_slot] != none || ps.queue[mode_slot].empty()) return;
    pds::pdc* p = allocate_pdc();
    if (!p) {
        if (!ps.waiting_for_pdc[mode_slot]) {
            ps.waiting_for_pdc[mode_slot] = true;
            pdcs_.wait(peer, mode_slot);
        }
        return;
    }
    p->peer = peer;
    p->ordered = mode_slot == rod_slot;
    p->slot = static_cast<std::uint8_t>(mode_slot);
    const auto start = static_cast<psn_t>(core_.rng.next_u64());
    const auto entropy = static_cast<std::uint16_t>(core_.rng.next_u64() | 0xc000);
    p->open_initiator(pdcs_.tx_ring_of(p->index), start, entropy, core_.params);
    p->last_activity_ns = now;
    ps.pdc[mode_slot] = p->index;
    pdcs_.add_initiator(p->index);
    ++core_.counters.pdcs_opened;
    core_.tx_ready = true;
}

void engine_impl::kick_waiting(std::uint64_t now) {
    // Flows that found the table full get the freed slots in the order they asked.
    while (pdcs_.has_waiting() && pdcs_.has_free()) {
        const auto [peer, slot] = pdcs_.pop_waiting();
        peers_[peer].waiting_for_pdc[slot] = false;
        open_initiator_pdc(peer, slot, now);
    }
}

// ---- application calls ----

status engine_impl::admit_message(peer_id to, delivery_mode mode, const ses_fields& ses,
                                  std::span<const std::uint8_t> data, std::uint64_t context,
                                  std::uint32_t& m) {
    if (to >= peers_.count()) return {status_code::unknown_peer};
    if (data.size() > core_.cfg.max_message_size) return {status_code::message_too_long};
    if (mode == delivery_mode::uud && data.size() > core_.cfg.mtu_payload)
        return {status_code::message_too_long};
    if (msgs_.room(answers_.unposted()) == 0) return {status_code::too_many_pending};
    m = msgs_.admit(peers_[to], to, mode, ses, data, context);
    if (m == ses::no_index) return {status_code::too_many_pending};
    ++core_.counters.messages_posted;
    return {};
}

// p's initiator sent a packet without SYN naming our PDC id: its held answers go.
void engine_impl::validate(pds::pdc& p) {
    p.validated = true;
    ses::message_queue& held = answers_.held(p);
    while (!held.empty())
        send_queue::queue_message(*this, held.pop(msgs_.pool()));
    answers_.clear_held(p);
}

void engine_impl::complete_message(std::uint32_t index, status result, bool answered) {
    end_message(index, result, answered);
}

bool engine_impl::poll_received(received_message& out) {
    ses::delivered_message d;
    if (!reassembly_.pop_delivered(d)) return false;
    out.from = d.key.peer;
    out.mode = static_cast<delivery_mode>(d.key.mode & (response_key_bit - 1));
    out.message_id = d.key.message_id;
    out.data = d.data;
    out.handle = d.handle;
    out.ses = d.fields;
    out.placed = d.external;
    out.placement_failed = d.failed;
    out.answer_token = d.tag;
    out.request_pdc = d.origin;
    ++core_.counters.messages_delivered;
    return true;
}

void engine_impl::release(std::uint64_t handle) {
    reassembly_.release(handle);
}

const engine_counters& engine_impl::counters() const {
    pds::pdc_counters total = core_.closed_totals;
    add_counters(total, core_.connectionless);
    for (const pds::pdc& p : pdcs_)
        if (p.state != pds::pdc_state::free) add_counters(total, p.counters);
    core_.counters.pds = total;
    core_.counters.lb = core_.lb_ctx.stats;
    return core_.counters;
}

std::vector<pdc_info> engine_impl::pdcs() const {
    std::vector<pdc_info> out;
    for (const pds::pdc& p : pdcs_) {
        if (p.state == pds::pdc_state::free || p.close_heard) continue;  // closed, lingering
        pdc_info i;
        i.peer = p.peer;
        i.mode = p.ordered ? delivery_mode::rod : delivery_mode::rud;
        i.initiator = p.role == pds::pdc_role::initiator;
        i.state = pds::to_string(p.state);
        i.local_id = p.local_id;
        i.remote_id = p.remote_id;
        i.counters = p.counters;
        out.push_back(i);
    }
    return out;
}

bool engine_impl::idle() const {
    return msgs_.in_use() == 0 && pdcs_.initiators().empty() && !pdcs_.has_waiting();
}

std::uint64_t engine_impl::next_deadline() const {
    if (core_.tx_ready || !acks_.empty() || control_.waiting()) return core_.now;
    const std::uint64_t t = core_.timers.next_deadline();
    if (t == timer_wheel::never) return t;
    // The wheel gives a lower bound; after advance(core_.now) nothing is due at or before
    // core_.now.
    return std::max(t, core_.now + 1);
}

// ---- engine: forwarding to the implementation ----

engine::engine(const engine_config& cfg) : impl_(std::make_unique<engine_impl>(cfg)) {}
engine::~engine() = default;
engine::engine(engine&&) noexcept = default;
engine& engine::operator=(engine&&) noexcept = default;

peer_id engine::add_peer(const wire::mac_address& mac, std::uint32_t ip, std::uint16_t pid) {
    return impl_->add_peer(mac, ip, pid);
}
status engine::post_response(const received_message& request, const ses_fields& ses,
                             std::span<const std::uint8_t> data, std::uint64_t context) {
    return impl_->answers_.post_response(*impl_, request, ses, data, context);
}

std::optional<std::uint32_t> engine::pending_request(peer_id to, delivery_mode mode,
                                                     std::uint16_t id) const {
    return impl_->msgs_.pending_request(to, mode, id);
}

std::uint64_t engine::take_unsignaled_ended() noexcept {
    return impl_->msgs_.take_unsignaled_ended();
}

const ses::tx_message& engine::message(std::uint32_t index) const noexcept {
    return impl_->msgs_[index];
}

void engine::make_loud(std::uint32_t index, std::uint64_t context) noexcept {
    impl_->msgs_.make_loud(index, context);
}

void engine::release_unsignaled_message(std::uint32_t index) noexcept {
    ses::tx_message& m = impl_->msgs_[index];
    if (!m.in_use || !m.kept) return;
    --impl_->peers_[m.peer].messages;
    impl_->msgs_.release(index);
}

std::uint32_t engine::next_unsignaled_message(std::uint32_t from) const noexcept {
    return impl_->msgs_.next_unsignaled(from);
}

void engine::receive(std::span<const std::uint8_t> frame, std::uint64_t now) {
    impl_->receive_burst({&frame, 1}, nullptr, now);
}

void engine::receive_burst(std::span<const std::span<const std::uint8_t>> frames,
                           std::uint64_t now) {
    impl_->receive_burst(frames, nullptr, now);
}

void engine::receive_burst(std::span<const std::span<const std::uint8_t>> frames,
                           const wire::frame_rest* rests, std::uint64_t now) {
    impl_->receive_burst(frames, rests, now);
}
void engine::advance(std::uint64_t now) {
    impl_->advance(now);
}
std::uint64_t engine::next_deadline() const {
    return impl_->next_deadline();
}
// These wrappers (and answer_ok_in_ack, release_answering_ok in answer_tracker.cpp) run for
// every message the API delivers or completes: flattened, each is one call from the API rather
// than three (the wrapper, the implementation, its helpers).
[[gnu::flatten]] std::size_t engine::poll_send_completions(std::span<send_completion> out) {
    return impl_->msgs_.poll_completions(out);
}
[[gnu::flatten]] bool engine::poll_received(received_message& out) {
    return impl_->poll_received(out);
}
[[gnu::flatten]] std::size_t engine::poll_received(std::span<received_message> out) {
    std::size_t n = 0;
    while (n < out.size() && impl_->poll_received(out[n]))
        ++n;
    return n;
}
[[gnu::flatten]] void engine::release(std::uint64_t handle) {
    impl_->release(handle);
}
std::uint32_t engine::peer_ip(peer_id p) const noexcept {
    return impl_->peers_.ip_of(p);
}
std::uint16_t engine::peer_pid(peer_id p) const noexcept {
    return p < impl_->peers_.count() ? impl_->peers_[p].pid : 0;
}
void engine::keep_peer(peer_id p) noexcept {
    impl_->peers_.keep(p);
}
const engine_counters& engine::counters() const {
    return impl_->counters();
}
std::vector<pdc_info> engine::pdcs() const {
    return impl_->pdcs();
}
const engine_config& engine::config() const {
    return impl_->core_.cfg;
}
bool engine::idle() const {
    return impl_->idle();
}

void engine::stop_data() noexcept {
    impl_->core_.data_stopped = true;
}

}  // namespace uet
