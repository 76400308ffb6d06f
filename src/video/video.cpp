// upres::upscale_video (upres/video.hpp): FFmpeg demux + decode, upscale_yuv, encode + mux as
// three threads joined by bounded queues. Non-video streams are copied packet for packet through
// the same queues, so the muxer sees every packet in the order it was read.
extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/avutil.h>
#include <libavutil/hwcontext.h>
#include <libavutil/imgutils.h>
#include <libavutil/log.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
}

#include <upres/error.hpp>
#include <upres/video.hpp>
#include <upres/yuv.hpp>

#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <exception>
#include <filesystem>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <system_error>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace upres {

namespace {

constexpr const char* kOp = "upscale";
constexpr int kDefaultNlmWindow = 5;  // frames fused per output with --method nlm
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string av_error(int code) {
    char buf[AV_ERROR_MAX_STRING_SIZE] = {};
    av_strerror(code, buf, sizeof buf);
    return buf;
}

[[noreturn]] void fail(ErrorCode code, const std::string& msg) {
    throw Error(code, std::string(kOp) + ": " + msg);
}

struct FrameFree {
    void operator()(AVFrame* f) const noexcept { av_frame_free(&f); }
};
struct PacketFree {
    void operator()(AVPacket* p) const noexcept { av_packet_free(&p); }
};
using FramePtr = std::unique_ptr<AVFrame, FrameFree>;
using PacketPtr = std::unique_ptr<AVPacket, PacketFree>;

FramePtr new_frame() {
    FramePtr f(av_frame_alloc());
    if (!f) fail(ErrorCode::OutOfMemory, "out of memory (a video frame)");
    return f;
}
PacketPtr new_packet() {
    PacketPtr p(av_packet_alloc());
    if (!p) fail(ErrorCode::OutOfMemory, "out of memory (a packet)");
    return p;
}

// ------------------------------------------------------------------ pixel formats

struct Format {
    AVPixelFormat in;    // as decoded
    AVPixelFormat proc;  // as upscaled and encoded
    int shift_x, shift_y, bits;
    bool gray;
};

constexpr Format kFormats[] = {
    {AV_PIX_FMT_YUV420P, AV_PIX_FMT_YUV420P, 1, 1, 8, false},
    {AV_PIX_FMT_YUVJ420P, AV_PIX_FMT_YUVJ420P, 1, 1, 8, false},
    {AV_PIX_FMT_YUV422P, AV_PIX_FMT_YUV422P, 1, 0, 8, false},
    {AV_PIX_FMT_YUVJ422P, AV_PIX_FMT_YUVJ422P, 1, 0, 8, false},
    {AV_PIX_FMT_YUV444P, AV_PIX_FMT_YUV444P, 0, 0, 8, false},
    {AV_PIX_FMT_YUVJ444P, AV_PIX_FMT_YUVJ444P, 0, 0, 8, false},
    {AV_PIX_FMT_GRAY8, AV_PIX_FMT_GRAY8, 0, 0, 8, true},
    {AV_PIX_FMT_YUV420P10LE, AV_PIX_FMT_YUV420P10LE, 1, 1, 10, false},
    {AV_PIX_FMT_YUV422P10LE, AV_PIX_FMT_YUV422P10LE, 1, 0, 10, false},
    {AV_PIX_FMT_YUV444P10LE, AV_PIX_FMT_YUV444P10LE, 0, 0, 10, false},
    {AV_PIX_FMT_GRAY10LE, AV_PIX_FMT_GRAY10LE, 0, 0, 10, true},
    // Semi-planar (Cb and Cr interleaved in one plane; what hardware decoders give): made
    // planar when decoded (planar_from_semi), processed and encoded in the planar form.
    {AV_PIX_FMT_NV12, AV_PIX_FMT_YUV420P, 1, 1, 8, false},
    {AV_PIX_FMT_P010LE, AV_PIX_FMT_YUV420P10LE, 1, 1, 10, false},
};

std::string pix_name(int f) {
    const char* n = av_get_pix_fmt_name(static_cast<AVPixelFormat>(f));
    return n ? n : "unknown";
}

std::string supported_formats() {
    std::string s;
    for (const Format& f : kFormats) s += (s.empty() ? "" : ", ") + pix_name(f.in);
    return s;
}

const Format& format_of(int pix) {
    for (const Format& f : kFormats)
        if (f.in == pix) return f;
    fail(ErrorCode::UnsupportedFormat, "the video's pixel format is " + pix_name(pix) +
                                           " (supported: " + supported_formats() + ")");
}

// A colour tag of a decoded frame or of the decoder (chroma location, primaries, transfer, matrix,
// range) as its enum, or `unspecified` when the stored value is not one of the enum's: FFmpeg
// copies some of them from the bitstream unchecked (fuzz_video found an H.264 stream whose
// frames carry chroma location 33), and loading such a value as the enum is undefined. Read
// through its bytes, never as the enum.
template <class E>
E tag_or(const E& tag, int count, E unspecified) {
    std::underlying_type_t<E> raw;
    static_assert(sizeof raw == sizeof tag);
    std::memcpy(&raw, &tag, sizeof raw);
    const auto v = static_cast<long long>(raw);
    return v >= 0 && v < count ? static_cast<E>(v) : unspecified;
}

ChromaSiting siting_of(const AVChromaLocation& tag, AVPixelFormat pix) {
    switch (tag_or(tag, AVCHROMA_LOC_NB, AVCHROMA_LOC_UNSPECIFIED)) {
        case AVCHROMA_LOC_LEFT:
            return ChromaSiting::Left;
        case AVCHROMA_LOC_CENTER:
            return ChromaSiting::Center;
        case AVCHROMA_LOC_TOPLEFT:
            return ChromaSiting::TopLeft;
        case AVCHROMA_LOC_TOP:
            return ChromaSiting::Top;
        case AVCHROMA_LOC_BOTTOMLEFT:
            return ChromaSiting::BottomLeft;
        case AVCHROMA_LOC_BOTTOM:
            return ChromaSiting::Bottom;
        default:  // unspecified: JPEG's centre for full-range yuvj, else MPEG-2 / H.264's left
            return pix == AV_PIX_FMT_YUVJ420P || pix == AV_PIX_FMT_YUVJ422P ? ChromaSiting::Center
                                                                            : ChromaSiting::Left;
    }
}

template <class T>
YuvPlanes<T> planes_of(const AVFrame* f, const Format& fm) {
    using V = std::remove_const_t<T>;
    const auto view = [&](int k, int w, int h) {
        return ImageView<T>(reinterpret_cast<T*>(f->data[k]), w, h, 1,
                            f->linesize[k] / static_cast<int>(sizeof(V)));
    };
    YuvPlanes<T> p;
    p.y = view(0, f->width, f->height);
    if (!fm.gray) {
        const int cw = (f->width + (1 << fm.shift_x) - 1) >> fm.shift_x;
        const int ch = (f->height + (1 << fm.shift_y) - 1) >> fm.shift_y;
        p.cb = view(1, cw, ch);
        p.cr = view(2, cw, ch);
    }
    return p;
}

// A semi-planar frame (nv12; p010, whose 16-bit samples hold 10 bits in their high bits) as
// the planar frame the pipeline processes (yuv420p; yuv420p10le, the value in the low bits),
// written into dst (fm.proc, src's size).
void planar_from_semi(const AVFrame* src, AVFrame* dst, const Format& fm) {
    const int w = src->width, h = src->height;
    const int cw = (w + 1) >> fm.shift_x, ch = (h + 1) >> fm.shift_y;
    const auto copy_planes = [&](auto tag, int shift) {
        using T = decltype(tag);
        const auto row = [](const AVFrame* f, int k, int y) {
            return reinterpret_cast<T*>(f->data[k] +
                                        static_cast<std::ptrdiff_t>(y) * f->linesize[k]);
        };
        for (int y = 0; y < h; ++y) {
            const T* in = row(src, 0, y);
            T* out = row(dst, 0, y);
            for (int x = 0; x < w; ++x) out[x] = static_cast<T>(in[x] >> shift);
        }
        for (int y = 0; y < ch; ++y) {
            const T* in = row(src, 1, y);
            T *cb = row(dst, 1, y), *cr = row(dst, 2, y);
            for (int x = 0; x < cw; ++x) {
                cb[x] = static_cast<T>(in[2 * x] >> shift);
                cr[x] = static_cast<T>(in[2 * x + 1] >> shift);
            }
        }
    };
    if (fm.bits == 8)
        copy_planes(std::uint8_t{}, 0);
    else
        copy_planes(std::uint16_t{}, 16 - fm.bits);
}

// Frames in host frame memory (alloc_host_frame_memory: page-locked when a CUDA device is
// present) for the cuda backend, whose uploads and downloads then run at the bus's speed: one
// buffer per frame holding every plane, from a pool, so each frame's memory is allocated once.
// NLM-SR's window of frames kept in device memory (the cuda backend): each decoded frame's
// planes uploaded once when it arrives, not once for each of the `window` output frames it
// serves; one set of output planes on the device, downloaded once per output frame. Planes are
// held as bytes (w x sizeof(sample)) and viewed with the frame's sample type.
class DeviceWindow {
  public:
    DeviceWindow(const Format& fm, int w, int h, int ow, int oh, const Context& ctx)
        : fm_(fm),
          bytes_(fm.bits == 8 ? 1 : 2),
          w_(w),
          h_(h),
          ow_(ow),
          oh_(oh),
          ctx_(ctx),
          out_(make(ow, oh)) {}

