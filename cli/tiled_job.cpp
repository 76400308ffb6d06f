// The --tiled runs of the commands (tiled_job.hpp).
#include "tiled_job.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "util.hpp"

namespace upres::cli {

namespace {

// The files of a resumable tiled job writing `out`.
struct ResumeState {
    std::string file;  // the partial file holding the rows
    int rows = 0;
};
struct ResumeFiles {
    std::string partial, done, journal;
    explicit ResumeFiles(const std::string& out)
        : partial(out + ".upres-partial.tif"),
          done(out + ".upres-done.tif"),
          journal(out + ".upres-resume") {}
    // The journal's state if it is this job's, its rows are whole rows of tiles of the output
    // and its file holds an image of the output's size; rows = 0 otherwise (start over).
    ResumeState read(const std::string& key, int width, int height, int tile) const {
        std::ifstream f(journal);
        std::string magic, k, file;
        int rows = 0;
        if (!std::getline(f, magic) || magic != "upres tiled job 1" || !std::getline(f, k) ||
            k != key || !std::getline(f, file) || !(f >> rows) || rows <= 0 || rows >= height ||
            rows % tile != 0 || (file != partial && file != done) || !std::filesystem::exists(file))
            return {};
        try {
            const TiffRowReader r(file);
            if (r.width() != width || r.height() != height) return {};
        } catch (const Error&) {
            return {};
        }
        return {file, rows};
    }
    // Replaces the journal (written aside, then renamed: a kill leaves the old or the new one).
    void write(const std::string& key, const std::string& file, int rows) const {
        const std::string tmp = journal + ".tmp";
        {
            std::ofstream f(tmp, std::ios::trunc);
            f << "upres tiled job 1\n" << key << "\n" << file << "\n" << rows << "\n";
            if (!f.flush())
                throw Error(ErrorCode::IoError, journal + ": cannot write the resume journal");
        }
        std::error_code ec;
        std::filesystem::rename(tmp, journal, ec);
        if (ec)
            throw Error(ErrorCode::IoError,
                        journal + ": cannot write the resume journal: " + ec.message());
    }
    void remove_all() const noexcept {
        std::error_code ec;
        for (const std::string* p : {&partial, &done, &journal}) std::filesystem::remove(*p, ec);
    }
};

}  // namespace

TiledFlags add_tiled_flags(CLI::App* cmd, TiledArgs& args, const std::string& help) {
    TiledFlags f;
    f.tiled = cmd->add_flag("--tiled", args.tiled, help);
    f.only = {cmd->add_option("--band-rows", args.band_rows,
                              "--tiled: output rows per band (default 0: from --max-memory)"),
              cmd->add_option("--max-memory", args.max_memory_mib,
                              "--tiled: MiB for the bands' buffers (default 0: automatic)"),
              cmd->add_option(
                  "--tile-size", args.tile_size,
                  "--tiled: the output TIFF's tile side, a multiple of 16 (default 0: 256, less "
                  "for smaller outputs)"),
              cmd->add_flag("--deflate", args.deflate,
                            "--tiled: Deflate-compress the output tiles (default: uncompressed)")};
    return f;
}

void check_tiled_flags(const TiledFlags& f) {
    for (const CLI::Option* o : f.only)
        if (o->count() > 0 && f.tiled->count() == 0)
            throw CLI::ValidationError(o->get_name(), "applies to --tiled runs only");
}

void check_tiled_paths(const std::string& command, const std::string& in, const std::string& out,
                       const std::string& out_format, const TiledArgs& args) {
    if (format_from_path(in) != FileFormat::Tiff)
        throw Error(ErrorCode::InvalidArgument,
                    command + ": " + in + ": --tiled reads TIFF or BigTIFF (.tif, .tiff)");
    if (output_format(out, out_format) != FileFormat::Tiff)
        throw Error(ErrorCode::InvalidArgument,
                    command + ": " + out + ": --tiled writes tiled TIFF (.tif, .tiff)");
    if (args.max_memory_mib != 0 && (!(args.max_memory_mib >= 1) || args.max_memory_mib > 1e6))
        throw Error(ErrorCode::InvalidArgument,
                    fmt::format("{}: --max-memory {} MiB is outside [1, 1000000] (0: automatic)",
                                command, args.max_memory_mib));
    if (args.band_rows < 0)
        throw Error(ErrorCode::InvalidArgument,
                    fmt::format("{}: --band-rows {} is negative (0: from --max-memory)", command,
                                args.band_rows));
    if (args.tile_size < 0)
        throw Error(
            ErrorCode::InvalidArgument,
            fmt::format("{}: --tile-size {} is negative (0: automatic)", command, args.tile_size));
}

TiledResult run_tiled_job(const TiledJob& job, TiffRowReader& in, const TiledArgs& args, bool quiet,
                          const TiledCompute& compute) {
    const int ow = job.out_width, oh = job.out_height;
    if (args.band_rows > oh)
        throw Error(ErrorCode::InvalidArgument,
                    fmt::format("{}: --band-rows {} exceeds the output's {} rows (0: from "
                                "--max-memory)",
                                job.command, args.band_rows, oh));
    // The output's tile side (also in the resumable job's key: fixed before the writer).
    const int cover = (std::max(ow, oh) + 15) / 16 * 16;
    const int tile = args.tile_size > 0 ? args.tile_size : tiff_tile_side(ow, oh);
    if (tile > cover)
        throw Error(ErrorCode::InvalidArgument,
                    fmt::format("{}: --tile-size {} exceeds the {} x {} output (at most {}, the "
                                "multiple of 16 that covers it)",
                                job.command, tile, ow, oh, cover));
    // Resumable: OUT.upres-partial.tif holds the rows written so far (a valid TIFF after every
    // row of tiles) and OUT.upres-resume names the job and the rows; the same command after a
    // kill, a Ctrl-C or an error copies those rows and computes the rest.
    std::error_code fs_ec;  // the input was opened: its size and time are there
    const std::string key = fmt::format(
        "input {} {} {}; {}; output {} x {}; tile {} deflate {}",
        std::filesystem::absolute(job.in).string(), std::filesystem::file_size(job.in, fs_ec),
        std::filesystem::last_write_time(job.in, fs_ec).time_since_epoch().count(), job.options, ow,
        oh, tile, args.deflate);
    const ResumeFiles rf{job.out};
    const ResumeState prev = rf.read(key, ow, oh, tile);
    int done = 0;
    std::string done_file;
    if (prev.rows > 0) {
        std::error_code ec;
        if (prev.file != rf.done) std::filesystem::rename(prev.file, rf.done, ec);
        if (ec)
            throw Error(ErrorCode::IoError, fmt::format("{}: {}: cannot rename it to resume: {}",
                                                        job.command, prev.file, ec.message()));
        rf.write(key, rf.done, prev.rows);
        done = prev.rows, done_file = rf.done;
    } else {
        rf.remove_all();
    }
    TiffRowWriterOptions wo;
    wo.tile = tile;
    wo.deflate = args.deflate;
    wo.partial_path = rf.partial;
    int checkpointed = 0;  // rows safe in the partial file
    wo.on_checkpoint = [&](int rows) {
        checkpointed = rows;
        if (rows < done) return;  // still copying: the rows are in the done file
        rf.write(key, rf.partial, rows);
        if (!done_file.empty()) {
            std::error_code ec;
            std::filesystem::remove(done_file, ec);
            done_file.clear();
        }
    };
    const int oc = job.out_channels > 0 ? job.out_channels : in.channels();
    const PixelType ot = job.out_type.value_or(in.type());
    TiffRowWriter out(job.out, ow, oh, oc, ot, wo);
    TiledOptions to;
    to.max_memory = static_cast<std::size_t>(args.max_memory_mib * 1048576.0);
    to.band_rows = args.band_rows;
    // Bands end on rows of output tiles, where the writer checkpoints: a kill loses at most one
    // band, at most 1 % of the rows on images of 25600 output rows or more.
    to.band_align = tile;
    to.max_band_rows = std::max(tile, oh / 100);
    to.first_row = done;
    const InterruptHandler handler;
    ProgressBar bar(job.command + " (tiled)", oh, quiet);
    to.progress = [&](std::int64_t rows, std::int64_t total) {
        bar.update(rows);
        if (interrupted())
            throw Error(ErrorCode::IoError, fmt::format("{}: interrupted after {} of {} rows",
                                                        job.command, rows, total));
    };
    const auto t0 = std::chrono::steady_clock::now();
    TiledResult res;
    try {
        if (done > 0) {  // the rows of the interrupted run, copied
            TiffRowReader prev_rows(done_file);
            const int chunk = tile;
            std::vector<unsigned char> buf(static_cast<std::size_t>(chunk) * ow * oc *
                                           pixel_size(ot));
            for (int y = 0; y < done; y += chunk) {
                const int n = std::min(chunk, done - y);
                prev_rows.read_rows(y, n, buf.data(), std::ptrdiff_t{ow} * oc);
                out.write_rows(y, n, buf.data(), std::ptrdiff_t{ow} * oc);
            }
            bar.update(done);
        }
        res.stats = compute(in, out, to);
        rf.remove_all();
    } catch (const Error& e) {
        bar.abandon();
        const int kept = std::max(checkpointed, done);
        if (kept == 0) {
            rf.remove_all();
            throw;
        }
        out.keep_partial();
        throw Error(e.code(), fmt::format("{}; {} was not written: rerun the same command to "
                                          "resume after the {} rows kept",
                                          e.what(), job.out, kept));
    } catch (...) {
        bar.abandon();
        rf.remove_all();
        throw;
    }
    bar.finish();
    res.bigtiff = out.bigtiff();
    res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return res;
}

}  // namespace upres::cli
