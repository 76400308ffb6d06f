// Two-dimensional tiles of the point transforms (upres/tiled.hpp: warp_source_box, warp_box):
// tile by tile, each computed from only its source box (a sub-image view of the source), the
// affine, rotation, perspective (with and without a pole in the output), remap and flow warps
// are bit-identical to the whole-image upres::warp on the cpu backend for every pixel type,
// channel count, interpolation, prefilter and border, at awkward tile sizes; points on the tile
// seams agree with the double reference; source boxes stay near the tile's footprint; bad
// arguments are refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <upres/tiled.hpp>
#include <upres/warp.hpp>
#include "ops/warp/warp_backends.hpp"
#include "test_util.hpp"

namespace upres {
namespace {

using test::ctx_of;
using test::expect_error;
using test::random_image;
using test::same_bytes;

// A map of one of the kinds, for a source of sw x sh and an output of ow x oh; the remap and
// flow fields (smooth, with a few samples far outside) live in `field`.
Transform make_map(int kind, int sw, int sh, int ow, int oh, Image<float>& field) {
    switch (kind) {
        case 0:  // rotation about the centre, the output larger (corners outside)
            return Transform::make_affine([&] {
                Affine a = rotation(27.0, ow, oh);
                a.m[2] += 0.5 * (sw - ow), a.m[5] += 0.5 * (sh - oh);
                return a;
            }());
        case 1: {  // shear and a zoom of 0.8, shifted: reads past the left and the top
            Affine a;
            const double m[6] = {0.8, 0.23, -17.3, -0.11, 0.85, -9.6};
            std::copy(m, m + 6, a.m);
            return Transform::make_affine(a);
        }
        case 2: {  // mild perspective, no pole
            Homography h;
            const double m[9] = {1.02, 0.05, -3.0, 0.03, 0.97, 2.0, 4e-4, -2e-4, 1.0};
            std::copy(m, m + 9, h.h);
            return Transform::make_perspective(h);
        }
        case 3: {  // strong perspective: the horizon (w' = 0) crosses the output
            Homography h;
            const double m[9] = {1.0, 0.2, 3.0, 0.1, 1.1, -4.0, -2e-3, 6e-3, -0.4};
            std::copy(m, m + 9, h.h);
            return Transform::make_perspective(h);
        }
        default: {  // 4: remap, 5: flow
            field = Image<float>(ow, oh, 2);
            std::mt19937 rng(static_cast<std::uint32_t>(kind));
            std::uniform_real_distribution<double> jitter(-1.5, 1.5);
            for (int y = 0; y < oh; ++y)
                for (int x = 0; x < ow; ++x) {
                    double u = 0.9 * x + 3.0 * std::sin(y / 13.0) + jitter(rng) - 4.0;
                    double v = 1.05 * y + 2.0 * std::cos(x / 9.0) + jitter(rng) - 3.0;
                    if ((x * 7 + y * 3) % 97 == 0) u += 1.5 * sw, v -= 0.7 * sh;  // far outside
                    if (kind == 5) u -= x, v -= y;
                    field.view()(x, y, 0) = static_cast<float>(u);
                    field.view()(x, y, 1) = static_cast<float>(v);
                }
            const ImageView<const float> f = std::as_const(field).view();
            return kind == 4 ? Transform::make_remap(f) : Transform::make_flow(f);
        }
    }
}

// The output assembled tile by tile (tiles of tw x th), each from its source box only.
template <class T>
Image<T> by_tiles(ImageView<const T> in, int ow, int oh, int kind, const Image<float>& field,
                  const WarpOptions& o, int tw, int th, int* inner = nullptr,
                  Backend backend = Backend::Cpu) {
    Image<T> out(ow, oh, in.channels());
    Image<float> dummy;
    Context one_thread = ctx_of(backend);  // as a task of upres.dask (small tiles)
    one_thread.threads = 1;
    for (int y0 = 0; y0 < oh; y0 += th)
        for (int x0 = 0; x0 < ow; x0 += tw) {
            const Box ob{x0, y0, std::min(ow, x0 + tw), std::min(oh, y0 + th)};
            Transform t = make_map(kind, in.width(), in.height(), ow, oh, dummy);
            if (kind >= 4) t.field = field.view().sub(ob.x0, ob.y0, ob.width(), ob.height());
            const Box ib =
                warp_source_box(in.width(), in.height(), ow, oh, t, o, ob, backend, in.channels());
            ImageView<const T> src;
            if (!ib.empty()) src = in.sub(ib.x0, ib.y0, ib.width(), ib.height());
            if (inner && ib.x0 > 0 && ib.y0 > 0 && ib.x1 < in.width() && ib.y1 < in.height())
                ++*inner;  // cut on all four sides
            warp_box(src, ib, in.width(), in.height(),
                     out.view().sub(ob.x0, ob.y0, ob.width(), ob.height()), ob, ow, oh, t, o,
                     one_thread);
        }
    return out;
}

template <class T>
Image<T> whole(ImageView<const T> in, int ow, int oh, int kind, const WarpOptions& o,
               Backend b = Backend::Cpu) {
    Image<float> field;
    const Transform t = make_map(kind, in.width(), in.height(), ow, oh, field);
    Image<T> out(ow, oh, in.channels());
    warp(in, out.view(), t, o, ctx_of(b));
    return out;
}

struct Case {
    Interp interp;
    int prefilter;  // B-spline FIR length (0: exact)
    bool prefiltered;
};

// The options of a case and border (fill: a quarter of the pixel range).
template <class T>
WarpOptions options_of(const Case& k, Border b) {
    WarpOptions o;
    o.interp = k.interp;
    o.prefilter = k.prefilter;
    o.prefiltered = k.prefiltered;
    o.border = b;
    o.fill = 0.25f * PixelTraits<T>::max_value;
    return o;
}

template <class T>
void sweep(std::uint32_t seed, int channels, int sw, int sh) {
    const Image<T> in = random_image<T>(sw, sh, channels, seed, 0.0,
                                        std::is_same_v<T, float> ? 1.0 : PixelTraits<T>::max_value);
    std::vector<Case> cases = {{Interp::BSpline, 0, false},
                               {Interp::BSpline, 17, false},
                               {Interp::Cubic, 0, false},
                               {Interp::Linear, 0, false},
                               {Interp::Nearest, 0, false}};
    if (std::is_same_v<T, float>) cases.push_back({Interp::BSpline, 0, true});
    const Border borders[] = {Border::Mirror, Border::Reflect, Border::Nearest, Border::Constant,
                              Border::Wrap};
    const int ow = sw + 23, oh = sh - 11;
    const int tiles[][2] = {{67, 45}, {128, 200}};
    for (int kind = 0; kind < 6; ++kind) {
        Image<float> field;
        make_map(kind, sw, sh, ow, oh, field);
        for (const Case& k : cases)
            for (Border b : borders) {
                if (b == Border::Wrap && k.interp == Interp::BSpline && !k.prefiltered) continue;
                const WarpOptions o = options_of<T>(k, b);
                const Image<T> ref = whole(in.view(), ow, oh, kind, o);
                for (const auto& tl : tiles) {
                    // The second tiling for the rotation and the exact B-spline only (the
                    // sanitizer build runs this sweep too).
                    if (tl[0] == 128 && (kind != 0 || k.prefilter != 0)) continue;
                    const Image<T> t = by_tiles(in.view(), ow, oh, kind, field, o, tl[0], tl[1]);
                    EXPECT_TRUE(same_bytes(t, ref))
                        << "map " << kind << " interp " << to_string(k.interp) << " fir "
                        << k.prefilter << " prefiltered " << k.prefiltered << " border "
                        << to_string(b) << " tiles " << tl[0] << "x" << tl[1] << " channels "
                        << channels;
                }
            }
    }
}

TEST(WarpBox, BitIdenticalU8) {
    sweep<std::uint8_t>(1, 1, 241, 203);
    sweep<std::uint8_t>(2, 3, 181, 150);
}
TEST(WarpBox, BitIdenticalU16) {
    sweep<std::uint16_t>(3, 2, 233, 190);
    sweep<std::uint16_t>(4, 4, 150, 161);
}
TEST(WarpBox, BitIdenticalF32) {
    sweep<float>(5, 1, 229, 190);
    sweep<float>(6, 3, 150, 131);
}

// A photo (not noise), rotated, as a sub-image view of a larger one; boxes cut on all four
// sides (the prefilter's warm-up at every cut).
TEST(WarpBox, PhotoSubImage) {
    const Image<std::uint8_t> photo = test::tall_photo("baboon.jpg", 512, 700);  // 512 wide
    const ImageView<const std::uint8_t> in = photo.sub(17, 31, 490, 650);
    const int ow = 500, oh = 640;
    for (Border b : {Border::Mirror, Border::Constant}) {
        WarpOptions o;
        o.border = b;
        int inner = 0;
        EXPECT_TRUE(same_bytes(by_tiles(in, ow, oh, 0, Image<float>(), o, 100, 90, &inner),
                               whole(in, ow, oh, 0, o)));
        EXPECT_GT(inner, 4);
    }
}

// 1000 random points on tile seams (the rows and columns either side of a tile's edge)
// against the double-precision reference: within the cpu backend's tolerance (docs/numerics.md:
// half a level plus rounding for u8).
TEST(WarpBox, SeamPointsAgainstReference) {
    const Image<std::uint8_t> in = random_image<std::uint8_t>(190, 170, 1, 11);
    WarpOptions o;
    const int ow = 200, oh = 180, tw = 47, th = 39;
    const Image<std::uint8_t> ref = whole(in.view(), ow, oh, 1, o, Backend::Reference);
    const Image<std::uint8_t> t = by_tiles(in.view(), ow, oh, 1, Image<float>(), o, tw, th);
    std::mt19937 rng(5);
    for (int k = 0; k < 1000; ++k) {
        int x = static_cast<int>(rng() % ow), y = static_cast<int>(rng() % oh);
        if (k % 2) {
            x = tw * (1 + static_cast<int>(rng() % ((ow - 1) / tw))) - 1 +
                static_cast<int>(rng() % 2);
        } else {
            y = th * (1 + static_cast<int>(rng() % ((oh - 1) / th))) - 1 +
                static_cast<int>(rng() % 2);
        }
        EXPECT_LE(std::abs(int{t.view()(x, y)} - int{ref.view()(x, y)}), 1)
            << "(" << x << ", " << y << ")";
    }
}

// A tile reads about its footprint: the map's image of the tile, the taps and, with the
// B-spline prefilter, 64 samples of warm-up each side aligned to 64 columns and 8 rows.
TEST(WarpBox, SourceBoxNearTheFootprint) {
    const int n = 4096, t = 256;
    const Transform rot = Transform::make_rotation(30.0, n, n);
    const Box ob{1024, 2048, 1024 + t, 2048 + t};
    WarpOptions lin;
    lin.interp = Interp::Linear;
    const double side = t * (std::cos(M_PI / 6) + std::sin(M_PI / 6));  // the footprint's box
    const Box a = warp_source_box(n, n, n, n, rot, lin, ob);
    EXPECT_LE(a.width(), side + 8);
    EXPECT_LE(a.height(), side + 8);
    EXPECT_GE(a.width(), side - 2);
    const Box b = warp_source_box(n, n, n, n, rot, WarpOptions{}, ob);  // B-spline, prefilter
    EXPECT_LE(b.width(), side + 8 + 2 * 64 + 2 * 64);
    EXPECT_LE(b.height(), side + 8 + 2 * 64 + 2 * 8);
    EXPECT_EQ(b.x0 % 64, 0);
    EXPECT_EQ(b.y0 % 8, 0);
    // Constant border, a tile whose every output is outside: nothing to read.
    WarpOptions c;
    c.border = Border::Constant;
    Affine far;
    far.m[2] = 5000;
    const Box e = warp_source_box(n, n, n, n, Transform::make_affine(far), c, ob);
    EXPECT_TRUE(e.empty());
    Image<std::uint16_t> out(t, t, 1);
    c.fill = 7;
    warp_box(ImageView<const std::uint16_t>(), Box{}, n, n, out.view(), ob, n, n,
             Transform::make_affine(far), c);
    EXPECT_EQ(out.view()(0, 0), 7);
    EXPECT_EQ(out.view()(t - 1, t - 1), 7);
}

// warp_tiled on the point maps: bands of square tiles, each from its source box read from the
// RowSource (in place from a view, or through read_rows), bit-identical to the whole image's
// warp at band heights of 3, 37 rows and the budget's; the buffers follow the budget.
TEST(WarpBox, TiledFromRowSources) {
    const Image<std::uint16_t> in = random_image<std::uint16_t>(230, 190, 2, 21);
    const int ow = 250, oh = 180;
    for (int kind : {0, 3, 5}) {
        Image<float> field;
        const Transform t = make_map(kind, in.width(), in.height(), ow, oh, field);
        for (Interp interp : {Interp::BSpline, Interp::Linear}) {
            WarpOptions o;
            o.interp = interp;
            o.border = kind == 3 ? Border::Constant : Border::Mirror;
            Image<std::uint16_t> ref(ow, oh, 2);
            warp(in.view(), ref.view(), t, o, ctx_of(Backend::Cpu));
            for (int band : {3, 37, 0})
                for (bool in_place : {true, false}) {
                    Image<std::uint16_t> out(ow, oh, 2);
                    test::RowEnds ends(in.view().raw(), out.view().raw(), in_place);
                    TiledOptions to;
                    to.band_rows = band;
                    to.max_memory = std::size_t{4} << 20;
                    Context ctx = ctx_of(Backend::Cpu);
                    ctx.threads = 2;  // the budget holds a box per thread
                    const TiledStats st = warp_tiled(ends.src(), ends.dst(), ow, oh, t, o, to, ctx);
                    EXPECT_TRUE(same_bytes(out, ref)) << "map " << kind << " band " << band;
                    if (band == 0) {
                        EXPECT_LE(st.buffer_bytes, to.max_memory);
                    }
                    EXPECT_GT(st.pixels_read, 0);
                }
        }
    }
}

// warp_tiled on the cuda backend for the point maps: bands of boxes of the output, each from the
// span samples its kernels read, bit-identical to upres::warp with the cuda backend on the whole
// image for every map kind, pixel type, channel count, interpolation, prefilter and border, at
// bands of 37 rows (not a multiple of the kernels' 64-row tiles: the rows above a band's first
// are computed again) in boxes of 64 columns, 256 rows in boxes of 128 (through read_rows
// buffers), 1000, 4096 and the budget's. The
// sources are large enough for boxes to cut the prefilter's units: the Box kernel (1 channel,
// exact), the Tile kernels (FIR, more channels) and the streaming one (3 channels, 2^21 samples
// or more), and the recursive fused kernel (rotation of 1-channel float, exact).
// Every case and border of the cuda sweeps, for a pixel type T (prefiltered coefficients are
// float; wrap with the prefilter is not tiled), with the options and the whole cuda call's output
// of map `kind` on `in` (ow x oh).
const std::vector<Case>& all_cases() {
    static const std::vector<Case> c = {{Interp::BSpline, 0, false}, {Interp::BSpline, 17, false},
                                        {Interp::Cubic, 0, false},   {Interp::Linear, 0, false},
                                        {Interp::Nearest, 0, false}, {Interp::BSpline, 0, true}};
    return c;
}
const std::vector<Border>& all_borders() {
    static const std::vector<Border> b = {Border::Mirror, Border::Reflect, Border::Nearest,
                                          Border::Constant, Border::Wrap};
    return b;
}
template <class T, class F>
void each_cuda_case(const Image<T>& in, int kind, int ow, int oh, const std::vector<Case>& cases,
                    const std::vector<Border>& borders, F&& f) {
    for (const Case& k : cases)
        for (Border b : borders) {
            if (b == Border::Wrap && k.interp == Interp::BSpline && !k.prefiltered) continue;
            if (k.prefiltered && !std::is_same_v<T, float>) continue;
            const WarpOptions o = options_of<T>(k, b);
            f(k, b, o, whole(in.view(), ow, oh, kind, o, Backend::Cuda));
        }
}

template <class T>
void sweep_cuda(std::uint32_t seed, int channels, int sw, int sh, const std::vector<int>& kinds,
                const std::vector<Case>& cases, const std::vector<Border>& borders,
                const std::vector<int>& bands) {
    const Image<T> in = random_image<T>(sw, sh, channels, seed, 0.0,
                                        std::is_same_v<T, float> ? 1.0 : PixelTraits<T>::max_value);
    const int ow = sw + 23, oh = sh - 11;
    for (int kind : kinds) {
        Image<float> field;
        const Transform t = make_map(kind, sw, sh, ow, oh, field);
        each_cuda_case(in, kind, ow, oh, cases, borders,
                       [&](const Case& k, Border b, const WarpOptions& o, const Image<T>& ref) {
                           for (int band : bands) {
                               Image<T> out(ow, oh, channels);
                               test::RowEnds ends(in.view().raw(), out.view().raw(), band != 256);
                               TiledOptions to;
                               to.band_rows = std::min(band, oh);
                               // Boxes of 64 and 128 columns cut the rows too (the default, 2048,
                               // holds these outputs whole).
                               to.tile_columns = band == 37 ? 64 : band == 256 ? 128 : 0;
                               to.max_memory = std::size_t{1} << 30;
                               const TiledStats st = warp_tiled(ends.src(), ends.dst(), ow, oh, t,
                                                                o, to, ctx_of(Backend::Cuda));
                               EXPECT_TRUE(same_bytes(out, ref))
                                   << to_string(PixelTraits<T>::type) << " c" << channels << " "
                                   << sw << "x" << sh << " map " << kind << " interp "
                                   << to_string(k.interp) << " fir " << k.prefilter
                                   << " prefiltered " << k.prefiltered << " border " << to_string(b)
                                   << " band " << band;
                               EXPECT_GT(st.device_bytes, 0u);
                           }
                       });
    }
}

TEST(WarpBoxCuda, TiledBitIdenticalToTheWholeCudaCall) {
    UPRES_REQUIRE_GPU();
    const std::vector<Case>& all = all_cases();
    const std::vector<Border>& borders = all_borders();
    const std::vector<int> kinds = {0, 1, 2, 3, 4, 5};
    const std::vector<int> bands = {37, 256, 1000, 0};
    sweep_cuda<std::uint8_t>(31, 1, 341, 297, kinds, all, borders, bands);
    sweep_cuda<std::uint8_t>(32, 3, 281, 250, kinds, all, borders, {37, 4096});
    sweep_cuda<std::uint16_t>(33, 4, 250, 261, kinds, all, borders, {37, 1000});
    sweep_cuda<std::uint16_t>(34, 2, 233, 190, kinds, all, borders, {37});
    sweep_cuda<float>(35, 1, 329, 290, kinds, all, borders, bands);
    sweep_cuda<float>(36, 3, 150, 131, kinds, all, borders, {37});
    // The prefilter's streaming kernel (3 channels, 2^21 samples) and the axis-aligned affine
    // map (the separable kernel) in boxes.
    const std::vector<Case> exact = {{Interp::BSpline, 0, false}};
    sweep_cuda<std::uint16_t>(37, 3, 900, 800, {0, 4}, exact, {Border::Mirror, Border::Nearest},
                              {256, 1000});
    Image<float> none;
    const Image<std::uint8_t> in = random_image<std::uint8_t>(300, 200, 1, 38);
    Affine a;
    const double m[6] = {0.7, 0.0, 3.5, 0.0, 1.3, -2.25};
    std::copy(m, m + 6, a.m);
    const Transform t = Transform::make_affine(a);
    for (Interp interp : {Interp::BSpline, Interp::Cubic}) {
        WarpOptions o;
        o.interp = interp;
        Image<std::uint8_t> ref(420, 260, 1), out(420, 260, 1);
        warp(in.view(), ref.view(), t, o, ctx_of(Backend::Cuda));
        ViewRowSource src(in.view());
        ViewRowSink dst(out.view());
        TiledOptions to;
        to.band_rows = 70;
        to.tile_columns = 100;  // rounded up to 128
        warp_tiled(src, dst, 420, 260, t, o, to, ctx_of(Backend::Cuda));
        EXPECT_TRUE(same_bytes(out, ref)) << to_string(interp);
    }
}

// The cuda point maps keep each column of boxes' source pixels on the device for the next
// band's box in that column, which then reads only what it lacks: a rotation in bands of 64 rows
// and boxes of 128 columns reads less than with one window for all boxes, with the
// same bytes as the whole cuda call either way (the exact B-spline through the streaming
// prefilter's kernel, and bilinear, which reads the boxes raw).
TEST(WarpBoxCuda, BoxWindowsReadLessAndGiveTheSameBytes) {
    UPRES_REQUIRE_GPU();
#if UPRES_HAVE_CUDA
    const Image<std::uint16_t> in = random_image<std::uint16_t>(700, 620, 3, 39);
    Image<float> none;
    const Transform t = make_map(0, 700, 620, 723, 609, none);
    for (Interp interp : {Interp::BSpline, Interp::Linear}) {
        WarpOptions o;
        o.interp = interp;
        const Image<std::uint16_t> ref = whole(in.view(), 723, 609, 0, o, Backend::Cuda);
        std::int64_t read[2] = {0, 0};
        for (int per_column = 0; per_column < 2; ++per_column) {
            cuda::set_point_box_windows(per_column != 0);
            Image<std::uint16_t> out(723, 609, 3);
            ViewRowSource src(in.view());
            ViewRowSink dst(out.view());
            TiledOptions to;
            to.band_rows = 64;
            to.tile_columns = 128;
            const TiledStats st = warp_tiled(src, dst, 723, 609, t, o, to, ctx_of(Backend::Cuda));
            read[per_column] = st.pixels_read;
            EXPECT_TRUE(same_bytes(out, ref))
                << to_string(interp) << (per_column ? ", a window per column" : ", one window");
        }
        cuda::set_point_box_windows(true);
        // A box 64 rows further down overlaps its column's last more than its row's neighbour.
        EXPECT_LT(read[1] * 4, read[0] * 3) << to_string(interp) << ": pixels read with a window "
                                            << "per column " << read[1] << ", with one " << read[0];
        EXPECT_GE(read[1], std::int64_t{700} * 620 / 2) << to_string(interp);
    }
#endif
}

// upres::warp_box on the cuda backend, as a task of upres.dask runs it: each tile (awkward
// sizes, not on the kernels' 64 x 64 tiles) from only the source box warp_source_box gives for
// the cuda backend (computed without the device), bit-identical to the whole cuda call, for
// every map kind, pixel type, interpolation, prefilter kernel (the Box, Tile and streaming
// kernels; the recursive fused kernel for 1-channel float rotations) and border.
template <class T>
void boxes_cuda(std::uint32_t seed, int channels, int sw, int sh, const std::vector<Case>& cases,
                const std::vector<Border>& borders, const std::vector<std::pair<int, int>>& tiles,
                const std::vector<int>& kinds = {0, 1, 2, 3, 4, 5}) {
    const Image<T> in = random_image<T>(sw, sh, channels, seed, 0.0,
                                        std::is_same_v<T, float> ? 1.0 : PixelTraits<T>::max_value);
    const int ow = sw + 23, oh = sh - 11;
    for (int kind : kinds) {
        Image<float> field;
        make_map(kind, sw, sh, ow, oh, field);
        each_cuda_case(
            in, kind, ow, oh, cases, borders,
            [&](const Case& k, Border b, const WarpOptions& o, const Image<T>& ref) {
                for (auto [tw, th] : tiles) {
                    if (kind >= 4) {  // a remap's or flow's boxes lie on the kernels' tiles
                        tw = (tw + 63) / 64 * 64;
                        th = (th + 63) / 64 * 64;
                    }
                    const Image<T> t =
                        by_tiles(in.view(), ow, oh, kind, field, o, tw, th, nullptr, Backend::Cuda);
                    EXPECT_TRUE(same_bytes(t, ref))
                        << to_string(PixelTraits<T>::type) << " c" << channels << " " << sw << "x"
                        << sh << " map " << kind << " interp " << to_string(k.interp) << " fir "
                        << k.prefilter << " prefiltered " << k.prefiltered << " border "
                        << to_string(b) << " tiles " << tw << "x" << th;
                }
            });
    }
}

TEST(WarpBoxCuda, BoxesBitIdenticalToTheWholeCudaCall) {
    UPRES_REQUIRE_GPU();
    const std::vector<Case>& all = all_cases();
    const std::vector<Border>& borders = all_borders();
    boxes_cuda<std::uint8_t>(41, 1, 341, 297, all, borders, {{67, 45}, {128, 200}});
    boxes_cuda<std::uint8_t>(42, 3, 281, 250, all, borders, {{100, 90}});
    boxes_cuda<std::uint16_t>(43, 4, 250, 261, all, borders, {{67, 45}});
    boxes_cuda<float>(44, 1, 329, 290, all, borders, {{67, 45}, {192, 128}});
    boxes_cuda<float>(45, 3, 150, 131, all, {Border::Mirror, Border::Constant}, {{50, 70}});
    // The prefilter's streaming kernel (3 channels, 2^21 samples: its row unit depends on the
    // device, and the source box holds any device's).
    const std::vector<Case> exact = {{Interp::BSpline, 0, false}};
    boxes_cuda<std::uint16_t>(46, 3, 900, 800, exact, {Border::Mirror, Border::Constant},
                              {{300, 290}}, {0, 4, 5});
}

// Two devices (where there are): the bands spread over both give the same bytes.
TEST(WarpBoxCuda, SeveralDevicesGiveTheSameBytes) {
    UPRES_REQUIRE_GPU();
    if (cuda_device_count() < 2) GTEST_SKIP() << "one CUDA device: the two-device run skipped";
    const Image<std::uint16_t> in = random_image<std::uint16_t>(700, 650, 1, 39);
    for (int kind : {0, 3, 5}) {
        Image<float> field;
        const Transform t = make_map(kind, 700, 650, 723, 639, field);
        Image<std::uint16_t> ref(723, 639, 1), out(723, 639, 1);
        warp(in.view(), ref.view(), t, {}, ctx_of(Backend::Cuda));
        ViewRowSource src(in.view());
        ViewRowSink dst(out.view());
        TiledOptions to;
        to.band_rows = 64;
        to.tile_columns = 192;
        to.devices = {1, 0};
        const TiledStats st = warp_tiled(src, dst, 723, 639, t, {}, to, ctx_of(Backend::Cuda));
        EXPECT_TRUE(same_bytes(out, ref)) << "map " << kind;
        EXPECT_EQ(st.bands, 10);
    }
}

TEST(WarpBox, BadArguments) {
    const Image<float> in = random_image<float>(100, 80, 1, 1, 0.0, 1.0);
    Image<float> out(30, 20, 1);
    const Transform rot = Transform::make_rotation(10, 100, 80);
    const Box ob{10, 10, 40, 30};
    const Box ib = warp_source_box(100, 80, 100, 80, rot, {}, ob);
    const auto run = [&](const Transform& t, const WarpOptions& o, Box in_box, Box out_box,
                         const Context& ctx) {
        warp_box(in.sub(in_box.x0, in_box.y0, in_box.width(), in_box.height()), in_box, 100, 80,
                 out.view(), out_box, 100, 80, t, o, ctx);
    };
    run(rot, {}, ib, ob, {});  // fine
    expect_error([&] { run(Transform::make_resize(), {}, ib, ob, {}); }, ErrorCode::InvalidArgument,
                 "bands of rows");
    WarpOptions wrap;
    wrap.border = Border::Wrap;
    expect_error([&] { run(rot, wrap, ib, ob, {}); }, ErrorCode::InvalidArgument, "wrap");
    expect_error(
        [&] {
            run(rot, {}, ib, Box{90, 70, 120, 90}, {});
        },
        ErrorCode::InvalidArgument, "output box");
    const Box small{ib.x0 + 1, ib.y0, ib.x1, ib.y1};
    expect_error([&] { run(rot, {}, small, ob, {}); }, ErrorCode::InvalidArgument, "does not hold");
    expect_error(
        [&] {
            run(rot, {}, ib, Box{10, 10, 41, 30}, {});
        },
        ErrorCode::InvalidArgument, "destination");
    expect_error([&] { run(rot, {}, ib, ob, ctx_of(Backend::Reference)); },
                 ErrorCode::InvalidArgument, "cpu and cuda backends");
    expect_error([&] { warp_source_box(100, 80, 100, 80, rot, {}, ob, Backend::Reference); },
                 ErrorCode::InvalidArgument, "cpu and cuda backends");
    expect_error([&] { warp_source_box(100, 80, 100, 80, rot, {}, ob, Backend::Cuda, 5); },
                 ErrorCode::InvalidArgument, "1 to 4");
#if UPRES_HAVE_CUDA
    // Without a device too: the cuda box holds the kernels' whole tiles around the box and whole
    // units of the prefilter (Box tiles of 64 rows here) with two more at each cut.
    const Box cb = warp_source_box(100, 80, 100, 80, rot, {}, ob, Backend::Cuda, 1);
    Image<float> f64(64, 16, 2);
    for (int y = 0; y < 16; ++y)
        for (int x = 0; x < 64; ++x) f64.view()(x, y, 0) = f64.view()(x, y, 1) = 3.5f;
    const Transform on_tiles = Transform::make_remap(std::as_const(f64).view());
    EXPECT_FALSE(
        warp_source_box(100, 80, 64, 80, on_tiles, {}, Box{0, 64, 64, 80}, Backend::Cuda, 1)
            .empty());
    expect_error(
        [&] {
            warp_source_box(100, 80, 100, 80, on_tiles, {}, Box{10, 64, 74, 80}, Backend::Cuda, 1);
        },
        ErrorCode::InvalidArgument, "multiples of 64");
    EXPECT_TRUE(cb.x0 <= ib.x0 && cb.y0 <= ib.y0 && cb.x1 >= ib.x1 && cb.y1 >= ib.y1)
        << cb.x0 << " " << cb.y0 << " " << cb.x1 << " " << cb.y1;
    if (cuda_available()) {
        run(rot, {}, cb, ob, ctx_of(Backend::Cuda));
        // Bilinear (the device reads exactly the client's box): a side cut by one is refused.
        WarpOptions lin;
        lin.interp = Interp::Linear;
        const Box corner{70, 66, 90, 75};
        const Box lb = warp_source_box(100, 80, 100, 80, rot, lin, corner, Backend::Cuda, 1);
        ASSERT_TRUE(lb.y0 > 0 || lb.x0 > 0) << "the box is not cut above or left";
        Box less = lb;
        (lb.y0 > 0 ? less.y0 : less.x0) += 1;
        expect_error(
            [&] {
                warp_box(in.sub(less.x0, less.y0, less.width(), less.height()), less, 100, 80,
                         out.view().sub(0, 0, corner.width(), corner.height()), corner, 100, 80,
                         rot, lin, ctx_of(Backend::Cuda));
            },
            ErrorCode::InvalidArgument, "does not hold");
    }
#else
    expect_error([&] { warp_source_box(100, 80, 100, 80, rot, {}, ob, Backend::Cuda, 1); },
                 ErrorCode::BackendUnavailable, "without CUDA");
#endif
    if (!cuda_available())
        expect_error([&] { run(rot, {}, ib, ob, ctx_of(Backend::Cuda)); },
                     ErrorCode::BackendUnavailable, "cuda");
    expect_error([&] { warp_source_box(0, 80, 100, 80, rot, {}, ob); }, ErrorCode::InvalidArgument,
                 "source width");
    Affine singular;
    singular.m[0] = singular.m[4] = 0;
    expect_error(
        [&] { warp_source_box(100, 80, 100, 80, Transform::make_affine(singular), {}, ob); },
        ErrorCode::InvalidArgument, "singular");
    Image<float> field(30, 20, 2);
    field.view()(3, 4, 1) = NAN;
    expect_error(
        [&] {
            warp_source_box(100, 80, 100, 80, Transform::make_remap(std::as_const(field).view()),
                            {}, ob);
        },
        ErrorCode::InvalidArgument, "NaN");
    expect_error(
        [&] {
            warp_source_box(100, 80, 100, 80,
                            Transform::make_remap(std::as_const(field).sub(0, 0, 29, 20)), {}, ob);
        },
        ErrorCode::InvalidArgument, "field");
    // A non-finite source value: the message names the pixel in the image's coordinates,
    // whatever box holds it (a box far from the origin, so that its offset shows).
    Image<float> bad = random_image<float>(400, 300, 1, 2, 0.0, 1.0);
    const Transform rot4 = Transform::make_rotation(10, 400, 300);
    const Box ob4{300, 200, 330, 220};
    const Box ib4 = warp_source_box(400, 300, 400, 300, rot4, {}, ob4);
    ASSERT_GT(ib4.x0, 0);
    ASSERT_GT(ib4.y0, 0);
    bad.view()(ib4.x0 + 5, ib4.y0 + 5) = INFINITY;
    const std::string where = "(x " + std::to_string(ib4.x0 + 5) + ", y " +
                              std::to_string(ib4.y0 + 5) + ", channel 0) is infinite";
    std::vector<Backend> backends = {Backend::Cpu};
    if (cuda_available()) backends.push_back(Backend::Cuda);
    for (Backend be : backends) {
        const Box from = be == Backend::Cuda
                             ? warp_source_box(400, 300, 400, 300, rot4, {}, ob4, Backend::Cuda, 1)
                             : ib4;
        Image<float> out4(30, 20, 1);
        expect_error(
            [&] {
                warp_box(std::as_const(bad).sub(from.x0, from.y0, from.width(), from.height()),
                         from, 400, 300, out4.view(), ob4, 400, 300, rot4, {}, ctx_of(be));
            },
            ErrorCode::InvalidArgument, where);
        // The same from warp_tiled, whose tiles run in parallel: the error reaches the caller.
        ViewRowSource vs(bad.view());
        Image<float> whole_out(400, 300, 1);
        ViewRowSink vd(whole_out.view());
        TiledOptions to;
        to.band_rows = 16;
        expect_error([&] { warp_tiled(vs, vd, 400, 300, rot4, {}, to, ctx_of(be)); },
                     ErrorCode::InvalidArgument, where);
    }
}

}  // namespace
}  // namespace upres