    void push_back(const AVFrame* f) {
        Planes p;
        if (spare_.empty()) {
            p = make(w_, h_);
        } else {
            p = std::move(spare_.back());
            spare_.pop_back();
        }
        for (int k = 0; k < planes(); ++k) {
            const auto [pw, ph] = dims(k, w_, h_);
            copy(ImageView<const std::uint8_t>(f->data[k], pw * bytes_, ph, 1, f->linesize[k]),
                 p[static_cast<std::size_t>(k)].view(), ctx_.cuda_stream);
        }
        frames_.push_back(std::move(p));
    }
    void pop_front() {
        spare_.push_back(std::move(frames_.front()));
        frames_.pop_front();
    }
    template <class T>
    YuvPlanes<T> input(std::size_t at) const {
        return view<T>(frames_[at], w_, h_);
    }
    template <class T>
    YuvPlanes<T> output() const {
        return view<T>(out_, ow_, oh_);
    }
    void download(AVFrame* dst) const {
        for (int k = 0; k < planes(); ++k) {
            const auto [pw, ph] = dims(k, ow_, oh_);
            copy(out_[static_cast<std::size_t>(k)].view(),
                 ImageView<std::uint8_t>(dst->data[k], pw * bytes_, ph, 1, dst->linesize[k]),
                 ctx_.cuda_stream);
        }
    }

  private:
    using Planes = std::array<Image<std::uint8_t>, 3>;
    int planes() const { return fm_.gray ? 1 : 3; }
    std::pair<int, int> dims(int k, int w, int h) const {
        if (k == 0) return {w, h};
        return {(w + (1 << fm_.shift_x) - 1) >> fm_.shift_x,
                (h + (1 << fm_.shift_y) - 1) >> fm_.shift_y};
    }
    Planes make(int w, int h) const {
        Planes p;
        for (int k = 0; k < planes(); ++k) {
            const auto [pw, ph] = dims(k, w, h);
            p[static_cast<std::size_t>(k)] =
                Image<std::uint8_t>(pw * bytes_, ph, 1, Location::Device);
        }
        return p;
    }
    template <class T>
    YuvPlanes<T> view(const Planes& p, int w, int h) const {
        using V = std::remove_const_t<T>;
        const auto plane = [&](int k) {
            const auto [pw, ph] = dims(k, w, h);
            // The planes are the window's own: const only in this accessor.
            auto* data = const_cast<std::uint8_t*>(p[static_cast<std::size_t>(k)].data());
            return ImageView<T>(reinterpret_cast<V*>(data), pw, ph, 1, 0, Location::Device);
        };
        YuvPlanes<T> y;
        y.y = plane(0);
        if (!fm_.gray) {
            y.cb = plane(1);
            y.cr = plane(2);
        }
        return y;
    }

    Format fm_;
    int bytes_, w_, h_, ow_, oh_;
    Context ctx_;
    Planes out_;
    std::deque<Planes> frames_;
    std::vector<Planes> spare_;
};

class FramePool {
  public:
    FramePool(AVPixelFormat fmt, int w, int h) : fmt_(fmt), w_(w), h_(h) {
        const int size = av_image_get_buffer_size(fmt, w, h, kAlign);
        if (size < 0) fail(ErrorCode::Internal, "frame size (" + av_error(size) + ")");
        pool_ = av_buffer_pool_init(static_cast<std::size_t>(size), &FramePool::alloc);
        if (!pool_) fail(ErrorCode::OutOfMemory, "out of memory (a frame pool)");
    }
    FramePool(const FramePool&) = delete;
    FramePool& operator=(const FramePool&) = delete;
    ~FramePool() { av_buffer_pool_uninit(&pool_); }  // freed when the last frame returns

    FramePtr get() {
        FramePtr f = new_frame();
        f->buf[0] = av_buffer_pool_get(pool_);
        if (!f->buf[0]) fail(ErrorCode::OutOfMemory, "out of memory (a frame)");
        f->format = fmt_;
        f->width = w_;
        f->height = h_;
        av_image_fill_arrays(f->data, f->linesize, f->buf[0]->data, fmt_, w_, h_, kAlign);
        return f;
    }

