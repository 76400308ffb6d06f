// SRCNN (upres/srcnn.hpp): the double reference against PyTorch golden data (whole network and
// layer by layer), properties of the network, the weights file (round trip, byte layout, every
// corruption), the model folder, srcnn_forward's argument checks and backend rules, and the
// whole-image pipeline (srcnn_upscale, bicubic_resize, srcnn_degrade) on u8/u16/f32 images.
// The optimized CPU backend has its own tests (srcnn_cpu_test.cpp); here only a smoke check.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include <upres/io.hpp>
#include <upres/srcnn.hpp>
#include "ops/srcnn/srcnn_backends.hpp"
#include "test_util.hpp"

namespace upres {
namespace {

using test::expect_error;
using test::images_near;
using test::random_image;
using U8 = std::uint8_t;
using U16 = std::uint16_t;

std::string golden(const std::string& name) { return test::data_path("srcnn/" + name); }

Image<float> load_f32(const std::string& name) {
    return std::move(read_image(golden(name)).as<float>());
}

using test::ctx_of;

// A model with the given shape and seeded random weights (std 1 / sqrt(fan in)).
SrcnnModel make_model(int k1, int k2, int k3, int n1, int n2, int scale = 2,
                      std::uint32_t seed = 7) {
    SrcnnModel m;
    m.scale = scale;
    m.description = "srcnn_test";
    const int ks[3] = {k1, k2, k3};
    const int ins[3] = {1, n1, n2}, outs[3] = {n1, n2, 1};
    std::mt19937 rng(seed);
    for (int i = 0; i < 3; ++i) {
        SrcnnLayer& l = m.layers[static_cast<std::size_t>(i)];
        l.kernel = ks[i];
        l.in_channels = ins[i];
        l.out_channels = outs[i];
        std::normal_distribution<float> w(0.0f, 1.0f / std::sqrt(float(ins[i] * ks[i] * ks[i])));
        std::uniform_real_distribution<float> b(-0.1f, 0.2f);
        l.weights.resize(static_cast<std::size_t>(outs[i]) * ins[i] * ks[i] * ks[i]);
        for (float& v : l.weights) v = w(rng);
        l.bias.resize(static_cast<std::size_t>(outs[i]));
        for (float& v : l.bias) v = b(rng);
    }
    return m;
}

// The identity network: a centre tap of 1 in channel 0 of each layer, everything else 0.
SrcnnModel identity_model(int k1, int k2, int k3, int n1, int n2, int scale = 2) {
    SrcnnModel m = make_model(k1, k2, k3, n1, n2, scale);
    for (SrcnnLayer& l : m.layers) {
        std::fill(l.weights.begin(), l.weights.end(), 0.0f);
        std::fill(l.bias.begin(), l.bias.end(), 0.0f);
        const int c = l.kernel / 2;
        l.weights[static_cast<std::size_t>(c * l.kernel + c)] = 1.0f;
    }
    return m;
}

Image<float> run_ref(const Image<float>& in, const SrcnnModel& m) {
    Image<float> out(in.width(), in.height(), 1);
    ref::srcnn_forward(span_of(in.view()), span_of(out.view()), m);
    return out;
}

double range_of(const Image<float>& a) {
    double lo = 1e300, hi = -1e300;
    for (int y = 0; y < a.height(); ++y)
        for (int x = 0; x < a.width(); ++x) {
            lo = std::min(lo, double(a(x, y)));
            hi = std::max(hi, double(a(x, y)));
        }
    return hi - lo;
}

std::vector<unsigned char> read_bytes(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}
void write_bytes(const std::string& path, const std::vector<unsigned char>& b) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}
// zlib's crc32, written independently of the library's.
std::uint32_t crc32_of(const unsigned char* p, std::size_t n) {
    std::uint32_t c = 0xFFFFFFFFu;
    for (std::size_t i = 0; i < n; ++i) {
        c ^= p[i];
        for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    }
    return ~c;
}
void put_u32(std::vector<unsigned char>& b, std::size_t at, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) b[at + i] = static_cast<unsigned char>(v >> (8 * i));
}
// Rewrites the trailing CRC so that an edited file passes the checksum.
void fix_crc(std::vector<unsigned char>& b) {
    put_u32(b, b.size() - 4, crc32_of(b.data(), b.size() - 4));
}

