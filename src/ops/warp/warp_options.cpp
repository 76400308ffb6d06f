// warp's option table (upres/options.hpp) and the Interp names.
#include <limits>

#include <cstddef>

#include <upres/options.hpp>
#include <upres/warp.hpp>

#include "core/operations.hpp"

namespace upres {

namespace {
constexpr EnumEntry kInterps[] = {
    {static_cast<int>(Interp::Nearest), "nearest", "nearest neighbour"},
    {static_cast<int>(Interp::Linear), "linear", "bilinear"},
    {static_cast<int>(Interp::Cubic), "cubic", "Keys cubic convolution (a = -0.5)"},
    {static_cast<int>(Interp::BSpline), "bspline", "exact cubic B-spline (scipy order=3)"},
};
constexpr EnumDesc kInterpDesc{"interpolation", kInterps};
}  // namespace

template <>
const EnumDesc& enum_desc<Interp>() noexcept {
    return kInterpDesc;
}
const char* to_string(Interp i) noexcept { return enum_name(i); }
Interp parse_interp(const std::string& name) { return parse_enum<Interp>(name); }

namespace ops {
namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr OptionDesc kWarpOptions[] = {
    {"interp", OptionKind::Enum, &enum_desc<Interp>, "bspline", 0, 0, "Interpolation",
     UPRES_OPTION_FIELD(WarpOptions, interp)},
    {"prefilter", OptionKind::Text, nullptr, "iir", 0, 0,
     "B-spline prefilter: iir (exact), fir (the default FIR length, 17) or firK, K odd in "
     "3..31 (the paper's FIR)"},
    {"prefiltered", OptionKind::Flag, nullptr, "", 0, 0,
     "B-spline: the source already holds B-spline coefficients of this border (a float image "
     "from the prefilter); no prefilter runs",
     UPRES_OPTION_FIELD(WarpOptions, prefiltered)},
    {"border", OptionKind::Enum, &enum_desc<Border>, "mirror", 0, 0, "Border",
     UPRES_OPTION_FIELD(WarpOptions, border)},
    {"fill", OptionKind::Real, nullptr, "0", -kInf, kInf,
     "Value outside the image with border constant, in the image's units (float images may "
     "take nan)",
     UPRES_OPTION_FIELD(WarpOptions, fill)},
    {"antialias", OptionKind::Flag, nullptr, "", 0, 0,
     "Zoom/resize: low-pass when down-scaling (MATLAB imresize; interp linear or cubic)",
     UPRES_OPTION_FIELD(WarpOptions, antialias)},
    {"fast", OptionKind::Flag, nullptr, "", 0, 0,
     "CUDA hardware-texture mode (8-bit fractional weights; needs the cuda backend)",
     UPRES_OPTION_FIELD(WarpOptions, fast_texture)},
};
}  // namespace
const OperationDesc kWarpDesc{
    "warp", "Rotate, zoom/resize, affine, homography or flow warp with exact interpolation",
    kWarpOptions};
}  // namespace ops

}  // namespace upres
