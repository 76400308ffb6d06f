// The CUDA warp's choice among its kernels, as data: which kernels exist for which pixel types
// (compile-time traits the kernels' templates use too), and one policy function that lists, for a
// plan's class, the kernels to try in order. Plain C++ (no CUDA), so the policy is tested on every
// machine (tests/ops/warp_schedule_test.cpp names the kernel of every transform kind x
// interpolation x pixel type x channel count). The kernels themselves are described in
// docs/ops/warp.md, "CUDA schedules"; the measurements behind each rule are beside the rules
// below.
#pragma once

#include <array>

#include <upres/image.hpp>
#include <upres/warp.hpp>

#include "ops/warp/warp_backends.hpp"

namespace upres::warp_schedule {

enum class Kernel {
    None,       // end of a candidate list
    PerOutput,  // warp_kernel: one thread per 4 outputs, the exact border rule per output
    Separable,  // warp_separable_kernel: axis-aligned maps, taps and row sums per axis
    Tiled,      // warp_tile_lean_kernel: the tile's source box in shared memory
    Split,      // warp_affine / field / persp kernels: float split coordinates, border band
    RecFused,   // rec_fused_kernel: the exact IIR prefilter and the interpolation in one pass
    Antialias,  // resize_aa_kernel: antialiased resize, one thread per output
    Texture,    // warp_texture_kernel: the hardware-texture mode, asked for by name only
};
const char* to_string(Kernel k) noexcept;

constexpr int taps(Interp i) { return i == Interp::Nearest ? 1 : i == Interp::Linear ? 2 : 4; }
// The split kernels are compiled for float sources, and for u8 / u16 sources written to the same
// type with the continuous interpolations other than the B-spline (whose source is its float
// coefficients).
constexpr bool split_compiled(PixelType src, PixelType dst, int channels, Interp i) {
    return channels >= 1 && channels <= 4 && i != Interp::Nearest &&
           (src == PixelType::F32 || (src == dst && i != Interp::BSpline));
}
// The tiled kernel: 1, 3 or 4 channels, the continuous interpolations, B-spline on float
// coefficients.
constexpr bool tiled_compiled(PixelType src, int channels, Interp i) {
    return (channels == 1 || channels == 3 || channels == 4) && taps(i) >= 2 &&
           (src == PixelType::F32 || i != Interp::BSpline);
}

// What the choice depends on besides run-time sizes.
struct Case {
    Transform::Kind kind = Transform::Kind::Affine;
    Interp interp = Interp::BSpline;
    PixelType src = PixelType::F32;  // the kernel's source: float coefficients for B-spline
    PixelType dst = PixelType::F32;
    int channels = 1;
    bool axis_aligned = false;  // Resize, or Affine with m1 = m3 = 0
    bool antialias = false;
    bool fast_texture = false;
    int prefilter = 0;  // B-spline: 0 = exact IIR, else the FIR length
    Border border = Border::Mirror;
    // WarpPlan::schedule (tests and benchmarks): the kernel forced first; check_override()
    // refuses the plans it cannot run.
    WarpScheduleOverride schedule = WarpScheduleOverride::Policy;
};

// Resize, or Affine with m1 = m3 = 0 (scales, shifts, flips): u depends on x only, v on y only.
bool axis_aligned(const WarpPlan& p) noexcept;
// The policy's view of a plan whose kernels read `src` samples (float coefficients for the
// B-spline) and write `dst` pixels.
Case case_of(const WarpPlan& p, PixelType src, PixelType dst, int channels, int prefilter) noexcept;

// Error(Internal): the policy listed no kernel compiled for this plan (a programming error). Out
// of line, so that the hundreds of kernel launchers do not each compile the message.
[[noreturn]] void no_kernel(Interp interp, int channels);

// Error(InvalidArgument) when c.schedule forces a kernel that the plan's class cannot run (for
// example the per-output kernel on bilinear affine maps, which only the split kernel computes,
// or the separable kernel on a rotation). Nothing for Policy and NoTiled.
void check_override(const Case& c);
// Error(InvalidArgument): the forced kernel declined the plan at run time (the tiled kernel's box
// beyond its shared-memory cap or coordinates beyond 1e7).
[[noreturn]] void forced_kernel_declined(Kernel k);

// The kernels to try, in order. With c.schedule forcing a kernel, that kernel first where
// check_override() accepts the case. A kernel may decline a plan at run time (the recursive fused
// kernel boxes over 64 KB or sources under 16 x 16, the tiled kernel boxes over its
// shared-memory cap or coordinates beyond 1e7); the next one then runs. The last entry never
// declines.
std::array<Kernel, 3> candidates(const Case& c) noexcept;

}  // namespace upres::warp_schedule
