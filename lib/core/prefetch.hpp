// A hint to start loading a cache line the caller will touch soon.
//
// Why not __builtin_prefetch: GCC drops it from objects compiled with -flto (libuet's build),
// so the hint never reached the code; an instruction written out survives every build.
#pragma once

namespace uet {

inline void prefetch_line(const void* p) noexcept {
#if defined(__x86_64__) || defined(__i386__)
    asm volatile("prefetcht0 %[p]" : : [p] "m"(*static_cast<const volatile char*>(p)));
#else
    __builtin_prefetch(p);
#endif
}

// The same, for a line the caller will write: asks for it exclusive (PREFETCHW), so that the
// stores need not wait for another core to give it up. Where the instruction is missing it
// does nothing (x86-64 CPUs that lack it treat it as a NOP).
inline void prefetch_line_for_write(const void* p) noexcept {
#if defined(__x86_64__) || defined(__i386__)
    asm volatile("prefetchw %[p]" : : [p] "m"(*static_cast<const volatile char*>(p)));
#else
    __builtin_prefetch(p, 1);
#endif
}

}  // namespace uet
