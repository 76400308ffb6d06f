// Differential fuzzing of the backends: random images (sizes 1..40, 1-4 channels, u8 / u16 /
// f32, padded rows, sub-image views) and random options through the reference and the cpu
// backend (or, with --backend cuda, the cuda backend on host images, which it stages through
// the device) of warp (every transform kind, interpolation, border, fill, FIR prefilter,
// prefiltered coefficients, antialias, remap fields with non-finite entries unchecked), the
// B-spline prefilter (every border, FIR length, axis, in place), SEABI x2 (every method, both
// lattices), stereo (every cost, aggregation and post-filter, u8 / u16 / f32, gray and RGB),
// NLM-SR (1-4 frames, x2-x4, every patch / search / post-step) and the SRCNN network (random
// models: kernels 1-9, 1-32 / 1-16 channels, trained-like weights; planes from the receptive
// field up, NaN / Inf inputs refused alike), each compared within the tolerance
// docs/numerics.md states for that backend. A case both backends refuse with the same
// upres::Error code is fine; anything else is a failure, printed with its seed.
//
//   upres_diff_fuzz [--cases N (10000)] [--seed S (1)]
//                   [--ops warp,prefilter,seabi,stereo,nlmsr,srcnn]
//                   [--backend cpu|cuda (cpu)]
//
// CTest runs a short campaign; docs/reliability.md records the long ones.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <upres/bspline.hpp>
#include <upres/context.hpp>
#include <upres/image.hpp>
#include <upres/nlmsr.hpp>
#include <upres/seabi.hpp>
#include <upres/srcnn.hpp>
#include <upres/stereo.hpp>
#include <upres/warp.hpp>

#include "random_srcnn.hpp"