class TempDir {
  public:
    TempDir() {
        path_ =
            std::filesystem::temp_directory_path() /
            ("upres_srcnn_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter_++));
        std::filesystem::create_directories(path_);
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    std::string file(const std::string& name) const { return (path_ / name).string(); }
    std::string str() const { return path_.string(); }

  private:
    static inline int counter_ = 0;
    std::filesystem::path path_;
};

// ------------------------------------------------------------------ reference vs PyTorch

class SrcnnGolden : public ::testing::TestWithParam<const char*> {};

TEST_P(SrcnnGolden, WholeNetworkMatchesPyTorch) {
    const std::string c = GetParam();
    const SrcnnModel m = load_srcnn_model(golden(c + ".srcnn"));
    const Image<float> in = load_f32(c + "_in.npy");
    const Image<float> want = load_f32(c + "_out.npy");
    const Image<float> got = run_ref(in, m);
    EXPECT_TRUE(images_near(got.view(), want.view(), 1e-5 * std::max(1.0, range_of(want))));
    // The public entry point on the Reference backend gives the same bits.
    Image<float> pub(in.width(), in.height(), 1);
    srcnn_forward(in.view(), pub.view(), m, {}, ctx_of(Backend::Reference));
    EXPECT_TRUE(images_near(pub.view(), got.view(), 0.0));
}

TEST_P(SrcnnGolden, EachLayerMatchesPyTorch) {
    const std::string c = GetParam();
    const SrcnnModel m = load_srcnn_model(golden(c + ".srcnn"));
    Image<float> prev = load_f32(c + "_in.npy");
    const int w = prev.width(), h = prev.height();
    for (int i = 0; i < 3; ++i) {
        const SrcnnLayer& l = m.layers[static_cast<std::size_t>(i)];
        const Image<float> want = load_f32(c + "_l" + std::to_string(i + 1) + ".npy");
        ASSERT_EQ(want.height(), h * l.out_channels);
        Image<float> got(w, h * l.out_channels, 1);
        srcnn::conv_reference(prev.data(), got.data(), w, h, l, i < 2);
        EXPECT_TRUE(images_near(got.view(), want.view(), 1e-5 * std::max(1.0, range_of(want))))
            << "layer " << i + 1;
        prev = clone(want.view());
    }
}

INSTANTIATE_TEST_SUITE_P(Cases, SrcnnGolden, ::testing::Values("s915", "s955", "t313", "full915"));

// ----------------------------------------------------------------------- properties

TEST(SrcnnReference, ShapeNumbersOf915) {
    const SrcnnModel m = make_model(9, 1, 5, 64, 32);
    EXPECT_EQ(m.receptive_field(), 13);
    EXPECT_EQ(m.macs_per_pixel(), 8032);
    EXPECT_EQ(make_model(9, 5, 5, 64, 32).receptive_field(), 17);
    EXPECT_EQ(make_model(9, 5, 5, 64, 32).macs_per_pixel(), 5184 + 51200 + 800);
}

TEST(SrcnnReference, IdentityNetworkReturnsItsInput) {
    const SrcnnModel m = identity_model(9, 5, 5, 6, 3);
    const Image<float> in = random_image<float>(23, 19, 1, 101, 0.05, 1.0);  // ReLU-safe
    EXPECT_TRUE(images_near(run_ref(in, m).view(), in.view(), 0.0));
}

TEST(SrcnnReference, ConstantInputGivesConstantOutput) {
    // Replication borders: a constant plane stays constant everywhere, borders included.
    const SrcnnModel m = make_model(9, 1, 5, 8, 4);
    Image<float> in(17, 14, 1);
    for (int y = 0; y < 14; ++y)
        for (int x = 0; x < 17; ++x) in(x, y) = 0.37f;
    const Image<float> out = run_ref(in, m);
    for (int y = 0; y < 14; ++y)
        for (int x = 0; x < 17; ++x) ASSERT_EQ(out(x, y), out(0, 0)) << x << ", " << y;
}

TEST(SrcnnReference, MirroredKernelsGiveMirroredOutput) {
    SrcnnModel m = make_model(9, 3, 5, 5, 3);
    SrcnnModel mm = m;
    for (SrcnnLayer& l : mm.layers) {
        const int k = l.kernel;
        for (int p = 0; p < l.out_channels * l.in_channels; ++p)
            for (int ky = 0; ky < k; ++ky)
                for (int kx = 0; kx < k / 2; ++kx)
                    std::swap(l.weights[static_cast<std::size_t>((p * k + ky) * k + kx)],
                              l.weights[static_cast<std::size_t>((p * k + ky) * k + k - 1 - kx)]);
    }
    const Image<float> in = random_image<float>(21, 16, 1, 102);
    Image<float> flipped(21, 16, 1);
    for (int y = 0; y < 16; ++y)
        for (int x = 0; x < 21; ++x) flipped(20 - x, y) = in(x, y);
    const Image<float> a = run_ref(in, m), b = run_ref(flipped, mm);
    Image<float> b_back(21, 16, 1);
    for (int y = 0; y < 16; ++y)
        for (int x = 0; x < 21; ++x) b_back(20 - x, y) = b(x, y);
    EXPECT_TRUE(images_near(a.view(), b_back.view(), 1e-6));
}

TEST(SrcnnReference, SubImageViewsAndStrides) {
    const SrcnnModel m = load_srcnn_model(golden("s915.srcnn"));
    const Image<float> big = random_image<float>(40, 31, 1, 103);
    const ImageView<const float> sub = big.view().sub(5, 3, 19, 17);
    Image<float> out_big(33, 25, 1);
    const ImageView<float> out_sub = out_big.view().sub(7, 4, 19, 17);
    srcnn_forward(sub, out_sub, m, {}, ctx_of(Backend::Reference));
    const Image<float> dense = run_ref(clone(sub), m);
    EXPECT_TRUE(images_near(ImageView<const float>(out_sub), dense.view(), 0.0));
}

TEST(SrcnnReference, CpuBackendSmoke) {
    const SrcnnModel m = load_srcnn_model(golden("s955.srcnn"));
    const Image<float> in = load_f32("s955_in.npy");
    const Image<float> want = load_f32("s955_out.npy");
    Image<float> got(in.width(), in.height(), 1);
    srcnn_forward(in.view(), got.view(), m, {}, ctx_of(Backend::Cpu));
    EXPECT_TRUE(images_near(got.view(), want.view(), 1e-4 * std::max(1.0, range_of(want))));
}

// ------------------------------------------------------------------------- names

TEST(SrcnnNames, RoundTripAndErrors) {
    for (SrcnnPrecision p : {SrcnnPrecision::Fp32, SrcnnPrecision::Tf32, SrcnnPrecision::Fp16,
                             SrcnnPrecision::Bf16, SrcnnPrecision::Fastest})
        EXPECT_EQ(parse_srcnn_precision(to_string(p)), p);
    for (SrcnnVariant v :
         {SrcnnVariant::Auto, SrcnnVariant::Direct, SrcnnVariant::SharedKernel,
          SrcnnVariant::SharedKernelPatch, SrcnnVariant::RegisteredPixel, SrcnnVariant::Cudnn,
          SrcnnVariant::TensorCore, SrcnnVariant::FusedNetwork})
        EXPECT_EQ(parse_srcnn_variant(to_string(v)), v);
    EXPECT_STREQ(to_string(SrcnnVariant::SharedKernelPatch), "shared-kernel-patch");
    EXPECT_STREQ(to_string(SrcnnVariant::FusedNetwork), "fused");
    expect_error([] { parse_srcnn_precision("fp64"); }, ErrorCode::InvalidArgument,
                 "allowed: fp32, tf32, fp16, bf16, fastest");
    expect_error([] { parse_srcnn_variant("winograd"); }, ErrorCode::InvalidArgument,
                 "'winograd' (allowed: auto, direct,");
}

// ------------------------------------------------------------------------- validate

TEST(SrcnnValidate, EveryProblemIsNamed) {
    const SrcnnModel good = make_model(9, 1, 5, 8, 4);
    EXPECT_NO_THROW(validate(good));
    auto bad = [&](auto edit, const std::string& text) {
        SrcnnModel m = good;
        edit(m);
        expect_error([&] { validate(m); }, ErrorCode::InvalidArgument, text);
    };
    bad([](SrcnnModel& m) { m.scale = 1; }, "scale 1 is outside [2, 8]");
    bad([](SrcnnModel& m) { m.scale = 9; }, "scale 9 is outside");
    bad([](SrcnnModel& m) { m.description.assign(65537, 'x'); }, "description has 65537 bytes");
    bad([](SrcnnModel& m) { m.layers[0].kernel = 8; }, "layer 1: kernel size 8 is not an odd");
    bad([](SrcnnModel& m) { m.layers[2].kernel = 17; }, "layer 3: kernel size 17");
    bad([](SrcnnModel& m) { m.layers[1].out_channels = 129; },
        "layer 2: output channel count 129 is outside [1, 128]");
    bad([](SrcnnModel& m) { m.layers[0].in_channels = 3; }, "layer 1: has 3 input channels");
    bad([](SrcnnModel& m) { m.layers[2].out_channels = 2; }, "layer 3: has 2 output channels");
    bad([](SrcnnModel& m) { m.layers[1].in_channels = 7; }, "do not chain");
    bad([](SrcnnModel& m) { m.layers[1].weights.pop_back(); }, "layer 2: has 31 weights");
    bad([](SrcnnModel& m) { m.layers[0].bias.push_back(0.f); }, "layer 1: has 9 biases");
    bad([](SrcnnModel& m) { m.layers[2].weights[3] = std::numeric_limits<float>::quiet_NaN(); },
        "layer 3: weight 3 is not finite");
    bad([](SrcnnModel& m) { m.layers[1].bias[2] = std::numeric_limits<float>::infinity(); },
        "layer 2: bias 2 is not finite");
}

// ----------------------------------------------------------------------- weights file

TEST(SrcnnWeights, RoundTripIsExact) {
    TempDir dir;
    const SrcnnModel m = make_model(9, 5, 5, 7, 3, 3);
    save_srcnn_model(m, dir.file("m.srcnn"));
    const SrcnnModel r = load_srcnn_model(dir.file("m.srcnn"));
    EXPECT_EQ(r.scale, 3);
    EXPECT_EQ(r.description, m.description);
    for (int i = 0; i < 3; ++i) {
        const SrcnnLayer &a = m.layers[i], &b = r.layers[i];
        EXPECT_EQ(a.out_channels, b.out_channels);
        EXPECT_EQ(a.in_channels, b.in_channels);
        EXPECT_EQ(a.kernel, b.kernel);
        EXPECT_EQ(a.weights, b.weights);
        EXPECT_EQ(a.bias, b.bias);
    }
    // No temporary file is left behind.
    int files = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.str())) ++files;
    EXPECT_EQ(files, 1);
}

