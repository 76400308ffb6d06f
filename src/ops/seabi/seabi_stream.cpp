// Streaming SEABI (upres/seabi.hpp, SeabiStream): the paper's stripe pipeline (section 5) over
// rows that arrive in raster order. A window of input rows holds one batch of P stripes of S
// rows plus the 6 rows of halo above and below that the stages read (the cpu backend's stripe
// halo on either lattice); when the batch's last halo row has arrived, its P stripes run in
// parallel through cpu::seabi_stream_stripes (the same stripe code as the whole-image cpu
// backend, so with the exact total variation the bytes are the same) and the batch's output rows
// go to the sink. The window then keeps only the rows the next batch's halo needs. With the
// cuda backend each batch's window is uploaded and run through the CUDA kernels as one image
// with the whole image's threshold (run_cuda below).
#include <upres/seabi.hpp>

#include <algorithm>
#include <cstring>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include <upres/error.hpp>

#include "core/device_scope.hpp"
#include "core/dispatch.hpp"
#include "core/parallel.hpp"
#include "ops/seabi/seabi_backends.hpp"
#include "ops/seabi/seabi_math.hpp"

#if UPRES_HAVE_CUDA
#include "core/cuda_check.hpp"
#include "core/device_image.hpp"
#include "core/device_temp.hpp"
#include "ops/seabi/seabi_cuda.hpp"
#endif

namespace upres {

namespace {

constexpr int kHalo = 6;  // input rows above and below a stripe that its stages read

[[noreturn]] void fail(ErrorCode code, const std::string& msg) {
    throw Error(code, "seabi_stream: " + msg);
}

void check_rows(ImageView<const std::uint8_t> rows, int width, int left) {
    if (rows.height() == 0) return;
    if (rows.data() == nullptr) fail(ErrorCode::InvalidArgument, "the rows have no data");
    if (rows.on_device())
        fail(ErrorCode::InvalidArgument, "the rows are in device memory (allowed: host memory)");
    if (rows.channels() != 1 || rows.width() != width)
        fail(ErrorCode::InvalidArgument, "the rows are " + std::to_string(rows.width()) + " x " +
                                             std::to_string(rows.height()) + " x " +
                                             std::to_string(rows.channels()) + " but must be " +
                                             std::to_string(width) + " wide with 1 channel");
    if (rows.height() > left)
        fail(ErrorCode::InvalidArgument, std::to_string(rows.height()) + " rows pushed but only " +
                                             std::to_string(left) +
                                             " of the image's rows are left");
}

}  // namespace

// ---------------------------------------------------------------- total variation

SeabiTotalVariation::SeabiTotalVariation(int width, int height) : width_(width), height_(height) {
    if (width < 1 || height < 1)
        fail(ErrorCode::InvalidArgument, "the image is " + std::to_string(width) + " x " +
                                             std::to_string(height) + " (allowed: at least 1 x 1)");
    last_.resize(static_cast<std::size_t>(width));
}

void SeabiTotalVariation::push(ImageView<const std::uint8_t> rows) {
    check_rows(rows, width_, height_ - rows_);
    for (int i = 0; i < rows.height(); ++i) {
        const std::uint8_t* r = rows.row(i);
        if (rows_ > 0) sum_ += cpu::seabi_tv_rows(last_.data(), r, width_);
        std::memcpy(last_.data(), r, static_cast<std::size_t>(width_));
        ++rows_;
        if (rows_ == height_) sum_ += cpu::seabi_tv_rows(last_.data(), last_.data(), width_);
    }
}

std::int64_t SeabiTotalVariation::value() const {
    if (rows_ != height_)
        fail(ErrorCode::InvalidArgument, "the total variation needs all " +
                                             std::to_string(height_) + " rows, " +
                                             std::to_string(rows_) + " were pushed");
    return sum_;
}

// ---------------------------------------------------------------- the stream

struct SeabiStream::Impl {
    int w = 0, h = 0;
    SeabiStreamOptions o;
    Sink sink;
    int threads = 0;
    bool centered = true;
    bool cuda = false;  // each batch's window through the CUDA kernels as one image
    int pipelines = 0;
    void* stream = nullptr;
    Context ctx;    // the device the batches run on (Context::device)
    int batch = 0;  // input rows per batch: P S
    // Input window: rows [lo, lo + n) of the image, contiguous.
    std::vector<std::uint8_t> in;
    int lo = 0, n = 0, received = 0;
    int next = 0;  // first input row of the next batch
    std::vector<std::uint8_t> out;
    int emitted = 0;
    // Predicted threshold: total variation of the complete rows received so far.
    std::int64_t tv = 0;
    int tv_rows = 0;
    int threshold = 0;
    bool failed = false;

    std::uint8_t* row(int y) { return in.data() + static_cast<std::size_t>(y - lo) * w; }

    void add_row(const std::uint8_t* r) {
        std::memcpy(in.data() + static_cast<std::size_t>(n) * w, r, static_cast<std::size_t>(w));
        ++n;
        ++received;
        if (o.total_variation < 0) {  // the row above is complete now; the last row is its own
            const int y = received - 1;
            if (y > 0) {
                tv += cpu::seabi_tv_rows(row(y - 1), row(y), w);
                ++tv_rows;
            }
            if (y == h - 1) {
                tv += cpu::seabi_tv_rows(row(y), row(y), w);
                ++tv_rows;
            }
        }
    }

