// The video options' table (upres/video.hpp) and is_video_path.
#include <upres/options.hpp>
#include <upres/video.hpp>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <filesystem>
#include <string>

namespace upres {

namespace {
constexpr EnumEntry kHwdecs[] = {
    {static_cast<int>(Hwdec::None), "none", "decode on the CPU (FFmpeg's software decoders)"},
    {static_cast<int>(Hwdec::Cuda), "cuda",
     "decode on the GPU (NVDEC; 8- and 10-bit 4:2:0; needs the driver's libnvcuvid)"},
};
constexpr EnumDesc kHwdecDesc{"hardware decoder", kHwdecs};

constexpr OptionDesc kVideoOptions[] = {
    {"codec", OptionKind::Text, nullptr, "libx264", 0, 0,
     "Video encoder: libx264, libx265, libsvtav1, ffv1 (lossless), libvpx-vp9, ...",
     UPRES_OPTION_FIELD(VideoOptions, codec)},
    {"crf", OptionKind::Int, nullptr, "-1", -1, 63,
     "Constant rate factor (-1: the codec's default: libx264 18, libx265 20, libsvtav1 30, "
     "libvpx-vp9 31)",
     UPRES_OPTION_FIELD(VideoOptions, crf)},
    {"preset", OptionKind::Text, nullptr, "", 0, 0,
     "Encoder preset (libx264 / libx265: ultrafast ... veryslow; libsvtav1: 0 ... 13); empty: "
     "the encoder's default",
     UPRES_OPTION_FIELD(VideoOptions, preset)},
    {"window", OptionKind::Int, nullptr, "0", 0, 64,
     "Method nlm: frames fused per output frame, centred on it (0: 5)",
     UPRES_OPTION_FIELD(VideoOptions, window)},
    {"queue", OptionKind::Int, nullptr, "8", 1, 64, "Frames in flight between pipeline stages",
     UPRES_OPTION_FIELD(VideoOptions, queue)},
    {"hwdec", OptionKind::Enum, &enum_desc<Hwdec>, "none", 0, 0, "Where the input is decoded",
     UPRES_OPTION_FIELD(VideoOptions, hwdec)},
};
constexpr OperationDesc kVideoDesc{"video", "Video input and output (FFmpeg's libraries)",
                                   kVideoOptions};

constexpr const char* kVideoExtensions[] = {"mp4", "mkv",  "mov", "avi",  "webm", "m4v",
                                            "mpg", "mpeg", "ts",  "m2ts", "mts",  "flv",
                                            "wmv", "nut",  "y4m", "ogv",  "3gp"};
}  // namespace

template <>
const EnumDesc& enum_desc<Hwdec>() noexcept {
    return kHwdecDesc;
}
const char* to_string(Hwdec h) noexcept { return enum_name(h); }

const OperationDesc& video_operation() noexcept { return kVideoDesc; }

bool is_video_path(const std::string& path) {
    std::string ext = std::filesystem::path(path).extension().string();
    if (ext.size() < 2) return false;
    ext = ext.substr(1);
    std::transform(ext.begin(), ext.end(), ext.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return std::find(std::begin(kVideoExtensions), std::end(kVideoExtensions), ext) !=
           std::end(kVideoExtensions);
}

}  // namespace upres
