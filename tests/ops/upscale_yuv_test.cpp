// upres::upscale_yuv (upres/yuv.hpp): luma equals upscale() of the plane; chroma lands where the
// siting and the lattice put it (a picture that is linear in luma coordinates stays the same
// linear picture at the output's chroma positions); 10-bit depth; bad layouts; device planes;
// nlm_fuse_yuv (the video command's NLM window) on host and device frames.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <upres/error.hpp>
#include <upres/nlmsr.hpp>
#include <upres/upscale.hpp>
#include <upres/yuv.hpp>
#include "test_util.hpp"

namespace upres {
namespace {

using test::images_near;
using test::random_image;

UpscaleOptions opts_of(UpscaleMethod m, double s = 2.0) {
    UpscaleOptions o;
    o.method = m;
    o.scale = s;
    return o;
}

template <class T>
struct Frame {
    Image<T> y, cb, cr;
    Frame(int w, int h, const YuvLayout& l)
        : y(w, h, 1),
          cb((w + (1 << l.shift_x) - 1) >> l.shift_x, (h + (1 << l.shift_y) - 1) >> l.shift_y, 1),
          cr(cb.width(), cb.height(), 1) {}
    YuvPlanes<const T> cview() const { return {y.view(), cb.view(), cr.view()}; }
    YuvPlanes<T> view() { return {y.view(), cb.view(), cr.view()}; }
};

// Where chroma sample i of a plane subsampled by 2^shift sits on the luma axis.
double chroma_pos(double i, int shift, ChromaSiting s, bool vertical) {
    const double sub = 1 << shift;
    double off = 0.5 * (sub - 1);
    if (shift == 0) off = 0;
    if (!vertical &&
        (s == ChromaSiting::Left || s == ChromaSiting::TopLeft || s == ChromaSiting::BottomLeft))
        off = 0;
    if (vertical && (s == ChromaSiting::Top || s == ChromaSiting::TopLeft)) off = 0;
    if (vertical && shift && (s == ChromaSiting::Bottom || s == ChromaSiting::BottomLeft))
        off = sub - 1;
    return sub * i + off;
}

TEST(UpscaleYuv, LumaIsUpscaleOfThePlane) {
    YuvLayout l;
    for (const UpscaleMethod m :
         {UpscaleMethod::Bicubic, UpscaleMethod::Bilinear, UpscaleMethod::SilSeabi}) {
        Frame<std::uint8_t> in(37, 23, l);
        in.y = random_image<std::uint8_t>(37, 23, 1, 3);
        in.cb = random_image<std::uint8_t>(19, 12, 1, 4);
        in.cr = random_image<std::uint8_t>(19, 12, 1, 5);
        const auto [ow, oh] = upscale_yuv_size(37, 23, opts_of(m));
        Frame<std::uint8_t> out(ow, oh, l);
        upscale_yuv(in.cview(), out.view(), l, opts_of(m));
        const Image<std::uint8_t> ref = upscale(in.y.view(), opts_of(m));
        EXPECT_TRUE(images_near(out.y.view(), ref.view(), 0.0)) << to_string(m);
    }
}

// A picture linear in luma coordinates, p(x, y) = 10 + 4 x + 4 y (integers at the half-sample
// chroma positions: no input rounding), sampled at each chroma position; the upscaled picture is
// p at L(x'), L(y') (the lattice's map from output to input luma coordinates); Keys bicubic
// reproduces linear functions exactly away from the borders, so only the output's rounding
// (0.5) remains. A chroma sample misplaced by 1/8 of a chroma sample is off by a whole level.
TEST(UpscaleYuv, ChromaLandsWhereTheSitingPutsIt) {
    const int w = 24, h = 16;
    // Centre-aligned bicubic and SIL-SEABI, and SIL-SEABI on the co-sited lattice.
    for (const int lattice_case : {0, 1, 2})
        for (const ChromaSiting s : {ChromaSiting::Left, ChromaSiting::Center,
                                     ChromaSiting::TopLeft, ChromaSiting::Bottom})
            for (const int shift_y : {0, 1}) {
                const bool centered = lattice_case < 2;
                YuvLayout l;
                l.siting = s;
                l.shift_y = shift_y;
                UpscaleOptions o =
                    opts_of(lattice_case == 0 ? UpscaleMethod::Bicubic : UpscaleMethod::SilSeabi);
                o.lattice = centered ? Lattice::Centered : Lattice::CoSited;
                Frame<std::uint8_t> in(w, h, l);
                in.y = random_image<std::uint8_t>(w, h, 1, 9);
                const auto p = [](double x, double y) { return 10 + 4 * x + 4 * y; };
                for (int i = 0; i < in.cb.height(); ++i)
                    for (int j = 0; j < in.cb.width(); ++j) {
                        const double v =
                            p(chroma_pos(j, 1, s, false), chroma_pos(i, shift_y, s, true));
                        in.cb.view()(j, i) = static_cast<std::uint8_t>(std::lround(v));
                        in.cr.view()(j, i) = static_cast<std::uint8_t>(std::lround(v));
                    }
                const auto [ow, oh] = upscale_yuv_size(w, h, o);
                Frame<std::uint8_t> out(ow, oh, l);
                upscale_yuv(in.cview(), out.view(), l, o);
                const auto L = [&](double x) { return centered ? (x + 0.5) / 2 - 0.5 : x / 2; };
                double worst = 0;
                for (int i = 4; i < out.cb.height() - 4; ++i)
                    for (int j = 4; j < out.cb.width() - 4; ++j) {
                        const double want =
                            p(L(chroma_pos(j, 1, s, false)), L(chroma_pos(i, shift_y, s, true)));
                        worst = std::max(worst, std::abs(out.cb.view()(j, i) - want));
                    }
                EXPECT_LE(worst, 0.5 + 1e-9) << "case " << lattice_case << " siting "
                                             << static_cast<int>(s) << " shift_y " << shift_y;
            }
}

TEST(UpscaleYuv, TenBitsKeepTheirDepth) {
    YuvLayout l;
    l.bits = 10;
    const int w = 33, h = 20;
    Frame<std::uint16_t> in(w, h, l);
    const Image<std::uint16_t> r = random_image<std::uint16_t>(w, h, 1, 11);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) in.y.view()(x, y) = r.view()(x, y) & 1023;
    for (int y = 0; y < in.cb.height(); ++y)
        for (int x = 0; x < in.cb.width(); ++x) {
            in.cb.view()(x, y) = static_cast<std::uint16_t>(1023 * ((x + y) % 2));  // overshoots
            in.cr.view()(x, y) = static_cast<std::uint16_t>(512 + x);
        }
    // Scale 1: the identity, in every plane.
    {
        Frame<std::uint16_t> out(w, h, l);
        upscale_yuv(in.cview(), out.view(), l, opts_of(UpscaleMethod::Bicubic, 1.0));
        EXPECT_TRUE(images_near(out.y.view(), in.y.view(), 0.0));
        EXPECT_TRUE(images_near(out.cb.view(), in.cb.view(), 0.0));
        EXPECT_TRUE(images_near(out.cr.view(), in.cr.view(), 0.0));
    }
    Frame<std::uint16_t> out(2 * w, 2 * h, l);
    upscale_yuv(in.cview(), out.view(), l, opts_of(UpscaleMethod::Bicubic));
    int maxv = 0;
    for (const Image<std::uint16_t>* p : {&out.y, &out.cb, &out.cr})
        for (int y = 0; y < p->height(); ++y)
            for (int x = 0; x < p->width(); ++x) maxv = std::max<int>(maxv, p->view()(x, y));
    EXPECT_LE(maxv, 1023);
    EXPECT_GT(maxv, 900);
    // Luma: the 16-bit result on the 10-bit scale.
    Image<std::uint16_t> wide(w, h, 1);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x)
            wide.view()(x, y) =
                static_cast<std::uint16_t>((in.y.view()(x, y) * 65535u + 511u) / 1023u);
    const AnyImage up = upscale(AnyImage(std::move(wide)), opts_of(UpscaleMethod::Bicubic));
    const auto uv = up.as<std::uint16_t>().view();
    for (int y = 0; y < 2 * h; ++y)
        for (int x = 0; x < 2 * w; ++x)
            ASSERT_EQ(out.y.view()(x, y), (uv(x, y) * 1023u + 32767u) / 65535u) << x << "," << y;
}

