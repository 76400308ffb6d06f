// upres::srcnn: SRCNN super-resolution (Dong et al. 2014; GPU engine after Zhao et al.,
// docs/ops/srcnn.md).
//
//   Network: three convolutions k1 (1 -> n1), k2 (n1 -> n2), k3 (n2 -> 1), ReLU after the first
//   two, stride 1, borders padded by replication so the output has the input's size (the
//   convention of the original SRCNN test code). SRCNN 9-1-5 is k = 9, 1, 5 with n1 = 64,
//   n2 = 32; any odd kernel sizes up to 15 and channel counts up to 128 are accepted (9-5-5...).
//   Values: the network maps a bicubic-upscaled luma plane Y / max_value (so [0, 1]) to the
//   super-resolved plane in the same units; callers clamp.
//   Pipeline (srcnn_upscale): RGB -> BT.601 YCbCr (upres/color.hpp), Y -> MATLAB-style bicubic
//   upscale (centre-aligned, Keys a = -0.5, Border::Reflect) -> network; Cb, Cr and alpha ->
//   the same bicubic; -> RGB. Gray: Y only. u8, u16 and f32 images (f32 nominally [0, 1]).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <upres/context.hpp>
#include <upres/image.hpp>

namespace upres {

// One convolution layer, weights in PyTorch's OIHW order: w[((o * in + i) * k + ky) * k + kx].
struct SrcnnLayer {
    int out_channels = 0;
    int in_channels = 0;
    int kernel = 0;  // odd, square
    std::vector<float> weights;
    std::vector<float> bias;  // out_channels
};

struct SrcnnModel {
    int scale = 0;            // the up-scaling factor the model was trained for (2, 3, 4, ...)
    std::string description;  // free text (training record), at most 64 KiB
    std::array<SrcnnLayer, 3> layers;

