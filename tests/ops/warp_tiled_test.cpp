// Tiled execution (upres/tiled.hpp, warp_tiled): band by band, the zoom/resize warp is
// bit-identical to the whole-image upres::warp on the cpu backend for every pixel type, channel
// count, interpolation, prefilter, border and band height (1 row to the whole image); points on
// the band seams agree with the double reference; the buffers stay within the memory budget and
// do not grow with the image's height; bad arguments are refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <upres/io.hpp>
#include <upres/tiled.hpp>
#include <upres/warp.hpp>
#include "core/host_staging.hpp"
#include "ops/warp/warp_backends.hpp"
#include "test_util.hpp"

namespace upres {
namespace {

using test::ctx_of;
using test::expect_error;
using test::random_image;
using test::same_bytes;
using test::tall_photo;

template <class T>
Image<T> whole(const Image<T>& in, int ow, int oh, const WarpOptions& o, Backend b = Backend::Cpu) {
    Image<T> out(ow, oh, in.channels());
    warp(in.view(), out.view(), Transform::make_resize(), o, ctx_of(b));
    return out;
}

template <class T>
Image<T> tiled(const Image<T>& in, int ow, int oh, const WarpOptions& o, int band,
               TiledStats* st = nullptr, std::size_t budget = std::size_t{256} << 20,
               bool in_place = true, Backend backend = Backend::Cpu) {
    Image<T> out(ow, oh, in.channels());
    test::RowEnds ends(in.view().raw(), out.view().raw(), in_place);
    RowSource& src = ends.src();
    RowSink& dst = ends.dst();
    TiledOptions to;
    to.band_rows = std::min(band, oh);  // larger bands are refused
    to.max_memory = budget;
    std::int64_t last = 0;
    to.progress = [&](std::int64_t done, std::int64_t total) {
        EXPECT_GT(done, last);
        EXPECT_EQ(total, oh);
        last = done;
    };
    const TiledStats s =
        warp_tiled(src, dst, ow, oh, Transform::make_resize(), o, to, ctx_of(backend));
    EXPECT_EQ(last, oh);
    if (st) *st = s;
    return out;
}

struct Case {
    Interp interp;
    int prefilter;  // B-spline FIR length (0: exact)
    bool antialias;
};

template <class T>
void sweep(std::uint32_t seed, int channels) {
    const Image<T> in = random_image<T>(61, 143, channels, seed, 0.0,
                                        std::is_same_v<T, float> ? 1.0 : PixelTraits<T>::max_value);
    const Case cases[] = {{Interp::BSpline, 0, false}, {Interp::BSpline, 17, false},
                          {Interp::Cubic, 0, false},   {Interp::Linear, 0, false},
                          {Interp::Nearest, 0, false}, {Interp::Cubic, 0, true}};
    const Border borders[] = {Border::Mirror, Border::Reflect, Border::Nearest, Border::Constant};
    const int sizes[][2] = {{122, 286}, {37, 61}, {90, 313}};  // x2, down, x2.19 (odd)
    for (const Case& k : cases)
        for (Border b : borders)
            for (const auto& sz : sizes) {
                if (k.antialias && sz[1] > in.height()) continue;  // antialias: down only
                WarpOptions o;
                o.interp = k.interp;
                o.prefilter = k.prefilter;
                o.antialias = k.antialias;
                o.border = b;
                o.fill = 7.0f;
                const Image<T> ref = whole(in, sz[0], sz[1], o);
                for (int band : {1, 7, 37, 256, 0}) {
                    SCOPED_TRACE(std::string(to_string(k.interp)) + " fir " +
                                 std::to_string(k.prefilter) + (k.antialias ? " aa" : "") + " " +
                                 to_string(b) + " " + std::to_string(sz[0]) + "x" +
                                 std::to_string(sz[1]) + " band " + std::to_string(band));
                    // Bands of 7 and 256 rows through band buffers (a file's path), the
                    // others computed in place.
                    const bool in_place = band != 7 && band != 256;
                    EXPECT_TRUE(same_bytes(
                        tiled(in, sz[0], sz[1], o, band, nullptr, std::size_t{256} << 20, in_place),
                        ref));
                }
            }
}

TEST(WarpTiled, BitIdenticalU8) {
    sweep<std::uint8_t>(1, 1);
    sweep<std::uint8_t>(2, 3);
}
TEST(WarpTiled, BitIdenticalU16) {
    sweep<std::uint16_t>(3, 1);
    sweep<std::uint16_t>(4, 4);
}
TEST(WarpTiled, BitIdenticalF32) {
    sweep<float>(5, 1);
    sweep<float>(6, 2);
}

// The cuda backend: bands on the device, bit-identical to upres::warp with the cuda backend on
// the whole image, for every pixel type, interpolation, exact or FIR prefilter and border, at
// bands of 7 to 4096 rows (the 256, 1000 and 4096 included). The images are tall enough
// for the prefilter's 64-row tiles and streaming segments to be cut by the bands; each of its
// kernels (Box: 1 channel; Tile: 3 channels under 2^21 samples; Stream: 3 channels above;
// FirRec: FIR 31 on 1 channel from 2^23 samples) runs as the whole image's does.
template <class T>
void sweep_cuda(std::uint32_t seed, int w, int h, int channels, const std::vector<Case>& cases,
                const std::vector<Border>& borders, const std::vector<int>& bands) {
    const Image<T> in = random_image<T>(w, h, channels, seed, 0.0,
                                        std::is_same_v<T, float> ? 1.0 : PixelTraits<T>::max_value);
    const int sizes[][2] = {
        {2 * w, 2 * h}, {w * 7 / 10, h * 7 / 10}, {w * 219 / 100 + 1, h * 219 / 100}};
    for (const Case& k : cases)
        for (Border b : borders)
            for (const auto& sz : sizes) {
                WarpOptions o;
                o.interp = k.interp;
                o.prefilter = k.prefilter;
                o.border = b;
                o.fill = 7.0f;
                const Image<T> ref = whole(in, sz[0], sz[1], o, Backend::Cuda);
                for (int band : bands) {
                    SCOPED_TRACE(std::string(to_string(PixelTraits<T>::type)) + " c" +
                                 std::to_string(channels) + " " + to_string(k.interp) + " fir " +
                                 std::to_string(k.prefilter) + " " + to_string(b) + " " +
                                 std::to_string(sz[0]) + "x" + std::to_string(sz[1]) + " band " +
                                 std::to_string(band));
                    TiledStats st;
                    const Image<T> got = tiled(in, sz[0], sz[1], o, band, &st, std::size_t{1} << 30,
                                               band != 37, Backend::Cuda);
                    EXPECT_TRUE(same_bytes(got, ref));
                    if (band > 0) {
                        EXPECT_EQ(st.band_rows, std::min(band, sz[1]));
                    }
                    EXPECT_GT(st.device_bytes, 0u);
                }
            }
}

TEST(WarpTiledCuda, BitIdenticalToTheWholeCudaCall) {
    UPRES_REQUIRE_GPU();
    const std::vector<Case> all = {{Interp::BSpline, 0, false},
                                   {Interp::BSpline, 17, false},
                                   {Interp::Cubic, 0, false},
                                   {Interp::Linear, 0, false},
                                   {Interp::Nearest, 0, false}};
    const std::vector<Border> borders = {Border::Mirror, Border::Reflect, Border::Nearest,
                                         Border::Constant};
    const std::vector<int> bands = {7, 37, 256, 1000, 4096, 0};
    sweep_cuda<std::uint8_t>(11, 301, 1203, 1, all, borders, bands);
    sweep_cuda<std::uint16_t>(12, 173, 911, 3, all, borders, bands);
    sweep_cuda<float>(13, 257, 1031, 4, all, borders, bands);
    // Stream (3 channels, 2^21 samples or more) and FirRec (FIR 31, 1 channel, 2^23 or more).
    const std::vector<Case> exact = {{Interp::BSpline, 0, false}};
    sweep_cuda<std::uint16_t>(14, 700, 1100, 3, exact, {Border::Mirror, Border::Nearest},
                              {256, 1000});
    const std::vector<Case> fir31 = {{Interp::BSpline, 31, false}};
    sweep_cuda<float>(15, 2000, 4300, 1, fir31, {Border::Mirror}, {1000, 4096});
}

// Prefiltered coefficients (float) are read as they are: no prefilter, no warm-up.
TEST(WarpTiled, PrefilteredCoefficients) {
    const Image<float> in = random_image<float>(50, 97, 1, 7, -3.0, 3.0);
    for (Border b : {Border::Mirror, Border::Nearest}) {
        WarpOptions o;
        o.prefiltered = true;
        o.border = b;
        const Image<float> ref = whole(in, 100, 194, o);
        for (int band : {1, 9, 64}) EXPECT_TRUE(same_bytes(tiled(in, 100, 194, o, band), ref));
    }
}

// A real photo in bands of 256, 1000 and 4096 rows of a tall image (the photo stacked 10 times
// with 3 rows of offset), every interpolation with its default options.
TEST(WarpTiled, RealPhotoTallImage) {
    const int w = 173, h = 5003;
    const Image<std::uint8_t> in = tall_photo("baboon.jpg", w, h);
    for (Interp i : {Interp::BSpline, Interp::Cubic}) {
        WarpOptions o;
        o.interp = i;
        const Image<std::uint8_t> ref = whole(in, 2 * w, 2 * h, o);
        for (int band : {256, 1000, 4096})
            EXPECT_TRUE(same_bytes(tiled(in, 2 * w, 2 * h, o, band), ref)) << "band " << band;
    }
}

TEST(WarpTiledCuda, RealPhotoTallImage) {
    UPRES_REQUIRE_GPU();
    const int w = 173, h = 5003;
    const Image<std::uint8_t> in = tall_photo("baboon.jpg", w, h);
    for (Interp i : {Interp::BSpline, Interp::Cubic}) {
        WarpOptions o;
        o.interp = i;
        const Image<std::uint8_t> ref = whole(in, 2 * w, 2 * h, o, Backend::Cuda);
        for (int band : {256, 1000, 4096})
            EXPECT_TRUE(same_bytes(tiled(in, 2 * w, 2 * h, o, band, nullptr, std::size_t{1} << 30,
                                         true, Backend::Cuda),
                                   ref))
                << "band " << band;
    }
}

// Bands spread over two GPUs, in either order: the bytes of one GPU's whole call.
TEST(WarpTiledCuda, SeveralDevicesGiveTheSameBytes) {
    UPRES_REQUIRE_GPU();
    const Image<std::uint16_t> in = random_image<std::uint16_t>(389, 1501, 1, 21, 0.0, 65535.0);
    Image<std::uint16_t> out(778, 3002, 1);
    ViewRowSource src(in.view());
    ViewRowSink dst(out.view());
    TiledOptions bad;
    bad.devices = {0, 0};
    expect_error(
        [&] {
            warp_tiled(src, dst, 778, 3002, Transform::make_resize(), {}, bad,
                       ctx_of(Backend::Cuda));
        },
        ErrorCode::InvalidArgument, "named twice");
    bad.devices = {cuda_device_count()};
    expect_error(
        [&] {
            warp_tiled(src, dst, 778, 3002, Transform::make_resize(), {}, bad,
                       ctx_of(Backend::Cuda));
        },
        ErrorCode::InvalidArgument, "device");
    // A B-spline source under 32 samples across: its prefilter runs whole columns, no bands.
    const Image<std::uint8_t> narrow = random_image<std::uint8_t>(20, 300, 1, 22);
    Image<std::uint8_t> narrow_out(40, 600, 1);
    ViewRowSource nsrc(narrow.view());
    ViewRowSink ndst(narrow_out.view());
    TiledOptions banded;
    banded.band_rows = 64;
    expect_error(
        [&] {
            warp_tiled(nsrc, ndst, 40, 600, Transform::make_resize(), {}, banded,
                       ctx_of(Backend::Cuda));
        },
        ErrorCode::InvalidArgument, "at least 32 samples");
    if (cuda_device_count() < 2) GTEST_SKIP() << "one CUDA device: the two-device runs skipped";
    const Image<std::uint16_t> ref = whole(in, 778, 3002, {}, Backend::Cuda);
    for (const std::vector<int>& devs : {std::vector<int>{0, 1}, std::vector<int>{1, 0}}) {
        TiledOptions to;
        to.devices = devs;
        to.band_rows = 200;
        Image<std::uint16_t> got(778, 3002, 1);
        ViewRowSink gd(got.view());
        const TiledStats st =
            warp_tiled(src, gd, 778, 3002, Transform::make_resize(), {}, to, ctx_of(Backend::Cuda));
        EXPECT_TRUE(same_bytes(got, ref)) << "devices " << devs[0] << ", " << devs[1];
        EXPECT_EQ(st.bands, 16);
    }
}

// Rows in pageable memory (sub-image views, rows wider than the image) are staged through
// page-locked buffers, rows in page-locked memory (alloc_host_frame_memory) copied straight to and
// from the device, one band per device through the driver: the same bytes, the whole cuda call's,
// either way in or out, for the zoom's bands and a rotation's boxes.
TEST(WarpTiledCuda, PageableAndPageLockedRowsGiveTheSameBytes) {
    UPRES_REQUIRE_GPU();
    const int w = 211, h = 733, c = 3, ow = 2 * w + 1, oh = 2 * h;
    const Image<std::uint16_t> big = random_image<std::uint16_t>(w + 9, h + 4, c, 31, 0.0, 65535.0);
    const ImageView<const std::uint16_t> pageable_in = big.sub(5, 3, w, h);
    const std::size_t in_n = std::size_t{w} * h * c, out_n = std::size_t{ow} * oh * c;
    const std::shared_ptr<void> locked_in(alloc_host_frame_memory(sizeof(std::uint16_t) * in_n),
                                          free_host_frame_memory);
    const std::shared_ptr<void> locked_out(alloc_host_frame_memory(sizeof(std::uint16_t) * out_n),
                                           free_host_frame_memory);
    ASSERT_TRUE(host_page_locked(locked_in.get(), sizeof(std::uint16_t) * in_n));
    ASSERT_FALSE(host_page_locked(pageable_in.data(), sizeof(std::uint16_t) * w * c));
    const ImageView<std::uint16_t> in_locked(static_cast<std::uint16_t*>(locked_in.get()), w, h, c);
    for (int y = 0; y < h; ++y)
        std::memcpy(in_locked.row(y), pageable_in.row(y), sizeof(std::uint16_t) * w * c);
    Image<std::uint16_t> dense(w, h, c);
    for (int y = 0; y < h; ++y)
        std::memcpy(dense.view().row(y), pageable_in.row(y), sizeof(std::uint16_t) * w * c);
    const ImageView<std::uint16_t> out_locked(static_cast<std::uint16_t*>(locked_out.get()), ow, oh,
                                              c);
    Image<std::uint16_t> wide(ow + 7, oh + 2, c);
    for (int y = 0; y < oh + 2; ++y)
        std::fill(wide.view().row(y), wide.view().row(y) + std::ptrdiff_t{ow + 7} * c,
                  std::uint16_t{5});
    const ImageView<std::uint16_t> out_pageable = wide.sub(4, 1, ow, oh);
    for (const Transform& t : {Transform::make_resize(), Transform::make_rotation(17.0, w, h)}) {
        Image<std::uint16_t> ref(ow, oh, c);
        warp(dense.view(), ref.view(), t, {}, ctx_of(Backend::Cuda));
        for (const ImageView<const std::uint16_t>& in :
             {ImageView<const std::uint16_t>(in_locked), pageable_in})
            for (const ImageView<std::uint16_t>& out : {out_locked, out_pageable})
                for (int band : {37, 256, oh}) {
                    SCOPED_TRACE(
                        std::string(t.kind == Transform::Kind::Resize ? "zoom" : "rotation") +
                        ", " + (in.data() == in_locked.data() ? "page-locked" : "pageable") +
                        " in, " + (out.data() == out_locked.data() ? "page-locked" : "pageable") +
                        " out, band " + std::to_string(band));
                    for (int y = 0; y < oh; ++y)
                        std::fill(out.row(y), out.row(y) + std::ptrdiff_t{ow} * c,
                                  std::uint16_t{9});
                    ViewRowSource src(in);
                    ViewRowSink dst(out);
                    TiledOptions to;
                    to.band_rows = band;
                    const TiledStats st =
                        warp_tiled(src, dst, ow, oh, t, {}, to, ctx_of(Backend::Cuda));
                    ASSERT_GT(st.band_rows, 0);
                    EXPECT_EQ(st.bands, (oh + st.band_rows - 1) / st.band_rows);
                    bool same = true;
                    for (int y = 0; y < oh && same; ++y)
                        same = std::memcmp(out.row(y), ref.view().row(y),
                                           sizeof(std::uint16_t) * ow * c) == 0;
                    EXPECT_TRUE(same);
                }
    }
    // The pixels around the sub-image are untouched.
    int touched = 0;
    for (int y = 0; y < oh + 2; ++y)
        for (int x = 0; x < ow + 7; ++x)
            if (y == 0 || y == oh + 1 || x < 4 || x >= 4 + ow)
                for (int k = 0; k < c; ++k) touched += wide.view().row(y)[x * c + k] != 5;
    EXPECT_EQ(touched, 0);
}

// A task of a cluster (upres.dask): output rows [y0, y1) from only the source rows
// warp_tiled_source_rows names, as one band (first_row / last_row), into a sink of those rows:
// the whole call's bytes, for ranges that cut anywhere. On the cuda backend the rows are those
// for any device (two of the prefilter's largest units beyond the taps), a superset of the cpu's.
template <class T>
void check_ranges(const Image<T>& in, int ow, int oh, const WarpOptions& o,
                  Backend backend = Backend::Cpu) {
    const Image<T> ref = whole(in, ow, oh, o, backend);
    const int c = in.channels();
    std::mt19937 rng(7);
    std::vector<int> cuts{0, oh};
    for (int i = 0; i < 6; ++i) cuts.push_back(std::uniform_int_distribution<int>(1, oh - 1)(rng));
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    for (std::size_t k = 0; k + 1 < cuts.size(); ++k) {
        const int y0 = cuts[k], y1 = cuts[k + 1];
        const RowRange r = warp_tiled_source_rows(in.width(), in.height(), ow, oh,
                                                  Transform::make_resize(), o, y0, y1, backend);
        ASSERT_TRUE(r.first >= 0 && r.first < r.last && r.last <= in.height());
        const RowRange rc = warp_tiled_source_rows(in.width(), in.height(), ow, oh,
                                                   Transform::make_resize(), o, y0, y1);
        EXPECT_TRUE(r.first <= rc.first && rc.last <= r.last);
        Image<T> held(in.width(), r.last - r.first, c);  // only the rows the task holds
        for (int y = r.first; y < r.last; ++y)
            std::memcpy(held.view().row(y - r.first), in.view().row(y), sizeof(T) * in.width() * c);
        Image<T> band(ow, y1 - y0, c);
        ViewRowSource src(held.view().raw(), r.first, in.height());
        ViewRowSink dst(band.view().raw(), y0);
        TiledOptions to;
        to.first_row = y0;
        to.last_row = y1;
        to.band_rows = y1 - y0;
        warp_tiled(src, dst, ow, oh, Transform::make_resize(), o, to, ctx_of(backend));
        for (int y = y0; y < y1; ++y)
            ASSERT_EQ(0,
                      std::memcmp(band.view().row(y - y0), ref.view().row(y), sizeof(T) * ow * c))
                << "rows [" << y0 << ", " << y1 << "), row " << y;
    }
}

TEST(WarpTiled, RangesFromTheirSourceRowsOnly) {
    for (Interp i : {Interp::BSpline, Interp::Cubic, Interp::Linear}) {
        for (Border b : {Border::Mirror, Border::Nearest, Border::Constant}) {
            WarpOptions o;
            o.interp = i;
            o.border = b;
            check_ranges(random_image<std::uint16_t>(37, 211, 2, 3), 80, 433, o);
            check_ranges(random_image<float>(29, 301, 1, 4, -1.0, 2.0), 17, 97, o);
        }
    }
}

// The rows a range of output rows reads (cpu::ResizeRowReach, built once per call over the whole
// output in pieces of 4096 rows) are the rows its rows read one by one, and the rows from tables
// built for that range alone: across the pieces' seams, for magnifications and reductions
// (antialiased: wider tables), every border's edge rows.
TEST(WarpTiled, RowReachOfARangeIsItsRows) {
    struct RowCase {
        int sh, oh;
        Interp interp;
        Border border;
        bool antialias;
    };
    const RowCase cases[] = {{3001, 9007, Interp::BSpline, Border::Mirror, false},
                             {9000, 4999, Interp::Cubic, Border::Reflect, true},
                             {5000, 8200, Interp::Linear, Border::Constant, false}};
    std::mt19937 rng(11);
    for (const RowCase& k : cases) {
        WarpOptions o;
        o.interp = k.interp;
        o.border = k.border;
        o.antialias = k.antialias;
        const WarpPlan p = make_warp_plan(Transform::make_resize(), o, 40, k.sh, 50, k.oh);
        const int span_h = k.sh + 2 * p.pad;
        const cpu::ResizeRowReach all(p, span_h, 0, k.oh);
        std::vector<std::pair<int, int>> one(static_cast<std::size_t>(k.oh));
        for (int y = 0; y < k.oh; ++y)
            one[static_cast<std::size_t>(y)] =
                cpu::ResizeRowReach(p, span_h, y, y + 1).rows(y, y + 1);
        for (int n = 0; n < 60; ++n) {
            const int a = std::uniform_int_distribution<int>(0, k.oh - 1)(rng);
            const int b = n % 3 == 0 ? k.oh
                                     : std::uniform_int_distribution<int>(
                                           a + 1, std::min(k.oh, a + 5000))(rng);
            int lo = span_h, hi = -1;
            for (int y = a; y < b; ++y) {
                lo = std::min(lo, one[static_cast<std::size_t>(y)].first);
                hi = std::max(hi, one[static_cast<std::size_t>(y)].second);
            }
            const auto got = all.rows(a, b);
            const auto own = cpu::ResizeRowReach(p, span_h, a, b).rows(a, b);
            ASSERT_EQ(got, std::make_pair(lo, hi)) << "rows [" << a << ", " << b << ")";
            ASSERT_EQ(own, got) << "rows [" << a << ", " << b << ")";
            ASSERT_LE(lo, hi);
            EXPECT_GE(lo, 0);
            EXPECT_LT(hi, span_h);
        }
    }
}

// upres.dask's tasks on the GPU: the rows warp_tiled_source_rows names for the cuda backend hold
// every band it runs, on images whose prefilter runs each of its kernels (Box: 1 channel; Tile:
// 3 channels; Stream: 3 channels over 2^21 samples, segments of the device's choosing).
TEST(WarpTiledCuda, RangesFromTheirSourceRowsOnly) {
    UPRES_REQUIRE_GPU();
    for (Interp i : {Interp::BSpline, Interp::Cubic}) {
        WarpOptions o;
        o.interp = i;
        o.border = Border::Mirror;
        check_ranges(random_image<std::uint16_t>(300, 1211, 1, 3), 600, 2422, o, Backend::Cuda);
        check_ranges(random_image<float>(129, 701, 3, 4, -1.0, 2.0), 250, 1400, o, Backend::Cuda);
        check_ranges(random_image<std::uint8_t>(700, 1100, 3, 5), 1400, 2200, o, Backend::Cuda);
        o.prefilter = 17;
        check_ranges(random_image<std::uint8_t>(400, 900, 1, 6), 517, 1901, o, Backend::Cuda);
    }
}

TEST(WarpTiled, SourceRowsForTheCudaBackendHoldTheCpuRows) {
    WarpOptions o;  // the exact B-spline
    const RowRange cpu =
        warp_tiled_source_rows(500, 4000, 1000, 8000, Transform::make_resize(), o, 4000, 4100);
    const RowRange gpu = warp_tiled_source_rows(500, 4000, 1000, 8000, Transform::make_resize(), o,
                                                4000, 4100, Backend::Cuda);
    EXPECT_LE(gpu.first, cpu.first - 256);
    EXPECT_GE(gpu.last, cpu.last + 256);
    // Under 32 samples across the cuda prefilter runs whole columns: every row.
    const RowRange narrow = warp_tiled_source_rows(20, 4000, 40, 8000, Transform::make_resize(), o,
                                                   4000, 4100, Backend::Cuda);
    EXPECT_EQ(narrow.first, 0);
    EXPECT_EQ(narrow.last, 4000);
    expect_error(
        [&] {
            warp_tiled_source_rows(20, 40, 40, 80, Transform::make_resize(), o, 0, 8,
                                   Backend::Reference);
        },
        ErrorCode::InvalidArgument, "reference");
}

// 1000 random points on band seams (the rows just above and below each band's first row)
// against the double-precision reference: within the cpu backend's tolerance (docs/numerics.md:
// half a level plus rounding for u8).
TEST(WarpTiled, SeamPointsAgainstReference) {
    const Image<std::uint8_t> in = random_image<std::uint8_t>(83, 71, 1, 11);
    WarpOptions o;
    const int ow = 166, oh = 142, band = 13;
    const Image<std::uint8_t> ref = whole(in, ow, oh, o, Backend::Reference);
    const Image<std::uint8_t> t = tiled(in, ow, oh, o, band);
    std::mt19937 rng(5);
    int checked = 0;
    for (int k = 0; k < 1000; ++k) {
        const int seam = band * (1 + static_cast<int>(rng() % ((oh - 1) / band)));
        const int y = seam - 1 + static_cast<int>(rng() % 2);
        const int x = static_cast<int>(rng() % ow);
        EXPECT_LE(std::abs(int{t.view()(x, y)} - int{ref.view()(x, y)}), 1)
            << "(" << x << ", " << y << ")";
        ++checked;
    }
    EXPECT_EQ(checked, 1000);
}

// The buffers follow the budget, not the height.
TEST(WarpTiled, MemoryBoundedByBudget) {
    WarpOptions o;
    const std::size_t budget = std::size_t{2} << 20;
    TiledStats a, b;
    const Image<std::uint16_t> small = random_image<std::uint16_t>(500, 2000, 1, 3);
    const Image<std::uint16_t> tall = random_image<std::uint16_t>(500, 4000, 1, 4);
    tiled(small, 1000, 4000, o, 0, &a, budget);
    const Image<std::uint16_t> t = tiled(tall, 1000, 8000, o, 0, &b, budget);
    EXPECT_LE(a.buffer_bytes, budget);
    EXPECT_LE(b.buffer_bytes, budget);
    EXPECT_GT(b.bands, 10);
    EXPECT_LE(b.buffer_bytes, a.buffer_bytes + a.buffer_bytes / 50);  // flat in the height
    // Each band re-reads at most its warm-up (64 rows, aligned to 8) and 4 taps at each cut.
    EXPECT_LE(b.rows_read, 4000 + std::int64_t{b.bands} * 2 * (64 + 8 + 4));
    EXPECT_TRUE(same_bytes(t, whole(tall, 1000, 8000, o)));
}

TEST(WarpTiled, BadArguments) {
    const Image<std::uint8_t> in = random_image<std::uint8_t>(20, 20, 1, 1);
    Image<std::uint8_t> out(40, 40, 1);
    ViewRowSource src(in.view());
    ViewRowSink dst(out.view());
    const auto run = [&](const Transform& t, const WarpOptions& o, const TiledOptions& to,
                         const Context& ctx) { warp_tiled(src, dst, 40, 40, t, o, to, ctx); };
    const Transform rz = Transform::make_resize();
    WarpOptions wrap;
    wrap.border = Border::Wrap;
    expect_error([&] { run(rz, wrap, {}, {}); }, ErrorCode::InvalidArgument, "wrap");
    expect_error(
        [&] {
            warp_tiled_source_rows(20, 20, 40, 40, Transform::make_rotation(10, 20, 20), {}, 0, 8);
        },
        ErrorCode::InvalidArgument, "zoom/resize");
    WarpOptions wrap_bspline;
    wrap_bspline.border = Border::Wrap;
    expect_error([&] { run(Transform::make_rotation(10, 20, 20), wrap_bspline, {}, {}); },
                 ErrorCode::InvalidArgument, "wrap");
    // Point maps run in boxes on the cuda backend (warp_box_test's WarpBoxCuda); its options as
    // the cpu backend's, and without a device the backend's error.
    WarpOptions fast;
    fast.fast_texture = true;
    expect_error(
        [&] { run(Transform::make_rotation(10, 20, 20), fast, {}, ctx_of(Backend::Cuda)); },
        ErrorCode::InvalidArgument, "fast_texture is not tiled");
    if (cuda_device_count() == 0)
        expect_error(
            [&] { run(Transform::make_rotation(10, 20, 20), {}, {}, ctx_of(Backend::Cuda)); },
            ErrorCode::BackendUnavailable, "CUDA");
    WarpOptions aa;
    aa.interp = Interp::Cubic;
    aa.antialias = true;
    expect_error([&] { run(rz, aa, {}, ctx_of(Backend::Cuda)); }, ErrorCode::InvalidArgument,
                 "antialiased");
    expect_error([&] { run(rz, {}, {}, ctx_of(Backend::Reference)); }, ErrorCode::InvalidArgument,
                 "cpu backend");
    TiledOptions neg;
    neg.band_rows = -1;
    expect_error([&] { run(rz, {}, neg, {}); }, ErrorCode::InvalidArgument, "band_rows -1");
    TiledOptions tall;
    tall.band_rows = 41;
    expect_error([&] { run(rz, {}, tall, {}); }, ErrorCode::InvalidArgument, "outside [0, 40]");
    TiledOptions tiny;
    tiny.max_memory = 100;
    expect_error([&] { run(rz, {}, tiny, {}); }, ErrorCode::InvalidArgument, "too small");
    expect_error([&] { warp_tiled(src, dst, 0, 40, rz); }, ErrorCode::InvalidArgument,
                 "output width");
    expect_error([&] { warp_tiled(src, dst, kMaxTiledDimension + 1, 40, rz); },
                 ErrorCode::InvalidArgument, "output width");
    WarpOptions nanfill;
    nanfill.fill = std::nanf("");
    nanfill.border = Border::Constant;
    expect_error([&] { run(rz, nanfill, {}, {}); }, ErrorCode::InvalidArgument, "fill");
    // A NaN in a float source is refused for the B-spline (the whole image's IIR would carry it
    // along its column), named by its position.
    Image<float> fin = random_image<float>(20, 20, 1, 2, 0.0, 1.0);
    fin.view()(3, 17) = std::nanf("");
    Image<float> fout(40, 40, 1);
    ViewRowSource fsrc(fin.view());
    ViewRowSink fdst(fout.view());
    expect_error([&] { warp_tiled(fsrc, fdst, 40, 40, rz); }, ErrorCode::InvalidArgument,
                 "(x 3, y 17, channel 0) is NaN");
    TiledOptions before;
    before.first_row = 20;
    before.last_row = 10;
    expect_error([&] { run(rz, {}, before, {}); }, ErrorCode::InvalidArgument, "last_row 10");
    expect_error([&] { warp_tiled_source_rows(20, 20, 40, 40, rz, {}, 30, 41); },
                 ErrorCode::InvalidArgument, "output rows [30, 41)");
    expect_error([&] { warp_tiled_source_rows(20, 20, 40, 40, rz, {}, 5, 5); },
                 ErrorCode::InvalidArgument, "non-empty");
    expect_error([&] { warp_tiled_source_rows(20, 20, 40, 40, rz, wrap, 0, 8); },
                 ErrorCode::InvalidArgument, "wrap");
    // A source of some rows only: reading others is refused, as is a window past the image.
    ViewRowSource part(in.view().raw(), 10, 100);
    std::vector<std::uint8_t> row(20);
    expect_error([&] { part.read_rows(9, 1, row.data(), 20); }, ErrorCode::InvalidArgument,
                 "outside the rows [10, 30)");
    expect_error([&] { ViewRowSource(in.view().raw(), 90, 100); }, ErrorCode::InvalidArgument,
                 "not inside an image of 100 rows");
    // A progress callback that throws stops the run: the sink is not committed.
    TiledOptions stop;
    stop.band_rows = 8;
    stop.progress = [](std::int64_t, std::int64_t) { throw Error(ErrorCode::IoError, "stop"); };
    expect_error([&] { run(rz, {}, stop, {}); }, ErrorCode::IoError, "stop");
}

}  // namespace
}  // namespace upres
