#include "cluster/roce_fabric.hpp"

#include <algorithm>
#include <stdexcept>

namespace uet::sim {

roce_fabric::roce_fabric(const netmodel::topology& t,
                         const std::function<roce::engine_config(std::uint32_t)>& config,
                         const std::function<roce::delivery_target&(std::uint32_t)>& target,
                         options o)
    : fab_(t),
      opt_(o),
      held_(fab_.host_count(), false),
      deadlines_(fab_.host_count()),
      marked_(fab_.host_count(), false) {
    engines_.reserve(fab_.host_count());
    for (std::uint32_t h = 0; h < fab_.host_count(); ++h) {
        roce::engine_config c = config(h);
        c.ip = fab_.host_ip(h);
        c.mac = fab_.host_mac(h);
        engines_.push_back(std::make_unique<roce::engine>(c, target(h)));
        touch(h);
    }
}

void roce_fabric::touch(std::uint32_t h) {
    if (!held_[h] && !marked_[h]) deadlines_.set(h, engines_[h]->next_deadline());
}

void roce_fabric::mark(std::uint32_t h) {
    if (marked_[h]) return;
    marked_[h] = true;
    due_.push_back(h);
}

std::pair<roce::qpn_t, roce::qpn_t> roce_fabric::connect(std::uint32_t a, std::uint32_t b,
                                                         std::uint16_t sport_a,
                                                         std::uint16_t sport_b) {
    const roce::qpn_t qa = eng(a).create_qp(), qb = eng(b).create_qp();
    if (qa == 0 || qb == 0) throw std::runtime_error("roce_fabric: no QP left on a host");
    const psn_t pa = 0x1000 * (++pairs_), pb = 0x700000 + pairs_;
    side(a, qa, b, qb, sport_a, pa, pb);
    side(b, qb, a, qa, sport_b, pb, pa);
    touch(a);
    touch(b);
    return {qa, qb};
}

void roce_fabric::side(std::uint32_t self, roce::qpn_t q, std::uint32_t peer, roce::qpn_t peer_q,
                       std::uint16_t sport, psn_t sq, psn_t rq) {
    using namespace roce;
    qp_attr at;
    at.access = access_remote_write | access_remote_read;
    at.mtu = path_mtu::mtu_4096;
    at.dest_qpn = peer_q;
    at.peer_ip = fab_.host_ip(peer);
    at.peer_mac = fab_.host_mac(peer);
    at.udp_sport = sport;
    at.sq_psn = sq;
    at.rq_psn = rq;
    at.max_rd_atomic = at.max_dest_rd_atomic = 8;
    at.min_rnr_timer = 1;
    at.timeout = opt_.timeout;
    at.retry_cnt = opt_.retry_cnt;
    if (!connect_rc([&](const qp_attr& x, std::uint32_t m) { return eng(self).modify_qp(q, x, m); },
                    at))
        throw std::runtime_error("roce_fabric: a QP refused a transition to RTS");
}

void roce_fabric::send(std::uint32_t h, std::span<const std::uint8_t> frame) {
    max_frame_ = std::max(max_frame_, frame.size());
    fab_.send(h, frame, now_);
}

void roce_fabric::round(const completion_fn& on_completion) {
    due_.clear();
    fab_.deliver(now_, [&](std::uint32_t h, std::span<const std::uint8_t> frame) {
        const std::span<const std::uint8_t> one[] = {frame};
        engines_[h]->receive_burst(one, now_);
        mark(h);
    });
    while (deadlines_.top_time() <= now_)
        mark(deadlines_.top_id()), deadlines_.set(deadlines_.top_id(), netmodel::event_heap::never);
    for (const std::uint32_t h : held_hosts_)
        mark(h);
    held_hosts_.clear();
    std::sort(due_.begin(), due_.end());
    for (const std::uint32_t h : due_) {
        serve(h);
        for (std::size_t n; (n = engines_[h]->poll_completions(wcs_)) > 0;)
            for (std::size_t i = 0; i < n; ++i)
                on_completion(h, wcs_[i]);
    }
    // A host whose NIC port is full waits for it to drain (a fabric event), served again then.
    for (const std::uint32_t h : due_) {
        marked_[h] = false;
        if (held_[h])
            held_hosts_.push_back(h);
        else
            touch(h);
    }
}

void roce_fabric::serve(std::uint32_t h) {
    roce::engine& e = *engines_[h];
    held_[h] = false;
    if (e.next_deadline() > now_) return;
    if (opt_.nic_backlog_bytes == 0) {
        for (std::size_t n; (n = e.transmit(now_, out_)) > 0;) {
            for (std::size_t i = 0; i < n; ++i)
                send(h, out_[i].data);
            if (n < out_.size()) break;
        }
        return;
    }
    const std::uint32_t nic = fab_.nic_port(h);
    while (!(held_[h] = fab_.port_counters(nic).queue_bytes >= opt_.nic_backlog_bytes) &&
           e.transmit(now_, std::span(out_).first(1)) == 1)
        send(h, out_[0].data);
}

std::uint64_t roce_fabric::next_time() const {
    return std::min(fab_.next_event(), deadlines_.top_time());
}

bool roce_fabric::run(const std::function<bool()>& done, const completion_fn& on_completion,
                      const std::function<void()>& top_up, std::uint64_t max_rounds) {
    // top_up may post on any host: every deadline is read again after it.
    const auto posted = [&] {
        top_up();
        for (std::uint32_t h = 0; h < host_count(); ++h)
            touch(h);
    };
    posted();
    for (std::uint64_t r = 0; !done(); ++r) {
        if (r == max_rounds) return false;
        round(on_completion);
        posted();
        const std::uint64_t next = next_time();
        if (next == netmodel::fabric::none) return done();
        advance(next);
    }
    return true;
}

}  // namespace uet::sim
