// Execution context: which backend runs an operation, how many CPU threads, which CUDA stream.
#pragma once

#include <cstddef>
#include <string>

#include <upres/options.hpp>

namespace upres {

// Backends. Auto follows where the data lives (host memory -> Cpu, device memory -> Cuda).
// A forced backend that is not available is an error (ErrorCode::BackendUnavailable), never
// silently replaced by another.
enum class Backend { Auto, Reference, Cpu, Cuda };

const char* to_string(Backend b) noexcept;
// Parses "auto", "reference", "cpu", "cuda"; throws Error(InvalidArgument) naming the allowed
// values otherwise.
Backend parse_backend(const std::string& name);
template <>
const EnumDesc& enum_desc<Backend>() noexcept;

struct Context {
    Backend backend = Backend::Auto;
    // CPU threads for the Cpu backend; 0 means OpenMP's default (all cores).
    int threads = 0;
    // CUDA stream (a cudaStream_t) for the Cuda backend; nullptr is the default stream.
    // Operations on the Cuda backend are asynchronous with respect to the host unless they
    // return host data or the caller synchronizes (synchronize()).
    void* cuda_stream = nullptr;
    // CUDA device for the Cuda backend: -1 the calling thread's current device (device 0 unless
    // the program chose another with cudaSetDevice); 0 .. cuda_device_count() - 1: the operation
    // runs on that device (cuda_stream, device images and outputs must belong to it) and the
    // calling thread's current device is restored afterwards. Threads with a Context each for a
    // different device run operations on several GPUs at once. A device that does not exist is
    // Error(InvalidArgument) naming the devices there are.
    int device = -1;
};

// True when the library was built with CUDA and at least one CUDA device is present.
bool cuda_available() noexcept;
// Number of CUDA devices (0 without CUDA support or without a device).
int cuda_device_count() noexcept;
// Human-readable description of the CUDA devices ("NVIDIA H100 80GB HBM3 (sm_90, 79 GiB)"...),
// one per line; empty without devices.
std::string cuda_device_info();
// Makes `device` the calling thread's current CUDA device (cudaSetDevice), where its device
// images (Image<T>(..., Location::Device)) are allocated: a thread that serves one GPU of
// several calls it once. Error(InvalidArgument) for a device that does not exist (naming those
// there are), Error(BackendUnavailable) without CUDA.
void set_cuda_device(int device);
// Blocks until all work queued on ctx.cuda_stream is done (no-op without CUDA).
void synchronize(const Context& ctx);

// Host memory for frames that travel to and from the device: page-locked (cudaHostAlloc) when a
// CUDA device is present, so copies run at the bus's speed without a staging copy (1080p -> 4K
// frames through upscale_yuv from pageable memory: 1.7x slower for SRCNN, 2.8x for SIL-SEABI
// on an H200, docs/ops/video.md);
// ordinary memory otherwise. 64-byte aligned. Error(OutOfMemory) when it cannot be had.
void* alloc_host_frame_memory(std::size_t bytes);
void free_host_frame_memory(void* p) noexcept;  // nullptr: nothing
// Operations on the Cuda backend take their temporary device memory (B-spline coefficients,
// staging copies) stream-ordered from one pool per device that upres owns, and keep it there
// for the next call once it is freed, so that a call does not allocate again (memory allocated
// by the application is not affected). This gives the kept memory back to the device; memory
// still used by queued work is kept until a later call. No-op without CUDA or before the first
// such operation. Throws Error(CudaError) if the driver fails.
void cuda_release_cached_memory();
// Operations that need very large host scratch memory on every call (the semi-global stereo
// matcher's cost and path-sum cubes: 3 x W x H x D x 2 bytes) keep one such block for the next
// call instead of faulting in fresh memory each time, and tiled calls on the cuda backend keep
// the page-locked buffers their bands travel through (up to 2 GiB) instead of page-locking
// fresh ones. This frees them (blocks in use by a call in progress are kept). Never throws.
void host_release_cached_memory() noexcept;

struct BuildInfo {
    std::string version;
    bool cuda = false;         // CUDA backends compiled in
    std::string cuda_archs;    // e.g. "90"
    std::string cuda_runtime;  // e.g. "13.0"
    bool openmp = false;
    int openmp_max_threads = 0;
    std::string compiler;
};
BuildInfo build_info();

}  // namespace upres
