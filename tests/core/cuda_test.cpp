// CUDA smoke test: device images, host<->device copies of sub-views, and the convert kernel.
#include <upres/context.hpp>
#include <upres/error.hpp>
#include <upres/image.hpp>

#include "test_util.hpp"

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
