// HostScratch and upres::host_release_cached_memory (host_scratch.hpp, context.hpp).
#include "core/host_scratch.hpp"

#include <cstdlib>
#include <mutex>
#include <new>
#include <string>

#include <upres/context.hpp>
#include <upres/error.hpp>

#include "core/host_staging.hpp"

namespace upres {

namespace {

struct Cache {
    std::mutex m;
    std::uint8_t* block = nullptr;
    std::size_t bytes = 0;
    bool busy = false;
};

Cache& cache() {
    static Cache c;
    return c;
}

std::uint8_t* allocate(std::size_t bytes, const char* what) {
    void* p = ::operator new (bytes, std::align_val_t{64}, std::nothrow);
    if (!p)
        throw Error(ErrorCode::OutOfMemory, std::string(what) + ": cannot allocate " +
                                                std::to_string(bytes >> 20) +
                                                " MiB of host memory");
    return static_cast<std::uint8_t*>(p);
}

void release(std::uint8_t* p) noexcept { ::operator delete (p, std::align_val_t{64}); }

}  // namespace

HostScratch::HostScratch(std::size_t bytes, const char* what) : bytes_(bytes) {
    Cache& c = cache();
    {
        std::lock_guard<std::mutex> lock(c.m);
        if (!c.busy) {
            if (c.bytes < bytes) {
                release(c.block);
                c.block = nullptr;
                c.bytes = 0;
                c.block = allocate(bytes, what);
                c.bytes = bytes;
            }
            c.busy = true;
            p_ = c.block;
            cached_ = true;
            return;
        }
    }
    p_ = allocate(bytes, what);
}

HostScratch::~HostScratch() {
    if (!cached_) {
        release(p_);
        return;
    }
    Cache& c = cache();
    std::lock_guard<std::mutex> lock(c.m);
    c.busy = false;
}

void host_release_cached_memory() noexcept {
    release_staging_cache();
    Cache& c = cache();
    std::lock_guard<std::mutex> lock(c.m);
    if (c.busy) return;  // in use: kept until a later call
    release(c.block);
    c.block = nullptr;
    c.bytes = 0;
}

}  // namespace upres