    // Width of the receptive field: k1 + k2 + k3 - 2 (13 for 9-1-5).
    int receptive_field() const noexcept;
    // Multiply-adds per output pixel (8032 for 9-1-5 64/32).
    std::int64_t macs_per_pixel() const noexcept;
};

// Throws Error(InvalidArgument) naming the first problem: layer shapes that do not chain,
// even or out-of-range kernels, channel counts outside [1, 128], first input or last output
// channels other than 1, weight/bias vector sizes, non-finite values, scale outside [2, 8].
void validate(const SrcnnModel& model);

// The weights file (".srcnn", docs/ops/srcnn.md#weights-format): little-endian, a 16-byte header
// "UPRES-SRCNN\0" + u32 version (1), then u32 scale, u32 description length + bytes, then per
// layer u32 out, in, k, f32 weights (OIHW), f32 bias, then a u32 CRC-32 of everything before it.
// load_srcnn_model throws Error(IoError) if the file cannot be read, Error(CorruptData) for a bad
// magic, version, truncation, trailing bytes or checksum mismatch, and validate()'s errors.
SrcnnModel load_srcnn_model(const std::string& path);
// Atomic (temporary file + rename); validates first.
void save_srcnn_model(const SrcnnModel& model, const std::string& path);

// Where the trained models live: $UPRES_MODEL_DIR if set, else the installed share/upres/models,
// else the source tree's models/ (for builds run from the tree).
std::string srcnn_model_dir();
// Loads <dir>/srcnn_x<scale>.srcnn; Error(InvalidArgument) listing the scales that have a model
// if there is none for `scale`.
SrcnnModel load_default_srcnn_model(int scale, const std::string& dir = {});
// Scales with a model file in `dir` (default srcnn_model_dir()), ascending.
std::vector<int> available_srcnn_scales(const std::string& dir = {});

// Arithmetic on the Cuda backend (the Reference backend is double, the Cpu backend fp32).
//   Fp32:  fp32 results, matches the reference to 1e-4 relative (3xTF32 tensor cores or FP32
//          FMA, whichever is faster).
//   Tf32:  tensor cores, TF32 inputs, FP32 accumulation.
//   Fp16:  tensor cores, FP16 inputs and intermediates, FP32 accumulation.
//   Bf16:  tensor cores, BF16 inputs and intermediates, FP32 accumulation.
//   Fastest: the fastest of the above whose loss on the evaluation set is documented to be at
//          most 0.01 dB (docs/ops/srcnn.md).
// Tolerances of each mode are in docs/ops/srcnn.md. The Cpu and Reference backends accept only
// Fp32 (anything else is Error(InvalidArgument)), never a silent substitute.
enum class SrcnnPrecision { Fp32, Tf32, Fp16, Bf16, Fastest };
const char* to_string(SrcnnPrecision p) noexcept;
SrcnnPrecision parse_srcnn_precision(const std::string& name);  // "fp32", "tf32", "fp16", ...
template <>
const EnumDesc& enum_desc<SrcnnPrecision>() noexcept;

// CUDA kernel variants (the paper's names, then beyond it). Per layer, or the whole network.
//   Direct:            one thread per output pixel, weights and pixels from global memory.
//   SharedKernel:      weights preloaded to shared memory.
//   SharedKernelPatch: weights and the block's input patch in shared memory.
//   RegisteredPixel:   "shared kernel and registered pixel": the pixel's inputs in registers
//                      (1x1 layers only in the paper; any layer whose inputs fit).
//   Cudnn:             cuDNN convolution + fused ReLU (fp32/tf32; when built with cuDNN's
//                      headers and libcudnn.so.9 loads at run time).
//   TensorCore:        implicit-GEMM convolution on tensor cores, ReLU fused (per layer).
//   FusedNetwork:      one kernel for all three layers, tile by tile, intermediates on chip.
//   Auto:              the fastest, measured on first use for the shape, GPU and precision,
//                      then cached (in memory, and in $UPRES_CACHE_DIR/srcnn_autotune.tsv when
//                      that variable is set).
// Every convolution variant fuses its ReLU. A variant that cannot run a layer (shape, precision,
// not built) is Error(InvalidArgument) / Error(BackendUnavailable), never replaced.
enum class SrcnnVariant {
    Auto,
    Direct,
    SharedKernel,
    SharedKernelPatch,
    RegisteredPixel,
    Cudnn,
    TensorCore,
    FusedNetwork
};
const char* to_string(SrcnnVariant v) noexcept;
// "auto", "direct", "shared-kernel", "shared-kernel-patch", "registered-pixel", "cudnn",
// "tensor-core", "fused"
SrcnnVariant parse_srcnn_variant(const std::string& name);
template <>
const EnumDesc& enum_desc<SrcnnVariant>() noexcept;

struct SrcnnOptions {
    SrcnnPrecision precision = SrcnnPrecision::Fp32;
    // One variant for every layer (FusedNetwork: the whole network), or Auto.
    SrcnnVariant variant = SrcnnVariant::Auto;
    // Per-layer override used when `variant` is Auto; Auto entries are tuned.
    std::array<SrcnnVariant, 3> layer_variants{SrcnnVariant::Auto, SrcnnVariant::Auto,
                                               SrcnnVariant::Auto};
};

// What the Cuda backend ran (for benchmarks and `upres upscale --verbose`).
struct SrcnnPlan {
    bool fused = false;                  // one FusedNetwork kernel
    std::array<SrcnnVariant, 3> layers;  // per layer when !fused
    SrcnnPrecision precision = SrcnnPrecision::Fp32;
};

// The network on one plane: in and out single-channel float views of the same size, in the same
// memory (host: Reference / Cpu; device: Cuda). in and out must not overlap. Throws
// Error(InvalidArgument) if the plane is smaller than the receptive field in either direction,
// or contains NaN/Inf (host inputs; device inputs are not scanned).
SrcnnPlan srcnn_forward(ImageView<const float> in, ImageView<float> out, const SrcnnModel& model,
                        const SrcnnOptions& opts = {}, const Context& ctx = {});

// Whole images (host memory): out has size scale * W x scale * H (model.scale), same channels and
// type. Channels 1 (gray), 2 (gray + alpha), 3 (RGB), 4 (RGBA); alpha is upscaled by bicubic.
// The network runs on ctx's backend (Cuda stages a host input through the device; a device
// input gives a device output). Error(InvalidArgument) if
// the input is smaller than 3 x 3 or its bicubic upscale smaller than the receptive field.
// plan (optional) receives what srcnn_forward ran.
AnyImage srcnn_upscale(const AnyImage& img, const SrcnnModel& model, const SrcnnOptions& opts = {},
                       const Context& ctx = {}, SrcnnPlan* plan = nullptr);
Image<std::uint8_t> srcnn_upscale(ImageView<const std::uint8_t> img, const SrcnnModel& model,
                                  const SrcnnOptions& opts = {}, const Context& ctx = {},
                                  SrcnnPlan* plan = nullptr);

// Into a caller-provided image (size scale * W x scale * H, the input's channels and type),
// which may live in host or device memory independently of the input (e.g. pinned host memory
// for video). With the Cuda backend (forced, or Auto with a device input) the whole pipeline
// (colour conversion, bicubic, network, back to RGB) runs on the device on ctx.cuda_stream:
// a host input is uploaded once and a host output downloaded once; the call returns when a host
// output is written (device outputs: asynchronous, like every Cuda operation). Returns the
// network's plan. Same errors as above, plus a wrong output size/channel count.
SrcnnPlan srcnn_upscale(ImageView<const std::uint8_t> img, ImageView<std::uint8_t> out,
                        const SrcnnModel& model, const SrcnnOptions& opts = {},
                        const Context& ctx = {});
SrcnnPlan srcnn_upscale(ImageView<const std::uint16_t> img, ImageView<std::uint16_t> out,
                        const SrcnnModel& model, const SrcnnOptions& opts = {},
                        const Context& ctx = {});
SrcnnPlan srcnn_upscale(ImageView<const float> img, ImageView<float> out, const SrcnnModel& model,
                        const SrcnnOptions& opts = {}, const Context& ctx = {});

// The bicubic baseline of the pipeline (MATLAB imresize: centre-aligned, Keys a = -0.5,
// Border::Reflect, antialias when scale < 1), on every channel.
AnyImage bicubic_resize(const AnyImage& img, double scale, const Context& ctx = {});

// The degradation of the SRCNN protocol (training and evaluation): MATLAB-compatible
// antialiased bicubic down-scaling by 1/scale of the image cropped to a multiple of scale
// (tools/srcnn/degrade.py is its Python twin; tests check they agree).
AnyImage srcnn_degrade(const AnyImage& img, int scale, const Context& ctx = {});

}  // namespace upres
