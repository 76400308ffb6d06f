// Large host scratch memory kept between calls (internal).
//
// An operation that needs hundreds of megabytes of scratch on every call (the semi-global
// matcher's 16-bit cost and path-sum cubes) takes it from here instead of allocating it: a
// fresh allocation of that size is faulted in page by page on every call, which on the 2-core
// machine cost more than the matching itself (Aloe's size, 64 disparities, 4 paths: 538 ms a
// call with fresh memory, 227 ms reusing it). One block is cached, the largest asked for; a
// call that finds it in use (another thread) gets a block of its own that is freed after it.
// upres::host_release_cached_memory() (context.hpp) frees the cached block. The memory is not
// initialised.
#pragma once

#include <cstddef>
#include <cstdint>

namespace upres {

class HostScratch {
  public:
    // At least `bytes` bytes, 64-byte aligned; Error(OutOfMemory) naming `what` if the host has
    // not enough memory.
    HostScratch(std::size_t bytes, const char* what);
    ~HostScratch();
    HostScratch(const HostScratch&) = delete;
    HostScratch& operator=(const HostScratch&) = delete;

    template <class T>
    T* as() const noexcept {
        return reinterpret_cast<T*>(p_);
    }

  private:
    std::uint8_t* p_ = nullptr;
    std::size_t bytes_ = 0;
    bool cached_ = false;  // the cache's block (given back, not freed)
};

}  // namespace upres
