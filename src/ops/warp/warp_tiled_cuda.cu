// warp_tiled on the CUDA backend, for zoom / resize (axis-aligned) maps: the output in bands of
// full rows, each computed on the device from the source rows its taps read, bit-identical to
// upres::warp with the cuda backend on the whole image.
//
// Per band: the source rows are read into page-locked host memory (or taken where an in-memory
// source keeps them: straight from there where they are page-locked, else copied into
// page-locked memory by several threads first), uploaded, staged as float (the B-spline:
// converted and edge-padded as warp.cpp's edge_padded does), prefiltered by the kernel the whole
// image's prefilter runs (cuda::prefilter_band_plan: its tiles or segments fall on the same rows,
// so every unit not at a cut end holds the whole call's coefficients), interpolated by the
// separable kernel with the band's row offsets (WarpPlan::out_row0, src_row0, src_rows) and
// downloaded into page-locked memory (or straight into an in-memory sink's rows where those are
// page-locked). Each device has a thread that feeds it bands (device d of n takes bands d, d + n,
// ...) through three slots with their own streams and buffers, and the caller's thread writes the
// bands to the sink in order as they come back: reading the source, the device's work and writing
// the sink overlap, and the devices share the bands.
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/convert_math.hpp"
#include "core/cuda_check.hpp"
#include "core/device_temp.hpp"
#include "core/host_staging.hpp"
#include "core/tiled_bands.hpp"
#include "core/tiled_devices.hpp"
#include "ops/bspline/bspline_backends.hpp"
#include "ops/warp/warp_backends.hpp"
#include "ops/warp/warp_cuda.hpp"
#include "ops/warp/warp_schedule.hpp"

