// SEABI CUDA backend: bit-identical to the reference / CPU backend (GPU suite; skips visibly
// without a device).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include <upres/io.hpp>
#include <upres/seabi.hpp>
#include "test_util.hpp"

namespace upres {
namespace {

using test::images_near;
using test::random_image;
using U8 = std::uint8_t;

using test::ctx_of;

SeabiOptions opts_of(SeabiMethod m, int it = 3, double err = 0.0,
                     Lattice lattice = Lattice::Centered) {
    SeabiOptions o;
    o.method = m;
    o.lattice = lattice;
    o.max_iterations = it;
    o.max_error = err;
    return o;
}

// Runs on device views (explicit copies) and returns the host result.
Image<U8> run_device(const Image<U8>& in, const SeabiOptions& o, SeabiStats* s) {
    Image<U8> din = clone(in.view(), Location::Device);
    Image<U8> dout(2 * in.width(), 2 * in.height(), 1, Location::Device);
    *s = seabi_upscale2(din.view(), dout.view(), o);  // Auto: device data -> Cuda
    return clone(dout.view());
}

const SeabiMethod kMethods[] = {SeabiMethod::LSeai, SeabiMethod::SilSeabi, SeabiMethod::LSeabi};
const Lattice kLattices[] = {Lattice::Centered, Lattice::CoSited};

TEST(SeabiCuda, MatchesReferenceOnRandomDataAwkwardSizes) {
    UPRES_REQUIRE_GPU();
    const int sizes[][2] = {{1, 1},  {2, 1},   {1, 5},   {3, 2},   {7, 3},
                            {31, 9}, {33, 17}, {64, 16}, {65, 17}, {257, 131}};
    std::uint32_t seed = 500;
    for (Lattice lat : kLattices)
        for (const auto& sz : sizes) {
            const Image<U8> in = random_image<U8>(sz[0], sz[1], 1, seed++);
            for (SeabiMethod m : kMethods) {
                const SeabiOptions o = opts_of(m, 3, 0.0, lat);
                Image<U8> ref(2 * sz[0], 2 * sz[1], 1);
                const SeabiStats sr =
                    seabi_upscale2(in.view(), ref.view(), o, ctx_of(Backend::Reference));
                SeabiStats sc;
                const Image<U8> got = run_device(in, o, &sc);
                EXPECT_TRUE(images_near(got.view(), ref.view(), 0.0))
                    << sz[0] << "x" << sz[1] << " " << to_string(m) << " " << to_string(lat);
                EXPECT_EQ(sc.threshold, sr.threshold);
                EXPECT_EQ(sc.iterations, sr.iterations);
                EXPECT_EQ(sc.last_l1, sr.last_l1);
            }
        }
}

TEST(SeabiCuda, MatchesCpuOnRealPhotosAndStagesHostData) {
    UPRES_REQUIRE_GPU();
    for (const char* name : {"camera.png", "moon.png", "coins.png"}) {
        const AnyImage a = read_image(test::sample_path(name));
        ASSERT_TRUE(a.holds<U8>()) << name;
        ASSERT_EQ(a.channels(), 1) << name;
        const Image<U8>& in = a.as<U8>();
        for (Lattice lat : kLattices)
            for (SeabiMethod m : kMethods) {
                const SeabiOptions o = opts_of(m, 4, 0.25, lat);
                Image<U8> cpu(2 * in.width(), 2 * in.height(), 1);
                const SeabiStats s1 =
                    seabi_upscale2(in.view(), cpu.view(), o, ctx_of(Backend::Cpu));
                Image<U8> gpu(2 * in.width(), 2 * in.height(), 1);  // host views, forced Cuda
                const SeabiStats s2 =
                    seabi_upscale2(in.view(), gpu.view(), o, ctx_of(Backend::Cuda));
                EXPECT_TRUE(images_near(gpu.view(), cpu.view(), 0.0))
                    << name << " " << to_string(m);
                EXPECT_EQ(s1.iterations, s2.iterations) << name;
                EXPECT_EQ(s1.last_l1, s2.last_l1) << name;
            }
    }
}

TEST(SeabiCuda, FullHdFrameMatchesCpu) {
    UPRES_REQUIRE_GPU();
    const Image<U8> in = random_image<U8>(1920, 1080, 1, 2026, 30, 220);
    Image<U8> cpu(3840, 2160, 1), gpu(3840, 2160, 1);
    for (Lattice lat : kLattices) {
        const SeabiOptions o = opts_of(SeabiMethod::SilSeabi, 3, 0.0, lat);
        seabi_upscale2(in.view(), cpu.view(), o, ctx_of(Backend::Cpu));
        seabi_upscale2(in.view(), gpu.view(), o, ctx_of(Backend::Cuda));
        EXPECT_TRUE(images_near(gpu.view(), cpu.view(), 0.0)) << to_string(lat);
    }
}

TEST(SeabiCuda, UnalignedDeviceSubViews) {
    UPRES_REQUIRE_GPU();
    const Image<U8> host = random_image<U8>(70, 41, 1, 12);
    Image<U8> dbig = clone(host.view(), Location::Device);
    const ImageView<const U8> din = dbig.view().sub(3, 5, 51, 29);
    Image<U8> dcanvas(131, 77, 1, Location::Device);
    const ImageView<U8> dout = dcanvas.view().sub(7, 3, 102, 58);  // odd offset: unaligned
    const Image<U8> tight = clone(host.view().sub(3, 5, 51, 29));
    for (Lattice lat : kLattices)
        for (SeabiMethod m : kMethods) {
            seabi_upscale2(din, dout, opts_of(m, 3, 0.0, lat));
            Image<U8> got(102, 58, 1);
            copy(ImageView<const U8>(dout), got.view());
            Image<U8> ref(102, 58, 1);
            seabi_upscale2(tight.view(), ref.view(), opts_of(m, 3, 0.0, lat),
                           ctx_of(Backend::Reference));
            EXPECT_TRUE(images_near(got.view(), ref.view(), 0.0))
                << to_string(m) << " " << to_string(lat);
        }
}

// The streaming engine on the cuda backend (each batch's window through the CUDA kernels with
// the whole image's threshold) gives the whole-image bytes, on both lattices, any stripe size.
// The stream on the cuda backend from o.first_row (its rows pushed from first_input_row(), 50
// at a time) into a 2W x 2H image; rows before 2 first_row are left unwritten.
Image<U8> stream_cuda(const Image<U8>& in, const SeabiStreamOptions& o) {
    Image<U8> out(2 * in.width(), 2 * in.height(), 1);
    SeabiStream st(
        in.width(), in.height(), o,
        [&](ImageView<const U8> rows, int first) {
            for (int y = 0; y < rows.height(); ++y)
                std::memcpy(out.view().row(first + y), rows.row(y), rows.width());
        },
        ctx_of(Backend::Cuda));
    for (int y = st.first_input_row(); y < in.height(); y += 50)
        st.push(in.view().sub(0, y, in.width(), std::min(50, in.height() - y)));
    EXPECT_EQ(st.rows_out(), 2 * in.height());
    return out;
}

TEST(SeabiCuda, StreamMatchesTheWholeImage) {
    UPRES_REQUIRE_GPU();
    const Image<U8> in = random_image<U8>(333, 517, 1, 71, 20, 230);
    SeabiTotalVariation tv(in.width(), in.height());
    tv.push(in.view());
    for (Lattice lat : kLattices)
        for (SeabiMethod m : {SeabiMethod::SilSeabi, SeabiMethod::LSeai})
            for (int s_rows : {3, 40}) {
                Image<U8> want(2 * in.width(), 2 * in.height(), 1);
                seabi_upscale2(in.view(), want.view(), opts_of(m, 3, 0.0, lat),
                               ctx_of(Backend::Reference));
                SeabiStreamOptions o;
                o.method = m;
                o.lattice = lat;
                o.stripe_rows = s_rows;
                o.total_variation = tv.value();
                const Image<U8> got = stream_cuda(in, o);
                EXPECT_TRUE(images_near(got.view(), want.view(), 0.0))
                    << to_string(lat) << " " << to_string(m) << " S " << s_rows;
                // Resumed at an input row (upscale --stream's restart): from the rows at and
                // after first - 6, the whole image's rows from 2 first on.
                for (int first : {7, 200}) {
                    o.first_row = first;
                    const Image<U8> part = stream_cuda(in, o);
                    const int y0 = 2 * first, n = 2 * in.height() - y0;
                    EXPECT_TRUE(images_near(part.view().sub(0, y0, part.width(), n),
                                            want.view().sub(0, y0, want.width(), n), 0.0))
                        << to_string(lat) << " " << to_string(m) << " S " << s_rows
                        << " resumed at " << first;
                }
                o.first_row = 0;
            }
}

TEST(SeabiCuda, TapBaselinesMatchReference) {
    UPRES_REQUIRE_GPU();
    for (Lattice lat : kLattices)
        for (int ch = 1; ch <= 4; ++ch) {
            const Image<U8> in = random_image<U8>(45, 23, ch, 60 + ch);
            for (TapFilter f : {TapFilter::Tap4, TapFilter::Tap6}) {
                Image<U8> ref(90, 46, ch), got(90, 46, ch);
                tap_upscale2(in.view(), ref.view(), f, lat, ctx_of(Backend::Reference));
                tap_upscale2(in.view(), got.view(), f, lat, ctx_of(Backend::Cuda));
                EXPECT_TRUE(images_near(got.view(), ref.view(), 0.0))
                    << ch << " " << to_string(lat);
            }
        }
}

}  // namespace
}  // namespace upres
