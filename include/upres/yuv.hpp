// upres::upscale_yuv: upscale one planar Y'CbCr frame as video decoders give it (4:2:0, 4:2:2,
// 4:4:4 or luma only; 8 bits, or 9 to 16 bits in 16-bit words), in its own depth and layout,
// without a round trip through RGB. The video command (upres/video.hpp) runs every frame
// through it; video engineers with their own decoder call it directly.
//
//   Luma: the upscale method (upres/upscale.hpp) on the Y plane as a gray image, so a frame's Y
//   equals upscale() of that plane. Deeper than 8 bits: the samples are put on the 16-bit scale
//   (v * 65535 / (2^bits - 1), rounded: an exact round trip), upscaled as u16 and put back,
//   rounded; the SEABI family and tap4 / tap6 are 8-bit methods (the
//   paper's integer arithmetic) and refuse deeper frames.
//   Chroma: Keys bicubic (a = -0.5, the chroma rule of the upscale methods; method bspline: the
//   cubic B-spline, border mirror when centre-aligned) through upres::warp,
//   on the exact positions of the chroma samples: each output chroma sample sits where the
//   frame's chroma siting puts it on the output luma grid, mapped through the method's lattice
//   to the input luma grid and from there to the input chroma grid. Border as the lattice's
//   (centred: reflect; co-sited: nearest). Results clamped to [0, 2^bits - 1].
//   Output planes: luma upscale()'s size for the method (scale W x scale H for integer
//   factors); chroma ceil(luma / 2^shift) on each subsampled axis.
#pragma once

#include <cstdint>
#include <span>
#include <utility>

#include <upres/context.hpp>
#include <upres/image.hpp>
#include <upres/nlmsr.hpp>
#include <upres/upscale.hpp>

namespace upres {

// Where chroma samples sit relative to the luma grid (FFmpeg's AVChromaLocation, H.273's
// chroma_sample_loc_type): Left = MPEG-2 / H.264's default for 4:2:0 (horizontally co-sited
// with even luma columns, vertically between rows), Center = JPEG / MPEG-1, TopLeft = 4:2:2
// and BT.2020's 4:2:0, Top, BottomLeft, Bottom.
enum class ChromaSiting { Left, Center, TopLeft, Top, BottomLeft, Bottom };

struct YuvLayout {
    int shift_x = 1;  // chroma width = ceil(W / 2^shift_x): 1 for 4:2:0 and 4:2:2, 0 for 4:4:4
    int shift_y = 1;  // chroma height = ceil(H / 2^shift_y): 1 for 4:2:0, 0 for 4:2:2 and 4:4:4
    int bits = 8;     // 8 for u8 planes; 9..16 for u16 planes (values in the low bits)
    ChromaSiting siting = ChromaSiting::Left;
};

// One frame's planes. cb and cr empty: luma only (gray video). Every plane is a 1-channel
// view; all in host memory, or all in device memory (upscale_yuv: 8 bits only there).
template <class T>
struct YuvPlanes {
    ImageView<T> y, cb, cr;
};

// The output luma size of a W x H frame for these options (upscale()'s size for the method).
std::pair<int, int> upscale_yuv_size(int width, int height, const UpscaleOptions& opts);

// in -> out, which must have the output sizes (upscale_yuv_size, chroma by the layout). Throws
// Error(InvalidArgument) naming the plane and the size it must have; Error(UnsupportedFormat)
// for an 8-bit-only method on deeper frames.
void upscale_yuv(const YuvPlanes<const std::uint8_t>& in, const YuvPlanes<std::uint8_t>& out,
                 const YuvLayout& layout, const UpscaleOptions& opts = {}, const Context& ctx = {});
void upscale_yuv(const YuvPlanes<const std::uint16_t>& in, const YuvPlanes<std::uint16_t>& out,
                 const YuvLayout& layout, const UpscaleOptions& opts = {}, const Context& ctx = {});

// Several frames of a video (a window around frames[reference]): the luma of every frame fused
// into the reference's by NLM-SR (upres/nlmsr.hpp, nlm.scale 2 to 4 and its other options;
// nlm.reference is replaced by `reference`), on the 16-bit scale for deeper frames as above;
// the reference frame's chroma upscaled as upscale_yuv does on the centre-aligned lattice.
// Frames of one size and layout, with out as upscale_yuv's with method nlm, all in host memory
// or all in device memory (the cuda backend; 8 or more bits): a caller that keeps a video's
// window of frames on the device uploads each frame once, not once per output it serves.
void nlm_fuse_yuv(std::span<const YuvPlanes<const std::uint8_t>> frames, int reference,
                  const YuvPlanes<std::uint8_t>& out, const YuvLayout& layout,
                  const NlmsrOptions& nlm = {}, const Context& ctx = {});
void nlm_fuse_yuv(std::span<const YuvPlanes<const std::uint16_t>> frames, int reference,
                  const YuvPlanes<std::uint16_t>& out, const YuvLayout& layout,
                  const NlmsrOptions& nlm = {}, const Context& ctx = {});

}  // namespace upres
