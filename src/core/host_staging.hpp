// Page-locked host blocks kept between calls, and copies of host rows over several threads
// (internal): what a cuda tiled call needs to move pageable rows at the bus's speed.
//
// A copy between pageable host memory and the device goes through the driver's own staging, one
// thread per copy: on an H200 a 16000^2 u16 zoom x2 from pageable memory to pageable memory took
// 279 ms against 40.7 ms from and to page-locked memory (docs/scale.md, "Several GPUs"). A call
// that stages the rows itself copies them into page-locked blocks with several threads and
// uploads from there (and the reverse for its output). Page-locking is slow (the driver maps
// every page for the device), so the blocks are kept for the next call.
#pragma once

#include <cstddef>

namespace upres {

// A page-locked block (alloc_host_frame_memory) of at least `bytes`, taken from the blocks
// earlier calls gave back where one is large enough, else allocated. Given back by its
// destructor: kept for later calls while the cache holds at most kStagingCacheBytes, else freed.
// upres::host_release_cached_memory() frees the cached ones.
class HostStaging {
  public:
    HostStaging() = default;
    ~HostStaging();
    HostStaging(const HostStaging&) = delete;
    HostStaging& operator=(const HostStaging&) = delete;
    // At least n bytes (a smaller block is given back and replaced, its contents lost).
    void reserve(std::size_t n);
    void* get() const noexcept { return p_; }
    std::size_t bytes() const noexcept { return bytes_; }

  private:
    void* p_ = nullptr;
    std::size_t bytes_ = 0;
};

// Page-locked blocks kept between calls, at most (a gigapixel zoom's slots on four GPUs).
constexpr std::size_t kStagingCacheBytes = std::size_t{2} << 30;

// Frees the cached page-locked blocks (those in use are kept by their holders).
void release_staging_cache() noexcept;

// True when the host bytes [p, p + bytes) are page-locked memory the CUDA driver knows (its first
// and last byte; false without CUDA).
bool host_page_locked(const void* p, std::size_t bytes) noexcept;
// The same for `rows` rows of `row_bytes` bytes, `stride` bytes apart (from the first byte of the
// first to the last byte of the last).
bool host_rows_page_locked(const void* p, int rows, std::ptrdiff_t stride,
                           std::size_t row_bytes) noexcept;

// Copies `rows` rows of `row_bytes` bytes from src (rows `src_stride` bytes apart) to dst (rows
// `dst_stride` bytes apart) with up to `threads` threads, each copying at least 1 MiB.
void copy_rows_parallel(void* dst, std::ptrdiff_t dst_stride, const void* src,
                        std::ptrdiff_t src_stride, std::size_t row_bytes, int rows, int threads);

}  // namespace upres
