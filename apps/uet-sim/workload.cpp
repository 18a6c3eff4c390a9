#include "workload.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "core/rng.hpp"

namespace uet::simcli {

namespace {

std::vector<std::string_view> words(std::string_view line) {
    std::vector<std::string_view> w;
    std::size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r'))
            ++i;
        const std::size_t b = i;
        while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r')
            ++i;
        if (i > b) w.push_back(line.substr(b, i - b));
    }
    return w;
}

// The next line with words (a '#' starts a comment) into w, its number in `line`; false at the
// end. w points into text.
bool next_words(std::istream& in, std::string& text, std::size_t& line,
                std::vector<std::string_view>& w) {
    while (std::getline(in, text)) {
        ++line;
        std::string_view l = text;
        if (const std::size_t hash = l.find('#'); hash != l.npos) l = l.substr(0, hash);
        w = words(l);
        if (!w.empty()) return true;
    }
    return false;
}

class matrix_reader {
  public:
    matrix_reader(const std::string& name, std::uint32_t hosts) : name_(name), hosts_(hosts) {}

    [[noreturn]] void fail(const std::string& why) const {
        throw usage_error("--matrix: " + name_ + ":" + std::to_string(line_) + ": " + why);
    }

    std::uint32_t host(std::string_view w) const {
        std::uint32_t h = 0;
        const auto [p, ec] = std::from_chars(w.data(), w.data() + w.size(), h);
        if (ec != std::errc{} || p != w.data() + w.size())
            fail("'" + std::string(w) + "' is not a host number");
        if (h >= hosts_)
            fail("host " + std::string(w) + " does not exist (" + std::to_string(hosts_) +
                 " hosts)");
        return h;
    }

    std::uint64_t size(std::string_view w) const {
        const auto b = parse_bytes(w);
        if (!b || *b == 0) fail("'" + std::string(w) + "' is not a size > 0 in bytes");
        return *b;
    }

    flow pair(std::uint32_t src, std::uint32_t dst) const {
        if (src == dst) fail("host " + std::to_string(src) + " sends to itself");
        return {src, dst, 0, 0};
    }

    // "src dst bytes [start]"
    flow plain(const std::vector<std::string_view>& w) const {
        if (w.size() < 3 || w.size() > 4)
            fail("expected 'source destination bytes [start]', got " + std::to_string(w.size()) +
                 " fields");
        flow f = pair(host(w[0]), host(w[1]));
        f.bytes = size(w[2]);
        if (w.size() == 4) {
            const auto t = parse_time_ns(w[3]);
            if (!t) fail("'" + std::string(w[3]) + "' is not a start time");
            f.start_ns = *t;
        }
        return f;
    }

    // "src->dst id I start S size B [prio P]"
    flow htsim(const std::vector<std::string_view>& w) const {
        const std::size_t arrow = w[0].find("->");
        flow f = pair(host(w[0].substr(0, arrow)), host(w[0].substr(arrow + 2)));
        bool has_start = false;
        for (std::size_t i = 1; i < w.size(); i += 2) {
            if (i + 1 >= w.size()) fail("'" + std::string(w[i]) + "' has no value");
            const std::string_view key = w[i], v = w[i + 1];
            if (key == "start") {
                // htsim takes the start in microseconds.
                const auto t = parse_time_ns(std::string(v) + "us");
                if (!t) fail("'" + std::string(v) + "' is not a start time (us)");
                f.start_ns = *t;
                has_start = true;
            } else if (key == "size") {
                f.bytes = size(v);
            } else if (key == "id" || key == "prio") {
                // Flow ids and priorities: nothing here depends on them.
            } else {
                fail("'" + std::string(key) + "' is not supported (id, start, size, prio)");
            }
        }
        if (!has_start) fail("no start");
        if (f.bytes == 0) fail("no size");
        return f;
    }

    std::vector<flow> read(std::istream& in) {
        std::vector<flow> flows;
        std::string text;
        std::optional<std::uint64_t> connections;
        std::vector<std::string_view> w;
        while (next_words(in, text, line_, w)) {
            if (w[0] == "Nodes" || w[0] == "Connections") {
                if (w.size() != 2) fail("expected '" + std::string(w[0]) + " N'");
                std::uint64_t n = 0;
                const auto [p, ec] = std::from_chars(w[1].data(), w[1].data() + w[1].size(), n);
                if (ec != std::errc{} || p != w[1].data() + w[1].size())
                    fail("'" + std::string(w[1]) + "' is not a number");
                if (w[0] == "Nodes" && n > hosts_)
                    fail("Nodes " + std::to_string(n) + ": the fabric has " +
                         std::to_string(hosts_) + " hosts");
                if (w[0] == "Connections") connections = n;
                continue;
            }
            if (w[0] == "Triggers" || w[0] == "Failures" || w[0] == "trigger" || w[0] == "failure")
                fail("htsim " + std::string(w[0]) + " are not supported");
            flows.push_back(w[0].find("->") != w[0].npos ? htsim(w) : plain(w));
        }
        if (in.bad()) fail("read error");
        if (connections && *connections != flows.size())
            fail("Connections " + std::to_string(*connections) + " but " +
                 std::to_string(flows.size()) + " flows");
        if (flows.empty()) fail("no flows");
        return flows;
    }

