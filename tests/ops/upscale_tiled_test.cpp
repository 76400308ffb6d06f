// upres::upscale_tiled (upres/tiled.hpp): tile by tile, srcnn and bicubic (their own tiles from
// source boxes with a halo) and bilinear and bspline (warp_tiled's bands) give upscale()'s bytes
// on the whole image, cpu backend, for every pixel type, gray and colour, photos and random
// data, tiles of 256, 1000 and 4096 outputs and odd ones, sources that lend their rows and
// sources that do not, and a sub-image view; the buffers follow the budget; methods and options
// that cannot be tiled are refused by name.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <vector>

#include <upres/tiled.hpp>
#include <upres/upscale.hpp>
#include "test_util.hpp"

namespace upres {
namespace {

using test::ctx_of;
using test::expect_error;
using test::random_image;
using test::same_bytes;
using test::tall_photo;

UpscaleOptions opts_of(UpscaleMethod m, double s) {
    UpscaleOptions o;
    o.method = m;
    o.scale = s;
    return o;
}

template <class T>
Image<T> whole(const ImageView<const T>& in, const UpscaleOptions& o, Backend b = Backend::Cpu) {
    AnyImage r = upscale(AnyImage(clone(in)), o, ctx_of(b));
    return std::move(r.as<T>());
}

template <class T>
Image<T> tiled(const ImageView<const T>& in, const UpscaleOptions& o, int band, bool lend,
               TiledStats* st = nullptr, std::size_t budget = 0, Backend b = Backend::Cpu,
               std::vector<int> devices = {}) {
    const int s = static_cast<int>(o.scale);
    Image<T> out(s * in.width(), s * in.height(), in.channels());
    test::RowEnds ends(in.raw(), out.view().raw(), lend);
    TiledOptions to;
    to.band_rows = std::min(band, out.height());
    to.tile_columns = band;  // square tiles: columns cut as often as rows
    to.max_memory = budget;
    to.devices = std::move(devices);
    std::int64_t last = 0;
    to.progress = [&](std::int64_t done, std::int64_t total) {
        EXPECT_GT(done, last);
        EXPECT_EQ(total, out.height());
        last = done;
    };
    const TiledStats r = upscale_tiled(ends.src(), ends.dst(), o, to, ctx_of(b));
    EXPECT_EQ(last, out.height());
    if (st) *st = r;
    return out;
}

// An image of type T from a u8 photo (u16: x257 plus low bits from the position; f32 on [0, 1]).
template <class T>
Image<T> from_photo(const Image<std::uint8_t>& p) {
    Image<T> out(p.width(), p.height(), p.channels());
    for (int y = 0; y < p.height(); ++y)
        for (int x = 0; x < p.width() * p.channels(); ++x) {
            const int v = p.view().row(y)[x];
            if constexpr (std::is_same_v<T, std::uint8_t>)
                out.view().row(y)[x] = static_cast<T>(v);
            else if constexpr (std::is_same_v<T, std::uint16_t>)
                out.view().row(y)[x] = static_cast<T>(v * 257 ^ ((x * 7 + y * 13) & 0xff));
            else
                out.view().row(y)[x] = static_cast<float>(v) / 255.0f;
        }
    return out;
}

template <class T>
void check(const Image<T>& in, const UpscaleOptions& o, int band, const std::string& what) {
    const Image<T> want = whole<T>(in.view(), o);
    for (const bool lend : {true, false}) {
        TiledStats st;
        const Image<T> got = tiled<T>(in.view(), o, band, lend, &st);
        EXPECT_TRUE(same_bytes(got, want))
            << what << ": " << to_string(o.method) << " x" << o.scale << ", tile " << band
            << (lend ? ", rows lent" : ", rows copied") << ", " << st.bands << " bands";
    }
}

TEST(UpscaleTiled, LocalMethodsMatchTheWholeImageCallOnPhotos) {
    // Tiles of 256 outputs: 2 x 2 tiles of a 360 x 300 x2 output; 1000: 2 x 1 of 1024 x 64;
    // 4096: 2 x 1 of 4200 x 80. Odd tiles (37 rows, 64 columns) cut everywhere. (Small images:
    // the sanitizer build runs this test without optimisation.)
    const Image<std::uint8_t> rgb = tall_photo("baboon.jpg", 180, 150);
    const Image<std::uint8_t> wide = tall_photo("baboon.jpg", 512, 32);
    Image<std::uint8_t> gray(rgb.width(), rgb.height(), 1);
    for (int y = 0; y < gray.height(); ++y)
        for (int x = 0; x < gray.width(); ++x) gray.view()(x, y) = rgb.view()(x, y, 1);
    for (const UpscaleMethod m : {UpscaleMethod::Srcnn, UpscaleMethod::Bicubic}) {
        check(rgb, opts_of(m, 2), 256, "u8 RGB photo");
        check(from_photo<std::uint16_t>(gray), opts_of(m, 2), 256, "u16 gray photo");
        check(from_photo<float>(rgb), opts_of(m, 3), 256, "f32 RGB photo");
        check(gray, opts_of(m, 2), 37, "u8 gray photo");
        check(wide, opts_of(m, 2), 1000, "u8 RGB photo, 1000-output tiles");
    }
    check(gray, opts_of(UpscaleMethod::Srcnn, 4), 256, "u8 gray x4");
    check(rgb, opts_of(UpscaleMethod::Bilinear, 2), 256, "u8 RGB bilinear");
    check(from_photo<std::uint16_t>(gray), opts_of(UpscaleMethod::BSpline, 2), 37, "u16 bspline");
}

TEST(UpscaleTiled, RandomDataAndFourThousandOutputTiles) {
    const Image<std::uint8_t> r8 = random_image<std::uint8_t>(2100, 40, 1, 7);
    check(r8, opts_of(UpscaleMethod::Srcnn, 2), 4096, "u8 random 2100 x 40");
    check(random_image<std::uint16_t>(2100, 40, 3, 8), opts_of(UpscaleMethod::Bicubic, 2), 4096,
          "u16 random RGB");
    check(random_image<float>(97, 75, 4, 9, 0.0, 1.0), opts_of(UpscaleMethod::Srcnn, 2), 64,
          "f32 random RGBA");
    check(random_image<std::uint8_t>(133, 61, 2, 10), opts_of(UpscaleMethod::Bicubic, 3), 100,
          "u8 random gray + alpha");
}

TEST(UpscaleTiled, SubImageView) {
    const Image<std::uint8_t> photo = tall_photo("baboon.jpg", 400, 300);
    const ImageView<const std::uint8_t> v = photo.view().sub(37, 21, 251, 203);
    const UpscaleOptions o = opts_of(UpscaleMethod::Srcnn, 2);
    const Image<std::uint8_t> want = whole<std::uint8_t>(v, o);
    const Image<std::uint8_t> got = tiled<std::uint8_t>(v, o, 128, true);
    EXPECT_TRUE(same_bytes(got, want));
}

TEST(UpscaleTiled, BuffersFollowTheBudget) {
    const Image<std::uint8_t> img = random_image<std::uint8_t>(200, 400, 1, 3);
    const UpscaleOptions o = opts_of(UpscaleMethod::Srcnn, 2);
    const std::size_t budget = std::size_t{2} << 20;
    TiledStats st;
    const Image<std::uint8_t> got = tiled<std::uint8_t>(img.view(), o, 0, true, &st, budget);
    EXPECT_TRUE(same_bytes(got, whole<std::uint8_t>(img.view(), o)));
    EXPECT_GT(st.bands, 1);
    EXPECT_LE(st.buffer_bytes, budget);
}

// The cuda backend: each tile is the whole cuda call on its box, so the output is the whole
// cuda call's bytes for every kernel variant and precision named (per-pixel arithmetic that does
// not depend on where the pixel lies); tiles of 256, 1000 and odd sizes, gray and colour, every
// pixel type.
template <class T>
void check_cuda(const Image<T>& in, UpscaleOptions o, int band, const std::string& what) {
    struct Case {
        SrcnnVariant v;
        SrcnnPrecision p;
    };
    for (const Case k : {Case{SrcnnVariant::FusedNetwork, SrcnnPrecision::Fp16},
                         Case{SrcnnVariant::FusedNetwork, SrcnnPrecision::Fp32},
                         Case{SrcnnVariant::TensorCore, SrcnnPrecision::Bf16},
                         Case{SrcnnVariant::SharedKernelPatch, SrcnnPrecision::Fp32},
                         Case{SrcnnVariant::Direct, SrcnnPrecision::Fp32}}) {
        o.srcnn.variant = k.v;
        o.srcnn.precision = k.p;
        const Image<T> want = whole<T>(in.view(), o, Backend::Cuda);
        TiledStats st;
        const Image<T> got = tiled<T>(in.view(), o, band, true, &st, 0, Backend::Cuda);
        EXPECT_TRUE(same_bytes(got, want))
            << what << ": " << to_string(k.v) << " " << to_string(k.p) << ", tile " << band << ", "
            << st.bands << " bands";
    }
}

TEST(UpscaleTiledCuda, SrcnnTilesAreTheWholeCudaCall) {
    UPRES_REQUIRE_GPU();
    const Image<std::uint8_t> rgb = tall_photo("baboon.jpg", 300, 260);
    Image<std::uint8_t> gray(rgb.width(), rgb.height(), 1);
    for (int y = 0; y < gray.height(); ++y)
        for (int x = 0; x < gray.width(); ++x) gray.view()(x, y) = rgb.view()(x, y, 1);
    check_cuda(rgb, opts_of(UpscaleMethod::Srcnn, 2), 256, "u8 RGB photo");
    check_cuda(from_photo<std::uint16_t>(gray), opts_of(UpscaleMethod::Srcnn, 2), 37,
               "u16 gray photo");
    check_cuda(from_photo<float>(rgb), opts_of(UpscaleMethod::Srcnn, 3), 1000, "f32 RGB photo");
    check_cuda(random_image<std::uint8_t>(1100, 90, 4, 31), opts_of(UpscaleMethod::Srcnn, 2), 1000,
               "u8 random RGBA");
    check_cuda(tall_photo("baboon.jpg", 70, 2100), opts_of(UpscaleMethod::Srcnn, 2), 4096,
               "u8 RGB tall photo, 4096-output tiles");
    // bicubic: warp_tiled's bands on the device.
    const UpscaleOptions bic = opts_of(UpscaleMethod::Bicubic, 2);
    EXPECT_TRUE(
        same_bytes(tiled<std::uint8_t>(rgb.view(), bic, 256, true, nullptr, 0, Backend::Cuda),
                   whole<std::uint8_t>(rgb.view(), bic, Backend::Cuda)));
}

// Auto and Fastest pick kernels by the plane's shape: the tiles run those the first tile ran,
// the whole call may run others, within the precision's tolerance; the tiled bytes do not
// depend on the tile size's cut or on the number of GPUs.
TEST(UpscaleTiledCuda, AutoKernelsAndSeveralDevices) {
    UPRES_REQUIRE_GPU();
    const Image<std::uint8_t> rgb = tall_photo("baboon.jpg", 400, 520);
    UpscaleOptions o = opts_of(UpscaleMethod::Srcnn, 2);
    o.srcnn.precision = SrcnnPrecision::Fastest;
    const Image<std::uint8_t> cpu = whole<std::uint8_t>(rgb.view(), opts_of(o.method, 2));
    const Image<std::uint8_t> one =
        tiled<std::uint8_t>(rgb.view(), o, 128, true, nullptr, 0, Backend::Cuda);
    int worst = 0;
    for (int y = 0; y < one.height(); ++y)
        for (int x = 0; x < one.width() * 3; ++x)
            worst = std::max(worst, std::abs(int{one.view().row(y)[x]} - cpu.view().row(y)[x]));
    EXPECT_LE(worst, 2) << "fastest tiles against the cpu backend's fp32";
    TiledOptions bad;
    bad.devices = {cuda_device_count()};
    Image<std::uint8_t> out(800, 1040, 3);
    ViewRowSource src(rgb.view());
    ViewRowSink dst(out.view());
    expect_error([&] { upscale_tiled(src, dst, o, bad, ctx_of(Backend::Cuda)); },
                 ErrorCode::InvalidArgument, "does not exist");
    bad.devices = {0, 0};
    expect_error([&] { upscale_tiled(src, dst, o, bad, ctx_of(Backend::Cuda)); },
                 ErrorCode::InvalidArgument, "named twice");
    if (cuda_device_count() < 2) GTEST_SKIP() << "one CUDA device: the two-device runs skipped";
    for (const std::vector<int>& devs : {std::vector<int>{0, 1}, std::vector<int>{1, 0}}) {
        TiledStats st;
        const Image<std::uint8_t> two =
            tiled<std::uint8_t>(rgb.view(), o, 128, true, &st, 0, Backend::Cuda, devs);
        EXPECT_TRUE(same_bytes(two, one)) << "devices " << devs[0] << ", " << devs[1];
        EXPECT_EQ(st.bands, 9);
    }
}

TEST(UpscaleTiled, WhatCannotBeTiledIsRefused) {
    const Image<std::uint8_t> img = random_image<std::uint8_t>(40, 30, 1, 4);
    Image<std::uint8_t> out(80, 60, 1);
    ViewRowSource src(img.view().raw());
    ViewRowSink dst(out.view().raw());
    const auto run = [&](const UpscaleOptions& o, Backend b = Backend::Cpu) {
        return [&, o, b] { upscale_tiled(src, dst, o, {}, ctx_of(b)); };
    };
    expect_error(run(opts_of(UpscaleMethod::SilSeabi, 2)), ErrorCode::InvalidArgument,
                 "method silseabi is not tiled (allowed: srcnn, bicubic, bilinear, bspline");
    expect_error(run(opts_of(UpscaleMethod::Nlm, 2)), ErrorCode::InvalidArgument,
                 "method nlm is not tiled");
    expect_error(run(opts_of(UpscaleMethod::Bicubic, 2.5)), ErrorCode::InvalidArgument,
                 "integer in [1, 16]");
    UpscaleOptions cos = opts_of(UpscaleMethod::Bicubic, 2);
    cos.lattice = Lattice::CoSited;
    expect_error(run(cos), ErrorCode::InvalidArgument, "centre-aligned lattice");
    expect_error(run(opts_of(UpscaleMethod::Bicubic, 2), Backend::Reference),
                 ErrorCode::InvalidArgument, "runs the cpu and cuda backends, not reference");
    TiledOptions on_gpus;
    on_gpus.devices = {0};
    expect_error([&] { upscale_tiled(src, dst, opts_of(UpscaleMethod::Srcnn, 2), on_gpus); },
                 ErrorCode::InvalidArgument, "devices name GPUs for the cuda backend, not auto");
    TiledOptions big;
    big.band_rows = 61;
    expect_error([&] { upscale_tiled(src, dst, opts_of(UpscaleMethod::Bicubic, 2), big); },
                 ErrorCode::InvalidArgument, "band_rows 61 is outside [0, 60]");
}

}  // namespace
}  // namespace upres
