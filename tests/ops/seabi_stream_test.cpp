// Streaming SEABI (upres/seabi.hpp, SeabiStream): with the exact total variation the streamed
// output is bit-identical to seabi_upscale2 for every lattice, method, stripe size, pipeline
// count and way of cutting the input into pushes; its buffers do not grow with the height;
// the predicted threshold (single pass) stays close; bad input is refused.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include <upres/seabi.hpp>
#include "test_util.hpp"

namespace upres {
namespace {

using test::images_near;
using test::random_image;
using U8 = std::uint8_t;

std::int64_t exact_tv(const Image<U8>& in) {
    SeabiTotalVariation tv(in.width(), in.height());
    tv.push(in.view());
    return tv.value();
}

// Streams `in` in pushes of `chunk` rows; returns the assembled output and checks the rows
// arrive in order without gaps.
Image<U8> stream(const Image<U8>& in, const SeabiStreamOptions& o, int chunk, int threads = 0,
                 std::size_t* bytes = nullptr) {
    Image<U8> out(2 * in.width(), 2 * in.height(), 1);
    int expect = 2 * o.first_row;
    Context ctx;
    ctx.threads = threads;
    SeabiStream s(
        in.width(), in.height(), o,
        [&](ImageView<const U8> rows, int first) {
            EXPECT_EQ(first, expect);
            for (int y = 0; y < rows.height(); ++y)
                std::memcpy(out.view().row(first + y), rows.row(y), rows.width());
            expect = first + rows.height();
        },
        ctx);
    EXPECT_EQ(s.first_input_row(), std::max(0, o.first_row - 6));
    for (int y = s.first_input_row(); y < in.height(); y += chunk)
        s.push(in.view().sub(0, y, in.width(), std::min(chunk, in.height() - y)));
    EXPECT_EQ(expect, 2 * in.height());
    EXPECT_EQ(s.rows_out(), 2 * in.height());
    if (bytes) *bytes = s.buffer_bytes();
    return out;
}

Image<U8> whole(const Image<U8>& in, SeabiMethod m, Lattice l) {
    SeabiOptions o;
    o.method = m;
    o.lattice = l;
    Context ctx;
    ctx.backend = Backend::Reference;
    Image<U8> out(2 * in.width(), 2 * in.height(), 1);
    seabi_upscale2(in.view(), out.view(), o, ctx);
    return out;
}

TEST(SeabiStream, ExactThresholdIsBitIdenticalToTheWholeImage) {
    const int sizes[][2] = {{1, 1}, {5, 3}, {37, 23}, {64, 130}, {19, 301}};
    std::uint32_t seed = 900;
    for (const auto& sz : sizes) {
        const Image<U8> in = random_image<U8>(sz[0], sz[1], 1, seed++);
        for (Lattice lat : {Lattice::Centered, Lattice::CoSited})
            for (SeabiMethod m : {SeabiMethod::SilSeabi, SeabiMethod::LSeai}) {
                const Image<U8> want = whole(in, m, lat);
                for (int s_rows : {1, 7, 64})
                    for (int p : {1, 3})
                        for (int chunk : {1, 5, 1000}) {
                            SeabiStreamOptions o;
                            o.method = m;
                            o.lattice = lat;
                            o.stripe_rows = s_rows;
                            o.pipelines = p;
                            o.total_variation = exact_tv(in);
                            EXPECT_TRUE(
                                images_near(stream(in, o, chunk, 2).view(), want.view(), 0.0))
                                << sz[0] << "x" << sz[1] << " " << to_string(lat) << " "
                                << to_string(m) << " S " << s_rows << " P " << p << " chunk "
                                << chunk;
                        }
            }
    }
}

// A resumed stream (first_row): from only the rows at and after first_row - 6, the output rows
// from 2 first_row on are the whole image's, whatever the stripes and pushes.
TEST(SeabiStream, ResumedStreamGivesTheWholeImagesRows) {
    const Image<U8> in = random_image<U8>(53, 307, 1, 77);
    for (Lattice lat : {Lattice::Centered, Lattice::CoSited})
        for (SeabiMethod m : {SeabiMethod::SilSeabi, SeabiMethod::LSeai}) {
            const Image<U8> want = whole(in, m, lat);
            for (int first : {1, 5, 6, 7, 63, 64, 100, 306})
                for (int s_rows : {7, 64}) {
                    SeabiStreamOptions o;
                    o.method = m;
                    o.lattice = lat;
                    o.stripe_rows = s_rows;
                    o.pipelines = 2;
                    o.total_variation = exact_tv(in);
                    o.first_row = first;
                    const Image<U8> got = stream(in, o, 13, 2);
                    const int y0 = 2 * first, rows = 2 * in.height() - y0;
                    EXPECT_TRUE(images_near(got.view().sub(0, y0, got.width(), rows),
                                            want.view().sub(0, y0, want.width(), rows), 0.0))
                        << to_string(lat) << " " << to_string(m) << " first " << first << " S "
                        << s_rows;
                }
        }
}

TEST(SeabiStream, RealPhotoAndPredictedThreshold) {
    const Image<U8> in = test::load_golden<U8>("seabi/photo_in.npy");
    SeabiStreamOptions o;
    o.stripe_rows = 8;
    o.total_variation = exact_tv(in);
    const Image<U8> want = whole(in, SeabiMethod::SilSeabi, Lattice::Centered);
    EXPECT_TRUE(images_near(stream(in, o, 3).view(), want.view(), 0.0));
    // Single pass: the threshold of the first batches is predicted from the rows seen so far.
    o.total_variation = -1;
    o.pipelines = 1;
    const Image<U8> pred = stream(in, o, 3);
    double se = 0;
    for (int y = 0; y < want.height(); ++y)
        for (int x = 0; x < want.width(); ++x) {
            const double d = double(pred(x, y)) - want(x, y);
            se += d * d;
        }
    const double rmse = std::sqrt(se / (double(want.width()) * want.height()));
    EXPECT_LT(rmse, 3.0);  // a different threshold changes the rules on a few blocks only
}

TEST(SeabiStream, BuffersDoNotGrowWithTheHeight) {
    SeabiStreamOptions o;
    o.stripe_rows = 16;
    o.pipelines = 2;
    std::size_t small = 0, tall = 0;
    const Image<U8> a = random_image<U8>(40, 100, 1, 3), b = random_image<U8>(40, 2000, 1, 4);
    o.total_variation = exact_tv(a);
    stream(a, o, 9, 0, &small);
    o.total_variation = exact_tv(b);
    stream(b, o, 9, 0, &tall);
    EXPECT_EQ(small, tall);
    EXPECT_EQ(tall, static_cast<std::size_t>(32 + 12) * 40 + static_cast<std::size_t>(64) * 80);
}

TEST(SeabiStream, MemoryBudgetLowersStripesAndRows) {
    const auto sink = [](ImageView<const U8>, int) {};
    SeabiStreamOptions o;
    o.stripe_rows = 64;
    o.pipelines = 8;
    o.max_memory = 0;
    Context ctx;
    ctx.backend = Backend::Cpu;
    const SeabiStream free_run(30000, 100, o, sink, ctx);
    EXPECT_EQ(free_run.pipelines(), 8);
    EXPECT_EQ(free_run.stripe_rows(), 64);
    o.max_memory = std::size_t{192} << 20;  // 8 x 64-row stripes of 30000 px need ~400 MB
    const SeabiStream budget(30000, 100, o, sink, ctx);
    EXPECT_LT(budget.pipelines(), 8);
    EXPECT_LE(budget.buffer_bytes() +
                  std::size_t(budget.pipelines()) * 16 * (budget.stripe_rows() + 9) * 30000,
              o.max_memory);
    o.max_memory = 1 << 20;  // 1 MB: shorter stripes
    const SeabiStream tight(2000, 100, o, sink, ctx);
    EXPECT_EQ(tight.pipelines(), 1);
    EXPECT_LT(tight.stripe_rows(), 64);
    o.max_memory = 1000;
    test::expect_error([&] { SeabiStream(2000, 100, o, sink, ctx); }, ErrorCode::InvalidArgument,
                       "even with one 1-row stripe");
    // A budgeted stream still gives the whole-image bytes.
    const Image<U8> in = random_image<U8>(300, 90, 1, 5);
    SeabiStreamOptions b;
    b.max_memory = 300000;
    SeabiTotalVariation tv(300, 90);
    tv.push(in.view());
    b.total_variation = tv.value();
    EXPECT_TRUE(images_near(stream(in, b, 7).view(),
                            whole(in, SeabiMethod::SilSeabi, Lattice::Centered).view(), 0.0));
}

TEST(SeabiStream, BadInputIsRefused) {
    const auto sink = [](ImageView<const U8>, int) {};
    SeabiStreamOptions o;
    test::expect_error([&] { SeabiStream(0, 5, o, sink); }, ErrorCode::InvalidArgument,
                       "at least 1 x 1");
    SeabiStreamOptions l = o;
    l.method = SeabiMethod::LSeabi;
    test::expect_error([&] { SeabiStream(8, 5, l, sink); }, ErrorCode::InvalidArgument,
                       "lseabi cannot stream");
    SeabiStreamOptions s = o;
    s.stripe_rows = 0;
    test::expect_error([&] { SeabiStream(8, 5, s, sink); }, ErrorCode::InvalidArgument,
                       "stripe_rows is 0");
    Context ref;
    ref.backend = Backend::Reference;
    test::expect_error([&] { SeabiStream(8, 5, o, sink, ref); }, ErrorCode::BackendUnavailable,
                       "cpu or cuda backend");
    test::expect_error([&] { SeabiStream(8, 5, o, nullptr); }, ErrorCode::InvalidArgument, "sink");
    SeabiStreamOptions r = o;
    r.first_row = 2;  // a predicted threshold cannot resume
    test::expect_error([&] { SeabiStream(8, 5, r, sink); }, ErrorCode::InvalidArgument,
                       "exact total variation");
    r.total_variation = 10;
    r.first_row = 5;
    test::expect_error([&] { SeabiStream(8, 5, r, sink); }, ErrorCode::InvalidArgument,
                       "first_row is 5");
    SeabiStream st(8, 5, o, sink);
    const Image<U8> wrong = random_image<U8>(9, 2, 1, 1);
    test::expect_error([&] { st.push(wrong.view()); }, ErrorCode::InvalidArgument,
                       "must be 8 wide");
    const Image<U8> many = random_image<U8>(8, 6, 1, 1);
    test::expect_error([&] { st.push(many.view()); }, ErrorCode::InvalidArgument,
                       "only 5 of the image's rows are left");
    // A sink that throws stops the stream; later pushes are refused.
    SeabiStream bad(8, 5, o,
                    [](ImageView<const U8>, int) { throw std::runtime_error("disk full"); });
    const Image<U8> rows = random_image<U8>(8, 5, 1, 2);
    EXPECT_THROW(bad.push(rows.view()), std::runtime_error);
    test::expect_error([&] { bad.push(rows.view().sub(0, 0, 8, 0)); }, ErrorCode::InvalidArgument,
                       "stopped after an earlier error");
    SeabiTotalVariation tv(8, 5);
    tv.push(rows.view().sub(0, 0, 8, 3));
    test::expect_error([&] { (void)tv.value(); }, ErrorCode::InvalidArgument, "needs all 5 rows");
}

}  // namespace
}  // namespace upres