namespace upres::cuda {

namespace {

constexpr const char* kOp = "warp_tiled";

// The devices of a run (-1: the caller's current device), the first one made current; the
// caller's current device is restored on the way out (the runs' threads set their own).
struct Devices {
    int current = 0;
    std::vector<int> list;
    explicit Devices(const std::vector<int>& devices) : list(devices) {
        UPRES_CUDA_CHECK(cudaGetDevice(&current));
        for (int& d : list)
            if (d < 0) d = current;
        UPRES_CUDA_CHECK(cudaSetDevice(list.front()));
    }
    ~Devices() { cudaSetDevice(current); }
    Devices(const Devices&) = delete;
    Devices& operator=(const Devices&) = delete;
};

// Element (x * c + ch, r) of the staged span box at (bx, by): the source pixel at column bx + x -
// pad and row by + r - pad, both clamped to the image (edge replication, as warp.cpp's
// edge_padded), from the image box at (ix, iy) held at `in`, as float (exact for u8 and u16).
template <class T>
__global__ void stage_box_kernel(const T* in, std::ptrdiff_t in_row, int ix, int iy, int sw, int sh,
                                 int c, int pad, int bx, int by, int bw, int bh, float* out,
                                 std::ptrdiff_t out_row) {
    const int e = blockIdx.x * blockDim.x + threadIdx.x;
    const int r = blockIdx.y;
    if (e >= bw * c || r >= bh) return;
    const int x = e / c, ch = e - x * c;
    const int sx = min(max(bx + x - pad, 0), sw - 1) - ix;
    const int sy = min(max(by + r - pad, 0), sh - 1) - iy;
    out[r * out_row + e] = static_cast<float>(in[sy * in_row + std::ptrdiff_t{sx} * c + ch]);
}

// The least free memory of the devices; leaves the first one current.
std::size_t least_free_memory(const std::vector<int>& devices) {
    std::size_t least = ~std::size_t{0};
    for (int d : devices) {
        std::size_t f = 0, total = 0;
        UPRES_CUDA_CHECK(cudaSetDevice(d));
        UPRES_CUDA_CHECK(cudaMemGetInfo(&f, &total));
        least = std::min(least, f);
    }
    UPRES_CUDA_CHECK(cudaSetDevice(devices.front()));
    return least;
}

struct Shape {
    int sw, sh, c, ow, oh, pad, span_w, span_h;
    bool bspline, prefilter, stage;
    int unit;  // prefilter_band_plan's row unit (0: the whole span in one band)
};

// The span rows [a, b) that output rows [y0, y1) need on the device.
std::pair<int, int> band_span(const cpu::ResizeRowReach& reach, const Shape& g, int y0, int y1) {
    auto [lo, hi] = reach.rows(y0, y1);
    if (lo > hi) lo = hi = 0;  // Constant: every row outside
    if (!g.prefilter) return {lo, hi + 1};
    if (g.unit == 0) return {0, g.span_h};
    // One whole unit beyond the units of [lo, hi] at each cut end: its coefficients are not the
    // whole call's (its warm-up crosses the cut), those of the units it shields are.
    return {std::max(0, lo / g.unit * g.unit - g.unit),
            std::min(g.span_h, (hi + g.unit) / g.unit * g.unit + g.unit)};
}

// The image rows [first, last) behind span rows [a, b).
std::pair<int, int> image_rows(const Shape& g, std::pair<int, int> s) {
    return {std::clamp(s.first - g.pad, 0, g.sh - 1),
            std::clamp(s.second - 1 - g.pad, 0, g.sh - 1) + 1};
}

struct Sizes {
    std::size_t in = 0, stage = 0, coef = 0, out = 0;  // bytes per slot
};

// A band's upload and compute are queued on `s`, its download on `down` after `computed`. With
// the download on `s` too, a slot's next upload (queued once the writer had released it) did not
// start before every download queued on the other slots had finished: on an H200 the download
// engine then idled 1.2 ms every three bands, and a 16000^2 x2 zoom took 43.6 ms of transfers and
// compute against 39.3 ms with the download apart (53.9 GB/s, the bus's download speed).
struct Slot {
    int device = 0;
    cudaStream_t s = nullptr, down = nullptr;
    cudaEvent_t computed = nullptr, done = nullptr;
    HostStaging in, out;  // page-locked (host_staging.hpp)
    DeviceTemp d_in, d_stage, d_coef, d_out;
    bool busy = false;  // a band is in it, not yet written to the sink (Shared::mu)
    explicit Slot(int dev) : device(dev) {
        UPRES_CUDA_CHECK(cudaSetDevice(dev));
        UPRES_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        UPRES_CUDA_CHECK(cudaStreamCreateWithFlags(&down, cudaStreamNonBlocking));
        UPRES_CUDA_CHECK(cudaEventCreateWithFlags(&computed, cudaEventDisableTiming));
        UPRES_CUDA_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
    }
    ~Slot() {
        // Work still queued (an error stopped the run) reads and writes the buffers: wait for it.
        cudaSetDevice(device);
        cudaStreamSynchronize(s);
        cudaStreamSynchronize(down);
        d_in = DeviceTemp(), d_stage = DeviceTemp(), d_coef = DeviceTemp(), d_out = DeviceTemp();
        cudaEventDestroy(done);
        cudaEventDestroy(computed);
        cudaStreamDestroy(down);
        cudaStreamDestroy(s);
    }
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
};

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Slots per device: one band being read into, one on the device, one being written to the sink.
constexpr int kSlots = 3;

// What the feeding threads (one per device) and the writing one (the caller's) share.
struct Shared {
    std::mutex mu;
    std::condition_variable cv;
    std::mutex reading;  // the source is read by one thread at a time
    bool stop = false;
    std::exception_ptr error;
    std::vector<Slot*> band_slot;  // per band: its slot once queued on the device (mu)
    void fail(std::exception_ptr e) {
        {
            const std::lock_guard<std::mutex> l(mu);
            if (!error) error = e;
            stop = true;
        }
        cv.notify_all();
    }
};

template <class T>
TiledStats run(RowSource& src, RowSink& dst, const WarpPlan& plan, const Shape& g,
               const PrefilterOptions& po, const PrefilterBandPlan& pb, const TiledOptions& to,
               const std::vector<int>& devices) {
    const int nd = static_cast<int>(devices.size());
    const cpu::ResizeRowReach reach(plan, g.span_h, 0, g.oh);
    const auto sizes = [&](int rows) {
        rows = std::min(g.oh, rows);
        int span = 0, img = 0;
        for (int y0 : {0, (g.oh - rows) / 2, g.oh - rows}) {
            const auto s = band_span(reach, g, y0, y0 + rows);
            const auto ir = image_rows(g, s);
            span = std::max(span, s.second - s.first);
            img = std::max(img, ir.second - ir.first);
        }
        // Bands elsewhere differ by a row or an aligned unit at most.
        span = std::min(g.span_h, span + g.unit + 2);
        img = std::min(g.sh, img + g.unit + 2);
        Sizes z;
        z.in = std::size_t{sizeof(T)} * img * g.sw * g.c;
        const std::size_t f = std::size_t{4} * span * g.span_w * g.c;
        z.stage = g.stage ? f : 0;
        z.coef = g.prefilter ? f : 0;
        z.out = std::size_t{sizeof(T)} * rows * g.ow * g.c;
        return z;
    };
    // The budget bounds the pinned host buffers (kSlots per device); each device holds about as
    // much again (the float staging and coefficients), which must fit its free memory.
    // Automatic: 512 MiB of host buffers per device, or what bands of 256 source rows of their
    // own need (the 2 units of prefilter warm-up per band are then a small part of its work).
    const std::size_t free_dev = least_free_memory(devices);
    const auto host_bytes = [&](const Sizes& z) {
        return std::size_t{kSlots} * nd * (z.in + z.out);
    };
    const auto device_bytes = [&](const Sizes& z) {
        return std::size_t{kSlots} * (z.in + z.stage + z.coef + z.out);
    };
    const auto need = [&](int rows) {
        const Sizes z = sizes(rows);
        // A band whose device buffers would not fit counts as over any budget.
        return device_bytes(z) > free_dev / 10 * 9 ? ~std::size_t{0} : host_bytes(z);
    };
    std::size_t budget = to.max_memory;
    if (budget == 0) {
        const int own = std::max(1, static_cast<int>(256.0 * g.oh / g.sh));
        budget = std::max((std::size_t{512} << 20) * nd, need(own));
    }
    const int band = tiled::band_rows(kOp, to, g.ow, g.oh, g.c, budget, need);
    if (need(band) == ~std::size_t{0})
        throw Error(ErrorCode::OutOfMemory, std::string(kOp) + ": a band of " +
                                                std::to_string(band) + " rows needs " +
                                                std::to_string(device_bytes(sizes(band)) >> 20) +
                                                " MiB of device memory, " +
                                                std::to_string(free_dev >> 20) + " MiB are free");
    const Sizes z = sizes(band);
    // Under 32 samples across, the prefilter runs whole columns (no bands): every band would
    // prefilter the whole image again.
    if (g.prefilter && g.unit == 0 && band < g.oh)
        throw Error(ErrorCode::InvalidArgument,
                    std::string(kOp) + ": on the cuda backend a B-spline source " +
                        std::to_string(g.span_w) + " x " + std::to_string(g.span_h) +
                        " (padded) needs at least 32 samples in each direction to be cut in "
                        "bands (its prefilter runs whole columns below that); use the cpu "
                        "backend, or one band (band_rows = the output's height)");

    TiledStats st;
    st.band_rows = band;
    const int end = tiled::end_row(to, g.oh);
    const int nbands = end > to.first_row ? (end - to.first_row + band - 1) / band : 0;
    // kSlots per device, or one per band where a device gets fewer (a task of upres.dask runs
    // one band: its page-locked buffers cost more time to allocate than to fill).
    const int per = std::clamp((nbands + nd - 1) / nd, 1, kSlots);
    st.buffer_bytes = host_bytes(z) / kSlots * per;
    st.device_bytes = device_bytes(z) / kSlots * per;
    // A sink that keeps the whole range in page-locked host memory takes each band's rows
    // straight from the device, and a source whose rows are in page-locked memory gives them
    // straight to it: no copy through the slots' host buffers (those are then not allocated).
    std::ptrdiff_t sink_row = 0;
    T* const sink_mem =
        end > to.first_row
            ? static_cast<T*>(dst.rows_in_memory(to.first_row, end - to.first_row, &sink_row))
            : nullptr;
    std::vector<std::unique_ptr<Slot>> slots;  // `per` per device, device by device
    for (int d : devices)
        for (int i = 0; i < per; ++i) {
            auto sl = std::make_unique<Slot>(d);
            sl->d_in = DeviceTemp(z.in, sl->s, "warp_tiled (band source rows)");
            if (z.stage) sl->d_stage = DeviceTemp(z.stage, sl->s, "warp_tiled (band staging)");
            if (z.coef) sl->d_coef = DeviceTemp(z.coef, sl->s, "warp_tiled (band coefficients)");
            sl->d_out = DeviceTemp(z.out, sl->s, "warp_tiled (band output)");
            slots.push_back(std::move(sl));
        }
    const std::ptrdiff_t in_row = std::ptrdiff_t{g.sw} * g.c;
    const std::ptrdiff_t out_row = std::ptrdiff_t{g.ow} * g.c;
    const std::ptrdiff_t span_row = std::ptrdiff_t{g.span_w} * g.c;
    // Rows in pageable memory are copied through the slots' page-locked buffers by several
    // threads: the driver copies pageable memory through its own staging, one thread per copy,
    // and the feeding thread waits for a download into pageable memory to finish. A 16000^2 u16
    // zoom x2 on an H200 (16 cores), pageable memory to pageable memory: 279 ms through the
    // driver, 86-91 ms staged, 40 ms from and to page-locked memory. The host's memory bounds the
    // staged copies (each byte crosses it three times, not once): 8, 12 or 16 writing threads
    // all took 84-93 ms, 4 took 121-133 ms. Not where a device has one band (a task of
    // upres.dask): its copies could not overlap the device's work, and page-locking its buffers
    // cost such a task more than its band's work; the driver copies those rows.
    const bool stage = per > 1;
    const bool stage_out = stage && sink_mem &&
                           !host_rows_page_locked(sink_mem, end - to.first_row,
                                                  sizeof(T) * sink_row, sizeof(T) * out_row);
    const int hw = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const int write_threads = std::min(hw, 8 * nd);  // the writer copies every device's bands
    const int feed_threads = std::clamp(hw / (2 * nd), 1, 4);
    Shared sh;
    sh.band_slot.assign(static_cast<std::size_t>(nbands), nullptr);
    std::int64_t rows_read = 0;  // both under sh.reading
    double read_seconds = 0;

    // Device d's thread: bands d, d + nd, ... into its slots in turn, each read from the source,
    // queued on the slot's stream and handed to the writer.
    const auto feed = [&](int d) {
        try {
            UPRES_CUDA_CHECK(cudaSetDevice(devices[static_cast<std::size_t>(d)]));
            int j = 0;
            for (int k = d; k < nbands; k += nd, ++j) {
                Slot& sl = *slots[static_cast<std::size_t>(d * per + j % per)];
                {
                    std::unique_lock<std::mutex> l(sh.mu);
                    sh.cv.wait(l, [&] { return !sl.busy || sh.stop; });
                    if (sh.stop) return;
                    sl.busy = true;
                }
                const int y0 = to.first_row + k * band, y1 = std::min(end, y0 + band);
                const auto span = band_span(reach, g, y0, y1);
                const auto [ia, ib] = image_rows(g, span);
                const int n = ib - ia;
                const int rows = span.second - span.first;
                if (std::size_t{sizeof(T)} * n * in_row > z.in ||
                    (g.bspline && std::size_t{4} * rows * span_row > std::max(z.stage, z.coef)))
                    throw Error(ErrorCode::Internal, std::string(kOp) + ": band at row " +
                                                         std::to_string(y0) +
                                                         " exceeds its buffers");
                const T* held = nullptr;  // the band's source rows in host memory
                std::ptrdiff_t held_stride = in_row;
                {
                    const std::lock_guard<std::mutex> l(sh.reading);
                    const auto t0 = Clock::now();
                    held = static_cast<const T*>(src.rows_in_memory(ia, n, &held_stride));
                    if (!held) {
                        sl.in.reserve(z.in);
                        src.read_rows(ia, n, sl.in.get(), in_row);
                        held = static_cast<const T*>(sl.in.get());
                        held_stride = in_row;
                    }
                    read_seconds += seconds_since(t0);
                    rows_read += n;
                }
                if (stage && held != sl.in.get() &&
                    !host_rows_page_locked(held, n, sizeof(T) * held_stride, sizeof(T) * in_row)) {
                    sl.in.reserve(z.in);
                    copy_rows_parallel(sl.in.get(), sizeof(T) * in_row, held,
                                       sizeof(T) * held_stride, sizeof(T) * in_row, n,
                                       feed_threads);
                    held = static_cast<const T*>(sl.in.get());
                    held_stride = in_row;
                }
                if constexpr (std::is_same_v<T, float>)
                    if (g.prefilter)
                        tiled::check_finite(kOp, held, g.sw, g.c, ia, n, held_stride, 0);
                UPRES_CUDA_CHECK(cudaMemcpy2DAsync(sl.d_in.as<T>(), sizeof(T) * in_row, held,
                                                   sizeof(T) * held_stride, sizeof(T) * in_row, n,
                                                   cudaMemcpyHostToDevice, sl.s));
                const Span2D<T> ob{sl.d_out.as<T>(), g.ow, y1 - y0, g.c, out_row};
                WarpPlan p = plan;
                p.schedule = WarpScheduleOverride::Separable;  // the only kernel that takes bands
                p.out_row0 = y0;
                p.src_row0 = span.first;
                p.src_rows = g.span_h;
                if (g.bspline) {
                    const float* coef_src = reinterpret_cast<const float*>(sl.d_in.as<T>());
                    if (g.stage) {
                        const dim3 grid(static_cast<unsigned>((span_row + 255) / 256),
                                        static_cast<unsigned>(rows));
                        stage_box_kernel<T><<<grid, 256, 0, sl.s>>>(
                            sl.d_in.as<T>(), in_row, 0, ia, g.sw, g.sh, g.c, g.pad, 0, span.first,
                            g.span_w, rows, sl.d_stage.as<float>(), span_row);
                        UPRES_CUDA_CHECK_LAUNCH();
                        coef_src = sl.d_stage.as<float>();
                    }
                    const Span2D<const float> cs{coef_src, g.span_w, rows, g.c, span_row};
                    if (g.prefilter) {
                        const Span2D<float> cd{sl.d_coef.as<float>(), g.span_w, rows, g.c,
                                               span_row};
                        bspline_prefilter_band(cs, cd, po, pb, sl.s);
                        warp(Span2D<const float>{cd.data, cd.width, cd.height, cd.channels,
                                                 cd.stride},
                             ob, p, sl.s);
                    } else {
                        warp(cs, ob, p, sl.s);
                    }
                } else {
                    warp(Span2D<const T>{sl.d_in.as<T>(), g.sw, rows, g.c, in_row}, ob, p, sl.s);
                }
                // The slot's previous download is done (the writer waited for it before it
                // released the slot), so the compute above did not overwrite rows in flight.
                UPRES_CUDA_CHECK(cudaEventRecord(sl.computed, sl.s));
                UPRES_CUDA_CHECK(cudaStreamWaitEvent(sl.down, sl.computed, 0));
                if (sink_mem && !stage_out) {
                    UPRES_CUDA_CHECK(cudaMemcpy2DAsync(
                        sink_mem + std::ptrdiff_t{y0 - to.first_row} * sink_row,
                        sizeof(T) * sink_row, ob.data, sizeof(T) * out_row, sizeof(T) * out_row,
                        y1 - y0, cudaMemcpyDeviceToHost, sl.down));
                } else {
                    sl.out.reserve(z.out);
                    UPRES_CUDA_CHECK(
                        cudaMemcpyAsync(sl.out.get(), ob.data,
                                        sizeof(T) * static_cast<std::size_t>(y1 - y0) * out_row,
                                        cudaMemcpyDeviceToHost, sl.down));
                }
                UPRES_CUDA_CHECK(cudaEventRecord(sl.done, sl.down));
                {
                    const std::lock_guard<std::mutex> l(sh.mu);
                    sh.band_slot[static_cast<std::size_t>(k)] = &sl;
                }
                sh.cv.notify_all();
            }
        } catch (...) {
            sh.fail(std::current_exception());
        }
    };
    std::vector<std::thread> feeders;
    try {
        for (int d = 0; d < nd; ++d) feeders.emplace_back(feed, d);
        // The caller's thread writes the bands in order as their devices finish them.
        for (int k = 0; k < nbands; ++k) {
            Slot* sl = nullptr;
            {
                std::unique_lock<std::mutex> l(sh.mu);
                sh.cv.wait(l, [&] {
                    return sh.band_slot[static_cast<std::size_t>(k)] != nullptr || sh.stop;
                });
                if (sh.stop) break;
                sl = sh.band_slot[static_cast<std::size_t>(k)];
            }
            auto t0 = Clock::now();
            UPRES_CUDA_CHECK(cudaEventSynchronize(sl->done));
            st.wait_seconds += seconds_since(t0);
            const int y0 = to.first_row + k * band, y1 = std::min(end, y0 + band);
            t0 = Clock::now();
            if (sink_mem) {  // the rows are in place: write_rows then copies nothing
                T* const rows = sink_mem + std::ptrdiff_t{y0 - to.first_row} * sink_row;
                if (stage_out)
                    copy_rows_parallel(rows, sizeof(T) * sink_row, sl->out.get(),
                                       sizeof(T) * out_row, sizeof(T) * out_row, y1 - y0,
                                       write_threads);
                dst.write_rows(y0, y1 - y0, rows, sink_row);
            } else {
                dst.write_rows(y0, y1 - y0, sl->out.get(), out_row);
            }
            st.write_seconds += seconds_since(t0);
            ++st.bands;
            if (to.progress) to.progress(y1, g.oh);
            {
                const std::lock_guard<std::mutex> l(sh.mu);
                sl->busy = false;
            }
            sh.cv.notify_all();
        }
    } catch (...) {
        sh.fail(std::current_exception());
    }
    for (std::thread& t : feeders) t.join();
    if (sh.error) std::rethrow_exception(sh.error);
    st.rows_read = rows_read;
    st.read_seconds = read_seconds;
    dst.commit();
    return st;
}

}  // namespace

TiledStats warp_resize_tiled(RowSource& src, RowSink& dst, int out_width, int out_height,
                             const WarpPlan& plan, bool prefilter, const PrefilterOptions& po,
                             const TiledOptions& to, const std::vector<int>& devices) {
    // The prefilter's kernel choice depends on the device (its SM count): the first one's, as
    // the whole call on it (the devices of one host are of one model).
    const Devices on(devices);
    const std::vector<int>& devs = on.list;
    Shape g{};
    g.sw = src.width(), g.sh = src.height(), g.c = src.channels();
    g.ow = out_width, g.oh = out_height;
    g.pad = plan.pad;
    g.span_w = g.sw + 2 * g.pad, g.span_h = g.sh + 2 * g.pad;
    g.bspline = plan.interp == Interp::BSpline;
    g.prefilter = g.bspline && prefilter;
    // The whole call stages (converts, pads) every B-spline source but a float one without pad.
    g.stage = g.bspline && (g.pad > 0 || src.type() != PixelType::F32);
    const PrefilterBandPlan pb =
        g.prefilter ? prefilter_band_plan(g.span_w, g.span_h, g.c, po) : PrefilterBandPlan{};
    g.unit = pb.unit;
    switch (src.type()) {
        case PixelType::U8:
            return run<std::uint8_t>(src, dst, plan, g, po, pb, to, devs);
        case PixelType::U16:
            return run<std::uint16_t>(src, dst, plan, g, po, pb, to, devs);
        case PixelType::F32:
            return run<float>(src, dst, plan, g, po, pb, to, devs);
    }
    throw Error(ErrorCode::InvalidArgument, std::string(kOp) + ": unknown pixel type");
}

}  // namespace upres::cuda