namespace {

using namespace upres;
using Rng = std::mt19937_64;

// The backend compared with the reference (--backend).
Backend g_backend = Backend::Cpu;
bool cuda() { return g_backend == Backend::Cuda; }

int uniform(Rng& r, int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(r); }
double real(Rng& r, double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(r);
}

// An image of w x h x c inside a larger buffer (a sub-image view with padded rows), random
// values: floats in [0, 1], integers over their whole range.
template <class T>
struct Buffer {
    Image<T> whole;
    ImageView<T> view;
};
template <class T>
Buffer<T> random_view(Rng& r, int w, int h, int c) {
    Buffer<T> b;
    const int px = uniform(r, 0, 3), py = uniform(r, 0, 2), extra = uniform(r, 0, 4);
    b.whole = Image<T>(w + px + extra, h + py + uniform(r, 0, 2), c);
    for (int y = 0; y < b.whole.height(); ++y)
        for (int i = 0; i < b.whole.width() * c; ++i) {
            T* row = b.whole.data() + std::ptrdiff_t{y} * b.whole.width() * c;
            if constexpr (std::is_same_v<T, float>)
                row[i] = static_cast<float>(real(r, 0.0, 1.0));
            else
                row[i] = static_cast<T>(uniform(r, 0, static_cast<int>(PixelTraits<T>::max_value)));
        }
    b.view = b.whole.view().sub(px, py, w, h);
    return b;
}

template <class T>
double max_diff(ImageView<const T> a, ImageView<const T> b) {
    double m = 0;
    for (int y = 0; y < a.height(); ++y)
        for (int i = 0; i < a.width() * a.channels(); ++i) {
            const double x = a.row(y)[i], z = b.row(y)[i];
            if (std::isnan(x) && std::isnan(z)) continue;
            if (std::isnan(x) != std::isnan(z)) return std::numeric_limits<double>::infinity();
            m = std::max(m, std::abs(x - z));
        }
    return m;
}

struct Tally {
    const char* op;
    long cases = 0, refused = 0, failures = 0;
    double worst = 0;  // max |diff| / tolerance
    void fail(std::uint64_t seed, const std::string& what) {
        if (++failures <= 10)
            std::printf("FAIL %s seed %llu: %s\n", op, (unsigned long long)seed, what.c_str());
    }
};

// Runs f(Backend) for both backends; returns false (and tallies) when they disagree about
// refusing the case.
template <class F>
bool both(Tally& t, std::uint64_t seed, F&& f) {
    int code[2] = {0, 0};
    const Backend bs[2] = {Backend::Reference, g_backend};
    for (int k = 0; k < 2; ++k) {
        try {
            f(bs[k]);
        } catch (const Error& e) {
            code[k] = static_cast<int>(e.code());
        }
    }
    if (code[0] != code[1]) {
        t.fail(seed, std::string("reference and ") + to_string(g_backend) +
                         " disagree about refusing (codes " + std::to_string(code[0]) + ", " +
                         std::to_string(code[1]) + ")");
        return false;
    }
    if (code[0] != 0) {
        ++t.refused;
        return false;
    }
    return true;
}

Context ctx_of(Backend b, Rng& r) {
    Context c;
    c.backend = b;
    c.threads = uniform(r, 0, 3);
    return c;
}

template <class T>
void warp_case(Tally& t, std::uint64_t seed) {
    Rng r(seed);
    const int w = uniform(r, 1, 40), h = uniform(r, 1, 40), c = uniform(r, 1, 4);
    const int ow = uniform(r, 1, 40), oh = uniform(r, 1, 40);
    Buffer<T> src = random_view<T>(r, w, h, c);
    WarpOptions o;
    o.interp = static_cast<Interp>(uniform(r, 0, 3));
    o.border = static_cast<Border>(uniform(r, 0, 4));
    o.fill = std::is_same_v<T, float> ? static_cast<float>(real(r, -0.5, 1.5))
                                      : static_cast<float>(uniform(r, 0, 300));
    if (o.interp == Interp::BSpline && uniform(r, 0, 3) == 0)
        o.prefilter = 2 * uniform(r, 1, 15) + 1;
    Image<float> field(ow, oh, 2);
    Transform tr;
    const int kind = uniform(r, 0, 5);
    if (kind == 0) {
        tr = Transform::make_rotation(real(r, -180, 180), w, h);
    } else if (kind == 1) {
        Affine a;
        for (double& m : a.m) m = real(r, -1.5, 1.5);
        a.m[2] = real(r, -10, w + 10);
        a.m[5] = real(r, -10, h + 10);
        tr = Transform::make_affine(a);
    } else if (kind == 2) {
        Homography hm;
        for (double& m : hm.h) m = real(r, -1, 1);
        hm.h[8] = 1;
        hm.h[6] = real(r, -0.01, 0.01);
        hm.h[7] = real(r, -0.01, 0.01);
        tr = Transform::make_perspective(hm);
    } else if (kind == 3) {
        tr = Transform::make_resize();
        o.antialias = (o.interp == Interp::Linear || o.interp == Interp::Cubic) && uniform(r, 0, 1);
    } else {
        const bool flow = kind == 5;
        for (int y = 0; y < oh; ++y)
            for (int x = 0; x < ow; ++x) {
                field(x, y, 0) = static_cast<float>(flow ? real(r, -3, 3) : real(r, -4, w + 4));
                field(x, y, 1) = static_cast<float>(flow ? real(r, -3, 3) : real(r, -4, h + 4));
                if (uniform(r, 0, 199) == 0) field(x, y, uniform(r, 0, 1)) = std::nanf("");
            }
        o.check_field = uniform(r, 0, 1) == 0;
        tr = flow ? Transform::make_flow(field.view()) : Transform::make_remap(field.view());
    }
    // prefiltered: the coefficients of the image (float sources only).
    Image<float> coeffs;
    ImageView<const T> in = src.view;
    if constexpr (std::is_same_v<T, float>) {
        if (o.interp == Interp::BSpline && uniform(r, 0, 4) == 0) {
            coeffs = Image<float>(w, h, c);
            PrefilterOptions po;
            po.border = o.border == Border::Constant ? Border::Mirror : o.border;
            bspline_prefilter(src.view, coeffs.view(), po);
            o.prefiltered = true;
            in = coeffs.view();
        }
    }
    Image<T> out[2] = {Image<T>(ow, oh, c), Image<T>(ow, oh, c)};
    int k = 0;
    if (!both(t, seed, [&](Backend b) {
            Rng rc(seed + 7);
            warp(in, out[k++ % 2].view(), tr, o, ctx_of(b, rc));
        }))
        return;
    // docs/numerics.md: cpu f32 2e-5, integers 1 level; cuda (exact path) f32 5e-4 (B-spline
    // 1e-3), u8 1 level, u16 16 levels (B-spline 24).
    double tol = std::is_same_v<T, float> ? 2e-5 * (1.0 + std::abs(o.fill)) : 1.0;
    if (cuda()) {
        const bool bs = o.interp == Interp::BSpline;
        if constexpr (std::is_same_v<T, float>)
            tol = (bs ? 1e-3 : 5e-4) * (1.0 + std::abs(o.fill));
        else if constexpr (std::is_same_v<T, std::uint16_t>)
            tol = bs ? 24.0 : 16.0;
    }
    const double d = max_diff<T>(out[0].view(), out[1].view());
    t.worst = std::max(t.worst, d / tol);
    if (!(d <= tol))
        t.fail(seed, "warp kind " + std::to_string(kind) + " " + to_string(o.interp) + " " +
                         to_string(o.border) + " " + std::to_string(w) + "x" + std::to_string(h) +
                         "x" + std::to_string(c) + " -> " + std::to_string(ow) + "x" +
                         std::to_string(oh) + ": |diff| " + std::to_string(d));
}

void prefilter_case(Tally& t, std::uint64_t seed) {
    Rng r(seed);
    const int w = uniform(r, 1, 40), h = uniform(r, 1, 40), c = uniform(r, 1, 4);
    Buffer<float> src = random_view<float>(r, w, h, c);
    PrefilterOptions o;
    o.border = static_cast<Border>(uniform(r, 0, 4));
    if (uniform(r, 0, 2) == 0) o.fir_length = 2 * uniform(r, 1, 15) + 1;
    o.axes = static_cast<PrefilterAxes>(uniform(r, 0, 2));
    const bool in_place = uniform(r, 0, 3) == 0;
    Image<float> out[2] = {Image<float>(w, h, c), Image<float>(w, h, c)};
    int k = 0;
    if (!both(t, seed, [&](Backend b) {
            Rng rc(seed + 7);
            Image<float>& dst = out[k++ % 2];
            if (in_place) {
                copy(ImageView<const float>(src.view), dst.view());
                bspline_prefilter(dst.view(), dst.view(), o, ctx_of(b, rc));
            } else {
                bspline_prefilter(src.view, dst.view(), o, ctx_of(b, rc));
            }
        }))
        return;
    const double tol = 2.5e-6;  // of the value range (1)
    const double d = max_diff<float>(out[0].view(), out[1].view());
    t.worst = std::max(t.worst, d / tol);
    if (!(d <= tol))
        t.fail(seed, std::string("prefilter ") + to_string(o.border) + " fir " +
                         std::to_string(o.fir_length) + " axes " + to_string(o.axes) + " " +
                         std::to_string(w) + "x" + std::to_string(h) + "x" + std::to_string(c) +
                         ": |diff| " + std::to_string(d));
}

void seabi_case(Tally& t, std::uint64_t seed) {
    Rng r(seed);
    const int w = uniform(r, 1, 40), h = uniform(r, 1, 40);
    Buffer<std::uint8_t> src = random_view<std::uint8_t>(r, w, h, 1);
    SeabiOptions o;
    o.method = static_cast<SeabiMethod>(uniform(r, 0, 2));
    o.max_iterations = uniform(r, 1, 6);
    o.lattice = uniform(r, 0, 1) ? Lattice::CoSited : Lattice::Centered;
    o.stripes = uniform(r, 0, 5);
    Image<std::uint8_t> out[2] = {Image<std::uint8_t>(2 * w, 2 * h, 1),
                                  Image<std::uint8_t>(2 * w, 2 * h, 1)};
    int k = 0;
    if (!both(t, seed, [&](Backend b) {
            Rng rc(seed + 7);
            seabi_upscale2(src.view, out[k++ % 2].view(), o, ctx_of(b, rc));
        }))
        return;
    const double d = max_diff<std::uint8_t>(out[0].view(), out[1].view());  // bit-identical
    t.worst = std::max(t.worst, d);
    if (d != 0)
        t.fail(seed, std::string("seabi ") + to_string(o.method) + " " + to_string(o.lattice) +
                         " " + std::to_string(w) + "x" + std::to_string(h) + ": |diff| " +
                         std::to_string(d));
}

template <class T>
void stereo_case(Tally& t, std::uint64_t seed) {
    Rng r(seed);
    const int w = uniform(r, 2, 40), h = uniform(r, 1, 30), c = uniform(r, 0, 1) ? 3 : 1;
    Buffer<T> left = random_view<T>(r, w, h, c), right = random_view<T>(r, w, h, c);
    StereoOptions o;
    o.num_disparities = uniform(r, 1, std::min(w, 24));
    o.min_disparity = uniform(r, -4, 4);
    o.cost = static_cast<StereoCost>(uniform(r, 0, 1));
    o.aggregation = static_cast<StereoAggregation>(uniform(r, 0, 4));
    o.box_size = 2 * uniform(r, 0, 5) + 1;
    o.max_cost = uniform(r, 0, 1) ? 255.0 : real(r, 1, 255);
    o.lr_check = uniform(r, -1, 2);
    o.subpixel = uniform(r, 0, 1) == 0;
    o.uniqueness = uniform(r, 0, 1) ? 0 : uniform(r, 1, 30);
    o.median = uniform(r, 0, 1) == 0;
    o.speckle_size = uniform(r, 0, 1) ? 0 : uniform(r, 1, 20);
    if (cuda()) o.speckle_size = 0;  // a host-only post-filter: cuda refuses it by name
    o.p1 = real(r, 1, 20);
    o.p2 = o.p1 + real(r, 1, 100);
    o.sgm_window = 2 * uniform(r, 0, 2) + 1;
    Image<float> d[2] = {Image<float>(w, h, 1), Image<float>(w, h, 1)};
    Image<float> rd[2] = {Image<float>(w, h, 1), Image<float>(w, h, 1)};
    Image<std::uint8_t> v[2] = {Image<std::uint8_t>(w, h, 1), Image<std::uint8_t>(w, h, 1)};
    int k = 0;
    if (!both(t, seed, [&](Backend b) {
            Rng rc(seed + 7);
            const int i = k++ % 2;
            stereo_disparity(ImageView<const T>(left.view), ImageView<const T>(right.view),
                             d[i].view(), o, ctx_of(b, rc), rd[i].view(), v[i].view());
        }))
        return;
    // Bit-identical (docs/numerics.md): maps (NaN where invalid), right map and mask.
    const double dd = std::max({max_diff<float>(d[0].view(), d[1].view()),
                                max_diff<float>(rd[0].view(), rd[1].view()),
                                max_diff<std::uint8_t>(v[0].view(), v[1].view())});
    t.worst = std::max(t.worst, dd);
    if (dd != 0)
        t.fail(seed, std::string("stereo ") + to_string(o.cost) + " " + to_string(o.aggregation) +
                         " " + std::to_string(w) + "x" + std::to_string(h) + "x" +
                         std::to_string(c) + ": |diff| " + std::to_string(dd));
}

void nlmsr_case(Tally& t, std::uint64_t seed) {
    Rng r(seed);
    const int w = uniform(r, 4, 24), h = uniform(r, 4, 24), n = uniform(r, 1, 4);
    std::vector<Buffer<float>> frames;
    std::vector<ImageView<const float>> views;
    for (int i = 0; i < n; ++i) frames.push_back(random_view<float>(r, w, h, 1));
    for (auto& f : frames) views.push_back(f.view);
    NlmsrOptions o;
    o.scale = uniform(r, 2, 4);
    o.patch = 2 * uniform(r, 0, 7) + 1;
    o.search = 2 * uniform(r, 0, 3) + 1;
    o.sigma = uniform(r, 0, 1) ? 0.0 : real(r, 2, 30);
    o.iterations = uniform(r, 1, 2);
    o.post = static_cast<NlmsrPost>(uniform(r, 0, 1));
    o.back_projections = uniform(r, 1, 3);
    // cuda: any of its variants (simple, shared, fast); the reference has only its own.
    const NlmsrVariant variant =
        cuda() ? static_cast<NlmsrVariant>(uniform(r, 0, 2)) : NlmsrVariant::Fast;
    Image<float> out[2] = {Image<float>(o.scale * w, o.scale * h, 1),
                           Image<float>(o.scale * w, o.scale * h, 1)};
    int k = 0;
    if (!both(t, seed, [&](Backend b) {
            Rng rc(seed + 7);
            NlmsrOptions ob = o;
            if (b == Backend::Cuda) ob.variant = variant;
            nlm_fuse(std::span<const ImageView<const float>>(views), out[k++ % 2].view(), ob,
                     ctx_of(b, rc));
        }))
        return;
    const double tol = 0.02 / 255.0;  // 0.02 8-bit levels on [0, 1] (upres/nlmsr.hpp)
    const double d = max_diff<float>(out[0].view(), out[1].view());
    t.worst = std::max(t.worst, d / tol);
    if (!(d <= tol))
        t.fail(seed, "nlmsr " + std::to_string(n) + " frames " + std::to_string(w) + "x" +
                         std::to_string(h) + " x" + std::to_string(o.scale) + " patch " +
                         std::to_string(o.patch) + " search " + std::to_string(o.search) +
                         " post " + to_string(o.post) + " variant " + to_string(variant) +
                         ": |diff| " + std::to_string(d));
}

// The SRCNN network (srcnn_forward) on one plane with a random model: weights N(0, sigma_l) as
// trained layers have them (layer 1 sigma in 1e-3 .. 0.1, later layers 0.5 / sqrt(taps) capped
// at 0.1), biases N(0, 0.02). Tolerance: cpu 1e-5, cuda fp32 1e-4 of the sum of the absolute
// values of the terms behind each output pixel.
void srcnn_case(Tally& t, std::uint64_t seed) {
    Rng r(seed);
    const int ks[3] = {2 * uniform(r, 0, 4) + 1, 2 * uniform(r, 0, 2) + 1,
                       2 * uniform(r, 0, 2) + 1};
    const int n1 = uniform(r, 1, 32), n2 = uniform(r, 1, 16);
    const double sigma1 = std::pow(10.0, real(r, -3.0, -1.0));
    const SrcnnModel m = test::random_srcnn_model(r, ks, n1, n2, sigma1, 2);
    const int rf = m.receptive_field();
    // Mostly at least the receptive field; sometimes smaller (both must refuse).
    const int lo = uniform(r, 0, 9) == 0 ? 1 : rf;
    const int w = uniform(r, lo, std::max(lo, 40)), h = uniform(r, lo, std::max(lo, 40));
    Buffer<float> in = random_view<float>(r, w, h, 1);
    if (uniform(r, 0, 19) == 0)  // a non-finite input pixel: refused by both
        in.view(uniform(r, 0, w - 1), uniform(r, 0, h - 1)) =
            uniform(r, 0, 1) ? std::numeric_limits<float>::quiet_NaN()
                             : std::numeric_limits<float>::infinity();
    Image<float> out[2] = {Image<float>(w, h, 1), Image<float>(w, h, 1)};
    int k = 0;
    // cuda: the direct kernels, which take every shape (Auto would autotune each random shape).
    SrcnnOptions so;
    if (cuda()) so.variant = SrcnnVariant::Direct;
    if (!both(t, seed, [&](Backend b) {
            Rng rc(seed + 7);
            srcnn_forward(ImageView<const float>(in.view), out[k++ % 2].view(), m,
                          b == Backend::Reference ? SrcnnOptions{} : so, ctx_of(b, rc));
        }))
        return;
    // Per pixel, relative to the sum of the absolute values of the terms the network adds up
    // (the same network with |weights|, |biases| on |input|: no cancellation, ReLU passes
    // everything): fp32 rounding grows with that sum, not with the output, which cancellation
    // can make arbitrarily small.
    SrcnnModel mag_model = m;
    for (SrcnnLayer& L : mag_model.layers) {
        for (float& v : L.weights) v = std::abs(v);
        for (float& v : L.bias) v = std::abs(v);
    }
    Image<float> mag(w, h, 1);
    Context rctx;
    rctx.backend = Backend::Reference;
    srcnn_forward(ImageView<const float>(in.view), mag.view(), mag_model, {}, rctx);
    const double rel = cuda() ? 1e-4 : 1e-5;
    double d = 0, tol = 0;
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            const double e = std::abs(double(out[0](x, y)) - out[1](x, y));
            const double tl = rel * mag(x, y) + 1e-12;
            if (e / tl > d / std::max(tol, 1e-300) || tol == 0) d = e, tol = tl;
        }
    t.worst = std::max(t.worst, d / tol);
    if (!(d <= tol))
        t.fail(seed, "srcnn " + std::to_string(ks[0]) + "-" + std::to_string(ks[1]) + "-" +
                         std::to_string(ks[2]) + " " + std::to_string(n1) + "/" +
                         std::to_string(n2) + " " + std::to_string(w) + "x" + std::to_string(h) +
                         ": |diff| " + std::to_string(d) + " (tolerance " + std::to_string(tol) +
                         ")");
}

}  // namespace

