// Tests for upres_io: round trips for every format / depth / channel count, strided views,
// real photos and files written by OpenCV / Pillow / NumPy (tests/data/io, made by
// tools/golden/gen_io.py), corrupt and oversized files, and the atomic-write guarantee.
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <upres/io.hpp>

#include "io/io_internal.hpp"
#include "test_util.hpp"

#include <png.h>

#include <thread>

#if UPRES_HAVE_TIFF
#include <tiffio.h>
#endif

namespace upres {
namespace {

namespace fs = std::filesystem;
using test::data_path;
using test::images_near;
using test::random_image;
using test::sample_path;

// ------------------------------------------------------------------------------ helpers

std::string read_bytes(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}
void write_bytes(const std::string& p, const std::string& bytes) {
    std::ofstream out(p, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Runs f, expects upres::Error with `code` whose message starts with `file` and contains
// every string in `parts`.
void expect_error(const std::function<void()>& f, ErrorCode code, const std::string& file,
                  std::initializer_list<std::string> parts = {}) {
    try {
        f();
        ADD_FAILURE() << "expected " << to_string(code) << " for " << file << ", nothing thrown";
    } catch (const Error& e) {
        const std::string msg = e.what();
        EXPECT_EQ(e.code(), code) << msg;
        EXPECT_EQ(msg.rfind(file, 0), 0u) << "message does not start with the file: " << msg;
        for (const auto& p : parts)
            EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' missing in: " << msg;
    }
}

// Bitwise equality (NaN payloads and -0 included), reporting the first difference.
template <class A, class B>
::testing::AssertionResult same_pixels(const ImageView<A>& a, const ImageView<B>& b) {
    static_assert(std::is_same_v<std::remove_const_t<A>, std::remove_const_t<B>>);
    if (a.width() != b.width() || a.height() != b.height() || a.channels() != b.channels())
        return ::testing::AssertionFailure()
               << "shape " << a.width() << "x" << a.height() << "x" << a.channels() << " vs "
               << b.width() << "x" << b.height() << "x" << b.channels();
    for (int y = 0; y < a.height(); ++y)
        for (int x = 0; x < a.width(); ++x)
            for (int c = 0; c < a.channels(); ++c)
                if (std::memcmp(&a(x, y, c), &b(x, y, c), sizeof(A)) != 0)
                    return ::testing::AssertionFailure()
                           << "differ at (x " << x << ", y " << y << ", c " << c
                           << "): " << +a(x, y, c) << " vs " << +b(x, y, c);
    return ::testing::AssertionSuccess();
}

// Random test image; floats span negatives and large values and include NaN, +-Inf, -0 and a
// denormal.
template <class T>
Image<T> test_image(int w, int h, int c, std::uint32_t seed) {
    if constexpr (std::is_same_v<T, float>) {
        Image<float> img = random_image<float>(w, h, c, seed, -1000.0, 1000.0);
        const float specials[] = {
            std::numeric_limits<float>::quiet_NaN(),  -std::numeric_limits<float>::infinity(),
            std::numeric_limits<float>::infinity(),   -0.0f,
            std::numeric_limits<float>::denorm_min(), -3.4e38f};
        const std::int64_t n = img.pixel_count() * c;
        for (std::size_t i = 0; i < std::size(specials); ++i)
            if (static_cast<std::int64_t>(i * 7) < n) img.data()[i * 7] = specials[i];
        return img;
    } else {
        return random_image<T>(w, h, c, seed);
    }
}

// img as a tiled TIFF through TiffRowWriter (tiles of `tile`, Deflate-compressed if `deflate`).
template <class T>
void write_tiled_tiff(const std::string& p, const Image<T>& img, int tile, bool deflate) {
    TiffRowWriterOptions o;
    o.tile = tile;
    o.deflate = deflate;
    TiffRowWriter w(p, img.width(), img.height(), img.channels(), PixelTraits<T>::type, o);
    w.write_rows(0, img.height(), img.view().row(0), img.view().stride());
    w.commit();
}

// A smooth image (gradients plus mild noise): what JPEG is meant for.
Image<std::uint8_t> smooth_image(int w, int h, int c, std::uint32_t seed) {
    Image<std::uint8_t> img(w, h, c);
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> noise(-3, 3);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x)
            for (int ch = 0; ch < c; ++ch) {
                const double v = 128 + 90 * std::sin(0.05 * x + 0.9 * ch) * std::cos(0.04 * y);
                img(x, y, ch) = static_cast<std::uint8_t>(std::clamp(v + noise(rng), 0.0, 255.0));
            }
    return img;
}

class IoTest : public ::testing::Test {
  protected:
    void SetUp() override {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        dir_ = fs::temp_directory_path() /
               ("upres_io_test_" + std::to_string(::getpid()) + "_" + info->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override {
        std::error_code ec;
        fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::add, ec);
        // No test may leave a temporary file behind.
        for (const auto& e : fs::recursive_directory_iterator(dir_, ec))
            EXPECT_EQ(e.path().filename().string().find(".tmp-"), std::string::npos)
                << "leftover temporary file " << e.path();
        fs::remove_all(dir_, ec);
    }
    std::string path(const std::string& name) const { return (dir_ / name).string(); }

    template <class T>
    void round_trip(const std::string& name, int w, int h, int c, std::uint32_t seed) {
        SCOPED_TRACE(name + " " + std::to_string(w) + "x" + std::to_string(h) + "x" +
                     std::to_string(c));
        const Image<T> img = test_image<T>(w, h, c, seed);
        const std::string p = path(name);
        write_image(p, img.view());
        const AnyImage back = read_image(p);
        ASSERT_TRUE(back.holds<T>()) << "read back as " << to_string(back.pixel_type());
        EXPECT_TRUE(same_pixels(back.as<T>().view(), img.view()));
    }

    fs::path dir_;
};

const std::array<std::array<int, 2>, 4> kSizes = {{{1, 1}, {37, 5}, {5, 37}, {64, 33}}};

// ------------------------------------------------------------------------------ round trips

TEST_F(IoTest, PngRoundTripU8U16AllChannels) {
    std::uint32_t seed = 1;
    for (const auto& s : kSizes)
        for (int c = 1; c <= 4; ++c) {
            round_trip<std::uint8_t>("a.png", s[0], s[1], c, seed++);
            round_trip<std::uint16_t>("b.PNG", s[0], s[1], c, seed++);
        }
}

TEST_F(IoTest, TiffRoundTripAllDepthsAndChannels) {
    if (!format_supported(FileFormat::Tiff)) {
        expect_error([&] { read_image(path("x.tif")); }, ErrorCode::UnsupportedFormat,
                     path("x.tif"), {"libtiff"});
        return;
    }
    std::uint32_t seed = 100;
    for (const auto& s : kSizes)
        for (int c = 1; c <= 4; ++c) {
            round_trip<std::uint8_t>("a.tif", s[0], s[1], c, seed++);
            round_trip<std::uint16_t>("b.tiff", s[0], s[1], c, seed++);
            round_trip<float>("c.tif", s[0], s[1], c, seed++);
        }
}

TEST_F(IoTest, PfmRoundTripGrayAndRgbWithSpecialValues) {
    std::uint32_t seed = 200;
    for (const auto& s : kSizes)
        for (int c : {1, 3}) round_trip<float>("a.pfm", s[0], s[1], c, seed++);
}

TEST_F(IoTest, PnmRoundTrip8And16Bit) {
    std::uint32_t seed = 300;
    for (const auto& s : kSizes) {
        round_trip<std::uint8_t>("a.pgm", s[0], s[1], 1, seed++);
        round_trip<std::uint16_t>("b.pgm", s[0], s[1], 1, seed++);
        round_trip<std::uint8_t>("c.ppm", s[0], s[1], 3, seed++);
        round_trip<std::uint16_t>("d.ppm", s[0], s[1], 3, seed++);
        round_trip<std::uint8_t>("e.pnm", s[0], s[1], 3, seed++);
        round_trip<std::uint16_t>("f.pnm", s[0], s[1], 1, seed++);
    }
}

TEST_F(IoTest, NpyRoundTripAllTypesAndChannels) {
    std::uint32_t seed = 400;
    for (const auto& s : kSizes)
        for (int c = 1; c <= 4; ++c) {
            round_trip<std::uint8_t>("a.npy", s[0], s[1], c, seed++);
            round_trip<std::uint16_t>("b.npy", s[0], s[1], c, seed++);
            round_trip<float>("c.npy", s[0], s[1], c, seed++);
        }
}

TEST_F(IoTest, NpyHeaderIsVersion1AlignedTo64) {
    const Image<float> img = test_image<float>(37, 5, 3, 7);
    write_image(path("a.npy"), img.view());
    const std::string bytes = read_bytes(path("a.npy"));
    ASSERT_GT(bytes.size(), 10u);
    EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
    const std::size_t header_len =
        static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
    EXPECT_EQ((10 + header_len) % 64, 0u);
    EXPECT_EQ(bytes[10 + header_len - 1], '\n');
    EXPECT_NE(bytes.find("'shape': (5, 37, 3)"), std::string::npos);
    EXPECT_EQ(bytes.size(), 10 + header_len + 37 * 5 * 3 * 4);
}

TEST_F(IoTest, PfmIsBottomToTopLittleEndian) {
    Image<float> img(2, 2, 1);
    img(0, 0) = 1.0f, img(1, 0) = 2.0f, img(0, 1) = 3.0f, img(1, 1) = 4.0f;
    write_image(path("a.pfm"), img.view());
    const std::string bytes = read_bytes(path("a.pfm"));
    const std::string header = "Pf\n2 2\n-1.0\n";
    ASSERT_EQ(bytes.size(), header.size() + 16);
    EXPECT_EQ(bytes.substr(0, header.size()), header);
    float first;
    std::memcpy(&first, bytes.data() + header.size(), 4);  // little-endian host (x86/ARM)
    EXPECT_EQ(first, 3.0f) << "first stored row must be the bottom one";

    // A big-endian file (positive scale) reads the same.
    std::string be = "Pf\n2 2\n1.0\n";
    for (float v : {3.0f, 4.0f, 1.0f, 2.0f}) {
        std::uint32_t u;
        std::memcpy(&u, &v, 4);
        for (int i = 3; i >= 0; --i) be.push_back(static_cast<char>((u >> (8 * i)) & 0xff));
    }
    write_bytes(path("be.pfm"), be);
    const AnyImage back = read_image(path("be.pfm"));
    EXPECT_TRUE(same_pixels(back.as<float>().view(), img.view()));
}

TEST_F(IoTest, PnmHeaderCommentsAndBigEndian16) {
    std::string f = "P5\n# a comment\n3 # width\n1\n# maxval next\n65535\n";
    for (std::uint16_t v : {std::uint16_t{1}, std::uint16_t{0x1234}, std::uint16_t{65535}}) {
        f.push_back(static_cast<char>(v >> 8));
        f.push_back(static_cast<char>(v & 0xff));
    }
    write_bytes(path("c.pgm"), f);
    const AnyImage img = read_image(path("c.pgm"));
    ASSERT_TRUE(img.holds<std::uint16_t>());
    const auto& im = img.as<std::uint16_t>();
    ASSERT_EQ(im.width(), 3);
    EXPECT_EQ(im(0, 0), 1);
    EXPECT_EQ(im(1, 0), 0x1234);
    EXPECT_EQ(im(2, 0), 65535);
}

TEST_F(IoTest, JpegRoundTripWithinTolerance) {
    for (const auto& s : kSizes)
        for (int c : {1, 3}) {
            SCOPED_TRACE(std::to_string(s[0]) + "x" + std::to_string(s[1]) + "x" +
                         std::to_string(c));
            const Image<std::uint8_t> img = smooth_image(s[0], s[1], c, 500 + c);
            write_image(path("a.jpg"), img.view());
            const AnyImage back = read_image(path("a.jpg"));
            ASSERT_TRUE(back.holds<std::uint8_t>());
            EXPECT_TRUE(images_near(back.as<std::uint8_t>().view(), img.view(), 10.0));
        }
}

TEST_F(IoTest, JpegQualityOptionChangesSizeAndError) {
    const Image<std::uint8_t> img = smooth_image(96, 64, 3, 9);
    WriteOptions lo, hi;
    lo.jpeg_quality = 10;
    hi.jpeg_quality = 98;
    write_image(path("lo.jpg"), img.view(), lo);
    write_image(path("hi.jpeg"), img.view(), hi);
    EXPECT_LT(fs::file_size(path("lo.jpg")) * 2, fs::file_size(path("hi.jpeg")));
    auto mean_err = [&](const std::string& p) {
        const AnyImage b = read_image(p);
        double s = 0;
        const auto& bi = b.as<std::uint8_t>();
        for (int y = 0; y < img.height(); ++y)
            for (int x = 0; x < img.width() * 3; ++x)
                s += std::abs(bi.data()[y * img.width() * 3 + x] -
                              img.data()[y * img.width() * 3 + x]);
        return s / (img.width() * img.height() * 3);
    };
    const double e_lo = mean_err(path("lo.jpg")), e_hi = mean_err(path("hi.jpeg"));
    EXPECT_LT(e_hi, 2.0);
    EXPECT_GT(e_lo, e_hi);
}

TEST_F(IoTest, PngCompressionOptionKeepsPixels) {
    const Image<std::uint16_t> img = test_image<std::uint16_t>(37, 5, 3, 11);
    for (int level : {0, 9}) {
        WriteOptions o;
        o.png_compression = level;
        write_image(path("a.png"), img.view(), o);
        EXPECT_TRUE(same_pixels(read_image(path("a.png")).as<std::uint16_t>().view(), img.view()));
    }
}

TEST_F(IoTest, StridedSubViewWrites) {
    const Image<std::uint8_t> big8 = test_image<std::uint8_t>(50, 40, 3, 21);
    const Image<std::uint16_t> big16 = test_image<std::uint16_t>(50, 40, 4, 22);
    const Image<float> bigf = test_image<float>(50, 40, 3, 23);
    const Image<std::uint8_t> big1 = test_image<std::uint8_t>(50, 40, 1, 24);
    const auto s8 = big8.sub(3, 4, 37, 5);
    const auto s16 = big16.sub(1, 2, 37, 5);
    const auto sf = bigf.sub(7, 30, 37, 5);
    const auto s1 = big1.sub(11, 1, 37, 5);
    ASSERT_FALSE(s8.is_contiguous());
    std::vector<std::string> names = {"a.png", "a.ppm", "a.npy"};
    if (format_supported(FileFormat::Tiff)) names.push_back("a.tif");
    for (const auto& n : names) {
        SCOPED_TRACE(n);
        write_image(path(n), s8);
        EXPECT_TRUE(same_pixels(read_image(path(n)).as<std::uint8_t>().view(), s8));
    }
    for (const auto& n : {"b.png", "b.npy", "b.tif"}) {
        if (std::string(n) == "b.tif" && !format_supported(FileFormat::Tiff)) continue;
        SCOPED_TRACE(n);
        write_image(path(n), s16);
        EXPECT_TRUE(same_pixels(read_image(path(n)).as<std::uint16_t>().view(), s16));
    }
    for (const auto& n : {"c.pfm", "c.npy", "c.tif"}) {
        if (std::string(n) == "c.tif" && !format_supported(FileFormat::Tiff)) continue;
        SCOPED_TRACE(n);
        write_image(path(n), sf);
        EXPECT_TRUE(same_pixels(read_image(path(n)).as<float>().view(), sf));
    }
    write_image(path("d.pgm"), s1);
    EXPECT_TRUE(same_pixels(read_image(path("d.pgm")).as<std::uint8_t>().view(), s1));
    write_image(path("d.jpg"), s1);
    EXPECT_TRUE(images_near(read_image(path("d.jpg")).as<std::uint8_t>().view(), s1, 255.0));
    const Image<std::uint8_t> sm = smooth_image(60, 20, 3, 3);
    write_image(path("e.jpg"), sm.sub(5, 5, 37, 5));
    EXPECT_TRUE(images_near(read_image(path("e.jpg")).as<std::uint8_t>().view(),
                            sm.sub(5, 5, 37, 5), 12.0));
}

TEST_F(IoTest, AnyImageWriteAndFormatOverride) {
    const AnyImage img(test_image<std::uint16_t>(37, 5, 2, 31));
    WriteOptions wo;
    wo.format = FileFormat::Png;
    write_image(path("noext"), img, wo);
    expect_error([&] { read_image(path("noext")); }, ErrorCode::UnsupportedFormat, path("noext"),
                 {"extension"});
    ReadOptions ro;
    ro.format = parse_file_format("PNG");
    const AnyImage back = read_image(path("noext"), ro);
    EXPECT_TRUE(same_pixels(back.as<std::uint16_t>().view(), img.as<std::uint16_t>().view()));
    // The option wins over the extension.
    wo.format = FileFormat::Npy;
    write_image(path("really_npy.png"), img, wo);
    ro.format = FileFormat::Npy;
    EXPECT_TRUE(same_pixels(read_image(path("really_npy.png"), ro).as<std::uint16_t>().view(),
                            img.as<std::uint16_t>().view()));
    expect_error([&] { read_image(path("really_npy.png")); }, ErrorCode::CorruptData,
                 path("really_npy.png"), {"PNG"});
}

TEST(IoFormat, NamesAndExtensions) {
    EXPECT_EQ(format_from_path("a/b.JPG"), FileFormat::Jpeg);
    EXPECT_EQ(format_from_path("x.tiff"), FileFormat::Tiff);
    EXPECT_EQ(format_from_path("x.pnm"), FileFormat::Pnm);
    EXPECT_EQ(parse_file_format("tif"), FileFormat::Tiff);
    EXPECT_STREQ(to_string(FileFormat::Npy), "npy");
    EXPECT_TRUE(format_supported(FileFormat::Png));
    EXPECT_FALSE(format_supported(FileFormat::Auto));
#if UPRES_HAVE_TIFF
    EXPECT_TRUE(format_supported(FileFormat::Tiff));
#else
    EXPECT_FALSE(format_supported(FileFormat::Tiff));
#endif
    expect_error([] { parse_file_format("bmp"); }, ErrorCode::UnsupportedFormat, "unknown",
                 {"bmp", "png"});
    expect_error([] { format_from_path("dir.d/file"); }, ErrorCode::UnsupportedFormat, "dir.d/file",
                 {"extension"});
}

// ------------------------------------------------------------------------------ real files

TEST(IoGolden, RealPhotosMatchOpenCVAndPillow) {
    struct Case {
        const char* file;
        int w, h, c;
        double tol;  // JPEG decoders may differ by rounding
    };
    const Case cases[] = {{"baboon.jpg", 512, 512, 3, 2.0},
                          {"camera.png", 512, 512, 1, 0.0},
                          {"astronaut.png", 512, 512, 3, 0.0},
                          {"coins.png", 384, 303, 1, 0.0}};
    for (const auto& k : cases) {
        SCOPED_TRACE(k.file);
        const AnyImage img = read_image(sample_path(k.file));
        ASSERT_TRUE(img.holds<std::uint8_t>());
        ASSERT_EQ(img.width(), k.w);
        ASSERT_EQ(img.height(), k.h);
        ASSERT_EQ(img.channels(), k.c);
        const auto crop = img.as<std::uint8_t>().sub(100, 200, 8, 8);
        std::string stem = k.file;
        stem[stem.find('.')] = '_';
        for (const char* tool : {"_cv2.npy", "_pil.npy"}) {
            SCOPED_TRACE(tool);
            const AnyImage ref = read_image(data_path("io/" + stem + tool));
            EXPECT_TRUE(images_near(crop, ref.as<std::uint8_t>().view(), k.tol));
        }
    }
}

TEST(IoGolden, FilesWrittenByOpenCV) {
    const char* files[] = {"cv2_rgba8.png", "cv2_gray16.png", "cv2_rgb16.png",
                           "cv2_rgb8.ppm",  "cv2_gray16.pgm", "cv2_rgbf.pfm",
                           "cv2_grayf.pfm", "cv2_rgb16.tif",  "cv2_grayf.tif"};
    for (const char* f : files) {
        SCOPED_TRACE(f);
        std::string ref_name = f;
        ref_name[ref_name.find('.')] = '_';
        if (std::string(f).ends_with(".tif") && !format_supported(FileFormat::Tiff)) continue;
        const AnyImage img = read_image(data_path(std::string("io/") + f));
        const AnyImage ref = read_image(data_path("io/" + ref_name + ".npy"));
        ASSERT_EQ(img.pixel_type(), ref.pixel_type());
        if (ref.holds<std::uint8_t>())
            EXPECT_TRUE(same_pixels(img.as<std::uint8_t>().view(), ref.as<std::uint8_t>().view()));
        else if (ref.holds<std::uint16_t>())
            EXPECT_TRUE(
                same_pixels(img.as<std::uint16_t>().view(), ref.as<std::uint16_t>().view()));
        else
            EXPECT_TRUE(images_near(img.as<float>().view(), ref.as<float>().view(), 0.0));
    }
}

TEST(IoGolden, PngExpansionPaletteAndOneBit) {
    for (const char* f : {"pil_palette", "pil_1bit"}) {
        SCOPED_TRACE(f);
        const AnyImage img = read_image(data_path(std::string("io/") + f + ".png"));
        const AnyImage ref = read_image(data_path(std::string("io/") + f + "_png.npy"));
        EXPECT_TRUE(same_pixels(img.as<std::uint8_t>().view(), ref.as<std::uint8_t>().view()));
    }
}

TEST(IoGolden, JpegWrittenByPillowAndCmykRefused) {
    const AnyImage img = read_image(data_path("io/pil_rgb.jpg"));
    const AnyImage ref = read_image(data_path("io/pil_rgb_jpg.npy"));
    EXPECT_TRUE(images_near(img.as<std::uint8_t>().view(), ref.as<std::uint8_t>().view(), 1.0));
    const AnyImage prog = read_image(data_path("io/pil_progressive.jpg"));
    const AnyImage prog_ref = read_image(data_path("io/pil_progressive_jpg.npy"));
    EXPECT_TRUE(
        images_near(prog.as<std::uint8_t>().view(), prog_ref.as<std::uint8_t>().view(), 1.0));
    const std::string cmyk = data_path("io/pil_cmyk.jpg");
    expect_error([&] { read_image(cmyk); }, ErrorCode::UnsupportedFormat, cmyk, {"CMYK"});
}

TEST(IoGolden, NpyWrittenByNumpy) {
    const AnyImage f = read_image(data_path("io/np_f32_hwc.npy"));
    ASSERT_TRUE(f.holds<float>());
    EXPECT_EQ(f.width(), 13);
    EXPECT_EQ(f.height(), 7);
    EXPECT_EQ(f.channels(), 3);
    EXPECT_TRUE(std::isnan(f.as<float>()(0, 0, 0)));
    EXPECT_EQ(f.as<float>()(2, 1, 1), -std::numeric_limits<float>::infinity());
    const AnyImage u16 = read_image(data_path("io/np_u16_hw.npy"));
    EXPECT_TRUE(u16.holds<std::uint16_t>());
    EXPECT_EQ(u16.channels(), 1);
    const AnyImage u8 = read_image(data_path("io/np_u8_hwc4.npy"));
    EXPECT_TRUE(u8.holds<std::uint8_t>());
    EXPECT_EQ(u8.channels(), 4);
    // Version 2.0 header; the same array as cv2_grayf_pfm.npy (version 1.0).
    const AnyImage v2 = read_image(data_path("io/np_v2_f32.npy"));
    const AnyImage v1 = read_image(data_path("io/cv2_grayf_pfm.npy"));
    EXPECT_TRUE(same_pixels(v2.as<float>().view(), v1.as<float>().view()));

    const std::string f8 = data_path("io/np_bad_f8.npy");
    expect_error([&] { read_image(f8); }, ErrorCode::UnsupportedFormat, f8,
                 {"'<f8'", "'<f4'", "'|u1'", "'<u2'"});
    const std::string fo = data_path("io/np_bad_fortran.npy");
    expect_error([&] { read_image(fo); }, ErrorCode::UnsupportedFormat, fo, {"Fortran"});
    const std::string c5 = data_path("io/np_bad_5ch.npy");
    expect_error([&] { read_image(c5); }, ErrorCode::UnsupportedFormat, c5, {"(7, 13, 5)", "1..4"});
    const std::string d1 = data_path("io/np_bad_1d.npy");
    expect_error([&] { read_image(d1); }, ErrorCode::UnsupportedFormat, d1, {"(5,)"});
}

// An Adam7-interlaced PNG written with libpng directly (upres writes non-interlaced ones).
template <class T>
void write_interlaced_png(const std::string& p, const Image<T>& img) {
    std::FILE* f = std::fopen(p.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
    png_infop info = png_create_info_struct(png);
    png_init_io(png, f);
    static constexpr int kTypes[] = {PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA,
                                     PNG_COLOR_TYPE_RGB, PNG_COLOR_TYPE_RGB_ALPHA};
    png_set_IHDR(png, info, img.width(), img.height(), sizeof(T) * 8, kTypes[img.channels() - 1],
                 PNG_INTERLACE_ADAM7, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    if (sizeof(T) == 2) png_set_swap(png);  // little-endian host
    std::vector<png_bytep> rows(img.height());
    for (int y = 0; y < img.height(); ++y)
        rows[y] = reinterpret_cast<png_bytep>(const_cast<T*>(img.view().row(y)));
    png_write_image(png, rows.data());
    png_write_end(png, info);
    png_destroy_write_struct(&png, &info);
    std::fclose(f);
}

TEST_F(IoTest, PngInterlacedRead) {
    const Image<std::uint16_t> rgb16 = test_image<std::uint16_t>(37, 29, 3, 81);
    const Image<std::uint8_t> ga8 = test_image<std::uint8_t>(5, 37, 2, 82);
    write_interlaced_png(path("i16.png"), rgb16);
    write_interlaced_png(path("i8.png"), ga8);
    EXPECT_TRUE(same_pixels(read_image(path("i16.png")).as<std::uint16_t>().view(), rgb16.view()));
    EXPECT_TRUE(same_pixels(read_image(path("i8.png")).as<std::uint8_t>().view(), ga8.view()));
}

// Readers and writers keep no shared state (libpng/libjpeg/libtiff handlers are per call):
// concurrent use from several threads gives the same pixels.
TEST_F(IoTest, ConcurrentReadsAndWrites) {
    const Image<std::uint8_t> u8 = test_image<std::uint8_t>(37, 5, 3, 91);
    const Image<float> f32 = test_image<float>(37, 5, 3, 92);
    std::vector<std::string> exts = {".png", ".ppm", ".npy", ".jpg"};
    if (format_supported(FileFormat::Tiff)) exts.push_back(".tif");
    std::vector<int> failures(4, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            const std::string tag = std::to_string(t);
            for (int i = 0; i < 5; ++i)
                for (const auto& e : exts) {
                    const std::string p = path(std::string("t").append(tag).append(e));
                    write_image(p, u8.view());
                    const AnyImage back = read_image(p);
                    if (e != ".jpg" && !same_pixels(back.as<std::uint8_t>().view(), u8.view()))
                        ++failures[t];
                    const std::string q = path(std::string("f").append(tag).append(".pfm"));
                    write_image(q, f32.view());
                    if (!same_pixels(read_image(q).as<float>().view(), f32.view())) ++failures[t];
                    // Errors on other threads at the same time.
                    try {
                        read_image(path(std::string("missing").append(tag).append(e)));
                        ++failures[t];
                    } catch (const Error& err) {
                        if (err.code() != ErrorCode::IoError) ++failures[t];
                    }
                }
        });
    for (auto& th : threads) th.join();
    for (int t = 0; t < 4; ++t) EXPECT_EQ(failures[t], 0) << "thread " << t;
}

#if UPRES_HAVE_TIFF
// TIFF layouts upres does not write itself, made with libtiff directly: tiled (contiguous),
// planar-separate strips, and photometrics upres refuses.
void write_tiff_layout(const std::string& p, const Image<std::uint16_t>& img, bool tiled,
                       bool separate, std::uint16_t photometric = PHOTOMETRIC_RGB,
                       std::uint16_t bits = 16) {
    TIFF* t = TIFFOpen(p.c_str(), "w");
    ASSERT_NE(t, nullptr);
    const int w = img.width(), h = img.height(), c = img.channels();
    TIFFSetField(t, TIFFTAG_IMAGEWIDTH, static_cast<std::uint32_t>(w));
    TIFFSetField(t, TIFFTAG_IMAGELENGTH, static_cast<std::uint32_t>(h));
    TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, static_cast<std::uint16_t>(c));
    TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, bits);
    TIFFSetField(t, TIFFTAG_PHOTOMETRIC, photometric);
    TIFFSetField(
        t, TIFFTAG_PLANARCONFIG,
        static_cast<std::uint16_t>(separate ? PLANARCONFIG_SEPARATE : PLANARCONFIG_CONTIG));
    if (tiled) {
        TIFFSetField(t, TIFFTAG_TILEWIDTH, 16u);
        TIFFSetField(t, TIFFTAG_TILELENGTH, 16u);
        std::vector<std::uint16_t> tile(16 * 16 * c);
        for (int ty = 0; ty < h; ty += 16)
            for (int tx = 0; tx < w; tx += 16) {
                std::fill(tile.begin(), tile.end(), std::uint16_t{0});
                for (int y = ty; y < std::min(h, ty + 16); ++y)
                    for (int x = tx; x < std::min(w, tx + 16); ++x)
                        for (int ch = 0; ch < c; ++ch)
                            tile[((y - ty) * 16 + (x - tx)) * c + ch] = img(x, y, ch);
                ASSERT_GE(TIFFWriteTile(t, tile.data(), tx, ty, 0, 0), 0);
            }
    } else if (separate) {
        std::vector<std::uint16_t> line(w);
        for (int ch = 0; ch < c; ++ch)
            for (int y = 0; y < h; ++y) {
                for (int x = 0; x < w; ++x) line[x] = img(x, y, ch);
                ASSERT_GE(TIFFWriteScanline(t, line.data(), y, static_cast<std::uint16_t>(ch)), 0);
            }
    } else {
        std::vector<unsigned char> line(TIFFScanlineSize(t));
        for (int y = 0; y < h; ++y) ASSERT_GE(TIFFWriteScanline(t, line.data(), y, 0), 0);
    }
    TIFFClose(t);
}

TEST_F(IoTest, TiffTiledAndPlanarSeparateLayouts) {
    const Image<std::uint16_t> img = test_image<std::uint16_t>(37, 21, 3, 71);
    write_tiff_layout(path("tiled.tif"), img, true, false);
    EXPECT_TRUE(same_pixels(read_image(path("tiled.tif")).as<std::uint16_t>().view(), img.view()));
    write_tiff_layout(path("planar.tif"), img, false, true);
    EXPECT_TRUE(same_pixels(read_image(path("planar.tif")).as<std::uint16_t>().view(), img.view()));
}

TEST_F(IoTest, TiffUnsupportedLayoutsAndCorruptStrips) {
    const Image<std::uint16_t> img = test_image<std::uint16_t>(8, 4, 3, 72);
    const Image<std::uint16_t> gray = test_image<std::uint16_t>(8, 4, 1, 73);
    write_tiff_layout(path("ycbcr.tif"), img, false, false, PHOTOMETRIC_YCBCR, 8);
    expect_error([&] { read_image(path("ycbcr.tif")); }, ErrorCode::UnsupportedFormat,
                 path("ycbcr.tif"), {"photometric"});
    write_tiff_layout(path("white.tif"), gray, false, false, PHOTOMETRIC_MINISWHITE, 8);
    expect_error([&] { read_image(path("white.tif")); }, ErrorCode::UnsupportedFormat,
                 path("white.tif"), {"min-is-white"});
    write_tiff_layout(path("bits12.tif"), gray, false, false, PHOTOMETRIC_MINISBLACK, 12);
    expect_error([&] { read_image(path("bits12.tif")); }, ErrorCode::UnsupportedFormat,
                 path("bits12.tif"), {"12 bits", "8 or 16-bit"});
    // Corrupt Deflate data in a strip upres wrote: libtiff's message is part of the error.
    const Image<std::uint8_t> big = test_image<std::uint8_t>(64, 64, 3, 74);
    write_image(path("s.tif"), big.view());
    std::string bytes = read_bytes(path("s.tif"));
    for (std::size_t i = 100; i < 2000; ++i) bytes[i] = static_cast<char>(i * 7);
    write_bytes(path("s.tif"), bytes);
    expect_error([&] { read_image(path("s.tif")); }, ErrorCode::CorruptData, path("s.tif"),
                 {"libtiff"});
}

// Rows of a TIFF read through TiffRowReader, in bands that overlap and go back (as tiled
// execution reads them), from `rows` rows at a time.
template <class T>
Image<T> read_by_rows(const std::string& p, int rows) {
    TiffRowReader r(p);
    Image<T> out(r.width(), r.height(), r.channels());
    for (int y = 0; y < r.height(); y += rows) {
        const int y0 = std::max(0, y - rows / 2);  // re-read half a band: a halo
        const int n = std::min(r.height() - y0, rows + rows / 2);
        r.read_rows(y0, n, out.view().row(y0), out.view().stride());
    }
    return out;
}

// The row-wise TIFF paths: TiffRowWriter's tiled files (classic and BigTIFF, raw and Deflate,
// every pixel type and channel count, sizes not multiples of the tile) read back by read_image
// and by TiffRowReader; TiffRowReader on stripped and libtiff-tiled files.
TEST_F(IoTest, TiffRowsRoundTrip) {
    std::uint32_t seed = 300;
    for (int c = 1; c <= 4; ++c)
        for (bool deflate : {false, true})
            for (bool big : {false, true}) {
                const std::string p = path("rows.tif");
                SCOPED_TRACE(std::to_string(c) + " channels deflate " + std::to_string(deflate) +
                             " bigtiff " + std::to_string(big));
                const Image<std::uint16_t> img = test_image<std::uint16_t>(71, 45, c, ++seed);
                TiffRowWriterOptions o;
                o.tile = 32;
                o.deflate = deflate;
                o.bigtiff = big;
                {
                    TiffRowWriter w(p, 71, 45, c, PixelType::U16, o);
                    EXPECT_EQ(w.bigtiff(), big);
                    for (int y = 0; y < 45; y += 7)  // uneven chunks across tile rows
                        w.write_rows(y, std::min(7, 45 - y), img.view().row(y),
                                     img.view().stride());
                    w.commit();
                }
                EXPECT_TRUE(same_pixels(read_image(p).as<std::uint16_t>().view(), img.view()));
                EXPECT_TRUE(same_pixels(read_by_rows<std::uint16_t>(p, 10).view(), img.view()));
                EXPECT_TRUE(TiffRowReader(p).tiled());
            }
    const Image<float> f = test_image<float>(50, 33, 1, 310);
    {
        TiffRowWriter w(path("f.tif"), 50, 33, 1, PixelType::F32);
        w.write_rows(0, 33, f.view().row(0), f.view().stride());
        w.commit();
    }
    EXPECT_TRUE(same_pixels(read_by_rows<float>(path("f.tif"), 4).view(), f.view()));
    // Stripped (write_image, Deflate, several rows per strip) and libtiff-tiled files.
    const Image<std::uint8_t> g = test_image<std::uint8_t>(300, 301, 3, 311);
    write_image(path("s.tif"), g.view());
    EXPECT_FALSE(TiffRowReader(path("s.tif")).tiled());
    for (int rows : {1, 5, 64, 301})
        EXPECT_TRUE(same_pixels(read_by_rows<std::uint8_t>(path("s.tif"), rows).view(), g.view()));
    const Image<std::uint16_t> t = test_image<std::uint16_t>(37, 21, 3, 312);
    write_tiff_layout(path("t.tif"), t, true, false);
    EXPECT_TRUE(same_pixels(read_by_rows<std::uint16_t>(path("t.tif"), 3).view(), t.view()));
}

// Boxes of a TIFF through TiffRowReader::read_box (tiled: the tiles it crosses, kept in its
// cache; stripped: the strips of its rows, likewise kept) equal the image's pixels there; a box
// outside is refused.
TEST_F(IoTest, TiffBoxes) {
    const Image<std::uint16_t> img = test_image<std::uint16_t>(203, 150, 3, 320);
    write_tiled_tiff(path("tiles.tif"), img, 48, false);
    write_image(path("strips.tif"), img.view());
    std::mt19937 rng(9);
    for (const char* name : {"tiles.tif", "strips.tif"}) {
        TiffRowReader r(path(name));
        EXPECT_EQ(r.tiled(), std::string(name) == "tiles.tif");
        for (int k = 0; k < 60; ++k) {
            const int x0 = static_cast<int>(rng() % 203), y0 = static_cast<int>(rng() % 150);
            const int w = 1 + static_cast<int>(rng() % (203 - x0));
            const int h = 1 + static_cast<int>(rng() % (150 - y0));
            Image<std::uint16_t> box(w, h, 3);
            r.read_box(x0, y0, w, h, box.view().row(0), box.view().stride());
            EXPECT_TRUE(same_pixels(box.view(), img.view().sub(x0, y0, w, h)))
                << name << " box " << w << " x " << h << " at (" << x0 << ", " << y0 << ")";
        }
        Image<std::uint16_t> one(4, 4, 3);
        expect_error([&] { r.read_box(200, 0, 4, 4, one.view().row(0), one.view().stride()); },
                     ErrorCode::InvalidArgument, path(name), {"not inside"});
    }
}

// Compressed strips and tiles that boxes read are kept in the reader's scratch file once
// decoded, so boxes that go back over them (a rotation's tiles, with a cache far smaller than
// their rows) decode each at most once past the first cache's worth; without a usable TMPDIR
// they are decoded again, and the pixels are the same either way. Boxes within the cache write
// nothing to the file.
TEST_F(IoTest, TiffBoxesDecodeCompressedBlocksOnce) {
    const Image<std::uint16_t> img = test_image<std::uint16_t>(203, 150, 3, 321);
    write_tiled_tiff(path("ztiles.tif"), img, 32, true);
    write_image(path("zstrips.tif"), img.view());  // stripped, Deflate
    const auto blocks_of = [&](const std::string& p) {
        TIFF* t = TIFFOpen(p.c_str(), "r");
        EXPECT_NE(t, nullptr);
        const std::int64_t n = TIFFIsTiled(t) ? TIFFNumberOfTiles(t) : TIFFNumberOfStrips(t);
        TIFFClose(t);
        return n;
    };
    const char* tmpdir = std::getenv("TMPDIR");
    const std::string saved = tmpdir ? tmpdir : "";
    io_detail::set_tiff_cache_bytes(1);  // the fewest the reader keeps: 2 strips, 8 tiles
    for (bool scratch : {true, false}) {
        if (!scratch) setenv("TMPDIR", path("no such folder").c_str(), 1);
        for (const char* name : {"ztiles.tif", "zstrips.tif"}) {
            const std::int64_t blocks = blocks_of(path(name));
            ASSERT_GT(blocks, 8);
            TiffRowReader r(path(name));
            const std::int64_t before = io_detail::tiff_blocks_decoded();
            const std::int64_t spilled = io_detail::tiff_blocks_spilled();
            std::mt19937 rng(10);
            for (int k = 0; k < 80; ++k) {
                const int x0 = static_cast<int>(rng() % 180), y0 = static_cast<int>(rng() % 120);
                const int w = 1 + static_cast<int>(rng() % (203 - x0));
                const int h = 1 + static_cast<int>(rng() % (150 - y0));
                Image<std::uint16_t> box(w, h, 3);
                r.read_box(x0, y0, w, h, box.view().row(0), box.view().stride());
                ASSERT_TRUE(same_pixels(box.view(), img.view().sub(x0, y0, w, h)))
                    << name << (scratch ? "" : " without TMPDIR") << " box " << w << " x " << h
                    << " at (" << x0 << ", " << y0 << ")";
            }
            const std::int64_t decoded = io_detail::tiff_blocks_decoded() - before;
            const std::int64_t written = io_detail::tiff_blocks_spilled() - spilled;
            if (scratch) {  // the cache's first blocks (2 strips, 8 tiles) decoded twice
                EXPECT_LE(decoded, blocks + 8) << name;
                EXPECT_GT(written, blocks / 2) << name;
            } else {
                EXPECT_GT(decoded, 2 * blocks) << name;
                EXPECT_EQ(written, 0) << name;
            }
        }
    }
    if (tmpdir)
        setenv("TMPDIR", saved.c_str(), 1);
    else
        unsetenv("TMPDIR");
    io_detail::set_tiff_cache_bytes(0);
    for (const char* name : {"ztiles.tif", "zstrips.tif"}) {
        TiffRowReader r(path(name));
        const std::int64_t before = io_detail::tiff_blocks_spilled();
        Image<std::uint16_t> box(150, 100, 3);
        for (int k = 0; k < 3; ++k)
            r.read_box(20 + k, 30, 150, 100, box.view().row(0), box.view().stride());
        EXPECT_EQ(io_detail::tiff_blocks_spilled(), before) << name;
        EXPECT_TRUE(same_pixels(box.view(), img.view().sub(22, 30, 150, 100))) << name;
    }
}

// Sides past kMaxDimension: read_image refuses them and points to the tiled paths, which read
// and write them.
TEST_F(IoTest, TiffRowsPastTheWholeImageLimits) {
    const int w = kMaxDimension + 4465;
    std::vector<std::uint8_t> row(static_cast<std::size_t>(w)), back(row.size());
    for (int x = 0; x < w; ++x) row[static_cast<std::size_t>(x)] = static_cast<std::uint8_t>(x * 7);
    {
        TiffRowWriter wr(path("wide.tif"), w, 3, 1, PixelType::U8);
        for (int y = 0; y < 3; ++y) wr.write_rows(y, 1, row.data(), w);
        wr.commit();
    }
    expect_error([&] { read_image(path("wide.tif")); }, ErrorCode::CorruptData, path("wide.tif"),
                 {"per side", "--tiled"});
    TiffRowReader r(path("wide.tif"));
    EXPECT_EQ(r.width(), w);
    r.read_rows(2, 1, back.data(), w);
    EXPECT_EQ(back, row);
}

// The writer's default tile side (tile = 0): 256, or the multiple of 16 that covers a smaller
// image's longer side; the file holds it and reads back.
TEST_F(IoTest, TiffRowsDefaultTileSide) {
    EXPECT_EQ(tiff_tile_side(1, 1), 16);
    EXPECT_EQ(tiff_tile_side(37, 21), 48);
    EXPECT_EQ(tiff_tile_side(21, 48), 48);
    EXPECT_EQ(tiff_tile_side(49, 3), 64);
    EXPECT_EQ(tiff_tile_side(241, 5), 256);
    EXPECT_EQ(tiff_tile_side(5, 1000), 256);
    EXPECT_EQ(tiff_tile_side(2147483647, 1), 256);
    const Image<std::uint8_t> img = test_image<std::uint8_t>(37, 21, 3, 331);
    for (const int tile : {0, 32}) {
        TiffRowWriterOptions o;
        o.tile = tile;
        {
            TiffRowWriter w(path("t.tif"), 37, 21, 3, PixelType::U8, o);
            w.write_rows(0, 21, img.view().row(0), img.view().stride());
            w.commit();
        }
        TIFF* t = TIFFOpen(path("t.tif").c_str(), "r");
        ASSERT_NE(t, nullptr);
        std::uint32_t tw = 0, th = 0;
        EXPECT_EQ(TIFFGetField(t, TIFFTAG_TILEWIDTH, &tw), 1);
        EXPECT_EQ(TIFFGetField(t, TIFFTAG_TILELENGTH, &th), 1);
        TIFFClose(t);
        EXPECT_EQ(tw, tile == 0 ? 48u : 32u);
        EXPECT_EQ(th, tw);
        EXPECT_TRUE(same_pixels(read_image(path("t.tif")).as<std::uint8_t>().view(), img.view()));
    }
}

// Resumable writing: with a fixed partial name the writer checkpoints after every write_rows
// call that completes rows of tiles (the callback sees the rows written), the partial file is a
// readable TIFF of those rows while the writer is still open, keep_partial() leaves it when the
// writer dies, commit() renames it.
TEST_F(IoTest, TiffRowsCheckpoints) {
    const Image<std::uint16_t> img = test_image<std::uint16_t>(40, 100, 1, 330);
    TiffRowWriterOptions o;
    o.tile = 32;
    o.partial_path = path("p.tif");
    std::vector<int> seen;
    o.on_checkpoint = [&](int rows) { seen.push_back(rows); };
    {
        TiffRowWriter w(path("out.tif"), 40, 100, 1, PixelType::U16, o);
        w.write_rows(0, 70, img.view().row(0), img.view().stride());
        EXPECT_EQ(seen, (std::vector<int>{64}));
        TiffRowReader r(path("p.tif"));
        std::vector<std::uint16_t> rows(40 * 64);
        r.read_rows(0, 64, rows.data(), 40);
        for (int y = 0; y < 64; ++y)
            EXPECT_EQ(std::memcmp(rows.data() + y * 40, img.view().row(y), 80), 0) << y;
        w.keep_partial();
    }
    EXPECT_TRUE(fs::exists(path("p.tif")));
    EXPECT_FALSE(fs::exists(path("out.tif")));
    seen.clear();
    {
        TiffRowWriter w(path("out.tif"), 40, 100, 1, PixelType::U16, o);  // replaces p.tif
        for (int y0 : {0, 40, 80})  // 40, 40 and 20 rows: checkpoints at 32 and 64, not at the end
            w.write_rows(y0, std::min(40, 100 - y0), img.view().row(y0), img.view().stride());
        w.commit();
    }
    EXPECT_EQ(seen, (std::vector<int>{32, 64}));
    EXPECT_FALSE(fs::exists(path("p.tif")));
    EXPECT_TRUE(same_pixels(read_image(path("out.tif")).as<std::uint16_t>().view(), img.view()));
}

// Rows of tiles of 8 MB or more are gathered by several threads: a wide RGBA u16 image written
// in uneven calls (whole rows of tiles from the caller's rows, and gathered partial ones) and
// deflated reads back exactly.
TEST_F(IoTest, TiffRowsWideTileRows) {
    const Image<std::uint16_t> img = test_image<std::uint16_t>(4133, 300, 4, 331);
    for (bool deflate : {false, true}) {
        TiffRowWriterOptions o;
        o.tile = 256;
        o.deflate = deflate;
        {
            TiffRowWriter w(path("wide.tif"), 4133, 300, 4, PixelType::U16, o);
            for (int y0 : {0, 256, 270})
                w.write_rows(y0,
                             (y0 == 0     ? 256
                              : y0 == 256 ? 14
                                          : 30),
                             img.view().row(y0), img.view().stride());
            w.commit();
        }
        EXPECT_TRUE(
            same_pixels(read_image(path("wide.tif")).as<std::uint16_t>().view(), img.view()))
            << (deflate ? "deflate" : "uncompressed");
    }
}

TEST_F(IoTest, TiffRowsErrors) {
    expect_error([&] { TiffRowReader r(path("missing.tif")); }, ErrorCode::IoError,
                 path("missing.tif"), {"cannot open"});
    const Image<std::uint16_t> img = test_image<std::uint16_t>(37, 21, 3, 320);
    write_tiff_layout(path("planar.tif"), img, false, true);
    expect_error([&] { TiffRowReader r(path("planar.tif")); }, ErrorCode::UnsupportedFormat,
                 path("planar.tif"), {"contiguous"});
    // A corrupt tile is found when its rows are read; rows before it read fine.
    const Image<std::uint8_t> g = test_image<std::uint8_t>(64, 64, 1, 321);
    write_tiled_tiff(path("c.tif"), g, 32, true);
    std::string bytes = read_bytes(path("c.tif"));
    const std::size_t half = bytes.size() / 2;
    for (std::size_t i = half; i < half + 600 && i < bytes.size(); ++i)
        bytes[i] = static_cast<char>(i * 13);
    write_bytes(path("c.tif"), bytes);
    TiffRowReader r(path("c.tif"));
    std::vector<std::uint8_t> rows(64 * 64);
    expect_error([&] { r.read_rows(0, 64, rows.data(), 64); }, ErrorCode::CorruptData,
                 path("c.tif"), {"tile", "corrupt"});
    expect_error([&] { r.read_rows(60, 10, rows.data(), 64); }, ErrorCode::InvalidArgument,
                 path("c.tif"), {"outside"});
    // Writer: bad tile sides, sizes, rows out of order; destroyed before commit, no file is left.
    TiffRowWriterOptions bad;
    bad.tile = 20;
    expect_error([&] { TiffRowWriter w(path("w.tif"), 10, 10, 1, PixelType::U8, bad); },
                 ErrorCode::InvalidArgument, path("w.tif"), {"multiple of 16", "0: automatic"});
    expect_error([&] { TiffRowWriter w(path("w.tif"), 0, 10, 1, PixelType::U8); },
                 ErrorCode::InvalidArgument, path("w.tif"), {"outside"});
    {
        TiffRowWriter w(path("w.tif"), 10, 10, 1, PixelType::U8);
        expect_error([&] { w.write_rows(5, 1, g.view().row(0), 64); }, ErrorCode::InvalidArgument,
                     path("w.tif"), {"do not continue"});
        w.write_rows(0, 3, g.view().row(0), 64);
        expect_error([&] { w.commit(); }, ErrorCode::InvalidArgument, path("w.tif"), {"3 of 10"});
    }
    EXPECT_FALSE(fs::exists(path("w.tif")));
    expect_error([&] { TiffRowWriter w(path("nodir/w.tif"), 10, 10, 1, PixelType::U8); },
                 ErrorCode::IoError, path("nodir/w.tif"), {"cannot write"});
}
#endif

// ------------------------------------------------------------------------------ corrupt files

// A valid file of each readable format (37 x 29, random so compression cannot shrink it much).
std::vector<std::string> sample_files(const std::function<std::string(const std::string&)>& p) {
    const Image<std::uint8_t> rgb = test_image<std::uint8_t>(37, 29, 3, 41);
    const Image<std::uint8_t> gray = test_image<std::uint8_t>(37, 29, 1, 42);
    const Image<float> f = test_image<float>(37, 29, 3, 43);
    std::vector<std::string> files = {p("s.png"), p("s.jpg"), p("s.pfm"), p("s.pgm"), p("s.npy")};
    write_image(files[0], rgb.view());
    write_image(files[1], rgb.view());
    write_image(files[2], f.view());
    write_image(files[3], gray.view());
    write_image(files[4], f.view());
    if (format_supported(FileFormat::Tiff)) {
        files.push_back(p("s.tif"));
        write_image(files.back(), rgb.view());
    }
    return files;
}

TEST_F(IoTest, TruncatedFilesAreCorruptData) {
    const auto files = sample_files([&](const std::string& n) { return path(n); });
    for (const auto& f : files) {
        SCOPED_TRACE(f);
        const std::string bytes = read_bytes(f);
        ASSERT_GT(bytes.size(), 1000u);
        for (std::size_t keep :
             {bytes.size() / 2, bytes.size() - 1, std::size_t{5}, std::size_t{0}}) {
            SCOPED_TRACE(keep);
            const std::string ext = f.substr(f.find_last_of('.'));
            const std::string t = path("trunc" + std::to_string(keep) + ext);
            write_bytes(t, bytes.substr(0, keep));
            if (ext == ".jpg" && keep == bytes.size() - 1) {
                // Only the last byte of the EOI marker is missing and every scan byte is
                // there. Debian's libjpeg-turbo warns (JWRN_JPEG_EOF -> CorruptData); the one
                // on Ubuntu 24.04 decodes silently. Either is acceptable as long as a
                // decoded image is exactly the complete file's image: never garbage.
                try {
                    const AnyImage got = read_image(t);
                    const AnyImage full = read_image(f);
                    EXPECT_TRUE(test::images_near(got.as<std::uint8_t>().view(),
                                                  full.as<std::uint8_t>().view(), 0.0));
                } catch (const Error& e) {
                    EXPECT_EQ(e.code(), ErrorCode::CorruptData) << e.what();
                }
                continue;
            }
            expect_error([&] { read_image(t); }, ErrorCode::CorruptData, t);
        }
    }
}

TEST_F(IoTest, GarbageFilesAreCorruptData) {
    std::string garbage = "this is not an image at all";
    std::mt19937 rng(5);
    for (int i = 0; i < 3000; ++i) garbage.push_back(static_cast<char>(rng() & 0xff));
    for (const char* ext : {".png", ".jpg", ".tif", ".pfm", ".pgm", ".ppm", ".npy"}) {
        if (std::string(ext) == ".tif" && !format_supported(FileFormat::Tiff)) continue;
        const std::string p = path(std::string("garbage") + ext);
        write_bytes(p, garbage);
        expect_error([&] { read_image(p); }, ErrorCode::CorruptData, p);
    }
}

std::uint32_t crc32(const std::string& s) {
    std::uint32_t c = 0xffffffffu;
    for (unsigned char b : s) {
        c ^= b;
        for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
    }
    return ~c;
}
std::string be32(std::uint32_t v) {
    return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
            static_cast<char>(v)};
}
std::string le16(std::uint16_t v) { return {static_cast<char>(v), static_cast<char>(v >> 8)}; }
std::string le32(std::uint32_t v) { return le16(v & 0xffff) + le16(v >> 16); }

std::string png_chunk(const std::string& type, const std::string& data) {
    const std::string body = type + data;
    return be32(static_cast<std::uint32_t>(data.size())) + body + be32(crc32(body));
}

// A structurally valid PNG header (IHDR, then an IDAT chunk with junk, IEND) claiming w x h.
std::string png_with_size(std::uint32_t w, std::uint32_t h) {
    return "\x89PNG\r\n\x1a\n" +
           png_chunk("IHDR", be32(w) + be32(h) + std::string("\x08\x02\x00\x00\x00", 5)) +
           png_chunk("IDAT", std::string(16, '\x01')) + png_chunk("IEND", "");
}

std::string npy_with_header(const std::string& dict) {
    std::string d = dict;
    while ((10 + d.size() + 1) % 64) d.push_back(' ');
    d.push_back('\n');
    return std::string("\x93NUMPY\x01\x00", 8) + le16(static_cast<std::uint16_t>(d.size())) + d +
           std::string(256, '\x01');
}

// A minimal little-endian TIFF whose first IFD claims w x h, 8-bit gray, one strip.
std::string tiff_with_size(std::uint32_t w, std::uint32_t h) {
    struct Entry {
        std::uint16_t tag, type;
        std::uint32_t value;
    };
    const Entry entries[] = {{256, 4, w}, {257, 4, h},   {258, 3, 8}, {259, 3, 1},
                             {262, 3, 1}, {273, 4, 200}, {278, 4, h}, {279, 4, 64}};
    std::string t =
        std::string("II*\0", 4) + le32(8) + le16(static_cast<std::uint16_t>(std::size(entries)));
    for (const auto& e : entries) t += le16(e.tag) + le16(e.type) + le32(1) + le32(e.value);
    t += le32(0);
    t.resize(264, '\x05');
    return t;
}

TEST_F(IoTest, HugeDimensionsRefusedBeforeAllocation) {
    std::vector<std::pair<std::string, std::string>> files = {
        {"huge.pfm", "PF\n100000 100000\n-1.0\n" + std::string(100, '\0')},
        {"huge.pgm", "P5\n100000 100000\n255\n" + std::string(100, '\0')},
        {"huge.ppm", "P6\n# big\n100000 100000\n65535\n" + std::string(100, '\0')},
        {"huge.npy",
         npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (100000, 100000), }")},
        {"huge.png", png_with_size(100000, 100000)}};
    if (format_supported(FileFormat::Tiff))
        files.push_back({"huge.tif", tiff_with_size(100000, 100000)});
    for (const auto& [name, bytes] : files) {
        SCOPED_TRACE(name);
        write_bytes(path(name), bytes);
        // (A copy: clang before 16 refuses a structured binding in a lambda.)
        const std::string file = path(name);
        expect_error([&] { read_image(file); }, ErrorCode::CorruptData, file,
                     {"100000 x 100000", "65536"});
    }
    // Within the side limit but over kMaxPixels (libjpeg allows sides up to 65500).
    const Image<std::uint8_t> small = smooth_image(16, 16, 3, 1);
    write_image(path("s.jpg"), small.view());
    std::string jpg = read_bytes(path("s.jpg"));
    const std::size_t sof = jpg.find("\xff\xc0");
    ASSERT_NE(sof, std::string::npos);
    jpg[sof + 5] = jpg[sof + 7] = '\xea';  // 60000 = 0xea60
    jpg[sof + 6] = jpg[sof + 8] = '\x60';
    write_bytes(path("huge.jpg"), jpg);
    expect_error([&] { read_image(path("huge.jpg")); }, ErrorCode::CorruptData, path("huge.jpg"),
                 {"60000 x 60000", std::to_string(kMaxPixels)});
    // Sides within limits, but more pixels than the file holds: refused as truncated before
    // allocating.
    write_bytes(path("big.pfm"), "PF\n30000 30000\n-1.0\n" + std::string(100, '\0'));
    expect_error([&] { read_image(path("big.pfm")); }, ErrorCode::CorruptData, path("big.pfm"),
                 {"truncated"});
}

TEST_F(IoTest, ZeroSizedImagesRefused) {
    std::vector<std::pair<std::string, std::string>> files = {
        {"zero.pfm", "Pf\n0 5\n-1.0\n"},
        {"zero.pgm", "P5\n7 0\n255\n"},
        {"zero.npy",
         npy_with_header("{'descr': '|u1', 'fortran_order': False, 'shape': (0, 5), }")}};
    if (format_supported(FileFormat::Tiff)) files.push_back({"zero.tif", tiff_with_size(0, 4)});
    for (const auto& [name, bytes] : files) {
        SCOPED_TRACE(name);
        write_bytes(path(name), bytes);
        const std::string file = path(name);
        expect_error([&] { read_image(file); }, ErrorCode::CorruptData, file);
    }
    write_bytes(path("zero.png"), png_with_size(0, 5));
    expect_error([&] { read_image(path("zero.png")); }, ErrorCode::CorruptData, path("zero.png"));
}

TEST_F(IoTest, MalformedHeaders) {
    struct Case {
        const char* name;
        std::string bytes;
        ErrorCode code;
        const char* part;
    };
    const Case cases[] = {
        {"a.pfm", "PF\n-3 4\n-1.0\n", ErrorCode::CorruptData, "width"},
        {"b.pfm", "PF\n3 4\n0.0\n" + std::string(200, '\0'), ErrorCode::CorruptData, "scale"},
        {"c.pfm", "PF\n3 4\nabc\n", ErrorCode::CorruptData, "scale"},
        {"d.pfm", "P7\n3 4\n-1\n", ErrorCode::CorruptData, "magic"},
        {"e.pgm", "P5\n3 4\n1023\n" + std::string(100, '\0'), ErrorCode::UnsupportedFormat, "1023"},
        {"f.pgm", "P2\n3 4\n255\n1 2 3", ErrorCode::UnsupportedFormat, "P5"},
        {"g.pgm", "P5\n3 4\n70000\n", ErrorCode::CorruptData, "maxval"},
        {"h.pgm", "P5\n3 x\n255\n", ErrorCode::CorruptData, "height"},
        {"h2.pgm", "P5\n3 4\n255#c\n" + std::string(12, '\0'), ErrorCode::CorruptData,
         "no whitespace after the maxval"},
        {"i.npy", npy_with_header("{'descr': '<f4', 'shape': (3, 4), }"), ErrorCode::CorruptData,
         "fortran_order"},
        {"j.npy",
         npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4, 2, 1), }"),
         ErrorCode::UnsupportedFormat, "(3, 4, 2, 1)"},
        {"k.npy", npy_with_header("{'descr': '>f4', 'fortran_order': False, 'shape': (3, 4), }"),
         ErrorCode::UnsupportedFormat, "'>f4'"},
        {"l.npy", npy_with_header("{'descr': '<f4', 'fortran_order': True, 'shape': (3, 4), }"),
         ErrorCode::UnsupportedFormat, "Fortran"},
        {"m.npy", std::string("\x93NUMPY\x09\x00", 8) + "xx", ErrorCode::UnsupportedFormat,
         "version"},
    };
    for (const auto& k : cases) {
        SCOPED_TRACE(k.name);
        write_bytes(path(k.name), k.bytes);
        expect_error([&] { read_image(path(k.name)); }, k.code, path(k.name), {k.part});
    }
}

