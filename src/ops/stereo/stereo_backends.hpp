// Internal backend entry points of upres::stereo_disparity. stereo.cpp validates everything and
// builds the plan; backends do no validation. Backends agree exactly (integer costs and sums,
// stereo_math.hpp): tests compare them bit for bit.
#pragma once

#include <cstdint>
#include <limits>

#include <upres/stereo.hpp>

#include "core/span2d.hpp"

namespace upres {

struct StereoPlan {
    int min_d = 0, num_d = 1;
    bool census = false;           // the census cost (else the absolute difference)
    int max_q = 4080;              // the cost truncation, 1/16 levels
    int radius = 3;                // the window's half side
    const int* weights = nullptr;  // radius + 1 one-sided weights (g_0 .. g_r)
    int lr_check = 0;              // -1: none
    bool subpixel = true;
    int uniqueness = 0;
    float invalid = 0.0f;
    // Semi-global matching (sgm4, sgm8): paths 4 or 8 (0: the window matcher), penalties and the
    // pre-window's radius in cost units / pixels.
    int sgm_paths = 0;
    int p1 = 0, p2 = 0;
    int sgm_radius = 0;
    bool median = false;  // the 3 x 3 median post-filter (the cuda backend applies it itself;
                          // with a check, the matcher runs without it: stereo_median_check)
};

// The left map's post-filters (stereo_post.cpp, host memory; every host backend's result goes
// through them): a 3 x 3 median over the valid neighbours of each valid pixel, then the removal
// of speckles (4-connected regions whose neighbours differ by at most `speckle_range` pixels,
// of at most `speckle_size` pixels become invalid; OpenCV's filterSpeckles rule). disparity /
// valid: W x H.
void stereo_post_filter(Span2D<float> disparity, Span2D<std::uint8_t> valid, bool median,
                        int speckle_size, double speckle_range, float invalid);

// The median with a left-right check filters both maps before the check (libSGM's order;
// docs/ops/stereo.md): the matcher then runs with matcher_plan(plan), without the check and with
// NaN for invalid pixels.
inline bool median_before_check(const StereoPlan& p) { return p.median && p.lr_check >= 0; }
inline StereoPlan matcher_plan(StereoPlan p) {
    if (median_before_check(p)) {
        p.lr_check = -1;
        p.invalid = std::numeric_limits<float>::quiet_NaN();
    }
    return p;
}

// The median with a check, after a matcher that ran with matcher_plan(plan): both maps get the 3 x
// 3 median over valid neighbours, then a left pixel stays valid where the filtered right map agrees
// within lr_check (stereo::filtered_agree); invalid pixels of both maps then take `invalid`. Host
// memory.
void stereo_median_check(Span2D<float> disparity, Span2D<std::uint8_t> valid, Span2D<float> right,
                         int lr_check, float invalid);

// The widest image the cuda backend's semi-global search takes (two 32-bit keys per pixel of
// a row in shared memory).
inline constexpr int kSgmCudaMaxWidth = 28 * 1024;

// The plan's 1-D weights for an aggregation (box: all ones).
const int* stereo_weights(StereoAggregation a);

}  // namespace upres

// Each backend: left / right of the same size and channels; disparity W x H; right_disparity
// (data may be null: not computed) W x H; valid (data may be null) W x H.
namespace upres::ref {
template <class T>
void stereo(Span2D<const T> left, Span2D<const T> right, Span2D<float> disparity,
            Span2D<float> right_disparity, Span2D<std::uint8_t> valid, const StereoPlan& plan);
}  // namespace upres::ref

namespace upres::cpu {
template <class T>
void stereo(Span2D<const T> left, Span2D<const T> right, Span2D<float> disparity,
            Span2D<float> right_disparity, Span2D<std::uint8_t> valid, const StereoPlan& plan,
            int threads);
// The semi-global matcher (plan.sgm_paths > 0), called by stereo(); census codes W x H (census
// cost) or null; scratch: sgm_scratch_bytes(plan, W x H, threads) bytes, 64-byte aligned.
template <class T>
void stereo_sgm(Span2D<const T> left, Span2D<const T> right, Span2D<float> disparity,
                Span2D<float> right_disparity, Span2D<std::uint8_t> valid, const StereoPlan& plan,
                const std::uint64_t* census_left, const std::uint64_t* census_right, void* scratch,
                int threads);
std::size_t sgm_scratch_bytes(const StereoPlan& plan, std::size_t pixels, int threads);
}  // namespace upres::cpu

namespace upres::cuda {
// Device spans; asynchronous on `stream` (the host only waits for nothing). Defined in CUDA
// builds only. Throws Error(OutOfMemory) when the variant's buffers do not fit.
template <class T>
void stereo(Span2D<const T> left, Span2D<const T> right, Span2D<float> disparity,
            Span2D<float> right_disparity, Span2D<std::uint8_t> valid, const StereoPlan& plan,
            StereoVariant variant, void* stream);
}  // namespace upres::cuda
