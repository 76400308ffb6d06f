#include <upres/context.hpp>
#include <upres/error.hpp>
#include <upres/image.hpp>

#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "core/convert_row.hpp"
#include "core/dispatch.hpp"
#include "test_util.hpp"

using namespace upres;

TEST(Image, AllocatesTightStride) {
    Image<float> img(7, 5, 3);
    EXPECT_EQ(img.width(), 7);
    EXPECT_EQ(img.height(), 5);
    EXPECT_EQ(img.channels(), 3);
    EXPECT_EQ(img.stride(), 21);
    EXPECT_FALSE(img.empty());
    EXPECT_FALSE(img.on_device());
    EXPECT_EQ(img.pixel_type(), PixelType::F32);
    img(6, 4, 2) = 3.5f;
    EXPECT_EQ(img.view().row(4)[20], 3.5f);
}

TEST(Image, RejectsBadGeometry) {
    EXPECT_THROW(Image<std::uint8_t>(-1, 4, 1), Error);
    EXPECT_THROW(Image<std::uint8_t>(4, 4, 0), Error);
    EXPECT_THROW(Image<std::uint8_t>(4, 4, 5), Error);
    EXPECT_THROW(Image<std::uint8_t>(kMaxDimension + 1, 1, 1), Error);
    EXPECT_THROW(Image<std::uint8_t>(kMaxDimension, kMaxDimension, 1), Error);  // > kMaxPixels
    try {
        Image<std::uint8_t> bad(4, 4, 7);
        FAIL() << "no throw";
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
        EXPECT_NE(std::string(e.what()).find("1 to 4"), std::string::npos) << e.what();
    }
}