// ------------------------------------------------------------------------------ I/O errors

TEST_F(IoTest, MissingFileDirectoryAndUnknownExtension) {
    expect_error([&] { read_image(path("missing.png")); }, ErrorCode::IoError, path("missing.png"),
                 {"No such file"});
    fs::create_directories(path("dir.png"));
    expect_error([&] { read_image(path("dir.png")); }, ErrorCode::IoError, path("dir.png"),
                 {"directory"});
    write_bytes(path("x.bmp"), "BM");
    expect_error([&] { read_image(path("x.bmp")); }, ErrorCode::UnsupportedFormat, path("x.bmp"),
                 {".bmp", ".png"});
    const Image<std::uint8_t> img = test_image<std::uint8_t>(3, 3, 1, 1);
    expect_error([&] { write_image(path("y.gif"), img.view()); }, ErrorCode::UnsupportedFormat,
                 path("y.gif"), {".gif"});
    EXPECT_FALSE(fs::exists(path("y.gif")));
}

TEST_F(IoTest, UnwritablePaths) {
    const Image<std::uint8_t> img = test_image<std::uint8_t>(7, 3, 3, 2);
    const std::string in_missing = path("no/such/dir/out.png");
    expect_error([&] { write_image(in_missing, img.view()); }, ErrorCode::IoError, in_missing,
                 {"No such file"});
    write_bytes(path("regular"), "x");
    const std::string under_file = path("regular/out.png");
    expect_error([&] { write_image(under_file, img.view()); }, ErrorCode::IoError, under_file,
                 {"Not a directory"});
    EXPECT_EQ(read_bytes(path("regular")), "x");
}

