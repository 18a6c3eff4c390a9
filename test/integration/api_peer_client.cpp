// The client role of uet-itest-api-peer: per phase, a handshake (hello until the server's
// welcome with its memory keys arrives), then the operation groups one after the other, each
// posted at once and awaited, each checked and reported on one line; then "done" with what the
// atomic words must hold, and the server's verdict. With --fault: a flood of sends and writes
// while the server is killed, every outstanding operation must end in an error completion, and
// then a restarted server must take a full phase.
#include <algorithm>
#include <fstream>
#include <map>

#include "api_peer.hpp"

namespace itest_api {

namespace {

enum kind : std::uint32_t {
    k_hello = 1,
    k_welcome,
    k_done,
    k_verdict,
    k_bye,
    k_op,
};

using ms = std::chrono::milliseconds;

class client_phase {
  public:
    client_phase(side& s, const phase_plan& p) : s_(s), p_(p) {}
    bool run();
    bool open() { return s_.open_endpoint(p_, s_.o.job + p_.phase); }
    bool handshake();
    bool transfers();
    bool finish();
    bool fault_flood();

  private:
    bool reliable() const { return p_.mode != uet::delivery::uud; }
    // Posts op(i) for every i in [0, n) with retries while the queues are full, keeping at
    // most window outstanding; each completion goes to done(i, c). False on a post error or a
    // timeout.
    template <class Post, class Done>
    bool run_ops(const char* what, std::size_t n, std::size_t window, Post post, Done done);
    // A group that stops with operations outstanding: they still read or write its buffers,
    // which go when it returns, so the endpoint (its engine with it) goes first. False.
    bool abandon() {
        s_.close_endpoint();
        return false;
    }
    uet::memory_region register_source(std::span<std::byte> buf);
    bool group_sends(bool tagged);
    bool group_writes();
    bool group_reads();
    bool group_atomics();
    void report(const char* group, const std::vector<item>& items, std::size_t ok,
                clock::time_point start);

