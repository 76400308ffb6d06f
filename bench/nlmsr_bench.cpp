// upres::nlm_fuse benchmarks: the fusion of eq. (5) (the backends' entry points, on luma planes
// already on the output grid, as the paper times its kernels) and the whole call.
//
//   Nlmsr_CpuFuse/threads          the paper's workload: 4 frames of 256 x 256 (128 x 128 up-scaled
//                                  x 2), patch 13, search 5, the cpu backend (threads 1: the
//                                  paper's single-threaded column; 0: all cores). Wall clock.
//   Nlmsr_Cpu/frames               the whole call (luma, interpolation, fusion, back-projection) on
//                                  `frames` gray u8 frames of 480 x 270 (-> 960 x 540), search 5
//                                  (the peer's), other options the defaults, all cores.
//                                  Peer: OpenCV fastNlMeansDenoisingMulti with the same frame
//                                  count, template 13, search 5 on the 960 x 540 output size
//                                  (tools/peers/peers_nlmsr_cpu.py).
//   Cuda_NlmsrSharedBlock/bx/by/bz the paper's shared-memory kernel on its workload with block
//                                  bx x by x bz (the paper's 8 x 8 x 4 was best on Fermi).
//   Cuda_NlmsrFuse/<variant>/...   the cuda fusion on device planes: frames, output width and
//                                  height, search side; patch 13. The paper's workload (4 x
//                                  256 x 256, search 5) for every variant; 5 x 1920 x 1080 for
//                                  fast at search 5, 11 and 21, and 2 to 16 frames at search 5.
//   Cuda_Nlmsr/frames/search       the whole call on the cuda backend, frames and output in
//                                  device memory: `frames` gray u8 frames of 960 x 540 -> 1920 x
//                                  1080, patch 13, the other options the defaults (noise-adaptive
//                                  weight scale, 3 back-projections).
//   Cuda_NlmsrReconstruct/frames/search/rounds  the same with post reconstruct (SRCNN start, 4
//                                  phases fused on the input grid, `rounds` rounds of the camera
//                                  model: 10, the default, and 1; SRCNN fp32, or with fastest 1
//                                  its fastest precision).
#include <cstdint>
#include <utility>
#include <vector>

#include <upres/nlmsr.hpp>

#include "bench_util.hpp"
#include "ops/nlmsr/nlmsr_backends.hpp"

#if UPRES_HAVE_CUDA
#include "bench_cuda.hpp"
#endif

namespace ub = upres::bench;
using namespace upres;

namespace {

NlmsrPlan bench_plan(int patch, int search) {
    NlmsrPlan p;
    p.patch_r = patch / 2;
    p.search_r = search / 2;
    const double sigma = 8.0;
    p.neg_inv = -1.0 / (2.0 * sigma * sigma * patch * patch);
    return p;
}

// Random planes on the 8-bit scale; frame t is frame 0 plus a little of its own texture, so
// that the weights spread as on a real sequence.
std::vector<Image<float>> host_planes(int n, int w, int h) {
    const std::size_t px = static_cast<std::size_t>(w) * h;
    std::vector<float> base(px), own(px);
    ub::fill_random(base.data(), px, 7);
    std::vector<Image<float>> f;
    for (int t = 0; t < n; ++t) {
        ub::fill_random(own.data(), px, 100 + t);
        Image<float> im(w, h, 1);
        for (std::size_t i = 0; i < px; ++i) im.data()[i] = 200.0f * base[i] + 20.0f * own[i];
        f.push_back(std::move(im));
    }
    return f;
}

void Nlmsr_CpuFuse(benchmark::State& state) {
    const int threads = static_cast<int>(state.range(0)), w = 256, h = 256;
    const auto f = host_planes(4, w, h);
    std::vector<Span2D<const float>> spans;
    for (const auto& im : f) spans.push_back(span_of(ImageView<const float>(im.view())));
    Image<float> out(w, h, 1);
    const NlmsrPlan plan = bench_plan(13, 5);
    for (auto _ : state)
        cpu::nlm_fuse(spans, spans[1], span_of(out.view()), plan, ub::host_threads(threads));
    state.SetItemsProcessed(state.iterations() * std::int64_t{w} * h);
}
BENCHMARK(Nlmsr_CpuFuse)->ArgNames({"threads"})->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond);