    bool ready() const { return next < h && received >= std::min(h, next + batch + kHalo); }

    // The window (rows [lo, lo + n), which holds the batch's halo or reaches the image's edge)
    // uploaded and run as one image with the whole image's threshold: the rows of [r0, r1) read
    // no row beyond 6 of theirs, so the window's clamped edges do not reach them and they come
    // out as the whole-image call's.
    void run_cuda(std::int64_t t, std::int64_t pixels, int r0, int r1) {
#if UPRES_HAVE_CUDA
        const ImageView<const std::uint8_t> win(in.data(), w, n, 1);
        const cuda::PooledImage<std::uint8_t> din = cuda::upload(win, stream, "seabi_stream");
        const cuda::PooledImage<std::uint8_t> dout(2 * w, 2 * n, 1, stream, "seabi_stream");
        SeabiOptions so;
        so.method = o.method;
        so.lattice = centered ? Lattice::Centered : Lattice::CoSited;
        const cuda::DeviceTemp ws(seabi::cuda_workspace_bytes(w, n, so.method),
                                  static_cast<cudaStream_t>(stream), "seabi_stream (workspace)");
        seabi::run_cuda_ws(span_of(din.cview()), span_of(dout.view()), so, ws.get(), false, stream,
                           t, pixels);
        copy(
            ImageView<const std::uint8_t>(dout.cview()).sub(0, 2 * (r0 - lo), 2 * w, 2 * (r1 - r0)),
            ImageView<std::uint8_t>(out.data(), 2 * w, 2 * (r1 - r0), 1), stream);
        UPRES_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)));
#else
        (void)t, (void)pixels, (void)r0, (void)r1;
#endif
    }

    void run_batch() {
        const int r0 = next, r1 = std::min(h, next + batch);
        const std::int64_t t = o.total_variation >= 0 ? o.total_variation : tv;
        const std::int64_t pixels =
            o.total_variation >= 0 ? std::int64_t{w} * h : std::int64_t{w} * tv_rows;
        threshold = seabi::make_threshold(t, pixels).t;
        if (cuda) {
            run_cuda(t, pixels, r0, r1);
        } else {
            const cpu::SeabiRowsIn src{in.data(), w, w, h, lo, lo + n};
            const cpu::SeabiRowsOut dst{out.data(), 2 * w, 2 * w, 2 * h, 2 * r0};
            cpu::seabi_stream_stripes(src, dst, o.method, centered, t, pixels, r0, r1,
                                      o.stripe_rows, threads);
        }
        const ImageView<const std::uint8_t> rows(out.data(), 2 * w, 2 * (r1 - r0), 1);
        sink(rows, 2 * r0);
        emitted = 2 * r1;
        next = r1;
        // Keep the rows the next batch's halo reads: [next - kHalo, ...).
        const int keep = std::max(lo, next - kHalo);
        const int drop = keep - lo;
        if (drop > 0) {
            std::memmove(in.data(), in.data() + static_cast<std::size_t>(drop) * w,
                         static_cast<std::size_t>(n - drop) * w);
            lo = keep;
            n -= drop;
        }
    }
};

