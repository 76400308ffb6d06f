// SEABI x2 super-resolution (Georgis, Lentaris, Reisis, J. Real-Time Image Proc. 2016 and
// IEEE TCSVT 26(2) 2016): L-SEAI (edge-adaptive construction), SIL-SEABI (one back-projection
// iteration, always applied) and L-SEABI (iterated until the l1 error is small), plus the
// paper's integer x2 baselines (separable 4-tap and 6-tap interpolation).
//
// Lattice (SeabiOptions::lattice):
//   Centered (the default): output pixel centres where upres warp --zoom 2, MATLAB imresize,
//     OpenCV and PyTorch put them: output x samples input (x + 0.5) / 2 - 0.5, so each input
//     pixel's area holds four output pixels at its quarter points. This is the lattice of every
//     image down-scaled by area or by an antialiased filter (cameras binning pixels, imresize,
//     INTER_AREA): use it for real images. The edge rules, the blur and decimation and the error
//     up-sampling are redesigned for it (docs/ops/seabi.md, rules C2-C7).
//   CoSited: the paper's lattice: output (2x, 2y) IS input (x, y), output x samples input x / 2.
//     For reproducing the paper's numbers.
// Borders: clamp-to-edge addressing (scipy "nearest"). Integer arithmetic only, so every
// backend (Reference, Cpu with P horizontal stripes, Cuda) gives bit-identical output and
// results are deterministic. The rules, the threshold and the back-projection filter are
// stated in docs/ops/seabi.md.
//
// Input: 8-bit single-channel images (luma) of any size >= 1 x 1 (clamped addressing makes
// images smaller than the 4 x 4 neighbourhood well defined); out must be exactly 2W x 2H, 1
// channel, in the same memory (host or device) as the input. Colour images, other pixel types
// and other factors: upres/upscale.hpp.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <upres/context.hpp>
#include <upres/image.hpp>
#include <upres/options.hpp>

namespace upres {

// Where output pixels sit relative to input pixels (above; upres/upscale.hpp for every method).
// Auto: the method's default (Centered for SEABI and the tap filters).
enum class Lattice { Auto, CoSited, Centered };
const char* to_string(Lattice l) noexcept;  // "auto", "cosited", "centered"
template <>
const EnumDesc& enum_desc<Lattice>() noexcept;

enum class SeabiMethod {
    LSeai,     // construction phase only
    SilSeabi,  // construction + one back-projection, always applied
    LSeabi,    // construction + back-projection until l1 / (W H) < max_error or max_iterations
};
const char* to_string(SeabiMethod m) noexcept;
// "lseai", "silseabi", "lseabi"; throws Error(InvalidArgument) listing the allowed names.
SeabiMethod parse_seabi_method(const std::string& name);
template <>
const EnumDesc& enum_desc<SeabiMethod>() noexcept;

struct SeabiOptions {
    SeabiMethod method = SeabiMethod::SilSeabi;
    Lattice lattice = Lattice::Centered;  // Auto = Centered
    // L-SEABI only: at most this many refinement iterations, in [1, 1000].
    int max_iterations = 4;
    // L-SEABI only: stop (without refining again) when the mean absolute error of the
    // re-degraded image against the input, l1 / (W H) in grey levels, is below this. Finite,
    // >= 0; 0 runs all max_iterations.
    double max_error = 0.25;
    // Cpu backend: number of horizontal stripes P (each with the halo its kernels need, as the
    // paper's FPGA scheme); 0 = one per thread. The result does not depend on P.
    int stripes = 0;
};

struct SeabiStats {
    int iterations = 0;         // back-projections applied (0 for L-SEAI)
    std::int64_t last_l1 = -1;  // l1 norm of the last error image computed (-1: none)
    int threshold = 0;          // T = floor(sqrt(TV / (W H)))
};

// Super-resolves y by 2 into out (2W x 2H). Returns what the refinement did.
SeabiStats seabi_upscale2(ImageView<const std::uint8_t> y, ImageView<std::uint8_t> out,
                          const SeabiOptions& opts = {}, const Context& ctx = {});
// Convenience: allocates out in y's memory.
Image<std::uint8_t> seabi_upscale2(ImageView<const std::uint8_t> y, const SeabiOptions& opts = {},
                                   const Context& ctx = {});

// The paper's integer x2 baselines, separable (horizontal pass, then vertical, each rounded
// half up and clamped to [0, 255]). Co-sited: the even outputs copy the input and
//   Tap4: new = (-p0 + 9 p1 + 9 p2 - p3 + 8) >> 4
//   Tap6: new = (p0 - 5 p1 + 20 p2 + 20 p3 - 5 p4 + p5 + 16) >> 5
// Centered (quarter phases): Tap4 = (-9 p0 + 111 p1 + 29 p2 - 3 p3 + 64) >> 7 (Keys cubic);
// Tap6 = H.264's quarter sample, (nearer input + the 6-tap half sample + 1) >> 1.
// 1 to 4 interleaved channels, each on its own. out must be 2W x 2H with y's channel count.
enum class TapFilter { Tap4, Tap6 };
void tap_upscale2(ImageView<const std::uint8_t> y, ImageView<std::uint8_t> out, TapFilter filter,
                  Lattice lattice = Lattice::Centered, const Context& ctx = {});

}  // namespace upres

