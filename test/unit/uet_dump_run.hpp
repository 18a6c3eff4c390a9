// Runs the uet-dump binary the build made (UET_DUMP) and collects what it printed.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

namespace uet::test {

inline std::string tmpdir() {
    const char* d = std::getenv("UET_TEST_TMPDIR");
    return d ? d : "/tmp";
}

inline std::string uet_dump_path() {
    const char* p = std::getenv("UET_DUMP");
    return p ? p : "uet-dump";
}

struct run_result {
    int exit_code;
    std::string out;
    std::string err;
};

inline std::string read_all(std::FILE* f) {
    std::string s;
    char buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;)
        s.append(buf, n);
    return s;
}

// uet-dump ARGS; stderr goes through a file named after stderr_name in tmpdir().
inline run_result run_uet_dump(const std::string& args,
                               const std::string& stderr_name = "uet_dump_stderr.txt") {
    const std::string err_path = tmpdir() + "/" + stderr_name;
    const std::string cmd = uet_dump_path() + " " + args + " 2>" + err_path;
    std::FILE* p = popen(cmd.c_str(), "r");
    if (!p) return {-1, {}, {}};
    run_result r{-1, read_all(p), {}};
    const int status = pclose(p);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (std::FILE* e = std::fopen(err_path.c_str(), "r")) {
        r.err = read_all(e);
        std::fclose(e);
    }
    return r;
}

inline std::vector<std::string> lines_of(const std::string& s) {
    std::vector<std::string> lines;
    std::istringstream in(s);
    for (std::string l; std::getline(in, l);)
        lines.push_back(l);
    return lines;
}

}  // namespace uet::test
