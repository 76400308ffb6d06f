// Reproduction of Champagnat & Le Sant (2011), "Efficient cubic B-spline image interpolation on
// a GPU" (docs/ops/bspline_paper.md has the results and how to read them).
//
//   rotation_experiment [--data DIR] [--out DIR] [--backends cpu,cuda,reference]
//                       [--reference-firs 0,15] [--reps N] [--zooms 1,2,4,8,16]
//                       [--no-table1] [--no-timing] [--no-fig2] [--images a.jpg,b.jpg]
//
// Part 1 (paper Fig. 2): 36 successive 10-degree rotations (cubic B-spline, Border::Mirror,
// reshape=False) of real photos converted to gray float 0..255 (BT.601 weights on the 8-bit
// RGB), for the exact IIR prefilter and the FIR prefilter of every odd length 3..31; RMS error
// against the original over the whole image and over the centred disc of radius
// min(w, h) / 2 - 4 (a disc rotates onto itself, so only interpolation errors remain there; the
// corners are re-sampled from the mirrored outside at each step); and the largest |difference|
// from the IIR result of the same backend. Backends: cpu, cuda (CUDA prefilter, then the CUDA
// warp) and reference (for the lengths of
// --reference-firs: it is slow on purpose).
// Part 2 (paper Tables 1 and 3, and the speed goals of issue 3): CUDA event timings, median of
// --reps runs after warm-up, inputs rotated among enough sets to defeat the L2 cache.
// Writes <out>/rotation_fig2.csv, <out>/timing.csv and, per image, the gray original and the
// results after 36 rotations (IIR, FIR7, FIR11, FIR15; cuda) as .npy for the figures.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <upres/bspline.hpp>
#include <upres/context.hpp>
#include <upres/io.hpp>
#include <upres/warp.hpp>

#if UPRES_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "ops/bspline/bspline_backends.hpp"
#include "ops/warp/warp_backends.hpp"
#include "ops/warp/warp_cuda.hpp"
#endif

namespace {

using namespace upres;

std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ','))
        if (!item.empty()) out.push_back(item);
    return out;
}

Image<float> gray_of(const AnyImage& any) {
    const Image<std::uint8_t> rgb = any.to<std::uint8_t>();
    Image<float> g(rgb.width(), rgb.height(), 1);
    for (int y = 0; y < g.height(); ++y)
        for (int x = 0; x < g.width(); ++x) {
            if (rgb.channels() >= 3)
                g(x, y) = 0.299f * rgb(x, y, 0) + 0.587f * rgb(x, y, 1) + 0.114f * rgb(x, y, 2);
            else
                g(x, y) = rgb(x, y, 0);
        }
    return g;
}

struct Errors {
    double rms_full = 0, rms_disc = 0, max_full = 0, max_disc = 0;
};

// RMS of a - b (and max |a - b|) over the whole image and over the centred disc.
Errors diff(const Image<float>& a, const Image<float>& b) {
    const double cx = 0.5 * (a.width() - 1), cy = 0.5 * (a.height() - 1);
    const double r = 0.5 * std::min(a.width(), a.height()) - 4.0;
    double sf = 0, sd = 0;
    long nf = 0, nd = 0;
    Errors e;
    for (int y = 0; y < a.height(); ++y)
        for (int x = 0; x < a.width(); ++x) {
            const double d = static_cast<double>(a(x, y)) - b(x, y);
            sf += d * d, ++nf;
            e.max_full = std::max(e.max_full, std::abs(d));
            if ((x - cx) * (x - cx) + (y - cy) * (y - cy) <= r * r) {
                sd += d * d, ++nd;
                e.max_disc = std::max(e.max_disc, std::abs(d));
            }
        }
    e.rms_full = std::sqrt(sf / nf);
    e.rms_disc = std::sqrt(sd / nd);
    return e;
}

