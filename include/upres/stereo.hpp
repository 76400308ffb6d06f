// Stereo disparity on rectified pairs: the window matcher of Georgis et al. (J. Real-Time Image
// Proc., "Application of the proposed acceleration techniques to stereo correspondence
// algorithms", section 6; docs/ops/stereo.md).
//
//   Cost (the disparity space image, DSI): layer d holds, for left pixel (x, y), the absolute
//   difference between L(x, y) and R(x - d, y) on the 8-bit scale (u8 as is, u16 / 257, f32 x
//   255), averaged over the channels, truncated at max_cost and quantised to 1/16 level (an
//   integer 0..4080); R is read with its column clamped to the image. Census (beyond the
//   paper; Zabih & Woodfill): each pixel's 62-bit code over a 9 x 7 window (bit set where the
//   neighbour's intensity, the channel sum, is below the centre's; coordinates clamped), the
//   cost the Hamming distance between the two codes x 16, truncated at max_cost x 16.
//   Aggregation: in every layer, the Gauss-weighted sum over a 7 x 7 or 13 x 13 window (integer
//   weights g_i g_j, sigma = (M - 1) / 4; rows and columns clamped to the image), or a box sum;
//   or semi-global matching (beyond the paper; Hirschmueller): the cost averaged over a
//   sgm_window square, then summed over 4 or 8 path directions, each path adding P1 for a
//   disparity step of 1 and P2 for a larger one (stereo_math.hpp's sgm_step).
//   Integer throughout, so every backend gives the same sums and the same winners.
//   Winner-takes-all along the depth ray: the smallest sum over the candidates d in
//   [min_disparity, min_disparity + num_disparities) with x - d inside the image; ties go to the
//   smaller d. A pixel without candidates is invalid.
//   Right-based map: right pixel x_r takes the d whose left-based sum at (x_r + d, d) is the
//   smallest (the same pixel pair, so the same cost; the paper's R - L cube up to the clamped
//   window within the window's radius of the image sides).
//   Left-right check (lr_check >= 0): left pixel x with winner d is invalid unless the right
//   map's winner at x - d is within lr_check of d (0: equal, the paper's check).
//   Uniqueness (OpenCV's rule): invalid when a candidate more than one step from the winner has
//   sum * (100 - uniqueness) < winner's sum * 100.
//   Sub-pixel: the parabola through the sums at d - 1, d, d + 1 (where both neighbours are
//   candidates): d + (c- - c+) / (2 (c- - 2 c0 + c+)).
//   Invalid pixels get `invalid` (NaN by default); the optional mask holds 255 where valid.
//
// Input: left and right of the same size, channels (1 or 3) and pixel type (u8, u16, f32;
// finite values, f32 on the [0, 1] scale). Outputs: float, 1 channel, the input's size, in the
// same memory as the input. Backends, bit-identical to one another: Reference (the whole cube,
// the 2-D filter literally), Cpu (streaming: one layer at a time per stripe of rows, the
// separable filter, OpenMP over stripes), Cuda (host inputs are staged through the device) in
// three variants: Stream (the default: stripes of rows, one layer at a time, never the cube;
// device memory O(W x H)), and the paper's GPU kernels buildCube, aggrCube (the non-separable
// 2-D filter from shared memory), cubeMin, crossCheck and parPeakInterp on the whole W x H x D
// cube, with the cost and the aggregated cube apart (Cube2, the paper's dual-cube layout) or one
// cube whose layers are filtered through a W x H buffer and copied back (Cube1).
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include <upres/context.hpp>
#include <upres/image.hpp>
#include <upres/options.hpp>

namespace upres {

enum class StereoCost { AbsDiff, Census };
const char* to_string(StereoCost c) noexcept;  // "ad", "census"
template <>
const EnumDesc& enum_desc<StereoCost>() noexcept;

enum class StereoAggregation { Gauss7, Gauss13, Box, Sgm4, Sgm8 };
// "gauss7", "gauss13", "box", "sgm4", "sgm8"
const char* to_string(StereoAggregation a) noexcept;
template <>
const EnumDesc& enum_desc<StereoAggregation>() noexcept;

// How the cuda backend runs (the other backends accept only Stream, their own streaming form
// and the reference's literal cube).
enum class StereoVariant { Stream, Cube1, Cube2 };
const char* to_string(StereoVariant v) noexcept;  // "stream", "cube1", "cube2"
template <>
const EnumDesc& enum_desc<StereoVariant>() noexcept;

struct StereoOptions {
    int min_disparity = 0;
    int num_disparities = 64;  // 1 .. 1024, at most the image width
    StereoCost cost = StereoCost::AbsDiff;
    StereoAggregation aggregation = StereoAggregation::Gauss7;
    int box_size = 7;         // Box: odd window side, 1 .. 31
    double max_cost = 255.0;  // truncation of the per-pixel cost, 8-bit levels, (0, 255]
    int lr_check = 0;         // largest |d_left - d_right| kept; -1: no check
    bool subpixel = true;
    int uniqueness = 0;  // percent, 0 .. 99; 0: off
    float invalid = std::numeric_limits<float>::quiet_NaN();
    StereoVariant variant = StereoVariant::Stream;
    // Semi-global matching (Sgm4, Sgm8): the penalties of a disparity step of 1 and of more,
    // in the cost's levels (8-bit levels for ad, bits for census; libSGM's census defaults),
    // P1 < P2, (max cost + P2) x paths <= 4095 levels; the pre-window's side (odd, 1..15: the
    // cost averaged over it before the paths; 1: none).
    double p1 = 10.0, p2 = 120.0;
    int sgm_window = 1;
    // Post-filters: a 3 x 3 median over valid neighbours (every backend; with a left-right check,
    // of both maps before the check, libSGM's order: a left pixel stays where the filtered right
    // map at x - rint(d) agrees within lr_check in nearest integers), then speckle removal of the
    // left map (host backends) (OpenCV's filterSpeckles rule): 4-connected regions whose
    // neighbours differ by at most speckle_range pixels and that have at most speckle_size pixels
    // become invalid (0: off).
    bool median = false;
    int speckle_size = 0;
    double speckle_range = 1.0;
};

// left, right: the rectified pair. disparity: W x H x 1 float. right_disparity (optional, empty
// view: not computed): the right-based map, with sub-pixel refinement but no checks. valid
// (optional): 255 where disparity is valid, else 0.
void stereo_disparity(ImageView<const std::uint8_t> left, ImageView<const std::uint8_t> right,
                      ImageView<float> disparity, const StereoOptions& opts = {},
                      const Context& ctx = {}, ImageView<float> right_disparity = {},
                      ImageView<std::uint8_t> valid = {});
void stereo_disparity(ImageView<const std::uint16_t> left, ImageView<const std::uint16_t> right,
                      ImageView<float> disparity, const StereoOptions& opts = {},
                      const Context& ctx = {}, ImageView<float> right_disparity = {},
                      ImageView<std::uint8_t> valid = {});
void stereo_disparity(ImageView<const float> left, ImageView<const float> right,
                      ImageView<float> disparity, const StereoOptions& opts = {},
                      const Context& ctx = {}, ImageView<float> right_disparity = {},
                      ImageView<std::uint8_t> valid = {});
// Any pixel type (both the same); returns the left-based map in the input's memory.
Image<float> stereo_disparity(const AnyImage& left, const AnyImage& right,
                              const StereoOptions& opts = {}, const Context& ctx = {});

}  // namespace upres