  private:
    std::string name_;
    std::uint32_t hosts_;
    std::size_t line_ = 0;
};

// The hosts that take part, in order: all of them at load 1, otherwise round(load x hosts)
// (at least 2) drawn with the seed.
std::vector<std::uint32_t> taking_part(const options& o, std::uint32_t hosts) {
    std::vector<std::uint32_t> all(hosts);
    for (std::uint32_t h = 0; h < hosts; ++h)
        all[h] = h;
    const auto n = std::clamp<std::uint32_t>(
        static_cast<std::uint32_t>(std::lround(o.load * hosts)), 2, hosts);
    if (n == hosts) return all;
    rng r(o.seed * 0xbf58476d1ce4e5b9ull + 7);
    for (std::uint32_t i = 0; i < n; ++i)
        std::swap(all[i], all[i + r.uniform(hosts - i)]);
    all.resize(n);
    std::sort(all.begin(), all.end());
    return all;
}

// A uniform [0, 1) double from the top 53 bits.
double unit_draw(rng& r) {
    return double(r.next_u64() >> 11) * 0x1p-53;
}

}  // namespace

size_cdf size_cdf::read(std::istream& in, const std::string& name) {
    size_cdf c;
    std::string text;
    std::size_t line = 0;
    const auto fail = [&](const std::string& why) {
        throw usage_error("--cdf: " + name + ":" + std::to_string(line) + ": " + why);
    };
    std::vector<std::string_view> w;
    while (next_words(in, text, line, w)) {
        if (w.size() != 2)
            fail("expected 'size_bytes cumulative_probability', got " + std::to_string(w.size()) +
                 " fields");
        const auto size = parse_bytes(w[0]);
        if (!size) fail("'" + std::string(w[0]) + "' is not a size >= 0 in bytes");
        double p = 0;
        const auto [end, ec] = std::from_chars(w[1].data(), w[1].data() + w[1].size(), p);
        if (ec != std::errc{} || end != w[1].data() + w[1].size() || !(p >= 0 && p <= 1))
            fail("'" + std::string(w[1]) + "' is not a probability in [0, 1]");
        if (!c.prob_.empty() && p < c.prob_.back())
            fail("probability " + std::string(w[1]) + " is below the previous line's");
        if (!c.size_.empty() && double(*size) < c.size_.back())
            fail("size " + std::string(w[0]) + " is below the previous line's");
        c.size_.push_back(double(*size));
        c.prob_.push_back(p);
    }
    if (in.bad()) fail("read error");
    if (c.prob_.empty()) fail("no points");
    if (c.prob_.back() != 1) {
        char last[32];
        std::snprintf(last, sizeof last, "%g", c.prob_.back());
        throw usage_error("--cdf: " + name + ": the last probability is " + last + ", not 1");
    }
    if (c.size_.back() < 1) throw usage_error("--cdf: " + name + ": every size is 0");
    return c;
}

double size_cdf::mean() const {
    // The first point's mass at its size, then each segment's uniform spread.
    double m = prob_[0] * size_[0];
    for (std::size_t i = 1; i < size_.size(); ++i)
        m += (prob_[i] - prob_[i - 1]) * (size_[i - 1] + size_[i]) / 2;
    return std::max(m, 1.0);
}

std::uint64_t size_cdf::draw(double u) const {
    const std::size_t i =
        static_cast<std::size_t>(std::upper_bound(prob_.begin(), prob_.end(), u) - prob_.begin());
    double s = 0;
    if (i == 0) {
        s = size_[0];
    } else if (i == size_.size()) {
        s = size_.back();
    } else {
        s = size_[i - 1] +
            (size_[i] - size_[i - 1]) * (u - prob_[i - 1]) / (prob_[i] - prob_[i - 1]);
    }
    return std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::llround(s)));
}

ring_shape ring_of(const options& o, std::uint32_t hosts) {
    if (hosts < 2)
        throw usage_error("--workload " + std::string(workload_name(o.workload)) +
                          ": a ring needs at least 2 hosts, the fabric has " +
                          std::to_string(hosts));
    ring_shape r;
    r.hosts = static_cast<std::uint32_t>(taking_part(o, hosts).size());
    r.total_steps = (r.hosts - 1) * (o.workload == workload_kind::ring_allreduce ? 2 : 1);
    r.steps = o.steps ? std::min(o.steps, r.total_steps) : r.total_steps;
    r.chunk = std::max<std::uint64_t>(1, (o.size_bytes + r.hosts - 1) / r.hosts);
    // A flow a host a step, each a few hundred bytes of state: 1,024 hosts' all-reduce fits.
    if (std::uint64_t{r.steps} * r.hosts > max_ring_flows)
        throw usage_error("--workload " + std::string(workload_name(o.workload)) + ": " +
                          std::to_string(r.steps) + " steps of " + std::to_string(r.hosts) +
                          " hosts are more than " + std::to_string(max_ring_flows) +
                          " flows (limit them with --steps)");
    return r;
}

