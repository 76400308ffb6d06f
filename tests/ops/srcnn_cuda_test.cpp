// The SRCNN CUDA engine (src/ops/srcnn/srcnn_cuda.cu) against the double-precision reference:
// every per-layer variant on every layer shape (conv_reference), the whole network per precision
// and variant (ref::srcnn_forward) on random fixed-seed models and real photo crops, awkward sizes
// and device sub-views with a stride, the autotuner's cache (memory and file) and determinism,
// and the errors of variants that cannot run a layer. Tolerances are relative to the output's
// range: docs/ops/srcnn.md, "CUDA engine and per-layer variants". Every suite needs a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <upres/color.hpp>
#include <upres/io.hpp>
#include <upres/srcnn.hpp>

#include "test_util.hpp"

#if UPRES_HAVE_CUDA
#include <unistd.h>

#include "ops/srcnn/srcnn_backends.hpp"
#include "ops/srcnn/srcnn_cuda.hpp"
#include "ops/srcnn/srcnn_cudnn.hpp"
#endif

namespace upres {
namespace {

#if UPRES_HAVE_CUDA

// ------------------------------------------------------------------ fixtures

// Weights scaled like a trained SRCNN (He-normal for the ReLU layers, 1/sqrt(fan-in) for the
// last), small biases; fixed seeds.
SrcnnLayer random_layer(int cout, int cin, int k, std::uint32_t seed, bool last) {
    SrcnnLayer l;
    l.out_channels = cout;
    l.in_channels = cin;
    l.kernel = k;
    std::mt19937 rng(seed);
    const double fan = static_cast<double>(cin) * k * k;
    std::normal_distribution<float> nd(0.f,
                                       static_cast<float>(std::sqrt((last ? 1.0 : 2.0) / fan)));
    std::uniform_real_distribution<float> ub(-0.05f, 0.05f);
    l.weights.resize(static_cast<std::size_t>(cout) * cin * k * k);
    for (float& w : l.weights) w = nd(rng);
    l.bias.resize(cout);
    for (float& b : l.bias) b = ub(rng);
    return l;
}

SrcnnModel random_model(int k1, int k2, int k3, int n1, int n2, std::uint32_t seed) {
    SrcnnModel m;
    m.scale = 3;
    m.description = "random test model";
    m.layers[0] = random_layer(n1, 1, k1, seed, false);
    m.layers[1] = random_layer(n2, n1, k2, seed + 1, false);
    m.layers[2] = random_layer(1, n2, k3, seed + 2, true);
    return m;
}

std::vector<float> random_planes(std::size_t n, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(0.f, 1.f);
    std::vector<float> v(n);
    for (float& x : v) x = u(rng);
    return v;
}

// max |a - b| / scale and where; scale = max(max(b) - min(b), max |b|) (the output's range, or its
// magnitude where the range degenerates, e.g. a 1 x 1 plane).
struct RelErr {
    double rel = 0;
    std::size_t at = 0;
    double range = 0;
    bool finite = true;
};
RelErr rel_err(const std::vector<float>& a, const std::vector<float>& b) {
    RelErr r;
    const auto [mn, mx] = std::minmax_element(b.begin(), b.end());
    const double mag =
        std::max(std::abs(static_cast<double>(*mx)), std::abs(static_cast<double>(*mn)));
    r.range = std::max({1e-6, static_cast<double>(*mx - *mn), mag});
    double worst = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (!std::isfinite(a[i])) r.finite = false;
        const double d = std::abs(static_cast<double>(a[i]) - b[i]);
        if (d > worst) worst = d, r.at = i;
    }
    r.rel = worst / r.range;
    return r;
}

// Tolerances relative to the output range (docs/ops/srcnn.md, "CUDA engine and per-layer
// variants"). Worst measured on an H200 (2026-11-21) over every shape, size and input here:
// one layer: CUDA-core fp32 1.6e-6, 3xTF32 2.8e-5, tf32 3.9e-4, fp16 3.9e-4, bf16 3.3e-3;
// whole network: fp32 (any variant) 1.3e-5, tf32 1.3e-3, fp16 1.3e-3, bf16 1.25e-2.
double layer_tol(SrcnnVariant v, SrcnnPrecision p) {
    if ((v != SrcnnVariant::TensorCore && v != SrcnnVariant::Cudnn) || p == SrcnnPrecision::Fp32)
        return 1e-4;
    if (p == SrcnnPrecision::Bf16) return 8e-3;
    return 1e-3;  // tf32, fp16
}
double net_tol(SrcnnPrecision p) {
    switch (p) {
        case SrcnnPrecision::Fp32:
            return 1e-4;
        case SrcnnPrecision::Bf16:
            return 2.5e-2;
        default:
            return 3e-3;  // tf32, fp16 (fastest resolves to fp16 or bf16: tested apart)
    }
}

// CHW device buffer.
struct DevPlanes {
    Image<float> img;
    DevPlanes(int w, int h, int c) : img(w, h * c, 1, Location::Device) {}
    float* data() { return img.view().data(); }
    void upload(const std::vector<float>& v) {
        copy(ImageView<const float>(v.data(), img.width(), img.height(), 1), img.view());
    }
    std::vector<float> download() {
        std::vector<float> v(static_cast<std::size_t>(img.width()) * img.height());
        copy(ImageView<const float>(img.view()),
             ImageView<float>(v.data(), img.width(), img.height(), 1));
        return v;
    }
};

struct LayerShape {
    int cout, cin, k;
};
struct Size {
    int w, h;
};

struct VariantPrecision {
    SrcnnVariant v;
    SrcnnPrecision p;
};
const VariantPrecision kLayerCases[] = {
    {SrcnnVariant::Direct, SrcnnPrecision::Fp32},
    {SrcnnVariant::SharedKernel, SrcnnPrecision::Fp32},
    {SrcnnVariant::SharedKernelPatch, SrcnnPrecision::Fp32},
    {SrcnnVariant::RegisteredPixel, SrcnnPrecision::Fp32},
    {SrcnnVariant::TensorCore, SrcnnPrecision::Fp32},
    {SrcnnVariant::TensorCore, SrcnnPrecision::Tf32},
    {SrcnnVariant::TensorCore, SrcnnPrecision::Fp16},
    {SrcnnVariant::TensorCore, SrcnnPrecision::Bf16},
};

void check_layer(const LayerShape& s, const Size& sz, bool relu, std::uint32_t seed,
                 std::span<const VariantPrecision> cases = kLayerCases) {
    const SrcnnLayer layer = random_layer(s.cout, s.cin, s.k, seed, !relu);
    const std::size_t px = static_cast<std::size_t>(sz.w) * sz.h;
    const auto in = random_planes(px * s.cin, seed + 7);
    std::vector<float> ref(px * s.cout);
    srcnn::conv_reference(in.data(), ref.data(), sz.w, sz.h, layer, relu);
    DevPlanes din(sz.w, sz.h, s.cin), dout(sz.w, sz.h, s.cout);
    din.upload(in);
    for (const VariantPrecision& c : cases) {
        SCOPED_TRACE(std::string(to_string(c.v)) + " " + to_string(c.p) + " layer " +
                     std::to_string(s.cout) + "x" + std::to_string(s.cin) + "x" +
                     std::to_string(s.k) + " on " + std::to_string(sz.w) + "x" +
                     std::to_string(sz.h));
        if (c.v == SrcnnVariant::RegisteredPixel &&
            s.cin * s.k * s.k > srcnn::cuda::kRegisteredPixelMaxInputs) {
            test::expect_error(
                [&] {
                    srcnn::cuda::conv_layer(din.data(), dout.data(), sz.w, sz.h, layer, relu, c.v,
                                            c.p, nullptr);
                },
                ErrorCode::InvalidArgument, "registered-pixel");
            continue;
        }
        dout.upload(std::vector<float>(px * s.cout, std::nanf("")));  // poison
        srcnn::cuda::conv_layer(din.data(), dout.data(), sz.w, sz.h, layer, relu, c.v, c.p,
                                nullptr);
        const auto got = dout.download();
        const RelErr e = rel_err(got, ref);
        EXPECT_TRUE(e.finite) << "unwritten (NaN) outputs";
        EXPECT_LE(e.rel, layer_tol(c.v, c.p))
            << "worst element " << e.at << ": " << got[e.at] << " vs " << ref[e.at] << " (range "
            << e.range << ")";
        std::printf("[ layer    ] %-20s %-5s %3dx%3dx%2d %4dx%4d  max err / range = %.3g\n",
                    to_string(c.v), to_string(c.p), s.cout, s.cin, s.k, sz.w, sz.h, e.rel);
    }
}

TEST(SrcnnCudaLayer, EveryVariantOnSrcnn915Layers) {
    UPRES_REQUIRE_GPU();
    for (const Size sz : {Size{13, 13}, Size{257, 131}, Size{7, 3}, Size{1, 1}}) {
        check_layer({64, 1, 9}, sz, true, 11);
        check_layer({32, 64, 1}, sz, true, 12);
        check_layer({1, 32, 5}, sz, false, 13);
    }
}

TEST(SrcnnCudaLayer, EveryVariantOnOtherShapes) {
    UPRES_REQUIRE_GPU();
    check_layer({32, 64, 5}, {37, 29}, true, 21);   // SRCNN 9-5-5's middle layer
    check_layer({5, 7, 3}, {70, 19}, true, 22);     // odd channel counts
    check_layer({3, 17, 1}, {65, 66}, false, 23);   // 1x1, few outputs, no ReLU
    check_layer({128, 1, 15}, {33, 17}, true, 24);  // the largest kernel, 128 channels
}

// ------------------------------------------------------------------ whole network

std::vector<float> host_plane(const Image<float>& img) {
    std::vector<float> v(static_cast<std::size_t>(img.width()) * img.height());
    copy(ImageView<const float>(img.view()),
         ImageView<float>(v.data(), img.width(), img.height(), 1));
    return v;
}

// ref::srcnn_forward of a host plane.
Image<float> reference(const SrcnnModel& model, const Image<float>& host) {
    Image<float> ref(host.width(), host.height(), 1);
    ref::srcnn_forward(span_of(ImageView<const float>(host.view())), span_of(ref.view()), model);
    return ref;
}

// Runs the network on a device sub-view (offset, stride wider than the plane) of `host` and
// compares with ref::srcnn_forward.
SrcnnPlan check_forward(const SrcnnModel& model, const Image<float>& host, const Image<float>& ref,
                        const SrcnnOptions& o, double tol, const std::string& what) {
    SCOPED_TRACE(what + " " + to_string(o.variant) + " " + to_string(o.precision));
    const int w = host.width(), h = host.height();
    // Device buffers wider and taller than the plane: views with an offset and a stride.
    Image<float> din(w + 9, h + 4, 1, Location::Device), dout(w + 3, h + 2, 1, Location::Device);
    ImageView<float> vin = din.view().sub(5, 3, w, h), vout = dout.view().sub(1, 2, w, h);
    copy(ImageView<const float>(host.view()), vin);
    Image<float> poison(w + 3, h + 2, 1);
    for (int y = 0; y < h + 2; ++y)
        for (int x = 0; x < w + 3; ++x) poison.view()(x, y) = std::nanf("");
    copy(ImageView<const float>(poison.view()), dout.view());
    Context ctx;
    ctx.backend = Backend::Cuda;
    const SrcnnPlan plan = srcnn_forward(ImageView<const float>(vin), vout, model, o, ctx);
    Image<float> got(w, h, 1);
    copy(ImageView<const float>(vout), got.view());
    // The frame around the output view stays untouched.
    Image<float> whole(w + 3, h + 2, 1);
    copy(ImageView<const float>(dout.view()), whole.view());
    EXPECT_TRUE(std::isnan(whole.view()(0, 0)) && std::isnan(whole.view()(w + 2, h + 1)))
        << "wrote outside the output view";
    const RelErr e = rel_err(host_plane(got), host_plane(ref));
    EXPECT_TRUE(e.finite) << "unwritten (NaN) outputs";
    EXPECT_LE(e.rel, tol) << "worst pixel (" << e.at % w << ", " << e.at / w << ") range "
                          << e.range;
    std::printf("[ network  ] %-14s %-20s %-7s -> %-40s %4dx%4d  max err / range = %.3g\n",
                what.c_str(), to_string(o.variant), to_string(o.precision),
                srcnn::cuda::plan_string(plan).c_str(), w, h, e.rel);
    return plan;
}

Image<float> random_plane(int w, int h, std::uint32_t seed) {
    return test::random_image<float>(w, h, 1, seed, 0.0, 1.0);
}

// Luma of a real photo, [0, 1], cropped.
Image<float> photo_plane(const std::string& name, int x, int y, int w, int h) {
    AnyImage img = read_image(test::sample_path(name));
    Image<float> yy = luma(ImageView<const std::uint8_t>(img.as<std::uint8_t>().view()));
    Image<float> out(w, h, 1);
    for (int j = 0; j < h; ++j)
        for (int i = 0; i < w; ++i) out.view()(i, j) = yy.view()(x + i, y + j) / 255.f;
    return out;
}

std::vector<SrcnnOptions> forced_options() {
    std::vector<SrcnnOptions> v;
    for (SrcnnVariant var : {SrcnnVariant::Direct, SrcnnVariant::SharedKernel,
                             SrcnnVariant::SharedKernelPatch, SrcnnVariant::TensorCore}) {
        SrcnnOptions o;
        o.variant = var;
        v.push_back(o);
    }
    SrcnnOptions mixed;  // the paper's best combination
    mixed.layer_variants = {SrcnnVariant::SharedKernelPatch, SrcnnVariant::RegisteredPixel,
                            SrcnnVariant::SharedKernelPatch};
    v.push_back(mixed);
    for (SrcnnPrecision p : {SrcnnPrecision::Tf32, SrcnnPrecision::Fp16, SrcnnPrecision::Bf16}) {
        SrcnnOptions o;
        o.variant = SrcnnVariant::TensorCore;
        o.precision = p;
        v.push_back(o);
    }
    return v;
}

TEST(SrcnnCudaForward, ForcedVariantsMatchReference) {
    UPRES_REQUIRE_GPU();
    const SrcnnModel m915 = random_model(9, 1, 5, 64, 32, 101);
    const Image<float> rnd = random_plane(257, 131, 5);
    const Image<float> photo = photo_plane("baboon.jpg", 40, 60, 160, 120);
    const Image<float> tiny = random_plane(13, 13, 6);
    const Image<float> r_rnd = reference(m915, rnd), r_photo = reference(m915, photo),
                       r_tiny = reference(m915, tiny);
    for (const SrcnnOptions& o : forced_options()) {
        check_forward(m915, rnd, r_rnd, o, net_tol(o.precision), "915 random");
        check_forward(m915, photo, r_photo, o, net_tol(o.precision), "915 photo");
        check_forward(m915, tiny, r_tiny, o, net_tol(o.precision), "915 13x13");
    }
    // 9-5-5 (a 5x5 middle layer) and a small odd model.
    const SrcnnModel m955 = random_model(9, 5, 5, 64, 32, 202);
    const SrcnnModel modd = random_model(3, 3, 5, 7, 5, 303);
    const Image<float> small = random_plane(61, 47, 7);
    const Image<float> r955 = reference(m955, small), rodd = reference(modd, small);
    for (const SrcnnOptions& o : forced_options()) {
        if (o.layer_variants[1] == SrcnnVariant::RegisteredPixel) continue;  // 5x5x64 too big
        check_forward(m955, small, r955, o, net_tol(o.precision), "955 random");
        check_forward(modd, small, rodd, o, net_tol(o.precision), "odd random");
    }
}

// The cudnn variant (srcnn_cudnn.cu, libcudnn.so.9 loaded at run time): each layer of 9-1-5 and
// 9-5-5's middle layer against conv_reference (fp32: FMA math, no TF32; tf32), and the whole
// network forced to cudnn on device sub-views. Where the variant is unavailable (not built, or
// the library cannot be loaded) forcing it must be BackendUnavailable, then the test skips
// visibly with the reason.
TEST(SrcnnCudaCudnn, LayersAndNetworkMatchReference) {
    UPRES_REQUIRE_GPU();
    const std::string& why = srcnn::cuda::cudnn_unavailable_reason();
    if (!why.empty()) {
        const SrcnnLayer l = random_layer(64, 1, 9, 31, false);
        DevPlanes a(16, 16, 1), b(16, 16, 64);
        test::expect_error(
            [&] {
                srcnn::cuda::conv_layer(a.data(), b.data(), 16, 16, l, true, SrcnnVariant::Cudnn,
                                        SrcnnPrecision::Fp32, nullptr);
            },
            ErrorCode::BackendUnavailable, "cudnn");
        GTEST_SKIP() << "cudnn variant unavailable: " << why;
    }
    const VariantPrecision cases[] = {{SrcnnVariant::Cudnn, SrcnnPrecision::Fp32},
                                      {SrcnnVariant::Cudnn, SrcnnPrecision::Tf32}};
    for (const Size sz : {Size{257, 131}, Size{13, 13}, Size{7, 3}}) {
        check_layer({64, 1, 9}, sz, true, 11, cases);
        check_layer({32, 64, 1}, sz, true, 12, cases);
        check_layer({1, 32, 5}, sz, false, 13, cases);
    }
    check_layer({32, 64, 5}, {37, 29}, true, 21, cases);  // SRCNN 9-5-5's middle layer
    const SrcnnModel m = random_model(9, 1, 5, 64, 32, 101);
    const Image<float> photo = photo_plane("baboon.jpg", 40, 60, 160, 120);
    SrcnnOptions o;
    o.variant = SrcnnVariant::Cudnn;
    const SrcnnPlan plan =
        check_forward(m, photo, reference(m, photo), o, net_tol(o.precision), "915 photo");
    EXPECT_EQ(plan.layers[0], SrcnnVariant::Cudnn);
    o.precision = SrcnnPrecision::Fp16;  // fp16 storage: refused, naming the variant
    Image<float> din(32, 32, 1, Location::Device), dout(32, 32, 1, Location::Device);
    Context ctx;
    test::expect_error([&] { srcnn_forward(din.view(), dout.view(), m, o, ctx); },
                       ErrorCode::InvalidArgument, "'cudnn' runs only at precision fp32 or tf32");
}

TEST(SrcnnCudaForward, AutoEveryPrecisionMatchesReference) {
    UPRES_REQUIRE_GPU();
    const SrcnnModel m = random_model(9, 1, 5, 64, 32, 404);
    const Image<float> photo = photo_plane("baboon.jpg", 100, 20, 190, 143);
    const Image<float> ref = reference(m, photo);
    for (SrcnnPrecision p : {SrcnnPrecision::Fp32, SrcnnPrecision::Tf32, SrcnnPrecision::Fp16,
                             SrcnnPrecision::Bf16, SrcnnPrecision::Fastest}) {
        SrcnnOptions o;
        o.precision = p;
        const SrcnnPlan plan =
            check_forward(m, photo, ref, o, net_tol(SrcnnPrecision::Bf16), "auto");
        if (p == SrcnnPrecision::Fastest) {
            EXPECT_TRUE(std::find(srcnn::cuda::kFastestPrecisions.begin(),
                                  srcnn::cuda::kFastestPrecisions.end(),
                                  plan.precision) != srcnn::cuda::kFastestPrecisions.end())
                << "fastest resolved to " << to_string(plan.precision);
        } else {
            EXPECT_EQ(plan.precision, p);
            if (p != SrcnnPrecision::Bf16)
                check_forward(m, photo, ref, o, net_tol(p), "auto again");
        }
    }
}

TEST(SrcnnCudaForward, FusedWhenSupported) {
    UPRES_REQUIRE_GPU();
    const SrcnnModel m = random_model(9, 1, 5, 64, 32, 505);
    const Image<float> rnd = random_plane(257, 131, 8);
    const Image<float> ref = reference(m, rnd);
    int ran = 0;
    for (SrcnnPrecision p :
         {SrcnnPrecision::Fp32, SrcnnPrecision::Tf32, SrcnnPrecision::Fp16, SrcnnPrecision::Bf16}) {
        SrcnnOptions o;
        o.precision = p;
        o.variant = SrcnnVariant::FusedNetwork;
        if (!srcnn::cuda::fused_supports(m, p)) {
            Image<float> din(20, 20, 1, Location::Device), dout(20, 20, 1, Location::Device);
            Context ctx;
            test::expect_error([&] { srcnn_forward(din.view(), dout.view(), m, o, ctx); },
                               ErrorCode::InvalidArgument, "fused");
            continue;
        }
        const SrcnnPlan plan = check_forward(m, rnd, ref, o, net_tol(p), "fused");
        EXPECT_TRUE(plan.fused);
        ++ran;
    }
    std::printf("[ fused    ] %d precisions supported by the fused kernel\n", ran);
}

// ------------------------------------------------------------------ autotuner cache

TEST(SrcnnCudaAuto, PlanIsCachedInMemoryAndFileAndDeterministic) {
    UPRES_REQUIRE_GPU();
    namespace fs = std::filesystem;
    const fs::path dir =
        fs::temp_directory_path() / ("upres_srcnn_cuda_test_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    ::setenv("UPRES_CACHE_DIR", dir.c_str(), 1);
    const fs::path file = dir / "srcnn_autotune.tsv";
    const SrcnnModel m = random_model(9, 1, 5, 64, 32, 606);
    const int w = 300, h = 170;
    const Image<float> host = random_plane(w, h, 9);
    Image<float> din = clone(ImageView<const float>(host.view()), Location::Device);
    Image<float> dout(w, h, 1, Location::Device);
    Context ctx;
    SrcnnOptions o;
    o.precision = SrcnnPrecision::Fp16;  // its own key: no other test tunes fp16 at this size

    srcnn::cuda::autotune_forget();
    const int n0 = srcnn::cuda::autotune_count();
    const SrcnnPlan p1 = srcnn_forward(din.view(), dout.view(), m, o, ctx);
    EXPECT_EQ(srcnn::cuda::autotune_count(), n0 + 1) << "the first call tunes";
    const std::vector<float> out1 = host_plane(clone(ImageView<const float>(dout.view())));
    ASSERT_TRUE(fs::exists(file));
    std::ifstream f(file);
    std::string content((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    EXPECT_NE(content.find(srcnn::cuda::plan_string(p1)), std::string::npos) << content;

    // Memory hit: same plan, bit-identical output.
    const SrcnnPlan p2 = srcnn_forward(din.view(), dout.view(), m, o, ctx);
    EXPECT_EQ(srcnn::cuda::autotune_count(), n0 + 1);
    EXPECT_EQ(srcnn::cuda::plan_string(p2), srcnn::cuda::plan_string(p1));
    EXPECT_EQ(host_plane(clone(ImageView<const float>(dout.view()))), out1);

    // File hit (memory cache dropped): same plan, no tuning.
    srcnn::cuda::autotune_forget();
    const SrcnnPlan p3 = srcnn_forward(din.view(), dout.view(), m, o, ctx);
    EXPECT_EQ(srcnn::cuda::autotune_count(), n0 + 1);
    EXPECT_EQ(srcnn::cuda::plan_string(p3), srcnn::cuda::plan_string(p1));

    // A corrupt file is ignored (re-tuned) and rewritten.
    {
        std::ofstream g(file, std::ios::trunc);
        g << "garbage\x01\n\tno key\nkey\tnot a plan\n";
    }
    srcnn::cuda::autotune_forget();
    const SrcnnPlan p4 = srcnn_forward(din.view(), dout.view(), m, o, ctx);
    EXPECT_EQ(srcnn::cuda::autotune_count(), n0 + 2);
    EXPECT_EQ(p4.precision, SrcnnPrecision::Fp16);
    std::ifstream f2(file);
    std::string c2((std::istreambuf_iterator<char>(f2)), std::istreambuf_iterator<char>());
    EXPECT_EQ(c2.find("garbage"), std::string::npos) << c2;
    EXPECT_NE(c2.find(srcnn::cuda::plan_string(p4)), std::string::npos) << c2;
    std::printf("[ auto     ] fp16 %dx%d -> %s\n", w, h, srcnn::cuda::plan_string(p1).c_str());
    ::unsetenv("UPRES_CACHE_DIR");
    fs::remove_all(dir);
}

// ------------------------------------------------------------------ errors

TEST(SrcnnCudaErrors, VariantsThatCannotRunALayerAreRefused) {
    UPRES_REQUIRE_GPU();
    const SrcnnModel m = random_model(9, 1, 5, 64, 32, 707);
    Image<float> din(32, 32, 1, Location::Device), dout(32, 32, 1, Location::Device);
    copy(ImageView<const float>(random_plane(32, 32, 1).view()), din.view());
    Context ctx;
    auto run = [&](SrcnnOptions o) { srcnn_forward(din.view(), dout.view(), m, o, ctx); };
    SrcnnOptions o;
    o.variant = SrcnnVariant::RegisteredPixel;  // 9x9 first layer: 81 inputs per pixel
    test::expect_error([&] { run(o); }, ErrorCode::InvalidArgument, "layer 1");
    test::expect_error([&] { run(o); }, ErrorCode::InvalidArgument, "registered-pixel");
    o.variant = SrcnnVariant::Direct;
    o.precision = SrcnnPrecision::Fp16;
    test::expect_error([&] { run(o); }, ErrorCode::InvalidArgument, "fp16");
    o.variant = SrcnnVariant::Auto;
    o.layer_variants = {SrcnnVariant::Auto, SrcnnVariant::Direct, SrcnnVariant::Auto};
    test::expect_error([&] { run(o); }, ErrorCode::InvalidArgument, "layer 2");
    o.precision = SrcnnPrecision::Fp32;
    o.layer_variants = {SrcnnVariant::Auto, SrcnnVariant::FusedNetwork, SrcnnVariant::Auto};
    test::expect_error([&] { run(o); }, ErrorCode::InvalidArgument, "whole-network");
    o.layer_variants = {SrcnnVariant::Auto, SrcnnVariant::Auto, SrcnnVariant::Auto};
    // cudnn: refused where unavailable, else at a precision it does not run (SrcnnCudaCudnn
    // tests that it runs).
    o.variant = SrcnnVariant::Cudnn;
    if (!srcnn::cuda::cudnn_unavailable_reason().empty()) {
        test::expect_error([&] { run(o); }, ErrorCode::BackendUnavailable, "cudnn");
    } else {
        o.precision = SrcnnPrecision::Bf16;
        test::expect_error([&] { run(o); }, ErrorCode::InvalidArgument, "'cudnn' runs only");
        o.precision = SrcnnPrecision::Fp32;
    }

    const SrcnnLayer& l1 = m.layers[0];
    DevPlanes a(16, 16, 1), b(16, 16, 64);
    test::expect_error(
        [&] {
            srcnn::cuda::conv_layer(a.data(), b.data(), 16, 16, l1, true, SrcnnVariant::Auto,
                                    SrcnnPrecision::Fp32, nullptr);
        },
        ErrorCode::InvalidArgument, "not a per-layer variant");
    test::expect_error(
        [&] {
            srcnn::cuda::conv_layer(a.data(), b.data(), 16, 16, l1, true, SrcnnVariant::TensorCore,
                                    SrcnnPrecision::Fastest, nullptr);
        },
        ErrorCode::InvalidArgument, "concrete precision");
    test::expect_error(
        [&] {
            srcnn::cuda::conv_layer(a.data(), b.data(), 16, 16, l1, true,
                                    SrcnnVariant::SharedKernel, SrcnnPrecision::Bf16, nullptr);
        },
        ErrorCode::InvalidArgument, "bf16");
    // A 128 x 128 x 15 x 15 layer (14.7 MB of weights) does not fit in shared memory.
    const SrcnnLayer big = random_layer(128, 128, 15, 808, false);
    DevPlanes c(16, 16, 128), d(16, 16, 128);
    test::expect_error(
        [&] {
            srcnn::cuda::conv_layer(c.data(), d.data(), 16, 16, big, true,
                                    SrcnnVariant::SharedKernel, SrcnnPrecision::Fp32, nullptr);
        },
        ErrorCode::InvalidArgument, "shared memory");
}

// Intermediates that cannot fit: 256 feature planes of 16384 x 16384 fp32 (275 GB) is
// Error(OutOfMemory) naming the size, and the engine keeps working afterwards.
TEST(SrcnnCudaErrors, WorkspaceOutOfMemoryNamesTheSize) {
    UPRES_REQUIRE_GPU();
    const SrcnnModel wide = random_model(1, 1, 1, 128, 128, 909);
    const int n = 16384;
    Image<float> din(n, n, 1, Location::Device), dout(n, n, 1, Location::Device);
    SrcnnOptions o;
    o.variant = SrcnnVariant::TensorCore;
    Context ctx;
    test::expect_error([&] { srcnn_forward(din.view(), dout.view(), wide, o, ctx); },
                       ErrorCode::OutOfMemory, "MiB");
    // Still usable: a small plane runs and matches the reference.
    const SrcnnModel m = random_model(9, 1, 5, 64, 32, 910);
    const Image<float> host = random_plane(40, 30, 11);
    check_forward(m, host, reference(m, host), o, net_tol(o.precision), "after OOM");
}

// The whole-image pipeline on the device (colour conversion, bicubic, network, back to RGB)
// against the same pipeline on the Cpu backend: u8 RGB / RGBA, u16 gray + alpha and f32 RGB,
// host images in and out (one upload, one download) and device images in and out, including a
// device sub-view with a stride. fp32 networks agree to 1e-4 of the range, so the pixels agree
// to one level (a rounding tie flipped by float rounding) and floats to 2e-4.
template <class T>
void check_pipeline(int w, int h, int c, std::uint32_t seed, double tol) {
    const SrcnnModel m = random_model(9, 1, 5, 64, 32, seed);
    const Image<T> img = test::random_image<T>(w, h, c, seed + 1);
    const ImageView<const T> iv(img.view());
    Context cpu;
    cpu.backend = Backend::Cpu;
    Image<T> want(w * m.scale, h * m.scale, c);
    srcnn_upscale(iv, want.view(), m, SrcnnOptions{}, cpu);
    Context gpu;
    gpu.backend = Backend::Cuda;
    // Host in, host out.
    Image<T> got(w * m.scale, h * m.scale, c);
    const SrcnnPlan plan = srcnn_upscale(iv, got.view(), m, SrcnnOptions{}, gpu);
    EXPECT_EQ(plan.precision, SrcnnPrecision::Fp32);
    EXPECT_TRUE(
        test::images_near(ImageView<const T>(got.view()), ImageView<const T>(want.view()), tol))
        << "host in/out, " << w << "x" << h << "x" << c;
    // Device in (a sub-view of a wider image), device out; Auto follows the device data.
    Image<T> wide(w + 5, h + 2, c, Location::Device);
    const ImageView<T> sub = wide.view().sub(3, 1, w, h);
    copy(iv, sub);
    Image<T> dout(w * m.scale, h * m.scale, c, Location::Device);
    srcnn_upscale(ImageView<const T>(sub), dout.view(), m, SrcnnOptions{}, Context{});
    const Image<T> back = clone(dout.view(), Location::Host);
    EXPECT_TRUE(
        test::images_near(ImageView<const T>(back.view()), ImageView<const T>(want.view()), tol))
        << "device in/out, " << w << "x" << h << "x" << c;
}

TEST(SrcnnCudaPipeline, DeviceMatchesCpu) {
    UPRES_REQUIRE_GPU();
    check_pipeline<std::uint8_t>(37, 23, 3, 1201, 1.0);
    check_pipeline<std::uint8_t>(20, 31, 4, 1202, 1.0);
    check_pipeline<std::uint16_t>(19, 17, 2, 1203, 1.0);
    check_pipeline<float>(25, 18, 3, 1204, 2e-4);
    check_pipeline<std::uint8_t>(16, 16, 1, 1205, 1.0);
}

TEST(SrcnnCudaPipeline, WrongOutputAndHostBackendWithDeviceOutputAreErrors) {
    UPRES_REQUIRE_GPU();
    const SrcnnModel m = random_model(9, 1, 5, 64, 32, 1301);
    const Image<std::uint8_t> img = test::random_image<std::uint8_t>(20, 20, 3, 1302);
    Image<std::uint8_t> small(59, 60, 3);
    test::expect_error(
        [&] {
            srcnn_upscale(ImageView<const std::uint8_t>(img.view()), small.view(), m,
                          SrcnnOptions{}, Context{});
        },
        ErrorCode::InvalidArgument, "must be 60 x 60 x 3");
    Image<std::uint8_t> dout(60, 60, 3, Location::Device);
    Context cpu;
    cpu.backend = Backend::Cpu;
    test::expect_error(
        [&] {
            srcnn_upscale(ImageView<const std::uint8_t>(img.view()), dout.view(), m, SrcnnOptions{},
                          cpu);
        },
        ErrorCode::InvalidArgument, "device memory");
}

#else

TEST(SrcnnCuda, NotBuilt) { GTEST_SKIP() << "built without CUDA: skipped"; }

#endif

}  // namespace
}  // namespace upres