TEST_F(IoTest, ReadOnlyDirectory) {
    if (::geteuid() == 0) GTEST_SKIP() << "running as root: permissions do not block writes";
    const Image<std::uint8_t> img = test_image<std::uint8_t>(7, 3, 3, 2);
    fs::create_directories(path("ro"));
    fs::permissions(path("ro"), fs::perms::owner_read | fs::perms::owner_exec);
    const std::string p = path("ro/out.png");
    expect_error([&] { write_image(p, img.view()); }, ErrorCode::IoError, p, {"Permission"});
    fs::permissions(path("ro"), fs::perms::owner_all);
    EXPECT_FALSE(fs::exists(p));
}

TEST_F(IoTest, UnsupportedWritesNameWhatIsAllowed) {
    const Image<float> f3 = test_image<float>(5, 4, 3, 1);
    const Image<float> f2 = test_image<float>(5, 4, 2, 1);
    const Image<std::uint16_t> u3 = test_image<std::uint16_t>(5, 4, 3, 2);
    const Image<std::uint8_t> u4 = test_image<std::uint8_t>(5, 4, 4, 3);
    const Image<std::uint8_t> u2 = test_image<std::uint8_t>(5, 4, 2, 3);
    const Image<std::uint8_t> g = test_image<std::uint8_t>(5, 4, 1, 3);
    write_bytes(path("keep.png"), "existing");
    expect_error([&] { write_image(path("keep.png"), f3.view()); }, ErrorCode::UnsupportedFormat,
                 path("keep.png"), {"u8 or u16"});
    EXPECT_EQ(read_bytes(path("keep.png")), "existing");
    expect_error([&] { write_image(path("a.jpg"), u3.view()); }, ErrorCode::UnsupportedFormat,
                 path("a.jpg"), {"u8 with 1 or 3 channels"});
    expect_error([&] { write_image(path("a.jpg"), u4.view()); }, ErrorCode::UnsupportedFormat,
                 path("a.jpg"), {"4 u8"});
    expect_error([&] { write_image(path("a.pfm"), f2.view()); }, ErrorCode::UnsupportedFormat,
                 path("a.pfm"), {"f32 with 1 or 3 channels"});
    expect_error([&] { write_image(path("a.pfm"), u3.view()); }, ErrorCode::UnsupportedFormat,
                 path("a.pfm"), {"f32"});
    expect_error([&] { write_image(path("a.pgm"), u4.view()); }, ErrorCode::UnsupportedFormat,
                 path("a.pgm"), {"1 channel"});
    expect_error([&] { write_image(path("a.ppm"), g.view()); }, ErrorCode::UnsupportedFormat,
                 path("a.ppm"), {"3 channels"});
    expect_error([&] { write_image(path("a.pnm"), u2.view()); }, ErrorCode::UnsupportedFormat,
                 path("a.pnm"), {"1 channel"});
    expect_error([&] { write_image(path("a.pgm"), f3.view()); }, ErrorCode::UnsupportedFormat,
                 path("a.pgm"), {"u8 or u16"});
    WriteOptions bad_q;
    bad_q.jpeg_quality = 0;
    expect_error([&] { write_image(path("q.jpg"), g.view(), bad_q); }, ErrorCode::InvalidArgument,
                 path("q.jpg"), {"jpeg_quality", "1..100"});
    WriteOptions bad_c;
    bad_c.png_compression = 10;
    expect_error([&] { write_image(path("c.png"), g.view(), bad_c); }, ErrorCode::InvalidArgument,
                 path("c.png"), {"png_compression", "0..9"});
    const ImageView<const std::uint8_t> device_view(g.data(), 5, 4, 1, 0, Location::Device);
    expect_error([&] { write_image(path("d.png"), device_view); }, ErrorCode::InvalidArgument,
                 path("d.png"), {"device memory"});
    expect_error([&] { write_image(path("e.png"), AnyImage()); }, ErrorCode::InvalidArgument,
                 path("e.png"), {"empty"});
    for (const char* n :
         {"a.jpg", "a.pfm", "a.pgm", "a.ppm", "a.pnm", "q.jpg", "c.png", "d.png", "e.png"})
        EXPECT_FALSE(fs::exists(path(n))) << n;
}

