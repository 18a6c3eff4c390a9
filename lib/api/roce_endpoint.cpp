// The roce_rc endpoint's set-up, progress and end: its engine's configuration and the
// attributes it refuses, work completions to completion entries (the wc_status table of
// docs/api.md), connections coming and going, and close.
#include "api/roce_endpoint.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>

namespace uet::detail {

namespace {

using roce::wc_status;

constexpr std::uint16_t roce_udp_port = 4791;

// The largest path MTU (an IB value) whose packets fit the fabric's payload MTU.
roce::path_mtu path_mtu_for(std::uint32_t mtu) noexcept {
    for (const roce::path_mtu m : {roce::path_mtu::mtu_4096, roce::path_mtu::mtu_2048,
                                   roce::path_mtu::mtu_1024, roce::path_mtu::mtu_512})
        if (static_cast<std::uint32_t>(m) <= mtu) return m;
    return roce::path_mtu::mtu_256;
}

}  // namespace

roce::engine_config roce_config_for(const engine_config& prepared, const endpoint_attr& attr,
                                    std::uint32_t mtu, std::uint32_t qps_per_connection) {
    roce::engine_config c;
    c.mac = prepared.mac;
    c.ip = prepared.ip;
    c.udp_port = roce_udp_port;
    c.udp_checksum = prepared.udp_checksum;
    c.seed = prepared.seed;
    c.qp.sq_depth = static_cast<std::uint32_t>(attr.tx_depth);
    c.qp.mode = attr.roce.mode == roce_mode::out_of_order ? roce::retransmit_mode::out_of_order
                                                          : roce::retransmit_mode::go_back_n;
    // The UET defaults (nscc) stand for the RoCE one: DCQCN.
    c.dcqcn = attr.cc != congestion_control::none;
    // Oblivious spraying: the packets the target places by their own address each take a path.
    c.spray = attr.lb == path_policy::oblivious;
    c.cm.job_id = attr.job_id;
    // REQs are resent after the provider's first RTO at least: on dpdk (20 ms) a peer that polls
    // with back-off, or is descheduled, answers within it; the ARP for the first REQ too.
    c.cm.timeout_ns = std::max<std::uint64_t>({50'000, 8 * attr.base_rtt_ns, prepared.rto_ns});
    c.cm.mtu = path_mtu_for(mtu);
    c.cm.max_rd_atomic = attr.roce.max_rd_atomic;
    c.cm.ack_timeout = attr.roce.ack_timeout;
    c.cm.retry_cnt = attr.roce.retry_cnt;
    c.cm.rnr_retry = attr.roce.rnr_retry;
    c.cm.min_rnr_timer = attr.roce.min_rnr_timer;
    // Room for the connections of 16 peers both ways, qps_per_connection QPs each.
    c.max_qps = std::max<std::uint32_t>(c.max_qps, 32 * qps_per_connection);
    // Payloads leave registered memory by reference where the port chains their ICRC after them.
    if (prepared.zero_copy != nullptr && prepared.zero_copy_tail) {
        c.zero_copy = prepared.zero_copy;
        c.zero_copy_min = std::max<std::uint32_t>(1, prepared.reference_min_bytes);
    }
    return c;
}

std::string roce_refusal(const endpoint_attr& a) {
    const endpoint_attr d;
    const std::string on = " means nothing on transport roce_rc";
    if (a.mode != d.mode) return "endpoint_attr.mode" + on + " (RC is reliable and ordered)";
    if (a.parallel_pdcs != d.parallel_pdcs) return "endpoint_attr.parallel_pdcs" + on;
    if (a.answers_in_acks != d.answers_in_acks) return "endpoint_attr.answers_in_acks" + on;
    if (a.deferrable_threshold != d.deferrable_threshold)
        return "endpoint_attr.deferrable_threshold" + on + " (no deferrable sends)";
    if (a.rendezvous_threshold != d.rendezvous_threshold)
        return "endpoint_attr.rendezvous_threshold" + on + " (no rendezvous)";
    if (a.cc == congestion_control::rccc)
        return "endpoint_attr.cc rccc is UET's: roce_rc takes none or dcqcn";
    if (a.lb == path_policy::bitmap)
        return "endpoint_attr.lb bitmap needs ECN echoed per packet, which RoCE's ACKs do not "
               "carry: roce_rc takes static_path, or oblivious in out-of-order mode";
    if (a.lb == path_policy::oblivious && a.roce.mode != roce_mode::out_of_order)
        return "endpoint_attr.lb oblivious sprays packets over paths, which go-back-N takes as "
               "losses: set endpoint_attr.roce.mode out_of_order";
    if (a.roce.max_rd_atomic == 0 || a.roce.max_rd_atomic > roce::max_rd_atomic_limit)
        return "endpoint_attr.roce.max_rd_atomic " + std::to_string(a.roce.max_rd_atomic) +
               " is outside 1..16";
    if (a.roce.retry_cnt > 7 || a.roce.rnr_retry > 7)
        return "endpoint_attr.roce.retry_cnt and rnr_retry are 3-bit (0..7)";
    if (a.roce.min_rnr_timer > 31 || a.roce.ack_timeout > 31)
        return "endpoint_attr.roce.min_rnr_timer and ack_timeout are 5-bit (0..31)";
    return {};
}

std::string resolve_qp_sched(const qp_sched_attr& a, qp_sched::params& out) {
    const std::string field = "endpoint_attr.qp_sched.";
    if (a.qps && (*a.qps < 1 || *a.qps > qp_sched::params::max_qps))
        return field + "qps " + std::to_string(*a.qps) + " is outside 1.." +
               std::to_string(qp_sched::params::max_qps);
    if (a.weight && !(*a.weight >= 0 && *a.weight <= 1))
        return field + "weight " + std::to_string(*a.weight) +
               " is neither 0 (the average) nor in (0, 1]";
    if (a.update_interval_us && *a.update_interval_us == 0)
        return field + "update_interval_us must be at least 1";
    if (a.scheduler && static_cast<unsigned>(*a.scheduler) > 3)
        return field + "scheduler " + std::to_string(static_cast<unsigned>(*a.scheduler)) +
               " is none of round_robin, stripe, cast_stripe, cast_wrr";
    // The environment fills what the attributes leave empty: a variable whose field is set is
    // not read, so that a bad value there does not refuse what the application chose.
    const auto overridden = [&a](std::string_view name) {
        if (name == "NCCL_IB_QPS_PER_CONNECTION") return a.qps.has_value();
        if (name == "NCCL_IB_QP_SCHED_ENABLE" || name == "NCCL_IB_SPLIT_DATA_ON_QPS")
            return a.scheduler.has_value();
        if (name == "NCCL_IB_QP_SCHED_RESET_INTERVAL") return a.reset_interval_ms.has_value();
        if (name == "NCCL_IB_QP_SCHED_UPDATE_INTERVAL") return a.update_interval_us.has_value();
        if (name == "NCCL_IB_QP_SCHED_WEIGHT") return a.weight.has_value();
        if (name == "NCCL_IB_QP_SCHED_SPLIT_DATA_MIN") return a.split_data_min.has_value();
        return name == "NCCL_IB_QP_SCHED_WRR_ENABLE" && a.wrr_enable.has_value();
    };
    qp_sched::params p;
    if (std::string e = qp_sched::read_environment(
            p, [&](const char* name) { return overridden(name) ? nullptr : std::getenv(name); });
        !e.empty())
        return e;
    static_assert(
        static_cast<int>(qp_scheduler::cast_wrr) == static_cast<int>(qp_sched::scheduler::cast_wrr),
        "qp_scheduler and qp_sched::scheduler list the schedulers in the same order");
    if (a.qps) p.qps_per_connection = *a.qps;
    if (a.scheduler) p.set(static_cast<qp_sched::scheduler>(*a.scheduler));
    if (a.reset_interval_ms) p.reset_interval_ms = *a.reset_interval_ms;
    if (a.update_interval_us) p.update_interval_us = *a.update_interval_us;
    if (a.weight) p.weight = *a.weight;
    if (a.split_data_min) p.split_data_min = *a.split_data_min;
    if (a.wrr_enable) p.wrr_enable = *a.wrr_enable;
    if (std::string e = p.check(); !e.empty()) return e;
    out = p;
    return {};
}

errc errc_of(wc_status s, bool connected) noexcept {
    switch (s) {
        case wc_status::success:
            return {};
        case wc_status::rem_access_err:
            return errc::access_denied;
        case wc_status::retry_exc_err:
            return connected ? errc::retry_limit : errc::peer_unreachable;
        case wc_status::rnr_retry_exc_err:
            return errc::no_match;
        case wc_status::wr_flush_err:
            return errc::canceled;
        case wc_status::loc_len_err:
            return errc::truncated;
        default:
            return errc::remote_error;
    }
}

std::string_view detail_of(wc_status s) noexcept {
    return roce::to_string(s);
}

roce_endpoint::roce_endpoint(std::shared_ptr<domain_impl> d, std::shared_ptr<cq_impl> c,
                             std::shared_ptr<av_impl> a, const endpoint_attr& at,
                             const roce::engine_config& rc, const qp_sched::params& sched)
    : endpoint_base(transport::roce_rc, std::move(d), std::move(c), std::move(a), at,
                    endpoint_address{rc.ip, rc.udp_port}),
      eng_(std::make_unique<roce::engine>(rc, *this)),
      ops_(at.tx_depth + at.rx_depth, 0),
      staged_(at.tx_depth + at.rx_depth),
      posted_(at.rx_depth),
      unexpected_(at.max_unexpected),
      sched_params_(sched),
      routes_(at.tx_depth + at.rx_depth),
      wcs_(64),
      holds_(rc.max_qps * roce::max_rd_atomic_limit) {
    unexpected_free_.reserve(unexpected_.size());
    for (std::size_t i = unexpected_.size(); i-- > 0;)
        unexpected_free_.push_back(static_cast<std::uint32_t>(i));
}

roce_endpoint::~roce_endpoint() = default;

void roce_endpoint::fail(op& o, errc e, int prov_errno, std::size_t olen) noexcept {
    if (o.error != errc{}) return;
    o.error = e;
    o.prov_errno = prov_errno;
    o.olen = olen;
}

void roce_endpoint::finish(std::uint32_t index) {
    op& o = ops_[index];
    const auto fill = [&](completion& c) {
        fill_completion(o, c);
        if (o.prov_errno != 0) c.detail = detail_of(static_cast<wc_status>(o.prov_errno));
    };
    if (o.inject) {
        if (o.error != errc{}) {
            completion c;
            fill(c);
            cq->push_unreserved(c);
        }
    } else if (o.silent && o.error == errc{}) {
        cq->unreserve();
        ++silent_completions;
    } else {
        fill(cq->push_reserved());
    }
    ops_.release(index);
}

void roce_endpoint::end_op(std::uint32_t index, wc_status status, bool connected,
                           bool disconnected) {
    op& o = ops_[index];
    if (status != wc_status::success) {
        errc e = errc_of(status, connected);
        if (status == wc_status::wr_flush_err && disconnected) e = errc::peer_unreachable;
        fail(o, e, static_cast<int>(status));
    }
    settle(index);
}

void roce_endpoint::settle(std::uint32_t index) {
    op_route& r = routes_[index];
    if (r.parent != none) {
        // A subchunk: its error is its request's (the first one), and its entry goes.
        const std::uint32_t parent = r.parent;
        op& o = ops_[index];
        if (o.error != errc{}) fail(ops_[parent], o.error, o.prov_errno);
        r = {};
        ops_.release(index);
        op_route& pr = routes_[parent];
        if (--pr.pending != 0) return;
        op& p = ops_[parent];
        // A split WRITE's immediate data goes once all of its data is in place, on the first
        // QP: the target's completion must not come before bytes another QP still carries.
        if (p.kind == op_kind::write && p.hd && !pr.trailer && p.error == errc{}) {
            pr.trailer = true;
            if (const errc e = launch_subchunk(parent, 0, 0, 0, true); e == errc{}) return;
            fail(p, errc::again, 0);
        }
        index = parent;
    }
    op_route& own = routes_[index];
    if (!own.ordered) {
        own = {};
        finish(index);
        return;
    }
    own.done = true;
    complete_in_order(qps_of(ops_[index].peer));
}

void roce_endpoint::complete_in_order(peer_qps& g) {
    while (!g.order.empty() && routes_[g.order.front()].done) {
        const std::uint32_t index = g.order.front();
        g.order.pop_front();
        routes_[index] = {};
        finish(index);
    }
}

bool roce_endpoint::process() {
    return process(domain->fabric->net->now());
}

bool roce_endpoint::process(std::uint64_t poll_now) {
    if (!eng_) return false;
    now = poll_now;
    bool any = false;
    for (auto& [qpn, c] : connections_)
        if (c.established && !c.dead && !c.waiting.empty()) {
            post_waiting(qpn, c);
            any = true;
        }
    for (std::size_t n; (n = eng_->poll_completions(wcs_)) != 0;) {
        any = true;
        for (std::size_t i = 0; i < n; ++i)
            on_completion(wcs_[i]);
        if (n < wcs_.size()) break;
    }
    for (auto it = connections_.begin(); it != connections_.end();) {
        connection& c = it->second;
        retire_unsignaled(it->first, c);
        if (!c.dead) {
            ++it;
            continue;
        }
        // A QP that failed before it carried anything: what waited for it fails with it.
        while (!c.waiting.empty()) {
            const std::uint32_t index = c.waiting.front();
            c.waiting.pop_front();
            fail(ops_[index], c.established ? errc::canceled : errc::peer_unreachable, 0);
            settle(index);
            any = true;
        }
        // Its completions are all out, and so is what the QP owes the peer (a NAK that tells
        // why it failed): only then does it go, with a DREQ.
        const roce::qp* q = eng_->find(it->first);
        if (!c.posted.empty() || (q != nullptr && q->rsp.ack_due)) {
            ++it;
            continue;
        }
        destroy(it->first);
        it = connections_.erase(it);
        any = true;
    }
    return any;
}

void roce_endpoint::on_completion(const roce::work_completion& wc) {
    const auto it = connections_.find(wc.qp_num);
    if (it == connections_.end()) return;
    connection& c = it->second;
    const auto index = static_cast<std::uint32_t>(wc.wr_id);
    // Completions come in posting order: unsignaled work requests before this one ended well.
    while (!c.posted.empty() && c.posted.front() != index) {
        const std::uint32_t before = c.posted.front();
        c.posted.pop_front();
        end_op(before, wc_status::success, true, false);
    }
    if (c.posted.empty()) return;
    c.posted.pop_front();
    if (const op_route& r = routes_[index]; r.measured && wc.status == wc_status::success)
        if (const auto g = peers_.find(static_cast<std::uint64_t>(c.peer)); g != peers_.end())
            g->second.sched.on_completion(r.slot, ops_[index].len,
                                          now > r.posted_at ? now - r.posted_at : 0, now);
    end_op(index, wc.status, c.established, c.disconnected);
}

void roce_endpoint::retire_unsignaled(roce::qpn_t qpn, connection& c) {
    const roce::qp* q = eng_->find(qpn);
    const std::size_t in_queue = q ? q->sq.size() : 0;
    while (c.posted.size() > in_queue) {
        const std::uint32_t index = c.posted.front();
        c.posted.pop_front();
        end_op(index, wc_status::success, true, false);
    }
}

void roce_endpoint::on_qp_event(roce::qp& q, roce::qp_event e, std::uint16_t) {
    auto it = connections_.find(q.qpn);
    if (it == connections_.end()) {
        // A peer connected to us: its QP carries our posts to it too, unless one of ours does.
        if (e != roce::qp_event::established) return;
        connection c;
        c.peer = peer_of(q.attr.peer_ip);
        it = connections_.emplace(q.qpn, std::move(c)).first;
        // With several QPs to a peer, ours are the ones we connected, each on its own path.
        if (it->second.peer != any_peer && sched_params_.qps_per_connection == 1)
            if (peer_qps& g = qps_of(it->second.peer); g.qp[0] == 0) g.qp[0] = q.qpn;
    }
    connection& c = it->second;
    switch (e) {
        case roce::qp_event::established:
            c.established = true;
            break;
        case roce::qp_event::disconnected:
            c.disconnected = true;
            [[fallthrough]];
        case roce::qp_event::rejected:
        case roce::qp_event::error:
            c.dead = true;
            // The next post to the peer that goes this way connects a fresh QP.
            if (const auto p = peers_.find(static_cast<std::uint64_t>(c.peer)); p != peers_.end())
                for (roce::qpn_t& slot : p->second.qp)
                    if (slot == q.qpn) slot = 0;
            break;
    }
}

peer_addr roce_endpoint::peer_of(std::uint32_t ip) const noexcept {
    const auto it = av->by_address.find(av_impl::key(ip, 0));
    return it == av->by_address.end() ? any_peer : static_cast<peer_addr>(it->second);
}

peer_addr roce_endpoint::peer_of(const roce::qp& q) noexcept {
    const auto it = connections_.find(q.qpn);
    if (it == connections_.end()) return peer_of(q.attr.peer_ip);
    // A peer that connected before the application put it in the address vector is found there
    // once it is.
    if (it->second.peer == any_peer) it->second.peer = peer_of(q.attr.peer_ip);
    return it->second.peer;
}

void roce_endpoint::close() noexcept {
    if (!eng_) return;
    // Connected QPs say goodbye (DREQ) while frames still flow.
    for (const auto& [qpn, c] : connections_)
        destroy(qpn);
    domain->fabric->net->detach(*this);
    eng_.reset();
    holds_.release_all(domain->regions);  // the READ responses went with the engine
    connections_.clear();
    peers_.clear();
    posted_.drain([](std::uint32_t) {});
    // Subchunks go without an entry of their own; every request and receive ends canceled.
    for (std::uint32_t i = 0; i < ops_.size(); ++i)
        if (ops_[i].in_use && routes_[i].parent != none) {
            routes_[i] = {};
            ops_.release(i);
        }
    for (std::uint32_t i = 0; i < ops_.size(); ++i) {
        if (!ops_[i].in_use) continue;
        routes_[i] = {};
        fail(ops_[i], errc::canceled, 0);
        finish(i);
    }
}

std::vector<qp_counters> roce_endpoint::queue_pairs(peer_addr peer) const {
    std::vector<qp_counters> out;
    const auto it = peers_.find(static_cast<std::uint64_t>(peer));
    if (it == peers_.end()) return out;
    const peer_qps& g = it->second;
    for (std::uint32_t i = 0; i < g.qp.size(); ++i) {
        const qp_sched::qp_stats& s = g.sched.stats(i);
        const roce::qp* q = g.qp[i] != 0 ? eng_->find(g.qp[i]) : nullptr;
        out.push_back(
            {g.qp[i], s.bytes, s.requests, s.samples, s.estimate_ns, s.weight,
             q != nullptr ? roce::source_port(q->qpn, q->attr.udp_sport) : std::uint16_t{0}});
    }
    return out;
}

void roce_endpoint::destroy(roce::qpn_t qpn) {
    if (const roce::qp* q = eng_->find(qpn)) retired_ += q->counters;
    eng_->destroy_qp(qpn);
}

void roce_endpoint::add_engine_counters(endpoint_counters& c) const noexcept {
    if (!eng_) return;
    const roce::engine_counters& e = eng_->counters();
    c.packets_sent = e.frames_tx;
    c.packets_received = e.frames_rx;
    for (const auto r : e.rejects)
        c.packets_dropped += r;
    for (const auto d : e.drops)
        c.packets_dropped += d;
    c.pdcs_opened = eng_->cm().established;
    c.pdcs_failed = eng_->cm().timeouts;
    roce::qp_counters q = retired_;
    for (const auto& [qpn, conn] : connections_)
        if (const roce::qp* p = eng_->find(qpn)) q += p->counters;
    using roce::resend_cause;
    c.retransmits_timeout = q.resent(resend_cause::timeout);
    c.retransmits_nack = q.resent(resend_cause::psn_nak) + q.resent(resend_cause::implicit_nak) +
                         q.resent(resend_cause::rnr);
    c.retransmits = c.retransmits_timeout + c.retransmits_nack;
    c.timeouts = q.timeouts;
    for (std::size_t i = 0; i < q.naks_sent.size(); ++i) {
        c.nacks_sent += q.naks_sent[i];
        c.nacks_received += q.naks_received[i];
    }
    c.duplicates = q.duplicates;
    for (const auto d : q.drops)
        c.packets_dropped += d;
    c.roce.go_back_rounds = q.go_back_rounds;
    c.roce.rnr_naks_sent = q.rnr_naks_sent;
    c.roce.rnr_naks_received = q.rnr_naks_received;
    c.roce.acks_sent = q.acks_sent;
    c.roce.acks_received = q.acks_received;
    c.roce.placed_early = q.placed_early;
    c.roce.cnps_sent = e.cnps_sent;
    c.roce.cnps_received = e.cnps_received;
    c.roce.paced = e.paced;
    c.roce.qps_connected = eng_->cm().established;
}

}  // namespace uet::detail
