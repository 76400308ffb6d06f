// CUDA smoke test: device images, host<->device copies of sub-views, the convert kernel, and
// the pool of temporary device memory (core/device_temp.hpp).
#include <upres/context.hpp>
#include <upres/error.hpp>
#include <upres/image.hpp>
#include <upres/seabi.hpp>
#include <upres/srcnn.hpp>
#include <upres/warp.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "test_util.hpp"

#if UPRES_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "core/device_temp.hpp"
#endif

using namespace upres;

TEST(CoreCuda, DeviceRoundTripOfSubViews) {
    UPRES_REQUIRE_GPU();
    auto host = test::random_image<std::uint16_t>(37, 23, 3, 11, 1, 65535);
    Image<std::uint16_t> dev(50, 30, 3, Location::Device);
    auto dev_sub = dev.sub(5, 4, 37, 23);
    copy(host.view(), dev_sub);
    Image<std::uint16_t> dev2(37, 23, 3, Location::Device);
    copy(ImageView<const std::uint16_t>(dev_sub), dev2.view());  // device -> device
    Image<std::uint16_t> back(37, 23, 3);
    copy(dev2.view(), back.view());
    EXPECT_TRUE(test::images_near(back.view(), host.view(), 0.0));
}

TEST(CoreCuda, ConvertKernelMatchesHost) {
    UPRES_REQUIRE_GPU();
    for (int w : {1, 31, 257, 1000}) {
        auto host = test::random_image<float>(w, 17, 2, 5 + w, -0.2, 1.2);
        Image<std::uint8_t> expect(w, 17, 2);
        convert(host.view(), expect.view());
        auto dev = clone(host.view(), Location::Device);
        Image<std::uint8_t> dev_out(w, 17, 2, Location::Device);
        convert(dev.view(), dev_out.view());
        auto got = clone(dev_out.view());
        EXPECT_TRUE(test::images_near(got.view(), expect.view(), 0.0)) << "width " << w;
    }
}

// The device's saturate_from_float (no conversion unit: clamp, then 1.5 * 2^23 added) gives the
// host's values bit for bit: NaN, infinities, signed zeros, denormals, every half-integer from
// 0.5 to 65535.5 (ties to even), their float neighbours, the ends of the u8 and u16 ranges, and
// random values around them.
template <class D>
void saturate_as_host(const std::vector<float>& values) {
    const int w = 1000, h = static_cast<int>((values.size() + w - 1) / w);
    Image<float> host(w, h, 1);
    for (int i = 0; i < w * h; ++i)
        host.view().row(i / w)[i % w] = values[static_cast<std::size_t>(i) % values.size()];
    Image<D> expect(w, h, 1);
    convert(ImageView<const float>(host.view()), expect.view(), false);
    const Image<float> dev = clone(ImageView<const float>(host.view()), Location::Device);
    Image<D> dev_out(w, h, 1, Location::Device);
    convert(ImageView<const float>(dev.view()), dev_out.view(), false);
    const Image<D> got = clone(ImageView<const D>(dev_out.view()));
    int bad = 0;
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x)
            if (got.view().row(y)[x] != expect.view().row(y)[x] && ++bad <= 5)
                ADD_FAILURE() << "input " << host.view().row(y)[x] << ": device "
                              << +got.view().row(y)[x] << ", host " << +expect.view().row(y)[x];
    EXPECT_EQ(bad, 0);
}