// ------------------------------------------------------------------ point maps in boxes
//
// warp_tiled on the cuda backend for affine maps, homographies and fields: bands of output rows
// cut into boxes of whole kernel tiles (kCudaBoxAlign), each computed from the span samples its
// kernels read (cuda_point_box): read from the source, uploaded, staged and prefiltered on its
// own where the whole call does (its prefilter kernel's units fall where the whole span's do, and
// two more units at each cut shield them), then interpolated by the kernel the whole call runs
// (its choices made for the whole output: WarpPlan::out_w) on whole-image coordinates
// (WarpPlan::box_x0; the source and output spans' data pointers offset onto the box buffers).
// Bit-identical to upres::warp on the cuda backend. Bands spread over the devices
// (tiled::run_state_bands): a device computes a band's boxes one after another on its stream.

namespace upres::cuda {

namespace {

// A row stride for n elements that keeps the whole call's alignment class: the kernels take
// vector paths where the stride is a multiple of 4 (and the data aligned), and the whole call's
// stride is the image's width times its channels (contiguous).
std::ptrdiff_t stride_like(std::ptrdiff_t n, std::ptrdiff_t whole) {
    return (n + 3) / 4 * 4 + (whole % 4 ? 1 : 0);
}

// p offset back by `elems` elements: whole-image coordinates then address the box buffer at p
// (only the box's elements are accessed).
template <class T>
T* shifted(T* p, std::ptrdiff_t elems) {
    return reinterpret_cast<T*>(reinterpret_cast<std::uintptr_t>(p) -
                                static_cast<std::uintptr_t>(elems * std::ptrdiff_t{sizeof(T)}));
}

// A stream of one device, for one worker's boxes.
struct Stream {
    int device = -1;
    cudaStream_t s = nullptr;
    Stream() = default;
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;
    void open(int dev) {
        if (s) return;
        device = dev;
        UPRES_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    }
    ~Stream() {
        if (!s) return;
        cudaSetDevice(device);
        cudaStreamSynchronize(s);
        cudaStreamDestroy(s);
    }
};

// What warp_points_tiled decided for the whole call.
struct PointCall {
    int sw, sh, c, ow, oh;
    Transform t;
    WarpOptions o;
    WarpPlan plan;
    bool rec = false;    // the recursive fused kernel (raw float image, its own prefilter)
    bool coef = false;   // boxes prefiltered here
    bool stage = false;  // boxes converted / edge-padded into float first
    PrefilterOptions po;
    PrefilterBandPlan pb;
    CudaBoxUnits units;
    int tile = 0;          // box width (a multiple of kCudaBoxAlign)
    bool windows = false;  // a BoxWindow per column of boxes (else one for all)
    int copy_threads = 1;  // threads that copy a box's pixels out of a pageable in-memory source
};

// The row stride of a box of source pixels `width` wide on the device: the whole image's
// alignment class, which the kernels' vector paths depend on.
std::ptrdiff_t box_stride(const PointCall& k, int width) {
    return stride_like(std::ptrdiff_t{width} * k.c, std::ptrdiff_t{k.sw} * k.c);
}

std::atomic<bool> g_box_windows{true};  // set_point_box_windows

// A box's source pixels kept on the device for the box of the next band in the same column of
// boxes, which then reads from the source only the pixels this one did not hold: a rotation's
// box moves by about a band's height, and the rest of it (80 to 90 % at the default sizes) is
// copied over on the device. Reading and uploading whole boxes took 1.87 of the 2.2 s of a
// 16384^2 RGB u8 rotation on an H200 (each source pixel read 12 times).
struct BoxWindow {
    DeviceTemp buf;
    Box region{0, 0, 0, 0};  // the image box it holds (empty: none)
    std::ptrdiff_t stride = 0;
    std::size_t bytes = 0;
};

template <class T>
struct PointState {
    Stream stream;
    std::vector<BoxWindow> windows;  // one per column of boxes (or one for all)
    DeviceTemp spare;                // the next box's buffer, traded with its window's
    std::size_t spare_bytes = 0;
    HostStaging staging;  // page-locked: the pixels a box reads from the source, uploaded from here
    cudaEvent_t staged = nullptr;  // the staging's last upload
    // Page-locked: the band's output rows, downloaded here (a download into pageable memory runs
    // through the driver's staging, 9.5 GB/s on an H200 against 54).
    HostStaging band;
    std::ptrdiff_t band_row = 0;  // elements
    T* band_at(int y) const {
        return static_cast<T*>(band.get()) + static_cast<std::ptrdiff_t>(y) * band_row;
    }
    PointState() = default;
    PointState(const PointState&) = delete;
    PointState& operator=(const PointState&) = delete;
    ~PointState() {
        if (!stream.s) return;
        cudaSetDevice(stream.device);
        cudaStreamSynchronize(stream.s);
        windows.clear();
        spare = DeviceTemp();
        if (staged) cudaEventDestroy(staged);
    }
    std::size_t device_bytes() const {
        std::size_t n = spare_bytes;
        for (const BoxWindow& w : windows) n += w.bytes;
        return n;
    }
};

// The source pixels of image box ib into window w on st's stream, with the row stride
// box_stride(k, ib.width()): the part of ib that w holds is copied on the device, the rest (up to
// four rectangles around it) read from src into st's page-locked staging and uploaded. Adds the
// pixels read to stats.
template <class T>
void fetch_box(const PointCall& k, RowSource& src, std::mutex& reading, Box ib, BoxWindow& w,
               PointState<T>& st, TiledStats& stats) {
    const cudaStream_t s = st.stream.s;
    const int c = k.c;
    const std::ptrdiff_t rs = box_stride(k, ib.width());
    const std::size_t bytes = sizeof(T) * static_cast<std::size_t>(rs) * ib.height();
    if (st.spare_bytes < bytes) {
        st.spare = DeviceTemp();
        st.spare_bytes = 0;
        st.spare = DeviceTemp(bytes, s, "warp_tiled (box source)");
        st.spare_bytes = bytes;
    }
    T* const to = st.spare.template as<T>();
    const auto at = [&](T* base, const Box& region, std::ptrdiff_t stride, int x, int y) {
        return base + std::ptrdiff_t{y - region.y0} * stride + std::ptrdiff_t{x - region.x0} * c;
    };
    const Box keep{std::max(w.region.x0, ib.x0), std::max(w.region.y0, ib.y0),
                   std::min(w.region.x1, ib.x1), std::min(w.region.y1, ib.y1)};
    Box parts[4];
    int n = 0;
    if (keep.empty()) {
        parts[n++] = ib;
    } else {
        UPRES_CUDA_CHECK(cudaMemcpy2DAsync(
            at(to, ib, rs, keep.x0, keep.y0), sizeof(T) * rs,
            at(w.buf.template as<T>(), w.region, w.stride, keep.x0, keep.y0), sizeof(T) * w.stride,
            sizeof(T) * keep.width() * c, keep.height(), cudaMemcpyDeviceToDevice, s));
        if (keep.y0 > ib.y0) parts[n++] = {ib.x0, ib.y0, ib.x1, keep.y0};
        if (keep.y1 < ib.y1) parts[n++] = {ib.x0, keep.y1, ib.x1, ib.y1};
        if (keep.x0 > ib.x0) parts[n++] = {ib.x0, keep.y0, keep.x0, keep.y1};
        if (keep.x1 < ib.x1) parts[n++] = {keep.x1, keep.y0, ib.x1, keep.y1};
    }
    std::size_t need = 0;
    for (int i = 0; i < n; ++i)
        need += sizeof(T) * static_cast<std::size_t>(parts[i].width()) * c * parts[i].height();
    if (need > 0) {
        if (st.staged) {
            UPRES_CUDA_CHECK(cudaEventSynchronize(st.staged));  // the staging is free again
        } else {
            UPRES_CUDA_CHECK(cudaEventCreateWithFlags(&st.staged, cudaEventDisableTiming));
        }
        st.staging.reserve(need);
        T* h = static_cast<T*>(st.staging.get());
        for (int i = 0; i < n; ++i) {
            const Box& b = parts[i];
            const int bw = b.width(), bh = b.height();
            const std::ptrdiff_t row = std::ptrdiff_t{bw} * c;
            // An in-memory source's pixels are uploaded from where they are if page-locked (no
            // copy on the host), else copied into the staging by several threads; other sources
            // read the box into the staging.
            std::ptrdiff_t mem_row = 0;
            const T* mem = nullptr;
            {
                const std::lock_guard<std::mutex> l(reading);
                mem = static_cast<const T*>(src.rows_in_memory(b.y0, bh, &mem_row));
                if (!mem) src.read_box(b.x0, b.y0, bw, bh, h, row);
            }
            const T* from = h;
            std::ptrdiff_t from_row = row;
            if (mem) {
                mem += std::ptrdiff_t{b.x0} * c;
                if (host_rows_page_locked(mem, bh, sizeof(T) * mem_row, sizeof(T) * row))
                    from = mem, from_row = mem_row;
                else
                    copy_rows_parallel(h, sizeof(T) * row, mem, sizeof(T) * mem_row,
                                       sizeof(T) * row, bh, k.copy_threads);
            }
            if constexpr (std::is_same_v<T, float>)
                if (k.coef || k.rec)
                    tiled::check_finite(kOp, from, bw, c, b.y0, bh, from_row, 0, b.x0);
            UPRES_CUDA_CHECK(cudaMemcpy2DAsync(at(to, ib, rs, b.x0, b.y0), sizeof(T) * rs, from,
                                               sizeof(T) * from_row, sizeof(T) * row, bh,
                                               cudaMemcpyHostToDevice, s));
            if (from == h) h += row * bh;
            stats.rows_read += bh;
            stats.pixels_read += std::int64_t{bw} * bh;
        }
        UPRES_CUDA_CHECK(cudaEventRecord(st.staged, s));
    }
    std::swap(w.buf, st.spare);
    std::swap(w.bytes, st.spare_bytes);
    w.region = ib;
    w.stride = rs;
}

// Box ob of outputs (whole kernel tiles) on stream s into dv (its data pointer offset so that
// whole-output coordinates address the box's buffer), from the source pixels of pb.image (its
// CudaPointBox, not empty) on the device at `raw` (rows of box_stride(k, width) elements). tt:
// the map, with ob's field for a remap or flow. Queued on s (the field is copied before this
// returns); the device bytes of its temporaries.
template <class T>
std::size_t box_compute(const PointCall& k, const Transform& tt, Box ob, const CudaPointBox& pb,
                        const T* raw, Span2D<T> dv, cudaStream_t s) {
    const int c = k.c;
    const Box& ib = pb.image;
    const std::ptrdiff_t rs = box_stride(k, ib.width());
    std::size_t box_bytes = 0;
    WarpPlan p = k.plan;
    p.box_x0 = ob.x0, p.box_y0 = ob.y0, p.out_w = k.ow, p.out_h = k.oh;
    DeviceTemp d_field;
    if (tt.kind == Transform::Kind::Remap || tt.kind == Transform::Kind::Flow) {
        const std::ptrdiff_t fs = std::ptrdiff_t{2} * ob.width();
        d_field = DeviceTemp(sizeof(float) * static_cast<std::size_t>(fs) * ob.height(), s,
                             "warp_tiled (box field)");
        UPRES_CUDA_CHECK(cudaMemcpy2DAsync(d_field.get(), sizeof(float) * fs, tt.field.data(),
                                           sizeof(float) * tt.field.stride(), sizeof(float) * fs,
                                           ob.height(), cudaMemcpyHostToDevice, s));
        p.field = Span2D<const float>{shifted(d_field.as<float>(), ob.y0 * fs + 2 * ob.x0), ob.x1,
                                      ob.y1, 2, fs};
        box_bytes += sizeof(float) * static_cast<std::size_t>(fs) * ob.height();
    }
    if (k.rec) {
        const Span2D<const float> sv{
            shifted(reinterpret_cast<const float*>(raw), ib.y0 * rs + ib.x0), k.sw, k.sh, 1, rs};
        warp_bspline_rec(
            sv, Span2D<float>{reinterpret_cast<float*>(dv.data), dv.width, dv.height, 1, dv.stride},
            p, 0, s);
    } else if (k.o.interp == Interp::BSpline) {
        const Box& sb = pb.span;
        const int bw = sb.width(), bh = sb.height();
        const int span_w = k.sw + 2 * p.pad, span_h = k.sh + 2 * p.pad;
        const std::ptrdiff_t fs = stride_like(std::ptrdiff_t{bw} * c, std::ptrdiff_t{span_w} * c);
        DeviceTemp d_stage, d_coef;
        const float* in = reinterpret_cast<const float*>(raw);
        std::ptrdiff_t in_row = rs;
        if (k.stage) {
            d_stage = DeviceTemp(sizeof(float) * static_cast<std::size_t>(fs) * bh, s,
                                 "warp_tiled (box staging)");
            const dim3 grid(static_cast<unsigned>((std::ptrdiff_t{bw} * c + 255) / 256),
                            static_cast<unsigned>(bh));
            stage_box_kernel<T><<<grid, 256, 0, s>>>(raw, rs, ib.x0, ib.y0, k.sw, k.sh, c, p.pad,
                                                     sb.x0, sb.y0, bw, bh, d_stage.as<float>(), fs);
            UPRES_CUDA_CHECK_LAUNCH();
            in = d_stage.as<float>(), in_row = fs;
            box_bytes += sizeof(float) * static_cast<std::size_t>(fs) * bh;
        }
        const float* cf = in;
        std::ptrdiff_t cf_row = in_row;
        if (k.coef) {
            d_coef = DeviceTemp(sizeof(float) * static_cast<std::size_t>(fs) * bh, s,
                                "warp_tiled (box coefficients)");
            bspline_prefilter_band(Span2D<const float>{in, bw, bh, c, in_row},
                                   Span2D<float>{d_coef.as<float>(), bw, bh, c, fs}, k.po, k.pb, s);
            cf = d_coef.as<float>(), cf_row = fs;
            box_bytes += sizeof(float) * static_cast<std::size_t>(fs) * bh;
        }
        const Span2D<const float> sv{shifted(cf, sb.y0 * cf_row + std::ptrdiff_t{sb.x0} * c),
                                     span_w, span_h, c, cf_row};
        warp(sv, dv, p, s);
    } else {
        const Span2D<const T> sv{shifted(raw, ib.y0 * rs + std::ptrdiff_t{ib.x0} * c), k.sw, k.sh,
                                 c, rs};
        warp(sv, dv, p, s);
    }
    return box_bytes;
}

// box_compute from the source pixels of pb.image at `pixels` (host memory, rows of `pixel_row`
// elements), uploaded first (copied before this returns); the device bytes it holds.
template <class T>
std::size_t point_box(const PointCall& k, const Transform& tt, Box ob, const CudaPointBox& pb,
                      const T* pixels, std::ptrdiff_t pixel_row, Span2D<T> dv, cudaStream_t s) {
    const Box& ib = pb.image;
    const std::ptrdiff_t rs = box_stride(k, ib.width());
    const std::size_t raw_bytes = sizeof(T) * static_cast<std::size_t>(rs) * ib.height();
    DeviceTemp d_raw(raw_bytes, s, "warp_tiled (box source)");
    UPRES_CUDA_CHECK(cudaMemcpy2DAsync(d_raw.get(), sizeof(T) * rs, pixels, sizeof(T) * pixel_row,
                                       sizeof(T) * ib.width() * k.c, ib.height(),
                                       cudaMemcpyHostToDevice, s));
    return raw_bytes + box_compute<T>(k, tt, ob, pb, d_raw.as<T>(), dv, s);
}

// Band [y0, y1)'s boxes on the worker's device into host rows `to` (`to_row` elements apart;
// nullptr: st.band), there when this returns.
template <class T>
void point_band(const PointCall& k, RowSource& src, std::mutex& reading, int y0, int y1,
                PointState<T>& st, TiledStats& stats, T* to, std::ptrdiff_t to_row) {
    const int c = k.c;
    const cudaStream_t s = st.stream.s;
    // Whole tiles of the kernels, as the whole call computes them: from the aligned row at or
    // above y0 to the aligned row at or below y1 (or the output's end); the rows outside [y0,
    // y1) are computed and not kept.
    const int ya = y0 / kCudaBoxAlign * kCudaBoxAlign;
    const int yb = std::min(k.oh, (y1 + kCudaBoxAlign - 1) / kCudaBoxAlign * kCudaBoxAlign);
    const std::ptrdiff_t out_row = std::ptrdiff_t{k.ow} * c;
    const std::size_t out_bytes = sizeof(T) * static_cast<std::size_t>(yb - ya) * out_row;
    DeviceTemp d_out(out_bytes, s, "warp_tiled (band output)");
    st.windows.resize(k.windows ? static_cast<std::size_t>((k.ow + k.tile - 1) / k.tile) : 1);
    std::vector<std::pair<int, int>> fills;  // boxes whose outputs are all the fill
    std::size_t dev_bytes = out_bytes;
    const bool field = k.t.kind == Transform::Kind::Remap || k.t.kind == Transform::Kind::Flow;
    for (int x0 = 0; x0 < k.ow; x0 += k.tile) {
        const int x1 = std::min(k.ow, x0 + k.tile);
        const Box ob{x0, ya, x1, yb};
        Transform tt = k.t;
        if (field) tt.field = k.t.field.sub(ob.x0, ob.y0, ob.width(), ob.height());
        const CudaPointBox pb = cuda_point_box(k.sw, k.sh, k.ow, k.oh, tt, k.o, ob, k.units);
        if (pb.span.empty()) {
            fills.emplace_back(x0, x1);
            continue;
        }
        BoxWindow& w = st.windows[k.windows ? static_cast<std::size_t>(x0 / k.tile) : 0];
        fetch_box<T>(k, src, reading, pb.image, w, st, stats);
        const Span2D<T> dv{shifted(d_out.as<T>(), ya * out_row), x1, yb, c, out_row};
        dev_bytes =
            std::max(dev_bytes, out_bytes + box_compute<T>(k, tt, ob, pb, w.buf.as<T>(), dv, s));
    }
    dev_bytes += st.device_bytes();
    if (!to) {
        st.band.reserve(sizeof(T) * static_cast<std::size_t>(y1 - y0) * out_row);
        st.band_row = out_row;
        to = st.band_at(0), to_row = out_row;
    }
    UPRES_CUDA_CHECK(cudaMemcpy2DAsync(
        to, sizeof(T) * to_row, d_out.as<T>() + std::ptrdiff_t{y0 - ya} * out_row,
        sizeof(T) * out_row, sizeof(T) * out_row, y1 - y0, cudaMemcpyDeviceToHost, s));
    UPRES_CUDA_CHECK(cudaStreamSynchronize(s));
    const T fill = saturate_from_float<T>(k.o.fill);
    for (const auto& [a, b] : fills)
        for (int y = 0; y < y1 - y0; ++y) {
            T* const r = to + std::ptrdiff_t{y} * to_row;
            std::fill(r + std::ptrdiff_t{a} * c, r + std::ptrdiff_t{b} * c, fill);
        }
    stats.device_bytes = std::max(stats.device_bytes, dev_bytes);
}

template <class T>
TiledStats run_points(RowSource& src, RowSink& dst, const PointCall& k, const TiledOptions& to,
                      const Context& ctx, const std::vector<int>& devices) {
    const int c = k.c;
    // Buffers of a band of `rows` output rows: its rows on the host and the device, and the
    // largest box (at the corners and the centre of the output) in its three forms. Boxes of
    // TiledOptions::tile_columns (rounded up to whole tiles), else at least 2048 columns: each
    // box's prefilter and kernels are launches of their own, and a box grows by two prefilter
    // units at each cut (up to 256 rows for the streaming kernel), so narrow boxes cost more in
    // launches and warm-up than in interpolation (16384^2 RGB rotation on an H200, boxes of 256
    // columns: 7.0 s, against 2.6 s for the cpu backend on 32 cores).
    TiledOptions ta = to;
    if (ta.band_align < kCudaBoxAlign) ta.band_align = kCudaBoxAlign;
    const auto tile_of = [&](int rows) {
        const int want = ta.tile_columns > 0 ? ta.tile_columns : std::max(rows, 2048);
        return std::max(kCudaBoxAlign, (want + kCudaBoxAlign - 1) / kCudaBoxAlign * kCudaBoxAlign);
    };
    // The most samples of a box of a band of `rows` rows.
    const auto largest_box = [&](int rows) {
        rows = std::min(k.oh, rows);
        const int side = tile_of(rows);
        std::size_t box = 0;
        for (int y0 : {0, (k.oh - rows) / 2, k.oh - rows})
            for (int x0 : {0, std::max(0, (k.ow - side) / 2), std::max(0, k.ow - side)}) {
                const int ya = y0 / kCudaBoxAlign * kCudaBoxAlign;
                const int yb =
                    std::min(k.oh, (y0 + rows + kCudaBoxAlign - 1) / kCudaBoxAlign * kCudaBoxAlign);
                const Box ob{x0, ya, std::min(k.ow, x0 + side), yb};
                Transform tt = k.t;
                if (k.t.kind == Transform::Kind::Remap || k.t.kind == Transform::Kind::Flow)
                    tt.field = k.t.field.sub(ob.x0, ob.y0, ob.width(), ob.height());
                const CudaPointBox pb =
                    cuda_point_box(k.sw, k.sh, k.ow, k.oh, tt, k.o, ob, k.units);
                box = std::max(box, static_cast<std::size_t>(pb.span.width()) * pb.span.height());
            }
        return box;
    };
    const auto need = [&](int rows) {
        rows = std::min(k.oh, rows);
        const std::size_t box = largest_box(rows);
        const std::size_t band =
            static_cast<std::size_t>(rows + kCudaBoxAlign) * k.ow * c * sizeof(T);
        return devices.size() * (2 * band + box * c * (2 * sizeof(T) + 2 * sizeof(float)));
    };
    std::size_t budget = to.max_memory;
    if (budget == 0) budget = std::max((std::size_t{256} << 20) * devices.size(), need(256));
    PointCall kk = k;
    const int hw = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    kk.copy_threads = std::clamp(hw / static_cast<int>(2 * devices.size()), 1, 8);
    const int band = tiled::band_rows(kOp, ta, k.ow, k.oh, c, budget, need);
    kk.tile = tile_of(band);
    // A window per column of boxes where they fit in a quarter of every device's free memory
    // (the band's buffers, a fraction of that, come on top); else one window for all boxes, which
    // keeps what neighbouring boxes share.
    {
        const std::size_t columns = static_cast<std::size_t>((k.ow + kk.tile - 1) / kk.tile);
        const std::size_t windows = (columns + 1) * largest_box(band) * c * sizeof(T);
        kk.windows = g_box_windows.load() && windows <= least_free_memory(devices) / 4;
    }
    const int end = tiled::end_row(to, k.oh);
    const int bands = end > to.first_row ? (end - to.first_row + band - 1) / band : 0;
    std::mutex reading;
    using Worker = tiled::StateWorker<PointState<T>>;
    const auto y0_of = [&](int b) { return to.first_row + b * band; };
    const auto y1_of = [&](int b) { return std::min(end, y0_of(b) + band); };
    // A sink that keeps the rows in page-locked memory takes each band's rows straight from the
    // device; one in pageable memory gets them from the band's page-locked block by several
    // threads (a band is written before its device computes the next); others from the block.
    std::ptrdiff_t sink_row = 0;
    T* const sink_mem =
        bands > 0 ? static_cast<T*>(dst.rows_in_memory(to.first_row, end - to.first_row, &sink_row))
                  : nullptr;
    const auto sink_at = [&](int y) {
        return sink_mem + std::ptrdiff_t{y - to.first_row} * sink_row;
    };
    const bool direct =
        sink_mem && host_rows_page_locked(sink_mem, end - to.first_row, sizeof(T) * sink_row,
                                          sizeof(T) * static_cast<std::size_t>(k.ow) * c);
    const int write_threads = std::min(hw, 8 * static_cast<int>(devices.size()));
    const auto compute = [&](int b, Worker& wk) {
        int dev = wk.ctx.device;
        if (dev < 0) UPRES_CUDA_CHECK(cudaGetDevice(&dev));
        UPRES_CUDA_CHECK(cudaSetDevice(dev));
        wk.state.stream.open(dev);
        point_band<T>(kk, src, reading, y0_of(b), y1_of(b), wk.state, wk.stats,
                      direct ? sink_at(y0_of(b)) : nullptr, sink_row);
        wk.stats.buffer_bytes =
            std::max(wk.stats.buffer_bytes, wk.state.band.bytes() + wk.state.staging.bytes());
    };
    const auto write = [&](int b, Worker& wk) {
        const int y0 = y0_of(b), n = y1_of(b) - y0;
        if (sink_mem) {  // the rows in place: write_rows then copies nothing
            if (!direct)
                copy_rows_parallel(sink_at(y0), sizeof(T) * sink_row, wk.state.band_at(0),
                                   sizeof(T) * wk.state.band_row,
                                   sizeof(T) * static_cast<std::size_t>(k.ow) * c, n,
                                   write_threads);
            dst.write_rows(y0, n, sink_at(y0), sink_row);
        } else {
            dst.write_rows(y0, n, wk.state.band_at(0), wk.state.band_row);
        }
        ++wk.stats.bands;
        if (to.progress) to.progress(y1_of(b), k.oh);
    };
    TiledStats st = tiled::run_state_bands<PointState<T>>(bands, devices, ctx, compute, write);
    st.band_rows = band;
    dst.commit();
    return st;
}

// The kernels read up to kIirHalo + 2 (the recursive kernel's box), 15 + 2 (its fallback's FIR
// taps) or 4 + 3 samples (the tiled kernel's box, 16-byte aligned) beyond the taps.
constexpr int kPointMargin = 24;

// The whole call's choices for a point map of a sw x sh x c source of `type` into ow x oh, on
// the current device.
PointCall point_call(int sw, int sh, int c, int ow, int oh, PixelType type, const Transform& t,
                     const WarpOptions& opts) {
    PointCall k{};
    k.sw = sw, k.sh = sh, k.c = c, k.ow = ow, k.oh = oh;
    k.t = t, k.o = opts;
    k.plan = make_warp_plan(t, opts, sw, sh, ow, oh);
    const bool bspline = opts.interp == Interp::BSpline;
    const bool prefilter = bspline && !opts.prefiltered;
    // As warp.cpp's warp_run: the recursive fused kernel where the policy lists it first and the
    // plan's boxes fit.
    k.rec = prefilter && type == PixelType::F32 &&
            warp_schedule::candidates(warp_schedule::case_of(k.plan, PixelType::F32, PixelType::F32,
                                                             c, opts.prefilter))[0] ==
                warp_schedule::Kernel::RecFused &&
            warp_rec_preferred(k.plan, sw, sh, ow, oh, c, opts.prefilter);
    k.coef = prefilter && !k.rec;
    k.stage = bspline && !k.rec && (k.plan.pad > 0 || type != PixelType::F32);
    k.units.margin = kPointMargin;
    k.units.tile = kCudaBoxAlign;
    k.units.coefficients = k.coef;
    if (k.coef) {
        k.po.border = k.plan.pad > 0 ? Border::Mirror : tap_border(opts.border);
        k.po.fir_length = opts.prefilter;
        k.pb = prefilter_band_plan(sw + 2 * k.plan.pad, sh + 2 * k.plan.pad, c, k.po);
        k.units.unit_x = k.pb.unit == 0 ? 0 : k.pb.unit_x;
        k.units.unit_y = k.pb.unit;
    }
    return k;
}

template <class T>
void box_run(ImageView<const T> src, Box in, int sw, int sh, ImageView<T> dst, Box out, int ow,
             int oh, const Transform& t, const WarpOptions& opts, const Context& ctx) {
    const int c = dst.channels();
    constexpr PixelType type = std::is_same_v<T, float>           ? PixelType::F32
                               : std::is_same_v<T, std::uint16_t> ? PixelType::U16
                                                                  : PixelType::U8;
    const PointCall k = point_call(sw, sh, c, ow, oh, type, t, opts);
    // A remap's or flow's box is on the tiles already (warp_box.cpp checks): ob == out.
    const Box ob = cuda_tile_box(out, ow, oh);
    const CudaPointBox pb = cuda_point_box(sw, sh, ow, oh, t, opts, ob, k.units);
    if (pb.span.empty()) {  // every output is the fill
        const T fill = saturate_from_float<T>(opts.fill);
        for (int y = 0; y < dst.height(); ++y)
            std::fill_n(dst.row(y), std::ptrdiff_t{dst.width()} * c, fill);
        return;
    }
    const Box& need = pb.image;
    if (need.x0 < in.x0 || need.y0 < in.y0 || need.x1 > in.x1 || need.y1 > in.y1 || in.empty())
        throw Error(ErrorCode::InvalidArgument,
                    "warp_box: the source box [" + std::to_string(in.x0) + ", " +
                        std::to_string(in.x1) + ") x [" + std::to_string(in.y0) + ", " +
                        std::to_string(in.y1) + ") does not hold the pixels [" +
                        std::to_string(need.x0) + ", " + std::to_string(need.x1) + ") x [" +
                        std::to_string(need.y0) + ", " + std::to_string(need.y1) +
                        ") the output box reads on this device (warp_source_box with the cuda "
                        "backend)");
    Stream own;
    cudaStream_t s = static_cast<cudaStream_t>(ctx.cuda_stream);
    if (!s) {
        int dev = 0;
        UPRES_CUDA_CHECK(cudaGetDevice(&dev));
        own.open(dev);
        s = own.s;
    }
    const std::ptrdiff_t rs = stride_like(std::ptrdiff_t{ob.width()} * c, std::ptrdiff_t{ow} * c);
    DeviceTemp d_out(sizeof(T) * static_cast<std::size_t>(rs) * ob.height(), s,
                     "warp_box (output)");
    const Span2D<T> dv{shifted(d_out.as<T>(), ob.y0 * rs + std::ptrdiff_t{ob.x0} * c), ob.x1, ob.y1,
                       c, rs};
    const T* pixels = src.row(need.y0 - in.y0) + std::ptrdiff_t{need.x0 - in.x0} * c;
    point_box<T>(k, t, ob, pb, pixels, src.stride(), dv, s);
    UPRES_CUDA_CHECK(cudaMemcpy2DAsync(
        dst.data(), sizeof(T) * dst.stride(),
        d_out.as<T>() + std::ptrdiff_t{out.y0 - ob.y0} * rs + std::ptrdiff_t{out.x0 - ob.x0} * c,
        sizeof(T) * rs, sizeof(T) * out.width() * c, out.height(), cudaMemcpyDeviceToHost, s));
    UPRES_CUDA_CHECK(cudaStreamSynchronize(s));
}

}  // namespace

TiledStats warp_points_tiled(RowSource& src, RowSink& dst, int out_width, int out_height,
                             const Transform& t, const WarpOptions& opts, const TiledOptions& to,
                             const Context& ctx, const std::vector<int>& devices) {
    // The whole call's choices depend on the device (its SM count): the first one's (the devices
    // of one host are of one model).
    const Devices on(devices);
    const std::vector<int>& devs = on.list;
    const PointCall k = point_call(src.width(), src.height(), src.channels(), out_width, out_height,
                                   src.type(), t, opts);
    switch (src.type()) {
        case PixelType::U8:
            return run_points<std::uint8_t>(src, dst, k, to, ctx, devs);
        case PixelType::U16:
            return run_points<std::uint16_t>(src, dst, k, to, ctx, devs);
        case PixelType::F32:
            return run_points<float>(src, dst, k, to, ctx, devs);
    }
    throw Error(ErrorCode::InvalidArgument, std::string(kOp) + ": unknown pixel type");
}

void set_point_box_windows(bool per_column) { g_box_windows = per_column; }

CudaBoxUnits point_units_any(int sw, int sh, int c, const Transform& t, const WarpOptions& opts) {
    CudaBoxUnits u;
    u.margin = kPointMargin;
    u.tile = kCudaBoxAlign;
    // The prefilter's box holds the recursive fused kernel's (its taps and margin, unaligned).
    u.coefficients = opts.interp == Interp::BSpline && !opts.prefiltered;
    if (!u.coefficients) return u;
    const WarpPlan plan = make_warp_plan(t, opts, sw, sh, 1, 1);
    PrefilterOptions po;
    po.border = plan.pad > 0 ? Border::Mirror : tap_border(opts.border);
    po.fir_length = opts.prefilter;
    const PrefilterBandPlan pb =
        prefilter_band_plan(sw + 2 * plan.pad, sh + 2 * plan.pad, c, po, true);
    u.unit_x = pb.unit == 0 ? 0 : pb.unit_x;
    u.unit_y = pb.unit;
    u.unit_y_bound = pb.unit_is_bound;
    return u;
}

void warp_box(ImageView<const std::uint8_t> src, Box in, int sw, int sh,
              ImageView<std::uint8_t> dst, Box out, int ow, int oh, const Transform& t,
              const WarpOptions& opts, const Context& ctx) {
    box_run(src, in, sw, sh, dst, out, ow, oh, t, opts, ctx);
}
void warp_box(ImageView<const std::uint16_t> src, Box in, int sw, int sh,
              ImageView<std::uint16_t> dst, Box out, int ow, int oh, const Transform& t,
              const WarpOptions& opts, const Context& ctx) {
    box_run(src, in, sw, sh, dst, out, ow, oh, t, opts, ctx);
}
void warp_box(ImageView<const float> src, Box in, int sw, int sh, ImageView<float> dst, Box out,
              int ow, int oh, const Transform& t, const WarpOptions& opts, const Context& ctx) {
    box_run(src, in, sw, sh, dst, out, ow, oh, t, opts, ctx);
}

}  // namespace upres::cuda
