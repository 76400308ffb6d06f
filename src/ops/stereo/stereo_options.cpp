// stereo's option table (upres/options.hpp) and the StereoCost / StereoAggregation names.
#include <cstddef>
#include <limits>

#include <upres/options.hpp>
#include <upres/stereo.hpp>

#include "core/operations.hpp"

namespace upres {

namespace {
constexpr EnumEntry kCosts[] = {
    {static_cast<int>(StereoCost::AbsDiff), "ad",
     "absolute difference, channel mean, truncated at max-cost (the paper's DSI)"},
    {static_cast<int>(StereoCost::Census), "census",
     "Hamming distance of 9 x 7 census codes (robust to gain and offset between the views)"},
};
constexpr EnumEntry kAggregations[] = {
    {static_cast<int>(StereoAggregation::Gauss7), "gauss7",
     "Gauss-weighted 7 x 7 window (the paper's FPGA matcher)"},
    {static_cast<int>(StereoAggregation::Gauss13), "gauss13",
     "Gauss-weighted 13 x 13 window (the paper's GPU matcher)"},
    {static_cast<int>(StereoAggregation::Box), "box",
     "box-size x box-size window sum (box:N on the command line: a side of N)"},
    {static_cast<int>(StereoAggregation::Sgm4), "sgm4",
     "semi-global matching along 4 paths (horizontal and vertical)"},
    {static_cast<int>(StereoAggregation::Sgm8), "sgm8",
     "semi-global matching along 8 paths (and the diagonals)"},
};
constexpr EnumEntry kVariants[] = {
    {static_cast<int>(StereoVariant::Stream), "stream",
     "stripes of rows, one disparity layer at a time; memory O(W x H) (every backend)"},
    {static_cast<int>(StereoVariant::Cube1), "cube1",
     "cuda: the paper's kernels on one W x H x D cube, layers filtered through a buffer"},
    {static_cast<int>(StereoVariant::Cube2), "cube2",
     "cuda: the paper's kernels on a cost cube and an aggregated cube (dual-cube layout)"},
};
constexpr EnumDesc kVariantDesc{"stereo variant", kVariants};
constexpr EnumDesc kCostDesc{"stereo cost", kCosts};
constexpr EnumDesc kAggregationDesc{"stereo aggregation", kAggregations};
}  // namespace

template <>
const EnumDesc& enum_desc<StereoCost>() noexcept {
    return kCostDesc;
}
template <>
const EnumDesc& enum_desc<StereoAggregation>() noexcept {
    return kAggregationDesc;
}
template <>
const EnumDesc& enum_desc<StereoVariant>() noexcept {
    return kVariantDesc;
}
const char* to_string(StereoVariant v) noexcept { return enum_name(v); }
const char* to_string(StereoCost c) noexcept { return enum_name(c); }
const char* to_string(StereoAggregation a) noexcept { return enum_name(a); }

namespace ops {
namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr OptionDesc kStereoOptions[] = {
    {"min-disparity", OptionKind::Int, nullptr, "0", -65536, 65536,
     "Smallest disparity searched (pixels)", UPRES_OPTION_FIELD(StereoOptions, min_disparity)},
    {"disparities", OptionKind::Int, nullptr, "64", 1, 1024,
     "How many disparities are searched (at most the image width)",
     UPRES_OPTION_FIELD(StereoOptions, num_disparities)},
    {"cost", OptionKind::Enum, &enum_desc<StereoCost>, "ad", 0, 0, "Matching cost",
     UPRES_OPTION_FIELD(StereoOptions, cost)},
    {"aggregate", OptionKind::Enum, &enum_desc<StereoAggregation>, "gauss7", 0, 0,
     "Cost aggregation", UPRES_OPTION_FIELD(StereoOptions, aggregation)},
    {"box-size", OptionKind::Int, nullptr, "7", 1, 31, "aggregate box: odd window side",
     UPRES_OPTION_FIELD(StereoOptions, box_size)},
    {"max-cost", OptionKind::Real, nullptr, "255", 0.0625, 255,
     "Truncation of the per-pixel cost (8-bit levels; 255: none, the paper's AD)",
     UPRES_OPTION_FIELD(StereoOptions, max_cost)},
    {"lr-check", OptionKind::Int, nullptr, "0", -1, 1024,
     "Largest left-right disparity difference kept (-1: no check)",
     UPRES_OPTION_FIELD(StereoOptions, lr_check)},
    {"no-subpixel", OptionKind::Flag, nullptr, "", 0, 0, "Integer disparities (no parabola fit)"},
    {"uniqueness", OptionKind::Int, nullptr, "0", 0, 99,
     "Percent margin of the winner over candidates two or more steps away (0: off)",
     UPRES_OPTION_FIELD(StereoOptions, uniqueness)},
    {"invalid", OptionKind::Real, nullptr, "nan", -kInf, kInf, "Value written for invalid pixels",
     UPRES_OPTION_FIELD(StereoOptions, invalid)},
    {"p1", OptionKind::Real, nullptr, "10", 0, 4095,
     "sgm: penalty of a disparity step of 1 (cost levels: 8-bit levels for ad, bits for census)",
     UPRES_OPTION_FIELD(StereoOptions, p1)},
    {"p2", OptionKind::Real, nullptr, "120", 0, 4095,
     "sgm: penalty of a larger disparity step (cost levels; more than p1)",
     UPRES_OPTION_FIELD(StereoOptions, p2)},
    {"sgm-window", OptionKind::Int, nullptr, "1", 1, 15,
     "sgm: odd side of the window the cost is averaged over before the paths (1: none)",
     UPRES_OPTION_FIELD(StereoOptions, sgm_window)},
    {"median", OptionKind::Flag, nullptr, "", 0, 0,
     "3 x 3 median over valid neighbours (with a check: of both maps, before it)",
     UPRES_OPTION_FIELD(StereoOptions, median)},
    {"speckle-size", OptionKind::Int, nullptr, "0", 0, 100000,
     "Invalidate connected regions of at most this many pixels (0: off)",
     UPRES_OPTION_FIELD(StereoOptions, speckle_size)},
    {"speckle-range", OptionKind::Real, nullptr, "1", 0, 1024,
     "Largest disparity step inside a connected region (pixels)",
     UPRES_OPTION_FIELD(StereoOptions, speckle_range)},
    {"variant", OptionKind::Enum, &enum_desc<StereoVariant>, "stream", 0, 0,
     "How the cuda backend runs (the paper's cube kernels for reproduction)",
     UPRES_OPTION_FIELD(StereoOptions, variant)},
};
}  // namespace
const OperationDesc kStereoDesc{"stereo", "Disparity of a rectified stereo pair", kStereoOptions};
}  // namespace ops

}  // namespace upres
