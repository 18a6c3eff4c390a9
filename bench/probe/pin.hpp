// Pins the calling thread to one CPU (the bench probes' two threads, one per core).
#pragma once

#include <pthread.h>
#include <sched.h>

namespace uet::probe {

inline bool pin_to_cpu(int cpu) noexcept {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

}  // namespace uet::probe
