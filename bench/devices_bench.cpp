// Several GPUs of one host (Context::device, upres/context.hpp): a batch of images through
// SRCNN, spread over 1 or 2 devices; a gigapixel zoom from host memory to host memory in bands
// spread over 1 or 2 devices.
//
//   Cuda_SrcnnBatchDevices/<n>   32 RGB u8 images of 960 x 540 -> x2 (1920 x 1080), SRCNN
//       precision fastest, each device holding its share of the batch in device memory: one
//       host thread per device (set_cuda_device, its own stream and Context::device), each
//       running srcnn_upscale on its images. Time: the wall clock from the start of the batch
//       until every device has finished (events cannot span devices). Counter images_per_s.
//       n = 2 needs two devices; with one it is skipped, visibly.
//   Cuda_ZoomTiledDevices/<n>    a 16000 x 16000 u16 image in host memory zoomed x2 with the
//       exact B-spline (a 32000 x 32000 output: a gigapixel, 2 GB) by warp_tiled on the
//       cuda backend, bands over devices 0 .. n-1 (TiledOptions::devices), from the image's
//       rows straight into the output's (no files), the image and the output in pageable
//       memory (staged through the bands' page-locked buffers by several threads). Time: wall
//       clock of the call after a first call (counter first_ms: that call's time, which
//       page-locks the staging buffers). n = 2 needs two devices.
//   Cuda_ZoomTiledDevicesPinned/<n>  the same with the image and the output in upres's
//       page-locked frame memory (alloc_host_frame_memory): the copies then run at the bus's
//       speed, not through the driver's staging of pageable memory, which two GPUs share.
//   Cuda_RotateTiledDevices/<n>  a 16384 x 16384 RGB u8 image in page-locked host memory rotated
//       by 30 degrees with the exact B-spline (mirror) by warp_tiled on the cuda backend (the
//       point maps' boxes, "Point maps on the GPU" in docs/scale.md), bands over devices 0 ..
//       n-1, into an output in page-locked memory. Time: wall clock of the call.
//   Cuda_RotateTiledDevicesPageable/<n>  the same with the image and the output in pageable
//       memory (the boxes' pixels and the bands' rows copied by several threads through
//       page-locked blocks).
//   Cpu_RotateTiled             the same call on the cpu backend, every core of the host: the
//       GPU path's peer on the same machine.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <upres/context.hpp>
#include <upres/rows.hpp>
#include <upres/srcnn.hpp>
#include <upres/tiled.hpp>

#include "bench_util.hpp"

