// upres._upres: the native half of the Python module. Thin: it turns arrays (NumPy through the
// buffer protocol, CuPy and PyTorch through DLPack) into upres image views without copying,
// sets options through the operations' option tables (upres/options.hpp: the same names,
// values and messages as the command line), releases the GIL and calls the public C++ API.
// Shapes, dtypes and scipy's conventions are handled in python/upres/*.py, which allocates
// every output in the caller's array type; results are written into those outputs.
#include <memory>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <upres/brisque.hpp>
#include <upres/bspline.hpp>
#include <upres/color.hpp>
#include <upres/context.hpp>
#include <upres/error.hpp>
#include <upres/image.hpp>
#include <upres/io.hpp>
#include <upres/metrics.hpp>
#include <upres/nlmsr.hpp>
#include <upres/options.hpp>
#include <upres/stereo.hpp>
#include <upres/tiled.hpp>
#include <upres/upscale.hpp>
#include <upres/warp.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace nb = nanobind;
using namespace nb::literals;

namespace upres::python {
namespace {

// An image argument: a NumPy / PyTorch CPU array (buffer protocol or DLPack), or, for device
// memory, the tuple (pointer, height, width, channels, row stride in elements, dtype code 0 u8
// / 1 u16 / 2 f32) that python/upres/_arrays.py builds from __cuda_array_interface__ or a
// tensor's data_ptr(): no DLPack exchange, whose stream handshake (an event per array) costs
// more than a small kernel.
using Array = nb::handle;
using NdArray = nb::ndarray<nb::ro>;
using Options = std::map<std::string, std::string>;

// The Python exception class of each ErrorCode (upres/_errors.py registers them at import).
std::map<int, PyObject*>& error_classes() {
    static auto* m = new std::map<int, PyObject*>();  // lives as long as the interpreter
    return *m;
}

[[noreturn]] void invalid(const std::string& msg) { throw Error(ErrorCode::InvalidArgument, msg); }

// ---------------------------------------------------------------- arrays as image views

// An (H, W) or (H, W, C) array, C in 1..4, channels interleaved (unit stride), pixels packed,
// rows at any positive stride: upres's ImageView layout.
// max_side: kMaxDimension for the whole-image calls, kMaxTiledDimension for the bands of rows
// of the tiled ones.
detail::RawView raw_view(const NdArray& a, const char* name, int max_side = kMaxDimension) {
    detail::RawView v;
    const nb::dlpack::dtype dt = a.dtype();
    if (dt == nb::dtype<std::uint8_t>())
        v.type = PixelType::U8;
    else if (dt == nb::dtype<std::uint16_t>())
        v.type = PixelType::U16;
    else if (dt == nb::dtype<float>())
        v.type = PixelType::F32;
    else
        throw Error(ErrorCode::UnsupportedFormat,
                    std::string(name) + ": dtype not handled natively (uint8, uint16, float32)");
    if (a.ndim() != 2 && a.ndim() != 3)
        invalid(std::string(name) + ": " + std::to_string(a.ndim()) +
                "-D array; images are (H, W) or (H, W, C) with C in 1..4");
    v.height = static_cast<int>(a.shape(0));
    v.width = static_cast<int>(a.shape(1));
    v.channels = a.ndim() == 3 ? static_cast<int>(a.shape(2)) : 1;
    if (a.shape(0) > static_cast<std::size_t>(max_side) ||
        a.shape(1) > static_cast<std::size_t>(max_side))
        invalid(std::string(name) + ": " + std::to_string(a.shape(0)) + " x " +
                std::to_string(a.shape(1)) + " exceeds the largest side, " +
                std::to_string(max_side));
    if (a.ndim() == 3 && (v.channels < 1 || v.channels > kMaxChannels))
        invalid(std::string(name) + ": " + std::to_string(v.channels) +
                " channels (the last axis; 1 to 4 allowed)");
    const bool layout_ok = (a.ndim() == 2 || a.stride(2) == 1 || v.channels == 1) &&
                           (v.width <= 1 || a.stride(1) == v.channels) &&
                           (v.height <= 1 || a.stride(0) >= std::int64_t{v.width} * v.channels);
    if (!layout_ok)
        invalid(std::string(name) +
                ": strides not in upres's layout (channels contiguous, pixels packed, rows at a "
                "positive stride)");
    v.stride = v.height <= 1 ? std::ptrdiff_t{v.width} * v.channels
                             : static_cast<std::ptrdiff_t>(a.stride(0));
    v.data = const_cast<void*>(a.data());
    if (a.device_type() == nb::device::cpu::value)
        v.location = Location::Host;
    else if (a.device_type() == nb::device::cuda::value)
        v.location = Location::Device;
    else
        invalid(std::string(name) + ": memory on a device upres does not handle (CPU and CUDA)");
    return v;
}

detail::RawView raw_view(nb::handle h, const char* name) {
    if (!nb::isinstance<nb::tuple>(h)) {
        NdArray a;
        if (!nb::try_cast(h, a))
            throw Error(ErrorCode::UnsupportedFormat,
                        std::string(name) + ": not an array upres can read (NumPy, CuPy, PyTorch)");
        return raw_view(a, name);
    }
    const auto t = nb::borrow<nb::tuple>(h);
    if (t.size() != 6) invalid(std::string(name) + ": a device array descriptor has 6 entries");
    detail::RawView v;
    const auto dim = [&](std::size_t i) { return nb::cast<std::int64_t>(t[i]); };
    const std::int64_t hh = dim(1), ww = dim(2), cc = dim(3), rs = dim(4), code = dim(5);
    if (hh < 0 || ww < 0 || hh > kMaxDimension || ww > kMaxDimension)
        invalid(std::string(name) + ": " + std::to_string(hh) + " x " + std::to_string(ww) +
                " is outside 0.." + std::to_string(kMaxDimension) + " per side");
    if (cc < 1 || cc > kMaxChannels)
        invalid(std::string(name) + ": " + std::to_string(cc) + " channels (1 to 4 allowed)");
    if (code < 0 || code > 2) invalid(std::string(name) + ": unknown dtype code");
    v.type = code == 0 ? PixelType::U8 : code == 1 ? PixelType::U16 : PixelType::F32;
    v.height = static_cast<int>(hh);
    v.width = static_cast<int>(ww);
    v.channels = static_cast<int>(cc);
    v.stride = static_cast<std::ptrdiff_t>(rs);
    v.data = reinterpret_cast<void*>(nb::cast<std::uintptr_t>(t[0]));
    v.location = Location::Device;
    return v;
}

template <class T>
ImageView<T> typed(const detail::RawView& v) {
    using U = std::remove_const_t<T>;
    if (v.type != PixelTraits<U>::type)
        invalid(std::string("array of ") + to_string(v.type) + " where " +
                to_string(PixelTraits<U>::type) + " is needed");
    return ImageView<T>(static_cast<T*>(v.data), v.width, v.height, v.channels, v.stride,
                        v.location);
}

// f(ImageView<const T>) for the pixel type of v.
template <class F>
decltype(auto) visit_const(const detail::RawView& v, F&& f) {
    switch (v.type) {
        case PixelType::U8:
            return f(typed<const std::uint8_t>(v));
        case PixelType::U16:
            return f(typed<const std::uint16_t>(v));
        case PixelType::F32:
            break;
    }
    return f(typed<const float>(v));
}

Context context(const std::string& backend, int threads, std::uintptr_t stream) {
    Context c;
    c.backend = parse_enum<Backend>(backend);
    c.threads = threads;
    c.cuda_stream = reinterpret_cast<void*>(stream);
    return c;
}

// Options: name (the table's, '-' or '_') -> text. `special` takes the options that are not
// fields of the struct (returns false for one it does not know either).
template <class O, class Special>
O options(const char* op, const Options& kv, Special&& special) {
    const OperationDesc& d = operation(op);
    O o{};
    for (const auto& [key, text] : kv) {
        std::string name = key;
        for (char& ch : name)
            if (ch == '_') ch = '-';
        const OptionDesc* opt = nullptr;
        for (const OptionDesc& c : d.options)
            if (name == c.name) opt = &c;
        if (opt && opt->field != FieldType::None) {
            opt->set(&o, op, text);
            continue;
        }
        if (special(o, name, text)) continue;
        std::string allowed;
        for (const OptionDesc& c : d.options) {
            std::string n = c.name;
            for (char& ch : n)
                if (ch == '-') ch = '_';
            allowed += (allowed.empty() ? "" : ", ") + n;
        }
        invalid(std::string(op) + ": unknown option '" + key + "' (allowed: " + allowed + ")");
    }
    return o;
}
template <class O>
O options(const char* op, const Options& kv) {
    return options<O>(op, kv, [](O&, const std::string&, const std::string&) { return false; });
}

bool truth(const std::string& op, const std::string& name, const std::string& text) {
    if (text == "true") return true;
    if (text == "false") return false;
    invalid(op + ": " + name + " must be True or False, not '" + text + "'");
}

// ---------------------------------------------------------------- operations

// Warp options parsed once per option set (upres.ndimage caches the handle): converting and
// parsing the option dictionary on every call was a measurable part of a small call's cost.
struct WarpOptionsHandle {
    WarpOptions o;
};

// The file-to-file tiled calls (upres.zoom_tiff, upres.spline_filter_tiff): their budget, the
// output's tiles, their figures.
TiledOptions tiled_options(const char* op, int band_rows, double max_memory_mib) {
    if (!(max_memory_mib >= 0) || max_memory_mib > 1e6)
        invalid(std::string(op) + ": max_memory_mib must be in [0, 1000000] (0: automatic)");
    TiledOptions to;
    to.band_rows = band_rows;
    to.max_memory = static_cast<std::size_t>(max_memory_mib * 1048576.0);
    return to;
}

// tile: the output's tile side; 0: upres::tiff_tile_side.
TiffRowWriterOptions tiled_writer_options(int tile, bool deflate) {
    TiffRowWriterOptions wo;
    wo.tile = tile;
    wo.deflate = deflate;
    return wo;
}

std::map<std::string, double> tiled_figures(const TiledStats& st, const TiffRowWriter& dst) {
    return {{"bands", st.bands},
            {"band_rows", st.band_rows},
            {"rows_read", static_cast<double>(st.rows_read)},
            {"buffer_bytes", static_cast<double>(st.buffer_bytes)},
            {"device_bytes", static_cast<double>(st.device_bytes)},
            {"bigtiff", dst.bigtiff() ? 1.0 : 0.0}};
}

// The stereo options: the declared ones, and subpixel (the command's --no-subpixel) as a truth.
StereoOptions stereo_options(const Options& kv) {
    return options<StereoOptions>(
        "stereo", kv, [](StereoOptions& s, const std::string& name, const std::string& text) {
            if (name != "subpixel") return false;
            s.subpixel = truth("stereo", name, text);
            return true;
        });
}

Context cpu_context(int threads) {
    Context ctx;
    ctx.backend = Backend::Cpu;
    ctx.threads = threads;
    return ctx;
}

// A file-to-file tiled call's backend and GPUs (devices: the cuda backend's only).
Context tiled_context(const std::string& op, int threads, const std::string& backend,
                      const std::vector<int>& devices, TiledOptions& to) {
    const Context ctx = context(backend, threads, 0);
    if (!devices.empty() && ctx.backend != Backend::Cuda)
        invalid(op + ": devices are for backend 'cuda', not '" + backend + "'");
    to.devices = devices;
    return ctx;
}

// warp_tiled from a TIFF to a tiled TIFF (upres.zoom_tiff); the GIL is released while it runs.
std::map<std::string, double> zoom_tiff_py(const std::string& in, const std::string& out, int width,
                                           int height, const WarpOptionsHandle& h, int band_rows,
                                           double max_memory_mib, int tile, bool deflate,
                                           int threads, const std::string& backend,
                                           const std::vector<int>& devices) {
    TiledOptions to = tiled_options("zoom_tiff", band_rows, max_memory_mib);
    const Context ctx = tiled_context("zoom_tiff", threads, backend, devices, to);
    nb::gil_scoped_release unlock;
    TiffRowReader src(in);
    TiffRowWriter dst(out, width, height, src.channels(), src.type(),
                      tiled_writer_options(tile, deflate));
    const TiledStats st =
        warp_tiled(src, dst, width, height, Transform::make_resize(), h.o, to, ctx);
    return tiled_figures(st, dst);
}

// bspline_prefilter_tiled from a TIFF to a tiled float TIFF (upres.spline_filter_tiff); the GIL
// is released while it runs.
std::map<std::string, double> spline_filter_tiff_py(const std::string& in, const std::string& out,
                                                    const Options& kv, int band_rows,
                                                    double max_memory_mib, int tile, bool deflate,
                                                    int threads) {
    const PrefilterOptions o = options<PrefilterOptions>("prefilter", kv);
    const TiledOptions to = tiled_options("spline_filter_tiff", band_rows, max_memory_mib);
    nb::gil_scoped_release unlock;
    TiffRowReader src(in);
    TiffRowWriter dst(out, src.width(), src.height(), src.channels(), PixelType::F32,
                      tiled_writer_options(tile, deflate));
    const TiledStats st = bspline_prefilter_tiled(src, dst, o, to, cpu_context(threads));
    return tiled_figures(st, dst);
}

// upscale_tiled from a TIFF to a tiled TIFF (upres.upscale_tiff); the GIL is released while it
// runs.
std::map<std::string, double> upscale_tiff_py(const std::string& in, const std::string& out,
                                              const Options& kv, int band_rows,
                                              double max_memory_mib, int tile, bool deflate,
                                              int threads, const std::string& backend,
                                              const std::vector<int>& devices) {
    const UpscaleOptions o = options<UpscaleOptions>("upscale", kv);
    TiledOptions to = tiled_options("upscale_tiff", band_rows, max_memory_mib);
    const Context ctx = tiled_context("upscale_tiff", threads, backend, devices, to);
    if (!(o.scale >= 1 && o.scale <= 16) || o.scale != std::floor(o.scale))
        invalid("upscale_tiff: the scale must be an integer in [1, 16], not " +
                std::to_string(o.scale));
    nb::gil_scoped_release unlock;
    TiffRowReader src(in);
    const int s = static_cast<int>(o.scale);
    if (std::int64_t{s} * src.width() > kMaxTiledDimension ||
        std::int64_t{s} * src.height() > kMaxTiledDimension)
        invalid("upscale_tiff: the output would exceed " + std::to_string(kMaxTiledDimension) +
                " pixels a side");
    TiffRowWriter dst(out, s * src.width(), s * src.height(), src.channels(), src.type(),
                      tiled_writer_options(tile, deflate));
    const TiledStats st = upscale_tiled(src, dst, o, to, ctx);
    return tiled_figures(st, dst);
}

// nlm_fuse_tiled from TIFF frames to a tiled TIFF (upres.fuse_tiff); the GIL is released while
// it runs.
std::map<std::string, double> fuse_tiff_py(const std::vector<std::string>& in,
                                           const std::string& out, const Options& kv, int band_rows,
                                           double max_memory_mib, int tile, bool deflate,
                                           int threads, const std::string& backend,
                                           const std::vector<int>& devices) {
    const NlmsrOptions o = options<NlmsrOptions>("fuse", kv);
    TiledOptions to = tiled_options("fuse_tiff", band_rows, max_memory_mib);
    const Context ctx = tiled_context("fuse_tiff", threads, backend, devices, to);
    if (in.empty()) invalid("fuse_tiff: no frames");
    nb::gil_scoped_release unlock;
    std::vector<std::unique_ptr<TiffRowReader>> readers;
    std::vector<RowSource*> frames;
    for (const std::string& p : in) {
        readers.push_back(std::make_unique<TiffRowReader>(p));
        frames.push_back(readers.back().get());
    }
    const TiffRowReader& f0 = *readers[0];
    if (std::int64_t{o.scale} * f0.width() > kMaxTiledDimension ||
        std::int64_t{o.scale} * f0.height() > kMaxTiledDimension)
        invalid("fuse_tiff: the output would exceed " + std::to_string(kMaxTiledDimension) +
                " pixels a side");
    TiffRowWriter dst(out, o.scale * f0.width(), o.scale * f0.height(), f0.channels(), f0.type(),
                      tiled_writer_options(tile, deflate));
    const TiledStats st = nlm_fuse_tiled(frames, dst, o, to, ctx);
    return tiled_figures(st, dst);
}

// stereo_disparity_tiled from a TIFF pair to a tiled float TIFF (upres.stereo.disparity_tiff);
// the GIL is released while it runs.
std::map<std::string, double> stereo_tiff_py(const std::string& left, const std::string& right,
                                             const std::string& out, const Options& kv,
                                             int band_rows, double max_memory_mib, int tile,
                                             bool deflate, int threads, const std::string& backend,
                                             const std::vector<int>& devices) {
    const StereoOptions o = stereo_options(kv);
    TiledOptions to = tiled_options("stereo_tiff", band_rows, max_memory_mib);
    const Context ctx = tiled_context("stereo_tiff", threads, backend, devices, to);
    nb::gil_scoped_release unlock;
    TiffRowReader l(left), r(right);
    TiffRowWriter dst(out, l.width(), l.height(), 1, PixelType::F32,
                      tiled_writer_options(tile, deflate));
    const TiledStats st = stereo_disparity_tiled(l, r, dst, o, to, ctx);
    return tiled_figures(st, dst);
}

// ---- bands of rows for upres.dask: one task computes output rows [y0, y0 + out.rows) from the
// source rows [first, first + block.rows) it holds (warp_tiled_source_rows says which), as one
// band of the tiled call: bit-identical to the whole-image call. The GIL is released.

// A host array of rows of an image of any width (up to kMaxTiledDimension).
detail::RawView host_rows(const NdArray& a, const char* name) {
    const detail::RawView v = raw_view(a, name, kMaxTiledDimension);
    if (v.location != Location::Host)
        invalid(std::string(name) + ": the rows must be in host memory");
    return v;
}

TiledOptions band_options(int y0, int rows) {
    TiledOptions to;
    to.first_row = y0;
    to.last_row = y0 + rows;
    to.band_rows = rows;
    return to;
}

std::tuple<int, int> zoom_source_rows_py(int src_width, int src_height, int out_width,
                                         int out_height, const WarpOptionsHandle& h, int y0, int y1,
                                         const std::string& backend) {
    const RowRange r =
        warp_tiled_source_rows(src_width, src_height, out_width, out_height,
                               Transform::make_resize(), h.o, y0, y1, parse_enum<Backend>(backend));
    return {r.first, r.last};
}

// One band of upres.dask.zoom: output rows [y0, y0 + out.rows) from the source rows [first,
// first + block.rows), on the cpu backend or on the calling thread's current GPU (cuda).
void zoom_band_py(const NdArray& block, int first, int src_height, const NdArray& out, int y0,
                  int out_height, const WarpOptionsHandle& h, int threads,
                  const std::string& backend) {
    const detail::RawView b = host_rows(block, "block"), o = host_rows(out, "out");
    if (o.type != b.type || o.channels != b.channels)
        invalid("zoom band: the output's dtype and channels must be the source's");
    const Context ctx = context(backend, threads, 0);
    ViewRowSource src(b, first, src_height);
    ViewRowSink dst(o, y0);
    nb::gil_scoped_release unlock;
    warp_tiled(src, dst, o.width, out_height, Transform::make_resize(), h.o,
               band_options(y0, o.height), ctx);
}

// One band of upres.dask.fuse: output rows [y0, y0 + out.rows) from the frames' rows [first,
// first + block.rows) (nlm_fuse_tiled_source_rows says which), options with the whole reference
// frame's noise, on the cpu backend or on the calling thread's current GPU (cuda).
std::tuple<int, int> fuse_source_rows_py(int width, int height, const Options& kv, int y0, int y1) {
    const RowRange r =
        nlm_fuse_tiled_source_rows(width, height, options<NlmsrOptions>("fuse", kv), y0, y1);
    return {r.first, r.last};
}

void fuse_band_py(const std::vector<NdArray>& blocks, int first, int height, const NdArray& out,
                  int y0, const Options& kv, int threads, const std::string& backend) {
    const NlmsrOptions o = options<NlmsrOptions>("fuse", kv);
    if (o.noise < 0) invalid("fuse band: the options must give the reference frame's noise");
    std::vector<std::unique_ptr<ViewRowSource>> src;
    std::vector<RowSource*> frames;
    for (std::size_t i = 0; i < blocks.size(); ++i) {
        src.push_back(std::make_unique<ViewRowSource>(
            host_rows(blocks[i], ("frame " + std::to_string(i)).c_str()), first, height));
        frames.push_back(src.back().get());
    }
    const detail::RawView d = host_rows(out, "out");
    const Context ctx = context(backend, threads, 0);
    ViewRowSink dst(d, y0);
    nb::gil_scoped_release unlock;
    nlm_fuse_tiled(frames, dst, o, band_options(y0, d.height), ctx);
}

std::tuple<int, int> stereo_source_rows_py(int width, int height, const Options& kv, int y0,
                                           int y1) {
    const RowRange r =
        stereo_disparity_tiled_source_rows(width, height, stereo_options(kv), y0, y1);
    return {r.first, r.last};
}

// One band of the left-based map: rows [y0, y0 + out.rows) from both images' rows [first, ...)
// of an image `height` rows high, as stereo_disparity_tiled computes it, on the cpu backend or
// on the calling thread's current GPU (cuda).
void stereo_band_py(const NdArray& left, const NdArray& right, int first, int height,
                    const NdArray& out, int y0, const Options& kv, int threads,
                    const std::string& backend) {
    const StereoOptions o = stereo_options(kv);
    ViewRowSource l(host_rows(left, "left"), first, height);
    ViewRowSource r(host_rows(right, "right"), first, height);
    const detail::RawView d = host_rows(out, "out");
    if (d.type != PixelType::F32 || d.channels != 1 || d.width != l.width())
        invalid("disparity band: the output must be float32 rows of the images' width, 1 channel");
    const Context ctx = context(backend, threads, 0);
    ViewRowSink dst(d, y0);
    nb::gil_scoped_release unlock;
    stereo_disparity_tiled(l, r, dst, o, band_options(y0, d.height), ctx);
}

std::tuple<int, int> spline_filter_source_rows_py(int width, int height, const Options& kv, int y0,
                                                  int y1) {
    const RowRange r = bspline_prefilter_tiled_source_rows(
        width, height, options<PrefilterOptions>("prefilter", kv), y0, y1);
    return {r.first, r.last};
}

void spline_filter_band_py(const NdArray& block, int first, int height, const NdArray& out, int y0,
                           const Options& kv, int threads) {
    const PrefilterOptions o = options<PrefilterOptions>("prefilter", kv);
    const detail::RawView b = host_rows(block, "block"), d = host_rows(out, "out");
    if (d.type != PixelType::F32 || d.channels != b.channels || d.width != b.width)
        invalid(
            "spline_filter band: the output must be float32 rows of the source's width and "
            "channels");
    ViewRowSource src(b, first, height);
    ViewRowSink dst(d, y0);
    nb::gil_scoped_release unlock;
    bspline_prefilter_tiled(src, dst, o, band_options(y0, d.height), cpu_context(threads));
}

// Rows [y0, y0 + out.rows) of a TIFF or BigTIFF into `out` (its dtype and channels must be the
// file's): a task of upres.dask.imread_tiff opens the file by its path.
void tiff_read_rows_py(const std::string& path, int y0, const NdArray& out) {
    const detail::RawView o = host_rows(out, "out");
    nb::gil_scoped_release unlock;
    TiffRowReader r(path);
    if (o.type != r.type() || o.channels != r.channels() || o.width != r.width())
        invalid("tiff_read_rows: " + path + " holds " + std::to_string(r.width()) +
                "-wide rows of " + std::to_string(r.channels()) + " x " + to_string(r.type()) +
                ", the output array does not");
    if (y0 < 0 || std::int64_t{y0} + o.height > r.height())
        invalid("tiff_read_rows: rows [" + std::to_string(y0) + ", " +
                std::to_string(std::int64_t{y0} + o.height) + ") are outside the " +
                std::to_string(r.height()) + " rows of " + path);
    r.read_rows(y0, o.height, o.data, o.stride);
}

std::tuple<int, int, int, std::string> tiff_info_py(const std::string& path) {
    const TiffRowReader r(path);
    return {r.width(), r.height(), r.channels(), to_string(r.type())};
}

// ---- two-dimensional tiles of the point transforms for upres.dask: a task computes the
// outputs in a box from the source pixels in the box warp_source_box names (bit-identical to
// the whole-image call). Boxes are (x0, y0, x1, y1).
using BoxTuple = std::tuple<int, int, int, int>;
Box box_of(const BoxTuple& b) {
    return {std::get<0>(b), std::get<1>(b), std::get<2>(b), std::get<3>(b)};
}

Transform make_transform(const std::string& kind, const std::vector<double>& matrix,
                         const Array& field);

BoxTuple warp_source_box_py(int src_width, int src_height, int out_width, int out_height,
                            const std::string& kind, const std::vector<double>& matrix, Array field,
                            const WarpOptionsHandle& h, const BoxTuple& out,
                            const std::string& backend, int channels) {
    const Transform t = make_transform(kind, matrix, field);
    const Backend be = parse_enum<Backend>(backend);
    nb::gil_scoped_release unlock;  // remap / flow: a scan of the box's field
    const Box b = warp_source_box(src_width, src_height, out_width, out_height, t, h.o, box_of(out),
                                  be, channels);
    return {b.x0, b.y0, b.x1, b.y1};
}

void warp_box_py(Array src, const BoxTuple& in, int src_width, int src_height, const NdArray& out,
                 const BoxTuple& out_box, int out_width, int out_height, const std::string& kind,
                 const std::vector<double>& matrix, Array field, const WarpOptionsHandle& h,
                 int threads, const std::string& backend) {
    const Transform t = make_transform(kind, matrix, field);
    const detail::RawView d = host_rows(out, "out");
    const Box ib = box_of(in);
    detail::RawView s{};  // none: an empty box (the outputs read no source pixel)
    s.type = d.type;
    if (!ib.empty()) {
        NdArray a;
        if (src.is_none() || !nb::try_cast(src, a)) invalid("warp box: the block is not an array");
        s = host_rows(a, "block");
        if (s.type != d.type) invalid("warp box: the output's dtype must be the source's");
    }
    const Context ctx = context(backend, threads, 0);
    nb::gil_scoped_release unlock;
    const auto run = [&](auto zero) {
        using T = decltype(zero);
        warp_box(ib.empty() ? ImageView<const T>() : typed<const T>(s), ib, src_width, src_height,
                 typed<T>(d), box_of(out_box), out_width, out_height, t, h.o, ctx);
    };
    if (d.type == PixelType::U8)
        run(std::uint8_t{});
    else if (d.type == PixelType::U16)
        run(std::uint16_t{});
    else
        run(float{});
}

WarpOptionsHandle warp_options_py(const Options& kv) {
    return {options<WarpOptions>(
        "warp", kv, [](WarpOptions& w, const std::string& name, const std::string& text) {
            if (name != "prefilter") return false;
            w.prefilter = parse_prefilter_name(text);
            return true;
        })};
}

Transform make_transform(const std::string& kind, const std::vector<double>& matrix,
                         const Array& field) {
    Transform t;
    if (kind == "affine") {
        if (matrix.size() != 6) invalid("warp: an affine matrix has 6 entries");
        Affine a;
        for (int i = 0; i < 6; ++i) a.m[i] = matrix[i];
        t = Transform::make_affine(a);
    } else if (kind == "perspective") {
        if (matrix.size() != 9) invalid("warp: a homography has 9 entries");
        Homography h;
        for (int i = 0; i < 9; ++i) h.h[i] = matrix[i];
        t = Transform::make_perspective(h);
    } else if (kind == "resize") {
        t = Transform::make_resize();
    } else if (kind == "remap" || kind == "flow") {
        if (field.is_none()) invalid("warp: " + kind + " needs a field");
        const ImageView<const float> f = typed<const float>(raw_view(field, "field"));
        t = kind == "remap" ? Transform::make_remap(f) : Transform::make_flow(f);
    } else {
        invalid("warp: unknown transform '" + kind + "'");
    }
    return t;
}

void warp_py(const Array& src, const Array& dst, const std::string& kind,
             const std::vector<double>& matrix, Array field, const WarpOptionsHandle& h,
             const std::string& backend, int threads, std::uintptr_t stream) {
    const WarpOptions& o = h.o;
    const Transform t = make_transform(kind, matrix, field);
    const detail::RawView s = raw_view(src, "input"), d = raw_view(dst, "output");
    const Context ctx = context(backend, threads, stream);
    nb::gil_scoped_release unlock;
    visit_const(s, [&](auto sv) {
        using T = std::remove_const_t<typename decltype(sv)::value_type>;
        warp(sv, typed<T>(d), t, o, ctx);
    });
}

void prefilter_py(const Array& src, const Array& dst, const Options& kv, const std::string& backend,
                  int threads, std::uintptr_t stream) {
    const PrefilterOptions o = options<PrefilterOptions>("prefilter", kv);
    const auto s = typed<const float>(raw_view(src, "input"));
    const auto d = typed<float>(raw_view(dst, "output"));
    const Context ctx = context(backend, threads, stream);
    nb::gil_scoped_release unlock;
    bspline_prefilter(s, d, o, ctx);
}

UpscaleOptions upscale_options(const Options& kv) { return options<UpscaleOptions>("upscale", kv); }

// (height, width) of upscale's output for an input of w x h.
std::tuple<int, int> upscale_shape(int w, int h, const Options& kv) {
    const UpscaleOptions o = upscale_options(kv);
    const bool centred = resolved_lattice(o) == Lattice::Centered;
    const auto side = [&](int n) {
        const double v = o.scale * n;
        return static_cast<int>(centred ? std::ceil(v - 1e-9) : std::floor(v + 0.5));
    };
    return {side(h), side(w)};
}

template <class T>
Image<T> owned_copy(ImageView<const T> v, void* stream) {
    Image<T> c(v.width(), v.height(), v.channels(), v.location());
    copy(v, c.view(), stream);
    return c;
}

void upscale_py(const Array& src, const Array& dst, const Options& kv, const std::string& backend,
                int threads, std::uintptr_t stream) {
    const UpscaleOptions o = upscale_options(kv);
    const detail::RawView s = raw_view(src, "input"), d = raw_view(dst, "output");
    const Context ctx = context(backend, threads, stream);
    nb::gil_scoped_release unlock;
    if (s.type == PixelType::U8) {  // straight into the output
        upscale(typed<const std::uint8_t>(s), typed<std::uint8_t>(d), o, ctx);
        return;
    }
    // u16 / f32 (the centre-aligned methods): through an owned copy of the input.
    visit_const(s, [&](auto sv) {
        using T = std::remove_const_t<typename decltype(sv)::value_type>;
        const AnyImage in(owned_copy(sv, ctx.cuda_stream));
        const AnyImage out = upscale(in, o, ctx);
        const Image<T>& r = out.as<T>();
        const ImageView<T> dv = typed<T>(d);
        if (r.width() != dv.width() || r.height() != dv.height())
            throw Error(ErrorCode::Internal, "upscale: output shape differs from upscale_shape");
        copy(r.view(), dv, ctx.cuda_stream);
        synchronize(ctx);
    });
}

void fuse_py(const nb::list& frames, const Array& dst, const Options& kv,
             const std::string& backend, int threads, std::uintptr_t stream) {
    const NlmsrOptions o = options<NlmsrOptions>("fuse", kv);
    std::vector<detail::RawView> fr;
    for (std::size_t i = 0; i < frames.size(); ++i)
        fr.push_back(raw_view(frames[i], ("frame " + std::to_string(i)).c_str()));
    if (fr.empty()) invalid("fuse: no frames");
    const detail::RawView d = raw_view(dst, "output");
    const Context ctx = context(backend, threads, stream);
    nb::gil_scoped_release unlock;
    visit_const(fr[0], [&](auto first) {
        using T = std::remove_const_t<typename decltype(first)::value_type>;
        std::vector<ImageView<const T>> views;
        for (const auto& f : fr) views.push_back(typed<const T>(f));
        nlm_fuse(std::span<const ImageView<const T>>(views), typed<T>(d), o, ctx);
    });
}

void stereo_py(const Array& left, const Array& right, const Array& disp, Array right_disp,
               Array valid, const Options& kv, const std::string& backend, int threads,
               std::uintptr_t stream) {
    const StereoOptions o = stereo_options(kv);
    const detail::RawView l = raw_view(left, "left"), r = raw_view(right, "right");
    const auto dv = typed<float>(raw_view(disp, "disparity"));
    const ImageView<float> rv = !right_disp.is_none()
                                    ? typed<float>(raw_view(right_disp, "right disparity"))
                                    : ImageView<float>();
    const ImageView<std::uint8_t> mv = !valid.is_none()
                                           ? typed<std::uint8_t>(raw_view(valid, "valid"))
                                           : ImageView<std::uint8_t>();
    const Context ctx = context(backend, threads, stream);
    nb::gil_scoped_release unlock;
    visit_const(l, [&](auto lv) {
        using T = std::remove_const_t<typename decltype(lv)::value_type>;
        stereo_disparity(lv, typed<const T>(r), dv, o, ctx, rv, mv);
    });
}

MetricOptions metric_options(const Options& kv) {
    return options<MetricOptions>(
        "compare", kv, [](MetricOptions& m, const std::string& name, const std::string& text) {
            if (name != "y") return false;
            m.on_y = truth("compare", name, text);
            return true;
        });
}

double metric_py(const std::string& which, const Array& a, const Array& b, const Options& kv,
                 const std::string& backend, int threads, std::uintptr_t stream) {
    const MetricOptions o = metric_options(kv);
    const detail::RawView va = raw_view(a, "image 1"), vb = raw_view(b, "image 2");
    const Context ctx = context(backend, threads, stream);
    nb::gil_scoped_release unlock;
    return visit_const(va, [&](auto x) {
        using T = std::remove_const_t<typename decltype(x)::value_type>;
        return which == "psnr" ? psnr(x, typed<const T>(vb), o, ctx)
                               : ssim(x, typed<const T>(vb), o, ctx);
    });
}

double brisque_py(const Array& img, const Options& kv, const std::string& backend, int threads) {
    const BrisqueOptions o = options<BrisqueOptions>("quality", kv);
    const detail::RawView v = raw_view(img, "image");
    const Context ctx = context(backend, threads, 0);
    nb::gil_scoped_release unlock;
    return visit_const(v, [&](auto x) { return brisque(x, o, ctx); });
}

std::vector<double> brisque_features_py(const Array& img, const std::string& backend, int threads) {
    const detail::RawView v = raw_view(img, "image");
    const Context ctx = context(backend, threads, 0);
    nb::gil_scoped_release unlock;
    const BrisqueFeatures f = visit_const(v, [&](auto x) { return brisque_features(x, ctx); });
    return std::vector<double>(f.begin(), f.end());
}

void color_py(const std::string& which, const Array& src, const Array& dst,
              const std::string& backend, int threads, std::uintptr_t stream) {
    const detail::RawView s = raw_view(src, "input"), d = raw_view(dst, "output");
    const Context ctx = context(backend, threads, stream);
    nb::gil_scoped_release unlock;
    if (which == "rgb_to_ycbcr") {
        visit_const(s, [&](auto sv) { rgb_to_ycbcr(sv, typed<float>(d), ctx); });
        return;
    }
    const auto sv = typed<const float>(s);
    switch (d.type) {
        case PixelType::U8:
            return ycbcr_to_rgb(sv, typed<std::uint8_t>(d), ctx);
        case PixelType::U16:
            return ycbcr_to_rgb(sv, typed<std::uint16_t>(d), ctx);
        case PixelType::F32:
            return ycbcr_to_rgb(sv, typed<float>(d), ctx);
    }
}

// imread: the file's pixels as a NumPy array that owns them (no copy).
nb::object imread_py(const std::string& path, const std::string& format) {
    ReadOptions ro;
    ro.format = parse_enum<FileFormat>(format);
    AnyImage img;
    {
        nb::gil_scoped_release unlock;
        img = read_image(path, ro);
    }
    return std::visit(
        [](auto& im) -> nb::object {
            using T = std::remove_reference_t<decltype(*im.data())>;
            auto* owner = new Image<T>(std::move(im));
            nb::capsule del(owner, [](void* p) noexcept { delete static_cast<Image<T>*>(p); });
            const std::size_t shape[3] = {static_cast<std::size_t>(owner->height()),
                                          static_cast<std::size_t>(owner->width()),
                                          static_cast<std::size_t>(owner->channels())};
            const std::size_t nd = owner->channels() == 1 ? 2 : 3;
            return nb::cast(nb::ndarray<nb::numpy, T>(owner->data(), nd, shape, del));
        },
        img.variant());
}

void imwrite_py(const std::string& path, const Array& img, const Options& kv) {
    WriteOptions wo;
    for (const auto& [k, v] : kv) {
        if (k == "format")
            wo.format = parse_enum<FileFormat>(v);
        else if (k == "quality")
            wo.jpeg_quality = std::stoi(v);
        else if (k == "compression")
            wo.png_compression = std::stoi(v);
        else
            invalid("imwrite: unknown option '" + k + "' (allowed: format, quality, compression)");
    }
    const detail::RawView v = raw_view(img, "image");
    if (v.location != Location::Host) invalid("imwrite: the image must be in host memory");
    nb::gil_scoped_release unlock;
    visit_const(v, [&](auto x) { write_image(path, x, wo); });
}

// The option tables, for docstrings, stubs and the tests that check Python against the CLI:
// {op: [(name, kind, allowed values, default, min, max, doc)]}.
nb::dict option_tables() {
    static const char* const kKinds[] = {"enum", "int", "real", "flag", "text"};
    nb::dict out;
    for (const OperationDesc* d : operations()) {
        nb::list opts;
        for (const OptionDesc& o : d->options) {
            nb::list values;
            if (o.values)
                for (const EnumEntry& e : o.values().entries) values.append(nb::str(e.name));
            opts.append(nb::make_tuple(o.name, kKinds[static_cast<int>(o.kind)], values, o.def,
                                       o.min, o.max, o.doc));
        }
        out[d->name] = opts;
    }
    return out;
}

}  // namespace
}  // namespace upres::python