// Three frames of a 10-bit (or 8-bit) 4:2:0 clip: a photo crop shifted by a pixel per frame,
// plus noise, so the fusion has real structure to match.
template <class T>
std::vector<Frame<T>> clip(int w, int h, const YuvLayout& l) {
    const Image<std::uint8_t> photo = test::tall_photo("baboon.jpg", w + 4, h + 4);  // RGB
    std::vector<Frame<T>> frames;
    for (int t = 0; t < 3; ++t) {
        Frame<T> f(w, h, l);
        const Image<std::uint16_t> noise = random_image<std::uint16_t>(w, h, 1, 40 + t);
        const int maxv = (1 << l.bits) - 1;
        for (int y = 0; y < h; ++y)
            for (int x = 0; x < w; ++x) {
                const int v = photo.view()(x + t, y + 1, 1) * maxv / 255 +
                              (noise.view()(x, y) % 5) * (maxv / 255) - 2 * (maxv / 255);
                f.y.view()(x, y) = static_cast<T>(std::clamp(v, 0, maxv));
            }
        for (Image<T>* c : {&f.cb, &f.cr})
            for (int y = 0; y < c->height(); ++y)
                for (int x = 0; x < c->width(); ++x)
                    c->view()(x, y) = static_cast<T>((x * 37 + y * 11 + t) % (maxv + 1));
        frames.push_back(std::move(f));
    }
    return frames;
}