#if UPRES_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace upres::bench {
namespace {

// n devices or more; else the benchmark is skipped, visibly.
bool enough_devices(benchmark::State& state, int n) {
    if (cuda_device_count() >= n) return true;
    state.SkipWithError(("needs " + std::to_string(n) + " CUDA devices, this machine has " +
                         std::to_string(cuda_device_count()))
                            .c_str());
    return false;
}

void Cuda_SrcnnBatchDevices(benchmark::State& state) {
    if (!require_cuda(state)) return;
#if UPRES_HAVE_CUDA
    const int n = static_cast<int>(state.range(0));
    if (!enough_devices(state, n)) return;
    constexpr int kImages = 32, w = 960, h = 540, c = 3;
    const SrcnnModel model = load_default_srcnn_model(2);
    SrcnnOptions so;
    so.precision = SrcnnPrecision::Fastest;
    // Per device: its own stream, its share of the inputs and outputs, in its memory.
    struct Device {
        std::unique_ptr<Stream> stream;
        std::vector<Image<std::uint8_t>> in, out;
        Context ctx;
    };
    std::vector<Device> devs(static_cast<std::size_t>(n));
    for (int d = 0; d < n; ++d) {
        set_cuda_device(d);
        Device& dv = devs[static_cast<std::size_t>(d)];
        dv.stream = std::make_unique<Stream>();
        dv.ctx.backend = Backend::Cuda;
        dv.ctx.device = d;
        dv.ctx.cuda_stream = dv.stream->get();
        for (int i = d; i < kImages; i += n) {
            Image<std::uint8_t> im(w, h, c, Location::Device);
            fill_random_device(im.data(), static_cast<std::size_t>(w) * h * c,
                               static_cast<std::uint32_t>(100 + i), *dv.stream);
            dv.in.push_back(std::move(im));
            dv.out.emplace_back(2 * w, 2 * h, c, Location::Device);
        }
    }
    set_cuda_device(0);
    // One pass over the batch: a thread per device, each queueing its images then waiting.
    const auto batch = [&] {
        std::vector<std::thread> threads;
        std::vector<std::string> errors(static_cast<std::size_t>(n));
        for (int d = 0; d < n; ++d)
            threads.emplace_back([&, d] {
                try {
                    set_cuda_device(d);
                    Device& dv = devs[static_cast<std::size_t>(d)];
                    for (std::size_t i = 0; i < dv.in.size(); ++i)
                        srcnn_upscale(ImageView<const std::uint8_t>(dv.in[i].view()),
                                      dv.out[i].view(), model, so, dv.ctx);
                    UPRES_BENCH_CUDA(cudaStreamSynchronize(dv.stream->get()));
                } catch (const Error& e) {
                    errors[static_cast<std::size_t>(d)] = e.what();
                }
            });
        for (std::thread& t : threads) t.join();
        for (const std::string& e : errors)
            if (!e.empty()) return e;
        return std::string();
    };
    for (int warm = 0; warm < 2; ++warm) {  // the kernels' first-use choice, the pools
        const std::string e = batch();
        if (!e.empty()) {
            state.SkipWithError(e.c_str());
            return;
        }
    }
    for (auto _ : state) {
        const auto t0 = std::chrono::steady_clock::now();
        batch();
        state.SetIterationTime(
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    state.counters["images_per_s"] =
        benchmark::Counter(kImages, benchmark::Counter::kIsIterationInvariantRate);
    state.SetLabel(std::to_string(n) + (n == 1 ? " GPU" : " GPUs") +
                   ", 32 x 960x540 RGB -> x2, SRCNN fastest, device-resident");
#endif
}
BENCHMARK(Cuda_SrcnnBatchDevices)
    ->DenseRange(1, 2)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->MinTime(0.5);

// Host memory of `n` elements: upres's page-locked frame memory (alloc_host_frame_memory) or
// ordinary pageable memory.
template <class T>
std::unique_ptr<T, void (*)(T*)> host_block(std::size_t n, bool pinned) {
    if (pinned)
        return {static_cast<T*>(alloc_host_frame_memory(n * sizeof(T))),
                [](T* p) { free_host_frame_memory(p); }};
    return {new T[n], [](T* p) { delete[] p; }};
}

// The wall clock of each call of run (a warp_tiled call) after a first one (the devices, the
// pools, the page faults, page-locking the staging buffers), and its bands; counter first_ms:
// the first call's time.
template <class Run>
void time_calls(benchmark::State& state, const Run& run) {
    const auto t_first = std::chrono::steady_clock::now();
    run();
    state.counters["first_ms"] =
        1e3 * std::chrono::duration<double>(std::chrono::steady_clock::now() - t_first).count();
    TiledStats st;
    for (auto _ : state) {
        const auto t0 = std::chrono::steady_clock::now();
        st = run();
        state.SetIterationTime(
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    state.counters["bands"] = st.bands;
}

void zoom_devices(benchmark::State& state, bool pinned) {
    if (!require_cuda(state)) return;
    const int n = static_cast<int>(state.range(0));
    if (!enough_devices(state, n)) return;
    constexpr int side = 16000;
    const std::size_t in_n = std::size_t{side} * side, out_n = 4 * in_n;
    const auto in_mem = host_block<std::uint16_t>(in_n, pinned);
    const auto out_mem = host_block<std::uint16_t>(out_n, pinned);
    fill_random(in_mem.get(), in_n, 7);
    fill_random(out_mem.get(), out_n, 8);  // pages touched
    const ImageView<const std::uint16_t> in(in_mem.get(), side, side, 1);
    const ImageView<std::uint16_t> out(out_mem.get(), 2 * side, 2 * side, 1);
    ViewRowSource src(in);
    TiledOptions to;
    for (int d = 0; d < n; ++d) to.devices.push_back(d);
    Context ctx;
    ctx.backend = Backend::Cuda;
    const auto run = [&] {
        ViewRowSink dst(out);
        return warp_tiled(src, dst, 2 * side, 2 * side, Transform::make_resize(), {}, to, ctx);
    };
    time_calls(state, run);
    state.SetLabel(std::to_string(n) + (n == 1 ? " GPU" : " GPUs") +
                   ", 16000^2 u16 -> x2 B-spline, " + (pinned ? "page-locked" : "pageable") +
                   " host memory to host memory");
}

// The 16384^2 RGB u8 rotation by warp_tiled, on the cuda backend over devices 0 .. n-1 (n > 0)
// or on the cpu backend (n = 0), host memory to host memory (page-locked for the cuda backend
// unless `pageable`).
void rotate_tiled(benchmark::State& state, int n, bool pageable = false) {
    constexpr int side = 16384, c = 3;
    const std::size_t count = std::size_t{side} * side * c;
    const auto in_mem = host_block<std::uint8_t>(count, n > 0 && !pageable);
    const auto out_mem = host_block<std::uint8_t>(count, n > 0 && !pageable);
    fill_random(in_mem.get(), count, 17);
    fill_random(out_mem.get(), count, 18);  // pages touched
    const ImageView<const std::uint8_t> in(in_mem.get(), side, side, c);
    const ImageView<std::uint8_t> out(out_mem.get(), side, side, c);
    ViewRowSource src(in);
    TiledOptions to;
    for (int d = 0; d < n; ++d) to.devices.push_back(d);
    Context ctx;
    ctx.backend = n > 0 ? Backend::Cuda : Backend::Cpu;
    const Transform t = Transform::make_rotation(30.0, side, side);
    const auto run = [&] {
        ViewRowSink dst(out);
        return warp_tiled(src, dst, side, side, t, {}, to, ctx);
    };
    time_calls(state, run);
    state.SetLabel((n > 0 ? std::to_string(n) + (n == 1 ? " GPU" : " GPUs")
                          : std::to_string(std::thread::hardware_concurrency()) + " CPU threads") +
                   ", 16384^2 RGB u8 rotated 30 degrees, exact B-spline, " +
                   (n > 0 && !pageable ? "page-locked" : "pageable") +
                   " host memory to host memory");
}

void Cuda_RotateTiledDevices(benchmark::State& state) {
    if (!require_cuda(state)) return;
    const int n = static_cast<int>(state.range(0));
    if (!enough_devices(state, n)) return;
    rotate_tiled(state, n);
}
BENCHMARK(Cuda_RotateTiledDevices)
    ->DenseRange(1, 2)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);
void Cuda_RotateTiledDevicesPageable(benchmark::State& state) {
    if (!require_cuda(state)) return;
    const int n = static_cast<int>(state.range(0));
    if (!enough_devices(state, n)) return;
    rotate_tiled(state, n, true);
}
BENCHMARK(Cuda_RotateTiledDevicesPageable)
    ->DenseRange(1, 2)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);
void Cpu_RotateTiled(benchmark::State& state) { rotate_tiled(state, 0); }
BENCHMARK(Cpu_RotateTiled)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(3);

void Cuda_ZoomTiledDevices(benchmark::State& state) { zoom_devices(state, false); }
void Cuda_ZoomTiledDevicesPinned(benchmark::State& state) { zoom_devices(state, true); }
BENCHMARK(Cuda_ZoomTiledDevices)
    ->DenseRange(1, 2)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);
BENCHMARK(Cuda_ZoomTiledDevicesPinned)
    ->DenseRange(1, 2)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(5);

}  // namespace
}  // namespace upres::bench