TEST_F(IoTest, FailedRenameLeavesNoTemporaryFile) {
    // The target is an existing directory: the complete temporary file cannot be renamed over
    // it, and must be removed.
    fs::create_directories(path("target.png"));
    write_bytes(path("target.png/inside"), "keep");
    const Image<std::uint8_t> img = test_image<std::uint8_t>(37, 5, 3, 8);
    expect_error([&] { write_image(path("target.png"), img.view()); }, ErrorCode::IoError,
                 path("target.png"), {"rename"});
    EXPECT_TRUE(fs::is_directory(path("target.png")));
    EXPECT_EQ(read_bytes(path("target.png/inside")), "keep");
    int entries = 0;
    for (const auto& e : fs::directory_iterator(dir_)) entries += e.path().filename() != "";
    EXPECT_EQ(entries, 1);
}

// A write that fails part-way (the file size limit, RLIMIT_FSIZE, makes write() fail with
// EFBIG) must throw IoError, leave the existing target byte-identical and remove the temporary
// file. The write runs in a forked child (death test) so the limit does not affect the runner.
TEST_F(IoTest, FailedWriteKeepsTargetAndRemovesTemporary) {
    GTEST_FLAG_SET(death_test_style, "fast");
    const Image<std::uint8_t> u8 = test_image<std::uint8_t>(64, 64, 3, 51);
    const Image<float> f32 = test_image<float>(64, 64, 3, 52);
    const Image<std::uint16_t> u16 = test_image<std::uint16_t>(64, 64, 1, 53);
    std::vector<std::string> names = {"t.png", "t.jpg", "t.pfm", "t.ppm", "t.pgm", "t.npy"};
    if (format_supported(FileFormat::Tiff)) names.push_back("t.tif");
    const std::string original = "original target content\n";
    for (const auto& n : names) {
        SCOPED_TRACE(n);
        const std::string p = path(n);
        write_bytes(p, original);
        auto child = [&] {
            ::signal(SIGXFSZ, SIG_IGN);
            rlimit rl{};
            rl.rlim_cur = rl.rlim_max = 4096;
            ::setrlimit(RLIMIT_FSIZE, &rl);
            try {
                if (n == "t.pfm")
                    write_image(p, f32.view());
                else if (n == "t.pgm")
                    write_image(p, u16.view());
                else
                    write_image(p, u8.view());
            } catch (const Error& e) {
                std::fprintf(stderr, "caught %s: %s\n", to_string(e.code()), e.what());
                std::fflush(stderr);
                ::_exit(static_cast<int>(e.code()));
            }
            ::_exit(0);
        };
        EXPECT_EXIT(child(), ::testing::ExitedWithCode(static_cast<int>(ErrorCode::IoError)),
                    "caught io_error: " + p + ": .*");
        EXPECT_EQ(read_bytes(p), original);
        int entries = 0;
        for (const auto& e : fs::directory_iterator(dir_)) {
            ++entries;
            EXPECT_EQ(e.path().filename().string().find(".tmp-"), std::string::npos) << e.path();
        }
        EXPECT_EQ(entries, 1);
        fs::remove(p);
    }
}

