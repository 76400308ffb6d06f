// The --tiled runs of the commands (warp, upscale): a TIFF of any size in, a tiled (Big)TIFF
// out, computed band by band in bounded memory by a tiled operation (upres/tiled.hpp), and
// resumable: the same command after a kill, Ctrl-C or error keeps the rows already written
// (docs/scale.md, "Resuming an interrupted job").
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <upres/io.hpp>
#include <upres/tiled.hpp>

namespace upres::cli {

struct TiledArgs {
    bool tiled = false, deflate = false;
    int band_rows = 0, tile_size = 0;
    double max_memory_mib = 0;
};

// --tiled (with `help`) and the flags that apply to it alone: --band-rows, --max-memory,
// --tile-size, --deflate. check_tiled_flags refuses those flags without --tiled.
struct TiledFlags {
    CLI::Option* tiled = nullptr;
    std::vector<CLI::Option*> only;
};
TiledFlags add_tiled_flags(CLI::App* cmd, TiledArgs& args, const std::string& help);
void check_tiled_flags(const TiledFlags& f);

// What the job computes: the operation over the reader into the writer with these options.
using TiledCompute = std::function<TiledStats(RowSource& in, RowSink& out, const TiledOptions&)>;

struct TiledJob {
    std::string command;  // "warp", "upscale": error messages and the progress bar
    std::string in, out;  // TIFF paths
    int out_width = 0, out_height = 0;
    // Every option that changes the output's pixels or file (the resume journal's key, with the
    // input's path, size and time, the output size, the TIFF tile side and compression).
    std::string options;
    // The output's channels and type; 0 / the input's when not set (stereo writes float maps).
    int out_channels = 0;
    std::optional<PixelType> out_type;
};

struct TiledResult {
    TiledStats stats;
    bool bigtiff = false;
    double seconds = 0;
};

// Checks the paths and flags (TIFF in and out, --max-memory, --band-rows, --tile-size against
// the output), then runs compute into a TiffRowWriter of the job's size and the reader's
// channels and type, resuming an interrupted run of the same job, with a progress bar and
// Ctrl-C between bands. `in` is the job's input, opened by the caller.
TiledResult run_tiled_job(const TiledJob& job, TiffRowReader& in, const TiledArgs& args, bool quiet,
                          const TiledCompute& compute);

// The input checks run_tiled_job makes, for a caller that must open the input first.
void check_tiled_paths(const std::string& command, const std::string& in, const std::string& out,
                       const std::string& out_format, const TiledArgs& args);

}  // namespace upres::cli
