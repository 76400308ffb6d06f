// The CUDA warp's schedule policy (warp_schedule.hpp). Plain C++: compiled in every build, so
// its test runs without a GPU; warp_cuda_kernels.cuh's launch_exact and warp.cpp follow it.
#include "ops/warp/warp_schedule.hpp"

#include <string>

#include <upres/error.hpp>

namespace upres::warp_schedule {

const char* to_string(Kernel k) noexcept {
    switch (k) {
        case Kernel::None:
            return "none";
        case Kernel::PerOutput:
            return "per-output";
        case Kernel::Separable:
            return "separable";
        case Kernel::Tiled:
            return "tiled";
        case Kernel::Split:
            return "split";
        case Kernel::RecFused:
            return "rec-fused";
        case Kernel::Antialias:
            return "antialias";
        case Kernel::Texture:
            return "texture";
    }
    return "unknown";
}

bool axis_aligned(const WarpPlan& p) noexcept {
    return (p.kind == Transform::Kind::Affine || p.kind == Transform::Kind::Resize) &&
           p.m[1] == 0.0 && p.m[3] == 0.0;
}

Case case_of(const WarpPlan& p, PixelType src, PixelType dst, int channels,
             int prefilter) noexcept {
    Case c;
    c.kind = p.kind;
    c.interp = p.interp;
    c.src = src;
    c.dst = dst;
    c.channels = channels;
    c.axis_aligned = axis_aligned(p);
    c.antialias = p.antialias;
    c.fast_texture = p.fast_texture;
    c.prefilter = prefilter;
    c.border = p.border;
    c.schedule = p.schedule;
    return c;
}

void no_kernel(Interp interp, int channels) {
    throw Error(ErrorCode::Internal,
                std::string("cuda::warp: the schedule policy lists no kernel compiled for this "
                            "plan (") +
                    to_string(interp) + ", " + std::to_string(channels) + " channels)");
}

void check_override(const Case& c) {
    Kernel want = Kernel::None;
    switch (c.schedule) {
        case WarpScheduleOverride::Policy:
        case WarpScheduleOverride::NoTiled:
            return;
        case WarpScheduleOverride::PerOutput:
            want = Kernel::PerOutput;
            break;
        case WarpScheduleOverride::Tiled:
            want = Kernel::Tiled;
            break;
        case WarpScheduleOverride::Separable:
            want = Kernel::Separable;
            break;
    }
    const Kernel first = candidates(c)[0];
    if (first != want)
        throw Error(ErrorCode::InvalidArgument, std::string("cuda::warp: the forced schedule '") +
                                                    to_string(want) + "' cannot run this plan (" +
                                                    to_string(c.interp) + ", " +
                                                    std::to_string(c.channels) + " channels" +
                                                    (c.axis_aligned ? ", axis-aligned" : "") +
                                                    "): its kernel is '" + to_string(first) + "'");
}

void forced_kernel_declined(Kernel k) {
    throw Error(ErrorCode::InvalidArgument,
                std::string("cuda::warp: the forced kernel '") + to_string(k) +
                    "' declined this plan (its source box exceeds the shared-memory cap or its "
                    "coordinates exceed 1e7)");
}

std::array<Kernel, 3> candidates(const Case& c) noexcept {
    std::array<Kernel, 3> out{Kernel::None, Kernel::None, Kernel::None};
    int n = 0;
    auto add = [&](Kernel k) { out[static_cast<std::size_t>(n++)] = k; };
    using K = Transform::Kind;
    const bool affine = c.kind == K::Affine || c.kind == K::Resize;
    const bool persp = c.kind == K::Perspective;
    const bool field = c.kind == K::Remap || c.kind == K::Flow;
    using S = WarpScheduleOverride;
    const S s = c.schedule;

    if (c.antialias && c.kind == K::Resize) {
        add(Kernel::Antialias);
        return out;
    }
    // The hardware-texture mode, a separate named mode (nearest and Keys cubic have no texture
    // form and run the exact kernels).
    if (c.fast_texture && (c.interp == Interp::Linear || c.interp == Interp::BSpline)) {
        add(Kernel::Texture);
        return out;
    }
    // The exact IIR prefilter and the interpolation in one pass, for rotations and other
    // non-axis-aligned affine maps of 1-channel float images (H200, 2048^2 rotation: 47.5 against
    // 76 us for prefilter + interpolation; 41.9 us with today's kernel); resizes keep prefilter +
    // separable interpolation (zoom x2: 26.6 against 29.1 us). Nearest pads the image first.
    if (affine && !c.axis_aligned && c.interp == Interp::BSpline && c.prefilter == 0 &&
        c.channels == 1 && c.dst == PixelType::F32 && c.border != Border::Nearest &&
        !c.fast_texture && s == S::Policy)
        add(Kernel::RecFused);
    // Axis-aligned maps: the separable kernel, 1.3-2.2x faster than the tiled one on resizes.
    if ((s == S::Policy || s == S::Separable) && c.axis_aligned) {
        add(Kernel::Separable);
        return out;
    }
    const bool split = split_compiled(c.src, c.dst, c.channels, c.interp);
    // u8 / u16 grey and RGBA bilinear affine maps: the split kernel, whose taps are one load each
    // (H100, 2048^2 rotation: u16 26.5 against 29.1 us tiled, u8 26.5 against 28.1; H200, u8
    // RGBA 44.7 against 53.4). Float and 3-channel images keep the tiled kernel (H100: float grey
    // 25.3 against 26.6 us split, u8 RGB 48.1 against 55.3).
    const bool int_linear = (c.channels == 1 || c.channels == 4) && c.interp == Interp::Linear &&
                            c.src != PixelType::F32 && split;
    // Bilinear perspective maps of 1-channel images: the split kernel (H100, 2048^2 keystone:
    // float 26.8 against 29.1 us tiled, u16 27.7 against 33.8, u8 27.4 against 32.7).
    const bool persp_linear = c.channels == 1 && c.interp == Interp::Linear && split;
    const bool split_first = (int_linear && affine) || (persp_linear && persp);
    if ((affine || persp) && !(split_first && s == S::Policy) && s != S::PerOutput &&
        s != S::NoTiled && tiled_compiled(c.src, c.channels, c.interp))
        add(Kernel::Tiled);
    if (split &&
        ((affine && c.interp == Interp::Linear) || ((field || persp) && s != S::PerOutput)))
        add(Kernel::Split);
    else
        add(Kernel::PerOutput);
    return out;
}

}  // namespace upres::warp_schedule