  private:
    static constexpr int kAlign = 64;
    static AVBufferRef* alloc(std::size_t size) {
        void* p = nullptr;
        try {
            p = alloc_host_frame_memory(size);
        } catch (const Error&) {
            return nullptr;
        }
        AVBufferRef* b = av_buffer_create(
            static_cast<std::uint8_t*>(p), size,
            [](void*, std::uint8_t* data) { free_host_frame_memory(data); }, nullptr, 0);
        if (!b) free_host_frame_memory(p);
        return b;
    }
    AVPixelFormat fmt_;
    int w_, h_;
    AVBufferPool* pool_ = nullptr;
};

// ------------------------------------------------------------------ the pipeline's queues

// One item between stages: a decoded or upscaled frame, or a packet of a copied stream (already
// carrying its output stream index), in the order the demuxer read them.
struct Item {
    FramePtr frame;
    PacketPtr packet;
};

class Queue {
  public:
    explicit Queue(std::size_t cap) : cap_(cap) {}
    // False when the queue was aborted.
    bool push(Item it) {
        std::unique_lock lk(m_);
        not_full_.wait(lk, [&] { return aborted_ || q_.size() < cap_; });
        if (aborted_) return false;
        q_.push_back(std::move(it));
        not_empty_.notify_one();
        return true;
    }
    // False at the end (closed and drained) or when aborted.
    bool pop(Item& it) {
        std::unique_lock lk(m_);
        not_empty_.wait(lk, [&] { return aborted_ || closed_ || !q_.empty(); });
        if (aborted_ || q_.empty()) return false;
        it = std::move(q_.front());
        q_.pop_front();
        not_full_.notify_one();
        return true;
    }
    void close() {
        std::lock_guard lk(m_);
        closed_ = true;
        not_empty_.notify_all();
    }
    void abort() {
        std::lock_guard lk(m_);
        aborted_ = true;
        not_empty_.notify_all();
        not_full_.notify_all();
    }

