// The stated working sets (docs/reliability.md, "Working sets"): the host memory each operation's
// cpu backend allocates beyond its input and output, measured by counting every operator new of
// the process (this file replaces them) during one call, at two sizes, against the bound the
// docs state.
#include <gtest/gtest.h>

#include <malloc.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <new>
#include <random>
#include <span>
#include <string>
#include <vector>

#include <upres/brisque.hpp>
#include <upres/bspline.hpp>
#include <upres/context.hpp>
#include <upres/image.hpp>
#include <upres/metrics.hpp>
#include <upres/nlmsr.hpp>
#include <upres/seabi.hpp>
#include <upres/srcnn.hpp>
#include <upres/stereo.hpp>
#include <upres/warp.hpp>

#include "core/host_scratch.hpp"
#include "random_srcnn.hpp"
#include "test_util.hpp"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define UPRES_SANITIZER_BUILD 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define UPRES_SANITIZER_BUILD 1
#endif
#endif

namespace {

std::atomic<std::int64_t> g_current{0}, g_peak{0};

void* counted(std::size_t n, std::size_t align, bool nothrow) {
    if (n == 0) n = 1;
    void* p = align > alignof(std::max_align_t)
                  ? std::aligned_alloc(align, (n + align - 1) / align * align)
                  : std::malloc(n);
    if (p == nullptr) {
        if (nothrow) return nullptr;
        throw std::bad_alloc();
    }
    const auto now = g_current.fetch_add(static_cast<std::int64_t>(malloc_usable_size(p))) +
                     static_cast<std::int64_t>(malloc_usable_size(p));
    auto peak = g_peak.load();
    while (now > peak && !g_peak.compare_exchange_weak(peak, now)) {
    }
    return p;
}

void released(void* p) noexcept {
    if (p == nullptr) return;
    g_current.fetch_sub(static_cast<std::int64_t>(malloc_usable_size(p)));
    std::free(p);
}

}  // namespace