TEST(SrcnnWeights, ByteLayoutMatchesThePythonWriter) {
    // Loading the Python-written file and saving it again gives the same bytes.
    TempDir dir;
    for (const char* c : {"s915", "full915"}) {
        const SrcnnModel m = load_srcnn_model(golden(std::string(c) + ".srcnn"));
        save_srcnn_model(m, dir.file("again.srcnn"));
        EXPECT_EQ(read_bytes(dir.file("again.srcnn")),
                  read_bytes(golden(std::string(c) + ".srcnn")))
            << c;
    }
    const auto b = read_bytes(golden("t313.srcnn"));
    ASSERT_GE(b.size(), 32u);
    EXPECT_EQ(std::memcmp(b.data(), "UPRES-SRCNN\0", 12), 0);
    EXPECT_EQ(b[12], 1);  // version, little-endian
    EXPECT_EQ(b[16], 4);  // scale of t313
}

TEST(SrcnnWeights, CorruptFilesAreRefusedWithTheReason) {
    TempDir dir;
    const std::string path = dir.file("bad.srcnn");
    const std::vector<unsigned char> good = read_bytes(golden("s915.srcnn"));
    auto load_edited = [&](auto edit, ErrorCode code, const std::string& text) {
        std::vector<unsigned char> b = good;
        edit(b);
        write_bytes(path, b);
        expect_error([&] { load_srcnn_model(path); }, code, text);
    };
    load_edited([](auto& b) { b[0] = 'X'; }, ErrorCode::CorruptData, "bad magic");
    load_edited([](auto& b) { b.resize(5); }, ErrorCode::CorruptData, "bad magic");
    load_edited([](auto& b) { b.resize(18); }, ErrorCode::CorruptData, "truncated");
    load_edited([](auto& b) { put_u32(b, 12, 2); }, ErrorCode::CorruptData, "version 2");
    load_edited([](auto& b) { b.resize(b.size() - 9); }, ErrorCode::CorruptData, "truncated");
    load_edited([](auto& b) { b.resize(100); }, ErrorCode::CorruptData, "truncated");
    load_edited(
        [](auto& b) {
            b.insert(b.end() - 4, {1, 2, 3});
            fix_crc(b);
        },
        ErrorCode::CorruptData, "3 trailing bytes");
    load_edited([](auto& b) { b[200] ^= 0x10; }, ErrorCode::CorruptData, "checksum mismatch");
    load_edited([](auto& b) { b.back() ^= 0x01; }, ErrorCode::CorruptData, "checksum mismatch");
    // Description length past the end of the file.
    load_edited([](auto& b) { put_u32(b, 20, 0x7FFFFFFF); }, ErrorCode::CorruptData,
                "truncated SRCNN weights file: the description");
    // Huge layer sizes: refused before any allocation.
    const std::size_t l1 = 24 + good[20] + 256u * good[21];  // first layer's header
    load_edited([&](auto& b) { put_u32(b, l1, 0xFFFFFFFF); }, ErrorCode::CorruptData,
                "truncated SRCNN weights file: layer 1 weights");
    // A well-formed file (valid checksum) describing a bad model: validate()'s error.
    {
        SrcnnModel ok = make_model(9, 1, 5, 8, 4);
        save_srcnn_model(ok, path);
        // Rewrite layer 2's header and weights by hand through the documented layout.
        std::vector<unsigned char> b = read_bytes(path);
        const std::size_t d = 24 + ok.description.size();
        const std::size_t l2 = d + 12 + 4 * (81 * 8 + 8);
        put_u32(b, l2 + 4, 4);  // in channels 8 -> 4 and drop 16 weights to keep the layout
        b.erase(b.begin() + static_cast<std::ptrdiff_t>(l2 + 12 + 64),
                b.begin() + static_cast<std::ptrdiff_t>(l2 + 12 + 128));
        fix_crc(b);
        write_bytes(path, b);
        expect_error([&] { load_srcnn_model(path); }, ErrorCode::InvalidArgument,
                     "layer 2: has 4 input channels but layer 1 has 8 outputs");
        expect_error([&] { load_srcnn_model(path); }, ErrorCode::InvalidArgument, path);
    }
    load_edited(
        [](auto& b) {
            const float nan = std::numeric_limits<float>::quiet_NaN();
            std::memcpy(b.data() + b.size() - 8, &nan, 4);  // the last bias
            fix_crc(b);
        },
        ErrorCode::InvalidArgument, "layer 3: bias 0 is not finite");
    expect_error([&] { load_srcnn_model(dir.file("missing.srcnn")); }, ErrorCode::IoError,
                 "missing.srcnn: cannot open");
}