TEST(CoreCuda, ConvertSaturatesAsHost) {
    UPRES_REQUIRE_GPU();
    const float inf = std::numeric_limits<float>::infinity();
    std::vector<float> v = {std::numeric_limits<float>::quiet_NaN(),
                            -std::numeric_limits<float>::quiet_NaN(),
                            inf,
                            -inf,
                            0.0f,
                            -0.0f,
                            std::numeric_limits<float>::denorm_min(),
                            -std::numeric_limits<float>::denorm_min(),
                            0.49999997f,
                            254.5f,
                            255.0f,
                            255.49998f,
                            255.5f,
                            256.0f,
                            65535.0f,
                            65535.5f,
                            65536.0f,
                            8388608.0f,
                            1e30f,
                            -1e30f,
                            std::numeric_limits<float>::max()};
    for (int k = 0; k <= 65535; ++k) {
        const float half = static_cast<float>(k) + 0.5f;
        v.push_back(half);
        v.push_back(std::nextafter(half, 0.0f));
        v.push_back(std::nextafter(half, inf));
        v.push_back(-half);
    }
    std::mt19937 rng(2026);
    std::uniform_real_distribution<float> any(-10.0f, 70000.0f), small(-2.0f, 300.0f);
    for (int i = 0; i < 100000; ++i) v.push_back(i % 2 ? any(rng) : small(rng));
    saturate_as_host<std::uint8_t>(v);
    saturate_as_host<std::uint16_t>(v);
}

TEST(CoreCuda, MixedLocationsAreRejected) {
    UPRES_REQUIRE_GPU();
    Image<float> h(4, 4, 1);
    Image<float> d(4, 4, 1, Location::Device);
    EXPECT_THROW(convert(h.view(), d.view()), Error);
}

TEST(CoreCuda, HugeDeviceAllocationIsOutOfMemory) {
    UPRES_REQUIRE_GPU();
    try {
        // 65536 x 16384 floats = 4 GiB per image; 64 of them exceed any current GPU.
        std::vector<Image<float>> keep;
        for (int i = 0; i < 64; ++i) keep.emplace_back(65536, 16384, 1, Location::Device);
        FAIL() << "1 TiB of device memory was allocated";
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::OutOfMemory) << e.what();
    }
}

TEST(CoreCuda, ConvertTallestAllowedImage) {
    UPRES_REQUIRE_GPU();
    // 65536 rows exceed the 65535 limit of a grid's y dimension: rows must be strided.
    auto host = test::random_image<std::uint8_t>(3, kMaxDimension, 1, 99, 1, 255);
    auto dev = clone(host.view(), Location::Device);
    Image<float> dev_out(3, kMaxDimension, 1, Location::Device);
    convert(dev.view(), dev_out.view(), /*normalize=*/false);
    auto got = clone(dev_out.view());
    EXPECT_TRUE(test::images_near(got.view(), host.view(), 0.0));
}

// Without CUDA (or before any temporary) releasing the pools is a no-op, never an error.
TEST(CorePool, ReleaseWithoutTemporariesIsHarmless) {
    EXPECT_NO_THROW(cuda_release_cached_memory());
}

#if UPRES_HAVE_CUDA
// A two-pass B-spline warp on device images (u8 RGB: staging + coefficient temporaries) leaves
// its temporaries in upres's pool after the stream is synchronized, the next call reuses them
// with the same result, and cuda_release_cached_memory() gives them back.
TEST(CudaPool, TemporariesAreKeptAndReleased) {
    UPRES_REQUIRE_GPU();
    const int w = 301, h = 203, W = 2 * w + 1, H = 2 * h - 3;
    auto host = test::random_image<std::uint8_t>(w, h, 3, 17, 1, 255);
    auto src = clone(host.view(), Location::Device);
    Image<std::uint8_t> d1(W, H, 3, Location::Device), d2(W, H, 3, Location::Device);
    cudaStream_t st = nullptr;
    ASSERT_EQ(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), cudaSuccess);
    Context ctx;
    ctx.cuda_stream = st;
    WarpOptions o;  // B-spline, exact prefilter
    warp(ImageView<const std::uint8_t>(src.view()), d1.view(), Transform::make_resize(), o, ctx);
    synchronize(ctx);
    const std::size_t need = 2 * sizeof(float) * std::size_t(w) * h * 3;  // staging + coefficients
    EXPECT_GE(cuda::temp_reserved_bytes(), need / 2) << "the coefficients were not kept";
    warp(ImageView<const std::uint8_t>(src.view()), d2.view(), Transform::make_resize(), o, ctx);
    synchronize(ctx);
    auto a = clone(d1.view()), b = clone(d2.view());
    EXPECT_TRUE(test::images_near(a.view(), b.view(), 0.0));
    // Same result as the host reference (the staging and coefficient temporaries are right).
    Image<std::uint8_t> ref(W, H, 3);
    Context rc;
    rc.backend = Backend::Reference;
    warp(ImageView<const std::uint8_t>(host.view()), ref.view(), Transform::make_resize(), o, rc);
    EXPECT_TRUE(test::images_near(a.view(), ref.view(), 1.0));
    cuda_release_cached_memory();
    EXPECT_EQ(cuda::temp_reserved_bytes(), 0u);
    cudaStreamDestroy(st);
}