void* operator new(std::size_t n) { return counted(n, 0, false); }
void* operator new[](std::size_t n) { return counted(n, 0, false); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return counted(n, 0, true); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return counted(n, 0, true); }
void* operator new(std::size_t n, std::align_val_t a) {
    return counted(n, static_cast<std::size_t>(a), false);
}
void* operator new[](std::size_t n, std::align_val_t a) {
    return counted(n, static_cast<std::size_t>(a), false);
}
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
    return counted(n, static_cast<std::size_t>(a), true);
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
    return counted(n, static_cast<std::size_t>(a), true);
}
void operator delete(void* p) noexcept { released(p); }
void operator delete[](void* p) noexcept { released(p); }
void operator delete(void* p, std::size_t) noexcept { released(p); }
void operator delete[](void* p, std::size_t) noexcept { released(p); }
void operator delete(void* p, std::align_val_t) noexcept { released(p); }
void operator delete[](void* p, std::align_val_t) noexcept { released(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { released(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { released(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { released(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { released(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { released(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { released(p); }

namespace upres {
namespace {

constexpr int kThreads = 2;

Context cpu() {
    Context c;
    c.backend = Backend::Cpu;
    c.threads = kThreads;
    return c;
}

// Peak bytes allocated while f runs, beyond what was allocated before it.
std::int64_t peak_during(const std::function<void()>& f) {
    host_release_cached_memory();  // cached scratch counts in the call that allocates it
    const std::int64_t base = g_current.load();
    g_peak.store(base);
    f();
    return g_peak.load() - base;
}

constexpr std::int64_t kMiB = 1 << 20;
// The constant every stated working set includes: 1 MiB + 256 KiB per thread.
constexpr std::int64_t kBase = kMiB + kThreads * (kMiB / 4);

void check(const char* op, int w, int h, std::int64_t bytes, std::int64_t bound) {
    std::printf("%-30s %4d x %-4d working set %8.3f MiB, stated %8.3f MiB (%.2f)\n", op, w, h,
                double(bytes) / kMiB, double(bound) / kMiB, double(bytes) / double(bound));
    EXPECT_LE(bytes, bound) << op << " at " << w << " x " << h;
}

TEST(WorkingSet, EveryOperationStaysWithinItsStatedBound) {
#ifdef UPRES_SANITIZER_BUILD
    // The allocation sizes do not depend on the build; a Debug sanitizer build takes 100 s here.
    GTEST_SKIP() << "measured in the release build's test stage, not under a sanitizer";
#endif
    for (const auto& [w, h] : {std::pair{256, 192}, std::pair{512, 384}}) {
        const std::int64_t px = std::int64_t{w} * h;  // input pixels
        const auto in8 = test::random_image<std::uint8_t>(w, h, 3, 1);
        const auto inf = test::random_image<float>(w, h, 3, 2);
        {
            // warp: B-spline 4 bytes per input sample (the coefficients) + 256 bytes per output
            // row and column (tap tables); other interpolations 256 bytes per output row and
            // column and channel.
            const Transform zoom = Transform::make_resize(),
                            rot = Transform::make_rotation(10, w, h);
            Image<float> out(2 * w, 2 * h, 3);
            Image<std::uint8_t> out8(2 * w, 2 * h, 3), o8(w, h, 3);
            WarpOptions o;
            const std::int64_t bs_zoom = 4 * px * 3 + 256 * (3 * w + 3 * h) + kBase;
            check("warp bspline zoom x2 f32", w, h,
                  peak_during([&] { warp(inf.view(), out.view(), zoom, o, cpu()); }), bs_zoom);
            check("warp bspline zoom x2 u8", w, h,
                  peak_during([&] { warp(in8.view(), out8.view(), zoom, o, cpu()); }), bs_zoom);
            check("warp bspline rotate u8", w, h,
                  peak_during([&] { warp(in8.view(), o8.view(), rot, o, cpu()); }),
                  4 * px * 3 + 256 * (w + h) + kBase);
            o.interp = Interp::Cubic;
            check("warp cubic rotate u8", w, h,
                  peak_during([&] { warp(in8.view(), o8.view(), rot, o, cpu()); }),
                  256 * (w + h) * 3 + kBase);
            check("warp cubic zoom x2 u8", w, h,
                  peak_during([&] { warp(in8.view(), out8.view(), zoom, o, cpu()); }),
                  256 * (2 * w + 2 * h) * 3 + kBase);
        }
        {
            Image<float> out(w, h, 3);  // the prefilter works in dst
            check("prefilter f32", w, h,
                  peak_during([&] { bspline_prefilter(inf.view(), out.view(), {}, cpu()); }),
                  kBase);
        }
        {
            const auto g = test::random_image<std::uint8_t>(w, h, 1, 3);
            Image<std::uint8_t> out(2 * w, 2 * h, 1);
            check("seabi x2", w, h,
                  peak_during([&] { seabi_upscale2(g.view(), out.view(), {}, cpu()); }),
                  2 * px + kBase);
        }
        {
            const auto l = test::random_image<std::uint8_t>(w, h, 1, 4);
            const auto r = test::random_image<std::uint8_t>(w, h, 1, 5);
            Image<float> d(w, h, 1), rd(w, h, 1);
            Image<std::uint8_t> valid(w, h, 1);
            StereoOptions so;
            for (const int D : {64, 128}) {
                so.num_disparities = D;
                so.aggregation = StereoAggregation::Gauss13;
                so.speckle_size = 50;
                // Local aggregation: 8 bytes per pixel, whatever the disparity range.
                check(D == 64 ? "stereo gauss13 D=64" : "stereo gauss13 D=128", w, h,
                      peak_during([&] {
                          stereo_disparity(l.view(), r.view(), d.view(), so, cpu(), rd.view(),
                                           valid.view());
                      }),
                      8 * px + kBase);
                // SGM: the cost volume and its path sums, 6 D + 16 bytes per pixel.
                so.aggregation = StereoAggregation::Sgm8;
                so.speckle_size = 0;
                check(D == 64 ? "stereo sgm8 D=64" : "stereo sgm8 D=128", w, h, peak_during([&] {
                          stereo_disparity(l.view(), r.view(), d.view(), so, cpu());
                      }),
                      (6 * D + 16) * px + kBase);
            }
        }
        {
            // NLM-SR: (6 F + 16) bytes per output sample for F frames.
            std::vector<Image<std::uint8_t>> fr;
            for (int i = 0; i < 5; ++i)
                fr.push_back(test::random_image<std::uint8_t>(w / 2, h / 2, 1, 6 + i));
            std::vector<ImageView<const std::uint8_t>> views;
            for (auto& f : fr) views.push_back(f.view());
            NlmsrOptions no;
            no.sigma = 10;
            no.patch = 5;
            for (const int F : {3, 5})
                for (const int scale : {2, 4}) {
                    no.scale = scale;
                    Image<std::uint8_t> out(w / 2 * scale, h / 2 * scale, 1);
                    const std::span<const ImageView<const std::uint8_t>> v(views.data(), F);
                    const std::string name =
                        "nlmsr " + std::to_string(F) + " frames x" + std::to_string(scale);
                    check(name.c_str(), w, h,
                          peak_during([&] { nlm_fuse(v, out.view(), no, cpu()); }),
                          (6 * F + 16) * std::int64_t{out.width()} * out.height() + kBase);
                }
        }
        {
            std::mt19937 rng(3);
            const SrcnnModel m = test::random_srcnn_model(rng, {9, 1, 5}, 64, 32, 0.05, 2);
            const auto p = test::random_image<float>(w, h, 1, 9);
            Image<float> out(w, h, 1);
            // The network: per-thread tiles only.
            check("srcnn network 9-1-5", w, h,
                  peak_during([&] { srcnn_forward(p.view(), out.view(), m, {}, cpu()); }), kBase);
            // The pipeline: 24 bytes per output pixel (colour planes, bicubic, the network's).
            Image<std::uint8_t> up(2 * w, 2 * h, 3);
            check("srcnn upscale x2 u8 rgb", w, h,
                  peak_during([&] { srcnn_upscale(in8.view(), up.view(), m, {}, cpu()); }),
                  24 * (4 * px) + kBase);
        }
        {
            // Metrics: both images as float (8 bytes per sample); BRISQUE 6 bytes per sample.
            const auto b8 = test::random_image<std::uint8_t>(w, h, 3, 11);
            check("psnr u8", w, h,
                  peak_during([&] { (void)psnr(in8.view(), b8.view(), {}, cpu()); }),
                  8 * px * 3 + kBase);
            check("ssim u8", w, h,
                  peak_during([&] { (void)ssim(in8.view(), b8.view(), {}, cpu()); }),
                  8 * px * 3 + kBase);
            check("brisque u8", w, h,
                  peak_during([&] { (void)brisque_features(in8.view(), cpu()); }),
                  6 * px * 3 + kBase);
        }
    }
}

}  // namespace
}  // namespace upres
