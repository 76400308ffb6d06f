// upres info: version, build options and CUDA devices; --options: every operation's declared
// options (upres/options.hpp), one per line.
#include <fmt/core.h>

#include <memory>
#include <string>

#include <upres/context.hpp>
#include <upres/io.hpp>
#include <upres/options.hpp>
#include "command.hpp"

namespace upres::cli {

namespace {

const char* kind_name(OptionKind k) {
    switch (k) {
        case OptionKind::Enum:
            return "enum";
        case OptionKind::Int:
            return "int";
        case OptionKind::Real:
            return "real";
        case OptionKind::Flag:
            return "flag";
        case OptionKind::Text:
            return "text";
    }
    return "?";
}

// Tab-separated: operation, option, kind, default, allowed values (comma-separated) or range,
// doc; "-" for no default or no values.
void print_options() {
    for (const OperationDesc* op : operations())
        for (const OptionDesc& o : op->options) {
            std::string values;
            if (o.kind == OptionKind::Enum) {
                for (const EnumEntry& e : o.values().entries) {
                    if (!values.empty()) values += ',';
                    values += e.name;
                }
            } else if ((o.kind == OptionKind::Int || o.kind == OptionKind::Real) &&
                       !o.unbounded()) {
                values = fmt::format("{}..{}", o.min, o.max);
            }
            // "-" for an empty field, so that every line has six (shells merge empty ones).
            fmt::print("{}\t{}\t{}\t{}\t{}\t{}\n", op->name, o.name, kind_name(o.kind),
                       o.def[0] ? o.def : "-", values.empty() ? "-" : values, o.doc);
        }
}

}  // namespace

void add_info(CLI::App& app, const Common& /*common*/) {
    auto* cmd = app.add_subcommand("info", "Print version, build options and CUDA devices");
    auto options = std::make_shared<bool>(false);
    cmd->add_flag("--options", *options,
                  "List every operation's options instead (tab-separated: operation, option, "
                  "kind, default, allowed values or range, doc)");
    cmd->callback([options] {
        if (*options) {
            print_options();
            return;
        }
        const BuildInfo b = build_info();
        fmt::print("upres {}\n", b.version);
        fmt::print("compiler:      {}\n", b.compiler);
        fmt::print("OpenMP:        {} (max threads {})\n", b.openmp ? "yes" : "no",
                   b.openmp_max_threads);
        fmt::print("CUDA backends: {}", b.cuda ? "yes" : "no");
        if (b.cuda) fmt::print(" (runtime {}, sm_{})", b.cuda_runtime, b.cuda_archs);
        fmt::print("\n");
        fmt::print("TIFF:          {}\n", format_supported(FileFormat::Tiff) ? "yes" : "no");
        const std::string devices = cuda_device_info();
        fmt::print("CUDA devices:  {}\n", devices.empty() ? "none" : "");
        if (!devices.empty()) fmt::print("{}", devices);
    });
}

}  // namespace upres::cli