TEST(UpscaleYuv, NlmFuseYuvFusesTheLumaAndUpscalesTheChroma) {
    YuvLayout l;
    const int w = 40, h = 24;
    std::vector<Frame<std::uint8_t>> frames = clip<std::uint8_t>(w, h, l);
    std::vector<YuvPlanes<const std::uint8_t>> planes;
    std::vector<ImageView<const std::uint8_t>> luma;
    for (const Frame<std::uint8_t>& f : frames) {
        planes.push_back(f.cview());
        luma.push_back(f.y.view());
    }
    Context cpu;
    cpu.backend = Backend::Cpu;
    NlmsrOptions n;
    n.post = NlmsrPost::None;
    Frame<std::uint8_t> out(2 * w, 2 * h, l);
    nlm_fuse_yuv(std::span<const YuvPlanes<const std::uint8_t>>(planes), 2, out.view(), l, n, cpu);
    n.reference = 2;
    Image<std::uint8_t> fused(2 * w, 2 * h, 1);
    nlm_fuse(luma, fused.view(), n, cpu);
    EXPECT_TRUE(images_near(out.y.view(), fused.view(), 0.0));
    // Chroma: the reference frame's, as upscale_yuv's centre-aligned bicubic.
    Frame<std::uint8_t> bic(2 * w, 2 * h, l);
    upscale_yuv(frames[2].cview(), bic.view(), l, opts_of(UpscaleMethod::Bicubic), cpu);
    EXPECT_TRUE(images_near(out.cb.view(), bic.cb.view(), 0.0));
    EXPECT_TRUE(images_near(out.cr.view(), bic.cr.view(), 0.0));
    test::expect_error(
        [&] {
            nlm_fuse_yuv(std::span<const YuvPlanes<const std::uint8_t>>(planes), 3, out.view(), l,
                         n, cpu);
        },
        ErrorCode::InvalidArgument, "reference 3 is outside [0, 2]");
}

