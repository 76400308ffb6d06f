// SRCNN's option table (upres/options.hpp) and the SrcnnPrecision / SrcnnVariant names.
#include <cstddef>

#include <upres/options.hpp>
#include <upres/srcnn.hpp>

#include "core/operations.hpp"
#include "ops/srcnn/srcnn_option_rows.hpp"

namespace upres {

namespace {
constexpr EnumEntry kPrecisions[] = {
    {static_cast<int>(SrcnnPrecision::Fp32), "fp32", "fp32 results (3xTF32 or FP32 FMA)"},
    {static_cast<int>(SrcnnPrecision::Tf32), "tf32", "tensor cores, TF32 inputs"},
    {static_cast<int>(SrcnnPrecision::Fp16), "fp16", "tensor cores, FP16 inputs"},
    {static_cast<int>(SrcnnPrecision::Bf16), "bf16", "tensor cores, BF16 inputs"},
    {static_cast<int>(SrcnnPrecision::Fastest), "fastest",
     "the fastest mode documented to lose at most 0.01 dB"},
};
constexpr EnumEntry kVariants[] = {
    {static_cast<int>(SrcnnVariant::Auto), "auto", "the fastest, measured on first use"},
    {static_cast<int>(SrcnnVariant::Direct), "direct", "one thread per output pixel"},
    {static_cast<int>(SrcnnVariant::SharedKernel), "shared-kernel", "weights in shared memory"},
    {static_cast<int>(SrcnnVariant::SharedKernelPatch), "shared-kernel-patch",
     "weights and the input patch in shared memory"},
    {static_cast<int>(SrcnnVariant::RegisteredPixel), "registered-pixel",
     "shared kernel and registered pixel"},
    {static_cast<int>(SrcnnVariant::Cudnn), "cudnn", "cuDNN convolution + fused ReLU"},
    {static_cast<int>(SrcnnVariant::TensorCore), "tensor-core",
     "implicit-GEMM convolution on tensor cores"},
    {static_cast<int>(SrcnnVariant::FusedNetwork), "fused", "one kernel for all three layers"},
};
constexpr EnumDesc kPrecisionDesc{"SRCNN precision", kPrecisions};
constexpr EnumDesc kVariantDesc{"SRCNN variant", kVariants};
}  // namespace

template <>
const EnumDesc& enum_desc<SrcnnPrecision>() noexcept {
    return kPrecisionDesc;
}
template <>
const EnumDesc& enum_desc<SrcnnVariant>() noexcept {
    return kVariantDesc;
}
const char* to_string(SrcnnPrecision p) noexcept { return enum_name(p); }
SrcnnPrecision parse_srcnn_precision(const std::string& name) {
    return parse_enum<SrcnnPrecision>(name);
}
const char* to_string(SrcnnVariant v) noexcept { return enum_name(v); }
SrcnnVariant parse_srcnn_variant(const std::string& name) { return parse_enum<SrcnnVariant>(name); }

namespace ops {
namespace {
constexpr OptionDesc kSrcnnOptions[] = {
    srcnn_rows::kModel,  // not a field of SrcnnOptions: the CLI loads the model
    rebound(srcnn_rows::kPrecision, UPRES_OPTION_FIELD(SrcnnOptions, precision)),
    rebound(srcnn_rows::kVariant, UPRES_OPTION_FIELD(SrcnnOptions, variant)),
};
}  // namespace
const OperationDesc kSrcnnDesc{"srcnn", "SRCNN super-resolution (Dong et al. 2014)", kSrcnnOptions};
}  // namespace ops

}  // namespace upres
