// upres::upscale_video: a video file in, a video file out, every frame through upscale_yuv
// (upres/yuv.hpp) in its own depth and layout. Part of the optional library upres_video
// (target upres::upres_video), which links FFmpeg's libavformat, libavcodec and libavutil; the
// core library does not depend on them.
//
//   Kept: every audio, subtitle and data stream (copied packet for packet), the video's
//   timestamps (variable frame rate survives), colour tags (primaries, transfer, matrix, range,
//   chroma siting), HDR10 side data (mastering display, content light level, from the stream
//   or the first frame), sample aspect ratio, container and stream metadata, chapters.
//   Pixel formats: yuv420p, yuv422p, yuv444p (and their full-range yuvj forms), their 10-bit
//   forms, gray, gray10; anything else is refused by name.
//   Pipeline: demux + decode, upscale, encode + mux run as three threads joined by bounded
//   queues of `queue` frames; the output is written under a temporary name and renamed when
//   complete, so an error or an interruption leaves no partial file.
//   Threads: Context::threads, when set, also caps FFmpeg's decoder and encoder threads (each
//   picks its own count otherwise, up to one per core).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include <upres/context.hpp>
#include <upres/options.hpp>
#include <upres/upscale.hpp>

namespace upres {

// Where the input is decoded: on the CPU (FFmpeg's software decoders, the default), or by the
// GPU's video decoder (NVDEC, through FFmpeg's CUDA hardware decoding) for 8- and 10-bit 4:2:0
// video of the codecs the GPU decodes (H.264, HEVC, VP9, AV1 by generation). NVDEC needs the
// driver's video decoder library (libnvcuvid): where it is missing, or the GPU cannot decode the
// stream, the run stops with an error before any output is written (never a silent fallback).
enum class Hwdec { None, Cuda };
const char* to_string(Hwdec h) noexcept;  // "none", "cuda"
template <>
const EnumDesc& enum_desc<Hwdec>() noexcept;

struct VideoOptions {
    // An FFmpeg video encoder: libx264, libx265, libsvtav1, ffv1 (lossless), libvpx-vp9, ...
    std::string codec = "libx264";
    // Constant rate factor; -1 = the codec's default here (libx264 18, libx265 20, libsvtav1
    // 30, libvpx-vp9 31); refused for codecs without one (ffv1).
    int crf = -1;
    // The encoder's preset ("" = its own default; libx264 / libx265: ultrafast ... veryslow,
    // libsvtav1: 0 ... 13).
    std::string preset;
    int queue = 8;  // frames in flight between two stages (memory: about 3 queue output frames)
    // Method nlm: frames fused per output frame, centred on it (shifted inside the video at its
    // ends); 0 = 5. Refused with other methods.
    int window = 0;
    Hwdec hwdec = Hwdec::None;  // the decoder (above)
};

// What one run did. Stage times are the time each thread spent working (not waiting), so
// frames / stage seconds is the stage's own throughput: the slowest bounds the whole.
struct VideoStats {
    std::int64_t frames = 0;
    int copied_streams = 0;  // audio, subtitle and data streams copied
    int in_width = 0, in_height = 0, out_width = 0, out_height = 0;
    std::string pixel_format, codec;
    double seconds = 0;  // wall time, setup included
    double decode_seconds = 0, upscale_seconds = 0, encode_seconds = 0;
};

// Called from the encoding thread after each frame: frames done, frames expected (0 when the
// container does not say). Returning false stops the run: upscale_video throws
// Error(IoError) "... interrupted ..." and writes nothing.
using VideoProgress = std::function<bool(std::int64_t done, std::int64_t total)>;

VideoStats upscale_video(const std::string& in_path, const std::string& out_path,
                         const UpscaleOptions& opts, const VideoOptions& vopts = {},
                         const Context& ctx = {}, const VideoProgress& progress = {});

// Whether path names a file the video command takes (by its extension: mp4, mkv, mov, avi,
// webm, m4v, mpg, mpeg, ts, m2ts, mts, flv, wmv, nut, y4m, ogv, 3gp).
bool is_video_path(const std::string& path);

// The video options' table (codec, crf, preset, window, queue): the command line's flags and
// help.
const OperationDesc& video_operation() noexcept;

}  // namespace upres