// 36 rotations by 10 degrees with the given backend ("cpu", "reference", "cuda").
Image<float> rotate36(const Image<float>& img, int fir, const std::string& backend) {
    const int w = img.width(), h = img.height();
    WarpOptions o;
    o.interp = Interp::BSpline;
    o.border = Border::Mirror;
    o.prefilter = fir;
    const Transform t = Transform::make_rotation(10.0, w, h);
    if (backend == "cpu" || backend == "reference") {
        Context ctx;
        ctx.backend = backend == "cpu" ? Backend::Cpu : Backend::Reference;
        Image<float> a = clone(img.view()), b(w, h, 1);
        for (int i = 0; i < 36; ++i) {
            warp(ImageView<const float>(a.view()), b.view(), t, o, ctx);
            std::swap(a, b);
        }
        return a;
    }
#if UPRES_HAVE_CUDA
    Image<float> a = clone(img.view(), Location::Device), b(w, h, 1, Location::Device);
    Context ctx;
    ctx.backend = Backend::Cuda;
    WarpPlan p;
    p.kind = Transform::Kind::Affine;
    for (int i = 0; i < 6; ++i) p.m[i] = t.affine.m[i];
    p.m[6] = 0, p.m[7] = 0, p.m[8] = 1;
    p.interp = Interp::BSpline;
    p.border = Border::Mirror;
    Image<float> coef(w, h, 1, Location::Device);
    for (int i = 0; i < 36; ++i) {
        {  // two passes: the CUDA prefilter, then the CUDA warp of the coefficients
            PrefilterOptions po;
            po.border = Border::Mirror;
            po.fir_length = fir;
            cuda::bspline_prefilter(span_of(ImageView<const float>(a.view())), span_of(coef.view()),
                                    po, nullptr);
            cuda::warp(span_of(ImageView<const float>(coef.view())), span_of(b.view()), p, nullptr);
        }
        std::swap(a, b);
    }
    synchronize(ctx);
    return clone(ImageView<const float>(a.view()));
#else
    (void)fir;
    throw Error(ErrorCode::BackendUnavailable, "built without CUDA");
#endif
}

void fig2(const std::vector<std::string>& images, const std::string& data, const std::string& out,
          const std::vector<std::string>& backends, const std::vector<int>& ref_firs) {
    std::vector<int> firs = {0};
    for (int L = 3; L <= 31; L += 2) firs.push_back(L);
    std::string csv_path = out + "/rotation_fig2.csv";
    FILE* csv = std::fopen(csv_path.c_str(), "w");
    if (!csv) throw Error(ErrorCode::IoError, "cannot write " + csv_path);
    std::fprintf(csv,
                 "image,backend,fir,rms_full,rms_disc,maxdiff_iir_full,maxdiff_iir_disc,"
                 "rms_vs_iir_disc\n");
    for (const std::string& name : images) {
        const Image<float> g = gray_of(read_image(data + "/" + name));
        const std::string stem = name.substr(0, name.find('.'));
        write_image(out + "/" + stem + "_gray.npy", ImageView<const float>(g.view()));
        std::printf("\n## %s (%d x %d), 36 x 10 degrees, B-spline, mirror\n\n", name.c_str(),
                    g.width(), g.height());
        std::printf(
            "| backend | prefilter | RMS full | RMS disc | max |x - IIR| full | "
            "max |x - IIR| disc |\n| --- | --- | --- | --- | --- | --- |\n");
        for (const std::string& be : backends) {
            Image<float> iir;
            for (int fir : firs) {
                if (be == "reference" &&
                    std::find(ref_firs.begin(), ref_firs.end(), fir) == ref_firs.end())
                    continue;
                Image<float> r = rotate36(g, fir, be);
                const Errors e = diff(r, g);
                Errors d;
                if (fir == 0) {
                    iir = clone(r.view());
                } else if (!iir.empty()) {
                    d = diff(r, iir);
                }
                std::fprintf(csv, "%s,%s,%d,%.6f,%.6f,%.6f,%.6f,%.6f\n", stem.c_str(), be.c_str(),
                             fir, e.rms_full, e.rms_disc, d.max_full, d.max_disc, d.rms_disc);
                std::fflush(csv);
                std::printf("| %s | %s | %.4f | %.4f | %.4f | %.4f |\n", be.c_str(),
                            fir == 0 ? "IIR" : ("FIR" + std::to_string(fir)).c_str(), e.rms_full,
                            e.rms_disc, d.max_full, d.max_disc);
                std::fflush(stdout);
                if (be == "cuda" && (fir == 0 || fir == 7 || fir == 11 || fir == 15))
                    write_image(out + "/" + stem + "_rot36_" +
                                    (fir == 0 ? std::string("iir") : "fir" + std::to_string(fir)) +
                                    ".npy",
                                ImageView<const float>(r.view()));
            }
        }
    }
    std::fclose(csv);
}

