// upres::stereo_disparity_tiled (upres/tiled.hpp): band by band, the window matcher gives the
// whole pair's disparity bytes (cpu backend) on real pairs (Motorcycle, Aloe) and random data,
// for every window, both costs, with and without the checks, the sub-pixel fit and the median,
// u8 / u16 / f32, gray and colour, bands of 1, 37, 256 and 1000 rows and the automatic height;
// what is not local (semi-global paths, speckle removal) is refused by name.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <upres/io.hpp>
#include <upres/stereo.hpp>
#include <upres/tiled.hpp>
#include "test_util.hpp"

namespace upres {
namespace {

using test::ctx_of;
using test::expect_error;
using test::random_image;
using test::same_bytes;

template <class T>
Image<float> whole(const Image<T>& l, const Image<T>& r, const StereoOptions& o,
                   Backend b = Backend::Cpu) {
    Image<float> d(l.width(), l.height(), 1);
    stereo_disparity(ImageView<const T>(l.view()), ImageView<const T>(r.view()), d.view(), o,
                     ctx_of(b));
    return d;
}

template <class T>
Image<float> tiled(const Image<T>& l, const Image<T>& r, const StereoOptions& o, int band,
                   TiledStats* st = nullptr, Backend b = Backend::Cpu,
                   std::vector<int> devices = {}) {
    Image<float> d(l.width(), l.height(), 1);
    ViewRowSource ls(l.view().raw()), rs(r.view().raw());
    ViewRowSink sink(d.view().raw());
    TiledOptions to;
    to.band_rows = std::min(band, l.height());
    to.devices = std::move(devices);
    const TiledStats s = stereo_disparity_tiled(ls, rs, sink, o, to, ctx_of(b));
    if (st) *st = s;
    return d;
}

template <class T>
void check(const Image<T>& l, const Image<T>& r, const StereoOptions& o, int band,
           const std::string& what, Backend b = Backend::Cpu) {
    TiledStats st;
    const Image<float> got = tiled(l, r, o, band, &st, b);
    EXPECT_TRUE(same_bytes(got, whole(l, r, o, b)))
        << what << ": " << to_string(o.cost) << " " << to_string(o.aggregation) << " box "
        << o.box_size << ", lr " << o.lr_check << ", subpixel " << o.subpixel << ", median "
        << o.median << ", band " << band << " (" << st.bands << " bands, " << to_string(b) << ")";
}

Image<std::uint8_t> pair_image(const char* file, int w, int h) {
    const Image<std::uint8_t> im =
        std::move(read_image(test::sample_path(file)).as<std::uint8_t>());
    Image<std::uint8_t> out(w, h, im.channels());
    for (int y = 0; y < h; ++y)
        std::memcpy(out.view().row(y), im.view().row(y),
                    static_cast<std::size_t>(w) * im.channels());
    return out;
}

TEST(StereoTiled, RealPairsMatchTheWholePair) {
    const Image<std::uint8_t> ml = pair_image("motorcycle_left.png", 360, 300);
    const Image<std::uint8_t> mr = pair_image("motorcycle_right.png", 360, 300);
    StereoOptions o;
    o.num_disparities = 48;
    for (const StereoAggregation a :
         {StereoAggregation::Gauss7, StereoAggregation::Gauss13, StereoAggregation::Box}) {
        o.aggregation = a;
        o.box_size = 31;
        // Bands of one row only with the smallest window: each band matches its halo again.
        for (const int band : {a == StereoAggregation::Gauss7 ? 1 : 5, 37, 256})
            check(ml, mr, o, band, "motorcycle");
    }
    o.aggregation = StereoAggregation::Gauss13;
    o.cost = StereoCost::Census;
    o.lr_check = 1;
    o.median = true;
    o.uniqueness = 10;
    check(ml, mr, o, 37, "motorcycle, census, checks, median");
    o.subpixel = false;
    o.lr_check = -1;
    check(ml, mr, o, 100, "motorcycle, no sub-pixel, no check");
    const Image<std::uint8_t> al = pair_image("aloeL.jpg", 320, 1040);
    const Image<std::uint8_t> ar = pair_image("aloeR.jpg", 320, 1040);
    StereoOptions a;
    a.num_disparities = 48;
    a.min_disparity = 8;
    a.cost = StereoCost::Census;
    check(al, ar, a, 1000, "aloe RGB, 1000-row bands");
    check(al, ar, a, 0, "aloe RGB, automatic bands");
}

TEST(StereoTiled, DepthsAndRandomData) {
    StereoOptions o;
    o.num_disparities = 16;
    o.aggregation = StereoAggregation::Gauss7;
    const Image<std::uint16_t> l16 = random_image<std::uint16_t>(90, 71, 1, 1);
    const Image<std::uint16_t> r16 = random_image<std::uint16_t>(90, 71, 1, 2);
    check(l16, r16, o, 13, "u16 random");
    const Image<float> lf = random_image<float>(77, 64, 3, 3, 0.0, 1.0);
    const Image<float> rf = random_image<float>(77, 64, 3, 4, 0.0, 1.0);
    o.median = true;
    o.lr_check = 0;
    check(lf, rf, o, 9, "f32 random RGB");
}

// A u8 image as u16 (x 257).
Image<std::uint16_t> to_u16(const Image<std::uint8_t>& a8) {
    Image<std::uint16_t> a(a8.width(), a8.height(), a8.channels());
    for (int y = 0; y < a.height(); ++y)
        for (int x = 0; x < a.width() * a.channels(); ++x)
            a.view().row(y)[x] = static_cast<std::uint16_t>(a8.view().row(y)[x] * 257);
    return a;
}

// The cuda backend: each band is the whole cuda call on its rows (which gives the reference's
// bytes, stereo_cuda_test), every variant; bands spread over two GPUs give the same bytes.
TEST(StereoTiledCuda, BandsAreTheWholePairs) {
    UPRES_REQUIRE_GPU();
    const Image<std::uint8_t> ml = pair_image("motorcycle_left.png", 360, 300);
    const Image<std::uint8_t> mr = pair_image("motorcycle_right.png", 360, 300);
    StereoOptions o;
    o.num_disparities = 48;
    for (const StereoVariant v :
         {StereoVariant::Stream, StereoVariant::Cube1, StereoVariant::Cube2})
        for (const StereoAggregation a : {StereoAggregation::Gauss7, StereoAggregation::Box}) {
            o.variant = v;
            o.aggregation = a;
            o.box_size = 15;
            check(ml, mr, o, 37, "motorcycle", Backend::Cuda);
        }
    o.variant = StereoVariant::Stream;
    o.cost = StereoCost::Census;
    o.aggregation = StereoAggregation::Gauss13;
    o.lr_check = 1;
    o.median = true;
    check(ml, mr, o, 1, "motorcycle, census, checks, median, 1-row bands", Backend::Cuda);
    const Image<float> lf = random_image<float>(77, 64, 3, 3, 0.0, 1.0);
    const Image<float> rf = random_image<float>(77, 64, 3, 4, 0.0, 1.0);
    check(lf, rf, o, 9, "f32 random RGB", Backend::Cuda);
    const Image<std::uint16_t> al = to_u16(pair_image("aloeL.jpg", 320, 1040));
    const Image<std::uint16_t> ar = to_u16(pair_image("aloeR.jpg", 320, 1040));
    StereoOptions a;
    a.num_disparities = 48;
    a.min_disparity = 8;
    check(al, ar, a, 0, "aloe RGB u16, automatic bands", Backend::Cuda);
    if (cuda_device_count() < 2) GTEST_SKIP() << "one CUDA device: the two-device runs skipped";
    const Image<float> want = whole(al, ar, a);
    for (const std::vector<int>& devs : {std::vector<int>{0, 1}, std::vector<int>{1, 0}}) {
        TiledStats st;
        EXPECT_TRUE(same_bytes(tiled(al, ar, a, 100, &st, Backend::Cuda, devs), want))
            << "devices " << devs[0] << ", " << devs[1];
        EXPECT_EQ(st.bands, 11);
    }
}

// A task of a cluster (upres.dask.disparity): output rows [y0, y1) from only the rows
// stereo_disparity_tiled_source_rows names, as one band: the whole map's rows.
TEST(StereoTiled, RangesFromTheirSourceRowsOnly) {
    const Image<std::uint8_t> l = pair_image("motorcycle_left.png", 200, 150);
    const Image<std::uint8_t> r = pair_image("motorcycle_right.png", 200, 150);
    StereoOptions o;
    o.num_disparities = 32;
    o.aggregation = StereoAggregation::Gauss13;
    o.cost = StereoCost::Census;
    o.median = true;
    const Image<float> want = whole(l, r, o);
    for (const auto& [y0, y1] : {std::pair{0, 1}, std::pair{0, 150}, std::pair{37, 38},
                                 std::pair{41, 99}, std::pair{140, 150}}) {
        const RowRange rows = stereo_disparity_tiled_source_rows(200, 150, o, y0, y1);
        ASSERT_LE(rows.first, y0);
        ASSERT_GE(rows.last, y1);
        const auto part = [&](const Image<std::uint8_t>& im) {
            return im.view().sub(0, rows.first, 200, rows.last - rows.first);
        };
        ViewRowSource ls(part(l).raw(), rows.first, 150), rs(part(r).raw(), rows.first, 150);
        Image<float> got(200, y1 - y0, 1);
        ViewRowSink sink(got.view().raw(), y0);
        TiledOptions to;
        to.first_row = y0;
        to.last_row = y1;
        to.band_rows = y1 - y0;
        stereo_disparity_tiled(ls, rs, sink, o, to, ctx_of(Backend::Cpu));
        EXPECT_TRUE(same_bytes(got, Image<float>(clone(want.view().sub(0, y0, 200, y1 - y0)))))
            << "rows " << y0 << " to " << y1;
    }
    expect_error([&] { stereo_disparity_tiled_source_rows(200, 150, o, 10, 151); },
                 ErrorCode::InvalidArgument, "not a non-empty range");
    o.aggregation = StereoAggregation::Sgm4;
    expect_error([&] { stereo_disparity_tiled_source_rows(200, 150, o, 0, 10); },
                 ErrorCode::InvalidArgument, "aggregation sgm4 is not tiled");
}

TEST(StereoTiled, WhatIsNotLocalIsRefused) {
    const Image<std::uint8_t> l = random_image<std::uint8_t>(64, 40, 1, 5);
    const Image<std::uint8_t> r = random_image<std::uint8_t>(64, 40, 1, 6);
    Image<float> d(64, 40, 1);
    ViewRowSource ls(l.view().raw()), rs(r.view().raw());
    ViewRowSink sink(d.view().raw());
    StereoOptions o;
    o.num_disparities = 16;
    o.aggregation = StereoAggregation::Sgm8;
    expect_error([&] { stereo_disparity_tiled(ls, rs, sink, o); }, ErrorCode::InvalidArgument,
                 "aggregation sgm8 is not tiled");
    o.aggregation = StereoAggregation::Gauss7;
    o.speckle_size = 50;
    expect_error([&] { stereo_disparity_tiled(ls, rs, sink, o); }, ErrorCode::InvalidArgument,
                 "speckle removal is not tiled");
    const Image<std::uint8_t> small = random_image<std::uint8_t>(64, 39, 1, 7);
    ViewRowSource ss(small.view().raw());
    o.speckle_size = 0;
    expect_error([&] { stereo_disparity_tiled(ls, ss, sink, o); }, ErrorCode::InvalidArgument,
                 "they must match");
    expect_error([&] { stereo_disparity_tiled(ls, rs, sink, o, {}, ctx_of(Backend::Reference)); },
                 ErrorCode::InvalidArgument, "runs the cpu and cuda backends, not reference");
}

}  // namespace
}  // namespace upres