    side& s_;
    const phase_plan& p_;
    welcome_msg welcome_{};
    std::vector<hello_msg> hellos_ = std::vector<hello_msg>(256);
    done_msg done_{};
    verdict_msg verdict_{};
    std::uint32_t failures_ = 0, attempts_ = 0;
    std::uint64_t sends_ok_ = 0, tagged_ok_ = 0;
    std::uint64_t sum_ = 0, swapped_ = 0, xored_ = 0;
};

void client_phase::report(const char* group, const std::vector<item>& items, std::size_t ok,
                          clock::time_point start) {
    std::map<std::size_t, int> by_size;
    std::uint64_t bytes = 0;
    for (const item& it : items) {
        ++by_size[it.size];
        bytes += it.size;
    }
    std::string sizes;
    for (const auto& [size, n] : by_size)
        sizes += (sizes.empty() ? "" : ",") + std::to_string(n) + "x" + size_name(size);
    const double secs = std::chrono::duration<double>(clock::now() - start).count();
    s_.say("%s %s %s: %zu/%zu ok, %.1f MiB in %.3f s (%.1f MiB/s)", p_.name, group, sizes.c_str(),
           ok, items.size(), static_cast<double>(bytes) / (1 << 20), secs,
           secs > 0 ? static_cast<double>(bytes) / (1 << 20) / secs : 0.0);
}

template <class Post, class Done>
bool client_phase::run_ops(const char* what, std::size_t n, std::size_t window, Post post,
                           Done done) {
    std::size_t posted = 0, completed = 0;
    while (completed < n) {
        while (posted < n && posted - completed < window) {
            const std::error_code ec = post(posted);
            if (ec == uet::errc::again || ec == uet::errc::cq_full) break;
            if (ec) {
                s_.say("FAIL posting %s %zu: %s", what, posted, ec.message().c_str());
                return abandon();
            }
            ++posted;
        }
        if (s_.expired()) {
            const uet::endpoint_counters ec = s_.ep.counters();
            s_.say(
                "FAIL timed out after %u s waiting for %s completions (%zu/%zu; "
                "stale_responses=%llu unanswerable=%llu retransmits=%llu pdcs_failed=%llu)",
                s_.o.timeout_s, what, completed, n, (unsigned long long)ec.stale_responses,
                (unsigned long long)ec.unanswerable, (unsigned long long)ec.retransmits,
                (unsigned long long)ec.pdcs_failed);
            return abandon();
        }
        auto c = s_.next(ms(100));
        if (!c) continue;
        if (ctx_kind(c->context) != k_op) {
            // Late control traffic (a second welcome): not part of this group.
            continue;
        }
        ++completed;
        if (c->error) {
            ++failures_;
            s_.say("FAIL %s %u: %s (%.*s)", what, ctx_index(c->context), c->error.message().c_str(),
                   (int)c->detail.size(), c->detail.data());
            continue;
        }
        done(ctx_index(c->context), *c);
    }
    return true;
}

bool client_phase::handshake() {
    auto& ep = s_.ep;
    if (auto ec =
            ep.trecv(bytes_of(welcome_), ctl_tag(ctl::welcome, p_.phase), 0, ctx(k_welcome, 0))) {
        s_.say("FAIL posting the welcome receive: %s", ec.message().c_str());
        return false;
    }
    const std::uint32_t first = attempts_;
    std::uint32_t& attempts = attempts_;
    std::uint32_t refused = 0;
    auto next_hello = clock::now();
    while (true) {
        if (clock::now() >= next_hello) {
            hello_msg& h = hellos_[attempts % hellos_.size()];
            h = {magic, p_.phase, attempts};
            if (!ep.tsend(s_.peer, bytes_of(h), ctl_tag(ctl::hello, p_.phase),
                          ctx(k_hello, attempts)))
                ++attempts;
            // Datagrams may be lost, and a reliable hello may land in the server's previous
            // phase (answered BAD_JOB_ID): ask again, sooner after a refusal.
            next_hello = clock::now() + ms(reliable() ? 1000 : 200);
        }
        if (s_.expired()) {
            s_.say(
                "FAIL timed out after %u s waiting for the server's welcome (%u hellos, %u "
                "refused)",
                s_.o.timeout_s, attempts, refused);
            return false;
        }
        auto c = s_.next(ms(20));
        if (!c) continue;
        if (ctx_kind(c->context) == k_hello && c->error) {
            ++refused;
            next_hello = std::min(next_hello, clock::now() + ms(20));
        } else if (ctx_kind(c->context) == k_welcome) {
            if (c->error || welcome_.magic != magic || welcome_.phase != p_.phase) {
                s_.say("FAIL a bad welcome");
                return false;
            }
            if (welcome_.hello_attempt < first) {  // from before: wait for the current one
                if (auto ec = ep.trecv(bytes_of(welcome_), ctl_tag(ctl::welcome, p_.phase), 0,
                                       ctx(k_welcome, 0)))
                    return false;
                continue;
            }
            s_.say("PHASE %u %s: HANDSHAKE after %u hello(s), %u refused (%s)", p_.phase, p_.name,
                   attempts - first, refused,
                   refused ? "the server was not there yet" : "first try");
            return true;
        }
    }
}

// Sources are registered as an RDMA application registers them (local read): the provider
// then sends their large payloads without a copy where the port can (dpdk.zero_copy_min).
uet::memory_region client_phase::register_source(std::span<std::byte> buf) {
    auto mr = s_.dom.register_memory(buf, uet::access::local_read, s_.o.job + p_.phase);
    return mr ? std::move(*mr) : uet::memory_region{};
}

bool client_phase::group_sends(bool tagged) {
    const auto& items = tagged ? p_.tagged : p_.sends;
    if (items.empty()) return true;
    std::vector<std::vector<std::byte>> bufs(items.size());
    std::vector<uet::memory_region> regs(items.size());  // zero-copy sources; go before bufs
    const auto start = clock::now();
    std::size_t ok = 0;
    const bool r = run_ops(
        tagged ? "tsend" : "send", items.size(), reliable() ? 64 : 8,
        [&](std::size_t i) {
            if (bufs[i].empty()) {
                bufs[i] = pattern(items[i].size, items[i].seed);
                regs[i] = register_source(bufs[i]);
            }
            if (!tagged)
                return s_.ep.send(s_.peer, bufs[i], ctx(k_op, static_cast<std::uint32_t>(i)));
            const std::uint64_t tag =
                (i % 2 == 0 ? exact_tag_base : wild_tag_base) | (std::uint64_t{p_.phase} << 16) | i;
            return s_.ep.tsend(s_.peer, bufs[i], tag, ctx(k_op, static_cast<std::uint32_t>(i)));
        },
        [&](std::uint32_t, const uet::completion&) { ++ok; });
    report(tagged ? "tagged send (exact + wildcard)" : "send", items, ok, start);
    (tagged ? tagged_ok_ : sends_ok_) = ok;
    return r && ok == items.size();
}

bool client_phase::group_writes() {
    std::vector<const item*> all;
    for (const item& w : p_.writes)
        all.push_back(&w);
    for (const item& w : p_.write_data)
        all.push_back(&w);
    std::vector<std::vector<std::byte>> bufs(all.size());
    std::vector<uet::memory_region> regs(all.size());  // zero-copy sources; go before bufs
    const auto start = clock::now();
    std::size_t ok = 0;
    const bool r = run_ops(
        "write", all.size(), 16,
        [&](std::size_t i) {
            const item& w = *all[i];
            if (bufs[i].empty()) {
                bufs[i] = pattern(w.size, w.seed);
                regs[i] = register_source(bufs[i]);
            }
            const auto c = ctx(k_op, static_cast<std::uint32_t>(i));
            if (i < p_.writes.size())
                return s_.ep.write(s_.peer, bufs[i], w.offset, welcome_.write_key, c);
            return s_.ep.write_data(s_.peer, bufs[i], w.offset, welcome_.write_key, w.seed, c);
        },
        [&](std::uint32_t, const uet::completion&) { ++ok; });
    std::vector<item> items;
    for (const item* w : all)
        items.push_back(*w);
    report("write + write_data", items, ok, start);
    return r && ok == all.size();
}

bool client_phase::group_reads() {
    std::vector<std::vector<std::byte>> bufs(p_.reads.size());
    const auto start = clock::now();
    std::size_t ok = 0;
    const bool r = run_ops(
        "read", p_.reads.size(), 16,
        [&](std::size_t i) {
            const item& it = p_.reads[i];
            bufs[i].assign(it.size, std::byte{0});
            return s_.ep.read(s_.peer, bufs[i], it.offset, welcome_.read_key,
                              ctx(k_op, static_cast<std::uint32_t>(i)));
        },
        [&](std::uint32_t i, const uet::completion& c) {
            const auto seed = check(bufs[i]);
            if (c.len == p_.reads[i].size && seed && *seed == p_.reads[i].seed) {
                ++ok;
            } else {
                ++failures_;
                s_.say("FAIL read %u: the bytes differ from the server's region", i);
            }
        });
    report("read", p_.reads, ok, start);
    return r && ok == p_.reads.size();
}

bool client_phase::group_atomics() {
    const auto start = clock::now();
    const auto u64 = uet::atomic_type_of<std::uint64_t>;
    std::uint64_t operand = 0, result = 0, compare = 0;
    bool ok = true;
    // fetch_atomic sum, one at a time: each must return the sum of the ones before.
    for (std::uint32_t i = 0; ok && i < p_.fetch_adds; ++i) {
        operand = i + 1;
        ok = run_ops(
                 "fetch_atomic sum", 1, 1,
                 [&](std::size_t) {
                     return s_.ep.fetch_atomic(s_.peer, uet::atomic_op::sum, u64, bytes_of(operand),
                                               bytes_of(result), 0, welcome_.atomic_key,
                                               ctx(k_op, 0));
                 },
                 [&](std::uint32_t, const uet::completion&) {}) &&
             result == sum_;
        if (!ok)
            s_.say("FAIL fetch_atomic sum %u returned %llu, expected %llu", i,
                   (unsigned long long)result, (unsigned long long)sum_);
        sum_ += operand;
    }
    // compare_atomic: swaps when the word holds the compare value, and only then.
    const std::uint64_t x = 0x5eed0000ull | p_.phase, y = 0xbad;
    for (int round = 0; ok && round < 2; ++round) {
        operand = round == 0 ? x : y;
        compare = 0;
        ok = run_ops(
                 "compare_atomic", 1, 1,
                 [&](std::size_t) {
                     return s_.ep.compare_atomic(s_.peer, u64, bytes_of(compare), bytes_of(operand),
                                                 bytes_of(result), 8, welcome_.atomic_key,
                                                 ctx(k_op, 0));
                 },
                 [&](std::uint32_t, const uet::completion&) {}) &&
             result == (round == 0 ? 0 : x);
        if (!ok)
            s_.say("FAIL compare_atomic round %d returned %llx", round, (unsigned long long)result);
    }
    swapped_ = x;
    // Non-fetching bxor, all at once, then a fetching read of the word.
    std::vector<std::uint64_t> operands(p_.xors);
    for (std::uint32_t i = 0; i < p_.xors; ++i) {
        operands[i] = (std::uint64_t{i} * 0x9e3779b97f4a7c15ull) ^ p_.phase;
        xored_ ^= operands[i];
    }
    // roce_rc has neither (RoCE's atomics are fetch-and-add and compare-and-swap): p_.xors is 0.
    if (p_.xors != 0) {
        ok = ok && run_ops(
                       "atomic bxor", operands.size(), operands.size(),
                       [&](std::size_t i) {
                           return s_.ep.atomic(s_.peer, uet::atomic_op::bxor, u64,
                                               bytes_of(operands[i]), 16, welcome_.atomic_key,
                                               ctx(k_op, static_cast<std::uint32_t>(i)));
                       },
                       [&](std::uint32_t, const uet::completion&) {});
        ok = ok && run_ops(
                       "fetch_atomic read", 1, 1,
                       [&](std::size_t) {
                           return s_.ep.fetch_atomic(s_.peer, uet::atomic_op::read, u64,
                                                     bytes_of(operand), bytes_of(result), 16,
                                                     welcome_.atomic_key, ctx(k_op, 0));
                       },
                       [&](std::uint32_t, const uet::completion&) {});
    } else {
        result = xored_;  // the word at 16 stays 0, which the server checks
    }
    if (ok && result != xored_) {
        s_.say("FAIL the bxor word reads %llx, expected %llx", (unsigned long long)result,
               (unsigned long long)xored_);
        ok = false;
    }
    const double secs = std::chrono::duration<double>(clock::now() - start).count();
    s_.say(
        "%s atomics u64: %u fetch_atomic sum, 2 compare_atomic, %u atomic bxor + fetch read: "
        "%s in %.3f s",
        p_.name, p_.fetch_adds, p_.xors, ok ? "ok" : "FAIL", secs);
    if (!ok) ++failures_;
    return ok;
}

bool client_phase::transfers() {
    // Both message groups run even if the first failed: each reports its own line.
    const bool sends = group_sends(false);
    bool ok = group_sends(true) && sends;
    if (reliable()) ok = group_writes() && group_reads() && group_atomics() && ok;
    return ok;
}

// "done" with what the atomic words must hold; the server answers with its verdict. Datagrams
// may be lost: then done goes again until a verdict comes.
bool client_phase::finish() {
    done_ = done_msg{magic, p_.phase, failures_, sum_, swapped_, xored_, sends_ok_, tagged_ok_};
    auto& ep = s_.ep;
    if (auto ec =
            ep.trecv(bytes_of(verdict_), ctl_tag(ctl::verdict, p_.phase), 0, ctx(k_verdict, 0))) {
        s_.say("FAIL posting the verdict receive: %s", ec.message().c_str());
        return false;
    }
    bool got = false;
    while (!got) {
        if (auto ec =
                ep.tsend(s_.peer, bytes_of(done_), ctl_tag(ctl::done, p_.phase), ctx(k_done, 0))) {
            s_.say("FAIL sending done: %s", ec.message().c_str());
            return false;
        }
        const auto resend = clock::now() + ms(reliable() ? 60'000 : 300);
        while (!got && clock::now() < resend) {
            if (s_.expired()) {
                s_.say("FAIL timed out after %u s waiting for the server's verdict",
                       s_.o.timeout_s);
                return false;
            }
            auto c = s_.next(ms(50));
            if (!c) continue;
            if (ctx_kind(c->context) == k_done && c->error) {
                s_.say("FAIL done not delivered: %s", c->error.message().c_str());
                return false;
            }
            got = ctx_kind(c->context) == k_verdict && !c->error;
        }
    }
    s_.say("VERDICT %s from the server: %s (%llu/%llu messages)", p_.name,
           verdict_.ok ? "ok" : "FAIL", (unsigned long long)verdict_.received,
           (unsigned long long)verdict_.expected);
    if (!reliable()) {
        static const std::uint64_t bye = magic;
        for (int i = 0; i < 3; ++i)
            (void)ep.tsend(s_.peer, bytes_of(bye), ctl_tag(ctl::bye, p_.phase), ctx(k_bye, i));
    }
    // Let the acknowledgement of the verdict (and the byes) leave before the endpoint closes;
    // were it lost, the server would only wait for its retry limit.
    for (int i = 0; i < 2000; ++i)
        s_.fab.progress();
    return verdict_.ok == 1 && failures_ == 0;
}

bool client_phase::run() {
    s_.arm();
    const bool ok = open() && handshake() && transfers() && finish();
    s_.close_endpoint();
    return ok;
}

// --fault: sends and writes until the server dies; every outstanding operation must complete
// with retry_limit or peer_unreachable (bounded by --timeout), none may hang.
bool client_phase::fault_flood() {
    constexpr std::size_t send_size = 32u << 10, write_size = 256u << 10;
    const auto src = pattern(write_size, make_seed(p_.phase, 'f', 0));
    const auto msg = pattern(send_size, make_seed(p_.phase, 'f', 1));
    std::size_t outstanding = 0, ok = 0, retry_limit = 0, unreachable = 0, other = 0, posted = 0;
    bool stop = false;
    const auto start = clock::now();
    while (!stop || outstanding > 0) {
        while (!stop && outstanding < 24) {
            const bool write = posted % 4 == 3;
            const std::error_code ec =
                write ? s_.ep.write(s_.peer, src, 0, welcome_.write_key, ctx(k_op, 1))
                      : s_.ep.send(s_.peer, msg, ctx(k_op, 0));
            if (ec) break;
            ++posted;
            ++outstanding;
        }
        if (s_.expired()) {
            s_.say(
                "FAIL timed out after %u s: %zu operations still outstanding after the server "
                "died",
                s_.o.timeout_s, outstanding);
            return false;
        }
        auto c = s_.next(ms(100));
        if (!c || ctx_kind(c->context) != k_op) continue;
        --outstanding;
        if (!c->error) {
            ++ok;
            continue;
        }
        if (!stop)
            s_.say("FAULT first error after %zu operations: %s", posted,
                   c->error.message().c_str());
        stop = true;
        if (c->error == uet::errc::retry_limit)
            ++retry_limit;
        else if (c->error == uet::errc::peer_unreachable)
            ++unreachable;
        else
            ++other;
    }
    const double secs = std::chrono::duration<double>(clock::now() - start).count();
    s_.say(
        "FAULT completed %zu/%zu: ok=%zu retry_limit=%zu peer_unreachable=%zu other=%zu "
        "(%.3f s)",
        ok + retry_limit + unreachable + other, posted, ok, retry_limit, unreachable, other, secs);
    return retry_limit + unreachable > 0 && other == 0;
}

}  // namespace

int run_client(const options& o) {
    side s(o);
    if (!s.open_fabric()) return 1;
    if (!o.ready_file.empty()) std::ofstream(o.ready_file) << "1\n";
    bool ok = true;
    if (o.fault) {
        // Phase 0 twice on one endpoint: the flood into the server that is killed, then the full
        // phase with the restarted server (the same address, a new engine: new PDCs).
        const phase_plan p = make_plan(o, 0);
        client_phase c(s, p);
        s.arm();
        ok = c.open() && c.handshake() && c.fault_flood();
        if (ok) {
            s.say("waiting for the restarted server");
            s.arm();
            ok = c.handshake() && c.transfers() && c.finish();
        }
        const uet::endpoint_counters ec = s.ep.counters();
        s.say(
            "COUNTERS pdcs_opened=%llu pdcs_failed=%llu target_pdcs_opened=%llu "
            "retransmits=%llu",
            (unsigned long long)ec.pdcs_opened, (unsigned long long)ec.pdcs_failed,
            (unsigned long long)ec.target_pdcs_opened, (unsigned long long)ec.retransmits);
        s.close_endpoint();
    } else {
        for (std::uint32_t ph = 0; ok && ph < o.modes.size(); ++ph) {
            const phase_plan p = make_plan(o, ph);
            ok = client_phase(s, p).run();
        }
    }
    s.say_port_counters();
    s.say("RESULT %s", ok ? "ok" : "FAIL");
    return ok ? 0 : 1;
}

}  // namespace itest_api
