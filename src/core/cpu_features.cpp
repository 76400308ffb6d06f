#include "core/cpu_features.hpp"

#include <cstdlib>

namespace upres {

bool cpu_avx2_fma() noexcept {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    static const bool ok = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                           !std::getenv("UPRES_CPU_BASELINE");
    return ok;
#else
    return false;
#endif
}

bool cpu_avx512_popcnt() noexcept {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    static const bool ok =
        cpu_avx2_fma() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vpopcntdq") &&
        !std::getenv("UPRES_CPU_NO_AVX512");
    return ok;
#else
    return false;
#endif
}

}  // namespace upres
