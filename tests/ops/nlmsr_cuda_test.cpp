// upres::nlm_fuse on the cuda backend: every variant of the fusion (simple, shared at several
// block shapes, fast) against the reference on random planes at awkward sizes and device
// sub-views, the whole call against the cpu backend on real photo sequences (gray and colour),
// device-resident frames and outputs against staged host frames, post reconstruct against the
// cpu backend, and the shared variant's refusal
// of tiles larger than shared memory (GPU suite; skips visibly without a device).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include <upres/metrics.hpp>
#include <upres/nlmsr.hpp>
#include "nlmsr_test_util.hpp"
#include "test_util.hpp"

namespace upres {
namespace {

using test::ctx_of;
using test::images_near;
using U8 = std::uint8_t;

constexpr double kFuseTol = 0.02;  // 8-bit levels (upres/nlmsr.hpp)

struct Variant {
    NlmsrVariant v;
    int bx, by, bz;
};
const Variant kVariants[] = {{NlmsrVariant::Simple, 8, 8, 4},
                             {NlmsrVariant::Shared, 8, 8, 4},
                             {NlmsrVariant::Shared, 16, 16, 1},
                             {NlmsrVariant::Shared, 8, 4, 3},
                             {NlmsrVariant::Fast, 8, 8, 4}};

// Device copies of host views, each a sub-view of a wider device image.
struct DevicePlanes {
    std::vector<Image<float>> owners;
    std::vector<Span2D<const float>> spans;
};
DevicePlanes to_device(const std::vector<ImageView<const float>>& views) {
    DevicePlanes d;
    for (const auto& v : views) {
        d.owners.emplace_back(v.width() + 4, v.height() + 1, 1, Location::Device);
        const ImageView<float> sub = d.owners.back().view().sub(4, 1, v.width(), v.height());
        copy(v, sub);
        d.spans.push_back(span_of(ImageView<const float>(sub)));
    }
    return d;
}

TEST(NlmsrCuda, EveryVariantMatchesTheReference) {
    UPRES_REQUIRE_GPU();
    std::uint32_t seed = 500;
    struct Case {
        int n, w, h, patch, search;
    };
    for (const Case c : {Case{4, 37, 23, 13, 5}, Case{1, 13, 70, 5, 3}, Case{5, 96, 9, 7, 11},
                         Case{3, 33, 35, 9, 1}, Case{2, 64, 40, 1, 7},
                         // The largest patch and search window.
                         Case{1, 64, 40, 31, 3}, Case{2, 50, 45, 3, 41},
                         // The fast variant's blocks of 4 warps, with frame and search-row
                         // groups, and enough of them for one group (outputs written directly).
                         Case{2, 2000, 1030, 5, 3}, Case{1, 4100, 2100, 1, 3}}) {
        const test::Planes p = test::random_planes(c.n, c.w, c.h, seed += 10);
        const test::Planes e = test::random_planes(1, c.w, c.h, seed + 5);
        const DevicePlanes dp = to_device(p.views), de = to_device(e.views);
        for (double sigma : {4.0, 15.0, 60.0}) {
            NlmsrPlan plan = test::plan_of(c.patch, c.search, sigma);
            Image<float> want(c.w, c.h, 1);
            ref::nlm_fuse(p.spans(), span_of(e.views[0]), span_of(want.view()), plan);
            for (const Variant& v : kVariants) {
                plan.block_x = v.bx;
                plan.block_y = v.by;
                plan.block_z = v.bz;
                Image<float> out(c.w + 2, c.h, 1, Location::Device);
                const ImageView<float> ov = out.view().sub(1, 0, c.w, c.h);
#if UPRES_HAVE_CUDA  // (the test has skipped already in builds without CUDA)
                cuda::nlm_fuse(dp.spans, de.spans[0], span_of(ov), plan, v.v, nullptr);
#endif
                const Image<float> got = clone(ImageView<const float>(ov));
                EXPECT_TRUE(images_near(got.view(), want.view(), kFuseTol))
                    << to_string(v.v) << " " << v.bx << "x" << v.by << "x" << v.bz << " | " << c.w
                    << " x " << c.h << " n " << c.n << " patch " << c.patch << " search "
                    << c.search << " sigma " << sigma;
            }
        }
    }
}

TEST(NlmsrCuda, WholeCallMatchesTheCpuOnPhotos) {
    UPRES_REQUIRE_GPU();
    const test::Sequence s = test::photo_sequence("building.jpg", 4, 1, 45, 31, 2, 6.0, 3);
    const auto views = s.views();
    for (const NlmsrVariant v : {NlmsrVariant::Simple, NlmsrVariant::Shared, NlmsrVariant::Fast}) {
        NlmsrOptions o;
        o.variant = v;
        o.iterations = 2;
        Image<U8> a(90, 62, 1), b(90, 62, 1);
        NlmsrOptions oc = o;
        oc.variant = NlmsrVariant::Fast;
        nlm_fuse(views, a.view(), oc, ctx_of(Backend::Cpu));
        nlm_fuse(views, b.view(), o, ctx_of(Backend::Cuda));
        EXPECT_TRUE(images_near(a.view(), b.view(), 1.0)) << to_string(v);
    }
    // Colour: Y through the fusion, Cb / Cr of the reference.
    std::vector<AnyImage> rgb;
    for (const auto& f : s.frames) {
        rgb.emplace_back(test::rgb_of(f));
    }
    const AnyImage a = nlm_fuse(rgb, {}, ctx_of(Backend::Cpu));
    const AnyImage b = nlm_fuse(rgb, {}, ctx_of(Backend::Cuda));
    EXPECT_TRUE(images_near(std::get<Image<U8>>(a.variant()).view(),
                            std::get<Image<U8>>(b.variant()).view(), 1.0));
}

// Device copies of host frames, each a sub-view of a wider device image.
struct DeviceFrames {
    std::vector<Image<U8>> owners;
    std::vector<ImageView<const U8>> views;
};
DeviceFrames device_frames(const std::vector<Image<U8>>& frames) {
    DeviceFrames d;
    for (const auto& f : frames) {
        d.owners.emplace_back(f.width() + 3, f.height() + 2, f.channels(), Location::Device);
        const ImageView<U8> sub = d.owners.back().view().sub(2, 1, f.width(), f.height());
        copy(f.view(), sub);
        d.views.push_back(sub);
    }
    return d;
}

// The whole pipeline runs on the device for device frames and for staged host frames alike:
// the same bits, whichever memory the frames and the output are in.
TEST(NlmsrCuda, DeviceFramesGiveTheStagedResult) {
    UPRES_REQUIRE_GPU();
    const test::Sequence s = test::photo_sequence("building.jpg", 5, 2, 45, 31, 2, 5.0, 12);
    std::vector<Image<U8>> rgb;
    for (const auto& f : s.frames) rgb.push_back(test::rgb_of(f));
    const std::vector<Image<U8>>& colour = rgb;
    for (const auto* frames : {&s.frames, &colour}) {
        const int c = (*frames)[0].channels();
        std::vector<ImageView<const U8>> host;
        for (const auto& f : *frames) host.push_back(f.view());
        const DeviceFrames dev = device_frames(*frames);
        NlmsrOptions o;
        o.search = 5;
        Image<U8> staged(90, 62, c), to_host(90, 62, c), wide(93, 63, c, Location::Device);
        const ImageView<U8> on_device = wide.view().sub(1, 1, 90, 62);
        nlm_fuse(host, staged.view(), o, ctx_of(Backend::Cuda));
        nlm_fuse(dev.views, to_host.view(), o, ctx_of(Backend::Cuda));
        nlm_fuse(dev.views, on_device, o, ctx_of(Backend::Auto));
        EXPECT_TRUE(images_near(to_host.view(), staged.view(), 0.0)) << c << " channels";
        EXPECT_TRUE(images_near(clone(ImageView<const U8>(on_device)).view(), staged.view(), 0.0))
            << c << " channels";
        // And within 1 LSB of the cpu backend.
        Image<U8> cpu(90, 62, c);
        nlm_fuse(host, cpu.view(), o, ctx_of(Backend::Cpu));
        EXPECT_TRUE(images_near(cpu.view(), staged.view(), 1.0)) << c << " channels";
    }
    // Where the memory does not fit the backend.
    const DeviceFrames dev = device_frames(s.frames);
    std::vector<ImageView<const U8>> mixed = dev.views;
    mixed[1] = s.frames[1].view();
    Image<U8> out(90, 62, 1), dout(90, 62, 1, Location::Device);
    test::expect_error([&] { nlm_fuse(dev.views, out.view(), {}, ctx_of(Backend::Cpu)); },
                       ErrorCode::InvalidArgument, "device");
    test::expect_error([&] { nlm_fuse(mixed, out.view(), {}, ctx_of(Backend::Cuda)); },
                       ErrorCode::InvalidArgument, "all frames in one place");
    test::expect_error([&] { nlm_fuse(s.views(), dout.view(), {}, ctx_of(Backend::Cpu)); },
                       ErrorCode::InvalidArgument, "allowed with the cuda backend");
}

// post Reconstruct (SRCNN start, the camera model, every phase fused on the input grid) on the
// device against the cpu backend: gray f32, colour u8 at scale 3, device frames.
TEST(NlmsrCuda, ReconstructionMatchesTheCpu) {
    UPRES_REQUIRE_GPU();
    const test::Sequence s = test::photo_sequence("building.jpg", 4, 1, 45, 31, 2, 4.0, 5);
    NlmsrOptions o;
    o.post = NlmsrPost::Reconstruct;
    const auto [f32, rgb] = test::typed_frames(s);
    const AnyImage a = nlm_fuse(f32, o, ctx_of(Backend::Cpu));
    const AnyImage b = nlm_fuse(f32, o, ctx_of(Backend::Cuda));
    EXPECT_TRUE(images_near(std::get<Image<float>>(a.variant()).view(),
                            std::get<Image<float>>(b.variant()).view(), 0.1 / 255.0));
    o.scale = 3;
    o.psf_sigma = 1.1;
    const AnyImage ac = nlm_fuse(rgb, o, ctx_of(Backend::Cpu));
    const AnyImage bc = nlm_fuse(rgb, o, ctx_of(Backend::Cuda));
    EXPECT_TRUE(images_near(std::get<Image<U8>>(ac.variant()).view(),
                            std::get<Image<U8>>(bc.variant()).view(), 1.0));
    o = {};
    o.post = NlmsrPost::Reconstruct;
    const DeviceFrames dev = device_frames(s.frames);
    Image<U8> staged(90, 62, 1), from_device(90, 62, 1);
    nlm_fuse(s.views(), staged.view(), o, ctx_of(Backend::Cuda));
    nlm_fuse(dev.views, from_device.view(), o, ctx_of(Backend::Cuda));
    EXPECT_TRUE(images_near(from_device.view(), staged.view(), 0.0));
}

// post Reconstruct with SRCNN at its fastest precision (the start in fp16 or bf16): within
// 0.05 dB of the fp32 start on a real photo sequence; the cpu backend refuses it by name.
TEST(NlmsrCuda, ReconstructionAtTheFastestPrecision) {
    UPRES_REQUIRE_GPU();
    const test::Sequence s = test::photo_sequence("building.jpg", 5, 2, 64, 48, 2, 4.0, 12);
    NlmsrOptions o;
    o.post = NlmsrPost::Reconstruct;
    o.psf_sigma = 0.0;  // these frames' camera (docs/ops/nlmsr.md)
    Image<U8> fp32(128, 96, 1), fast(128, 96, 1);
    nlm_fuse(s.views(), fp32.view(), o, ctx_of(Backend::Cuda));
    o.precision = SrcnnPrecision::Fastest;
    nlm_fuse(s.views(), fast.view(), o, ctx_of(Backend::Cuda));
    const double a = psnr(ImageView<const U8>(fp32.view()), ImageView<const U8>(s.truth.view())),
                 b = psnr(ImageView<const U8>(fast.view()), ImageView<const U8>(s.truth.view()));
    EXPECT_NEAR(a, b, 0.05) << "fp32 " << a << " dB, fastest " << b << " dB";
    EXPECT_GT(b, 30.0);
    test::expect_error([&] { nlm_fuse(s.views(), fast.view(), o, ctx_of(Backend::Cpu)); },
                       ErrorCode::InvalidArgument, "fp32");
}

TEST(NlmsrCuda, SharedVariantRefusesTilesBeyondSharedMemory) {
    UPRES_REQUIRE_GPU();
    const test::Sequence s = test::photo_sequence("building.jpg", 64, 0, 40, 30, 2, 2.0, 9);
    const auto views = s.views();
    NlmsrOptions o;
    o.variant = NlmsrVariant::Shared;
    o.patch = 31;
    o.search = 41;
    o.block_x = o.block_y = 16;
    Image<U8> out(80, 60, 1);
    test::expect_error([&] { nlm_fuse(views, out.view(), o, ctx_of(Backend::Cuda)); },
                       ErrorCode::InvalidArgument, "bytes of shared memory");
}

}  // namespace
}  // namespace upres