  private:
    std::size_t cap_;
    std::deque<Item> q_;
    std::mutex m_;
    std::condition_variable not_full_, not_empty_;
    bool closed_ = false, aborted_ = false;
};

// ------------------------------------------------------------------ input and output

struct Input {
    AVFormatContext* fmt = nullptr;
    AVCodecContext* dec = nullptr;
    int video = -1;
    AVPixelFormat frames = AV_PIX_FMT_NONE;  // the decoded frames' format (after NVDEC's copy)
    AVBufferRef* hw = nullptr;               // --hwdec cuda: FFmpeg's CUDA device
    std::atomic<bool> hw_refused{false};     // NVDEC could not start for the stream
    ~Input() {
        avcodec_free_context(&dec);
        av_buffer_unref(&hw);
        avformat_close_input(&fmt);
    }
};

// --hwdec cuda: the decoder's formats include CUDA frames while NVDEC can decode the stream;
// FFmpeg drops them when NVDEC fails to start, and then the run stops (no software fallback:
// the user asked for the GPU's decoder).
AVPixelFormat pick_cuda_frames(AVCodecContext* c, const AVPixelFormat* formats) {
    for (const AVPixelFormat* p = formats; *p != AV_PIX_FMT_NONE; ++p)
        if (*p == AV_PIX_FMT_CUDA) return AV_PIX_FMT_CUDA;
    static_cast<Input*>(c->opaque)->hw_refused = true;
    return AV_PIX_FMT_NONE;
}

// A decoding error: NVDEC's refusal named as such, else the frame that failed.
[[noreturn]] void decode_failed(const Input& in, const std::string& path, std::int64_t index,
                                int r) {
    if (in.hw_refused)
        fail(ErrorCode::UnsupportedFormat,
             path + ": --hwdec cuda: NVDEC cannot decode this " +
                 avcodec_get_name(in.dec->codec_id) +
                 " stream here (the driver's video decoder library libnvcuvid is missing, or "
                 "this GPU does not decode its profile); decode on the CPU with --hwdec none");
    fail(ErrorCode::CorruptData,
         path + ": decoding frame " + std::to_string(index) + " failed (" + av_error(r) + ")");
}

// --hwdec cuda: FFmpeg's CUDA decoding on the stream's decoder, which must have it; NVDEC
// gives 4:2:0 as nv12 (8 bits) or p010 (10 bits), copied to host memory per frame.
void open_hwdec(Input& in, const AVCodec* dec, const std::string& path) {
    bool has = false;
    for (int i = 0;; ++i) {
        const AVCodecHWConfig* c = avcodec_get_hw_config(dec, i);
        if (!c) break;
        has = has || ((c->methods & AV_CODEC_HW_CONFIG_METHOD_HW_DEVICE_CTX) &&
                      c->device_type == AV_HWDEVICE_TYPE_CUDA);
    }
    if (!has)
        fail(ErrorCode::UnsupportedFormat,
             path + ": --hwdec cuda: FFmpeg's " + dec->name +
                 " decoder has no NVDEC path (NVDEC decodes h264, hevc, vp9, av1, mpeg2video, "
                 "mpeg4, vc1 where the GPU supports them); decode on the CPU with --hwdec none");
    const int r = av_hwdevice_ctx_create(&in.hw, AV_HWDEVICE_TYPE_CUDA, nullptr, nullptr, 0);
    if (r < 0)
        fail(ErrorCode::UnsupportedFormat, "--hwdec cuda: FFmpeg cannot open a CUDA device here (" +
                                               av_error(r) +
                                               "); decode on the CPU with --hwdec none");
    in.dec->hw_device_ctx = av_buffer_ref(in.hw);
    in.dec->opaque = &in;
    in.dec->get_format = pick_cuda_frames;
}

struct Output {
    AVFormatContext* fmt = nullptr;
    AVCodecContext* enc = nullptr;
    AVStream* video = nullptr;
    std::string temp;
    bool header = false, committed = false;
    ~Output() {
        avcodec_free_context(&enc);
        if (fmt) {
            if (!(fmt->oformat->flags & AVFMT_NOFILE)) avio_closep(&fmt->pb);
            avformat_free_context(fmt);
        }
        if (!committed && !temp.empty()) {
            std::error_code ec;
            fs::remove(temp, ec);
        }
    }
};

std::string describe_stream(const AVStream* s) {
    const char* type = av_get_media_type_string(s->codecpar->codec_type);
    return "stream #" + std::to_string(s->index) + " (" + (type ? type : "unknown") + " " +
           avcodec_get_name(s->codecpar->codec_id) + ")";
}

void open_input(Input& in, const std::string& path, int threads, Hwdec hwdec) {
    std::error_code ec;
    if (!fs::exists(path, ec)) fail(ErrorCode::IoError, path + ": no such file");
    int r = avformat_open_input(&in.fmt, path.c_str(), nullptr, nullptr);
    if (r < 0)
        fail(r == AVERROR_INVALIDDATA ? ErrorCode::CorruptData : ErrorCode::IoError,
             path + ": not a video FFmpeg can read (" + av_error(r) + ")");
    if ((r = avformat_find_stream_info(in.fmt, nullptr)) < 0)
        fail(ErrorCode::CorruptData, path + ": cannot read its streams (" + av_error(r) + ")");
    const AVCodec* dec = nullptr;
    in.video = av_find_best_stream(in.fmt, AVMEDIA_TYPE_VIDEO, -1, -1, &dec, 0);
    if (in.video == AVERROR_STREAM_NOT_FOUND)
        fail(ErrorCode::UnsupportedFormat, path + ": has no video stream");
    if (in.video < 0 || !dec)
        fail(ErrorCode::UnsupportedFormat,
             path + ": no decoder for its video stream (" +
                 avcodec_get_name(in.fmt->streams[std::max(in.video, 0)]->codecpar->codec_id) +
                 ")");
    const AVStream* st = in.fmt->streams[in.video];
    in.dec = avcodec_alloc_context3(dec);
    if (!in.dec) fail(ErrorCode::OutOfMemory, "out of memory (decoder)");
    avcodec_parameters_to_context(in.dec, st->codecpar);
    in.dec->thread_count = std::max(threads, 0);  // 0: FFmpeg picks (frame and slice threads)
    in.dec->pkt_timebase = st->time_base;
    if (hwdec == Hwdec::Cuda) {
        const auto sw = static_cast<AVPixelFormat>(st->codecpar->format);
        if (sw != AV_PIX_FMT_YUV420P && sw != AV_PIX_FMT_YUV420P10LE)
            fail(ErrorCode::UnsupportedFormat,
                 path + ": --hwdec cuda decodes yuv420p and yuv420p10le video, this one is " +
                     pix_name(sw) + "; decode on the CPU with --hwdec none");
        open_hwdec(in, dec, path);
        in.dec->thread_count = 1;  // NVDEC runs asynchronously to the calling thread itself
        in.frames = sw == AV_PIX_FMT_YUV420P ? AV_PIX_FMT_NV12 : AV_PIX_FMT_P010LE;
    }
    if ((r = avcodec_open2(in.dec, dec, nullptr)) < 0)
        fail(ErrorCode::UnsupportedFormat,
             path + ": cannot open the " + dec->name + " decoder (" + av_error(r) + ")");
    if (in.dec->pix_fmt == AV_PIX_FMT_NONE)
        fail(ErrorCode::CorruptData,
             path + ": its video frames cannot be decoded (the file is truncated or corrupt)");
    if (hwdec == Hwdec::None) in.frames = in.dec->pix_fmt;
    format_of(in.frames);  // refuse unsupported formats before any output exists
}

// The codec's default crf here (none: -1).
int default_crf(const std::string& codec) {
    if (codec == "libx264") return 18;
    if (codec == "libx265") return 20;
    if (codec == "libsvtav1") return 30;
    if (codec == "libvpx-vp9") return 31;
    return -1;
}

bool encoder_takes(const AVCodec* enc, AVPixelFormat pix) {
    if (!enc->pix_fmts) return true;
    for (const AVPixelFormat* p = enc->pix_fmts; *p != AV_PIX_FMT_NONE; ++p)
        if (*p == pix) return true;
    return false;
}

std::string encoder_formats(const AVCodec* enc) {
    std::string s;
    if (!enc->pix_fmts) return "any";
    for (const AVPixelFormat* p = enc->pix_fmts; *p != AV_PIX_FMT_NONE; ++p)
        s += (s.empty() ? "" : ", ") + pix_name(*p);
    return s;
}

const AVCodec* find_encoder(const std::string& name) {
    const AVCodec* enc = avcodec_find_encoder_by_name(name.c_str());
    if (enc && enc->type == AVMEDIA_TYPE_VIDEO) return enc;
    std::string have;
    for (const char* n : {"libx264", "libx265", "libsvtav1", "libaom-av1", "libvpx-vp9", "ffv1"})
        if (avcodec_find_encoder_by_name(n)) have += (have.empty() ? "" : ", ") + std::string(n);
    fail(ErrorCode::InvalidArgument, "unknown video codec '" + name + "' (allowed: " + have +
                                         ", or another video encoder of this FFmpeg)");
}

// The output container, every stream in the input's order (the video stream's parameters and the
// header come with the first frame: open_encoder), and the temporary file.
void open_output(Output& out, const Input& in, const std::string& path, const AVCodec* enc,
                 std::vector<int>& stream_map, int& copied) {
    const AVOutputFormat* of = av_guess_format(nullptr, path.c_str(), nullptr);
    if (!of || std::string(of->name) == "image2")  // image2: numbered image files, not a video
        fail(ErrorCode::UnsupportedFormat,
             path + ": unknown video container (allowed: mkv, mp4, mov, webm, avi, nut, ...)");
    if (avformat_query_codec(of, enc->id, FF_COMPLIANCE_NORMAL) == 0)
        fail(ErrorCode::UnsupportedFormat,
             path + ": a " + of->name + " file cannot hold " + enc->name + " video (try .mkv)");
    const fs::path p(path);
    const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
        fail(ErrorCode::IoError, path + ": the folder " + dir.string() + " does not exist");
    std::string name = ".";  // hidden, in the target's folder (the same file system)
    name += p.stem().string();
    name += ".partial-";
    name += std::to_string(::getpid());
    name += p.extension().string();
    out.temp = (dir / name).string();
    int r = avformat_alloc_output_context2(&out.fmt, of, nullptr, out.temp.c_str());
    if (r < 0 || !out.fmt)
        fail(ErrorCode::OutOfMemory, "cannot create the output (" + av_error(r) + ")");
    av_dict_copy(&out.fmt->metadata, in.fmt->metadata, 0);
    stream_map.assign(in.fmt->nb_streams, -1);
    for (unsigned i = 0; i < in.fmt->nb_streams; ++i) {
        const AVStream* is = in.fmt->streams[i];
        if (static_cast<int>(i) == in.video) {  // filled by open_encoder; the input's order
            out.video = avformat_new_stream(out.fmt, nullptr);
            if (!out.video) fail(ErrorCode::OutOfMemory, "out of memory (stream)");
            continue;
        }
        if (avformat_query_codec(of, is->codecpar->codec_id, FF_COMPLIANCE_NORMAL) == 0)
            fail(ErrorCode::UnsupportedFormat,
                 path + ": a " + of->name + " file cannot hold the input's " + describe_stream(is) +
                     ", which is copied unchanged (try .mkv)");
        AVStream* os = avformat_new_stream(out.fmt, nullptr);
        if (!os) fail(ErrorCode::OutOfMemory, "out of memory (stream)");
        avcodec_parameters_copy(os->codecpar, is->codecpar);
        os->codecpar->codec_tag = 0;
        os->time_base = is->time_base;
        os->disposition = is->disposition;
        av_dict_copy(&os->metadata, is->metadata, 0);
        stream_map[i] = os->index;
        ++copied;
    }
    // Chapters.
    if (in.fmt->nb_chapters > 0) {
        out.fmt->chapters =
            static_cast<AVChapter**>(av_calloc(in.fmt->nb_chapters, sizeof(AVChapter*)));
        if (!out.fmt->chapters) fail(ErrorCode::OutOfMemory, "out of memory (chapters)");
        for (unsigned i = 0; i < in.fmt->nb_chapters; ++i) {
            const AVChapter* c = in.fmt->chapters[i];
            auto* d = static_cast<AVChapter*>(av_mallocz(sizeof(AVChapter)));
            if (!d) fail(ErrorCode::OutOfMemory, "out of memory (chapters)");
            d->id = c->id;
            d->time_base = c->time_base;
            d->start = c->start;
            d->end = c->end;
            av_dict_copy(&d->metadata, c->metadata, 0);
            out.fmt->chapters[out.fmt->nb_chapters++] = d;
        }
    }
    if (!(of->flags & AVFMT_NOFILE) &&
        (r = avio_open(&out.fmt->pb, out.temp.c_str(), AVIO_FLAG_WRITE)) < 0) {
        out.temp.clear();  // nothing was created
        fail(ErrorCode::IoError, path + ": cannot write (" + av_error(r) + ")");
    }
}

void copy_side_data(AVStream* os, AVPacketSideDataType type, const std::uint8_t* data,
                    std::size_t size) {
    if (!data || size == 0) return;
    std::uint8_t* d = av_stream_new_side_data(os, type, size);
    if (!d) fail(ErrorCode::OutOfMemory, "out of memory (side data)");
    std::memcpy(d, data, size);
}

// The encoder and the output's video stream, from the first upscaled frame (its colour tags
// and HDR side data), then the header.
void open_encoder(Output& out, const Input& in, const AVCodec* enc, const VideoOptions& vo,
                  const AVFrame* first, const std::string& path, int threads) {
    const AVStream* is = in.fmt->streams[in.video];
    AVCodecContext* c = out.enc = avcodec_alloc_context3(enc);
    if (!c) fail(ErrorCode::OutOfMemory, "out of memory (encoder)");
    c->width = first->width;
    c->height = first->height;
    c->pix_fmt = static_cast<AVPixelFormat>(first->format);
    c->time_base = is->time_base;
    c->framerate = av_guess_frame_rate(in.fmt, const_cast<AVStream*>(is), nullptr);
    c->sample_aspect_ratio = in.dec->sample_aspect_ratio;
    if (first->sample_aspect_ratio.num) c->sample_aspect_ratio = first->sample_aspect_ratio;
    // The frame's tag, else the decoder's, else unspecified (a value outside the enum too).
    const auto pick = [](const auto& frame, const auto& dec, int count, auto unspecified) {
        const auto a = tag_or(frame, count, unspecified);
        return a != unspecified ? a : tag_or(dec, count, unspecified);
    };
    c->color_primaries =
        pick(first->color_primaries, in.dec->color_primaries, AVCOL_PRI_NB, AVCOL_PRI_UNSPECIFIED);
    c->color_trc = pick(first->color_trc, in.dec->color_trc, AVCOL_TRC_NB, AVCOL_TRC_UNSPECIFIED);
    c->colorspace =
        pick(first->colorspace, in.dec->colorspace, AVCOL_SPC_NB, AVCOL_SPC_UNSPECIFIED);
    c->color_range =
        pick(first->color_range, in.dec->color_range, AVCOL_RANGE_NB, AVCOL_RANGE_UNSPECIFIED);
    c->chroma_sample_location = pick(first->chroma_location, in.dec->chroma_sample_location,
                                     AVCHROMA_LOC_NB, AVCHROMA_LOC_UNSPECIFIED);
    c->thread_count = std::max(threads, 0);
    if (out.fmt->oformat->flags & AVFMT_GLOBALHEADER) c->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    // (the pixel format was checked against the encoder before the output was created)
    const int crf = vo.crf >= 0 ? vo.crf : default_crf(enc->name);
    if (crf >= 0) {
        if (!av_opt_find(c->priv_data, "crf", nullptr, 0, 0))
            fail(ErrorCode::InvalidArgument,
                 std::string("the codec ") + enc->name + " has no crf (leave --crf out)");
        av_opt_set_int(c->priv_data, "crf", crf, 0);
    }
    if (!vo.preset.empty()) {
        // x264 and x265 print their own line for a preset they do not know: check it here.
        const std::string codec = enc->name;
        if (codec == "libx264" || codec == "libx265") {
            static constexpr const char* kPresets[] = {
                "ultrafast", "superfast", "veryfast", "faster",   "fast",
                "medium",    "slow",      "slower",   "veryslow", "placebo"};
            if (std::find(std::begin(kPresets), std::end(kPresets), vo.preset) ==
                std::end(kPresets))
                fail(ErrorCode::InvalidArgument,
                     "preset '" + vo.preset + "' is not one of " + codec +
                         "'s (allowed: ultrafast, superfast, veryfast, faster, fast, medium, "
                         "slow, slower, veryslow, placebo)");
        }
        if (!av_opt_find(c->priv_data, "preset", nullptr, 0, 0))
            fail(ErrorCode::InvalidArgument,
                 std::string("the codec ") + enc->name + " has no preset (leave --preset out)");
        if (av_opt_set(c->priv_data, "preset", vo.preset.c_str(), 0) < 0)
            fail(ErrorCode::InvalidArgument,
                 "preset '" + vo.preset + "' is not one of " + enc->name + "'s");
    }
    // x265 prints its banner and settings itself unless told otherwise.
    if (std::string(enc->name) == "libx265")
        av_opt_set(c->priv_data, "x265-params", "log-level=error", 0);
    int r = avcodec_open2(c, enc, nullptr);
    if (r < 0)
        fail(ErrorCode::InvalidArgument,
             std::string("cannot open the ") + enc->name + " encoder for " +
                 std::to_string(c->width) + " x " + std::to_string(c->height) + " " +
                 pix_name(c->pix_fmt) + (vo.preset.empty() ? "" : ", preset " + vo.preset) + " (" +
                 av_error(r) + ")");
    AVStream* os = out.video;
    avcodec_parameters_from_context(os->codecpar, c);
    os->time_base = c->time_base;
    if (std::strcmp(out.fmt->oformat->name, "yuv4mpegpipe") == 0) {
        // y4m has no timestamps: its header's frame rate is the stream's time base inverted.
        if (c->framerate.num > 0) os->time_base = av_inv_q(c->framerate);
        // Its 10-bit forms (C420p10, ...) are an extension its readers share (FFmpeg, x264,
        // SVT-AV1); FFmpeg's muxer writes them at "unofficial" compliance.
        out.fmt->strict_std_compliance = FF_COMPLIANCE_UNOFFICIAL;
    }
    os->avg_frame_rate = is->avg_frame_rate;
    os->r_frame_rate = is->r_frame_rate;
    os->sample_aspect_ratio = c->sample_aspect_ratio;
    os->disposition = is->disposition;
    av_dict_copy(&os->metadata, is->metadata, 0);
    av_dict_set(&os->metadata, "encoder", nullptr, 0);
    // HDR10 side data: the input stream's, else the first frame's.
    for (const AVPacketSideDataType t :
         {AV_PKT_DATA_MASTERING_DISPLAY_METADATA, AV_PKT_DATA_CONTENT_LIGHT_LEVEL}) {
        std::size_t size = 0;
        const std::uint8_t* d = av_stream_get_side_data(is, t, &size);
        if (d) {
            copy_side_data(os, t, d, size);
            continue;
        }
        const AVFrameSideData* fd =
            av_frame_get_side_data(first, t == AV_PKT_DATA_MASTERING_DISPLAY_METADATA
                                              ? AV_FRAME_DATA_MASTERING_DISPLAY_METADATA
                                              : AV_FRAME_DATA_CONTENT_LIGHT_LEVEL);
        if (fd) copy_side_data(os, t, fd->data, fd->size);
    }
    if ((r = avformat_write_header(out.fmt, nullptr)) < 0)
        fail(ErrorCode::IoError, path + ": cannot write the header (" + av_error(r) + ")");
    out.header = true;
}

std::int64_t expected_frames(const AVFormatContext* fmt, const AVStream* st) {
    if (st->nb_frames > 0) return st->nb_frames;
    const AVRational rate = st->avg_frame_rate.num ? st->avg_frame_rate : st->r_frame_rate;
    if (fmt->duration > 0 && rate.num > 0)
        return av_rescale_q(fmt->duration, AVRational{1, AV_TIME_BASE}, av_inv_q(rate));
    return 0;
}

// A file that ends early (demuxers report a cut-off file as its end): fewer frames than the
// container's frame count, or the last frame well before the duration it states. The slack
// (2 % of the stream's own count or duration; 5 % and 2 s of the file's, which may be set by a
// longer audio stream) keeps complete files with dropped frames or short video passing.
void check_complete(const Input& in, std::int64_t frames, std::int64_t last_pts,
                    AVRational frame_step, const std::string& path) {
    const AVStream* st = in.fmt->streams[in.video];
    const auto truncated = [&](const std::string& what) {
        fail(ErrorCode::CorruptData, path + ": the file ends after " + std::to_string(frames) +
                                         " frames, " + what + " (it is truncated or corrupt)");
    };
    if (st->nb_frames > 0 &&
        static_cast<double>(frames) < 0.98 * static_cast<double>(st->nb_frames) - 1)
        truncated("of the " + std::to_string(st->nb_frames) + " it lists");
    if (last_pts == AV_NOPTS_VALUE) return;
    const double start =
        st->start_time != AV_NOPTS_VALUE ? st->start_time * av_q2d(st->time_base) : 0.0;
    const double end = last_pts * av_q2d(st->time_base) - start + av_q2d(frame_step);
    double limit = 0, stated = 0;
    if (st->duration > 0) {
        stated = st->duration * av_q2d(st->time_base);
        limit = 0.98 * stated;
    } else if (in.fmt->duration > 0) {
        stated = static_cast<double>(in.fmt->duration) / AV_TIME_BASE;
        limit = stated - std::max(2.0, 0.05 * stated);
    }
    if (limit > 0 && end < limit) {
        char buf[96];
        std::snprintf(buf, sizeof buf, "at %.1f s of the %.1f s it states", end, stated);
        truncated(buf);
    }
}

// The first error of any thread, and the abort that stops the others.
struct Shared {
    std::mutex m;
    std::exception_ptr error;
    Queue* queues[2] = {};
    bool failed() {
        std::lock_guard lk(m);
        return error != nullptr;
    }
    void fail_with(std::exception_ptr e) {
        {
            std::lock_guard lk(m);
            if (!error) error = std::move(e);
        }
        for (Queue* q : queues) q->abort();
    }
};

double since(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
}

}  // namespace