void Nlmsr_Cpu(benchmark::State& state) {
    const int n = static_cast<int>(state.range(0)), w = 480, h = 270;
    std::vector<Image<std::uint8_t>> f;
    std::vector<ImageView<const std::uint8_t>> v;
    for (int t = 0; t < n; ++t) {
        f.emplace_back(w, h, 1);
        ub::fill_random(f.back().data(), static_cast<std::size_t>(w) * h, 30 + t);
    }
    for (const auto& im : f) v.push_back(im.view());
    Image<std::uint8_t> out(2 * w, 2 * h, 1);
    NlmsrOptions o;
    o.sigma = 8.0;
    o.search = 5;  // the peer's search window
    Context ctx;
    ctx.backend = Backend::Cpu;
    for (auto _ : state) nlm_fuse(v, out.view(), o, ctx);
    state.SetItemsProcessed(state.iterations() * std::int64_t{4} * w * h);
}
BENCHMARK(Nlmsr_Cpu)->ArgNames({"frames"})->Arg(5)->Unit(benchmark::kMillisecond);

#if UPRES_HAVE_CUDA
// The fusion alone: n frames on a w x h grid, patch 13, the search side; the shared variant's
// block bx x by x bz.
void fuse_bench(benchmark::State& state, NlmsrVariant v, int n, int w, int h, int search,
                int bx = 8, int by = 8, int bz = 4) {
    if (!ub::require_cuda(state)) return;
    const std::size_t px = static_cast<std::size_t>(w) * h;
    ub::Stream st;
    std::vector<ub::DeviceBuffer> planes;
    std::vector<Span2D<const float>> spans;
    {
        const auto host = host_planes(n, w, h);
        for (const auto& im : host) {
            planes.emplace_back(px * sizeof(float));
            UPRES_BENCH_CUDA(cudaMemcpyAsync(planes.back().get(), im.data(), px * sizeof(float),
                                             cudaMemcpyHostToDevice, st.get()));
            spans.push_back({planes.back().as<float>(), w, h, 1, w});
        }
        UPRES_BENCH_CUDA(cudaStreamSynchronize(st.get()));
    }
    ub::DeviceBuffer out(px * sizeof(float));
    const Span2D<float> o{out.as<float>(), w, h, 1, w};
    NlmsrPlan plan = bench_plan(13, search);
    plan.block_x = bx;
    plan.block_y = by;
    plan.block_z = bz;
    try {
        cuda::nlm_fuse(spans, spans[n / 2], o, plan, v, st.get());
    } catch (const Error& e) {  // a block or tile the device cannot take: no timing
        state.SkipWithError(e.what());
        return;
    }
    ub::time_device(state, st.get(), [&](std::int64_t) {
        cuda::nlm_fuse(spans, spans[n / 2], o, plan, v, st.get());
    });
    state.SetLabel(to_string(v));
    ub::set_rates(state, double(px), double(px) * sizeof(float) * (n + 2));
}
// args: frames, output width, height, search side.
void Cuda_NlmsrFuse(benchmark::State& state, NlmsrVariant v) {
    fuse_bench(state, v, static_cast<int>(state.range(0)), static_cast<int>(state.range(1)),
               static_cast<int>(state.range(2)), static_cast<int>(state.range(3)));
}
// The shared variant's block shape on the paper's workload (4 frames, 256 x 256, search 5).
// args: block x, y, z.
void Cuda_NlmsrSharedBlock(benchmark::State& state) {
    fuse_bench(state, NlmsrVariant::Shared, 4, 256, 256, 5, static_cast<int>(state.range(0)),
               static_cast<int>(state.range(1)), static_cast<int>(state.range(2)));
}
// args: frames, search side.
// args: frames, search side (, post reconstruct: rounds, fastest).
void nlmsr_whole_call(benchmark::State& state, NlmsrPost post) {
    if (!ub::require_cuda(state)) return;
    const int n = static_cast<int>(state.range(0)), w = 960, h = 540;
    ub::Stream st;
    std::vector<Image<std::uint8_t>> f;
    std::vector<ImageView<const std::uint8_t>> v;
    Image<std::uint8_t> host(w, h, 1);
    for (int t = 0; t < n; ++t) {
        ub::fill_random(host.data(), static_cast<std::size_t>(w) * h, 30 + t);
        f.push_back(clone(ImageView<const std::uint8_t>(host.view()), Location::Device));
    }
    for (const auto& im : f) v.push_back(im.view());
    Image<std::uint8_t> out(2 * w, 2 * h, 1, Location::Device);
    NlmsrOptions o;
    o.search = static_cast<int>(state.range(1));
    o.post = post;
    if (post == NlmsrPost::Reconstruct) {
        o.reconstructions = static_cast<int>(state.range(2));
        if (state.range(3)) o.precision = SrcnnPrecision::Fastest;
    }
    Context ctx;
    ctx.backend = Backend::Cuda;
    ctx.cuda_stream = st.get();
    ub::time_device(state, st.get(), [&](std::int64_t) { nlm_fuse(v, out.view(), o, ctx); });
    ub::set_rates(state, 4.0 * w * h, double(w) * h * (n + 4));
}
void Cuda_Nlmsr(benchmark::State& state) { nlmsr_whole_call(state, NlmsrPost::BackProject); }
void Cuda_NlmsrReconstruct(benchmark::State& state) {
    nlmsr_whole_call(state, NlmsrPost::Reconstruct);
}
BENCHMARK(Cuda_Nlmsr)
    ->ArgNames({"frames", "search"})
    ->Args({5, 5})
    ->Args({5, 3})
    ->UseManualTime()
    ->MinTime(0.2);