TEST(ImageView, StrideAndSubViews) {
    std::vector<std::uint16_t> buf(10 * 6, 0);
    for (std::size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<std::uint16_t>(i + 1);
    ImageView<std::uint16_t> v(buf.data(), 4, 6, 2, 10);
    EXPECT_EQ(v.stride(), 10);
    EXPECT_FALSE(v.is_contiguous());
    EXPECT_EQ(v(1, 2, 1), buf[2 * 10 + 1 * 2 + 1]);
    auto s = v.sub(1, 2, 3, 4);
    EXPECT_EQ(s.width(), 3);
    EXPECT_EQ(s.height(), 4);
    EXPECT_EQ(s.stride(), 10);
    EXPECT_EQ(s(0, 0, 0), v(1, 2, 0));
    EXPECT_EQ(s(2, 3, 1), v(3, 5, 1));
    EXPECT_THROW(v.sub(2, 0, 3, 1), Error);
    EXPECT_THROW(v.sub(0, 0, 1, 7), Error);
    EXPECT_THROW(v.sub(-1, 0, 1, 1), Error);
    EXPECT_THROW(ImageView<std::uint16_t>(buf.data(), 6, 6, 2, 10), Error);  // stride too small
    EXPECT_THROW(ImageView<std::uint16_t>(nullptr, 6, 6, 1, 6), Error);
    ImageView<const std::uint16_t> cv = v;  // mutable -> const
    EXPECT_EQ(cv.data(), v.data());
}

TEST(Image, CopyAndCloneKeepPixelsAcrossStrides) {
    auto src = test::random_image<float>(13, 9, 3, 7, 0.1, 1.0);
    Image<float> big(20, 12, 3);
    auto dst = big.sub(3, 2, 13, 9);
    copy(src.view(), dst);
    EXPECT_TRUE(test::images_near(dst, src.view(), 0.0));
    auto c = clone(dst);
    EXPECT_TRUE(test::images_near(c.view(), src.view(), 0.0));
    Image<float> wrong(12, 9, 3);
    EXPECT_THROW(copy(src.view(), wrong.view()), Error);
}

TEST(Image, MoveTransfersOwnership) {
    Image<std::uint8_t> a(3, 3, 1);
    a(1, 1) = 42;
    Image<std::uint8_t> b(std::move(a));
    EXPECT_EQ(b(1, 1), 42);
    EXPECT_TRUE(a.empty());  // NOLINT(bugprone-use-after-move)
    Image<std::uint8_t> c;
    c = std::move(b);
    EXPECT_EQ(c(1, 1), 42);
}

TEST(Convert, NormalizedRangesMapOntoEachOther) {
    Image<std::uint8_t> u8(3, 1, 1);
    u8(0, 0) = 0, u8(1, 0) = 128, u8(2, 0) = 255;
    Image<std::uint16_t> u16(3, 1, 1);
    convert(u8.view(), u16.view());
    EXPECT_EQ(u16(1, 0), 128 * 257);
    EXPECT_EQ(u16(2, 0), 65535);
    Image<float> f(3, 1, 1);
    convert(u16.view(), f.view());
    EXPECT_NEAR(f(1, 0), 128.0 / 255.0, 1e-6);
    Image<std::uint8_t> back(3, 1, 1);
    convert(f.view(), back.view());
    EXPECT_TRUE(test::images_near(back.view(), u8.view(), 0.0));
}

TEST(Convert, SaturatesRoundsAndMapsNaNToZero) {
    Image<float> f(5, 1, 1);
    f(0, 0) = -3.0f, f(1, 0) = 2.5f, f(2, 0) = 3.5f, f(3, 0) = 300.0f;
    f(4, 0) = std::numeric_limits<float>::quiet_NaN();
    Image<std::uint8_t> u(5, 1, 1);
    convert(f.view(), u.view(), /*normalize=*/false);
    EXPECT_EQ(u(0, 0), 0);
    EXPECT_EQ(u(1, 0), 2);  // half to even
    EXPECT_EQ(u(2, 0), 4);
    EXPECT_EQ(u(3, 0), 255);
    EXPECT_EQ(u(4, 0), 0);
}

// The vectorized forms (saturate_row_from_float, saturate4_from_float) give saturate_from_float's
// value for every float: ties, both saturation ends, NaN, infinities, denormals, and 2^20 random
// bit patterns.
template <class D>
void check_saturate_row(const std::vector<float>& v) {
    std::vector<D> got(v.size());
    saturate_row_from_float<D>(v.data(), got.data(), static_cast<std::ptrdiff_t>(v.size()));
    for (std::size_t i = 0; i < v.size(); ++i)
        ASSERT_EQ(got[i], saturate_from_float<D>(v[i])) << "value " << v[i];
    // The 4-value form (one pixel), storing n <= 4 of them.
    for (std::size_t i = 0; i + 4 <= v.size(); i += 4) {
        D four[4] = {7, 7, 7, 7};
        const int n = 1 + static_cast<int>(i / 4 % 4);
        saturate4_from_float<D>(&v[i], four, n);
        for (int c = 0; c < 4; ++c)
            ASSERT_EQ(four[c], c < n ? saturate_from_float<D>(v[i + c]) : D{7})
                << "value " << v[i + c];
    }
}

TEST(Convert, RowSaturationMatchesTheScalarRule) {
    std::vector<float> v = {-0.0f,
                            0.0f,
                            0.5f,
                            1.5f,
                            2.5f,
                            254.5f,
                            255.0f,
                            255.49f,
                            255.5f,
                            256.0f,
                            65534.5f,
                            65535.0f,
                            65535.5f,
                            1e9f,
                            -1e9f,
                            1e-40f,
                            -1e-40f,
                            0.49999997f,
                            std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity()};
    for (int k = 0; k <= 2 * 65536; ++k) v.push_back(k * 0.5f);  // every tie up to 65536
    std::mt19937 rng(5);
    for (int k = 0; k < (1 << 20); ++k) {
        const std::uint32_t bits = rng();
        float f;
        std::memcpy(&f, &bits, sizeof f);
        v.push_back(f);
    }
    check_saturate_row<std::uint8_t>(v);
    check_saturate_row<std::uint16_t>(v);
}

TEST(AnyImage, HoldsAndConverts) {
    AnyImage any(test::random_image<std::uint8_t>(4, 3, 3, 1, 1, 255));
    EXPECT_TRUE(any.holds<std::uint8_t>());
    EXPECT_EQ(any.pixel_type(), PixelType::U8);
    EXPECT_EQ(any.width(), 4);
    EXPECT_THROW(any.as<float>(), Error);
    auto f = any.to<float>();
    EXPECT_NEAR(f(2, 1, 2), any.as<std::uint8_t>()(2, 1, 2) / 255.0, 1e-6);
}

TEST(Backend, ParseAndResolve) {
    EXPECT_EQ(parse_backend("cuda"), Backend::Cuda);
    EXPECT_THROW(parse_backend("gpu"), Error);
    Context ctx;
    EXPECT_EQ(to_string(Backend::Reference), std::string("reference"));
    EXPECT_EQ(exit_code(ErrorCode::InvalidArgument), 2);
    EXPECT_STREQ(to_string(ErrorCode::CorruptData), "corrupt_data");
    (void)ctx;
}

TEST(Backend, ReferenceAndCpuRefuseDeviceData) {
    float dummy = 1.0f;
    ImageView<float> dev(&dummy, 1, 1, 1, 0, Location::Device);
    Context ctx;
    ctx.backend = Backend::Cpu;
    try {
        resolve_backend(ctx, dev.location(), "test_op");
        FAIL() << "no throw";
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
        EXPECT_NE(std::string(e.what()).find("device memory"), std::string::npos);
    }
    ctx.backend = Backend::Auto;
    EXPECT_EQ(resolve_backend(ctx, Location::Host, "test_op"), Backend::Cpu);
}

TEST(Backend, CudaUnavailableIsAnErrorNotAFallback) {
    if (cuda_available()) GTEST_SKIP() << "a CUDA device is present: this checks the CPU-only case";
    Context ctx;
    ctx.backend = Backend::Cuda;
    try {
        resolve_backend(ctx, Location::Host, "test_op");
        FAIL() << "no throw";
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::BackendUnavailable);
    }
    EXPECT_THROW(Image<float>(4, 4, 1, Location::Device), Error);
}

// Host frame memory without a device (or with one): aligned, writable, freed.
TEST(Image, HostFrameMemory) {
    for (const std::size_t n : {std::size_t{2}, std::size_t{4097}, std::size_t{1} << 22}) {
        auto* p = static_cast<std::uint8_t*>(alloc_host_frame_memory(n));
        ASSERT_NE(p, nullptr);
        EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 64, 0u);
        p[0] = 1;
        p[n - 1] = 2;
        EXPECT_EQ(p[0] + p[n - 1], 3);
        free_host_frame_memory(p);
    }
}
