#include "cluster/roce_cluster.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>

namespace uet::sim {

roce_cluster::roce_cluster(const netmodel::topology& t, const roce_cluster_config& config)
    : cfg_(config),
      fab_(
          t,
          [&](std::uint32_t h) {
              roce::engine_config c = config.engine;
              c.seed = config.engine.seed * 1000 + h;
              return c;
          },
          [this](std::uint32_t) -> roce::delivery_target& { return *this; }, config.fabric) {
    if (cfg_.qps == 0 || cfg_.qps > qp_sched::params::max_qps)
        throw std::invalid_argument("roce_cluster: qps out of range");
}

std::size_t roce_cluster::add_flow(const flow_spec& spec) {
    const std::uint32_t i = flows_.add(spec, fab_.host_count(), true);
    const flow_state& f = flows_[i];
    const std::uint32_t biggest = f.spec.messages > 1 ? spec.message_bytes : f.message_size(0);
    if (data_.size() < biggest) data_.assign(biggest, 0x5a);
    if (sink_.size() < biggest) sink_.resize(biggest);
    const auto [it, added] =
        conn_of_.emplace(std::pair{spec.src, spec.dst}, static_cast<std::uint32_t>(conns_.size()));
    if (added) {
        connection& c = conns_.emplace_back();
        c.src = spec.src;
        c.dst = spec.dst;
        for (std::uint32_t q = 0; q < cfg_.qps; ++q) {
            const auto [a, b] = fab_.connect(spec.src, spec.dst);
            c.qpn.push_back(a);
            c.peer_qpn.push_back(b);
        }
        if (cfg_.qps > 1) {
            qp_sched::params p = cfg_.sched;
            p.qps_per_connection = cfg_.qps;
            c.sched =
                std::make_unique<qp_sched::scheduler_state>(p, cfg_.link_gbps, cfg_.base_rtt_ns);
        }
    }
    conn_of_flow_.push_back(it->second);
    return i;
}

template <class T>
std::uint32_t roce_cluster::take(std::vector<T>& slots, std::vector<std::uint32_t>& free) {
    if (free.empty()) {
        slots.emplace_back();
        return static_cast<std::uint32_t>(slots.size() - 1);
    }
    const std::uint32_t s = free.back();
    free.pop_back();
    return s;
}

void roce_cluster::top_up(std::uint32_t i) {
    flow_state& f = flows_[i];
    connection& c = conns_[conn_of_flow_[i]];
    roce::engine& e = fab_.eng(c.src);
    std::array<qp_sched::subchunk, qp_sched::params::max_qps> sub{};
    while (f.posted < f.spec.messages && f.posted - f.completed - f.failed < f.spec.outstanding) {
        const std::uint32_t bytes = f.message_size(f.posted);
        const std::size_t n = c.sched ? c.sched->schedule(bytes, now(), sub) : 1;
        if (!c.sched) sub[0] = {0, 0, bytes};
        const std::uint32_t m = take(messages_, free_messages_);
        messages_[m] = {i, f.posted, static_cast<std::uint32_t>(n), true};
        for (std::size_t k = 0; k < n; ++k) {
            const std::uint32_t s = take(wrs_, free_wrs_);
            if (s >> slot_bits) throw std::runtime_error("roce_cluster: too many work requests");
            work_request& w = wrs_[s];
            w = {m,    conn_of_flow_[i], sub[k].qp, w.generation + 1, sub[k].length, now(), true,
                 false};
            roce::send_wr wr;
            wr.wr_id = s | std::uint64_t{w.generation} << slot_bits;
            wr.opcode = roce::wr_opcode::write_imm;
            wr.local = data_.data() + sub[k].offset;
            wr.length = static_cast<std::uint32_t>(sub[k].length);
            wr.rkey = 1;  // the sink: place_write takes any key
            wr.imm = static_cast<std::uint32_t>(wr.wr_id);
            // The send queues hold every message the connection's flows may have out.
            if (e.post_send(c.qpn[sub[k].qp], wr) != roce::post_error::none)
                throw std::runtime_error("roce_cluster: a send queue is full");
        }
        ++f.posted;
    }
    fab_.touch(c.src);
}

roce_cluster::work_request* roce_cluster::find(std::uint64_t id) {
    const std::uint64_t s = id & ((1u << slot_bits) - 1);
    if (s >= wrs_.size()) return nullptr;
    work_request& w = wrs_[s];
    constexpr std::uint32_t mask = (1u << (32 - slot_bits)) - 1;  // what the immediate holds
    const auto gen = static_cast<std::uint32_t>(id >> slot_bits) & mask;
    return w.live && (w.generation & mask) == gen ? &w : nullptr;
}

void roce_cluster::note_arrival(std::uint32_t id) {
    work_request* w = find(id);
    if (w == nullptr || w->arrived) return;
    w->arrived = true;
    flows_.arrived(messages_[w->message].flow, w->bytes, now());
}

void roce_cluster::on_completion(const roce::work_completion& wc) {
    work_request* w = find(wc.wr_id);
    if (w == nullptr) return;
    const bool ok = wc.status == roce::wc_status::success;
    // An acknowledged WRITE has arrived, whether or not its immediate was seen.
    if (ok) note_arrival(static_cast<std::uint32_t>(wc.wr_id));
    connection& c = conns_[w->connection];
    if (c.sched) c.sched->on_completion(w->qp, w->bytes, now() - w->post_ns, now());
    w->live = false;
    free_wrs_.push_back(static_cast<std::uint32_t>(w - wrs_.data()));
    message& m = messages_[w->message];
    m.ok = m.ok && ok;
    if (--m.left != 0) return;
    const std::uint32_t flow = m.flow;
    flows_.complete(flow, m.index, m.ok, now());
    free_messages_.push_back(w->message);
    top_up(flow);
}

void roce_cluster::start_flows() {
    for (std::uint32_t i; (i = flows_.start_next(now())) != flow_spec::no_flow;)
        top_up(i);
}

bool roce_cluster::step(std::uint64_t limit) {
    const std::uint64_t t = std::min(fab_.next_time(), flows_.next_start());
    if (t == never || t > limit) return false;
    ++steps_;
    fab_.advance(t);
    start_flows();
    fab_.round([this](std::uint32_t, const roce::work_completion& wc) { on_completion(wc); });
    return true;
}

bool roce_cluster::run_until_done(std::uint64_t limit) {
    while (!all_finished())
        if (!step(limit)) return all_finished();
    return true;
}

engine_totals roce_cluster::totals() const {
    engine_totals t;
    const auto add = [&](std::uint32_t h, roce::qpn_t q) {
        const roce::qp* x = fab_.eng(h).find(q);
        if (x == nullptr) return;
        for (const std::uint64_t r : x->counters.resends)
            t.retransmits += r;
        t.timeouts += x->counters.timeouts;
        t.duplicates += x->counters.duplicates;
        t.go_back_rounds += x->counters.go_back_rounds;
    };
    for (const connection& c : conns_) {
        for (const roce::qpn_t q : c.qpn)
            add(c.src, q);
        for (const roce::qpn_t q : c.peer_qpn)
            add(c.dst, q);
    }
    for (std::uint32_t h = 0; h < fab_.host_count(); ++h)
        t.cnps += fab_.eng(h).counters().cnps_sent;
    return t;
}

}  // namespace uet::sim
