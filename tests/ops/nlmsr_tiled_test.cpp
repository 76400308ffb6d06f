// NLM-SR in bands (upres/tiled.hpp, nlm_fuse_tiled): the bytes of nlm_fuse on the whole frames
// (cpu backend) for every post-step, scale, pixel type, gray and colour, frames of a real photo
// sequence and random data, bands of 32 to a few hundred input rows, ranges of output rows
// computed alone from their own frames' rows (first_row / last_row), and sources that lend their
// rows or copy them; the cuda backend against the whole cuda call.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <upres/nlmsr.hpp>
#include <upres/tiled.hpp>
#include "ops/nlmsr_test_util.hpp"
#include "test_util.hpp"

namespace upres {
namespace {

using test::random_image;
using test::same_bytes;

template <class T>
Image<T> whole(const std::vector<Image<T>>& frames, const NlmsrOptions& o,
               Backend b = Backend::Cpu) {
    std::vector<ImageView<const T>> v;
    for (const auto& f : frames) v.push_back(f.view());
    Image<T> out(o.scale * frames[0].width(), o.scale * frames[0].height(), frames[0].channels());
    nlm_fuse(std::span<const ImageView<const T>>(v), out.view(), o, test::ctx_of(b));
    return out;
}

// The whole output in bands of band_rows, into `out`.
template <class T>
TiledStats tiled(const std::vector<Image<T>>& frames, const NlmsrOptions& o, int band_rows,
                 Image<T>& out, bool lend, Backend b = Backend::Cpu,
                 std::vector<int> devices = {}) {
    std::vector<std::unique_ptr<test::RowEnds>> ends;
    std::vector<RowSource*> src;
    for (const auto& f : frames) {
        ends.push_back(std::make_unique<test::RowEnds>(f.view().raw(), out.view().raw(), lend));
        src.push_back(&ends.back()->src());
    }
    TiledOptions to;
    to.band_rows = band_rows;
    to.devices = std::move(devices);
    std::int64_t last = 0;
    to.progress = [&](std::int64_t done, std::int64_t total) {
        EXPECT_GT(done, last);
        EXPECT_EQ(total, out.height());
        last = done;
    };
    const TiledStats st = nlm_fuse_tiled(src, ends[0]->dst(), o, to, test::ctx_of(b));
    EXPECT_EQ(last, out.height());
    return st;
}

template <class T>
void check(const std::vector<Image<T>>& frames, const NlmsrOptions& o,
           const std::vector<int>& bands, const std::string& what, Backend b = Backend::Cpu) {
    const Image<T> ref = whole(frames, o, b);
    for (int band : bands) {
        SCOPED_TRACE(what + " band " + std::to_string(band) + ", " + to_string(b));
        Image<T> got(ref.width(), ref.height(), ref.channels());
        const TiledStats st = tiled(frames, o, band, got, band % 2 == 0, b);
        EXPECT_TRUE(same_bytes(got, ref));
        EXPECT_GE(st.bands, 1);
    }
}

std::vector<Image<std::uint8_t>> photo_frames(int n, int w, int h, int scale, double noise,
                                              std::uint32_t seed) {
    test::Sequence s =
        test::photo_sequence("building.jpg", n, (n - 1) / 2, w, h, scale, noise, seed);
    return std::move(s.frames);
}

TEST(NlmsrTiled, BackProjectionMatchesTheWholeCall) {
    NlmsrOptions o;  // post backproject, 3 rounds, patch 13, search 3, noise-adaptive
    for (int s : {2, 3}) {
        o.scale = s;
        check(photo_frames(3, 61, s == 2 ? 203 : 180, s, 5.0, 3), o, {64, 200, 0},
              "photo x" + std::to_string(s));
    }
    o.scale = 2;
    std::vector<Image<std::uint16_t>> rgb;
    for (std::uint32_t i = 0; i < 2; ++i)
        rgb.push_back(random_image<std::uint16_t>(37, 131, 3, 40 + i));
    check(rgb, o, {64, 130}, "u16 RGB random");
    // Float frames: an output of float bits shows the last-bit differences a u8 output rounds away.
    std::vector<Image<float>> f;
    for (std::uint32_t i = 0; i < 2; ++i)
        f.push_back(random_image<float>(45, 260, 1, 50 + i, 0.0, 1.0));
    check(f, o, {64, 128}, "f32 random");
}

TEST(NlmsrTiled, FusionAloneAndIterations) {
    NlmsrOptions o;
    o.post = NlmsrPost::None;
    o.iterations = 2;
    o.scale = 4;
    o.search = 5;
    std::vector<Image<float>> f;
    for (std::uint32_t i = 0; i < 3; ++i)
        f.push_back(random_image<float>(29, 97, 1, 60 + i, 0.0, 1.0));
    check(f, o, {128, 256}, "f32 x4 none");
    o.scale = 2;
    o.iterations = 1;
    o.sigma = 9.0;
    check(photo_frames(1, 45, 150, 2, 3.0, 4), o, {64}, "one frame, sigma 9");
}

TEST(NlmsrTiled, ReconstructionMatchesTheWholeCall) {
    NlmsrOptions o;
    o.post = NlmsrPost::Reconstruct;
    o.reconstructions = 4;
    check(photo_frames(3, 40, 160, 2, 4.0, 5), o, {64, 0}, "reconstruct x2");
    std::vector<Image<float>> f;
    for (std::uint32_t i = 0; i < 2; ++i)
        f.push_back(random_image<float>(31, 420, 1, 70 + i, 0.0, 1.0));
    check(f, o, {64, 200}, "reconstruct x2, f32, 4 rounds");
    o.reconstructions = 3;
    check(f, o, {64, 128}, "reconstruct x2, f32, 3 rounds");
    std::vector<Image<std::uint16_t>> rgb;
    for (std::uint32_t i = 0; i < 2; ++i)
        rgb.push_back(random_image<std::uint16_t>(41, 197, 3, 80 + i));
    check(rgb, o, {64}, "reconstruct x2, u16 RGB, 3 rounds");
    o.reconstructions = 10;
    o.scale = 3;
    check(f, o, {96}, "reconstruct x3, f32, 10 rounds");
}

// A task of a cluster: a range of output rows from only the frames' rows that
// nlm_fuse_tiled_source_rows names (the noise given, as NlmsrNoise computes it), as the whole
// call's.
TEST(NlmsrTiled, RangesFromTheirSourceRowsOnly) {
    for (NlmsrPost post : {NlmsrPost::BackProject, NlmsrPost::None}) {
        NlmsrOptions o;
        o.post = post;
        o.scale = post == NlmsrPost::None ? 3 : 2;
        const std::vector<Image<std::uint8_t>> f = photo_frames(3, 50, 170, o.scale, 5.0, 6);
        const Image<std::uint8_t> ref = whole(f, o);
        NlmsrNoise noise(50, 170);
        noise.push(f[1].view());
        o.noise = noise.value();
        const int oh = ref.height();
        for (auto [y0, y1] : {std::pair{0, 64}, std::pair{70, 211}, std::pair{200, oh}}) {
            const RowRange r = nlm_fuse_tiled_source_rows(50, 170, o, y0, y1);
            ASSERT_TRUE(0 <= r.first && r.first < r.last && r.last <= 170);
            std::vector<Image<std::uint8_t>> held;
            std::vector<std::unique_ptr<ViewRowSource>> src;
            std::vector<RowSource*> ptr;
            for (const auto& fr : f) {
                held.push_back(Image<std::uint8_t>(50, r.last - r.first, 1));
                for (int y = r.first; y < r.last; ++y)
                    std::memcpy(held.back().view().row(y - r.first), fr.view().row(y), 50);
            }
            for (const auto& h : held) {
                src.push_back(std::make_unique<ViewRowSource>(h.view().raw(), r.first, 170));
                ptr.push_back(src.back().get());
            }
            Image<std::uint8_t> band(ref.width(), y1 - y0, 1);
            ViewRowSink dst(band.view().raw(), y0);
            TiledOptions to;
            to.first_row = y0;
            to.last_row = y1;
            to.band_rows = y1 - y0;
            nlm_fuse_tiled(ptr, dst, o, to);
            for (int y = y0; y < y1; ++y)
                ASSERT_EQ(0, std::memcmp(band.view().row(y - y0), ref.view().row(y), ref.width()))
                    << "rows [" << y0 << ", " << y1 << "), row " << y;
        }
    }
}

// The noise over rows pushed in chunks of any height is one value, and it is the whole call's:
// nlm_fuse given it (NlmsrOptions::noise) gives the bytes of nlm_fuse estimating it.
TEST(NlmsrTiled, NoiseOverRowsIsTheWholeFramesNoise) {
    const std::vector<Image<std::uint8_t>> f = photo_frames(3, 57, 90, 2, 6.0, 8);
    std::vector<Image<std::uint16_t>> rgb;
    rgb.push_back(random_image<std::uint16_t>(33, 41, 3, 9));
    std::vector<double> values;
    for (int chunk : {1, 2, 5, 64, 90}) {
        NlmsrNoise n(57, 90);
        for (int y = 0; y < 90; y += chunk)
            n.push(f[1].view().sub(0, y, 57, std::min(chunk, 90 - y)));
        values.push_back(n.value());
    }
    for (double v : values) EXPECT_EQ(v, values[0]);
    EXPECT_GT(values[0], 3.0);  // the frames' noise (6 levels), over the fusion's floor
    NlmsrOptions o;
    o.noise = values[0];
    const Image<std::uint8_t> given = whole(f, o);
    EXPECT_TRUE(same_bytes(given, whole(f, NlmsrOptions{})));
    NlmsrNoise c(33, 41);
    c.push(rgb[0].view());
    NlmsrOptions oc;
    oc.noise = c.value();
    EXPECT_TRUE(same_bytes(whole(rgb, oc), whole(rgb, NlmsrOptions{})));
    NlmsrNoise part(57, 90);
    part.push(f[0].view().sub(0, 0, 57, 10));
    test::expect_error([&] { (void)part.value(); }, ErrorCode::InvalidArgument, "all 90 rows");
    test::expect_error([&] { part.push(f[0].view()); }, ErrorCode::InvalidArgument, "80 rows left");
}

TEST(NlmsrTiled, BadInput) {
    const Image<std::uint8_t> a = random_image<std::uint8_t>(40, 40, 1, 1);
    const Image<std::uint8_t> b = random_image<std::uint8_t>(41, 40, 1, 2);
    Image<std::uint8_t> out(80, 80, 1);
    ViewRowSource sa(a.view().raw()), sb(b.view().raw());
    ViewRowSink so(out.view().raw());
    std::vector<RowSource*> two{&sa, &sb};
    test::expect_error([&] { nlm_fuse_tiled(two, so); }, ErrorCode::InvalidArgument,
                       "all frames alike");
    std::vector<RowSource*> none;
    test::expect_error([&] { nlm_fuse_tiled(none, so); }, ErrorCode::InvalidArgument, "0 frames");
    std::vector<RowSource*> one{&sa};
    NlmsrOptions shared;
    shared.variant = NlmsrVariant::Shared;
    test::expect_error([&] { nlm_fuse_tiled(one, so, shared); }, ErrorCode::InvalidArgument,
                       "variant shared is a cuda variant");
    Context ref;
    ref.backend = Backend::Reference;
    test::expect_error([&] { nlm_fuse_tiled(one, so, {}, {}, ref); }, ErrorCode::InvalidArgument,
                       "cpu and cuda backends");
    TiledOptions nine;
    nine.devices = {9};
    if (cuda_device_count() < 1)
        test::expect_error([&] { nlm_fuse_tiled(one, so, {}, {}, test::ctx_of(Backend::Cuda)); },
                           ErrorCode::BackendUnavailable, "");
    else if (cuda_device_count() < 10)
        test::expect_error([&] { nlm_fuse_tiled(one, so, {}, nine, test::ctx_of(Backend::Cuda)); },
                           ErrorCode::InvalidArgument, "9");
    NlmsrOptions bad;
    bad.noise = 300;
    test::expect_error([&] { nlm_fuse_tiled(one, so, bad); }, ErrorCode::InvalidArgument,
                       "noise 300");
    Image<float> nan(40, 40, 1);
    for (int y = 0; y < 40; ++y)
        for (int x = 0; x < 40; ++x) nan.view().row(y)[x] = 0.5f;
    nan.view().row(30)[7] = std::numeric_limits<float>::quiet_NaN();
    Image<float> fo(80, 80, 1);
    ViewRowSource sn(nan.view().raw());
    ViewRowSink sf(fo.view().raw());
    std::vector<RowSource*> nf{&sn};
    test::expect_error([&] { nlm_fuse_tiled(nf, sf); }, ErrorCode::InvalidArgument, "NaN");
}

// The cuda backend: each band is the whole cuda call on its rows, its fast variant's blocks and
// sums laid out as for the whole frames (NlmsrPlan::layout_rows) and post Reconstruct's SRCNN
// kernels those of the first band; bands spread over two GPUs give the same bytes.
TEST(NlmsrTiledCuda, BandsAreTheWholeCall) {
    UPRES_REQUIRE_GPU();
    NlmsrOptions o;  // backproject, fast variant
    check(photo_frames(3, 61, 203, 2, 5.0, 3), o, {64, 200, 0}, "photo x2", Backend::Cuda);
    // Tall enough that the whole call's fast variant takes blocks of 4 warps and one group, and
    // a band's own size would take 1 warp and groups of frames.
    std::vector<Image<float>> tall;
    for (std::uint32_t i = 0; i < 3; ++i)
        tall.push_back(random_image<float>(300, 1500, 1, 90 + i, 0.0, 1.0));
    check(tall, o, {128, 1000}, "f32 300 x 1500 backproject", Backend::Cuda);
    o.post = NlmsrPost::None;
    o.iterations = 2;
    check(tall, o, {256}, "f32 300 x 1500 none, 2 iterations", Backend::Cuda);
    std::vector<Image<std::uint16_t>> rgb;
    for (std::uint32_t i = 0; i < 2; ++i)
        rgb.push_back(random_image<std::uint16_t>(37, 131, 3, 40 + i));
    o.iterations = 1;
    o.scale = 3;
    for (NlmsrVariant v : {NlmsrVariant::Simple, NlmsrVariant::Shared, NlmsrVariant::Fast}) {
        o.variant = v;
        check(rgb, o, {96}, std::string("u16 RGB x3 none ") + to_string(v), Backend::Cuda);
    }
    NlmsrOptions r;
    r.post = NlmsrPost::Reconstruct;
    r.reconstructions = 4;
    check(photo_frames(3, 40, 160, 2, 4.0, 5), r, {64, 0}, "reconstruct x2", Backend::Cuda);
    r.precision = SrcnnPrecision::Fp16;
    check(photo_frames(3, 40, 160, 2, 4.0, 5), r, {64}, "reconstruct x2 fp16", Backend::Cuda);
    if (cuda_device_count() < 2) GTEST_SKIP() << "one CUDA device: the two-device run skipped";
    NlmsrOptions b;
    const Image<float> want = whole(tall, b, Backend::Cuda);
    Image<float> got(want.width(), want.height(), 1);
    tiled(tall, b, 128, got, true, Backend::Cuda, {0, 1});
    EXPECT_TRUE(same_bytes(got, want)) << "devices 0, 1";
}

}  // namespace
}  // namespace upres
