// CPU parallel loops (OpenMP). One place decides scheduling so backends stay schedules of the
// reference, not copies of it.
#pragma once

#include <omp.h>

namespace upres {

inline int resolve_threads(int threads) { return threads > 0 ? threads : omp_get_max_threads(); }

// Calls f(i) for i in [begin, end), statically split over `threads` OpenMP threads (0: all).
// Static scheduling keeps results run-to-run identical.
template <class F>
void parallel_for(int begin, int end, int threads, F&& f) {
    const int n = resolve_threads(threads);
#pragma omp parallel for schedule(static) num_threads(n)
    for (int i = begin; i < end; ++i) f(i);
}

}  // namespace upres