// Host images on the Cuda backend are staged through upres's pool (core/device_image.hpp), and the
// SRCNN device pipeline takes its intermediates from it: after one call the pool holds at least
// their bytes (with Image<T>(..., Location::Device) it held none of them: they were cudaMalloc'd
// and cudaFree'd per call), and a second call gives the same result.
TEST(CudaPool, StagingAndPipelineIntermediatesComeFromThePool) {
    UPRES_REQUIRE_GPU();
    cuda_release_cached_memory();
    ASSERT_EQ(cuda::temp_reserved_bytes(), 0u);
    const int w = 97, h = 61;
    const auto host = test::random_image<std::uint8_t>(w, h, 1, 23, 1, 255);
    Image<std::uint8_t> out1(2 * w, 2 * h, 1), out2(2 * w, 2 * h, 1);
    Context cuda;
    cuda.backend = Backend::Cuda;
    seabi_upscale2(ImageView<const std::uint8_t>(host.view()), out1.view(), {}, cuda);
    EXPECT_GE(cuda::temp_reserved_bytes(), std::size_t(5) * w * h) << "staging not pooled";
    seabi_upscale2(ImageView<const std::uint8_t>(host.view()), out2.view(), {}, cuda);
    EXPECT_TRUE(test::images_near(out1.view(), out2.view(), 0.0));
    cuda_release_cached_memory();

    // The device-resident SRCNN pipeline: RGB 64 x 48 -> 128 x 96, device in and out.
    const auto rgb = test::random_image<std::uint8_t>(64, 48, 3, 29, 1, 255);
    const auto din = clone(rgb.view(), Location::Device);
    Image<std::uint8_t> d1(128, 96, 3, Location::Device), d2(128, 96, 3, Location::Device);
    const SrcnnModel m = load_default_srcnn_model(2);
    srcnn_upscale(ImageView<const std::uint8_t>(din.view()), d1.view(), m, {}, cuda);
    synchronize(cuda);
    // The x2 planes (float YCbCr), the luma in and out of the network.
    const std::size_t planes = sizeof(float) * 128 * 96 * (3 + 1 + 1);
    EXPECT_GE(cuda::temp_reserved_bytes(), planes) << "pipeline intermediates not pooled";
    srcnn_upscale(ImageView<const std::uint8_t>(din.view()), d2.view(), m, {}, cuda);
    synchronize(cuda);
    const auto a = clone(d1.view()), b = clone(d2.view());
    EXPECT_TRUE(test::images_near(a.view(), b.view(), 0.0));
    cuda_release_cached_memory();
}

// A temporary larger than the device: Error(OutOfMemory) naming what needed it and the size.
TEST(CudaPool, HugeTemporaryIsOutOfMemory) {
    UPRES_REQUIRE_GPU();
    try {
        cuda::DeviceTemp t(std::size_t{1} << 50, nullptr, "test temporary");
        FAIL() << "1 PiB of device memory was allocated";
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::OutOfMemory) << e.what();
        const std::string m = e.what();
        EXPECT_NE(m.find("test temporary"), std::string::npos) << m;
        EXPECT_NE(m.find("out of memory"), std::string::npos) << m;
    }
    // The device is still usable afterwards.
    cuda::DeviceTemp ok(1 << 20, nullptr, "test temporary");
    EXPECT_NE(ok.get(), nullptr);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}
#endif

