// upres::bspline_prefilter: validation and dispatch (the only #if UPRES_HAVE_CUDA of the op), and
// its tiled form, upres::bspline_prefilter_tiled.
#include <upres/bspline.hpp>
#include <upres/tiled.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>

#include "core/border_math.hpp"
#include "core/device_scope.hpp"
#include "core/dispatch.hpp"
#include "core/finite_scan.hpp"
#include "core/overlap.hpp"
#include "core/tiled_bands.hpp"
#include "ops/bspline/bspline_backends.hpp"
#include "ops/bspline/bspline_math.hpp"

#if UPRES_HAVE_CUDA
#include "core/device_image.hpp"
#include "core/finite_scan_cuda.hpp"
#endif

namespace upres {

namespace {

constexpr const char* kOp = "bspline_prefilter";

[[noreturn]] void fail(const std::string& msg) {
    throw Error(ErrorCode::InvalidArgument, std::string(kOp) + ": " + msg);
}

void check_fir_length(int n, const char* what) {
    if (n < 3 || n > bspline::kMaxFirLength || n % 2 == 0)
        throw Error(ErrorCode::InvalidArgument, std::string(what) + ": FIR length " +
                                                    std::to_string(n) +
                                                    " is not allowed (odd lengths 3..31)");
}

void check_options(const PrefilterOptions& o) {
    if (o.fir_length != 0) check_fir_length(o.fir_length, kOp);
    if (!is_known_border(o.border))
        fail("unknown border value " + std::to_string(static_cast<int>(o.border)));
    if (!enum_desc<PrefilterAxes>().contains(static_cast<int>(o.axes)))
        fail("unknown axes value " + std::to_string(static_cast<int>(o.axes)));
    if (o.axes != PrefilterAxes::Both &&
        (o.variant == PrefilterVariant::FirFused || o.variant == PrefilterVariant::IirFused))
        fail(std::string("variant ") + to_string(o.variant) +
             " filters both axes in one pass; axes " + to_string(o.axes) +
             " runs recursive (IIR) or fir-shared (FIR)");
    const bool iir = o.fir_length == 0;
    switch (o.variant) {
        case PrefilterVariant::Auto:
            return;
        case PrefilterVariant::Recursive:
        case PrefilterVariant::IirFused:
            if (!iir)
                fail(std::string("variant ") + to_string(o.variant) +
                     " computes the exact IIR prefilter (fir_length 0), but fir_length is " +
                     std::to_string(o.fir_length) + " (use fir-shared or fir-fused)");
            return;
        case PrefilterVariant::FirShared:
        case PrefilterVariant::FirFused:
            if (iir)
                fail(std::string("variant ") + to_string(o.variant) +
                     " needs an FIR length (odd 3..31); fir_length 0 is the exact IIR (use "
                     "recursive or iir-fused)");
            return;
    }
    fail("unknown prefilter variant value " + std::to_string(static_cast<int>(o.variant)));
}

std::string position(std::int64_t idx, int w, int nc) {
    const std::int64_t per_row = std::int64_t{w} * nc;
    const std::int64_t y = idx / per_row, r = idx % per_row;
    return "pixel (x " + std::to_string(r / nc) + ", y " + std::to_string(y) + ", channel " +
           std::to_string(r % nc) + ")";
}

void check_finite_host(const ImageView<const float>& v, int threads) {
    const std::int64_t bad = find_nonfinite_host(v.data(), std::ptrdiff_t{v.width()} * v.channels(),
                                                 v.height(), v.stride(), threads);
    if (bad >= 0) {
        const std::ptrdiff_t n = std::ptrdiff_t{v.width()} * v.channels();
        const float x = v.row(static_cast<int>(bad / n))[bad % n];
        fail(position(bad, v.width(), v.channels()) + " is " +
             (std::isnan(x) ? "NaN" : "infinite") + "; the prefilter needs finite values");
    }
}

#if UPRES_HAVE_CUDA
// The device prefilter of src into dst (device views). One axis runs the paper's separate-pass
// kernels: Recursive for the exact filter, FirShared for a FIR; in place through a copy of src.
void cuda_prefilter(ImageView<const float> src, ImageView<float> dst, const PrefilterOptions& opts,
                    void* stream) {
    if (opts.axes == PrefilterAxes::Both)
        return cuda::bspline_prefilter(span_of(src), span_of(dst), opts, stream);
    PrefilterOptions o = opts;
    o.variant = o.fir_length == 0 ? PrefilterVariant::Recursive : PrefilterVariant::FirShared;
    if (o.axes == PrefilterAxes::Y && o.variant == PrefilterVariant::Recursive) {
        // The recursive column kernel runs in place on dst.
        if (src.data() != dst.data()) copy(src, dst, stream);
        return cuda::bspline_prefilter_pass(span_of(src), span_of(dst), o, 1, stream);
    }
    std::optional<cuda::PooledImage<float>> tmp;
    if (src.data() == dst.data()) {
        tmp.emplace(src.width(), src.height(), src.channels(), stream,
                    "bspline_prefilter (in-place copy)");
        copy(src, tmp->view(), stream);
        src = tmp->cview();
    }
    cuda::bspline_prefilter_pass(span_of(src), span_of(dst), o, o.axes == PrefilterAxes::X ? 0 : 1,
                                 stream);
}
#endif

}  // namespace

void bspline_prefilter(ImageView<const float> src, ImageView<float> dst,
                       const PrefilterOptions& opts, const Context& ctx) {
    if (src.empty()) fail("the source image is empty");
    if (dst.empty()) fail("the destination image is empty");
    if (src.width() != dst.width() || src.height() != dst.height() ||
        src.channels() != dst.channels())
        fail("source " + std::to_string(src.width()) + "x" + std::to_string(src.height()) + "x" +
             std::to_string(src.channels()) + " and destination " + std::to_string(dst.width()) +
             "x" + std::to_string(dst.height()) + "x" + std::to_string(dst.channels()) +
             " differ in size or channels");
    if (src.channels() < 1 || src.channels() > kMaxChannels)
        fail(std::to_string(src.channels()) + " channels (1 to 4 allowed)");
    if (src.location() != dst.location())
        fail(std::string("source in ") + to_string(src.location()) + " memory but destination in " +
             to_string(dst.location()) + " memory (both must live in the same place)");
    const bool same = src.data() == dst.data() && src.stride() == dst.stride();
    if (!same && views_overlap(src, dst))
        fail("source and destination overlap (only the exact same view, in place, is allowed)");
    check_options(opts);

    const Backend b = resolve_backend(ctx, src.location(), kOp);
    const DeviceScope device_scope(ctx, b, kOp);
    if (b == Backend::Reference || b == Backend::Cpu) {
        check_finite_host(src, ctx.threads);
        if (b == Backend::Reference)
            ref::bspline_prefilter(span_of(src), span_of(dst), opts);
        else
            cpu::bspline_prefilter(span_of(src), span_of(dst), opts, ctx.threads);
        return;
    }
#if UPRES_HAVE_CUDA
    if (src.on_device()) {
        const std::int64_t bad = cuda::find_nonfinite_device(span_of(src), ctx.cuda_stream);
        if (bad >= 0)
            fail(position(bad, src.width(), src.channels()) +
                 " is not finite (NaN or infinite); the prefilter needs finite values");
        cuda_prefilter(src, dst, opts, ctx.cuda_stream);
        return;
    }
    // Host data on the CUDA backend: stage through device memory.
    check_finite_host(src, ctx.threads);
    const auto d = cuda::upload(src, ctx.cuda_stream, "bspline_prefilter (staging)");
    cuda_prefilter(d.cview(), d.view(), opts, ctx.cuda_stream);
    copy(d.cview(), dst, ctx.cuda_stream);
    synchronize(ctx);
#else
    throw Error(ErrorCode::BackendUnavailable, std::string(kOp) + ": built without CUDA");
#endif
}

namespace {

constexpr const char* kTiledOp = "bspline_prefilter_tiled";

// Rows of warm-up beyond a band's cut ends.
int tiled_warmup(const PrefilterOptions& opts) {
    return opts.axes == PrefilterAxes::X ? 0 : cpu::kBandWarmup;
}

void check_tiled_options(const PrefilterOptions& opts) {
    check_options(opts);
    if (opts.border == Border::Wrap)
        tiled::fail(kTiledOp,
                    "border wrap is not tiled (its prefilter couples the first and the last "
                    "rows); allowed: mirror, reflect, nearest, constant");
}

template <class T>
TiledStats prefilter_tiled_run(RowSource& src, RowSink& dst, const PrefilterOptions& opts,
                               const TiledOptions& to, const Context& ctx) {
    const int w = src.width(), h = src.height(), c = src.channels();
    // Rows along x only are independent: no warm-up (the band still starts on the row pass's
    // 8-row groups).
    const int warm = tiled_warmup(opts);
    const std::size_t px = std::is_same_v<T, float> ? 4 : 4 + sizeof(T);  // staging (+ input)
    const auto need = [&](int rows) {
        const int span = std::min(h, std::min(h, rows) + 2 * warm + 2 * cpu::kBandAlign);
        return static_cast<std::size_t>(span) * static_cast<std::size_t>(w) * c * px;
    };
    // Automatic budget: 64 MiB, or what bands of 256 rows need (very wide images; the warm-up,
    // 2 x 64 rows a band, would otherwise cost more than the band's own rows).
    const std::size_t budget =
        to.max_memory ? to.max_memory : std::max(std::size_t{64} << 20, need(256));
    const int band = tiled::band_rows(kTiledOp, to, w, h, c, budget, need);

    TiledStats st;
    st.band_rows = band;
    tiled::Rows<T> in;
    tiled::Rows<float> stage;
    const std::ptrdiff_t n = std::ptrdiff_t{w} * c;
    const int end = tiled::end_row(to, h);
    for (int y0 = to.first_row; y0 < end; y0 += band) {
        const int y1 = std::min(end, y0 + band);
        const auto [a, b] = cpu::prefilter_band_span(h, warm, y0, y1);
        stage.reset(b - a, n);
        if constexpr (std::is_same_v<T, float>) {
            src.read_rows(a, b - a, stage.buf.data(), stage.row);
            tiled::check_finite(kTiledOp, stage.buf.data(), w, c, a, b - a, stage.row, ctx.threads);
        } else {
            // Integers are converted from where they are when the source holds them in memory.
            std::ptrdiff_t in_row = 0;
            const T* inp = static_cast<const T*>(src.rows_in_memory(a, b - a, &in_row));
            if (!inp) {
                in.reset(b - a, n);
                src.read_rows(a, b - a, in.buf.data(), in.row);
                inp = in.buf.data(), in_row = in.row;
            }
            for (int r = 0; r < b - a; ++r)
                std::copy(inp + r * in_row, inp + r * in_row + n, stage.at(r));
        }
        st.rows_read += b - a;
        const Span2D<float> sb{stage.buf.data(), w, b - a, c, stage.row};
        const Span2D<const float> cb{sb.data, sb.width, sb.height, sb.channels, sb.stride};
        // Small bands on one thread: a parallel region costs more than the work (as warp_tiled).
        const int threads = std::int64_t{w} * (b - a) < (1 << 14) ? 1 : ctx.threads;
        cpu::bspline_prefilter_band(cb, sb, opts, threads, cpu::BandEnds{a > 0, b < h});
        st.buffer_bytes = std::max(
            st.buffer_bytes, in.buf.capacity() * sizeof(T) + stage.buf.capacity() * sizeof(float));
        dst.write_rows(y0, y1 - y0, stage.at(y0 - a), stage.row);
        ++st.bands;
        if (to.progress) to.progress(y1, h);
    }
    dst.commit();
    return st;
}

}  // namespace

TiledStats bspline_prefilter_tiled(RowSource& src, RowSink& dst, const PrefilterOptions& opts,
                                   const TiledOptions& topts, const Context& ctx) {
    tiled::check_call(kTiledOp, src, src.width(), src.height(), topts, ctx);
    check_tiled_options(opts);
    switch (src.type()) {
        case PixelType::U8:
            return prefilter_tiled_run<std::uint8_t>(src, dst, opts, topts, ctx);
        case PixelType::U16:
            return prefilter_tiled_run<std::uint16_t>(src, dst, opts, topts, ctx);
        case PixelType::F32:
            return prefilter_tiled_run<float>(src, dst, opts, topts, ctx);
    }
    tiled::fail(kTiledOp, "unknown pixel type");
}

RowRange bspline_prefilter_tiled_source_rows(int width, int height, const PrefilterOptions& opts,
                                             int y0, int y1) {
    tiled::check_side(kTiledOp, width, "the width");
    tiled::check_side(kTiledOp, height, "the height");
    tiled::check_range(kTiledOp, height, y0, y1);
    check_tiled_options(opts);
    const auto [a, b] = cpu::prefilter_band_span(height, tiled_warmup(opts), y0, y1);
    return {a, b};
}

std::vector<double> fir_prefilter_taps(int fir_length) {
    check_fir_length(fir_length, "fir_prefilter_taps");
    std::vector<double> t(static_cast<std::size_t>(fir_length));
    bspline::fir_taps(fir_length, t.data());
    return t;
}

double fir_prefilter_error_bound(int fir_length) {
    check_fir_length(fir_length, "fir_prefilter_error_bound");
    return bspline::fir_error_bound_2d(fir_length);
}

int fir_length_for_accuracy(double max_abs_error) {
    if (!(max_abs_error > 0) || !std::isfinite(max_abs_error))
        throw Error(ErrorCode::InvalidArgument,
                    "fir_length_for_accuracy: the error bound must be a positive finite number, "
                    "got " +
                        std::to_string(max_abs_error));
    for (int n = 3; n <= bspline::kMaxFirLength; n += 2)
        if (bspline::fir_error_bound_2d(n) <= max_abs_error) return n;
    throw Error(ErrorCode::InvalidArgument,
                "fir_length_for_accuracy: no FIR length up to 31 reaches a maximum error of " +
                    std::to_string(max_abs_error) + " (the bound for 31 taps is " +
                    std::to_string(bspline::fir_error_bound_2d(bspline::kMaxFirLength)) +
                    "; use the exact IIR prefilter, fir_length 0)");
}

}  // namespace upres
