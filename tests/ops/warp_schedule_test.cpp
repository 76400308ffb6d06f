// The CUDA warp's schedule policy (src/ops/warp/warp_schedule.hpp), without a GPU: for every
// transform kind x interpolation x pixel type x channel count, the kernels the exact path tries,
// in order. A change of policy changes this table in the same commit, with its measurement in
// warp_schedule.cpp. (The kernels themselves are checked against each other on the GPU by
// warp_cuda_test.cpp, which forces every schedule through WarpPlan::schedule.)
#include <gtest/gtest.h>

#include <string>

#include "ops/warp/warp_schedule.hpp"
#include "test_util.hpp"

namespace upres {
namespace {

using test::expect_error;
using warp_schedule::Case;
using warp_schedule::check_override;
using warp_schedule::forced_kernel_declined;
using warp_schedule::Kernel;

// One letter per kernel: P per-output, S separable, T tiled, L split, R recursive fused,
// A antialias, X texture.
char letter(Kernel k) {
    switch (k) {
        case Kernel::PerOutput:
            return 'P';
        case Kernel::Separable:
            return 'S';
        case Kernel::Tiled:
            return 'T';
        case Kernel::Split:
            return 'L';
        case Kernel::RecFused:
            return 'R';
        case Kernel::Antialias:
            return 'A';
        case Kernel::Texture:
            return 'X';
        case Kernel::None:
            break;
    }
    return '-';
}

std::string order(const Case& c) {
    std::string s;
    for (Kernel k : warp_schedule::candidates(c))
        if (k != Kernel::None) s += letter(k);
    return s;
}

struct KindRow {
    const char* name;
    Transform::Kind kind;
    bool axis_aligned;
};

const KindRow kKinds[] = {
    {"rotation", Transform::Kind::Affine, false},
    {"resize", Transform::Kind::Resize, true},
    {"perspective", Transform::Kind::Perspective, false},
    {"remap", Transform::Kind::Remap, false},
    {"flow", Transform::Kind::Flow, false},
};

// kind, interpolation, then u8, u16 and f32 images, channels 1 to 4 (B-spline: the kernels
// read the float coefficients and write the image's type; the exact IIR prefilter, Mirror).
struct Expected {
    const char* kind;
    const char* interp;
    const char* orders;
};
// clang-format off
const Expected kTable[] = {
    {"rotation", "nearest", "P,P,P,P P,P,P,P P,P,P,P"},
    {"rotation", "linear", "L,L,TL,L L,L,TL,L TL,L,TL,TL"},
    {"rotation", "cubic", "TP,P,TP,TP TP,P,TP,TP TP,P,TP,TP"},
    {"rotation", "bspline", "TP,P,TP,TP TP,P,TP,TP RTP,P,TP,TP"},
    {"resize", "nearest", "S,S,S,S S,S,S,S S,S,S,S"},
    {"resize", "linear", "S,S,S,S S,S,S,S S,S,S,S"},
    {"resize", "cubic", "S,S,S,S S,S,S,S S,S,S,S"},
    {"resize", "bspline", "S,S,S,S S,S,S,S S,S,S,S"},
    {"perspective", "nearest", "P,P,P,P P,P,P,P P,P,P,P"},
    {"perspective", "linear", "L,L,TL,TL L,L,TL,TL L,L,TL,TL"},
    {"perspective", "cubic", "TL,L,TL,TL TL,L,TL,TL TL,L,TL,TL"},
    {"perspective", "bspline", "TL,L,TL,TL TL,L,TL,TL TL,L,TL,TL"},
    {"remap", "nearest", "P,P,P,P P,P,P,P P,P,P,P"},
    {"remap", "linear", "L,L,L,L L,L,L,L L,L,L,L"},
    {"remap", "cubic", "L,L,L,L L,L,L,L L,L,L,L"},
    {"remap", "bspline", "L,L,L,L L,L,L,L L,L,L,L"},
    {"flow", "nearest", "P,P,P,P P,P,P,P P,P,P,P"},
    {"flow", "linear", "L,L,L,L L,L,L,L L,L,L,L"},
    {"flow", "cubic", "L,L,L,L L,L,L,L L,L,L,L"},
    {"flow", "bspline", "L,L,L,L L,L,L,L L,L,L,L"},
};
// clang-format on

TEST(WarpSchedule, EveryKindInterpTypeAndChannelCount) {
    const Interp interps[] = {Interp::Nearest, Interp::Linear, Interp::Cubic, Interp::BSpline};
    const PixelType types[] = {PixelType::U8, PixelType::U16, PixelType::F32};
    int rows = 0;
    for (const KindRow& k : kKinds)
        for (Interp in : interps) {
            std::string got;
            for (PixelType t : types) {
                if (t != PixelType::U8) got += ' ';
                for (int c = 1; c <= 4; ++c) {
                    Case cs;
                    cs.kind = k.kind;
                    cs.axis_aligned = k.axis_aligned;
                    cs.interp = in;
                    cs.dst = t;
                    cs.src = in == Interp::BSpline ? PixelType::F32 : t;
                    cs.channels = c;
                    if (c > 1) got += ',';
                    got += order(cs);
                }
            }
            bool found = false;
            for (const Expected& e : kTable)
                if (k.name == std::string(e.kind) && std::string(to_string(in)) == e.interp) {
                    EXPECT_EQ(got, e.orders) << k.name << " " << to_string(in);
                    found = true;
                    ++rows;
                }
            EXPECT_TRUE(found) << k.name << " " << to_string(in);
        }
    EXPECT_EQ(rows, 20);
}

TEST(WarpSchedule, TheRecursiveFusedKernelOnlyWhereItWasMeasuredFaster) {
    Case c;  // float 1-channel rotation, B-spline, exact prefilter, Mirror
    EXPECT_EQ(order(c), "RTP");
    Case fir = c;
    fir.prefilter = 15;  // FIR: prefilter + interpolation
    EXPECT_EQ(order(fir), "TP");
    Case nearest = c;
    nearest.border = Border::Nearest;  // its prefilter pads the image first
    EXPECT_EQ(order(nearest), "TP");
    Case rgb = c;
    rgb.channels = 3;
    EXPECT_EQ(order(rgb), "TP");
    Case u8 = c;
    u8.dst = PixelType::U8;  // the fused kernel writes float
    EXPECT_EQ(order(u8), "TP");
    Case zoom = c;
    zoom.kind = Transform::Kind::Resize;
    zoom.axis_aligned = true;  // resizes: prefilter + separable, measured faster
    EXPECT_EQ(order(zoom), "S");
    Case scale_flip = c;
    scale_flip.axis_aligned = true;  // an affine map with m1 = m3 = 0 is a resize too
    EXPECT_EQ(order(scale_flip), "S");
}

// A forced kernel runs first where the plan's class has it, and check_override() refuses the
// others (a benchmark never measures another kernel than the one it names).
TEST(WarpSchedule, OverridesForTestsAndBenchmarks) {
    using O = WarpScheduleOverride;
    Case c;
    c.interp = Interp::Cubic;
    c.schedule = O::PerOutput;
    EXPECT_EQ(order(c), "P");
    EXPECT_NO_THROW(check_override(c));
    c.schedule = O::Tiled;
    EXPECT_EQ(order(c), "TP");
    EXPECT_NO_THROW(check_override(c));
    c.schedule = O::NoTiled;
    EXPECT_EQ(order(c), "P");
    EXPECT_NO_THROW(check_override(c));
    Case lin;
    lin.interp = Interp::Linear;
    lin.src = lin.dst = PixelType::U16;
    EXPECT_EQ(order(lin), "L");
    lin.schedule = O::Tiled;  // the tiled kernel first, even where the split one is the default
    EXPECT_EQ(order(lin), "TL");
    EXPECT_NO_THROW(check_override(lin));
    // Linear affine maps have no per-output form apart from the split kernel: refused.
    lin.schedule = O::PerOutput;
    EXPECT_EQ(order(lin), "L");
    expect_error([&] { check_override(lin); }, ErrorCode::InvalidArgument, "'per-output'");
    expect_error([&] { check_override(lin); }, ErrorCode::InvalidArgument, "its kernel is 'split'");
    Case flow;
    flow.kind = Transform::Kind::Flow;
    flow.interp = Interp::Linear;
    flow.schedule = O::PerOutput;
    EXPECT_EQ(order(flow), "P");
    EXPECT_NO_THROW(check_override(flow));
    flow.schedule = O::Tiled;  // fields have no tiled kernel
    expect_error([&] { check_override(flow); }, ErrorCode::InvalidArgument, "'tiled'");
    Case zoom;
    zoom.kind = Transform::Kind::Resize;
    zoom.axis_aligned = true;
    zoom.interp = Interp::Linear;
    zoom.schedule = O::Tiled;  // the tiled kernel instead of the separable one
    EXPECT_EQ(order(zoom), "TL");
    zoom.schedule = O::Separable;
    EXPECT_EQ(order(zoom), "S");
    EXPECT_NO_THROW(check_override(zoom));
    Case rot3 = zoom;
    rot3.kind = Transform::Kind::Affine;
    rot3.axis_aligned = false;  // the separable kernel where the map is not axis-aligned: refused
    expect_error([&] { check_override(rot3); }, ErrorCode::InvalidArgument, "'separable'");
    expect_error([&] { check_override(rot3); }, ErrorCode::InvalidArgument,
                 "its kernel is 'tiled'");
    Case near = c;
    near.interp = Interp::Nearest;  // nearest has no tiled kernel
    near.schedule = O::Tiled;
    expect_error([&] { check_override(near); }, ErrorCode::InvalidArgument, "'tiled'");
    EXPECT_THROW(forced_kernel_declined(Kernel::Tiled), Error);
}

TEST(WarpSchedule, NamedModesComeFirst) {
    Case aa;
    aa.kind = Transform::Kind::Resize;
    aa.axis_aligned = true;
    aa.interp = Interp::Cubic;
    aa.antialias = true;
    EXPECT_EQ(order(aa), "A");
    Case tex;
    tex.interp = Interp::Linear;
    tex.fast_texture = true;
    EXPECT_EQ(order(tex), "X");
    tex.interp = Interp::BSpline;
    EXPECT_EQ(order(tex), "X");
    tex.interp = Interp::Cubic;  // Keys weights are negative: no texture form, the exact kernels
    EXPECT_EQ(order(tex), "TP");
}

TEST(WarpSchedule, CompiledCombinationsAndNames) {
    using warp_schedule::split_compiled;
    using warp_schedule::tiled_compiled;
    EXPECT_TRUE(split_compiled(PixelType::F32, PixelType::U8, 3, Interp::BSpline));
    EXPECT_FALSE(split_compiled(PixelType::U8, PixelType::U8, 1, Interp::BSpline));
    EXPECT_FALSE(split_compiled(PixelType::F32, PixelType::F32, 1, Interp::Nearest));
    EXPECT_FALSE(split_compiled(PixelType::U16, PixelType::U8, 1, Interp::Linear));
    EXPECT_TRUE(tiled_compiled(PixelType::U8, 4, Interp::Cubic));
    EXPECT_FALSE(tiled_compiled(PixelType::F32, 2, Interp::Linear));
    EXPECT_FALSE(tiled_compiled(PixelType::F32, 1, Interp::Nearest));
    EXPECT_STREQ(warp_schedule::to_string(Kernel::RecFused), "rec-fused");
    EXPECT_STREQ(warp_schedule::to_string(Kernel::Split), "split");
    WarpPlan p;
    p.kind = Transform::Kind::Affine;
    p.m[0] = 2, p.m[4] = -1;  // a scale and a flip
    EXPECT_TRUE(warp_schedule::axis_aligned(p));
    p.m[1] = 1e-9;
    EXPECT_FALSE(warp_schedule::axis_aligned(p));
    p.kind = Transform::Kind::Perspective;
    p.m[1] = 0;
    EXPECT_FALSE(warp_schedule::axis_aligned(p));
}

}  // namespace
}  // namespace upres
