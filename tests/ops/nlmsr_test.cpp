// upres::nlm_fuse (upres/nlmsr.hpp): the reference against the NumPy model
// (tools/golden/gen_nlmsr.py: the fusion and the whole pipeline), properties of eq. (5), the
// cpu backend against the reference (random planes at awkward sizes and sub-views, thread
// counts, real photo sequences in every pixel type), the multi-frame gain on a real photo, bad
// input.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <upres/metrics.hpp>
#include <upres/nlmsr.hpp>
#include <upres/srcnn.hpp>
#include "nlmsr_test_util.hpp"
#include "test_util.hpp"

#include "ops/nlmsr/nlmsr_backends.hpp"

namespace upres {
namespace {

using test::ctx_of;
using test::expect_error;
using test::images_near;
using U8 = std::uint8_t;

// The fused luma of the fast backends against the reference: float distances and weights.
constexpr double kFuseTol = 0.02;  // 8-bit levels

std::vector<ImageView<const float>> stacked(const Image<float>& s, int n) {
    std::vector<ImageView<const float>> v;
    const int h = s.height() / n;
    for (int i = 0; i < n; ++i)
        v.push_back(ImageView<const float>(s.view()).sub(0, i * h, s.width(), h));
    return v;
}

TEST(Nlmsr, ReferenceFusionMatchesNumpy) {
    const Image<float> f = test::load_golden<float>("nlmsr/fusion_frames.npy");
    const Image<float> e = test::load_golden<float>("nlmsr/fusion_estimate.npy");
    const Image<float> want = test::load_golden<float>("nlmsr/fusion_out.npy");
    std::vector<Span2D<const float>> spans;
    for (const auto& v : stacked(f, 3)) spans.push_back(span_of(v));
    Image<float> got(e.width(), e.height(), 1);
    ref::nlm_fuse(spans, span_of(ImageView<const float>(e.view())), span_of(got.view()),
                  test::plan_of(5, 3, 10.0));
    EXPECT_TRUE(images_near(got.view(), want.view(), 1e-3));
}

TEST(Nlmsr, ReferencePipelineMatchesNumpy) {
    const Image<float> f = test::load_golden<float>("nlmsr/pipeline_frames.npy");
    const Image<float> want = test::load_golden<float>("nlmsr/pipeline_out.npy");
    NlmsrOptions o;
    o.scale = 2;
    o.reference = 1;
    o.patch = 7;
    o.search = 5;
    o.sigma = 8.0;
    o.iterations = 2;
    o.back_projections = 2;
    const auto views = stacked(f, 4);
    Image<float> got(want.width(), want.height(), 1);
    nlm_fuse(views, got.view(), o, ctx_of(Backend::Reference));
    EXPECT_TRUE(images_near(got.view(), want.view(), 2e-5));
}

TEST(Nlmsr, ReferenceReconstructionMatchesNumpy) {
    const Image<float> f = test::load_golden<float>("nlmsr/pipeline_frames.npy");
    const Image<float> want = test::load_golden<float>("nlmsr/reconstruct_out.npy");
    NlmsrOptions o;
    o.scale = 2;
    o.reference = 1;
    o.patch = 7;
    o.search = 3;
    o.sigma = 8.0;
    o.iterations = 2;
    o.post = NlmsrPost::Reconstruct;
    o.psf_sigma = 0.5;
    o.reconstructions = 4;
    o.model = test::data_path("nlmsr/recon_x2.srcnn");
    const auto views = stacked(f, 4);
    Image<float> got(want.width(), want.height(), 1);
    nlm_fuse(views, got.view(), o, ctx_of(Backend::Reference));
    EXPECT_TRUE(images_near(got.view(), want.view(), 2e-5));
}

// The camera model: its taps sum to 1, the transpose is its adjoint away from the borders,
// and the cpu backend's float filter matches the reference's double one.
TEST(Nlmsr, CameraModel) {
    for (int s = 2; s <= 4; ++s)
        for (double sigma : {0.0, 0.5, 1.3, 2.0}) {
            const nlmsr::PsfTaps t = nlmsr::psf_taps(s, sigma, false);
            double sum = 0.0;
            for (int j = 0; j < t.len; ++j) sum += t.k[j];
            EXPECT_NEAR(sum, 1.0, 1e-6) << s << " " << sigma;
            ASSERT_LE(t.len, nlmsr::kMaxPsfTaps);
        }
    const int w = 61, h = 47;
    const Image<float> x = test::random_image<float>(w, h, 1, 5, 0.0, 255.0);
    Image<float> r = test::random_image<float>(w, h, 1, 6, 0.0, 255.0);
    const int m = 12;  // the residual zero near the borders, where reflection breaks adjointness
    for (int y = 0; y < h; ++y)
        for (int i = 0; i < w; ++i)
            if (y < m || y >= h - m || i < m || i >= w - m) r.view()(i, y) = 0.0f;
    for (int s = 2; s <= 3; ++s) {
        auto apply = [&](const Image<float>& in, bool tr, bool cpu) {
            const nlmsr::PsfTaps t = nlmsr::psf_taps(s, 0.5, tr);
            Image<float> tmp(w, h, 1), out(w, h, 1);
            auto run = [&](const Image<float>& a, Image<float>& b, int axis) {
                const Span2D<const float> ia = span_of(ImageView<const float>(a.view()));
                if (cpu)
                    cpu::nlm_psf(ia, span_of(b.view()), t, axis, 2);
                else
                    ref::nlm_psf(ia, span_of(b.view()), t, axis);
            };
            run(in, tmp, 0);
            run(tmp, out, 1);
            return out;
        };
        const Image<float> px = apply(x, false, false), ptr = apply(r, true, false);
        double a = 0.0, b = 0.0;
        for (int y = 0; y < h; ++y)
            for (int i = 0; i < w; ++i) {
                a += double(px.view()(i, y)) * r.view()(i, y);
                b += double(x.view()(i, y)) * ptr.view()(i, y);
            }
        EXPECT_NEAR(a, b, 1e-5 * std::abs(a)) << "scale " << s;
        EXPECT_TRUE(images_near(apply(x, false, true).view(), px.view(), 1e-3));
        EXPECT_TRUE(images_near(apply(r, true, true).view(), ptr.view(), 1e-3));
    }
}

TEST(Nlmsr, FusionProperties) {
    const test::Planes p = test::random_planes(3, 19, 14, 70);
    const auto spans = p.spans();
    const Span2D<const float> est = spans[1];
    for (Backend b : {Backend::Reference, Backend::Cpu}) {
        auto fuse = [&](const std::vector<Span2D<const float>>& fr, const NlmsrPlan& plan) {
            Image<float> z(19, 14, 1);
            if (b == Backend::Reference)
                ref::nlm_fuse(fr, est, span_of(z.view()), plan);
            else
                cpu::nlm_fuse(fr, est, span_of(z.view()), plan, 2);
            return z;
        };
        // Equal weights (sigma -> infinity): the mean of the candidates in the search window.
        NlmsrPlan flat = test::plan_of(5, 3, 1.0);
        flat.neg_inv = 0.0;
        const Image<float> m = fuse(spans, flat);
        for (int y = 0; y < 14; ++y)
            for (int x = 0; x < 19; ++x) {
                double s = 0;
                int k = 0;
                for (const auto& u : spans)
                    for (int oy = -1; oy <= 1; ++oy)
                        for (int ox = -1; ox <= 1; ++ox)
                            if (x + ox >= 0 && x + ox < 19 && y + oy >= 0 && y + oy < 14) {
                                s += u(x + ox, y + oy);
                                ++k;
                            }
                ASSERT_NEAR(m.view()(x, y), s / k, 1e-3)
                    << to_string(b) << " x " << x << " y " << y;
            }
        // sigma -> 0 with the estimate among the frames: only its own pixel counts.
        const Image<float> z = fuse({est}, test::plan_of(5, 3, 1e-3));
        for (int y = 0; y < 14; ++y)
            for (int x = 0; x < 19; ++x) ASSERT_EQ(z.view()(x, y), est(x, y)) << to_string(b);
    }
    // Frames equal to a constant: the constant.
    std::vector<U8> px(16 * 12, 77);
    const ImageView<const U8> cst(px.data(), 16, 12, 1);
    const std::vector<ImageView<const U8>> same{cst, cst, cst};
    for (Backend b : {Backend::Reference, Backend::Cpu}) {
        Image<U8> out(32, 24, 1);
        nlm_fuse(same, out.view(), {}, ctx_of(b));
        for (int y = 0; y < 24; ++y)
            for (int x = 0; x < 32; ++x) ASSERT_EQ(out.view()(x, y), 77) << to_string(b);
    }
}

TEST(Nlmsr, CpuFusionMatchesTheReference) {
    std::uint32_t seed = 300;
    struct Case {
        int n, w, h, patch, search;
    };
    for (const Case c : {Case{3, 37, 23, 13, 5}, Case{1, 13, 40, 5, 3}, Case{4, 64, 9, 7, 7},
                         Case{2, 20, 20, 1, 1}, Case{5, 33, 35, 9, 11}}) {
        const test::Planes p = test::random_planes(c.n, c.w, c.h, seed += 10);
        const test::Planes e = test::random_planes(1, c.w, c.h, seed + 5);
        for (double sigma : {4.0, 15.0}) {
            const NlmsrPlan plan = test::plan_of(c.patch, c.search, sigma);
            Image<float> want(c.w, c.h, 1);
            ref::nlm_fuse(p.spans(), span_of(e.views[0]), span_of(want.view()), plan);
            for (int threads : {1, 3}) {
                Image<float> got(c.w + 3, c.h, 1);  // a sub-view output
                const ImageView<float> gv = got.view().sub(2, 0, c.w, c.h);
                cpu::nlm_fuse(p.spans(), span_of(e.views[0]), span_of(gv), plan, threads);
                EXPECT_TRUE(images_near(ImageView<const float>(gv), want.view(), kFuseTol))
                    << c.w << " x " << c.h << " n " << c.n << " patch " << c.patch << " search "
                    << c.search << " sigma " << sigma << " threads " << threads;
            }
        }
    }
}

// The whole call on real photo sequences, every pixel type, gray and colour.
TEST(Nlmsr, CpuMatchesTheReferenceOnPhotos) {
    const test::Sequence s = test::photo_sequence("butterfly.jpg", 3, 1, 30, 22, 2, 5.0, 7);
    NlmsrOptions o;
    o.patch = 7;
    const auto views = s.views();
    Image<U8> a(60, 44, 1), b(60, 44, 1);
    nlm_fuse(views, a.view(), o, ctx_of(Backend::Reference));
    nlm_fuse(views, b.view(), o, ctx_of(Backend::Cpu));
    EXPECT_TRUE(images_near(a.view(), b.view(), 1.0));
    // u16 and f32 of the same frames, and an RGB sequence (colour through Y).
    std::vector<AnyImage> f16, f32, rgb;
    for (const auto& f : s.frames) {
        Image<std::uint16_t> u(f.width(), f.height(), 1);
        Image<float> v(f.width(), f.height(), 1);
        convert(ImageView<const U8>(f.view()), u.view());
        convert(ImageView<const U8>(f.view()), v.view());
        f16.emplace_back(std::move(u));
        f32.emplace_back(std::move(v));
        rgb.emplace_back(test::rgb_of(f));
    }
    for (const auto* seq : {&f16, &f32, &rgb}) {
        const AnyImage r = nlm_fuse(*seq, o, ctx_of(Backend::Reference));
        const AnyImage c = nlm_fuse(*seq, o, ctx_of(Backend::Cpu));
        ASSERT_EQ(r.width(), 60);
        ASSERT_EQ(r.channels(), (*seq)[0].channels());
        std::visit(
            [&](const auto& ri) {
                using I = std::remove_cvref_t<decltype(ri)>;
                const I& ci = std::get<I>(c.variant());
                const double tol = r.pixel_type() == PixelType::U8    ? 1.0
                                   : r.pixel_type() == PixelType::U16 ? 257.0 * kFuseTol * 4
                                                                      : kFuseTol * 4 / 255.0;
                EXPECT_TRUE(images_near(ri.view(), ci.view(), tol)) << to_string(r.pixel_type());
            },
            r.variant());
    }
}

double psnr_u8(const Image<U8>& a, const Image<U8>& b) {
    return psnr(ImageView<const U8>(a.view()), ImageView<const U8>(b.view()));
}

// Noisy frames of a real photo: NLM-SR beats bicubic of the reference frame, and all the
// frames beat the reference frame alone (the same engine).
TEST(Nlmsr, FramesEarnTheirKeepOnARealPhoto) {
    const test::Sequence s = test::photo_sequence("building.jpg", 5, 2, 64, 48, 2, 8.0, 11);
    const auto views = s.views();
    NlmsrOptions o;
    Image<U8> all(128, 96, 1), one(128, 96, 1);
    nlm_fuse(views, all.view(), o, ctx_of(Backend::Cpu));
    const std::vector<ImageView<const U8>> ref_only{views[2]};
    NlmsrOptions o1 = o;
    o1.sigma = nlmsr_sigma(AnyImage(clone(views[2])), o);  // the same weights
    o1.reference = 0;
    nlm_fuse(ref_only, one.view(), o1, ctx_of(Backend::Cpu));
    const AnyImage bic = bicubic_resize(AnyImage(clone(views[2])), 2.0);
    const double p_all = psnr_u8(all, s.truth), p_one = psnr_u8(one, s.truth),
                 p_bic = psnr_u8(std::get<Image<U8>>(bic.variant()), s.truth);
    EXPECT_GT(p_all, p_bic + 0.5) << "nlm " << p_all << " dB, bicubic " << p_bic << " dB";
    EXPECT_GT(p_all, p_one + 0.2) << "5 frames " << p_all << " dB, 1 frame " << p_one << " dB";
}

// post Reconstruct on the cpu backend against the reference: a real photo sequence (gray f32
// out, and colour u8) and random frames at an awkward size and scale 3.
TEST(Nlmsr, CpuReconstructionMatchesTheReference) {
    const test::Sequence s = test::photo_sequence("butterfly.jpg", 3, 1, 30, 22, 2, 4.0, 9);
    NlmsrOptions o;
    o.post = NlmsrPost::Reconstruct;
    const auto [f32, rgb] = test::typed_frames(s);
    const AnyImage r = nlm_fuse(f32, o, ctx_of(Backend::Reference));
    const AnyImage c = nlm_fuse(f32, o, ctx_of(Backend::Cpu, 2));
    EXPECT_TRUE(images_near(std::get<Image<float>>(r.variant()).view(),
                            std::get<Image<float>>(c.variant()).view(), 0.05 / 255.0));
    const AnyImage rc = nlm_fuse(rgb, o, ctx_of(Backend::Reference));
    const AnyImage cc = nlm_fuse(rgb, o, ctx_of(Backend::Cpu));
    EXPECT_TRUE(images_near(std::get<Image<U8>>(rc.variant()).view(),
                            std::get<Image<U8>>(cc.variant()).view(), 1.0));
    std::vector<Image<float>> rnd;
    for (int i = 0; i < 3; ++i)
        rnd.push_back(test::random_image<float>(13, 11, 1, 40 + i, 0.05, 0.95));
    const std::vector<ImageView<const float>> rv{rnd[0].view(), rnd[1].view(), rnd[2].view()};
    o.scale = 3;
    o.patch = 9;
    o.psf_sigma = 1.3;
    o.reconstructions = 3;
    Image<float> a(39, 33, 1), b(39, 33, 1);
    nlm_fuse(rv, a.view(), o, ctx_of(Backend::Reference));
    nlm_fuse(rv, b.view(), o, ctx_of(Backend::Cpu, 3));
    EXPECT_TRUE(images_near(a.view(), b.view(), 0.05 / 255.0));
}

// The reconstruction on noisy frames of a real photo (noise 4; each frame's pixel the mean of
// 2 x 2 pixels, no optical blur: psf_sigma 0 is the camera model of these frames): the frames
// earn their keep (at least 0.3 dB over the same engine on the reference frame alone) and the
// result beats SRCNN on the reference frame.
TEST(Nlmsr, ReconstructionFramesEarnTheirKeep) {
    const test::Sequence s = test::photo_sequence("building.jpg", 5, 2, 64, 48, 2, 4.0, 12);
    const auto views = s.views();
    NlmsrOptions o;
    o.post = NlmsrPost::Reconstruct;
    o.psf_sigma = 0.0;
    Image<U8> all(128, 96, 1), one(128, 96, 1);
    nlm_fuse(views, all.view(), o, ctx_of(Backend::Cpu));
    const std::vector<ImageView<const U8>> ref_only{views[2]};
    NlmsrOptions o1 = o;
    o1.sigma = nlmsr_sigma(AnyImage(clone(views[2])), o);
    o1.reference = 0;
    nlm_fuse(ref_only, one.view(), o1, ctx_of(Backend::Cpu));
    const Image<U8> sr = srcnn_upscale(views[2], load_default_srcnn_model(2));
    const double p_all = psnr_u8(all, s.truth), p_one = psnr_u8(one, s.truth),
                 p_sr = psnr_u8(sr, s.truth);
    EXPECT_GT(p_all, p_one + 0.3) << "5 frames " << p_all << " dB, 1 frame " << p_one << " dB";
    EXPECT_GT(p_all, p_sr) << "nlm " << p_all << " dB, srcnn " << p_sr << " dB";
}

TEST(Nlmsr, BadInputIsRefused) {
    const Image<U8> a = test::random_image<U8>(20, 16, 1, 1, 1, 255);
    const Image<U8> b = test::random_image<U8>(21, 16, 1, 2, 1, 255);
    const Image<U8> c3 = test::random_image<U8>(20, 16, 3, 3, 1, 255);
    const Image<U8> c2 = test::random_image<U8>(20, 16, 2, 4, 1, 255);
    Image<U8> out(40, 32, 1);
    const auto inv = ErrorCode::InvalidArgument;
    auto call = [&](std::vector<ImageView<const U8>> f, NlmsrOptions o = {},
                    ImageView<U8> dst = {}) {
        nlm_fuse(f, dst.data() ? dst : out.view(), o, ctx_of(Backend::Cpu));
    };
    expect_error([&] { call({a.view(), b.view()}); }, inv, "frame 1 is 21 x 16");
    expect_error([&] { call({a.view(), c3.view()}); }, inv, "one size and channel count");
    expect_error([&] { call({c2.view()}, {}, Image<U8>(40, 32, 2).view()); }, inv,
                 "allowed: 1 gray, 3 RGB");
    expect_error([&] { call({}); }, inv, "0 frames given (allowed: 1 to 64)");
    NlmsrOptions o;
    o.reference = 2;
    expect_error([&] { call({a.view(), a.view()}, o); }, inv, "reference 2 is out of range");
    o = {};
    o.patch = 4;
    expect_error([&] { call({a.view()}, o); }, inv, "patch 4 must be odd, 1 to 31");
    o.patch = 0;
    expect_error([&] { call({a.view()}, o); }, inv, "patch 0 must be odd");
    o = {};
    o.search = 41;
    expect_error([&] { call({a.view()}, o); }, inv, "larger than the 40 x 32 output");
    o = {};
    o.scale = 5;
    expect_error([&] { call({a.view()}, o); }, inv, "allowed: 2, 3, 4");
    o = {};
    o.sigma = 0.1;
    expect_error([&] { call({a.view()}, o); }, inv, "sigma 0.1 is not allowed");
    o = {};
    o.variant = NlmsrVariant::Shared;
    expect_error([&] { call({a.view()}, o); }, inv, "is a cuda variant");
    expect_error([&] { call({a.view()}, {}, Image<U8>(41, 32, 1).view()); }, inv,
                 "must be 40 x 32");
    Image<float> nan(20, 16, 1);
    for (int y = 0; y < 16; ++y)
        for (int x = 0; x < 20; ++x) nan.view()(x, y) = 0.5f;
    nan.view()(3, 5) = std::numeric_limits<float>::quiet_NaN();
    Image<float> fo(40, 32, 1);
    const std::vector<ImageView<const float>> nf{nan.view()};
    expect_error([&] { nlm_fuse(nf, fo.view()); }, inv, "non-finite value at x 3, y 5");
    std::vector<AnyImage> mixed;
    mixed.emplace_back(clone(a.view()));
    mixed.emplace_back(Image<float>(20, 16, 1));
    expect_error([&] { nlm_fuse(mixed); }, inv, "frame 1 is f32 but frame 0 is u8");
    o = {};
    o.post = NlmsrPost::Reconstruct;
    o.psf_sigma = 2.5;
    expect_error([&] { call({a.view()}, o); }, inv, "psf_sigma 2.5 is outside [0, 2]");
    o.psf_sigma = 0.5;
    o.reconstructions = 0;
    expect_error([&] { call({a.view()}, o); }, inv, "reconstructions 0 is outside [1, 50]");
    o.reconstructions = 10;
    o.scale = 3;
    o.model = test::data_path("nlmsr/recon_x2.srcnn");
    expect_error([&] { call({a.view()}, o, Image<U8>(60, 48, 1).view()); }, inv,
                 "is for x2, not scale 3");
    o.model.clear();
    o.scale = 2;
    o.precision = SrcnnPrecision::Fp16;
    expect_error([&] { call({a.view()}, o); }, inv, "precision fp16 needs the cuda backend");
    o = {};
    o.post = NlmsrPost::Reconstruct;
    const Image<U8> tiny = test::random_image<U8>(8, 6, 1, 7, 1, 255);
    o.patch = 5;
    o.search = 3;
    expect_error([&] { call({tiny.view()}, o, Image<U8>(16, 12, 1).view()); }, inv,
                 "receptive field");
    // One frame is single-image NLM up-scaling.
    call({a.view()});
}

}  // namespace
}  // namespace upres