int main(int argc, char** argv) {
    long cases = 10000;
    std::uint64_t seed = 1;
    std::string ops = "warp,prefilter,seabi,stereo,nlmsr,srcnn";
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        if (a == "--cases")
            cases = std::atol(argv[i + 1]);
        else if (a == "--seed")
            seed = std::strtoull(argv[i + 1], nullptr, 10);
        else if (a == "--ops")
            ops = argv[i + 1];
        else if (a == "--backend")
            g_backend = parse_backend(argv[i + 1]);
        else {
            std::fprintf(stderr,
                         "usage: upres_diff_fuzz [--cases N] [--seed S] [--ops "
                         "warp,prefilter,seabi,stereo,nlmsr,srcnn] [--backend cpu|cuda]\n");
            return 2;
        }
    }
    struct Op {
        const char* name;
        std::function<void(Tally&, std::uint64_t)> run;
    };
    const Op all[] = {
        {"warp",
         [](Tally& t, std::uint64_t s) {
             switch (s % 3) {
                 case 0:
                     return warp_case<float>(t, s);
                 case 1:
                     return warp_case<std::uint8_t>(t, s);
                 default:
                     return warp_case<std::uint16_t>(t, s);
             }
         }},
        {"prefilter", prefilter_case},
        {"seabi", seabi_case},
        {"stereo",
         [](Tally& t, std::uint64_t s) {
             switch (s % 3) {
                 case 0:
                     return stereo_case<std::uint8_t>(t, s);
                 case 1:
                     return stereo_case<std::uint16_t>(t, s);
                 default:
                     return stereo_case<float>(t, s);
             }
         }},
        {"nlmsr", nlmsr_case},
        {"srcnn", srcnn_case},
    };
    if (g_backend != Backend::Cpu && g_backend != Backend::Cuda) {
        std::fprintf(stderr, "upres_diff_fuzz: --backend cpu or cuda\n");
        return 2;
    }
    if (cuda() && !cuda_available()) {
        std::printf("SKIPPED: --backend cuda without a CUDA device\n");
        return 77;
    }
    long failures = 0;
    for (const Op& op : all) {
        if (ops.find(op.name) == std::string::npos) continue;
        Tally t{op.name};
        const auto t0 = std::chrono::steady_clock::now();
        for (long i = 0; i < cases; ++i) {
            op.run(t, seed * 1000003ULL + static_cast<std::uint64_t>(i));
            ++t.cases;
        }
        const double s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::printf(
            "%-9s %s: %ld cases (%ld refused by both), worst |diff| / tolerance %.3g, %ld "
            "failures, %.1f s\n",
            op.name, to_string(g_backend), t.cases, t.refused, t.worst, t.failures, s);
        failures += t.failures;
    }
    return failures == 0 ? 0 : 1;
}