BENCHMARK(Cuda_NlmsrReconstruct)
    ->ArgNames({"frames", "search", "rounds", "fastest"})
    ->Args({5, 3, 10, 0})
    ->Args({5, 3, 10, 1})
    ->Args({5, 3, 1, 0})
    ->UseManualTime()
    ->MinTime(0.2);

BENCHMARK_CAPTURE(Cuda_NlmsrFuse, simple, NlmsrVariant::Simple)
    ->ArgNames({"frames", "w", "h", "search"})
    ->Args({4, 256, 256, 5})
    ->UseManualTime()
    ->MinTime(0.2);
BENCHMARK_CAPTURE(Cuda_NlmsrFuse, shared, NlmsrVariant::Shared)
    ->ArgNames({"frames", "w", "h", "search"})
    ->Args({4, 256, 256, 5})
    ->UseManualTime()
    ->MinTime(0.2);
BENCHMARK_CAPTURE(Cuda_NlmsrFuse, fast, NlmsrVariant::Fast)
    ->ArgNames({"frames", "w", "h", "search"})
    ->Args({4, 256, 256, 5})
    ->Args({5, 1920, 1080, 5})
    ->Args({5, 1920, 1080, 11})
    ->Args({5, 1920, 1080, 21})
    ->Args({2, 1920, 1080, 5})
    ->Args({8, 1920, 1080, 5})
    ->Args({16, 1920, 1080, 5})
    ->UseManualTime()
    ->MinTime(0.2);
BENCHMARK(Cuda_NlmsrSharedBlock)
    ->ArgNames({"bx", "by", "bz"})
    ->Args({8, 8, 4})  // the paper's (Fermi)
    ->Args({8, 8, 1})
    ->Args({8, 8, 2})
    ->Args({16, 8, 1})
    ->Args({16, 8, 2})
    ->Args({16, 8, 4})
    ->Args({16, 16, 1})
    ->Args({16, 16, 2})
    ->Args({16, 16, 4})
    ->Args({32, 4, 1})
    ->Args({32, 4, 4})
    ->Args({32, 8, 1})
    ->Args({32, 8, 2})
    ->Args({32, 8, 4})
    ->UseManualTime()
    ->MinTime(0.1);
#endif

}  // namespace