// Host frame memory: 64-byte aligned, usable as host memory, and (with a device) page-locked,
// so a device copy into it and back is exact.
TEST(CoreCuda, HostFrameMemoryRoundTrip) {
    UPRES_REQUIRE_GPU();
    const auto host = test::random_image<std::uint8_t>(61, 17, 1, 5);
    void* p = alloc_host_frame_memory(61 * 17);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 64, 0u);
#if UPRES_HAVE_CUDA
    cudaPointerAttributes attr{};
    ASSERT_EQ(cudaPointerGetAttributes(&attr, p), cudaSuccess);
    EXPECT_EQ(attr.type, cudaMemoryTypeHost);  // page-locked
#endif
    const ImageView<std::uint8_t> pinned(static_cast<std::uint8_t*>(p), 61, 17, 1);
    Image<std::uint8_t> dev(61, 17, 1, Location::Device);
    copy(host.view(), dev.view());
    copy(ImageView<const std::uint8_t>(dev.view()), pinned);
    EXPECT_TRUE(test::images_near(pinned, host.view(), 0.0));
    free_host_frame_memory(p);
    free_host_frame_memory(nullptr);
}

// Context::device: a device that does not exist is refused by name, on a machine without CUDA
// the cuda backend itself is.
TEST(CoreDevices, ADeviceThatDoesNotExistIsRefused) {
    const Image<std::uint8_t> img = test::random_image<std::uint8_t>(32, 24, 1, 3);
    Context ctx;
    ctx.backend = Backend::Cuda;
    ctx.device = cuda_device_count() + 3;
    const ErrorCode want =
        cuda_available() ? ErrorCode::InvalidArgument : ErrorCode::BackendUnavailable;
    test::expect_error([&] { seabi_upscale2(img.view(), SeabiOptions{}, ctx); }, want,
                       cuda_available()
                           ? "CUDA device " + std::to_string(ctx.device) + " does not exist"
                           : std::string("cuda backend"));
    if (cuda_available()) {
        test::expect_error([&] { set_cuda_device(-1); }, ErrorCode::InvalidArgument,
                           "CUDA device -1 does not exist (allowed: 0 to");
        test::expect_error([&] { set_cuda_device(ctx.device); }, ErrorCode::InvalidArgument,
                           "does not exist");
    }
    // The cpu backend ignores the device.
    ctx.backend = Backend::Cpu;
    EXPECT_EQ(seabi_upscale2(img.view(), SeabiOptions{}, ctx).width(), 64);
}

// Every GPU gives the same bytes: SRCNN and a B-spline zoom on the last device (host images,
// and device images allocated there) against device 0. Skipped, visibly, with one GPU.
TEST(CoreDevices, EveryDeviceGivesTheSameBytes) {
    UPRES_REQUIRE_GPU();
    const int n = cuda_device_count();
    if (n < 2) GTEST_SKIP() << "one CUDA device: the second-device check needs two";
    const Image<std::uint8_t> img = test::random_image<std::uint8_t>(96, 64, 3, 8);
    const SrcnnModel m = load_default_srcnn_model(2);
    Context c0, c1;
    c0.backend = c1.backend = Backend::Cuda;
    c0.device = 0;
    c1.device = n - 1;
    const Image<std::uint8_t> a = srcnn_upscale(img.view(), m, SrcnnOptions{}, c0);
    const Image<std::uint8_t> b = srcnn_upscale(img.view(), m, SrcnnOptions{}, c1);
    EXPECT_TRUE(test::same_bytes(a, b));
    set_cuda_device(n - 1);
    {
        Image<float> d_in(97, 61, 1, Location::Device), d_out(150, 100, 1, Location::Device);
        const Image<float> h_in = test::random_image<float>(97, 61, 1, 9, 0.0, 1.0);
        copy(h_in.view(), d_in.view());
        warp(ImageView<const float>(d_in.view()), d_out.view(), Transform::make_resize(),
             WarpOptions{}, c1);
        Image<float> h0(150, 100, 1);
        warp(h_in.view(), h0.view(), Transform::make_resize(), WarpOptions{}, c0);
        EXPECT_TRUE(test::same_bytes(clone(ImageView<const float>(d_out.view())), h0));
    }
    set_cuda_device(0);
}
