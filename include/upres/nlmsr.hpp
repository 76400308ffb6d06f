// Non-local-means multi-frame super-resolution: Protter, Elad, Takeda and Milanfar (IEEE TIP
// 2009) as the GPU paper of Sun, Li and Xu implements it (eq. (5), one iteration, the simple and
// the shared-memory kernels); docs/ops/nlmsr.md.
//
//   Initial estimate and the frames on the high-resolution grid: every frame's luma, Y (BT.601,
//   upres/color.hpp, 8-bit scale; gray: the value x 255 / max), is up-scaled by `scale` with
//   MATLAB's bicubic (centre-aligned, Keys a = -0.5: bicubic_resize in upres/srcnn.hpp), giving
//   U_t; the initial estimate X is U_ref.
//   Fusion (eq. (5) on the high-resolution grid): for every output pixel p,
//     Z(p) = sum_t sum_o w_t(p, o) U_t(p + o) / sum_t sum_o w_t(p, o),
//     w_t(p, o) = exp(-D_t(p, o) / (2 sigma^2)),
//     D_t(p, o) = mean over the patch x patch offsets u of (X(p + u) - U_t(p + o + u))^2,
//   o over the search x search offsets with p + o inside the image; patch pixels outside the
//   image are read at the nearest edge pixel. Iterations > 1 take Z as the next X.
//   Weight scale: sigma, or (sigma 0) the reference frame's noise by Immerkaer's estimator, at
//   least 3 levels.
//   Post-step (post = BackProject; Protter's deblurring step, as Irani and Peleg's iterative
//   back-projection): back_projections rounds of X += B(T - D(X)), with D MATLAB's antialiased
//   bicubic down-scaling, B its up-scaling, and the target T the reference frame denoised by
//   the same fusion on the input grid (all frames, patch (patch / scale) | 1, the same search,
//   the weight scale the noise estimate, at least 0.5): back-projecting onto the noisy frame
//   itself would put its noise back.
//   Post-step Reconstruct (the frames' samples at every phase of the output grid): a camera
//   model P, each low-resolution pixel the mean of its scale x scale output pixels after a
//   Gaussian blur of psf_sigma input pixels, applied densely (at every output pixel, not only
//   the reference's phase); the start X0 the SRCNN model of the scale (upres/srcnn.hpp; or
//   `model`) on T;
//   a dense target Z whose phase (a, b) is the fusion on the input grid of all frames against
//   phase (a, b) of P(X0) (patch (patch / scale) | 1, the same search, the fusion's weight
//   scale); then `reconstructions` rounds of X += P^T (Z - P X) (Landweber).
//   Colour (3 channels, RGB): Y goes through the above, Cb and Cr of the reference frame
//   through bicubic; the result is converted back (upres/color.hpp).
//
// Input: 1 to 64 frames of one size, channel count (1 or 3) and pixel type (u8, u16, f32 on
// [0, 1], finite), all in host memory or all in device memory (device frames and outputs need
// the cuda backend; Auto picks it for them). One frame is single-image NLM up-scaling. Output:
// scale W x scale H, the frames' channels and type, in either memory.
// Backends (Context::backend): Reference (double, the formula literally), Cpu (float, patch
// distances as running box sums per search offset, OpenMP over rows; threads 1 is the
// single-threaded column of the paper's table), Cuda (float; the whole call on the device, host
// frames uploaded once and a host output downloaded once) with three variants of the fusion:
// Simple (the paper's Fig. 2: one thread per output pixel, every patch read from global
// memory), Shared (Fig. 4: a block of bx x by x bz threads caches its tile of every frame in
// shared memory with Fig. 3's load mapping, z threads split the frames and sum through shared
// memory), Fast (the default: box sums per search offset, slid down the rows in registers).
// Every backend agrees with Reference within 0.02 8-bit levels on the fused luma (float
// rounding of the distances); deterministic run to run.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <upres/context.hpp>
#include <upres/image.hpp>
#include <upres/options.hpp>
#include <upres/srcnn.hpp>

