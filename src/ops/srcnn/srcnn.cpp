// SRCNN: names, model checks, the weights file, argument checks and backend dispatch (the only
// place that knows about CUDA), and the whole-image pipeline around the network
// (docs/ops/srcnn.md).
#include <upres/srcnn.hpp>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <upres/color.hpp>
#include <upres/error.hpp>
#include <upres/warp.hpp>
#include "core/atomic_file.hpp"
#include "core/device_scope.hpp"
#include "core/dispatch.hpp"
#include "core/overlap.hpp"
#include "core/span2d.hpp"
#include "ops/srcnn/matlab_bicubic.hpp"
#include "ops/srcnn/srcnn_backends.hpp"
#include "ops/srcnn/srcnn_math.hpp"

#if UPRES_HAVE_CUDA
#include "core/device_image.hpp"
#endif

#ifndef UPRES_SOURCE_MODEL_DIR
#define UPRES_SOURCE_MODEL_DIR ""
#endif
#ifndef UPRES_INSTALL_MODEL_DIR
#define UPRES_INSTALL_MODEL_DIR ""
#endif

namespace upres {

// ------------------------------------------------------------------------------------ names

// ------------------------------------------------------------------------------------ model

int SrcnnModel::receptive_field() const noexcept {
    return layers[0].kernel + layers[1].kernel + layers[2].kernel - 2;
}

std::int64_t SrcnnModel::macs_per_pixel() const noexcept {
    std::int64_t n = 0;
    for (const SrcnnLayer& l : layers)
        n += std::int64_t{l.out_channels} * l.in_channels * l.kernel * l.kernel;
    return n;
}

namespace {

[[noreturn]] void invalid(const std::string& msg) { throw Error(ErrorCode::InvalidArgument, msg); }

std::string layer_name(int i) { return "SRCNN model: layer " + std::to_string(i + 1); }

}  // namespace

void validate(const SrcnnModel& model) {
    using namespace srcnn;
    if (model.scale < kMinScale || model.scale > kMaxScale)
        invalid("SRCNN model: scale " + std::to_string(model.scale) + " is outside [" +
                std::to_string(kMinScale) + ", " + std::to_string(kMaxScale) + "]");
    if (model.description.size() > static_cast<std::size_t>(kMaxDescription))
        invalid("SRCNN model: the description has " + std::to_string(model.description.size()) +
                " bytes (at most " + std::to_string(kMaxDescription) + ")");
    for (int i = 0; i < 3; ++i) {
        const SrcnnLayer& l = model.layers[static_cast<std::size_t>(i)];
        const std::string name = layer_name(i);
        if (l.kernel < 1 || l.kernel > kMaxKernel || l.kernel % 2 == 0)
            invalid(name + ": kernel size " + std::to_string(l.kernel) +
                    " is not an odd number in [1, " + std::to_string(kMaxKernel) + "]");
        for (const auto& [what, n] : {std::pair<const char*, int>{"input", l.in_channels},
                                      std::pair<const char*, int>{"output", l.out_channels}})
            if (n < 1 || n > kMaxLayerChannels)
                invalid(name + ": " + what + " channel count " + std::to_string(n) +
                        " is outside [1, " + std::to_string(kMaxLayerChannels) + "]");
        if (i == 0 && l.in_channels != 1)
            invalid(name + ": has " + std::to_string(l.in_channels) +
                    " input channels; the network takes one plane (luma), so it must be 1");
        if (i == 2 && l.out_channels != 1)
            invalid(name + ": has " + std::to_string(l.out_channels) +
                    " output channels; the network writes one plane, so it must be 1");
        if (i > 0) {
            const SrcnnLayer& p = model.layers[static_cast<std::size_t>(i - 1)];
            if (l.in_channels != p.out_channels)
                invalid(name + ": has " + std::to_string(l.in_channels) +
                        " input channels but layer " + std::to_string(i) + " has " +
                        std::to_string(p.out_channels) + " outputs (the layers do not chain)");
        }
        const std::size_t nw =
            static_cast<std::size_t>(l.out_channels) * l.in_channels * l.kernel * l.kernel;
        if (l.weights.size() != nw)
            invalid(name + ": has " + std::to_string(l.weights.size()) + " weights, expected " +
                    std::to_string(nw) + " (out x in x k x k)");
        if (l.bias.size() != static_cast<std::size_t>(l.out_channels))
            invalid(name + ": has " + std::to_string(l.bias.size()) + " biases, expected " +
                    std::to_string(l.out_channels));
        for (std::size_t j = 0; j < nw; ++j)
            if (!std::isfinite(l.weights[j]))
                invalid(name + ": weight " + std::to_string(j) + " is not finite (" +
                        std::to_string(l.weights[j]) + ")");
        for (std::size_t j = 0; j < l.bias.size(); ++j)
            if (!std::isfinite(l.bias[j]))
                invalid(name + ": bias " + std::to_string(j) + " is not finite (" +
                        std::to_string(l.bias[j]) + ")");
    }
}

// ------------------------------------------------------------------------------ weights file

namespace {

constexpr char kMagic[12] = {'U', 'P', 'R', 'E', 'S', '-', 'S', 'R', 'C', 'N', 'N', '\0'};
constexpr std::uint32_t kVersion = 1;
// Largest legal file: three 128 x 128 x 15 x 15 layers plus a 64 KiB description, with room.
constexpr std::int64_t kMaxFileBytes = std::int64_t{64} << 20;

// CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320; zlib's crc32()).
std::uint32_t crc32(const unsigned char* p, std::size_t n) {
    static const auto table = [] {
        std::array<std::uint32_t, 256> t{};
        for (std::uint32_t i = 0; i < 256; ++i) {
            std::uint32_t c = i;
            for (int k = 0; k < 8; ++k) c = (c & 1u) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
            t[i] = c;
        }
        return t;
    }();
    std::uint32_t c = 0xFFFFFFFFu;
    for (std::size_t i = 0; i < n; ++i) c = table[(c ^ p[i]) & 0xFFu] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

void put_u32(std::vector<unsigned char>& b, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) b.push_back(static_cast<unsigned char>((v >> (8 * i)) & 0xFFu));
}
void put_f32(std::vector<unsigned char>& b, float f) {
    std::uint32_t u;
    std::memcpy(&u, &f, 4);
    put_u32(b, u);
}

std::uint32_t get_u32(const unsigned char* p) {
    return static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8) |
           (static_cast<std::uint32_t>(p[2]) << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
}

[[noreturn]] void file_error(ErrorCode code, const std::string& path, const std::string& what) {
    throw Error(code, path + ": " + what);
}

// Sequential reader over the file's bytes; running past the end is CorruptData "truncated".
struct Reader {
    const std::string& path;
    const std::vector<unsigned char>& b;
    std::size_t pos = 0;
    std::size_t end;  // the CRC's offset
    const unsigned char* take(std::size_t n, const std::string& what) {
        if (n > end - pos)
            file_error(ErrorCode::CorruptData, path,
                       "truncated SRCNN weights file: " + what + " needs " + std::to_string(n) +
                           " bytes at offset " + std::to_string(pos) + " but only " +
                           std::to_string(end - pos) + " remain before the checksum");
        const unsigned char* p = b.data() + pos;
        pos += n;
        return p;
    }
    std::uint32_t u32(const std::string& what) { return get_u32(take(4, what)); }
};

}  // namespace

SrcnnModel load_srcnn_model(const std::string& path) {
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
    if (!f)
        file_error(ErrorCode::IoError, path,
                   std::string("cannot open the SRCNN weights file: ") + std::strerror(errno));
    std::vector<unsigned char> bytes;
    {
        unsigned char buf[1 << 16];
        std::size_t n;
        while ((n = std::fread(buf, 1, sizeof buf, f.get())) > 0) {
            bytes.insert(bytes.end(), buf, buf + n);
            if (static_cast<std::int64_t>(bytes.size()) > kMaxFileBytes)
                file_error(ErrorCode::CorruptData, path,
                           "larger than " + std::to_string(kMaxFileBytes >> 20) +
                               " MiB: not an SRCNN weights file");
        }
        if (std::ferror(f.get()))
            file_error(ErrorCode::IoError, path,
                       std::string("cannot read the SRCNN weights file: ") + std::strerror(errno));
    }
    if (bytes.size() < sizeof kMagic || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
        file_error(ErrorCode::CorruptData, path,
                   "bad magic: not an upres SRCNN weights file (expected it to start with "
                   "\"UPRES-SRCNN\")");
    if (bytes.size() < 16 + 4)
        file_error(ErrorCode::CorruptData, path,
                   "truncated SRCNN weights file: " + std::to_string(bytes.size()) +
                       " bytes, too short for the header and checksum");
    const std::uint32_t version = get_u32(bytes.data() + 12);
    if (version != kVersion)
        file_error(ErrorCode::CorruptData, path,
                   "unsupported SRCNN weights file version " + std::to_string(version) +
                       " (this build reads version " + std::to_string(kVersion) + ")");
    Reader r{path, bytes, 16, bytes.size() - 4};
    SrcnnModel m;
    const std::uint32_t scale = r.u32("the scale");
    m.scale =
        static_cast<int>(std::min<std::uint32_t>(scale, 0x7FFFFFFFu));  // validate() reports it
    const std::uint32_t dlen = r.u32("the description length");
    const unsigned char* d = r.take(dlen, "the description");
    m.description.assign(reinterpret_cast<const char*>(d), dlen);
    for (int i = 0; i < 3; ++i) {
        SrcnnLayer& l = m.layers[static_cast<std::size_t>(i)];
        const std::string name = "layer " + std::to_string(i + 1);
        const std::uint32_t o = r.u32(name + " output channels");
        const std::uint32_t in = r.u32(name + " input channels");
        const std::uint32_t k = r.u32(name + " kernel size");
        // Sizes beyond any legal model are reported by validate(); keep them small here so the
        // byte count below cannot overflow.
        const auto clip = [](std::uint32_t v) { return v > 65535u ? 65535 : static_cast<int>(v); };
        l.out_channels = clip(o);
        l.in_channels = clip(in);
        l.kernel = clip(k);
        const std::size_t nw =
            static_cast<std::size_t>(l.out_channels) * static_cast<std::size_t>(l.in_channels) *
            static_cast<std::size_t>(l.kernel) * static_cast<std::size_t>(l.kernel);
        if (nw > (r.end - r.pos) / 4)
            r.take(nw * 4, name + " weights (" + std::to_string(o) + " x " + std::to_string(in) +
                               " x " + std::to_string(k) + " x " + std::to_string(k) + ")");
        const unsigned char* wp = r.take(nw * 4, name + " weights");
        l.weights.resize(nw);
        for (std::size_t j = 0; j < nw; ++j) {
            const std::uint32_t u = get_u32(wp + 4 * j);
            std::memcpy(&l.weights[j], &u, 4);
        }
        const unsigned char* bp =
            r.take(static_cast<std::size_t>(l.out_channels) * 4, name + " biases");
        l.bias.resize(static_cast<std::size_t>(l.out_channels));
        for (std::size_t j = 0; j < l.bias.size(); ++j) {
            const std::uint32_t u = get_u32(bp + 4 * j);
            std::memcpy(&l.bias[j], &u, 4);
        }
    }
    if (r.pos != r.end)
        file_error(ErrorCode::CorruptData, path,
                   std::to_string(r.end - r.pos) +
                       " trailing bytes after the last layer (a damaged or foreign file)");
    const std::uint32_t stored = get_u32(bytes.data() + r.end);
    const std::uint32_t actual = crc32(bytes.data(), r.end);
    if (stored != actual) {
        char buf[96];
        std::snprintf(buf, sizeof buf, "checksum mismatch (CRC-32 stored %08x, computed %08x)",
                      static_cast<unsigned>(stored), static_cast<unsigned>(actual));
        file_error(ErrorCode::CorruptData, path, buf);
    }
    try {
        validate(m);
    } catch (const Error& e) {
        file_error(e.code(), path, e.what());
    }
    return m;
}

void save_srcnn_model(const SrcnnModel& model, const std::string& path) {
    validate(model);
    std::vector<unsigned char> b(kMagic, kMagic + sizeof kMagic);
    put_u32(b, kVersion);
    put_u32(b, static_cast<std::uint32_t>(model.scale));
    put_u32(b, static_cast<std::uint32_t>(model.description.size()));
    b.insert(b.end(), model.description.begin(), model.description.end());
    for (const SrcnnLayer& l : model.layers) {
        put_u32(b, static_cast<std::uint32_t>(l.out_channels));
        put_u32(b, static_cast<std::uint32_t>(l.in_channels));
        put_u32(b, static_cast<std::uint32_t>(l.kernel));
        for (float w : l.weights) put_f32(b, w);
        for (float v : l.bias) put_f32(b, v);
    }
    put_u32(b, crc32(b.data(), b.size()));
    detail::AtomicFile out(path);
    if (std::fwrite(b.data(), 1, b.size(), out.file()) != b.size())
        file_error(ErrorCode::IoError, path, std::string("write failed: ") + std::strerror(errno));
    out.commit();
}

// ---------------------------------------------------------------------------- model folder

namespace {
bool is_dir(const std::string& p) {
    std::error_code ec;
    return !p.empty() && std::filesystem::is_directory(p, ec);
}
std::string model_file(const std::string& dir, int scale) {
    return dir + "/srcnn_x" + std::to_string(scale) + ".srcnn";
}
}  // namespace

std::string srcnn_model_dir() {
    if (const char* env = std::getenv("UPRES_MODEL_DIR"); env && *env) return env;
    if (is_dir(UPRES_INSTALL_MODEL_DIR)) return UPRES_INSTALL_MODEL_DIR;
    return UPRES_SOURCE_MODEL_DIR;
}

std::vector<int> available_srcnn_scales(const std::string& dir) {
    const std::string d = dir.empty() ? srcnn_model_dir() : dir;
    std::vector<int> s;
    std::error_code ec;
    for (int k = srcnn::kMinScale; k <= srcnn::kMaxScale; ++k)
        if (std::filesystem::is_regular_file(model_file(d, k), ec)) s.push_back(k);
    return s;
}

SrcnnModel load_default_srcnn_model(int scale, const std::string& dir) {
    const std::string d = dir.empty() ? srcnn_model_dir() : dir;
    const std::vector<int> have = available_srcnn_scales(d);
    if (std::find(have.begin(), have.end(), scale) == have.end()) {
        std::string list;
        for (int s : have) list += (list.empty() ? "" : ", ") + std::to_string(s);
        invalid("no SRCNN model for scale " + std::to_string(scale) + " in '" + d +
                "' (available scales: " + (list.empty() ? "none" : list) +
                "; set UPRES_MODEL_DIR or pass a model file)");
    }
    const std::string path = model_file(d, scale);
    SrcnnModel m = load_srcnn_model(path);
    if (m.scale != scale)
        file_error(ErrorCode::CorruptData, path,
                   "the file is named for scale " + std::to_string(scale) +
                       " but the model records scale " + std::to_string(m.scale));
    return m;
}

// ----------------------------------------------------------------------------- the network

namespace {

bool known(SrcnnPrecision p) {
    return p == SrcnnPrecision::Fp32 || p == SrcnnPrecision::Tf32 || p == SrcnnPrecision::Fp16 ||
           p == SrcnnPrecision::Bf16 || p == SrcnnPrecision::Fastest;
}
bool known(SrcnnVariant v) {
    return static_cast<int>(v) >= static_cast<int>(SrcnnVariant::Auto) &&
           static_cast<int>(v) <= static_cast<int>(SrcnnVariant::FusedNetwork);
}

void check_options(const SrcnnOptions& opts, const char* op) {
    const std::string o(op);
    if (!known(opts.precision)) invalid(o + ": SrcnnOptions::precision is not a known value");
    if (!known(opts.variant)) invalid(o + ": SrcnnOptions::variant is not a known value");
    for (SrcnnVariant v : opts.layer_variants)
        if (!known(v)) invalid(o + ": SrcnnOptions::layer_variants holds an unknown value");
}

// The Reference and Cpu backends run fp32 arithmetic (or double) with one schedule: any other
// precision or variant is refused, never silently replaced.
void check_host_options(const SrcnnOptions& opts, Backend b, const char* op) {
    const std::string o = std::string(op) + ": the " + to_string(b) + " backend";
    if (opts.precision != SrcnnPrecision::Fp32)
        invalid(o + " runs only precision fp32, not " + to_string(opts.precision) +
                " (tensor-core precisions need --backend cuda)");
    if (opts.variant != SrcnnVariant::Auto)
        invalid(o + " has no kernel variants: variant " + to_string(opts.variant) +
                " needs the cuda backend (use auto)");
    for (SrcnnVariant v : opts.layer_variants)
        if (v != SrcnnVariant::Auto)
            invalid(o + " has no kernel variants: layer variant " + std::string(to_string(v)) +
                    " needs the cuda backend (use auto)");
}

}  // namespace

SrcnnPlan srcnn_forward(ImageView<const float> in, ImageView<float> out, const SrcnnModel& model,
                        const SrcnnOptions& opts, const Context& ctx) {
    constexpr const char* kOp = "srcnn_forward";
    const std::string o(kOp);
    if (in.empty() || in.data() == nullptr) invalid(o + ": the input plane is empty");
    if (in.channels() != 1 || out.channels() != 1)
        invalid(o + ": the input has " + std::to_string(in.channels()) +
                " channels and the output " + std::to_string(out.channels()) +
                "; the network works on single-channel planes (luma)");
    if (out.width() != in.width() || out.height() != in.height() || out.data() == nullptr)
        invalid(o + ": the output is " + std::to_string(out.width()) + " x " +
                std::to_string(out.height()) + " but must have the input's size " +
                std::to_string(in.width()) + " x " + std::to_string(in.height()));
    if (in.location() != out.location())
        invalid(o + ": the input is in " + to_string(in.location()) + " memory but the output in " +
                to_string(out.location()) + " memory (both must live in the same place)");
    if (views_overlap(in, out)) invalid(o + ": the input and output views overlap");
    check_options(opts, kOp);
    validate(model);
    const int rf = model.receptive_field();
    if (in.width() < rf || in.height() < rf)
        invalid(o + ": the " + std::to_string(in.width()) + " x " + std::to_string(in.height()) +
                " plane is smaller than the model's receptive field " + std::to_string(rf) + " x " +
                std::to_string(rf));
    if (!in.on_device())
        for (int y = 0; y < in.height(); ++y)
            for (int x = 0; x < in.width(); ++x)
                if (!std::isfinite(in(x, y)))
                    invalid(o + ": the input has a non-finite value (" + std::to_string(in(x, y)) +
                            ") at (" + std::to_string(x) + ", " + std::to_string(y) + ")");

    const Backend b = resolve_backend(ctx, in.location(), kOp);
    const DeviceScope device_scope(ctx, b, kOp);
    SrcnnPlan plan;
    plan.layers = {SrcnnVariant::Auto, SrcnnVariant::Auto, SrcnnVariant::Auto};
    plan.precision = SrcnnPrecision::Fp32;
    switch (b) {
        case Backend::Reference:
            check_host_options(opts, b, kOp);
            ref::srcnn_forward(span_of(in), span_of(out), model);
            return plan;
        case Backend::Cpu:
            check_host_options(opts, b, kOp);
            cpu::srcnn_forward(span_of(in), span_of(out), model, ctx.threads);
            return plan;
        case Backend::Cuda:
#if UPRES_HAVE_CUDA
            if (!in.on_device()) {  // stage host planes through the device
                const auto din = cuda::upload(in, ctx.cuda_stream, "srcnn_forward (staging)");
                const cuda::PooledImage<float> dout(out.width(), out.height(), 1, ctx.cuda_stream,
                                                    "srcnn_forward (staging)");
                plan = cuda::srcnn_forward(span_of(din.cview()), span_of(dout.view()), model, opts,
                                           ctx.cuda_stream);
                copy(dout.cview(), out, ctx.cuda_stream);
                return plan;
            }
            return cuda::srcnn_forward(span_of(in), span_of(out), model, opts, ctx.cuda_stream);
#else
            break;
#endif
        case Backend::Auto:
            break;
    }
    throw Error(ErrorCode::Internal, o + ": unresolved backend");
}

// ---------------------------------------------------------------------------- the pipeline

namespace {

// Output length of a resize by s: MATLAB imresize's ceil(s * n) (exact products stay exact).
int resized_length(double s, int n) {
    return static_cast<int>(std::ceil(s * static_cast<double>(n) - 1e-9));
}

template <class T>
Image<T> resize_image(ImageView<const T> src, int w, int h, const Context& ctx) {
    Image<T> out(w, h, src.channels(), src.location());
    matlab_bicubic(src, out.view(), ctx);
    return out;
}

template <class T>
float to_unit(T v) {
    return static_cast<float>(static_cast<double>(v) / PixelTraits<T>::max_value);
}

template <class T>
T from_unit(float v) {
    if constexpr (std::is_same_v<T, float>) {
        return v;
    } else {
        const double s = std::nearbyint(static_cast<double>(v) * PixelTraits<T>::max_value);
        return static_cast<T>(std::clamp(s, 0.0, PixelTraits<T>::max_value));
    }
}

float clamp01(float v) { return std::clamp(v, 0.0f, 1.0f); }

template <class T>
void check_upscale_args(ImageView<const T> img, const SrcnnModel& model, const SrcnnOptions& opts,
                        const char* op) {
    const std::string o(op);
    if (img.empty() || img.data() == nullptr) invalid(o + ": the input image is empty");
    validate(model);
    check_options(opts, op);
    const int w = img.width(), h = img.height(), s = model.scale;
    if (w < 3 || h < 3)
        invalid(o + ": the " + std::to_string(w) + " x " + std::to_string(h) +
                " input is smaller than 3 x 3");
    const std::int64_t ow = std::int64_t{w} * s, oh = std::int64_t{h} * s;
    if (ow > kMaxDimension || oh > kMaxDimension || ow * oh > kMaxPixels)
        invalid(o + ": the x" + std::to_string(s) + " output " + std::to_string(ow) + " x " +
                std::to_string(oh) + " would exceed the image size limits");
    const int rf = model.receptive_field();
    if (ow < rf || oh < rf)
        invalid(o + ": the " + std::to_string(w) + " x " + std::to_string(h) + " input upscaled x" +
                std::to_string(s) + " is " + std::to_string(ow) + " x " + std::to_string(oh) +
                ", smaller than the model's receptive field " + std::to_string(rf) + " x " +
                std::to_string(rf) + " (input too small)");
    if constexpr (std::is_same_v<T, float>) {
        if (!img.on_device())
            for (int y = 0; y < h; ++y)
                for (int x = 0; x < w; ++x)
                    for (int c = 0; c < img.channels(); ++c)
                        if (!std::isfinite(img(x, y, c)))
                            invalid(o + ": the input has a non-finite value (" +
                                    std::to_string(img(x, y, c)) + ") at (" + std::to_string(x) +
                                    ", " + std::to_string(y) + ", channel " + std::to_string(c) +
                                    ")");
    }
}

// Host pipeline (Reference / Cpu backends; every step on ctx's backend).
template <class T>
SrcnnPlan upscale_host(ImageView<const T> img, ImageView<T> out, const SrcnnModel& model,
                       const SrcnnOptions& opts, const Context& ctx) {
    const int w = img.width(), h = img.height(), ch = img.channels();
    const int W = out.width(), H = out.height();
    const bool colour = ch >= 3;

    // Planes in [0, 1]: Y (or gray) first, then Cb, Cr (colour, on the 8-bit scale) and alpha.
    Image<float> planes(w, h, ch);
    if (colour) {
        rgb_to_ycbcr(img, planes.view(), ctx);
        for (int y = 0; y < h; ++y)
            for (int x = 0; x < w; ++x) planes(x, y, 0) /= 255.0f;
    } else {
        for (int y = 0; y < h; ++y)
            for (int x = 0; x < w; ++x)
                for (int c = 0; c < ch; ++c) planes(x, y, c) = to_unit(img(x, y, c));
    }
    // Bicubic of every plane; the network then replaces Y.
    Image<float> up = resize_image(ImageView<const float>(planes.view()), W, H, ctx);
    planes = Image<float>();
    Image<float> yb(W, H, 1), ys(W, H, 1);
    for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x) yb(x, y) = up(x, y, 0);
    const SrcnnPlan p =
        srcnn_forward(ImageView<const float>(yb.view()), ys.view(), model, opts, ctx);

    if (colour) {
        for (int y = 0; y < H; ++y)
            for (int x = 0; x < W; ++x) {
                up(x, y, 0) = 255.0f * clamp01(ys(x, y));
                if (ch == 4) up(x, y, 3) = std::clamp(up(x, y, 3), 0.0f, 255.0f);
            }
        ycbcr_to_rgb(ImageView<const float>(up.view()), out, ctx);
    } else {
        for (int y = 0; y < H; ++y)
            for (int x = 0; x < W; ++x) {
                out(x, y, 0) = from_unit<T>(clamp01(ys(x, y)));
                if (ch == 2) out(x, y, 1) = from_unit<T>(clamp01(up(x, y, 1)));
            }
    }
    return p;
}

#if UPRES_HAVE_CUDA
// Device pipeline: the same steps as upscale_host, every one on the device, one upload and one
// download at most; the intermediates come from upres's stream-ordered pool (no cudaMalloc /
// cudaFree per call: with them the 1080p -> 4K time varied between 1.2 and 1.5 ms by process).
template <class T>
SrcnnPlan upscale_device(ImageView<const T> img, ImageView<T> out, const SrcnnModel& model,
                         const SrcnnOptions& opts, const Context& ctx) {
    Context dctx = ctx;
    dctx.backend = Backend::Cuda;
    void* const st = ctx.cuda_stream;
    const int w = img.width(), h = img.height(), ch = img.channels();
    const int W = out.width(), H = out.height();
    const bool colour = ch >= 3;

    constexpr const char* kWhat = "srcnn_upscale (device pipeline)";
    const cuda::PooledImage<float> up(W, H, ch, st, kWhat);
    {
        std::optional<cuda::PooledImage<T>> in_dev;
        ImageView<const T> din = img;
        if (!img.on_device()) {
            in_dev.emplace(cuda::upload(img, st, kWhat));
            din = in_dev->cview();
        }
        const cuda::PooledImage<float> planes(w, h, ch, st, kWhat);
        if (colour)
            rgb_to_ycbcr(din, planes.view(), dctx);
        else
            convert(din, planes.view(), /*normalize=*/true, st);
        matlab_bicubic(planes.cview(), up.view(), dctx);
    }
    const cuda::PooledImage<float> yb(W, H, 1, st, kWhat), ys(W, H, 1, st, kWhat);
    srcnn::cuda::extract_plane(span_of(up.cview()), 0, colour ? 1.0f / 255.0f : 1.0f,
                               span_of(yb.view()), st);
    const SrcnnPlan p = srcnn_forward(yb.cview(), ys.view(), model, opts, dctx);
    const int alpha = ch == 4 ? 3 : (ch == 2 ? 1 : -1);
    srcnn::cuda::insert_plane(span_of(ys.cview()), colour ? 255.0f : 1.0f, span_of(up.view()), 0,
                              alpha, colour ? 255.0f : 1.0f, st);
    std::optional<cuda::PooledImage<T>> out_dev;
    ImageView<T> dout = out;
    if (!out.on_device()) {
        out_dev.emplace(W, H, ch, st, kWhat);
        dout = out_dev->view();
    }
    if (colour)
        ycbcr_to_rgb(up.cview(), dout, dctx);
    else
        convert(up.cview(), dout, /*normalize=*/true, st);
    if (!out.on_device()) {
        copy(ImageView<const T>(dout), out, st);
        synchronize(ctx);
    }
    return p;
}
#endif

template <class T>
SrcnnPlan upscale_into(ImageView<const T> img, ImageView<T> out, const SrcnnModel& model,
                       const SrcnnOptions& opts, const Context& ctx) {
    constexpr const char* kOp = "srcnn_upscale";
    const std::string o(kOp);
    check_upscale_args(img, model, opts, kOp);
    const int W = img.width() * model.scale, H = img.height() * model.scale;
    if (out.data() == nullptr || out.width() != W || out.height() != H ||
        out.channels() != img.channels())
        invalid(o + ": the output is " + std::to_string(out.width()) + " x " +
                std::to_string(out.height()) + " x " + std::to_string(out.channels()) +
                " but must be " + std::to_string(W) + " x " + std::to_string(H) + " x " +
                std::to_string(img.channels()) + " (x" + std::to_string(model.scale) +
                ", the input's channels)");
    const Backend b = resolve_backend(ctx, img.location(), kOp);
    const DeviceScope device_scope(ctx, b, kOp);
    if (b == Backend::Cuda) {
#if UPRES_HAVE_CUDA
        return upscale_device(img, out, model, opts, ctx);
#endif
    }
    if (out.on_device())
        invalid(o + ": the output is in device memory but the " + to_string(b) +
                " backend works on host memory (use the Cuda backend)");
    return upscale_host(img, out, model, opts, ctx);
}

template <class T>
Image<T> upscale_impl(ImageView<const T> img, const SrcnnModel& model, const SrcnnOptions& opts,
                      const Context& ctx, SrcnnPlan* plan) {
    check_upscale_args(img, model, opts, "srcnn_upscale");
    // In the input's memory (a device input: the whole pipeline on the device).
    Image<T> out(img.width() * model.scale, img.height() * model.scale, img.channels(),
                 img.location());
    const SrcnnPlan p = upscale_into(img, out.view(), model, opts, ctx);
    if (plan) *plan = p;
    return out;
}

}  // namespace

AnyImage srcnn_upscale(const AnyImage& img, const SrcnnModel& model, const SrcnnOptions& opts,
                       const Context& ctx, SrcnnPlan* plan) {
    return std::visit(
        [&](const auto& im) -> AnyImage {
            using T = std::remove_cvref_t<decltype(*im.data())>;
            return AnyImage(upscale_impl<T>(im.view(), model, opts, ctx, plan));
        },
        img.variant());
}

Image<std::uint8_t> srcnn_upscale(ImageView<const std::uint8_t> img, const SrcnnModel& model,
                                  const SrcnnOptions& opts, const Context& ctx, SrcnnPlan* plan) {
    return upscale_impl<std::uint8_t>(img, model, opts, ctx, plan);
}

SrcnnPlan srcnn_upscale(ImageView<const std::uint8_t> img, ImageView<std::uint8_t> out,
                        const SrcnnModel& model, const SrcnnOptions& opts, const Context& ctx) {
    return upscale_into(img, out, model, opts, ctx);
}
SrcnnPlan srcnn_upscale(ImageView<const std::uint16_t> img, ImageView<std::uint16_t> out,
                        const SrcnnModel& model, const SrcnnOptions& opts, const Context& ctx) {
    return upscale_into(img, out, model, opts, ctx);
}
SrcnnPlan srcnn_upscale(ImageView<const float> img, ImageView<float> out, const SrcnnModel& model,
                        const SrcnnOptions& opts, const Context& ctx) {
    return upscale_into(img, out, model, opts, ctx);
}

AnyImage bicubic_resize(const AnyImage& img, double scale, const Context& ctx) {
    const std::string o = "bicubic_resize";
    if (img.empty()) invalid(o + ": the input image is empty");
    if (!std::isfinite(scale) || scale <= 0.0 || scale > 64.0)
        invalid(o + ": scale " + std::to_string(scale) + " is outside (0, 64]");
    const int w = resized_length(scale, img.width()), h = resized_length(scale, img.height());
    if (w < 1 || h < 1)
        invalid(o + ": scale " + std::to_string(scale) + " leaves no pixels of the " +
                std::to_string(img.width()) + " x " + std::to_string(img.height()) + " image");
    if (w > kMaxDimension || h > kMaxDimension || std::int64_t{w} * h > kMaxPixels)
        invalid(o + ": the output " + std::to_string(w) + " x " + std::to_string(h) +
                " would exceed the image size limits");
    return std::visit(
        [&](const auto& im) -> AnyImage {
            using T = std::remove_cvref_t<decltype(*im.data())>;
            return AnyImage(resize_image<T>(im.view(), w, h, ctx));
        },
        img.variant());
}

AnyImage srcnn_degrade(const AnyImage& img, int scale, const Context& ctx) {
    const std::string o = "srcnn_degrade";
    if (img.empty()) invalid(o + ": the input image is empty");
    if (scale < 1 || scale > srcnn::kMaxScale)
        invalid(o + ": scale " + std::to_string(scale) + " is outside [1, " +
                std::to_string(srcnn::kMaxScale) + "]");
    const int cw = img.width() - img.width() % scale, ch = img.height() - img.height() % scale;
    if (cw == 0 || ch == 0)
        invalid(o + ": the " + std::to_string(img.width()) + " x " + std::to_string(img.height()) +
                " image is smaller than the scale " + std::to_string(scale));
    return std::visit(
        [&](const auto& im) -> AnyImage {
            using T = std::remove_cvref_t<decltype(*im.data())>;
            // modcrop: the top-left cw x ch, as the SRCNN protocol's MATLAB code.
            const ImageView<const T> crop = im.view().sub(0, 0, cw, ch);
            return AnyImage(resize_image<T>(crop, cw / scale, ch / scale, ctx));
        },
        img.variant());
}

}  // namespace upres
