// The server role of uet-itest-api-peer: per phase, registers a write target, a read source and
// an atomic word block, posts the receives of the plan, answers every hello with the memory
// keys, checks every message and (at "done") every byte the client wrote and every atomic word,
// and answers with a verdict. With --fault it instead takes a flood of sends until it is killed.
#include <fstream>
#include <map>
#include <set>

#include "api_peer.hpp"

namespace itest_api {

namespace {

enum kind : std::uint32_t {
    k_hello = 1,
    k_welcome,
    k_done,
    k_verdict,
    k_bye,
    k_recv,
    k_trecv,
    k_flood,
};

constexpr std::size_t flood_size = 32u << 10;
constexpr std::size_t flood_region = 256u << 10;

class server_phase {
  public:
    server_phase(side& s, const phase_plan& p) : s_(s), p_(p) {}
    bool run();

  private:
    bool setup();
    bool post_receives();
    bool handle(const uet::completion& c);
    void on_recv(const uet::completion& c, bool tagged);
    void on_remote_write(const uet::completion& c);
    bool on_done(const uet::completion& c);
    bool check_regions(std::string& why);
    bool post(std::error_code ec, const char* what);
    bool flood();

    side& s_;
    const phase_plan& p_;
    bool reliable() const { return p_.mode != uet::delivery::uud; }
    std::vector<std::byte> wregion_, rregion_;
    std::uint64_t atomics_[8] = {};
    uet::memory_region wmr_, rmr_, amr_;
    std::vector<std::vector<std::byte>> recv_bufs_, trecv_bufs_;
    std::vector<std::byte> hello_in_ = std::vector<std::byte>(64),
                           bye_in_ = std::vector<std::byte>(64);
    done_msg done_in_{};
    welcome_msg welcome_{};
    verdict_msg verdict_{};
    std::set<std::uint64_t> seen_;  // seeds of messages received
    std::uint64_t sends_ok_ = 0, tagged_ok_ = 0, write_data_ok_ = 0, bad_ = 0;
    std::string first_error_;
    bool verdict_sent_ = false, finished_ = false;
    clock::time_point linger_until_{};
};

bool server_phase::post(std::error_code ec, const char* what) {
    if (!ec) return true;
    s_.say("FAIL posting %s: %s", what, ec.message().c_str());
    return false;
}

bool server_phase::setup() {
    const std::uint32_t job = s_.o.job + p_.phase;
    if (!s_.open_endpoint(p_, job)) return false;
    welcome_.magic = magic;
    welcome_.phase = p_.phase;
    welcome_.mode = static_cast<std::uint32_t>(p_.mode);
    if (!reliable()) return true;
    wregion_.assign(s_.o.fault ? flood_region : p_.region_bytes, std::byte{0});
    rregion_.assign(p_.region_bytes, std::byte{0});
    for (const item& r : p_.reads)
        fill(std::span<std::byte>(rregion_).subspan(r.offset, r.size), r.seed);
    using uet::access;
    wmr_ = s_.dom.register_memory(wregion_, access::remote_write, job).value();
    rmr_ = s_.dom.register_memory(rregion_, access::remote_read, job).value();
    amr_ =
        s_.dom.register_memory(bytes_of(atomics_), access::remote_atomic | access::remote_read, job)
            .value();
    welcome_.write_key = wmr_.key();
    welcome_.read_key = rmr_.key();
    welcome_.atomic_key = amr_.key();
    return true;
}

bool server_phase::post_receives() {
    const std::uint32_t ph = p_.phase;
    auto& ep = s_.ep;
    if (!post(ep.trecv(hello_in_, ctl_tag(ctl::hello, ph), 0, ctx(k_hello, 0)), "hello") ||
        !post(ep.trecv(bytes_of(done_in_), ctl_tag(ctl::done, ph), 0, ctx(k_done, 0)), "done") ||
        !post(ep.trecv(bye_in_, ctl_tag(ctl::bye, ph), 0, ctx(k_bye, 0)), "bye"))
        return false;
    if (s_.o.fault) return true;
    for (std::size_t i = 0; i < p_.sends.size(); ++i) {
        recv_bufs_.emplace_back(p_.sends[i].size);
        if (!post(ep.recv(recv_bufs_.back(), ctx(k_recv, static_cast<std::uint32_t>(i))), "recv"))
            return false;
    }
    for (std::size_t i = 0; i < p_.tagged.size(); ++i) {
        trecv_bufs_.emplace_back(p_.tagged[i].size);
        const bool exact = i % 2 == 0;
        const std::uint64_t tag = exact ? exact_tag_base | (std::uint64_t{ph} << 16) | i
                                        : wild_tag_base | (std::uint64_t{ph} << 16);
        if (!post(ep.trecv(trecv_bufs_.back(), tag, exact ? 0 : wild_ignore,
                           ctx(k_trecv, static_cast<std::uint32_t>(i))),
                  "trecv"))
            return false;
    }
    return true;
}

void server_phase::on_recv(const uet::completion& c, bool tagged) {
    const std::uint32_t i = ctx_index(c.context);
    const auto& items = tagged ? p_.tagged : p_.sends;
    auto& bufs = tagged ? trecv_bufs_ : recv_bufs_;
    auto fail = [&](const std::string& why) {
        ++bad_;
        if (first_error_.empty()) first_error_ = why;
        s_.say("FAIL %s", why.c_str());
    };
    if (i >= items.size()) return fail("completion of an unknown receive");
    const auto seed = check(std::span<const std::byte>(bufs[i]).first(c.len));
    if (!seed || c.len != items[i].size)
        return fail((tagged ? "tagged message " : "message ") + std::to_string(i) +
                    ": bytes differ from the sender's pattern (len " + std::to_string(c.len) + ")");
    if (!seen_.insert(*seed).second) return fail("a message arrived twice");
    // Which item the bytes say they are: ROD must match in sending order; tags must agree.
    std::size_t j = items.size();
    for (std::size_t k = 0; k < items.size(); ++k)
        if (items[k].seed == *seed) j = k;
    if (j == items.size()) return fail("a message of another phase or kind");
    if (!tagged && p_.mode == uet::delivery::rod && j != i)
        return fail("ROD: receive " + std::to_string(i) + " matched message " + std::to_string(j));
    if (tagged && c.tag != ((j % 2 == 0 ? exact_tag_base : wild_tag_base) |
                            (std::uint64_t{p_.phase} << 16) | j))
        return fail("tagged message " + std::to_string(j) + " carries the wrong tag");
    if (tagged && (i % 2) != (j % 2)) return fail("an exact tag matched a wildcard receive");
    ++(tagged ? tagged_ok_ : sends_ok_);
}

void server_phase::on_remote_write(const uet::completion& c) {
    for (std::size_t j = 0; j < p_.write_data.size(); ++j) {
        if (c.data == p_.write_data[j].seed && c.len == p_.write_data[j].size) {
            ++write_data_ok_;
            return;
        }
    }
    ++bad_;
    s_.say("FAIL remote write data %llx (len %zu) matches no write_data",
           (unsigned long long)c.data, c.len);
}

bool server_phase::check_regions(std::string& why) {
    for (const auto* v : {&p_.writes, &p_.write_data}) {
        for (const item& w : *v) {
            const auto seed = check(std::span<const std::byte>(wregion_).subspan(w.offset, w.size));
            if (!seed || *seed != w.seed) {
                why = "written bytes at offset " + std::to_string(w.offset) + " (" +
                      size_name(w.size) + ") differ";
                return false;
            }
        }
    }
    if (atomics_[0] != done_in_.sum || atomics_[1] != done_in_.swapped ||
        atomics_[2] != done_in_.xored) {
        why = "atomic words differ from what the client's completions say";
        return false;
    }
    return true;
}

bool server_phase::on_done(const uet::completion& c) {
    if (c.error || done_in_.magic != magic || done_in_.phase != p_.phase) {
        s_.say("FAIL a bad done message");
        return false;
    }
    std::string why = first_error_;
    const std::uint64_t expected = p_.sends.size() + p_.tagged.size();
    const std::uint64_t received = sends_ok_ + tagged_ok_;
    bool ok = bad_ == 0 && done_in_.failures == 0;
    if (reliable()) {
        ok = ok && received == expected && write_data_ok_ == p_.write_data.size();
        if (ok && !check_regions(why)) ok = false;
        if (received != expected) why = "messages missing";
    } else {
        ok = ok && received > 0;  // datagrams: some may be lost, none may be wrong
    }
    if (expected > 0)
        s_.say("%s recv %zu sends, %zu tagged (exact + wildcard): %llu/%llu verified%s", p_.name,
               p_.sends.size(), p_.tagged.size(), (unsigned long long)received,
               (unsigned long long)expected, reliable() ? "" : " (datagrams)");
    if (reliable()) {
        s_.say("%s write %zu + write_data %zu: target bytes %s, %llu/%zu remote CQ data", p_.name,
               p_.writes.size(), p_.write_data.size(), why.empty() ? "verified" : "WRONG",
               (unsigned long long)write_data_ok_, p_.write_data.size());
        s_.say("%s atomics: sum=%llu cas=%llx xor=%llx %s", p_.name,
               (unsigned long long)atomics_[0], (unsigned long long)atomics_[1],
               (unsigned long long)atomics_[2],
               atomics_[0] == done_in_.sum ? "as expected" : "WRONG");
    }
    verdict_ = verdict_msg{};
    verdict_.magic = magic;
    verdict_.phase = p_.phase;
    verdict_.ok = ok ? 1 : 0;
    verdict_.received = received;
    verdict_.expected = expected;
    std::snprintf(verdict_.text, sizeof verdict_.text, "%s", ok ? "verified" : why.c_str());
    s_.say("VERDICT %s %s", p_.name, ok ? "ok" : "FAIL");
    if (!post(s_.ep.tsend(s_.peer, bytes_of(verdict_), ctl_tag(ctl::verdict, p_.phase),
                          ctx(k_verdict, 0)),
              "verdict"))
        return false;
    verdict_sent_ = true;
    if (!reliable())
        return post(
                   s_.ep.trecv(bytes_of(done_in_), ctl_tag(ctl::done, p_.phase), 0, ctx(k_done, 0)),
                   "done") &&
               ok;
    return ok;
}

// One completion; false on a failure that ends the phase.
bool server_phase::handle(const uet::completion& c) {
    if (uet::has(c.flags, uet::completion_flags::remote_cq_data)) {
        on_remote_write(c);
        return true;
    }
    const std::uint32_t kind = ctx_kind(c.context);
    switch (kind) {
        case k_hello: {
            if (c.error) return post(c.error, "hello (receive failed)");
            hello_msg h{};
            std::memcpy(&h, hello_in_.data(), sizeof h);
            welcome_.hello_attempt = h.attempt;
            if (!post(s_.ep.tsend(s_.peer, bytes_of(welcome_), ctl_tag(ctl::welcome, p_.phase),
                                  ctx(k_welcome, 0)),
                      "welcome"))
                return false;
            return post(s_.ep.trecv(hello_in_, ctl_tag(ctl::hello, p_.phase), 0, ctx(k_hello, 0)),
                        "hello");
        }
        case k_welcome:
            // A welcome the client did not take (it had moved on) is not our failure.
            if (c.error) s_.say("welcome not delivered: %s", c.error.message().c_str());
            return true;
        case k_recv:
        case k_trecv:
            if (c.error) {
                s_.say("FAIL receive: %s (%.*s)", c.error.message().c_str(), (int)c.detail.size(),
                       c.detail.data());
                return false;
            }
            on_recv(c, kind == k_trecv);
            return true;
        case k_done:
            return on_done(c);
        case k_verdict:
            if (c.error) s_.say("verdict not acknowledged: %s", c.error.message().c_str());
            if (reliable())
                finished_ = true;
            else
                linger_until_ = clock::now() + std::chrono::milliseconds(1500);
            return true;
        case k_bye:
            finished_ = verdict_sent_;
            return true;
        default:
            s_.say("FAIL completion of unknown context %u (%s)", kind, c.error.message().c_str());
            return false;
    }
}

// --fault: sends and writes until the process is killed.
bool server_phase::flood() {
    std::vector<std::vector<std::byte>> bufs(64, std::vector<std::byte>(flood_size));
    for (std::uint32_t i = 0; i < bufs.size(); ++i)
        if (!post(s_.ep.recv(bufs[i], ctx(k_flood, i)), "flood recv")) return false;
    std::uint64_t got = 0;
    while (!s_.expired()) {
        auto c = s_.next(std::chrono::milliseconds(100));
        if (!c) continue;
        if (ctx_kind(c->context) == k_hello) {
            if (!handle(*c)) return false;
            continue;
        }
        if (ctx_kind(c->context) != k_flood) continue;
        const std::uint32_t i = ctx_index(c->context);
        if (c->error || !check(std::span<const std::byte>(bufs[i]).first(c->len))) {
            s_.say("FAIL flood message %llu is wrong", (unsigned long long)got);
            return false;
        }
        if (++got == s_.o.progress_after && !s_.o.progress_file.empty()) {
            s_.say("FLOOD received %llu messages", (unsigned long long)got);
            std::ofstream(s_.o.progress_file) << got << "\n";
        }
        if (!post(s_.ep.recv(bufs[i], ctx(k_flood, i)), "flood recv")) return false;
    }
    s_.say("FAIL timed out after %u s in the flood, waiting to be killed", s_.o.timeout_s);
    return false;
}

bool server_phase::run() {
    s_.arm();
    if (!setup() || !post_receives()) return false;
    s_.say("PHASE %u %s: endpoint open (job %u), waiting for the client", p_.phase, p_.name,
           s_.o.job + p_.phase);
    bool ok = true;
    if (s_.o.fault) {
        ok = flood();
    } else {
        while (ok && !finished_) {
            if (s_.expired()) {
                s_.say("FAIL timed out after %u s waiting for the client's %s (phase %s)",
                       s_.o.timeout_s, verdict_sent_ ? "bye" : "transfers and done", p_.name);
                ok = false;
                break;
            }
            if (linger_until_ != clock::time_point{} && clock::now() >= linger_until_) break;
            if (auto c = s_.next(std::chrono::milliseconds(100))) ok = handle(*c);
        }
    }
    const uet::endpoint_counters ec = s_.ep.counters();
    s_.say(
        "COUNTERS %s pdcs_opened=%llu target_pdcs_opened=%llu pdcs_failed=%llu "
        "retransmits=%llu unanswerable=%llu stale_responses=%llu",
        p_.name, (unsigned long long)ec.pdcs_opened, (unsigned long long)ec.target_pdcs_opened,
        (unsigned long long)ec.pdcs_failed, (unsigned long long)ec.retransmits,
        (unsigned long long)ec.unanswerable, (unsigned long long)ec.stale_responses);
    s_.close_endpoint();
    return ok && verdict_.ok == 1;
}

}  // namespace

int run_server(const options& o) {
    side s(o);
    if (!s.open_fabric()) return 1;
    if (!o.ready_file.empty()) std::ofstream(o.ready_file) << "1\n";
    bool ok = true;
    for (std::uint32_t ph = 0; ok && ph < o.modes.size(); ++ph) {
        const phase_plan p = make_plan(o, ph);
        ok = server_phase(s, p).run();
    }
    s.say_port_counters();
    s.say("RESULT %s", ok ? "ok" : "FAIL");
    return ok ? 0 : 1;
}

}  // namespace itest_api
