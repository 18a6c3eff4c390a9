// The client and server state machines (the message sequence is in control.hpp).
#include "roles.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

namespace uet::perf {

namespace {

std::uint64_t bits(double d) {
    return std::bit_cast<std::uint64_t>(d);
}
double real(std::uint64_t u) {
    return std::bit_cast<double>(u);
}

std::string seconds(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g s", s);
    return buf;
}

enum report_kind : std::uint64_t { report_bw = 1, report_lat = 2 };
constexpr std::uint64_t linger_ns = 300'000'000;

std::uint64_t timeout_ns(const settings& s) {
    return static_cast<std::uint64_t>(s.timeout_s * 1e9);
}
// The client says it is alive this often while it measures, so that a server that hears
// nothing for --timeout knows it is gone (several chances within one timeout).
std::uint64_t keepalive_ns(const settings& s) {
    return std::max<std::uint64_t>(1, timeout_ns(s) / 4);
}

}  // namespace

// ---- both roles ----

std::string role_base::verify_summary() const {
    if (!s_.verify) return "off";
    if (verify_failures_)
        return "FAILED: " + verify_first_ + " (" + std::to_string(verify_failures_) + " of " +
               std::to_string(verify_checked_) + " checks failed)";
    // The checks of a run that stopped short prove nothing about what it did not get to.
    if (failed()) return "not completed: " + error_;
    return "OK (" + std::to_string(verify_checked_) + " checks)";
}

ctrl_msg role_base::message(ctrl_kind k) const {
    ctrl_msg m;
    m.kind = k;
    m.nonce = nonce_;
    return m;
}

bool role_base::from_peer(const ctrl_arrival& a) {
    ctrl_counters& c = sd_.ctrl_counts();
    if (a.from != sd_.peer()) {
        ++c.from_stranger;
        return false;
    }
    if (a.msg.nonce != nonce_) {
        ++c.bad_nonce;
        return false;
    }
    return true;
}

void role_base::fail(std::string why) {
    if (error_.empty()) error_ = std::move(why);
}

void role_base::tell_peer_about_failure(bool greeted) {
    if (abort_sent_ || !failed() || !greeted || sd_.peer_silent()) return;
    abort_sent_ = true;
    ctrl_msg m = message(ctrl_kind::abort);
    m.text = error_.substr(0, ctrl_msg::text_max);
    if (!sd_.send_ctrl(m)) sd_.poll();  // best effort: this side stops either way
}

void role_base::expect_answer(std::uint64_t now, std::string_view what) {
    deadline_ = now + timeout_ns(s_);
    waiting_for_ = what;
}

bool role_base::timed_out(std::uint64_t now) {
    if (deadline_ == no_deadline || now < deadline_) return false;
    std::string why = "no answer from " + info_.remote + " after " + seconds(s_.timeout_s) +
                      " (waiting for " + waiting_for_ + ")";
    if (s_.tss) why += tss_hint(sd_.ep().counters());
    fail(why);
    return true;
}

void role_base::send(const ctrl_msg& m) {
    if (const auto ec = sd_.send_ctrl(m))
        fail("cannot send " + std::string(name_of(m.kind)) + ": " + ec.message());
}

void role_base::print_header() {
    out_ += settings_block(s_, info_);
    out_ += is_bw(s_.test) ? bw_header(s_.report_gbits) : lat_header();
}

void role_base::note_verify(std::uint64_t checked, std::uint64_t failures,
                            const std::string& first) {
    if (failures && !verify_failures_) verify_first_ = first;
    verify_checked_ += checked;
    verify_failures_ += failures;
}

void role_base::print_row_from(const ctrl_msg& r) {
    const auto& v = r.v;
    if (v[0] == report_bw) {
        bw_row row{v[1], v[2], real(v[3]), real(v[4]), real(v[5])};
        bw_rows_.push_back(row);
        out_ += bw_line(row, s_.report_gbits);
    } else {
        lat_row row{v[1],       v[2],       real(v[3]), real(v[4]), real(v[5]),
                    real(v[6]), real(v[7]), real(v[8]), real(v[9])};
        lat_rows_.push_back(row);
        out_ += lat_line(row);
    }
}

// ---- client ----

client_role::client_role(side& sd, const settings& s, run_info info, peer_addr server,
                         std::uint64_t nonce)
    : role_base(sd, s, std::move(info)), sizes_(s.sizes()) {
    sd_.set_peer(server, 0, 0);
    nonce_ = nonce;
}

void client_role::step(std::uint64_t now) {
    if (finished()) return;
    step_once(now);
    tell_peer_about_failure(state_ != state::hello && state_ != state::wait_hello_ack &&
                            refused_.empty());
}

void client_role::step_once(std::uint64_t now) {
    sd_.poll();
    // Refused: the refusal is the news, whatever the transport says while we linger.
    if (!sd_.error().empty()) return fail(refused_.empty() ? sd_.error() : refused_);
    while (auto a = sd_.take_ctrl()) {
        // Only the server's messages of this session count; anything else is dropped.
        if (from_peer(*a)) on_message(a->msg, now);
        if (finished()) return;
    }
    switch (state_) {
        case state::hello:
            if (const auto ec = sd_.post_ctrl_recv())
                return fail("cannot post a control receive: " + ec.message());
            send(make_hello(s_, sd_.ep().address(), sd_.region_key(), sd_.region_size(), nonce_));
            expect_answer(now, "HELLO_ACK");
            go(state::wait_hello_ack);
            break;
        case state::start:
            start_size(now);
            break;
        case state::running:
            if (interrupted_) sd_.stop_initiator();
            if (sd_.activity() != last_activity_) {
                last_activity_ = sd_.activity();
                deadline_ = now + timeout_ns(s_);
            }
            if (sd_.initiator_done()) {
                ctrl_msg m = message(ctrl_kind::stop);
                m.v[0] = sd_.sent_count();
                send(m);
                expect_answer(now, "STOP_ACK");
                wake_at_ = no_deadline;  // no more KEEPALIVEs: STOP is answered
                go(state::wait_stop_ack);
            } else if (now >= wake_at_) {
                send_keepalive(now);
            }
            break;
        case state::wait_result:
            if (have_result_ && sd_.drained()) finish_size(now);
            break;
        case state::linger:
            if (now < deadline_) return;
            if (!refused_.empty()) return fail(refused_);
            done_ = true;
            return;
        default:
            break;
    }
    if (!finished() && state_ == state::running && now >= deadline_)
        return fail("no completion for " + seconds(s_.timeout_s) + " while measuring with " +
                    info_.remote + " (" + std::to_string(sd_.run().completed) + " of " +
                    std::to_string(sd_.run().posted) + " operations completed)");
    if (state_ != state::running) timed_out(now);
}

// The server hears nothing else from us while we measure (writes and reads do not reach its
// application): without this it could not tell a long run from a dead client.
void client_role::send_keepalive(std::uint64_t now) {
    const std::error_code ec = sd_.send_ctrl(message(ctrl_kind::keepalive));
    if (ec && ec != errc::again) return fail("cannot send KEEPALIVE: " + ec.message());
    // Queues full: the next step tries again (the server allows several intervals).
    if (!ec) wake_at_ = now + keepalive_ns(s_);
}

void client_role::start_size(std::uint64_t now) {
    const std::uint64_t size = sizes_[size_index_];
    // Our receives (bidirectional sends) go before START, the operations after READY.
    sd_.begin(size, false, s_.test == test_kind::send_bw && s_.bidirectional, false);
    ctrl_msg m = message(ctrl_kind::start);
    m.v[0] = size_index_;
    m.v[1] = size;
    send(m);
    expect_answer(now, "READY");
    have_result_ = false;
    go(state::wait_ready);
}

void client_role::on_message(const ctrl_msg& m, std::uint64_t now) {
    if (m.kind == ctrl_kind::abort) return fail("the server stopped the run: " + m.text);
    auto unexpected = [&] {
        fail("unexpected " + std::string(name_of(m.kind)) + " from the server");
    };
    switch (state_) {
        case state::wait_hello_ack:
            if (m.kind != ctrl_kind::hello_ack) return unexpected();
            if (m.v[0] != 0) {  // fail after the linger, so the server's answer is acknowledged
                refused_ = "the server refused the run: " + m.text;
                // Tell the server the refusal reached its client (a HELLO replayed from
                // elsewhere gets no such answer): it then ends too, saying why.
                ctrl_msg taken = message(ctrl_kind::abort);
                taken.text = "the client was refused";
                abort_sent_ = !sd_.send_ctrl(taken);
                deadline_ = now + std::min(linger_ns, timeout_ns(s_));
                return go(state::linger);
            }
            if (m.v[2] < region_bytes_for(s_))
                return fail("the server's region is " + std::to_string(m.v[2]) +
                            " bytes, the run needs " + std::to_string(region_bytes_for(s_)));
            sd_.set_peer(sd_.peer(), m.v[1], m.v[2]);
            info_.remote_key = m.v[1];
            print_header();
            go(state::start);
            deadline_ = no_deadline;
            break;
        case state::wait_ready:
            if (m.kind != ctrl_kind::ready) return unexpected();
            sd_.run().initiator = true;
            last_activity_ = sd_.activity();
            deadline_ = now + timeout_ns(s_);
            wake_at_ = now + keepalive_ns(s_);
            go(state::running);
            break;
        case state::wait_stop_ack: {
            if (m.kind != ctrl_kind::stop_ack) return unexpected();
            server_sent_ = m.v[0];
            if (!sd_.owe_drain(m.v[1]))
                return fail("STOP_ACK asks for " + std::to_string(m.v[1]) +
                            " drain messages, more than the depth");
            ctrl_msg d = message(ctrl_kind::drain);
            d.v[0] = sd_.peer_sent(server_sent_);
            send(d);
            expect_answer(now, "RESULT");
            go(state::wait_result);
            break;
        }
        case state::wait_result:
            if (m.kind != ctrl_kind::result) return unexpected();
            result_ = m;
            have_result_ = true;
            break;
        case state::wait_report_ack:
            if (m.kind != ctrl_kind::ack) return unexpected();
            if (interrupted_ || ++size_index_ == sizes_.size()) {
                send(message(ctrl_kind::bye));
                expect_answer(now, "the answer to BYE");
                go(state::wait_bye_ack);
            } else {
                deadline_ = no_deadline;
                go(state::start);
            }
            break;
        case state::wait_bye_ack:
            if (m.kind != ctrl_kind::ack) return unexpected();
            // Leaving at once could take the server's answer unacknowledged with us, and the
            // server would retransmit it to nobody: stay a moment (bounded, nothing to wait for).
            deadline_ = now + std::min(linger_ns, timeout_ns(s_));
            go(state::linger);
            break;
        default:
            unexpected();
    }
}

void client_role::finish_size(std::uint64_t now) {
    sd_.verify_region(server_sent_);
    const size_run& r = sd_.run();
    note_verify(r.verify.checked + result_.v[3], r.verify.failures + result_.v[4],
                r.verify.failures ? r.verify.first : result_.text);
    ctrl_msg rep = message(ctrl_kind::report);
    rep.v[1] = r.size;
    if (is_bw(s_.test)) {
        const side::bw_figures f = sd_.bw();
        const double secs = static_cast<double>(f.elapsed_ns) / 1e9;
        double avg = secs > 0 ? static_cast<double>(f.completed * r.size) / secs : 0;
        double rate = secs > 0 ? static_cast<double>(f.completed) / secs : 0;
        double peak = std::max(f.peak_bps, avg);
        if (s_.bidirectional) {  // perftest reports the sum of both directions
            const double ssecs = static_cast<double>(result_.v[1]) / 1e9;
            const double savg = ssecs > 0 ? static_cast<double>(result_.v[0] * r.size) / ssecs : 0;
            avg += savg;
            rate += ssecs > 0 ? static_cast<double>(result_.v[0]) / ssecs : 0;
            peak += std::max(real(result_.v[2]), savg);
        }
        rep.v[0] = report_bw;
        rep.v[2] = f.completed;
        rep.v[3] = bits(peak);
        rep.v[4] = bits(avg);
        rep.v[5] = bits(rate);
    } else {
        const lat_row row = lat_stats(r.size, sd_.samples());
        rep.v[0] = report_lat;
        rep.v[2] = r.completed;
        const double vals[] = {row.t_min,   row.t_max, row.t_typical, row.t_avg,
                               row.t_stdev, row.p99,   row.p999};
        for (std::size_t i = 0; i < 7; ++i)
            rep.v[3 + i] = bits(vals[i]);
    }
    rep.v[10] = verify_checked_;
    rep.v[11] = verify_failures_;
    rep.text = verify_first_.substr(0, ctrl_msg::text_max);
    print_row_from(rep);
    send(rep);
    expect_answer(now, "the answer to REPORT");
    go(state::wait_report_ack);
}

// ---- server ----

server_role::server_role(side& sd, const settings& s, run_info info, address_vector& av)
    : role_base(sd, s, std::move(info)), av_(av) {}

void server_role::interrupt() {
    interrupt_pending_ = true;
}

// Ctrl-C: tell the client (ABORT) and stop once it has the message, or after a moment.
void server_role::abort_run(std::uint64_t now) {
    if (!bound_ || closing_) return fail("interrupted");
    if (abort_by_ == 0) {
        ctrl_msg m = message(ctrl_kind::abort);
        m.text = "the server was interrupted (Ctrl-C)";
        abort_sent_ = !sd_.send_ctrl(m);
        abort_by_ = now + linger_ns;
        deadline_ = abort_by_;
    }
    sd_.poll();
    if (!abort_sent_ || sd_.ctrl_sends_idle() || now >= abort_by_ || !sd_.error().empty())
        fail("interrupted");
}

void server_role::step(std::uint64_t now) {
    if (finished()) return;
    // Not even polled: a memif peer that disconnects while this side is inside a receive or
    // transmit burst can crash it (DPDK 22.11's memif unmaps the rings from its control thread
    // without a lock against the data path), so the side that closes last stays out of the
    // port while the other closes.
    if (unsignaled_until_ != 0) {
        if (now >= unsignaled_until_) done_ = true;
        return;
    }
    if (interrupt_pending_) return abort_run(now);
    step_once(now);
    tell_peer_about_failure(bound_);
}

void server_role::step_once(std::uint64_t now) {
    if (const auto ec = sd_.post_ctrl_recv())
        return fail("cannot post a control receive: " + ec.message());
    sd_.poll();
    if (!sd_.error().empty()) return fail(sd_.error());
    // Answers to HELLOs that named an address where nobody answers: those HELLOs lapse.
    while (const auto to = sd_.take_undelivered_ctrl()) {
        const auto gone = std::erase_if(offers_, [&](const offer& o) { return o.peer == *to; });
        sd_.ctrl_counts().hellos_lapsed += gone;
    }
    while (auto a = sd_.take_ctrl()) {
        on_arrival(*a, now);
        if (finished()) return;
    }
    if (!bound_) {
        // Someone's HELLO that was not ours to take: say why once, as the client cannot hear.
        if (!noted_malformed_ && !sd_.first_malformed_ctrl().empty()) {
            noted_malformed_ = true;
            out_ += " Ignored a control message: " + sd_.first_malformed_ctrl() + "\n";
        }
        return forget_offers(now);
    }
    if (stop_ack_due_) {
        if (sd_.initiator_done()) {
            stop_ack_due_ = false;
            ctrl_msg m = message(ctrl_kind::stop_ack);
            m.v[0] = sd_.sent_count();
            m.v[1] = drain_for_client_;
            send(m);
            expect_answer(now, "DRAIN");
        } else if (sd_.activity() != last_activity_) {
            // Our own operations still complete: the client's transport is there.
            last_activity_ = sd_.activity();
            deadline_ = now + timeout_ns(s_);
        }
    }
    if (result_due_ && sd_.drained()) {
        result_due_ = false;
        sd_.verify_region(client_sent_);
        const size_run& r = sd_.run();
        const side::bw_figures f = sd_.bw();
        ctrl_msg m = message(ctrl_kind::result);
        m.v[0] = f.completed;
        m.v[1] = f.elapsed_ns;
        m.v[2] = bits(f.peak_bps);
        m.v[3] = r.verify.checked;
        m.v[4] = r.verify.failures;
        m.text = r.verify.first.substr(0, ctrl_msg::text_max);
        send(m);
        expect_answer(now, "REPORT");
    }
    if (closing_ && (sd_.ctrl_sends_idle() || now >= close_by_)) {
        // The client lingers linger_ns after our answer, then closes: wait out twice that.
        unsignaled_until_ = now + std::min(2 * linger_ns, timeout_ns(s_));
        deadline_ = unsignaled_until_;
        return;
    }
    // Bound: every wait has a deadline (an answer due, KEEPALIVEs while the client measures,
    // our own operations progressing), so a client gone at any point ends the run.
    if (!finished() && !closing_) timed_out(now);
}

void server_role::on_arrival(const ctrl_arrival& a, std::uint64_t now) {
    if (!bound_) return before_binding(a, now);
    // The run has its client: a HELLO from anyone, even from the client's address, is stale.
    if (a.msg.kind == ctrl_kind::hello) {
        ++sd_.ctrl_counts().replayed_hello;
        return;
    }
    if (from_peer(a)) on_message(a.msg, now);
}

// No client yet: HELLOs are answered; anything else must come from an answered HELLO's address
// with its nonce, and the first START (or ABORT) of one binds the server to it.
void server_role::before_binding(const ctrl_arrival& a, std::uint64_t now) {
    const ctrl_msg& m = a.msg;
    if (m.kind == ctrl_kind::hello) return on_hello(a, now);
    ctrl_counters& c = sd_.ctrl_counts();
    const auto o = std::find_if(offers_.begin(), offers_.end(), [&](const offer& x) {
        return x.peer == a.from && x.nonce == m.nonce;
    });
    if (o == offers_.end()) {
        const bool known = std::any_of(offers_.begin(), offers_.end(),
                                       [&](const offer& x) { return x.peer == a.from; });
        ++(known ? c.bad_nonce : c.from_stranger);
        return;
    }
    if (m.kind == ctrl_kind::start && o->refused.empty()) {
        const offer taken = *o;
        bind(taken);
        return on_message(m, now);
    }
    if (m.kind == ctrl_kind::abort) {
        // A client that answered back from its address: the run was its, and it ended it.
        const offer taken = *o;
        bind(taken);
        abort_sent_ = true;  // it is gone: nothing to tell it
        if (!taken.refused.empty())
            return fail("refused the client at " + info_.remote + ": " + taken.refused);
        return fail("the client stopped the run: " + m.text);
    }
    // That client does not follow the exchange: forget its HELLO.
    offers_.erase(o);
    ++c.hellos_lapsed;
}

void server_role::on_hello(const ctrl_arrival& a, std::uint64_t now) {
    ctrl_counters& c = sd_.ctrl_counts();
    std::string why;
    const auto h = read_hello(a.msg, why);
    if (!h) {
        ++c.malformed;
        if (!noted_malformed_) {
            noted_malformed_ = true;
            out_ += " Ignored a HELLO: " + why + "\n";
        }
        return;
    }
    // A sender we know (an address we answered before) naming another address is not the
    // client it claims to be.
    if (a.from != any_peer) {
        const auto sender = av_.lookup(a.from);
        if (!sender || sender->ip != h->client.ip) {
            ++c.from_stranger;
            return;
        }
    }
    for (const offer& o : offers_) {
        if (o.nonce == a.msg.nonce && o.hello.client == h->client) {
            ++c.replayed_hello;  // answered already
            return;
        }
    }
    auto peer = av_.insert(h->client);
    if (!peer) {  // the address vector is full: nobody new can be answered
        ++c.hellos_lapsed;
        return;
    }
    offer o{*peer, *h, a.msg.nonce, compare_settings(h->s, s_), now + timeout_ns(s_)};
    if (o.refused.empty() && h->region_bytes < region_bytes_for(s_))
        o.refused = "the client's region is smaller than the run needs";
    ctrl_msg ack;
    ack.kind = ctrl_kind::hello_ack;
    ack.nonce = o.nonce;
    if (!o.refused.empty()) {
        ack.v[0] = 1;
        ack.text = o.refused.substr(0, ctrl_msg::text_max);
    } else {
        ack.v[1] = sd_.region_key();
        ack.v[2] = sd_.region_size();
    }
    // Not even answered (every control send slot busy, a flood of HELLOs): this one lapses.
    if (sd_.send_ctrl_to(o.peer, ack)) {
        ++c.hellos_lapsed;
        return;
    }
    if (!o.refused.empty()) ++c.hellos_refused;
    if (offers_.size() == max_offers) {
        offers_.erase(offers_.begin());
        ++c.hellos_lapsed;
    }
    offers_.push_back(std::move(o));
    wake_at_ = std::min(wake_at_, offers_.back().lapses_at);
}

void server_role::bind(const offer& o) {
    bound_ = true;
    nonce_ = o.nonce;
    sd_.set_peer(o.peer, o.hello.key, o.hello.region_bytes);
    info_.remote = to_string(o.hello.client);
    info_.remote_key = o.hello.key;
    offers_.clear();  // the other HELLOs' clients will find the server taken
    wake_at_ = no_deadline;
    if (o.refused.empty()) print_header();
}

// HELLOs answered whose client did not answer back within --timeout: the server waits on.
void server_role::forget_offers(std::uint64_t now) {
    const auto lapsed = std::erase_if(offers_, [&](const offer& o) { return o.lapses_at <= now; });
    sd_.ctrl_counts().hellos_lapsed += lapsed;
    wake_at_ = no_deadline;
    for (const offer& o : offers_)
        wake_at_ = std::min(wake_at_, o.lapses_at);
}

void server_role::on_message(const ctrl_msg& m, std::uint64_t now) {
    if (m.kind == ctrl_kind::abort) {
        abort_sent_ = true;  // the client told us: nothing to tell it back
        return fail("the client stopped the run: " + m.text);
    }
    if (m.kind == ctrl_kind::keepalive) {
        // The client measures and is alive. One that comes late (RUD does not keep the order of
        // messages in flight together) may follow STOP: it then says nothing new.
        if (running_) deadline_ = now + timeout_ns(s_);
        return;
    }
    deadline_ = no_deadline;
    switch (m.kind) {
        case ctrl_kind::start:
            return on_start(m, now);
        case ctrl_kind::stop:
            running_ = false;
            client_sent_ = m.v[0];
            sd_.stop_initiator();
            drain_for_client_ = sd_.peer_sent(client_sent_);
            stop_ack_due_ = true;
            last_activity_ = sd_.activity();
            expect_answer(now, "our own operations to complete after STOP");
            break;
        case ctrl_kind::drain:
            if (!sd_.owe_drain(m.v[0]))
                return fail("DRAIN asks for " + std::to_string(m.v[0]) +
                            " drain messages, more than the depth");
            result_due_ = true;
            expect_answer(now, "the client's drain messages");
            break;
        case ctrl_kind::report:
            print_row_from(m);
            verify_checked_ = m.v[10];
            verify_failures_ = m.v[11];
            verify_first_ = m.text;
            send(message(ctrl_kind::ack));
            expect_answer(now, "START or BYE");
            break;
        case ctrl_kind::bye:
            send(message(ctrl_kind::ack));
            closing_ = true;
            close_by_ = now + timeout_ns(s_);
            deadline_ = close_by_;
            break;
        default:
            fail("unexpected " + std::string(name_of(m.kind)) + " from the client");
    }
}

void server_role::on_start(const ctrl_msg& m, std::uint64_t now) {
    const auto sizes = s_.sizes();
    if (m.v[0] >= sizes.size() || sizes[m.v[0]] != m.v[1])
        return fail("START for size " + std::to_string(m.v[1]) + " that the settings do not have");
    const bool lat = !is_bw(s_.test);
    const bool responder = s_.test == test_kind::send_lat || s_.test == test_kind::write_lat;
    sd_.begin(m.v[1], s_.bidirectional && !lat, is_send(s_.test), responder);
    stop_ack_due_ = result_due_ = false;
    running_ = true;
    send(message(ctrl_kind::ready));
    // Writes, reads and atomics never reach this side's application: KEEPALIVEs say the client
    // is still there, so a client gone mid-run ends the run within --timeout.
    expect_answer(now, "STOP or KEEPALIVE while the client measures");
}

}  // namespace uet::perf