TEST(SrcnnWeights, SaveRefusesBadModelsAndUnwritablePaths) {
    TempDir dir;
    SrcnnModel m = make_model(9, 1, 5, 8, 4);
    m.layers[0].weights[0] = std::numeric_limits<float>::infinity();
    expect_error([&] { save_srcnn_model(m, dir.file("x.srcnn")); }, ErrorCode::InvalidArgument,
                 "not finite");
    EXPECT_FALSE(std::filesystem::exists(dir.file("x.srcnn")));
    expect_error([&] { save_srcnn_model(make_model(3, 1, 3, 2, 2), dir.file("no/such/x.srcnn")); },
                 ErrorCode::IoError, "no/such/x.srcnn");
}

TEST(SrcnnWeights, ModelFolder) {
    TempDir dir;
    save_srcnn_model(make_model(3, 1, 3, 4, 2, 3), dir.file("srcnn_x3.srcnn"));
    save_srcnn_model(make_model(3, 1, 3, 4, 2, 4), dir.file("srcnn_x2.srcnn"));  // misnamed
    EXPECT_EQ(available_srcnn_scales(dir.str()), (std::vector<int>{2, 3}));
    EXPECT_EQ(load_default_srcnn_model(3, dir.str()).scale, 3);
    expect_error([&] { load_default_srcnn_model(4, dir.str()); }, ErrorCode::InvalidArgument,
                 "no SRCNN model for scale 4");
    expect_error([&] { load_default_srcnn_model(4, dir.str()); }, ErrorCode::InvalidArgument,
                 "available scales: 2, 3");
    expect_error([&] { load_default_srcnn_model(2, dir.str()); }, ErrorCode::CorruptData,
                 "records scale 4");
    // $UPRES_MODEL_DIR wins.
    const char* old = std::getenv("UPRES_MODEL_DIR");
    const std::string saved = old ? old : "";
    ::setenv("UPRES_MODEL_DIR", dir.str().c_str(), 1);
    EXPECT_EQ(srcnn_model_dir(), dir.str());
    EXPECT_EQ(available_srcnn_scales(), (std::vector<int>{2, 3}));
    EXPECT_EQ(load_default_srcnn_model(3).scale, 3);
    if (old)
        ::setenv("UPRES_MODEL_DIR", saved.c_str(), 1);
    else
        ::unsetenv("UPRES_MODEL_DIR");
    EXPECT_TRUE(available_srcnn_scales(dir.file("nothing_here")).empty());
    expect_error([&] { load_default_srcnn_model(2, dir.file("nothing_here")); },
                 ErrorCode::InvalidArgument, "available scales: none");
}

