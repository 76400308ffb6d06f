// Tiled B-spline prefilter (upres/tiled.hpp, bspline_prefilter_tiled): band by band of rows, the
// coefficients are bit-identical to the whole-image bspline_prefilter on the cpu backend for
// every pixel type, channel count, border, filter (exact IIR and FIR), axis choice and band
// height (1 row to the whole image, 256 / 1000 / 4096 on a tall photo); points on the band
// seams agree with the double reference; the buffers follow the memory budget, not the height;
// bad arguments are refused.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include <upres/bspline.hpp>
#include <upres/io.hpp>
#include <upres/tiled.hpp>
#include "test_util.hpp"

namespace upres {
namespace {

using test::ctx_of;
using test::expect_error;
using test::random_image;
using test::same_bytes;
using test::tall_photo;

template <class T>
Image<float> as_float(const Image<T>& in) {
    Image<float> f(in.width(), in.height(), in.channels());
    for (int y = 0; y < in.height(); ++y)
        for (int i = 0; i < in.width() * in.channels(); ++i)
            f.view().row(y)[i] = static_cast<float>(in.view().row(y)[i]);
    return f;
}

template <class T>
Image<float> whole(const Image<T>& in, const PrefilterOptions& o, Backend b = Backend::Cpu) {
    const Image<float> f = as_float(in);
    Image<float> out(in.width(), in.height(), in.channels());
    bspline_prefilter(f.view(), out.view(), o, ctx_of(b));
    return out;
}

template <class T>
Image<float> tiled(const Image<T>& in, const PrefilterOptions& o, int band,
                   TiledStats* st = nullptr, std::size_t budget = std::size_t{256} << 20,
                   bool in_place = true) {
    Image<float> out(in.width(), in.height(), in.channels());
    test::RowEnds ends(in.view().raw(), out.view().raw(), in_place);
    RowSource& src = ends.src();
    RowSink& dst = ends.dst();
    TiledOptions to;
    to.band_rows = std::min(band, in.height());
    to.max_memory = budget;
    std::int64_t last = 0;
    to.progress = [&](std::int64_t done, std::int64_t total) {
        EXPECT_GT(done, last);
        EXPECT_EQ(total, in.height());
        last = done;
    };
    const TiledStats s = bspline_prefilter_tiled(src, dst, o, to, ctx_of(Backend::Cpu));
    EXPECT_EQ(last, in.height());
    if (st) *st = s;
    return out;
}

template <class T>
void sweep(std::uint32_t seed, int channels) {
    // 211 rows: bands cut it with warm-up at both ends, at one, and at none.
    const Image<T> in = random_image<T>(37, 211, channels, seed, 0.0,
                                        std::is_same_v<T, float> ? 1.0 : PixelTraits<T>::max_value);
    for (Border border : {Border::Mirror, Border::Reflect, Border::Nearest, Border::Constant})
        for (int fir : {0, 7, 31})
            for (PrefilterAxes axes : {PrefilterAxes::Both, PrefilterAxes::X, PrefilterAxes::Y}) {
                PrefilterOptions o;
                o.border = border;
                o.fir_length = fir;
                o.axes = axes;
                const Image<float> ref = whole(in, o);
                // Bands of 7, 100 and 1000 rows through band buffers (a file's path), the
                // others from the source in place.
                for (int band : {1, 7, 37, 64, 100, 256, 1000, 4096})
                    EXPECT_TRUE(same_bytes(tiled(in, o, band, nullptr, std::size_t{256} << 20,
                                                 band != 7 && band != 100 && band != 1000),
                                           ref))
                        << "border " << to_string(border) << ", fir " << fir << ", axes "
                        << to_string(axes) << ", band " << band << ", " << channels << " channels";
            }
}

TEST(PrefilterTiled, BitIdenticalU8) {
    sweep<std::uint8_t>(1, 1);
    sweep<std::uint8_t>(2, 3);
}
TEST(PrefilterTiled, BitIdenticalU16) {
    sweep<std::uint16_t>(3, 1);
    sweep<std::uint16_t>(4, 4);
}
TEST(PrefilterTiled, BitIdenticalF32) {
    sweep<float>(5, 1);
    sweep<float>(6, 2);
}

// A real photo in bands of 256, 1000 and 4096 rows of a tall image (the photo stacked with
// 3 rows of offset), the default exact prefilter, and the automatic band height.
TEST(PrefilterTiled, RealPhotoTallImage) {
    const int w = 173, h = 5003;
    const Image<std::uint8_t> in = tall_photo("baboon.jpg", w, h);
    const Image<float> ref = whole(in, {});
    for (int band : {256, 1000, 4096, 0})
        EXPECT_TRUE(same_bytes(tiled(in, {}, band), ref)) << "band " << band;
}

// A task of a cluster: rows [y0, y1) from only the rows bspline_prefilter_tiled_source_rows
// names: the whole image's coefficients.
TEST(PrefilterTiled, RangesFromTheirSourceRowsOnly) {
    const Image<std::uint16_t> in = random_image<std::uint16_t>(41, 333, 2, 9);
    for (PrefilterAxes axes : {PrefilterAxes::Both, PrefilterAxes::Y, PrefilterAxes::X}) {
        PrefilterOptions o;
        o.axes = axes;
        const Image<float> ref = whole(in, o);
        for (auto [y0, y1] : {std::pair{0, 1}, {5, 77}, {64, 200}, {199, 333}, {332, 333}}) {
            const RowRange r = bspline_prefilter_tiled_source_rows(41, 333, o, y0, y1);
            Image<std::uint16_t> held(41, r.last - r.first, 2);
            for (int y = r.first; y < r.last; ++y)
                std::memcpy(held.view().row(y - r.first), in.view().row(y), 41 * 2 * 2);
            Image<float> band(41, y1 - y0, 2);
            ViewRowSource src(held.view().raw(), r.first, 333);
            ViewRowSink dst(band.view().raw(), y0);
            TiledOptions to;
            to.first_row = y0;
            to.last_row = y1;
            to.band_rows = y1 - y0;
            bspline_prefilter_tiled(src, dst, o, to, ctx_of(Backend::Cpu));
            for (int y = y0; y < y1; ++y)
                ASSERT_EQ(0, std::memcmp(band.view().row(y - y0), ref.view().row(y), 41 * 2 * 4))
                    << "rows [" << y0 << ", " << y1 << "), row " << y;
        }
    }
    expect_error([&] { bspline_prefilter_tiled_source_rows(41, 333, {}, 0, 334); },
                 ErrorCode::InvalidArgument, "output rows [0, 334)");
}

// 1000 random points on band seams (the rows just above and below each band's first row)
// against the double-precision reference, within the cpu backend's tolerance for the
// prefilter (docs/numerics.md: 2e-6 of the value range).
TEST(PrefilterTiled, SeamPointsAgainstReference) {
    const Image<float> in = random_image<float>(83, 301, 1, 11, 0.0, 1.0);
    const int band = 13;
    const Image<float> ref = whole(in, {}, Backend::Reference);
    const Image<float> t = tiled(in, {}, band);
    std::mt19937 rng(5);
    for (int k = 0; k < 1000; ++k) {
        const int seam = band * (1 + static_cast<int>(rng() % ((in.height() - 1) / band)));
        const int y = seam - 1 + static_cast<int>(rng() % 2);
        const int x = static_cast<int>(rng() % in.width());
        EXPECT_NEAR(t.view()(x, y), ref.view()(x, y), 2e-6) << "(" << x << ", " << y << ")";
    }
}

// The buffers follow the budget, not the height; each band reads its rows and the warm-up.
TEST(PrefilterTiled, MemoryBoundedByBudget) {
    const std::size_t budget = std::size_t{1} << 20;
    TiledStats a, b;
    const Image<std::uint16_t> small = random_image<std::uint16_t>(500, 2000, 1, 3);
    const Image<std::uint16_t> tall = random_image<std::uint16_t>(500, 4000, 1, 4);
    tiled(small, {}, 0, &a, budget);
    const Image<float> t = tiled(tall, {}, 0, &b, budget);
    EXPECT_LE(a.buffer_bytes, budget);
    EXPECT_LE(b.buffer_bytes, budget);
    EXPECT_GT(b.bands, 10);
    EXPECT_LE(b.buffer_bytes, a.buffer_bytes + a.buffer_bytes / 50);  // flat in the height
    EXPECT_LE(b.rows_read, 4000 + std::int64_t{b.bands} * 2 * (64 + 8));
    EXPECT_TRUE(same_bytes(t, whole(tall, {})));
}

TEST(PrefilterTiled, BadArguments) {
    const Image<std::uint8_t> in = random_image<std::uint8_t>(20, 20, 1, 1);
    Image<float> out(20, 20, 1);
    ViewRowSource src(in.view());
    ViewRowSink dst(out.view());
    const auto run = [&](const PrefilterOptions& o, const TiledOptions& to, const Context& ctx) {
        bspline_prefilter_tiled(src, dst, o, to, ctx);
    };
    PrefilterOptions wrap;
    wrap.border = Border::Wrap;
    expect_error([&] { run(wrap, {}, {}); }, ErrorCode::InvalidArgument, "wrap");
    PrefilterOptions even;
    even.fir_length = 8;
    expect_error([&] { run(even, {}, {}); }, ErrorCode::InvalidArgument, "FIR length 8");
    expect_error([&] { run({}, {}, ctx_of(Backend::Cuda)); }, ErrorCode::InvalidArgument,
                 "cpu backend");
    expect_error([&] { run({}, {}, ctx_of(Backend::Reference)); }, ErrorCode::InvalidArgument,
                 "cpu backend");
    TiledOptions neg;
    neg.band_rows = -1;
    expect_error([&] { run({}, neg, {}); }, ErrorCode::InvalidArgument, "band_rows -1");
    TiledOptions tall;
    tall.band_rows = 21;
    expect_error([&] { run({}, tall, {}); }, ErrorCode::InvalidArgument, "outside [0, 20]");
    TiledOptions tiny;
    tiny.max_memory = 100;
    expect_error([&] { run({}, tiny, {}); }, ErrorCode::InvalidArgument, "too small");
    // A NaN in a float source is refused (the whole image's IIR would carry it along its
    // column), named by its position.
    Image<float> fin = random_image<float>(20, 20, 1, 2, 0.0, 1.0);
    fin.view()(3, 17) = std::nanf("");
    ViewRowSource fsrc(fin.view());
    expect_error([&] { bspline_prefilter_tiled(fsrc, dst); }, ErrorCode::InvalidArgument,
                 "(x 3, y 17, channel 0) is NaN");
    // A progress callback that throws stops the run.
    TiledOptions stop;
    stop.band_rows = 8;
    stop.progress = [](std::int64_t, std::int64_t) { throw Error(ErrorCode::IoError, "stop"); };
    expect_error([&] { run({}, stop, {}); }, ErrorCode::IoError, "stop");
}

}  // namespace
}  // namespace upres