std::vector<flow> read_matrix(std::istream& in, const std::string& name, std::uint32_t hosts) {
    return matrix_reader(name, hosts).read(in);
}

std::vector<flow> make_flows(const options& o, std::uint32_t hosts) {
    std::vector<flow> flows;
    switch (o.workload) {
        case workload_kind::permutation: {
            // Sattolo's shuffle: one cycle through every host taking part, so nobody sends to
            // itself and each of them receives exactly one flow.
            std::vector<std::uint32_t> who = taking_part(o, hosts);
            const auto n = static_cast<std::uint32_t>(who.size());
            std::vector<std::uint32_t> to(who);
            rng r(o.seed * 0x9e3779b97f4a7c15ull + 1);
            for (std::uint32_t i = n - 1; i > 0; --i)
                std::swap(to[i], to[r.uniform(i)]);
            std::vector<std::uint32_t> dst(hosts, hosts);
            for (std::uint32_t i = 0; i < n; ++i)
                dst[who[i]] = to[i];
            for (std::uint32_t h = 0; h < hosts; ++h)
                if (dst[h] != hosts) flows.push_back({h, dst[h], o.size_bytes, 0});
            break;
        }
        case workload_kind::incast: {
            const std::uint32_t given = o.incast_degree ? o.incast_degree : hosts - 1;
            if (given > hosts - 1)
                throw usage_error("--incast-degree: " + std::to_string(given) + " senders, but " +
                                  std::to_string(hosts) + " hosts (one receives)");
            const auto degree =
                std::max<std::uint32_t>(1, static_cast<std::uint32_t>(std::lround(o.load * given)));
            for (std::uint32_t i = 1; i <= degree; ++i)
                flows.push_back({i, 0, o.size_bytes, 0});
            break;
        }
        case workload_kind::alltoall: {
            const std::vector<std::uint32_t> who = taking_part(o, hosts);
            for (const std::uint32_t s : who)
                for (const std::uint32_t d : who)
                    if (s != d) flows.push_back({s, d, o.size_bytes, 0});
            break;
        }
        case workload_kind::ring_allgather:
        case workload_kind::ring_allreduce: {
            // Step s: the host at ring position p sends a chunk to position p + 1 once it has
            // received step s - 1's chunk from position p - 1 (flow (s - 1) N + p - 1).
            const ring_shape ring = ring_of(o, hosts);
            const std::vector<std::uint32_t> who = taking_part(o, hosts);
            const std::uint32_t n = ring.hosts;
            for (std::uint32_t s = 0; s < ring.steps; ++s)
                for (std::uint32_t p = 0; p < n; ++p)
                    flows.push_back({who[p], who[(p + 1) % n], ring.chunk, 0,
                                     s == 0 ? flow::no_flow : (s - 1) * n + (p + n - 1) % n});
            break;
        }
        case workload_kind::uniform: {
            if (hosts < 2)
                throw usage_error("--workload uniform: needs at least 2 hosts, the fabric has " +
                                  std::to_string(hosts));
            std::optional<size_cdf> cdf;
            if (!o.cdf.empty()) {
                std::ifstream in(o.cdf);
                if (!in) throw usage_error("--cdf: cannot open '" + o.cdf + "'");
                cdf = size_cdf::read(in, o.cdf);
            }
            // Poisson arrivals offering `load` of every host link: hosts x rate / mean size
            // flows a nanosecond (rate in bits a ns).
            const double mean = cdf ? cdf->mean() : double(o.size_bytes);
            const double per_ns = o.load * hosts * o.speed_gbps / (8 * mean);
            rng r(o.seed * 0x94d049bb133111ebull + 3);
            double t = 0;
            for (std::uint32_t i = 0; i < o.flows; ++i) {
                if (i > 0) t += -std::log(1 - unit_draw(r)) / per_ns;
                const auto src = static_cast<std::uint32_t>(r.uniform(hosts));
                auto dst = static_cast<std::uint32_t>(r.uniform(hosts - 1));
                if (dst >= src) ++dst;
                const std::uint64_t bytes = cdf ? cdf->draw(unit_draw(r)) : o.size_bytes;
                flows.push_back({src, dst, bytes, static_cast<std::uint64_t>(t)});
            }
            break;
        }
        case workload_kind::matrix: {
            std::ifstream in(o.matrix);
            if (!in) throw usage_error("--matrix: cannot open '" + o.matrix + "'");
            flows = read_matrix(in, o.matrix, hosts);
            break;
        }
    }
    return flows;
}

}  // namespace uet::simcli
