// nlm_fuse's option table (upres/options.hpp) and the NlmsrVariant / NlmsrPost names.
#include <upres/nlmsr.hpp>
#include <upres/options.hpp>

#include "core/operations.hpp"
#include "ops/nlmsr/nlmsr_math.hpp"
#include "ops/srcnn/srcnn_option_rows.hpp"

namespace upres {

namespace {
constexpr EnumEntry kVariants[] = {
    {static_cast<int>(NlmsrVariant::Simple), "simple",
     "cuda: the paper's simple kernel (one thread per pixel, patches from global memory)"},
    {static_cast<int>(NlmsrVariant::Shared), "shared",
     "cuda: the paper's shared-memory kernel (tiles of every frame cached per block)"},
    {static_cast<int>(NlmsrVariant::Fast), "fast",
     "patch distances as box sums per search offset (every backend's default)"},
};
constexpr EnumEntry kPosts[] = {
    {static_cast<int>(NlmsrPost::None), "none", "the fused frame as it is (the paper)"},
    {static_cast<int>(NlmsrPost::BackProject), "backproject",
     "iterative back-projection onto the reference frame (Protter's deblurring step)"},
    {static_cast<int>(NlmsrPost::Reconstruct), "reconstruct",
     "every frame's samples at every phase of the output grid, through a camera model"},
};
constexpr EnumDesc kVariantDesc{"nlmsr variant", kVariants};
constexpr EnumDesc kPostDesc{"nlmsr post-step", kPosts};
}  // namespace

template <>
const EnumDesc& enum_desc<NlmsrVariant>() noexcept {
    return kVariantDesc;
}
template <>
const EnumDesc& enum_desc<NlmsrPost>() noexcept {
    return kPostDesc;
}
const char* to_string(NlmsrVariant v) noexcept { return enum_name(v); }
const char* to_string(NlmsrPost p) noexcept { return enum_name(p); }

namespace ops {
namespace {
constexpr OptionDesc kNlmsrOptions[] = {
    {"scale", OptionKind::Int, nullptr, "2", 2, 4, "Up-scaling factor",
     UPRES_OPTION_FIELD(NlmsrOptions, scale)},
    {"reference", OptionKind::Int, nullptr, "-1", -1, nlmsr::kMaxFrames - 1,
     "Index of the reference frame (-1: the middle one)",
     UPRES_OPTION_FIELD(NlmsrOptions, reference)},
    {"patch", OptionKind::Int, nullptr, "13", 1, nlmsr::kMaxPatch,
     "Odd patch side on the output grid", UPRES_OPTION_FIELD(NlmsrOptions, patch)},
    {"search", OptionKind::Int, nullptr, "3", 1, nlmsr::kMaxSearch,
     "Odd search-window side on the output grid (the paper: 5)",
     UPRES_OPTION_FIELD(NlmsrOptions, search)},
    {"sigma", OptionKind::Real, nullptr, "0", 0, 255,
     "Weight scale, 8-bit levels (0: from the reference frame's estimated noise)",
     UPRES_OPTION_FIELD(NlmsrOptions, sigma)},
    {"noise", OptionKind::Real, nullptr, "-1", -1, 255,
     "The reference frame's noise, 8-bit levels, the weight scales derive from (-1: estimated; "
     "fuse --tiled passes the whole frame's to its bands)",
     UPRES_OPTION_FIELD(NlmsrOptions, noise)},
    {"iterations", OptionKind::Int, nullptr, "1", 1, 8,
     "Fusion passes (each takes the last result as the estimate)",
     UPRES_OPTION_FIELD(NlmsrOptions, iterations)},
    {"post", OptionKind::Enum, &enum_desc<NlmsrPost>, "backproject", 0, 0, "Step after the fusion",
     UPRES_OPTION_FIELD(NlmsrOptions, post)},
    {"back-projections", OptionKind::Int, nullptr, "3", 1, 20, "post backproject: rounds",
     UPRES_OPTION_FIELD(NlmsrOptions, back_projections)},
    {"psf-sigma", OptionKind::Real, nullptr, "0.4", 0, 2,
     "post reconstruct: the camera's optical blur, Gaussian sigma in input pixels",
     UPRES_OPTION_FIELD(NlmsrOptions, psf_sigma)},
    {"reconstructions", OptionKind::Int, nullptr, "10", 1, 50, "post reconstruct: rounds",
     UPRES_OPTION_FIELD(NlmsrOptions, reconstructions)},
    rebound(srcnn_rows::kModel, UPRES_OPTION_FIELD(NlmsrOptions, model),
            "post reconstruct: a .srcnn weights file for the start instead of the bundled model"),
    rebound(srcnn_rows::kPrecision, UPRES_OPTION_FIELD(NlmsrOptions, precision),
            "post reconstruct: the start's arithmetic on the cuda backend (cpu and reference run "
            "fp32)"),
    {"variant", OptionKind::Enum, &enum_desc<NlmsrVariant>, "fast", 0, 0,
     "How the cuda backend runs (the paper's kernels for reproduction)",
     UPRES_OPTION_FIELD(NlmsrOptions, variant)},
    {"block-x", OptionKind::Int, nullptr, "8", 1, 64, "variant shared: thread block width",
     UPRES_OPTION_FIELD(NlmsrOptions, block_x)},
    {"block-y", OptionKind::Int, nullptr, "8", 1, 64, "variant shared: thread block height",
     UPRES_OPTION_FIELD(NlmsrOptions, block_y)},
    {"block-z", OptionKind::Int, nullptr, "4", 1, 64,
     "variant shared: threads splitting the frames", UPRES_OPTION_FIELD(NlmsrOptions, block_z)},
};
}  // namespace
const OperationDesc kNlmsrDesc{"fuse", "Non-local-means multi-frame super-resolution",
                               kNlmsrOptions};
}  // namespace ops

}  // namespace upres