NB_MODULE(_upres, m) {
    using namespace upres::python;
    m.doc() = "upres native bindings (use the upres package, not this module)";

    nb::register_exception_translator([](const std::exception_ptr& p, void*) {
        try {
            std::rethrow_exception(p);
        } catch (const upres::Error& e) {
            auto& cls = error_classes();
            const auto it = cls.find(static_cast<int>(e.code()));
            PyErr_SetString(it != cls.end() ? it->second : PyExc_RuntimeError, e.what());
        }
    });
    m.def(
        "_set_error_class",
        [](int code, nb::handle cls) {
            cls.inc_ref();
            error_classes()[code] = cls.ptr();
        },
        "code"_a, "cls"_a);
    m.def("error_codes", [] {
        nb::dict d;
        for (int c = 1; c <= static_cast<int>(upres::ErrorCode::Internal); ++c)
            d[upres::to_string(static_cast<upres::ErrorCode>(c))] = c;
        return d;
    });

    nb::class_<WarpOptionsHandle>(m, "WarpOptions");
    m.def("warp_options", &warp_options_py, "options"_a);
    m.def("warp", &warp_py, "src"_a, "dst"_a, "kind"_a, "matrix"_a, "field"_a.none(), "options"_a,
          "backend"_a, "threads"_a, "stream"_a);
    m.def("prefilter", &prefilter_py, "src"_a, "dst"_a, "options"_a, "backend"_a, "threads"_a,
          "stream"_a);
    m.def("upscale_shape", &upscale_shape, "width"_a, "height"_a, "options"_a);
    m.def(
        "upscale_method",
        [](const Options& kv) {
            return std::string(to_string(resolved_method(upscale_options(kv))));
        },
        "options"_a);
    m.def("upscale", &upscale_py, "src"_a, "dst"_a, "options"_a, "backend"_a, "threads"_a,
          "stream"_a);
    m.def("fuse", &fuse_py, "frames"_a, "dst"_a, "options"_a, "backend"_a, "threads"_a, "stream"_a);
    m.def("stereo", &stereo_py, "left"_a, "right"_a, "disparity"_a, "right_disparity"_a.none(),
          "valid"_a.none(), "options"_a, "backend"_a, "threads"_a, "stream"_a);
    m.def("metric", &metric_py, "which"_a, "a"_a, "b"_a, "options"_a, "backend"_a, "threads"_a,
          "stream"_a);
    m.def("brisque", &brisque_py, "image"_a, "options"_a, "backend"_a, "threads"_a);
    m.def("brisque_features", &brisque_features_py, "image"_a, "backend"_a, "threads"_a);
    m.def("color", &color_py, "which"_a, "src"_a, "dst"_a, "backend"_a, "threads"_a, "stream"_a);
    m.def("imread", &imread_py, "path"_a, "format"_a);
    m.def("zoom_tiff", &zoom_tiff_py, "input"_a, "output"_a, "width"_a, "height"_a, "options"_a,
          "band_rows"_a, "max_memory_mib"_a, "tile"_a, "deflate"_a, "threads"_a, "backend"_a,
          "devices"_a);
    m.def("spline_filter_tiff", &spline_filter_tiff_py, "input"_a, "output"_a, "options"_a,
          "band_rows"_a, "max_memory_mib"_a, "tile"_a, "deflate"_a, "threads"_a);
    m.def("upscale_tiff", &upscale_tiff_py, "input"_a, "output"_a, "options"_a, "band_rows"_a,
          "max_memory_mib"_a, "tile"_a, "deflate"_a, "threads"_a, "backend"_a, "devices"_a);
    m.def("stereo_source_rows", &stereo_source_rows_py, "width"_a, "height"_a, "options"_a, "y0"_a,
          "y1"_a);
    m.def("stereo_band", &stereo_band_py, "left"_a, "right"_a, "first"_a, "height"_a, "out"_a,
          "y0"_a, "options"_a, "threads"_a, "backend"_a = "cpu");
    m.def("fuse_source_rows", &fuse_source_rows_py, "width"_a, "height"_a, "options"_a, "y0"_a,
          "y1"_a);
    m.def("fuse_band", &fuse_band_py, "blocks"_a, "first"_a, "height"_a, "out"_a, "y0"_a,
          "options"_a, "threads"_a, "backend"_a = "cpu");
    nb::class_<upres::NlmsrNoise>(m, "NlmsrNoise")
        .def(nb::init<int, int>(), "width"_a, "height"_a)
        .def("push",
             [](upres::NlmsrNoise& n, const NdArray& rows) {
                 const upres::detail::RawView v = host_rows(rows, "rows");
                 nb::gil_scoped_release unlock;
                 visit_const(v, [&](auto view) { n.push(view); });
             })
        .def("value", &upres::NlmsrNoise::value);
    m.def("stereo_tiff", &stereo_tiff_py, "left"_a, "right"_a, "output"_a, "options"_a,
          "band_rows"_a, "max_memory_mib"_a, "tile"_a, "deflate"_a, "threads"_a, "backend"_a,
          "devices"_a);
    m.def("fuse_tiff", &fuse_tiff_py, "inputs"_a, "output"_a, "options"_a, "band_rows"_a,
          "max_memory_mib"_a, "tile"_a, "deflate"_a, "threads"_a, "backend"_a, "devices"_a);
    m.def("tiff_info", &tiff_info_py, "path"_a);
    m.def("zoom_source_rows", &zoom_source_rows_py, "src_width"_a, "src_height"_a, "out_width"_a,
          "out_height"_a, "options"_a, "y0"_a, "y1"_a, "backend"_a = "cpu");
    m.def("zoom_band", &zoom_band_py, "block"_a, "first"_a, "src_height"_a, "out"_a, "y0"_a,
          "out_height"_a, "options"_a, "threads"_a, "backend"_a = "cpu");
    m.def("spline_filter_source_rows", &spline_filter_source_rows_py, "width"_a, "height"_a,
          "options"_a, "y0"_a, "y1"_a);
    m.def("spline_filter_band", &spline_filter_band_py, "block"_a, "first"_a, "height"_a, "out"_a,
          "y0"_a, "options"_a, "threads"_a);
    m.def("tiff_read_rows", &tiff_read_rows_py, "path"_a, "y0"_a, "out"_a);
    m.def("warp_source_box", &warp_source_box_py, "src_width"_a, "src_height"_a, "out_width"_a,
          "out_height"_a, "kind"_a, "matrix"_a, "field"_a.none(), "options"_a, "out"_a,
          "backend"_a = "cpu", "channels"_a = 1);
    m.def("warp_box", &warp_box_py, "block"_a.none(), "in_box"_a, "src_width"_a, "src_height"_a,
          "out"_a, "out_box"_a, "out_width"_a, "out_height"_a, "kind"_a, "matrix"_a,
          "field"_a.none(), "options"_a, "threads"_a, "backend"_a = "cpu");
    m.def("imwrite", &imwrite_py, "path"_a, "image"_a, "options"_a);
    m.def("option_tables", &option_tables);
    m.def("cuda_available", &upres::cuda_available);
    m.def("cuda_device_info", &upres::cuda_device_info);
    m.def("cuda_device_count", &upres::cuda_device_count);
    m.def("synchronize", [](std::uintptr_t stream) {
        upres::Context c;
        c.cuda_stream = reinterpret_cast<void*>(stream);
        nb::gil_scoped_release unlock;
        upres::synchronize(c);
    });
    m.def("build_info", [] {
        const upres::BuildInfo b = upres::build_info();
        nb::dict d;
        d["version"] = b.version;
        d["cuda"] = b.cuda;
        d["cuda_archs"] = b.cuda_archs;
        d["cuda_runtime"] = b.cuda_runtime;
        d["openmp"] = b.openmp;
        d["openmp_max_threads"] = b.openmp_max_threads;
        d["compiler"] = b.compiler;
        return d;
    });
}