// ------------------------------------------------------------------- srcnn_forward errors

TEST(SrcnnForward, BadArgumentsAreNamed) {
    const SrcnnModel m = make_model(9, 1, 5, 8, 4);
    const Context ref = ctx_of(Backend::Reference);
    Image<float> in = random_image<float>(20, 16, 1, 104);
    Image<float> out(20, 16, 1);
    Image<float> two(20, 16, 2);
    expect_error([&] { srcnn_forward(ImageView<const float>(), out.view(), m, {}, ref); },
                 ErrorCode::InvalidArgument, "empty");
    expect_error([&] { srcnn_forward(two.view(), out.view(), m, {}, ref); },
                 ErrorCode::InvalidArgument, "single-channel");
    Image<float> small_out(19, 16, 1);
    expect_error([&] { srcnn_forward(in.view(), small_out.view(), m, {}, ref); },
                 ErrorCode::InvalidArgument, "must have the input's size 20 x 16");
    expect_error(
        [&] {
            srcnn_forward(in.view().sub(0, 0, 14, 14), in.view().sub(1, 1, 14, 14), m, {}, ref);
        },
        ErrorCode::InvalidArgument, "overlap");
    expect_error(
        [&] {
            srcnn_forward(in.view().sub(0, 0, 20, 12), out.view().sub(0, 0, 20, 12), m, {}, ref);
        },
        ErrorCode::InvalidArgument, "smaller than the model's receptive field 13 x 13");
    in(4, 7) = std::numeric_limits<float>::quiet_NaN();
    expect_error([&] { srcnn_forward(in.view(), out.view(), m, {}, ref); },
                 ErrorCode::InvalidArgument, "non-finite value (nan) at (4, 7)");
    in(4, 7) = 0.5f;
    SrcnnModel bad = m;
    bad.layers[1].kernel = 2;
    expect_error([&] { srcnn_forward(in.view(), out.view(), bad, {}, ref); },
                 ErrorCode::InvalidArgument, "layer 2: kernel size 2");
}

