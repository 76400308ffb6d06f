// HostStaging, host_page_locked and copy_rows_parallel (host_staging.hpp).
#include "core/host_staging.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <vector>

#include <upres/context.hpp>

#include "core/parallel.hpp"

#if UPRES_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace upres {

namespace {

struct Block {
    void* p;
    std::size_t bytes;
};

struct StagingCache {
    std::mutex m;
    std::vector<Block> free;  // oldest first
    std::size_t bytes = 0;
};

// Never destroyed: its blocks stay reachable (and page-locked) until the process ends, where
// freeing them after the CUDA runtime has shut down would fail.
StagingCache& staging_cache() {
    static StagingCache* const c = new StagingCache;
    return *c;
}

// The smallest cached block of at least n bytes, taken out of the cache; {nullptr, 0} if none.
Block take(std::size_t n) {
    StagingCache& c = staging_cache();
    const std::lock_guard<std::mutex> l(c.m);
    auto best = c.free.end();
    for (auto it = c.free.begin(); it != c.free.end(); ++it)
        if (it->bytes >= n && (best == c.free.end() || it->bytes < best->bytes)) best = it;
    if (best == c.free.end()) return {nullptr, 0};
    const Block b = *best;
    c.free.erase(best);
    c.bytes -= b.bytes;
    return b;
}

// Keeps b for later calls, dropping the oldest blocks to stay within kStagingCacheBytes.
void give_back(Block b) noexcept {
    if (!b.p) return;
    std::vector<Block> drop;
    {
        StagingCache& c = staging_cache();
        const std::lock_guard<std::mutex> l(c.m);
        if (b.bytes > kStagingCacheBytes) {
            drop.push_back(b);
        } else {
            try {
                c.free.push_back(b);
                c.bytes += b.bytes;
            } catch (...) {
                drop.push_back(b);
            }
            while (c.bytes > kStagingCacheBytes) {
                drop.push_back(c.free.front());
                c.bytes -= c.free.front().bytes;
                c.free.erase(c.free.begin());
            }
        }
    }
    for (const Block& d : drop) free_host_frame_memory(d.p);
}

}  // namespace

HostStaging::~HostStaging() { give_back({p_, bytes_}); }

void HostStaging::reserve(std::size_t n) {
    if (n <= bytes_) return;
    give_back({p_, bytes_});
    p_ = nullptr, bytes_ = 0;
    Block b = take(n);
    if (!b.p) b = {alloc_host_frame_memory(n), n};
    p_ = b.p, bytes_ = b.bytes;
}

void release_staging_cache() noexcept {
    std::vector<Block> drop;
    {
        StagingCache& c = staging_cache();
        const std::lock_guard<std::mutex> l(c.m);
        drop.swap(c.free);
        c.bytes = 0;
    }
    for (const Block& d : drop) free_host_frame_memory(d.p);
}

bool host_page_locked(const void* p, std::size_t bytes) noexcept {
#if UPRES_HAVE_CUDA
    if (!p || bytes == 0 || !cuda_available()) return false;
    const auto locked = [](const void* q) {
        cudaPointerAttributes a{};
        if (cudaPointerGetAttributes(&a, q) != cudaSuccess) {
            cudaGetLastError();  // not an error of the caller's: clear it
            return false;
        }
        return a.type == cudaMemoryTypeHost;
    };
    return locked(p) && locked(static_cast<const std::uint8_t*>(p) + bytes - 1);
#else
    (void)p, (void)bytes;
    return false;
#endif
}

bool host_rows_page_locked(const void* p, int rows, std::ptrdiff_t stride,
                           std::size_t row_bytes) noexcept {
    if (rows <= 0) return false;
    return host_page_locked(
        p, static_cast<std::size_t>(std::ptrdiff_t{rows - 1} * stride) + row_bytes);
}

void copy_rows_parallel(void* dst, std::ptrdiff_t dst_stride, const void* src,
                        std::ptrdiff_t src_stride, std::size_t row_bytes, int rows, int threads) {
    if (rows <= 0 || row_bytes == 0) return;
    // Contiguous rows on both sides: one run of bytes, cut in large pieces (the C library then
    // writes them with streaming stores).
    if (rows > 1 && dst_stride == src_stride && static_cast<std::size_t>(src_stride) == row_bytes) {
        row_bytes *= static_cast<std::size_t>(rows);
        rows = 1;
    }
    const std::size_t total = row_bytes * static_cast<std::size_t>(rows);
    const int n = static_cast<int>(std::clamp<std::size_t>(
        total >> 20, 1, static_cast<std::size_t>(resolve_threads(threads))));
    auto* const d = static_cast<std::uint8_t*>(dst);
    const auto* const s = static_cast<const std::uint8_t*>(src);
    parallel_for(0, n, n, [&](int i) {
        // Piece i: bytes [a, b) of the rows laid end to end.
        std::size_t a = total / n * i + std::min<std::size_t>(i, total % n);
        const std::size_t b = a + total / n + (static_cast<std::size_t>(i) < total % n ? 1 : 0);
        while (a < b) {
            const std::size_t r = a / row_bytes, off = a % row_bytes;
            const std::size_t len = std::min(row_bytes - off, b - a);
            std::memcpy(d + static_cast<std::ptrdiff_t>(r) * dst_stride + off,
                        s + static_cast<std::ptrdiff_t>(r) * src_stride + off, len);
            a += len;
        }
    });
}

}  // namespace upres