SeabiStream::SeabiStream(int width, int height, const SeabiStreamOptions& opts, Sink sink,
                         const Context& ctx)
    : impl_(std::make_unique<Impl>()) {
    if (width < 1 || height < 1)
        fail(ErrorCode::InvalidArgument, "the image is " + std::to_string(width) + " x " +
                                             std::to_string(height) + " (allowed: at least 1 x 1)");
    if (width > kMaxDimension / 2)
        fail(ErrorCode::InvalidArgument,
             "the image is " + std::to_string(width) + " wide; the output's " +
                 std::to_string(2 * std::int64_t{width}) + " exceeds kMaxDimension (" +
                 std::to_string(kMaxDimension) + ")");
    if (height > (1 << 29))
        fail(ErrorCode::InvalidArgument,
             "the image is " + std::to_string(height) + " rows high (allowed: up to 2^29)");
    if (opts.method != SeabiMethod::LSeai && opts.method != SeabiMethod::SilSeabi)
        fail(ErrorCode::InvalidArgument,
             "method " +
                 std::string(enum_desc<SeabiMethod>().name_of(static_cast<int>(opts.method))) +
                 " cannot stream (allowed: lseai, silseabi; lseabi iterates over the whole image)");
    if (!enum_desc<Lattice>().contains(static_cast<int>(opts.lattice)))
        fail(ErrorCode::InvalidArgument, "unknown lattice " +
                                             std::to_string(static_cast<int>(opts.lattice)) +
                                             " (allowed: " + enum_desc<Lattice>().allowed() + ")");
    if (opts.stripe_rows < 1 || opts.stripe_rows > 65536)
        fail(ErrorCode::InvalidArgument,
             "stripe_rows is " + std::to_string(opts.stripe_rows) + " (allowed: 1 to 65536)");
    if (opts.first_row < 0 || opts.first_row >= height)
        fail(ErrorCode::InvalidArgument, "first_row is " + std::to_string(opts.first_row) +
                                             " (allowed: 0 to the height - 1, " +
                                             std::to_string(height - 1) + ")");
    if (opts.first_row > 0 && opts.total_variation < 0)
        fail(ErrorCode::InvalidArgument,
             "a stream that starts at row " + std::to_string(opts.first_row) +
                 " needs the exact total variation (the predicted threshold depends on every "
                 "row before it)");
    if (opts.pipelines < 0 || opts.pipelines > 4096)
        fail(ErrorCode::InvalidArgument, "pipelines is " + std::to_string(opts.pipelines) +
                                             " (allowed: 0 = one per thread, or 1 to 4096)");
    if (ctx.backend == Backend::Reference)
        fail(ErrorCode::BackendUnavailable,
             "streaming runs on the cpu or cuda backend, not reference (allowed: auto, cpu, "
             "cuda)");
    const Backend backend = resolve_backend(ctx, Location::Host, "seabi_stream");
    check_device(backend == Backend::Cuda ? ctx.device : -1, "seabi_stream");
    if (!sink) fail(ErrorCode::InvalidArgument, "no sink for the output rows");
    Impl& m = *impl_;
    m.w = width;
    m.h = height;
    m.o = opts;
    m.sink = std::move(sink);
    m.threads = ctx.threads;
    m.centered = opts.lattice != Lattice::CoSited;
    m.cuda = backend == Backend::Cuda;
    m.stream = ctx.cuda_stream;
    m.ctx = ctx;
    // Stripes per batch: one per thread on the cpu; on the GPU, 8 (its blocks are the
    // pipelines; a batch of 8 S rows keeps the launches busy, and the host buffers small next to
    // the CUDA runtime's own ~130 MB). Then the memory budget: fewer stripes per batch first,
    // then shorter stripes.
    int p = opts.pipelines > 0 ? opts.pipelines : m.cuda ? 8 : resolve_threads(ctx.threads);
    int sr = opts.stripe_rows;
    const bool cuda_path = m.cuda;
    const auto estimate = [&](int pp, int ss) {
        const double wd = width;
        double bytes = (double(pp) * ss + 2 * kHalo) * wd + 4.0 * pp * ss * wd;
        if (!cuda_path) bytes += pp * 16.0 * (ss + 9) * wd;  // the stages' per-thread buffers
        return bytes;
    };
    if (opts.max_memory > 0) {
        const double budget = static_cast<double>(opts.max_memory);
        while (p > 1 && estimate(p, sr) > budget) --p;
        while (sr > 1 && estimate(p, sr) > budget) sr = std::max(1, sr / 2);
        if (estimate(p, sr) > budget)
            fail(ErrorCode::InvalidArgument,
                 "an image " + std::to_string(width) + " wide needs about " +
                     std::to_string(static_cast<long long>(estimate(1, 1) / 1e6)) +
                     " MB even with one 1-row stripe; max_memory is " +
                     std::to_string(opts.max_memory / 1000000) + " MB");
    }
    m.o.stripe_rows = sr;
    m.pipelines = p;
    m.batch = static_cast<int>(std::min<std::int64_t>(height, std::int64_t{p} * sr));
    m.in.resize(static_cast<std::size_t>(m.batch + 2 * kHalo) * width);
    // A resumed stream: the rows before the halo of its first batch are never pushed (each
    // stripe's output reads 6 rows beyond its own, whatever the stripes: the bytes are the
    // whole stream's).
    m.next = opts.first_row;
    m.lo = m.received = std::max(0, opts.first_row - kHalo);
    m.emitted = 2 * opts.first_row;
    m.out.resize(static_cast<std::size_t>(2 * m.batch) * 2 * width);
}

SeabiStream::~SeabiStream() = default;

void SeabiStream::push(ImageView<const std::uint8_t> rows) {
    Impl& m = *impl_;
    if (m.failed) fail(ErrorCode::InvalidArgument, "the stream stopped after an earlier error");
    check_rows(rows, m.w, m.h - m.received);
    const DeviceScope device_scope(m.ctx, m.cuda ? Backend::Cuda : Backend::Cpu, "seabi_stream");
    try {
        for (int i = 0; i < rows.height(); ++i) {
            m.add_row(rows.row(i));
            while (m.ready()) m.run_batch();
        }
    } catch (...) {
        m.failed = true;
        throw;
    }
}

int SeabiStream::rows_in() const noexcept { return impl_->received; }
int SeabiStream::first_input_row() const noexcept {
    return std::max(0, impl_->o.first_row - kHalo);
}
int SeabiStream::rows_out() const noexcept { return impl_->emitted; }
std::size_t SeabiStream::buffer_bytes() const noexcept {
    return impl_->in.size() + impl_->out.size();
}
int SeabiStream::threshold() const noexcept { return impl_->threshold; }
int SeabiStream::stripe_rows() const noexcept { return impl_->o.stripe_rows; }
int SeabiStream::pipelines() const noexcept { return impl_->pipelines; }

}  // namespace upres