TEST(SrcnnForward, HostBackendsRunOnlyFp32AndAuto) {
    const SrcnnModel m = make_model(9, 1, 5, 8, 4);
    const Image<float> in = random_image<float>(16, 16, 1, 105);
    Image<float> out(16, 16, 1);
    for (Backend b : {Backend::Reference, Backend::Cpu}) {
        SrcnnOptions o;
        o.precision = SrcnnPrecision::Fp16;
        expect_error([&] { srcnn_forward(in.view(), out.view(), m, o, ctx_of(b)); },
                     ErrorCode::InvalidArgument, "runs only precision fp32, not fp16");
        o.precision = SrcnnPrecision::Fastest;
        expect_error([&] { srcnn_forward(in.view(), out.view(), m, o, ctx_of(b)); },
                     ErrorCode::InvalidArgument, "not fastest");
        o = {};
        o.variant = SrcnnVariant::TensorCore;
        expect_error([&] { srcnn_forward(in.view(), out.view(), m, o, ctx_of(b)); },
                     ErrorCode::InvalidArgument, "variant tensor-core needs the cuda backend");
        o = {};
        o.layer_variants[1] = SrcnnVariant::RegisteredPixel;
        expect_error([&] { srcnn_forward(in.view(), out.view(), m, o, ctx_of(b)); },
                     ErrorCode::InvalidArgument, "layer variant registered-pixel");
        const SrcnnPlan p = srcnn_forward(in.view(), out.view(), m, {}, ctx_of(b));
        EXPECT_FALSE(p.fused);
        EXPECT_EQ(p.precision, SrcnnPrecision::Fp32);
    }
}

TEST(SrcnnForward, ForcedCudaWithoutDeviceIsUnavailable) {
    if (cuda_available()) GTEST_SKIP() << "a CUDA device is present: this checks its absence";
    const SrcnnModel m = make_model(9, 1, 5, 8, 4);
    const Image<float> in = random_image<float>(16, 16, 1, 106);
    Image<float> out(16, 16, 1);
    expect_error([&] { srcnn_forward(in.view(), out.view(), m, {}, ctx_of(Backend::Cuda)); },
                 ErrorCode::BackendUnavailable, "srcnn_forward");
    const Image<U8> img = random_image<U8>(8, 8, 3, 107);
    expect_error([&] { srcnn_upscale(img.view(), m, {}, ctx_of(Backend::Cuda)); },
                 ErrorCode::BackendUnavailable, "");
}

// ------------------------------------------------------------------------- pipeline

TEST(SrcnnUpscale, GrayU8MatchesGoldenPipeline) {
    const SrcnnModel m = load_srcnn_model(golden("pipe.srcnn"));
    const Image<U8> in = std::move(read_image(golden("pipe_gray_in.npy")).as<U8>());
    const Image<U8> want = std::move(read_image(golden("pipe_gray_out.npy")).as<U8>());
    for (Backend b : {Backend::Reference, Backend::Cpu}) {
        const Image<U8> got = srcnn_upscale(in.view(), m, {}, ctx_of(b));
        EXPECT_TRUE(images_near(got.view(), want.view(), 1.0)) << to_string(b);
    }
}

TEST(SrcnnUpscale, IdentityModelIsBicubic) {
    // With the identity network the pipeline is MATLAB bicubic (clamped) on every channel type.
    const SrcnnModel m = identity_model(9, 1, 5, 4, 2, 3);
    const Context ref = ctx_of(Backend::Reference);
    const Image<U8> g = random_image<U8>(9, 7, 1, 108);
    const AnyImage up = srcnn_upscale(AnyImage(clone(g.view())), m, {}, ref);
    const AnyImage bic = bicubic_resize(AnyImage(clone(g.view())), 3.0, ref);
    ASSERT_EQ(up.width(), 27);
    ASSERT_EQ(up.height(), 21);
    EXPECT_TRUE(images_near(up.as<U8>().view(), bic.as<U8>().view(), 1.0));
}

