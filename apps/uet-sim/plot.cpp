#include "plot.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "options.hpp"

extern char** environ;

namespace uet::simcli {

namespace {

bool is_file(const std::string& path) {
    struct stat st {};
    return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string exe_dir() {
    const std::string p = self_exe();
    const std::size_t slash = p.rfind('/');
    return slash == std::string::npos ? "." : p.substr(0, slash);
}

int run_quietly(const std::vector<std::string>& argv) {
    try {
        int status = 0;
        wait_child(spawn(argv, "/dev/null"), status);
        return status;
    } catch (const std::runtime_error&) {
        return 127;
    }
}

}  // namespace

std::string self_exe() {
    char buf[4096];
    const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) throw std::runtime_error("cannot find uet-sim's own executable");
    return std::string(buf, static_cast<std::size_t>(n));
}

void make_dir(const std::string& opt, const std::string& dir) {
    if (mkdir(dir.c_str(), 0777) != 0 && errno != EEXIST)
        throw usage_error(opt + ": cannot create '" + dir + "': " + std::strerror(errno));
    struct stat st {};
    if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        throw usage_error(opt + ": '" + dir + "' is not a directory");
}

std::string find_python() {
    std::vector<std::string> candidates = {"/usr/bin/python3", "python3"};
    if (const char* env = std::getenv("UET_SIM_PYTHON"); env && *env) candidates = {env};
    for (const std::string& py : candidates)
        if (run_quietly({py, "-c", "import matplotlib"}) == 0) return py;
    throw usage_error(
        "--plot: no python3 with matplotlib (apt-get install python3-matplotlib, or set "
        "UET_SIM_PYTHON)");
}

std::string plot_script() {
    if (const char* env = std::getenv("UET_SIM_PLOT"); env && *env) {
        if (!is_file(env))
            throw usage_error(std::string("--plot: UET_SIM_PLOT '") + env + "' does not exist");
        return env;
    }
    const std::string dir = exe_dir();
    for (const std::string& p : {dir + "/uet_sim_plot.py", dir + "/../share/uet/uet_sim_plot.py"})
        if (is_file(p)) return p;
    throw usage_error("--plot: uet_sim_plot.py is neither in " + dir + " nor in " + dir +
                      "/../share/uet (set UET_SIM_PLOT)");
}

int spawn(const std::vector<std::string>& argv, const std::string& out_file) {
    std::vector<char*> args;
    for (const std::string& a : argv)
        args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    if (!out_file.empty()) {
        posix_spawn_file_actions_addopen(&fa, 1, out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                         0644);
        posix_spawn_file_actions_adddup2(&fa, 1, 2);
    }
    pid_t pid = 0;
    const int rc = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(rc));
    return pid;
}

int wait_child(int pid, int& status) {
    int st = 0;
    pid_t got;
    while ((got = waitpid(pid, &st, 0)) < 0 && errno == EINTR) {
    }
    if (got < 0) throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
    status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    return got;
}

void plot(const std::string& python, const std::string& script, const std::string& mode,
          const std::string& dir) {
    int status = 0;
    wait_child(spawn({python, script, mode, dir}), status);
    if (status != 0)
        throw std::runtime_error("--plot: uet_sim_plot.py " + mode + " " + dir + " failed (exit " +
                                 std::to_string(status) + ")");
}

}  // namespace uet::simcli