TEST_F(IoTest, OverwriteReplacesExistingTarget) {
    write_bytes(path("o.pgm"), "old");
    const Image<std::uint8_t> img = test_image<std::uint8_t>(9, 4, 1, 61);
    write_image(path("o.pgm"), img.view());
    EXPECT_TRUE(same_pixels(read_image(path("o.pgm")).as<std::uint8_t>().view(), img.view()));
}

// ReadOptions::max_pixels: every reader refuses a file beyond the limit from its header (before
// reading pixels), and accepts it at exactly its size; the limit itself must be in
// [1, kMaxPixels].
TEST(IoLimits, MaxPixelsIsCheckedByEveryReader) {
    for (const char* f : {"cv2_gray16.png", "pil_rgb.jpg", "cv2_rgb16.tif", "cv2_grayf.pfm",
                          "cv2_rgb8.ppm", "astronaut_png_cv2.npy"}) {
        const std::string path = data_path(std::string("io/") + f);
#if !UPRES_HAVE_TIFF
        if (std::string(f).ends_with(".tif")) continue;
#endif
        const AnyImage img = read_image(path);
        ReadOptions o;
        o.max_pixels = img.width() * std::int64_t{img.height()};
        EXPECT_EQ(read_image(path, o).width(), img.width()) << f;
        o.max_pixels -= 1;
        test::expect_error([&] { (void)read_image(path, o); }, ErrorCode::UnsupportedFormat,
                           "pixels set for reading");
    }
    ReadOptions bad;
    bad.max_pixels = 0;
    test::expect_error([&] { (void)read_image(data_path("io/cv2_gray16.png"), bad); },
                       ErrorCode::InvalidArgument, "max_pixels 0 is outside");
    bad.max_pixels = kMaxPixels + 1;
    test::expect_error([&] { (void)read_image(data_path("io/cv2_gray16.png"), bad); },
                       ErrorCode::InvalidArgument, "is outside [1, 1073741824]");
}

}  // namespace
}  // namespace upres