TEST(SrcnnUpscale, ColourAlphaAndDepths) {
    const SrcnnModel m = load_srcnn_model(golden("pipe.srcnn"));
    const Context ref = ctx_of(Backend::Reference);
    // RGB with R = G = B stays gray (chroma 128 everywhere).
    Image<U8> g = random_image<U8>(11, 8, 1, 109);
    Image<U8> rgb(11, 8, 3);
    for (int y = 0; y < 8; ++y)
        for (int x = 0; x < 11; ++x)
            for (int c = 0; c < 3; ++c) rgb(x, y, c) = g(x, y);
    const Image<U8> up = srcnn_upscale(rgb.view(), m, {}, ref);
    ASSERT_EQ(up.width(), 22);
    ASSERT_EQ(up.height(), 16);
    ASSERT_EQ(up.channels(), 3);
    for (int y = 0; y < 16; ++y)
        for (int x = 0; x < 22; ++x) {
            ASSERT_LE(std::abs(int(up(x, y, 0)) - int(up(x, y, 1))), 1) << x << ", " << y;
            ASSERT_LE(std::abs(int(up(x, y, 2)) - int(up(x, y, 1))), 1) << x << ", " << y;
        }
    // RGBA: colour as RGB, alpha = bicubic of alpha.
    Image<U8> rgba = random_image<U8>(11, 8, 4, 110);
    Image<U8> rgb3(11, 8, 3), alpha(11, 8, 1);
    for (int y = 0; y < 8; ++y)
        for (int x = 0; x < 11; ++x) {
            for (int c = 0; c < 3; ++c) rgb3(x, y, c) = rgba(x, y, c);
            alpha(x, y) = rgba(x, y, 3);
        }
    const Image<U8> up4 = srcnn_upscale(rgba.view(), m, {}, ref);
    const Image<U8> up3 = srcnn_upscale(rgb3.view(), m, {}, ref);
    const AnyImage upa = bicubic_resize(AnyImage(clone(alpha.view())), 2.0, ref);
    ASSERT_EQ(up4.channels(), 4);
    for (int y = 0; y < 16; ++y)
        for (int x = 0; x < 22; ++x) {
            for (int c = 0; c < 3; ++c) ASSERT_EQ(up4(x, y, c), up3(x, y, c));
            ASSERT_LE(std::abs(int(up4(x, y, 3)) - int(upa.as<U8>()(x, y))), 1);
        }
    // Gray + alpha (2 channels): gray as gray, alpha by bicubic; constant alpha stays.
    Image<U8> ga(11, 8, 2);
    for (int y = 0; y < 8; ++y)
        for (int x = 0; x < 11; ++x) ga(x, y, 0) = g(x, y), ga(x, y, 1) = 200;
    const Image<U8> upga = srcnn_upscale(ga.view(), m, {}, ref);
    const Image<U8> upg = srcnn_upscale(g.view(), m, {}, ref);
    for (int y = 0; y < 16; ++y)
        for (int x = 0; x < 22; ++x) {
            ASSERT_EQ(upga(x, y, 0), upg(x, y));
            ASSERT_EQ(upga(x, y, 1), 200);
        }
    // u16 (x 257) and f32 (/ 255) copies of the gray image give the same result within a
    // rounding step.
    Image<U16> g16(11, 8, 1);
    Image<float> gf(11, 8, 1);
    for (int y = 0; y < 8; ++y)
        for (int x = 0; x < 11; ++x) g16(x, y) = U16(g(x, y) * 257), gf(x, y) = g(x, y) / 255.0f;
    const AnyImage up16 = srcnn_upscale(AnyImage(std::move(g16)), m, {}, ref);
    const AnyImage upf = srcnn_upscale(AnyImage(std::move(gf)), m, {}, ref);
    ASSERT_TRUE(up16.holds<U16>());
    ASSERT_TRUE(upf.holds<float>());
    for (int y = 0; y < 16; ++y)
        for (int x = 0; x < 22; ++x) {
            ASSERT_LE(std::abs(up16.as<U16>()(x, y) / 257.0 - upg(x, y)), 0.51) << x << ", " << y;
            ASSERT_LE(std::abs(upf.as<float>()(x, y) * 255.0 - upg(x, y)), 0.51);
        }
    // u16 RGBA keeps its depth and a constant alpha.
    Image<U16> c16 = random_image<U16>(9, 9, 4, 111);
    for (int y = 0; y < 9; ++y)
        for (int x = 0; x < 9; ++x) c16(x, y, 3) = 40000;
    const AnyImage upc16 = srcnn_upscale(AnyImage(std::move(c16)), m, {}, ref);
    ASSERT_TRUE(upc16.holds<U16>());
    EXPECT_EQ(upc16.width(), 18);
    EXPECT_EQ(upc16.as<U16>()(5, 7, 3), 40000);
}

