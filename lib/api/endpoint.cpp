// The endpoint's set-up and life: its engine's configuration, construction, an operation's
// failure, close, and the public calls that post nothing (counters, address, close). The posts
// are in endpoint_post.cpp, what arrives in endpoint_rx.cpp.
#include <algorithm>

#include "api/api_impl.hpp"
#include "api/roce_endpoint.hpp"

namespace uet {
namespace detail {

namespace {

delivery_mode engine_mode(delivery d) {
    return static_cast<delivery_mode>(d);
}

static_assert(static_cast<int>(cc::algorithm::none) == static_cast<int>(congestion_control::none));
static_assert(static_cast<int>(cc::algorithm::nscc) == static_cast<int>(congestion_control::nscc));
static_assert(static_cast<int>(cc::algorithm::rccc) == static_cast<int>(congestion_control::rccc));
static_assert(static_cast<int>(lb::algorithm::static_path) ==
              static_cast<int>(path_policy::static_path));
static_assert(static_cast<int>(lb::algorithm::oblivious) ==
              static_cast<int>(path_policy::oblivious));
static_assert(static_cast<int>(lb::algorithm::reps) == static_cast<int>(path_policy::reps));
static_assert(static_cast<int>(lb::algorithm::bitmap) == static_cast<int>(path_policy::bitmap));

}  // namespace

engine_config engine_config_for(const endpoint_attr& attr, std::uint32_t mtu) {
    engine_config c;
    c.mtu_payload = mtu;
    c.max_pdcs = 128;
    c.max_message_size = chunk_bytes;
    c.max_pending_messages = 8192;
    c.max_rx_messages = 1024 + attr.max_unexpected;
    c.max_rx_buffer_bytes = std::uint64_t{512} << 20;
    c.cc = static_cast<cc::algorithm>(attr.cc);  // same order (static_asserts above)
    c.lb = static_cast<lb::algorithm>(attr.lb);
    c.link_gbps = attr.link_gbps;
    c.base_rtt_ns = attr.base_rtt_ns;
    c.parallel_pdcs = attr.parallel_pdcs;
    c.answers_in_acks = attr.answers_in_acks;
    return c;
}

namespace {

// WRITEs land straight in the target region (endpoint_impl::place_write), copied once; small
// sends go straight into their receives (take_single_packet_messages).
engine_config with_placement(engine_config c, endpoint_impl* ep) {
    c.deliver_to = ep;
    return c;
}

}  // namespace

endpoint_impl::endpoint_impl(std::shared_ptr<domain_impl> d, std::shared_ptr<cq_impl> c,
                             std::shared_ptr<av_impl> a, const endpoint_attr& at,
                             const engine_config& ec)
    : endpoint_base(transport::uet, std::move(d), std::move(c), std::move(a), at,
                    endpoint_address{ec.ip, ec.udp_port, ec.pid_on_fep}),
      mode(engine_mode(at.mode)),
      mtu(ec.mtu_payload),
      eng(std::make_unique<engine>(with_placement(ec, this))),
      ops(at.tx_depth + at.rx_depth, at.inject_size),
      records(4096),
      queues(at.rx_depth, at.max_unexpected),
      multi_recvs(ec.max_rx_messages),
      rdv(at.max_deferred, at.tx_depth + at.rx_depth),
      claimed(at.max_unexpected + at.max_deferred),
      completions(64),
      received(16),
      requests(ec.max_peers) {
    unsignaled.configure(*this, at, ec);
    stalled.reserve(ops.size());
    stalled_retry.reserve(ops.size());
}

void endpoint_impl::fail(op& o, errc e, int prov_errno) {
    if (o.error != errc{}) return;
    o.error = e;
    o.prov_errno = prov_errno;
    o.olen = 0;
}

void endpoint_impl::close() noexcept {
    if (!eng) return;
    domain->fabric->net->detach(*this);
    // Unsignaled sends still in the engine become operations, cancelled below with the others.
    if (ops.kept() != 0) unsignaled.adopt_all(*this);
    // The engine goes first: nothing refers to the application's buffers after this.
    secured.reset();
    eng.reset();
    responses.release_regions(*this);
    queues.drain();
    multi_recvs.drain();
    rdv.drain();
    claimed.drain();
    for (std::uint32_t i = 0; i < ops.size(); ++i) {
        if (!ops[i].in_use) continue;
        ops[i].error = errc::canceled;
        ops[i].prov_errno = 0;
        ops[i].olen = 0;
        finish(i);
    }
    stalled.clear();
}

}  // namespace detail

// ---- the public endpoint ----

endpoint::~endpoint() {
    close();
}
endpoint::endpoint(endpoint&&) noexcept = default;
endpoint& endpoint::operator=(endpoint&& o) noexcept {
    if (this != &o) {
        close();
        impl_ = std::move(o.impl_);
    }
    return *this;
}

endpoint_address endpoint::address() const noexcept {
    return impl_ ? impl_->address : endpoint_address{};
}

const endpoint_attr& endpoint::attr() const noexcept {
    static const endpoint_attr defaults;
    return impl_ ? impl_->attr : defaults;
}

namespace {
void fill_pds_counters(const engine_counters& e, endpoint_counters& c) noexcept {
    c.retransmits_sack = e.pds.retransmitted(retx_cause::sack);
    c.retransmits_timeout = e.pds.retransmitted(retx_cause::timeout);
    c.retransmits_nack = e.pds.retransmitted(retx_cause::nack);
    c.retransmits = c.retransmits_sack + c.retransmits_timeout + c.retransmits_nack;
    c.timeouts = e.pds.timeouts;
    for (auto n : e.pds.nacks_received)
        c.nacks_received += n;
    for (auto n : e.pds.nacks_sent)
        c.nacks_sent += n;
    c.duplicates = e.pds.duplicates;
    c.packets_sent = e.frames_tx;
    c.packets_received = e.frames_rx;
    c.headers_predicted = e.frames_predicted;
    c.packets_in_runs = e.frames_in_runs;
    c.packets_sent_in_runs = e.frames_sent_in_runs;
    c.transmit_full = e.tx_calls_full;
    c.transmit_held_by_window = e.tx_calls_held_by_window;
    c.transmit_nothing_queued = e.tx_calls_nothing_queued;
    for (auto d : e.drops)
        c.packets_dropped += d;
    std::copy(e.rejects.begin(), e.rejects.end(), c.refused_by_reason.begin());
    std::copy(e.drops.begin(), e.drops.end(), c.dropped_by_reason.begin());
    c.dropped_unknown_source = e.dropped(drop_reason::unknown_source);
    c.dropped_forged_close = e.dropped(drop_reason::forged_close);
    c.dropped_peer_table_full = e.dropped(drop_reason::peer_table_full);
    c.dropped_unvalidated_reply = e.dropped(drop_reason::unvalidated_reply);
    c.peers_learned = e.peers_learned;
    c.peers_forgotten = e.peers_forgotten;
    c.rtt_samples = e.pds.rtt.count;
    if (e.pds.rtt.count != 0) {
        c.rtt_min_ns = e.pds.rtt.min_ns;
        c.rtt_mean_ns = e.pds.rtt.sum_ns / e.pds.rtt.count;
    }
}

}  // namespace

static_assert(wire::reject_reason_count <=
              std::tuple_size_v<decltype(endpoint_counters::refused_by_reason)>);
static_assert(drop_reason_count <=
              std::tuple_size_v<decltype(endpoint_counters::dropped_by_reason)>);

const char* refused_frame_reason(std::size_t i) noexcept {
    return i < wire::reject_reason_count ? wire::reject_name(static_cast<wire::reject_reason>(i))
                                         : nullptr;
}

const char* dropped_packet_reason(std::size_t i) noexcept {
    return i < drop_reason_count ? to_string(static_cast<drop_reason>(i)) : nullptr;
}

void detail::endpoint_impl::add_engine_counters(endpoint_counters& c) const noexcept {
    if (!eng) return;
    const engine_counters& e = eng->counters();
    c.pdcs_opened = e.pdcs_opened;
    c.pdcs_failed = e.pdcs_failed;
    c.target_pdcs_opened = e.target_pdcs_opened;
    c.answers_in_acks = e.answers_in_acks;
    c.answers_as_messages = e.answers_as_messages;
    c.answered_by_ack = e.answered_by_ack;
    c.delivered_directly = e.taken_single_packet;
    fill_pds_counters(e, c);
    if (secured) add_tss_counters(*secured, c);
}

endpoint_counters endpoint::counters() const noexcept {
    if (!impl_) return {};
    endpoint_counters c = impl_->counters;
    impl_->add_engine_counters(c);
    return c;
}

std::uint64_t endpoint::silent_completions() const noexcept {
    return impl_ ? impl_->silent_completions : 0;
}

std::vector<qp_counters> endpoint::queue_pairs(peer_addr peer) const {
    if (!impl_ || impl_->kind != transport::roce_rc) return {};
    return static_cast<const detail::roce_endpoint&>(*impl_).queue_pairs(peer);
}

bool endpoint::is_open() const noexcept {
    return impl_ && impl_->frames() != nullptr;
}

void endpoint::close() noexcept {
    if (impl_) impl_->close();
}

}  // namespace uet
