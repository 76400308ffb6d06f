// The B-spline prefilter's option table (upres/options.hpp), the PrefilterVariant names and the
// prefilter spelling users type ("iir", "fir", "firK").
#include <string>

#include <cstddef>
#include <upres/bspline.hpp>
#include <upres/error.hpp>

#include <upres/options.hpp>

#include "core/operations.hpp"

namespace upres {

namespace {
constexpr EnumEntry kVariants[] = {
    {static_cast<int>(PrefilterVariant::Auto), "auto", "the fastest variant for the filter"},
    {static_cast<int>(PrefilterVariant::Recursive), "recursive",
     "IIR, one thread per row / column (the paper's baseline)"},
    {static_cast<int>(PrefilterVariant::FirShared), "fir-shared",
     "FIR rows through shared memory, columns with a rotating window (paper Fig. 5)"},
    {static_cast<int>(PrefilterVariant::FirFused), "fir-fused",
     "FIR rows and columns in one pass over 2-D tiles"},
    {static_cast<int>(PrefilterVariant::IirFused), "iir-fused",
     "exact IIR in one pass over overlapped tiles"},
};
constexpr EnumDesc kVariantDesc{"prefilter variant", kVariants};
constexpr EnumEntry kAxes[] = {
    {static_cast<int>(PrefilterAxes::Both), "both", "rows and columns (the 2-D prefilter)"},
    {static_cast<int>(PrefilterAxes::X), "x", "along each row only (1-D, scipy axis=-1)"},
    {static_cast<int>(PrefilterAxes::Y), "y", "along each column only (1-D, scipy axis=0)"},
};
constexpr EnumDesc kAxesDesc{"prefilter axes", kAxes};
}  // namespace

template <>
const EnumDesc& enum_desc<PrefilterAxes>() noexcept {
    return kAxesDesc;
}
const char* to_string(PrefilterAxes a) noexcept { return enum_name(a); }

template <>
const EnumDesc& enum_desc<PrefilterVariant>() noexcept {
    return kVariantDesc;
}
const char* to_string(PrefilterVariant v) noexcept { return enum_name(v); }
PrefilterVariant parse_prefilter_variant(const std::string& name) {
    return parse_enum<PrefilterVariant>(name);
}

int parse_prefilter_name(const std::string& s) {
    if (s == "iir") return 0;
    if (s == "fir") return kDefaultFirLength;
    if (s.size() > 3 && s.compare(0, 3, "fir") == 0) {
        const std::string n = s.substr(3);
        if (n.find_first_not_of("0123456789") == std::string::npos && n.size() <= 2) {
            const int k = std::stoi(n);
            if (k >= 3 && k <= 31 && k % 2 == 1) return k;
        }
    }
    throw Error(ErrorCode::InvalidArgument,
                "unknown prefilter '" + s + "' (allowed: iir, fir (= fir" +
                    std::to_string(kDefaultFirLength) + "), fir3, fir5, ..., fir31)");
}

namespace ops {
namespace {
constexpr OptionDesc kPrefilterOptions[] = {
    {"border", OptionKind::Enum, &enum_desc<Border>, "mirror", 0, 0, "Border",
     UPRES_OPTION_FIELD(PrefilterOptions, border)},
    {"fir-length", OptionKind::Int, nullptr, "0", 0, 31,
     "0: the exact IIR filter; odd 3..31: the paper's FIR filter with that many taps",
     UPRES_OPTION_FIELD(PrefilterOptions, fir_length)},
    {"variant", OptionKind::Enum, &enum_desc<PrefilterVariant>, "auto", 0, 0,
     "Kernel variant (CUDA; the CPU backends accept auto and the variants computing the "
     "requested filter)",
     UPRES_OPTION_FIELD(PrefilterOptions, variant)},
    {"axes", OptionKind::Enum, &enum_desc<PrefilterAxes>, "both", 0, 0,
     "Axes filtered (x or y alone: the 1-D filter along rows or columns)",
     UPRES_OPTION_FIELD(PrefilterOptions, axes)},
};
}  // namespace
const OperationDesc kPrefilterDesc{"prefilter", "Cubic B-spline coefficients of an image",
                                   kPrefilterOptions};
}  // namespace ops

}  // namespace upres
