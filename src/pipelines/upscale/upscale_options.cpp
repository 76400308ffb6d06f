// upscale's option table (upres/options.hpp) and the UpscaleMethod / Lattice names.
#include <cstddef>

#include <upres/options.hpp>
#include <upres/upscale.hpp>

#include "core/operations.hpp"
#include "ops/seabi/seabi_option_rows.hpp"
#include "ops/srcnn/srcnn_option_rows.hpp"

namespace upres {

namespace {
constexpr EnumEntry kMethods[] = {
    {static_cast<int>(UpscaleMethod::Auto), "auto",
     "the best available: srcnn for factors with a model (2, 3, 4), else bicubic"},
    {static_cast<int>(UpscaleMethod::Srcnn), "srcnn", "SRCNN 9-1-5 (bundled or --model)"},
    {static_cast<int>(UpscaleMethod::LSeai), "lseai", "SEABI construction only (co-sited)"},
    {static_cast<int>(UpscaleMethod::SilSeabi), "silseabi",
     "SEABI + one back-projection (co-sited)"},
    {static_cast<int>(UpscaleMethod::LSeabi), "lseabi",
     "SEABI + back-projection until the error is small (co-sited)"},
    {static_cast<int>(UpscaleMethod::Tap4), "tap4", "the paper's 4-tap x2 filter (co-sited)"},
    {static_cast<int>(UpscaleMethod::Tap6), "tap6", "the paper's 6-tap x2 filter (co-sited)"},
    {static_cast<int>(UpscaleMethod::Bilinear), "bilinear", "bilinear interpolation"},
    {static_cast<int>(UpscaleMethod::Bicubic), "bicubic",
     "bicubic: MATLAB imresize centre-aligned, Keys a = -0.5 co-sited"},
    {static_cast<int>(UpscaleMethod::Nlm), "nlm",
     "non-local-means SR (x2, x3, x4; a video fuses --window frames)"},
    {static_cast<int>(UpscaleMethod::BSpline), "bspline",
     "exact cubic B-spline interpolation (centre-aligned, as upres warp --zoom)"},
};
constexpr EnumEntry kLattices[] = {
    {static_cast<int>(Lattice::Auto), "auto", "centered (every method)"},
    {static_cast<int>(Lattice::CoSited), "cosited",
     "output x samples input x / s (the SEABI paper's lattice; SEABI, tap, bilinear, bicubic)"},
    {static_cast<int>(Lattice::Centered), "centered",
     "output x samples (x + 0.5) / s - 0.5 (warp --zoom, MATLAB imresize)"},
};
constexpr EnumDesc kMethodDesc{"upscale method", kMethods};
constexpr EnumDesc kLatticeDesc{"lattice", kLattices};
}  // namespace

template <>
const EnumDesc& enum_desc<UpscaleMethod>() noexcept {
    return kMethodDesc;
}
template <>
const EnumDesc& enum_desc<Lattice>() noexcept {
    return kLatticeDesc;
}
const char* to_string(UpscaleMethod m) noexcept { return enum_name(m); }
UpscaleMethod parse_upscale_method(const std::string& name) {
    return parse_enum<UpscaleMethod>(name);
}
const char* to_string(Lattice l) noexcept { return enum_name(l); }

namespace ops {
namespace {
constexpr OptionDesc kUpscaleOptions[] = {
    {"method", OptionKind::Enum, &enum_desc<UpscaleMethod>, "auto", 0, 0, "Method",
     UPRES_OPTION_FIELD(UpscaleOptions, method)},
    {"scale", OptionKind::Real, nullptr, "2", 1, 16,
     "Factor: srcnn 2, 3, 4 (the bundled models); others any (SEABI: powers of two cascade x2, "
     "others add a B-spline resize)",
     UPRES_OPTION_FIELD(UpscaleOptions, scale)},
    {"lattice", OptionKind::Enum, &enum_desc<Lattice>, "auto", 0, 0,
     "Where output pixel centres lie", UPRES_OPTION_FIELD(UpscaleOptions, lattice)},
    rebound(seabi_rows::kIterations, UPRES_OPTION_FIELD(UpscaleOptions, max_iterations)),
    rebound(seabi_rows::kMaxError, UPRES_OPTION_FIELD(UpscaleOptions, max_error)),
    rebound(srcnn_rows::kModel, UPRES_OPTION_FIELD(UpscaleOptions, model),
            "srcnn: a .srcnn weights file instead of the bundled model"),
    rebound(srcnn_rows::kPrecision, UPRES_OPTION_FIELD(UpscaleOptions, srcnn.precision),
            "srcnn: arithmetic on the cuda backend (cpu and reference run fp32)"),
    rebound(srcnn_rows::kVariant, UPRES_OPTION_FIELD(UpscaleOptions, srcnn.variant),
            "srcnn: CUDA kernels"),
};
}  // namespace
const OperationDesc kUpscaleDesc{
    "upscale",
    "Super-resolution: SRCNN, SEABI (lseai, silseabi, lseabi) or tap4/tap6/bilinear/bicubic",
    kUpscaleOptions};
}  // namespace ops

}  // namespace upres
