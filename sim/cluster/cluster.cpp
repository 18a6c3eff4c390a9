#include "cluster/cluster.hpp"

#include <algorithm>
#include <stdexcept>

#include "wire/bytes.hpp"

namespace uet::sim {

std::uint64_t path_rtt(const netmodel::topology& t, std::uint32_t links, double data_frame,
                       double ack_frame) {
    const double host_ns = 8 / t.host_link.rate_gbps, fab_ns = 8 / t.fabric_link.rate_gbps;
    const double fabric_links = links > 2 ? double(links - 2) : 0;
    const double rtt = 2.0 * (double(t.host_link.delay_ns) + data_frame * host_ns) +
                       2.0 * (double(t.host_link.delay_ns) + ack_frame * host_ns) +
                       fabric_links * (double(t.fabric_link.delay_ns) + data_frame * fab_ns) +
                       fabric_links * (double(t.fabric_link.delay_ns) + ack_frame * fab_ns);
    return static_cast<std::uint64_t>(rtt);
}

std::uint64_t base_rtt(const netmodel::topology& t, double data_frame, double ack_frame) {
    const std::uint32_t links = t.leaves <= 1 ? 2 : t.pods > 1 ? 6 : 4;
    return path_rtt(t, links, data_frame, ack_frame);
}

cluster::cluster(const netmodel::topology& t, const engine_config& base, std::uint64_t bin_ns,
                 payload_kind payload)
    : fab_(t), payload_(payload), bin_ns_(bin_ns) {
    const std::uint32_t hosts = fab_.host_count();
    engines_.reserve(hosts);
    for (std::uint32_t h = 0; h < hosts; ++h) {
        engine_config c = base;
        c.mac = fab_.host_mac(h);
        c.ip = fab_.host_ip(h);
        c.seed = base.seed * 1000 + h;
        if (payload == payload_kind::placed_writes) c.deliver_to = this;
        engines_.push_back(std::make_unique<engine>(c));
    }
    deadlines_ = netmodel::event_heap(hosts);
    for (std::uint32_t h = 0; h < hosts; ++h)
        refresh(h);
    due_.reserve(hosts);
    rx_bytes_.assign(hosts, 0);
    spines_used_.assign(hosts, 0);
}

std::size_t cluster::add_flow(const flow_spec& spec) {
    const std::uint32_t i =
        flows_.add(spec, fab_.host_count(), payload_ == payload_kind::placed_writes);
    const flow_state& f = flows_[i];
    const std::uint32_t biggest = f.spec.messages > 1 ? spec.message_bytes : f.message_size(0);
    if (data_.size() < biggest) data_.assign(biggest, 0x5a);
    if (payload_ == payload_kind::placed_writes && sink_.size() < biggest) sink_.resize(biggest);
    return i;
}

engine_totals cluster::totals() const {
    engine_totals t;
    for (const auto& e : engines_) {
        const engine_counters& c = e->counters();
        t.timeouts += c.pds.timeouts;
        for (const auto r : c.pds.retransmits)
            t.retransmits += r;
        t.repaths += c.pds.repaths;
        t.trimmed_received += c.pds.trimmed_received;
        t.duplicates += c.pds.duplicates;
        t.inferred_losses +=
            c.pds.nacks_sent[static_cast<std::size_t>(pds::nack_slot::inferred_loss)];
        t.path_ids_out_of_range += c.path_ids_out_of_range;
        t.lb.reps_freezes += c.lb.reps_freezes;
        t.lb.reps_freezes_ended += c.lb.reps_freezes_ended;
        for (std::size_t r = 0; r < drop_reason_count; ++r)
            t.drops[r] += c.drops[r];
    }
    return t;
}

bool cluster::run_until_done(std::uint64_t limit) {
    while (!all_finished())
        if (!step(limit)) return all_finished();
    return true;
}

void cluster::run_to(std::uint64_t t) {
    while (step(t)) {
    }
    now_ = std::max(now_, t);
}

bool cluster::step(std::uint64_t limit) {
    const std::uint64_t t =
        std::min({fab_.next_event(), flows_.next_start(), deadlines_.top_time()});
    if (t == never || t > limit) return false;
    ++steps_;
    now_ = std::max(now_, t);
    start_flows();
    fab_.deliver(now_, [&](std::uint32_t h, std::span<const std::uint8_t> frame) {
        engine& e = *engines_[h];
        e.receive(frame, now_);
        // Messages complete as their last packet is taken, not at the engine's next deadline
        // (a coalesced ACK's): a ring's next step starts when the chunk is in.
        take_received(e);
        refresh(h);
    });
    // Every engine whose deadline has come, in host order; serving one never moves another's.
    due_.clear();
    while (deadlines_.top_time() <= now_) {
        const std::uint32_t h = deadlines_.top_id();
        due_.push_back(h);
        deadlines_.set(h, netmodel::event_heap::never);
    }
    std::sort(due_.begin(), due_.end());
    for (const std::uint32_t h : due_) {
        engine& e = *engines_[h];
        pump(h, e);
        collect(e);
    }
    for (const std::uint32_t h : due_)
        refresh(h);
    return true;
}

void cluster::start_flows() {
    for (std::uint32_t i; (i = flows_.start_next(now_)) != flow_spec::no_flow;) {
        top_up(i);
        refresh(flows_[i].spec.src);
    }
}

std::uint8_t* cluster::place_write(std::uint32_t, const ses::op_fields&, std::uint32_t,
                                   std::uint32_t length) noexcept {
    return length <= sink_.size() ? sink_.data() : nullptr;
}

void cluster::top_up(std::size_t i) {
    flow_state& f = flows_[i];
    engine& e = *engines_[f.spec.src];
    const peer_id to = e.add_peer(fab_.host_mac(f.spec.dst), fab_.host_ip(f.spec.dst));
    // The receiver knows the flow by the WRITE's memory key: 1 + its index (0: none).
    ses_fields fields;
    fields.opcode = wire::ses_opcode::write;
    fields.memory_key = i + 1;
    while (f.posted < f.spec.messages && f.posted - f.completed - f.failed < f.spec.outstanding) {
        const std::uint64_t ctx = (std::uint64_t{i} << 32) | f.posted;
        const std::span<const std::uint8_t> payload{data_.data(), f.message_size(f.posted)};
        const status st = payload_ == payload_kind::sends
                              ? e.post_send(to, f.spec.mode, payload, ctx)
                              : e.post_message(to, f.spec.mode, fields, payload, ctx);
        if (!st.ok()) break;
        ++f.posted;
    }
}

void cluster::pump(std::uint32_t h, engine& e) {
    for (;;) {
        const std::size_t n = e.transmit(now_, frames_);
        for (std::size_t i = 0; i < n; ++i) {
            const auto frame = frames_[i].data;
            max_frame_ = std::max(max_frame_, frame.size());
            note_spine(h, frame);
            fab_.send(h, frame, now_);
        }
        if (n < frames_.size()) break;
    }
}

void cluster::note_spine(std::uint32_t h, std::span<const std::uint8_t> frame) {
    if (frame.size() < 1024) return;  // full data frames only, not ACKs
    const std::uint32_t dst = fab_.host_of_ip(wire::load_be32(&frame[30]));
    const std::uint32_t leaf = fab_.leaf_of(h);
    if (dst == netmodel::fabric::no_host || fab_.leaf_of(dst) == leaf) return;
    const std::uint32_t s = fab_.uplink_for(leaf, frame);
    if (s < 64) spines_used_[h] |= std::uint64_t{1} << s;
}

void cluster::collect(engine& e) {
    std::array<send_completion, 64> done;
    for (std::size_t n; (n = e.poll_send_completions(done)) > 0;) {
        for (std::size_t k = 0; k < n; ++k) {
            const auto i = static_cast<std::size_t>(done[k].context >> 32);
            const auto m = static_cast<std::uint32_t>(done[k].context);
            flows_.complete(static_cast<std::uint32_t>(i), m, done[k].result.ok(), now_);
            top_up(i);
        }
    }
    take_received(e);
}

void cluster::take_received(engine& e) {
    received_message m;
    while (e.poll_received(m)) {
        const std::uint32_t from = fab_.host_of_ip(e.peer_ip(m.from));
        const std::size_t bytes = m.placed ? m.ses->request_length : m.data.size();
        if (m.placed && m.ses->memory_key != 0 && m.ses->memory_key <= flows_.size())
            flows_.arrived(static_cast<std::uint32_t>(m.ses->memory_key - 1), bytes, now_);
        if (from < rx_bytes_.size()) {
            rx_bytes_[from] += bytes;
            if (bin_ns_ != 0) {
                const std::size_t b = now_ / bin_ns_;
                if (bins_.size() <= b)
                    bins_.resize(b + 1, std::vector<std::uint64_t>(rx_bytes_.size(), 0));
                bins_[b][from] += bytes;
            }
        }
        e.release(m.handle);
    }
}

}  // namespace uet::sim