VideoStats upscale_video(const std::string& in_path, const std::string& out_path,
                         const UpscaleOptions& opts, const VideoOptions& vo, const Context& ctx,
                         const VideoProgress& progress) {
    const auto t_start = Clock::now();
    if (vo.window < 0 || vo.window > 64)
        fail(ErrorCode::InvalidArgument,
             "window is " + std::to_string(vo.window) + " (allowed: 1 to 64, or 0 for 5)");
    if (vo.window > 0 && resolved_method(opts) != UpscaleMethod::Nlm)
        fail(ErrorCode::InvalidArgument, std::string("window applies to --method nlm (not ") +
                                             to_string(resolved_method(opts)) + ")");
    if (vo.queue < 1 || vo.queue > 64)
        fail(ErrorCode::InvalidArgument,
             "queue is " + std::to_string(vo.queue) + " (allowed: 1 to 64)");
    if (vo.crf < -1 || vo.crf > 63)
        fail(ErrorCode::InvalidArgument, "crf is " + std::to_string(vo.crf) +
                                             " (allowed: 0 to 63, or -1 for the codec's default)");
    {
        std::error_code ec;
        if (fs::exists(out_path, ec) && fs::exists(in_path, ec) &&
            fs::equivalent(in_path, out_path, ec))
            fail(ErrorCode::InvalidArgument, out_path + ": the output is the input");
    }
    // FFmpeg's own messages only when the caller asked for them (its default level is INFO):
    // upres's errors name what went wrong.
    if (av_log_get_level() == AV_LOG_INFO) av_log_set_level(AV_LOG_FATAL);
    const AVCodec* enc = find_encoder(vo.codec);
    if (vo.crf >= 0 && default_crf(enc->name) < 0 && std::string(enc->name) == "ffv1")
        fail(ErrorCode::InvalidArgument, "the codec ffv1 is lossless: it has no crf");

    Input in;
    open_input(in, in_path, ctx.threads, vo.hwdec);
    const Format& fm = format_of(in.frames);
    VideoStats stats;
    stats.in_width = in.dec->width;
    stats.in_height = in.dec->height;
    const std::pair<int, int> out_size = upscale_yuv_size(in.dec->width, in.dec->height, opts);
    const int ow = out_size.first, oh = out_size.second;  // (lambdas capture them below)
    stats.out_width = ow;
    stats.out_height = oh;
    stats.pixel_format = pix_name(fm.proc);
    stats.codec = enc->name;
    if (fm.bits > 8 && upscale_needs_8bit(opts))
        fail(ErrorCode::UnsupportedFormat,
             std::string("the video is ") + pix_name(fm.in) + " (" + std::to_string(fm.bits) +
                 " bits); " + to_string(resolved_method(opts)) +
                 " works on 8-bit video only (allowed for it: srcnn, bicubic, bilinear)");
    if (!encoder_takes(enc, fm.proc))
        fail(ErrorCode::UnsupportedFormat, std::string("the codec ") + enc->name +
                                               " cannot encode " + pix_name(fm.proc) +
                                               " (it takes: " + encoder_formats(enc) + ")");

    Output out;
    std::vector<int> stream_map;
    open_output(out, in, out_path, enc, stream_map, stats.copied_streams);
    const AVStream* vst = in.fmt->streams[in.video];
    const std::int64_t total = expected_frames(in.fmt, vst);

    Queue decoded(static_cast<std::size_t>(vo.queue)), upscaled(static_cast<std::size_t>(vo.queue));
    Shared sh;
    sh.queues[0] = &decoded;
    sh.queues[1] = &upscaled;
    std::atomic<bool> interrupted{false};
    double decode_s = 0, upscale_s = 0, encode_s = 0;
    std::int64_t frames = 0;

    // Stage 1: demux and decode.
    std::thread reader([&] {
        try {
            PacketPtr pkt = new_packet();
            std::int64_t index = 0;
            AVRational frame_step =
                av_inv_q(av_guess_frame_rate(in.fmt, const_cast<AVStream*>(vst), nullptr));
            std::int64_t last_pts = AV_NOPTS_VALUE;
            const auto receive = [&]() -> bool {
                for (;;) {
                    FramePtr f = new_frame();
                    const auto t = Clock::now();
                    int r = avcodec_receive_frame(in.dec, f.get());
                    if (r == AVERROR(EAGAIN) || r == AVERROR_EOF) {
                        decode_s += since(t);
                        return true;
                    }
                    if (r < 0) decode_failed(in, in_path, index, r);
                    if (f->format == AV_PIX_FMT_CUDA) {  // NVDEC's frame, to host memory
                        FramePtr host = new_frame();
                        if ((r = av_hwframe_transfer_data(host.get(), f.get(), 0)) < 0 ||
                            (r = av_frame_copy_props(host.get(), f.get())) < 0)
                            fail(ErrorCode::IoError,
                                 in_path + ": copying decoded frame " + std::to_string(index) +
                                     " from the GPU failed (" + av_error(r) + ")");
                        f = std::move(host);
                    }
                    decode_s += since(t);
                    if (f->format != fm.in)
                        fail(ErrorCode::UnsupportedFormat,
                             in_path + ": frame " + std::to_string(index) + " is " +
                                 pix_name(f->format) + " but the first was " + pix_name(fm.in) +
                                 " (format changes mid-stream are not supported)");
                    if (f->width != stats.in_width || f->height != stats.in_height)
                        fail(ErrorCode::UnsupportedFormat,
                             in_path + ": frame " + std::to_string(index) + " is " +
                                 std::to_string(f->width) + " x " + std::to_string(f->height) +
                                 " but the first was " + std::to_string(stats.in_width) + " x " +
                                 std::to_string(stats.in_height) +
                                 " (size changes mid-stream are not supported)");
                    // Timestamps as decoded; a frame without one follows the last by one frame
                    // step, and a repeated one is moved past the last (encoders need them
                    // strictly increasing).
                    std::int64_t pts = f->best_effort_timestamp;
                    if (pts == AV_NOPTS_VALUE)
                        pts = last_pts == AV_NOPTS_VALUE
                                  ? 0
                                  : last_pts + std::max<std::int64_t>(
                                                   1, av_rescale_q(1, frame_step, vst->time_base));
                    if (last_pts != AV_NOPTS_VALUE && pts <= last_pts) pts = last_pts + 1;
                    f->pts = last_pts = pts;
                    ++index;
                    if (!decoded.push(Item{std::move(f), nullptr})) return false;
                }
            };
            for (;;) {
                const auto t = Clock::now();
                int r = av_read_frame(in.fmt, pkt.get());
                if (r == AVERROR_EOF) {
                    decode_s += since(t);
                    break;
                }
                if (r < 0)
                    fail(ErrorCode::CorruptData, in_path + ": reading failed after " +
                                                     std::to_string(index) + " frames (" +
                                                     av_error(r) + ")");
                if (pkt->stream_index == in.video) {
                    r = avcodec_send_packet(in.dec, pkt.get());
                    av_packet_unref(pkt.get());
                    decode_s += since(t);
                    if (r < 0 && r != AVERROR(EAGAIN)) decode_failed(in, in_path, index, r);
                    if (!receive()) return;
                    continue;
                }
                decode_s += since(t);
                const int os = pkt->stream_index < static_cast<int>(stream_map.size())
                                   ? stream_map[pkt->stream_index]
                                   : -1;
                if (os < 0) {
                    av_packet_unref(pkt.get());
                    continue;
                }
                PacketPtr copy = new_packet();
                av_packet_move_ref(copy.get(), pkt.get());
                av_packet_rescale_ts(copy.get(), in.fmt->streams[copy->stream_index]->time_base,
                                     out.fmt->streams[os]->time_base);
                copy->stream_index = os;
                copy->pos = -1;
                if (!decoded.push(Item{nullptr, std::move(copy)})) return;
            }
            avcodec_send_packet(in.dec, nullptr);
            if (!receive()) return;
            check_complete(in, index, last_pts, frame_step, in_path);
            decoded.close();
        } catch (...) {
            sh.fail_with(std::current_exception());
        }
    });

    // Stage 2: upscale. The cuda backend gets its frames in host frame memory (FramePool; the
    // input frame is copied there from the decoder's buffer) and writes its outputs there.
    // NLM-SR on it keeps the window's frames on the device (DeviceWindow).
    const bool nlm = resolved_method(opts) == UpscaleMethod::Nlm;
    const int window = nlm ? (vo.window > 0 ? vo.window : kDefaultNlmWindow) : 1;
    NlmsrOptions nlm_opts;
    nlm_opts.scale = static_cast<int>(opts.scale);
    const bool staged = ctx.backend == Backend::Cuda;
    std::thread worker([&] {
        try {
            // This thread's device images (the NLM window) on Context::device.
            if (ctx.backend == Backend::Cuda && ctx.device >= 0) set_cuda_device(ctx.device);
            std::unique_ptr<FramePool> in_pool, out_pool;
            if (staged) {
                in_pool = std::make_unique<FramePool>(fm.proc, stats.in_width, stats.in_height);
                out_pool = std::make_unique<FramePool>(fm.proc, ow, oh);
            }
            // A frame of the processed format, w x h: from `pool` for the cuda backend (frame
            // memory), else FFmpeg's.
            const auto frame_of = [&](FramePool* pool, int w, int h) {
                if (staged) return pool->get();
                FramePtr f = new_frame();
                f->format = fm.proc;
                f->width = w;
                f->height = h;
                if (av_frame_get_buffer(f.get(), 0) < 0)
                    fail(ErrorCode::OutOfMemory, "out of memory (a frame)");
                return f;
            };
            // An output frame with the props of src.
            const auto output_for = [&](const AVFrame* src) {
                FramePtr dst = frame_of(out_pool.get(), ow, oh);
                av_frame_copy_props(dst.get(), src);
                dst->pict_type = AV_PICTURE_TYPE_NONE;
                return dst;
            };
            const auto layout_of = [&](const AVFrame* src) {
                YuvLayout layout;
                layout.shift_x = fm.shift_x;
                layout.shift_y = fm.shift_y;
                layout.bits = fm.bits;
                layout.siting = siting_of(src->chroma_location, fm.in);
                return layout;
            };
            // NLM: the frames of the current window, frames [first, first + size) of the video;
            // output frame i fuses the `window` frames centred on it (shifted inside the video
            // at its ends, as upres fuse --sequence), so it waits for window / 2 later frames.
            std::deque<FramePtr> win;
            std::unique_ptr<DeviceWindow> dwin;
            if (nlm && ctx.backend == Backend::Cuda)
                dwin = std::make_unique<DeviceWindow>(fm, stats.in_width, stats.in_height, ow, oh,
                                                      ctx);
            std::int64_t first = 0, next = 0, received = 0;
            const auto fuse = [&](std::int64_t i, std::int64_t start, int size) {
                const auto t = Clock::now();
                const AVFrame* ref = win[static_cast<std::size_t>(i - first)].get();
                FramePtr dst = output_for(ref);
                const auto run = [&](auto tag) {
                    using T = decltype(tag);
                    std::vector<YuvPlanes<const T>> planes;
                    for (int k = 0; k < size; ++k) {
                        const auto at = static_cast<std::size_t>(start - first + k);
                        planes.push_back(dwin ? dwin->input<const T>(at)
                                              : planes_of<const T>(win[at].get(), fm));
                    }
                    nlm_fuse_yuv(std::span<const YuvPlanes<const T>>(planes),
                                 static_cast<int>(i - start),
                                 dwin ? dwin->output<T>() : planes_of<T>(dst.get(), fm),
                                 layout_of(ref), nlm_opts, ctx);
                    if (dwin) dwin->download(dst.get());
                };
                if (fm.bits == 8)
                    run(std::uint8_t{});
                else
                    run(std::uint16_t{});
                upscale_s += since(t);
                return upscaled.push(Item{std::move(dst), nullptr});
            };
            const auto drop_unneeded = [&] {
                const std::int64_t keep =
                    std::min(std::max<std::int64_t>(0, next - window / 2), received - window);
                while (first < keep) {
                    win.pop_front();
                    if (dwin) dwin->pop_front();
                    ++first;
                }
            };
            // A semi-planar frame made planar (in frame memory for the cuda backend).
            const auto planar = [&](FramePtr src) {
                FramePtr dst = frame_of(in_pool.get(), src->width, src->height);
                planar_from_semi(src.get(), dst.get(), fm);
                av_frame_copy_props(dst.get(), src.get());
                return dst;
            };
            const bool semi = fm.in != fm.proc;
            Item it;
            while (decoded.pop(it)) {
                if (it.frame && semi) {
                    const auto t = Clock::now();
                    it.frame = planar(std::move(it.frame));
                    upscale_s += since(t);
                }
                if (it.frame && nlm) {
                    if (dwin) {
                        const auto t = Clock::now();
                        dwin->push_back(it.frame.get());
                        upscale_s += since(t);
                    }
                    win.push_back(std::move(it.frame));
                    ++received;
                    for (;;) {
                        const std::int64_t start = std::max<std::int64_t>(0, next - window / 2);
                        if (start + window > received) break;
                        if (!fuse(next, start, window)) return;
                        ++next;
                        drop_unneeded();
                    }
                    continue;
                }
                if (it.frame) {
                    const auto t = Clock::now();
                    FramePtr src = std::move(it.frame);
                    if (staged && !semi) {
                        FramePtr pinned = in_pool->get();
                        av_image_copy(pinned->data, pinned->linesize,
                                      const_cast<const std::uint8_t**>(src->data), src->linesize,
                                      fm.proc, src->width, src->height);
                        av_frame_copy_props(pinned.get(), src.get());
                        src = std::move(pinned);
                    }
                    FramePtr dst = output_for(src.get());
                    if (fm.bits == 8)
                        upscale_yuv(planes_of<const std::uint8_t>(src.get(), fm),
                                    planes_of<std::uint8_t>(dst.get(), fm), layout_of(src.get()),
                                    opts, ctx);
                    else
                        upscale_yuv(planes_of<const std::uint16_t>(src.get(), fm),
                                    planes_of<std::uint16_t>(dst.get(), fm), layout_of(src.get()),
                                    opts, ctx);
                    upscale_s += since(t);
                    it.frame = std::move(dst);
                }
                if (!upscaled.push(std::move(it))) return;
            }
            if (sh.failed()) return;
            // The end of the video: the remaining frames, their windows shifted inside it.
            const int size = static_cast<int>(std::min<std::int64_t>(window, received));
            for (; next < received; ++next) {
                const std::int64_t start =
                    std::clamp<std::int64_t>(next - size / 2, 0, received - size);
                if (!fuse(next, start, size)) return;
            }
            upscaled.close();
        } catch (...) {
            sh.fail_with(std::current_exception());
        }
    });

    // Stage 3 (this thread): encode and mux.
    try {
        PacketPtr pkt = new_packet();
        std::vector<PacketPtr> early;  // copied packets read before the first frame
        const auto write = [&](AVPacket* p) {
            const int r = av_interleaved_write_frame(out.fmt, p);
            if (r < 0)
                fail(ErrorCode::IoError, out_path + ": writing failed (" + av_error(r) + ")");
        };
        const auto drain = [&] {
            for (;;) {
                const int r = avcodec_receive_packet(out.enc, pkt.get());
                if (r == AVERROR(EAGAIN) || r == AVERROR_EOF) return;
                if (r < 0) fail(ErrorCode::Internal, "encoding failed (" + av_error(r) + ")");
                av_packet_rescale_ts(pkt.get(), out.enc->time_base, out.video->time_base);
                pkt->stream_index = out.video->index;
                write(pkt.get());
            }
        };
        Item it;
        while (upscaled.pop(it)) {
            const auto t = Clock::now();
            if (it.packet) {
                if (!out.header)
                    early.push_back(std::move(it.packet));
                else
                    write(it.packet.get());
                encode_s += since(t);
                continue;
            }
            if (!out.header) {
                open_encoder(out, in, enc, vo, it.frame.get(), out_path, ctx.threads);
                for (PacketPtr& p : early) write(p.get());
                early.clear();
            }
            const int r = avcodec_send_frame(out.enc, it.frame.get());
            if (r < 0) fail(ErrorCode::Internal, "encoding failed (" + av_error(r) + ")");
            it.frame.reset();
            drain();
            encode_s += since(t);
            ++frames;
            if (progress && !progress(frames, std::max(total, frames))) {
                interrupted = true;
                fail(ErrorCode::IoError, "interrupted");
            }
        }
        if (!sh.failed()) {
            if (!out.header)
                fail(ErrorCode::CorruptData, in_path + ": no video frame could be decoded");
            const auto t = Clock::now();
            avcodec_send_frame(out.enc, nullptr);
            drain();
            const int r = av_write_trailer(out.fmt);
            if (r < 0)
                fail(ErrorCode::IoError, out_path + ": writing failed (" + av_error(r) + ")");
            if (!(out.fmt->oformat->flags & AVFMT_NOFILE)) {
                if (out.fmt->pb->error < 0)
                    fail(ErrorCode::IoError,
                         out_path + ": writing failed (" + av_error(out.fmt->pb->error) + ")");
                if ((avio_closep(&out.fmt->pb)) < 0)
                    fail(ErrorCode::IoError, out_path + ": writing failed (closing)");
            }
            encode_s += since(t);
        }
    } catch (...) {
        sh.fail_with(std::current_exception());
    }
    reader.join();
    worker.join();
    if (sh.failed()) {
        if (interrupted)
            fail(ErrorCode::IoError, "interrupted after " + std::to_string(frames) + " frames; " +
                                         out_path + " was not written");
        try {
            std::rethrow_exception(sh.error);
        } catch (const Error& e) {
            const std::string msg = e.what();
            throw Error(e.code(), msg + "; " + out_path + " was not written");
        }
    }
    std::error_code ec;
    fs::rename(out.temp, out_path, ec);
    if (ec)
        fail(ErrorCode::IoError,
             out_path + ": cannot rename the finished file (" + ec.message() + ")");
    out.committed = true;
    stats.frames = frames;
    stats.decode_seconds = decode_s;
    stats.upscale_seconds = upscale_s;
    stats.encode_seconds = encode_s;
    stats.seconds = since(t_start);
    return stats;
}

}  // namespace upres