TEST(SrcnnUpscale, BadInputsAreNamed) {
    const SrcnnModel m = make_model(9, 1, 5, 8, 4);  // receptive field 13
    const Context ref = ctx_of(Backend::Reference);
    expect_error([&] { srcnn_upscale(random_image<U8>(2, 5, 1, 112).view(), m, {}, ref); },
                 ErrorCode::InvalidArgument, "smaller than 3 x 3");
    expect_error([&] { srcnn_upscale(random_image<U8>(6, 9, 3, 113).view(), m, {}, ref); },
                 ErrorCode::InvalidArgument, "smaller than the model's receptive field 13 x 13");
    expect_error([&] { srcnn_upscale(ImageView<const U8>(), m, {}, ref); },
                 ErrorCode::InvalidArgument, "empty");
    Image<float> f = random_image<float>(8, 8, 3, 114);
    f(3, 5, 2) = std::numeric_limits<float>::infinity();
    expect_error([&] { srcnn_upscale(AnyImage(std::move(f)), m, {}, ref); },
                 ErrorCode::InvalidArgument, "non-finite value (inf) at (3, 5, channel 2)");
    SrcnnOptions o;
    o.precision = SrcnnPrecision::Bf16;
    expect_error(
        [&] { srcnn_upscale(random_image<U8>(8, 8, 1, 115).view(), m, o, ctx_of(Backend::Cpu)); },
        ErrorCode::InvalidArgument, "not bf16");
    SrcnnModel bad = m;
    bad.scale = 0;
    expect_error([&] { srcnn_upscale(random_image<U8>(8, 8, 1, 116).view(), bad, {}, ref); },
                 ErrorCode::InvalidArgument, "scale 0");
    expect_error(
        [&] {
            srcnn_upscale(random_image<U8>(kMaxDimension / 2 + 1, 3, 1, 117).view(), m, {}, ref);
        },
        ErrorCode::InvalidArgument, "exceed the image size limits");
}

TEST(SrcnnBicubic, SizesAndConstants) {
    const Context ref = ctx_of(Backend::Reference);
    Image<U16> c(7, 5, 3);
    for (int y = 0; y < 5; ++y)
        for (int x = 0; x < 7; ++x)
            for (int k = 0; k < 3; ++k) c(x, y, k) = U16(1000 * (k + 1));
    const AnyImage up = bicubic_resize(AnyImage(clone(c.view())), 2.5, ref);
    EXPECT_EQ(up.width(), 18);  // ceil(17.5), MATLAB's size rule
    EXPECT_EQ(up.height(), 13);
    EXPECT_EQ(up.as<U16>()(9, 6, 2), 3000);
    const AnyImage down = bicubic_resize(AnyImage(clone(c.view())), 0.5, ref);
    EXPECT_EQ(down.width(), 4);
    EXPECT_EQ(down.as<U16>()(1, 1, 1), 2000);
    expect_error([&] { bicubic_resize(AnyImage(clone(c.view())), 0.0, ref); },
                 ErrorCode::InvalidArgument, "scale 0");
    expect_error([&] { bicubic_resize(AnyImage(clone(c.view())), std::nan(""), ref); },
                 ErrorCode::InvalidArgument, "outside (0, 64]");
    expect_error([&] { bicubic_resize(AnyImage(), 2.0, ref); }, ErrorCode::InvalidArgument,
                 "empty");
}

TEST(SrcnnDegrade, MatchesMatlabImresize) {
    AnyImage in = read_image(golden("degrade_in.npy"));
    const Image<float> want = load_f32("degrade_x3.npy");
    for (Backend b : {Backend::Reference, Backend::Cpu}) {
        const AnyImage got = srcnn_degrade(in, 3, ctx_of(b));
        ASSERT_TRUE(got.holds<float>());
        EXPECT_TRUE(images_near(got.as<float>().view(), want.view(), 1e-5)) << to_string(b);
    }
    expect_error([&] { srcnn_degrade(in, 0, {}); }, ErrorCode::InvalidArgument, "scale 0");
    expect_error([&] { srcnn_degrade(AnyImage(random_image<U8>(2, 9, 1, 118)), 3, {}); },
                 ErrorCode::InvalidArgument, "smaller than the scale 3");
    const AnyImage u8 = srcnn_degrade(AnyImage(random_image<U8>(13, 9, 3, 119)), 4, {});
    EXPECT_EQ(u8.width(), 3);
    EXPECT_EQ(u8.height(), 2);
    EXPECT_TRUE(u8.holds<U8>());
}

}  // namespace
}  // namespace upres
