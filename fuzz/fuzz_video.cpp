// libFuzzer target: upscale_video (upres/video.hpp) on arbitrary bytes as the input file, with
// a cheap method (bilinear x1) into a lossless ffv1 file. Exercises what upres does around
// FFmpeg's demuxers and decoders: the format and size checks, stream copying, the truncation
// check, the pipeline's error paths and the removal of the partial output. An upres::Error is
// the expected outcome for bad bytes; a crash, a sanitizer report, a leak (FFmpeg's objects
// freed on every path), another exception or an output file left after an error is a finding.
// Built by tools/fuzz.sh with the video build (docs/reliability.md).
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <upres/error.hpp>
#include <upres/upscale.hpp>
#include <upres/video.hpp>

#include "memfile.hpp"

namespace {

using upres_fuzz::MemFile;  // the input's path (no extension: the demuxer is chosen from the
                            // content)

std::string out_dir() {
    static const std::string d = [] {
        std::string t = (std::filesystem::temp_directory_path() /
                         ("upres-fuzz-video-" + std::to_string(::getpid())))
                            .string();
        std::filesystem::create_directories(t);
        return t;
    }();
    return d;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const MemFile f(data, size);
    const std::string out = out_dir() + "/out.mkv";
    upres::UpscaleOptions o;
    o.method = upres::UpscaleMethod::Bilinear;
    o.scale = 1.0;
    upres::VideoOptions v;
    v.codec = "ffv1";
    v.queue = 2;
    upres::Context ctx;
    ctx.backend = upres::Backend::Cpu;
    ctx.threads = 1;
    bool ok = true;
    try {
        (void)upres::upscale_video(f.path(), out, o, v, ctx);
    } catch (const upres::Error&) {
        ok = false;  // refused with a clear error: the expected outcome for bad bytes
    }
    // After an error nothing may be left in the folder; after success only the output.
    std::size_t files = 0;
    for (const auto& e : std::filesystem::directory_iterator(out_dir())) {
        (void)e;
        ++files;
    }
    if (files != (ok ? 1u : 0u)) {
        std::fprintf(stderr, "fuzz_video: %zu files left in %s after %s\n", files,
                     out_dir().c_str(), ok ? "success" : "an error");
        std::abort();
    }
    std::filesystem::remove(out);
    return 0;
}
