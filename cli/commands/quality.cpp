// upres quality IMG...: no-reference quality, BRISQUE (upres/brisque.hpp). One line per image,
// "IMG: brisque S" (lower is better); --json prints one object per line,
// {"file": ..., "brisque": ...}. With several images a file that fails is reported on stderr
// and counted, the others still run, and the command exits with the first failure's code.
#include <fmt/core.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <upres/brisque.hpp>
#include "command.hpp"
#include "options.hpp"
#include "util.hpp"

namespace upres::cli {

namespace {

struct QualityArgs {
    std::vector<std::string> paths;
    BrisqueOptions opts;
    bool json = false;
};

void run_quality(const QualityArgs& args, const Common& common) {
    const Context ctx = common.context();
    bool batch = false;
    const std::vector<std::string> files = expand_inputs(args.paths, batch);
    std::optional<ErrorCode> first_error;
    int failed = 0;
    for (const std::string& f : files) {
        try {
            const double s = brisque(read_input(f), args.opts, ctx);
            if (args.json)
                fmt::print("{{\"file\": {}, \"brisque\": {}}}\n", json_string(f),
                           json_number(s, 8));
            else
                fmt::print("{}: brisque {:.4f}\n", f, s);
        } catch (const Error& e) {
            if (!batch) throw;
            std::fprintf(stderr, "upres: error: %s: %s\n", f.c_str(), e.what());
            if (!first_error) first_error = e.code();
            ++failed;
        }
    }
    std::fflush(stdout);
    if (failed)
        throw Error(*first_error, fmt::format("quality: {} of {} files failed (reported above)",
                                              failed, files.size()));
}

}  // namespace

void add_quality(CLI::App& app, const Common& common) {
    auto args = std::make_shared<QualityArgs>();
    const OperationDesc& op = operation("quality");
    auto* cmd = app.add_subcommand("quality", op.doc);
    cmd->add_option("IMG", args->paths, "Images or folders of images")->required();
    add_declared_fields(cmd, op, &args->opts);
    cmd->add_flag("--json", args->json,
                  "Print one JSON object per image: {\"file\": ..., \"brisque\": ...}");
    cmd->callback([args, &common] { run_quality(*args, common); });
}

}  // namespace upres::cli