namespace upres {

// ---------------------------------------------------------------- streaming (paper 002, sect. 5)
// L-SEAI and SIL-SEABI x2 of an image that arrives row by row (raster order) and need not fit in
// memory: the paper's stripe pipeline. Input rows are buffered until a batch of P stripes of S
// rows (plus the O = 6 + 6 rows of halo the stages need) is complete; the P stripes run in
// parallel, each through the whole chain (construction, blur + decimation, error, error
// up-sampling, back-projection, add), and their 2 S output rows each go to the sink in order.
// Memory: (P S + 12) W input bytes, 4 P S W output bytes and, per thread, the stages' line
// buffers (about 16 (S + 9) W bytes), independent of the image height (docs/ops/seabi.md,
// "Streaming").
//
// Threshold (R1) sources:
//   total_variation >= 0: the image's exact total variation (SeabiTotalVariation over a first
//     pass): the output is bit-identical to seabi_upscale2 with the same method and lattice.
//   total_variation < 0 (a true single pass, as the paper's FPGA): each batch uses the total
//     variation of all complete rows received so far (its own rows and halo included), so the
//     threshold of early batches is a prediction; the quality cost is measured in the doc.
// Host rows. Backends: cpu (P stripes in parallel, one per thread) or cuda (each batch, 8
// stripes by default, uploaded and run through the CUDA kernels as one image); Reference is
// refused.
struct SeabiStreamOptions {
    SeabiMethod method = SeabiMethod::SilSeabi;  // LSeai or SilSeabi (L-SEABI iterates globally)
    Lattice lattice = Lattice::Centered;         // Auto = Centered
    int stripe_rows = 64;                        // S, in [1, 65536]
    int pipelines = 0;  // P stripes per batch, 0 = one per thread (cuda: 8)
    // The stream's memory budget in bytes (its row buffers and, on the cpu, the stages' per-thread
    // buffers, as estimated above); fewer stripes per batch, then shorter stripes, are used to
    // stay within it. 0 = no limit. Error(InvalidArgument) if even one 1-row stripe exceeds it.
    std::size_t max_memory = std::size_t{192} << 20;
    std::int64_t total_variation = -1;  // >= 0 exact, < 0 predicted (single pass)
    // Resuming: the output starts at input row first_row (output rows 2 first_row, ... are
    // emitted, the whole stream's bytes), and push() takes the image's rows from
    // first_input_row() = max(0, first_row - 6), the halo above. Needs the exact total variation
    // (a predicted threshold depends on every row before). In [0, height).
    int first_row = 0;
};

// R1's total variation accumulated over rows pushed in order (the first pass of an exact
// streaming run).
class SeabiTotalVariation {
  public:
    SeabiTotalVariation(int width, int height);
    // The next rows (width x n, 1 channel, host memory).
    void push(ImageView<const std::uint8_t> rows);
    int rows() const noexcept { return rows_; }
    // The total after all `height` rows; Error(InvalidArgument) before that.
    std::int64_t value() const;

  private:
    int width_, height_, rows_ = 0;
    std::int64_t sum_ = 0;
    std::vector<std::uint8_t> last_;
};

class SeabiStream {
  public:
    // sink(rows, first): output rows [first, first + rows.height()) (2 width wide), in order;
    // called from push(). An exception from the sink stops the stream (push rethrows it).
    using Sink = std::function<void(ImageView<const std::uint8_t> rows, int first)>;
    SeabiStream(int width, int height, const SeabiStreamOptions& opts, Sink sink,
                const Context& ctx = {});
    SeabiStream(const SeabiStream&) = delete;
    SeabiStream& operator=(const SeabiStream&) = delete;
    ~SeabiStream();
    // The next input rows (width x n, 1 channel, u8, host memory; at most the rows left). The
    // last push emits the last output rows.
    void push(ImageView<const std::uint8_t> rows);
    int rows_in() const noexcept;               // the image's rows pushed, first_input_row() on
    int rows_out() const noexcept;              // output rows emitted, 2 first_row on
    int first_input_row() const noexcept;       // the image's row the first push starts at
    std::size_t buffer_bytes() const noexcept;  // the stream's own row buffers
    int stripe_rows() const noexcept;           // S and P after the memory budget
    int pipelines() const noexcept;
    int threshold() const noexcept;  // T of the last batch

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace upres