#if UPRES_HAVE_CUDA
#define CK(x)                                                                                  \
    do {                                                                                       \
        cudaError_t e_ = (x);                                                                  \
        if (e_ != cudaSuccess) {                                                               \
            std::fprintf(stderr, "CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, \
                         __LINE__);                                                            \
            std::exit(2);                                                                      \
        }                                                                                      \
    } while (0)

// Median time (ms) of fn(set) over reps event-timed runs after 5 warm-ups.
double time_ms(const std::function<void(int)>& fn, int sets, int reps) {
    for (int i = 0; i < 5; ++i) fn(i % sets);
    CK(cudaDeviceSynchronize());
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    std::vector<float> t;
    for (int i = 0; i < reps; ++i) {
        CK(cudaEventRecord(a));
        fn(i % sets);
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, a, b));
        t.push_back(ms);
    }
    CK(cudaGetLastError());
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(b));
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

struct DevBuf {
    float* p = nullptr;
    explicit DevBuf(std::size_t n) {
        CK(cudaMalloc(reinterpret_cast<void**>(&p), n * sizeof(float)));
    }
    DevBuf(DevBuf&& o) noexcept : p(o.p) { o.p = nullptr; }
    DevBuf(const DevBuf&) = delete;
    ~DevBuf() {
        if (p) cudaFree(p);
    }
};

void fill(float* p, std::size_t n, unsigned seed) {
    std::vector<float> h(n);
    unsigned s = seed * 2654435761u + 1u;
    for (auto& v : h) {
        s = s * 1664525u + 1013904223u;
        v = 0.05f + static_cast<float>(s >> 8) * (1.0f / 16777216.0f);
    }
    CK(cudaMemcpy(p, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
}

int sets_for(std::size_t bytes_per_set) {
    int dev = 0, l2 = 0;
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
    const std::size_t want = 4 * static_cast<std::size_t>(l2);
    return static_cast<int>(
        std::clamp<std::size_t>((want + bytes_per_set - 1) / bytes_per_set, 1, 12));
}

void timing(const std::string& out, int reps, const std::vector<int>& zooms, bool table1) {
    cudaDeviceProp prop{};
    CK(cudaGetDeviceProperties(&prop, 0));
    FILE* csv = std::fopen((out + "/timing.csv").c_str(), "w");
    std::fprintf(csv, "table,case,mode,ms,gbps,copy_frac\n");
    std::printf("\n## Timings on %s (CUDA events, median of %d)\n", prop.name, reps);

    // Copy bandwidth (read + write).
    double copy_bps = 0;
    {
        const std::size_t n = std::size_t{64} << 20;  // 256 MiB of floats
        DevBuf a(n), b(n);
        fill(a.p, n, 1);
        const double ms = time_ms(
            [&](int) {
                CK(cudaMemcpyAsync(b.p, a.p, n * sizeof(float), cudaMemcpyDeviceToDevice));
            },
            1, reps);
        copy_bps = 2.0 * n * sizeof(float) / (ms * 1e-3);
        std::printf("\ndevice copy (cudaMemcpy D2D, 256 MiB): %.3f ms, %.0f GB/s (read + write)\n",
                    ms, copy_bps / 1e9);
        std::fprintf(csv, "copy,d2d 256MiB,memcpy,%.5f,%.1f,1\n", ms, copy_bps / 1e9);
    }
    auto report = [&](const char* table, const std::string& cs, const std::string& mode, double ms,
                      double bytes) {
        const double gbps = bytes / (ms * 1e-3) / 1e9;
        std::printf("| %s | %s | %.4f | %.0f | %.0f%% |\n", cs.c_str(), mode.c_str(), ms, gbps,
                    100.0 * gbps * 1e9 / copy_bps);
        std::fprintf(csv, "%s,%s,%s,%.5f,%.1f,%.4f\n", table, cs.c_str(), mode.c_str(), ms, gbps,
                     gbps * 1e9 / copy_bps);
        std::fflush(csv);
        std::fflush(stdout);
    };

    // Table 1: prefilter alone.
    std::printf(
        "\n### Table 1: prefilter (rows + columns), float32, 1 channel, mirror\n\n"
        "| size | prefilter (variant) | ms | GB/s | of copy |\n| --- | --- | --- | --- | "
        "--- |\n");
    for (int n : {1024, 2048}) {
        if (!table1) break;
        const std::size_t px = static_cast<std::size_t>(n) * n;
        const int sets = sets_for(2 * px * sizeof(float));
        std::vector<DevBuf> a, b;
        for (int i = 0; i < sets; ++i) {
            a.emplace_back(px), b.emplace_back(px);
            fill(a.back().p, px, 10 + i);
        }
        for (int fir : {0, 11, 15}) {
            const PrefilterVariant vs_iir[] = {PrefilterVariant::Auto, PrefilterVariant::Recursive,
                                               PrefilterVariant::IirFused};
            const PrefilterVariant vs_fir[] = {PrefilterVariant::Auto, PrefilterVariant::FirShared,
                                               PrefilterVariant::FirFused};
            for (PrefilterVariant v : fir == 0
                                          ? std::vector<PrefilterVariant>(vs_iir, vs_iir + 3)
                                          : std::vector<PrefilterVariant>(vs_fir, vs_fir + 3)) {
                PrefilterOptions po;
                po.fir_length = fir;
                po.variant = v;
                const double ms = time_ms(
                    [&](int s) {
                        cuda::bspline_prefilter(Span2D<const float>{a[s].p, n, n, 1, n},
                                                Span2D<float>{b[s].p, n, n, 1, n}, po, nullptr);
                    },
                    sets, reps);
                report("1", std::to_string(n) + "^2",
                       (fir == 0 ? std::string("IIR") : "FIR" + std::to_string(fir)) + " (" +
                           to_string(v) + ")",
                       ms, 2.0 * px * sizeof(float));
            }
        }
    }

    // Rotation of 2048^2 (speed goals) and Table 3 (rotation and zooms to a 2048^2 output).
    const int N = 2048;
    struct Mode {
        std::string name;
        Interp interp;
        int fir;  // B-spline: 0 IIR, else FIR length
        bool texture;
    };
    const std::vector<Mode> modes = {
        {"nearest", Interp::Nearest, 0, false},
        {"bilinear", Interp::Linear, 0, false},
        {"bilinear texture", Interp::Linear, 0, true},
        {"Keys cubic", Interp::Cubic, 0, false},
        {"CBS IIR", Interp::BSpline, 0, false},
        {"CBS FIR15 unfused", Interp::BSpline, 15, false},
        {"CBS FIR15 texture", Interp::BSpline, 15, true},
        {"CBS IIR texture", Interp::BSpline, 0, true},
    };
    std::printf(
        "\n### Rotation 30 deg and zooms to 2048^2, float32, mirror (Table 3)\n\n"
        "| case | mode | ms | GB/s | of copy |\n| --- | --- | --- | --- | --- |\n");
    for (int z : zooms) {
        const int m = N / z;
        const std::size_t in_px = static_cast<std::size_t>(m) * m,
                          out_px = static_cast<std::size_t>(N) * N;
        const int sets = sets_for((2 * in_px + out_px) * sizeof(float));
        std::vector<DevBuf> src, coef, dst;
        for (int i = 0; i < sets; ++i) {
            src.emplace_back(in_px), coef.emplace_back(in_px), dst.emplace_back(out_px);
            fill(src.back().p, in_px, 100 + i);
        }
        WarpPlan p;
        p.border = Border::Mirror;
        if (z == 1) {
            const Affine a = rotation(30.0, N, N);
            p.kind = Transform::Kind::Affine;
            for (int i = 0; i < 6; ++i) p.m[i] = a.m[i];
        } else {
            p.kind = Transform::Kind::Resize;
            const double s = resize_coeff(m, N);
            const double mm[6] = {s, 0, 0.5 * s - 0.5, 0, s, 0.5 * s - 0.5};
            for (int i = 0; i < 6; ++i) p.m[i] = mm[i];
        }
        p.m[6] = 0, p.m[7] = 0, p.m[8] = 1;
        const std::string cs = z == 1 ? "rotate 2048^2" : "zoom x" + std::to_string(z);
        for (const Mode& md : modes) {
            if (z > 1 && (md.interp == Interp::Nearest || md.interp == Interp::Cubic ||
                          (md.texture && md.fir == 0 && md.interp == Interp::BSpline)))
                continue;
            WarpPlan q = p;
            q.interp = md.interp;
            q.fast_texture = md.texture;
            const double ms = time_ms(
                [&](int s) {
                    const Span2D<const float> in{src[s].p, m, m, 1, m};
                    const Span2D<float> o{dst[s].p, N, N, 1, N};
                    if (md.interp != Interp::BSpline) return cuda::warp(in, o, q, nullptr);
                    PrefilterOptions po;
                    po.border = Border::Mirror;
                    po.fir_length = md.fir;
                    cuda::bspline_prefilter(in, Span2D<float>{coef[s].p, m, m, 1, m}, po, nullptr);
                    cuda::warp(Span2D<const float>{coef[s].p, m, m, 1, m}, o, q, nullptr);
                },
                sets, reps);
            report("3", cs, md.name, ms, (in_px + out_px) * sizeof(float));
        }
    }
    std::fclose(csv);
}
#endif

}  // namespace

int main(int argc, char** argv) {
    std::string data = std::getenv("UPRES_DATA_DIR") ? std::getenv("UPRES_DATA_DIR") : "data";
    std::string out = ".";
    std::vector<std::string> backends = {"cpu"};
    std::vector<int> ref_firs = {0, 15};
    std::vector<std::string> images = {"baboon.jpg", "butterfly.jpg"};
    int reps = 50;
    std::vector<int> zooms = {1, 2, 4, 8, 16};
    bool table1 = true;
    bool do_timing = true, do_fig2 = true;
#if UPRES_HAVE_CUDA
    if (cuda_available()) backends = {"cpu", "cuda"};
#endif
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&]() -> std::string {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "%s needs a value\n", a.c_str());
                std::exit(1);
            }
            return argv[++i];
        };
        if (a == "--data") {
            data = next();
        } else if (a == "--out") {
            out = next();
        } else if (a == "--backends") {
            backends = split(next());
        } else if (a == "--reference-firs") {
            ref_firs.clear();
            for (const auto& s : split(next())) ref_firs.push_back(std::stoi(s));
        } else if (a == "--images") {
            images = split(next());
        } else if (a == "--reps") {
            reps = std::stoi(next());
        } else if (a == "--zooms") {
            zooms.clear();
            for (const auto& z : split(next())) zooms.push_back(std::stoi(z));
        } else if (a == "--no-table1") {
            table1 = false;
        } else if (a == "--no-timing") {
            do_timing = false;
        } else if (a == "--no-fig2") {
            do_fig2 = false;
        } else {
            std::fprintf(stderr,
                         "usage: rotation_experiment [--data DIR] [--out DIR] [--backends "
                         "cpu,cuda,reference] [--reference-firs 0,15] [--images "
                         "a.jpg,b.jpg] [--reps N] [--zooms 1,2,4,8,16] [--no-table1] [--no-timing] "
                         "[--no-fig2]\n");
            return 1;
        }
    }
    try {
        if (do_fig2) fig2(images, data, out, backends, ref_firs);
#if UPRES_HAVE_CUDA
        if (do_timing && cuda_available()) timing(out, reps, zooms, table1);
#else
        (void)reps;
        (void)do_timing;
        (void)zooms;
        (void)table1;
#endif
    } catch (const Error& e) {
        std::fprintf(stderr, "rotation_experiment: %s\n", e.what());
        return 1;
    }
    return 0;
}