TEST(UpscaleYuv, BadLayoutsAreRefused) {
    YuvLayout l;
    Frame<std::uint8_t> in(20, 10, l);
    Frame<std::uint8_t> out(40, 20, l);
    Frame<std::uint8_t> small(38, 20, l);
    const auto o = opts_of(UpscaleMethod::Bicubic);
    test::expect_error([&] { upscale_yuv(in.cview(), small.view(), l, o); },
                       ErrorCode::InvalidArgument, "must be 40 x 20");
    YuvLayout bad = l;
    bad.bits = 10;
    test::expect_error([&] { upscale_yuv(in.cview(), out.view(), bad, o); },
                       ErrorCode::InvalidArgument, "allowed: 8 for 8-bit planes");
    bad = l;
    bad.shift_x = 2;
    test::expect_error([&] { upscale_yuv(in.cview(), out.view(), bad, o); },
                       ErrorCode::InvalidArgument, "4:2:0");
    YuvPlanes<std::uint8_t> gray_out{out.y.view(), {}, {}};
    test::expect_error([&] { upscale_yuv(in.cview(), gray_out, l, o); }, ErrorCode::InvalidArgument,
                       "both have chroma planes");
    YuvLayout ten = l;
    ten.bits = 10;
    Frame<std::uint16_t> in16(20, 10, ten), out16(40, 20, ten);
    in16.y = random_image<std::uint16_t>(20, 10, 1, 2);
    test::expect_error(
        [&] { upscale_yuv(in16.cview(), out16.view(), ten, opts_of(UpscaleMethod::SilSeabi)); },
        ErrorCode::UnsupportedFormat, "8-bit");
}

TEST(UpscaleYuvCuda, DevicePlanesMatchHostPlanes) {
    UPRES_REQUIRE_GPU();
    YuvLayout l;
    Frame<std::uint8_t> in(64, 36, l);
    in.y = random_image<std::uint8_t>(64, 36, 1, 21);
    in.cb = random_image<std::uint8_t>(32, 18, 1, 22);
    in.cr = random_image<std::uint8_t>(32, 18, 1, 23);
    for (const UpscaleMethod m : {UpscaleMethod::Bicubic, UpscaleMethod::SilSeabi}) {
        Frame<std::uint8_t> host(128, 72, l);
        Context cpu;
        cpu.backend = Backend::Cpu;
        upscale_yuv(in.cview(), host.view(), l, opts_of(m), cpu);
        const auto dev = [](const Image<std::uint8_t>& im) {
            return clone(im.view(), Location::Device);
        };
        Image<std::uint8_t> dy = dev(in.y), dcb = dev(in.cb), dcr = dev(in.cr);
        Image<std::uint8_t> oy(128, 72, 1, Location::Device), ocb(64, 36, 1, Location::Device),
            ocr(64, 36, 1, Location::Device);
        upscale_yuv({dy.view(), dcb.view(), dcr.view()}, {oy.view(), ocb.view(), ocr.view()}, l,
                    opts_of(m));
        const Image<std::uint8_t> gy = clone(oy.view(), Location::Host);
        const Image<std::uint8_t> gcb = clone(ocb.view(), Location::Host);
        EXPECT_TRUE(images_near(gy.view(), host.y.view(), 1.0)) << to_string(m);
        EXPECT_TRUE(images_near(gcb.view(), host.cb.view(), 1.0)) << to_string(m);
        // Host planes on the cuda backend (uploaded once, downloaded once): the device result.
        Frame<std::uint8_t> staged(128, 72, l);
        Context cuda;
        cuda.backend = Backend::Cuda;
        upscale_yuv(in.cview(), staged.view(), l, opts_of(m), cuda);
        EXPECT_TRUE(images_near(staged.y.view(), gy.view(), 0.0)) << to_string(m);
        EXPECT_TRUE(images_near(staged.cb.view(), gcb.view(), 0.0)) << to_string(m);
    }
}