namespace upres {

enum class NlmsrVariant { Simple, Shared, Fast };
const char* to_string(NlmsrVariant v) noexcept;  // "simple", "shared", "fast"
template <>
const EnumDesc& enum_desc<NlmsrVariant>() noexcept;

enum class NlmsrPost { None, BackProject, Reconstruct };
const char* to_string(NlmsrPost p) noexcept;  // "none", "backproject", "reconstruct"
template <>
const EnumDesc& enum_desc<NlmsrPost>() noexcept;

struct NlmsrOptions {
    int scale = 2;       // 2, 3 or 4
    int reference = -1;  // index of the reference frame; -1: the middle one, (N - 1) / 2
    int patch = 13;      // odd patch side on the high-resolution grid, 1 .. 31 (the paper: 13)
    int search = 3;      // odd search-window side on the output grid, 1 .. 41 (the paper: 5)
    // Weight scale in 8-bit levels (the paper: 13 for its noisy frames); 0: noise-adaptive,
    // from the reference frame's estimated noise (Immerkaer's estimator; docs/ops/nlmsr.md).
    double sigma = 0.0;
    // The reference frame's noise (Immerkaer's estimate, 8-bit levels) the weight scales derive
    // from; < 0 (default): estimated from the reference frame given. A band of a larger image
    // (nlm_fuse_tiled) is given the whole frame's.
    double noise = -1.0;
    int iterations = 1;  // fusion passes, 1 .. 8 (the paper: 1)
    NlmsrPost post = NlmsrPost::BackProject;
    int back_projections = 3;  // post BackProject: rounds, 1 .. 20
    // post Reconstruct: the camera's optical blur, a Gaussian's sigma in input pixels, 0 .. 2
    // (0: the pixel's area alone), and the rounds of the reconstruction, 1 .. 50.
    double psf_sigma = 0.4;
    int reconstructions = 10;
    // post Reconstruct: a .srcnn weights file for the start instead of the bundled model of the
    // scale (upres/srcnn.hpp; its scale must be `scale`).
    std::string model;
    // post Reconstruct: the start's arithmetic on the cuda backend (SrcnnPrecision; the cpu and
    // reference backends run Fp32 only and refuse the others).
    SrcnnPrecision precision = SrcnnPrecision::Fp32;
    NlmsrVariant variant = NlmsrVariant::Fast;
    // Shared variant: thread block x, y, z (the paper: 8 x 8 x 4 on Fermi; z divides the frames).
    int block_x = 8, block_y = 8, block_z = 4;
};

// The weight scale nlm_fuse uses for these frames (opts.sigma, or the noise-adaptive value).
double nlmsr_sigma(const AnyImage& reference_frame, const NlmsrOptions& opts = {});

// The reference frame's noise (Immerkaer's estimate, 8-bit levels: NlmsrOptions::noise) over
// rows pushed in order, host memory, 1 or 3 channels: the value nlm_fuse computes on the whole
// frame, bit for bit (the same sum in the same order). The first pass of a tiled run.
class NlmsrNoise {
  public:
    NlmsrNoise(int width, int height);
    void push(ImageView<const std::uint8_t> rows);
    void push(ImageView<const std::uint16_t> rows);
    void push(ImageView<const float> rows);  // finite values (Error(InvalidArgument) otherwise)
    int rows() const noexcept { return rows_; }
    // After all `height` rows; Error(InvalidArgument) before that.
    double value() const;

  private:
    template <class T>
    void push_rows(ImageView<const T> rows);
    int width_, height_, rows_ = 0;
    double sum_ = 0.0;
    std::vector<float> last_;  // the luma of the last two rows pushed
};

// frames: views of one size / channels, all in host or all in device memory; out: scale W x
// scale H, the same channels, in either memory.
void nlm_fuse(std::span<const ImageView<const std::uint8_t>> frames, ImageView<std::uint8_t> out,
              const NlmsrOptions& opts = {}, const Context& ctx = {});
void nlm_fuse(std::span<const ImageView<const std::uint16_t>> frames, ImageView<std::uint16_t> out,
              const NlmsrOptions& opts = {}, const Context& ctx = {});
void nlm_fuse(std::span<const ImageView<const float>> frames, ImageView<float> out,
              const NlmsrOptions& opts = {}, const Context& ctx = {});
// Any pixel type (all the same); returns the fused frame, in the frames' memory.
AnyImage nlm_fuse(std::span<const AnyImage> frames, const NlmsrOptions& opts = {},
                  const Context& ctx = {});

}  // namespace upres