// The video command's NLM window on the device (each frame uploaded once) gives the bytes of
// the same frames in host memory on the cuda backend, in 8 and 10 bits.
template <class T>
void nlm_device_matches_host(int bits) {
    YuvLayout l;
    l.bits = bits;
    const int w = 38, h = 22;  // chroma 19 x 11
    std::vector<Frame<T>> frames = clip<T>(w, h, l);
    Context cuda;
    cuda.backend = Backend::Cuda;
    NlmsrOptions n;  // the video command's: default options at the scale
    std::vector<YuvPlanes<const T>> host;
    std::vector<Image<T>> dev;
    std::vector<YuvPlanes<const T>> device;
    for (const Frame<T>& f : frames) {
        host.push_back(f.cview());
        for (const Image<T>* p : {&f.y, &f.cb, &f.cr})
            dev.push_back(clone(p->view(), Location::Device));
    }
    for (std::size_t k = 0; k < frames.size(); ++k)
        device.push_back({dev[3 * k].view(), dev[3 * k + 1].view(), dev[3 * k + 2].view()});
    Frame<T> want(2 * w, 2 * h, l);
    nlm_fuse_yuv(std::span<const YuvPlanes<const T>>(host), 1, want.view(), l, n, cuda);
    Image<T> oy(2 * w, 2 * h, 1, Location::Device), ocb(w, h, 1, Location::Device),
        ocr(w, h, 1, Location::Device);
    nlm_fuse_yuv(std::span<const YuvPlanes<const T>>(device), 1,
                 YuvPlanes<T>{oy.view(), ocb.view(), ocr.view()}, l, n, cuda);
    EXPECT_TRUE(images_near(clone(oy.view()).view(), want.y.view(), 0.0)) << bits;
    EXPECT_TRUE(images_near(clone(ocb.view()).view(), want.cb.view(), 0.0)) << bits;
    EXPECT_TRUE(images_near(clone(ocr.view()).view(), want.cr.view(), 0.0)) << bits;
    // And the cpu backend within a level (the fusion's float rounding).
    Context cpu;
    cpu.backend = Backend::Cpu;
    Frame<T> ref(2 * w, 2 * h, l);
    nlm_fuse_yuv(std::span<const YuvPlanes<const T>>(host), 1, ref.view(), l, n, cpu);
    EXPECT_TRUE(images_near(want.y.view(), ref.y.view(), 1.0)) << bits;
    EXPECT_TRUE(images_near(want.cb.view(), ref.cb.view(), 1.0)) << bits;
}

TEST(UpscaleYuvCuda, NlmWindowOnTheDeviceMatchesHostFrames) {
    UPRES_REQUIRE_GPU();
    nlm_device_matches_host<std::uint8_t>(8);
    nlm_device_matches_host<std::uint16_t>(10);
    // upscale_yuv itself keeps 16-bit device planes refused (the u16 methods run on host images).
    YuvLayout ten;
    ten.bits = 10;
    Image<std::uint16_t> y(8, 8, 1, Location::Device), c(4, 4, 1, Location::Device);
    Image<std::uint16_t> oy(16, 16, 1, Location::Device), oc(8, 8, 1, Location::Device),
        oc2(8, 8, 1, Location::Device), c2(4, 4, 1, Location::Device);
    test::expect_error(
        [&] {
            upscale_yuv(YuvPlanes<const std::uint16_t>{y.view(), c.view(), c2.view()},
                        YuvPlanes<std::uint16_t>{oy.view(), oc.view(), oc2.view()}, ten,
                        opts_of(UpscaleMethod::Bicubic));
        },
        ErrorCode::InvalidArgument, "16-bit planes in device memory");
}

}  // namespace
}  // namespace upres
