// Command-line flags made from the operations' option declarations (upres/options.hpp): the
// flag's name, its help (doc, allowed values or range, default), its default value and the check
// of its value all come from the declaration, so a flag cannot drift from the library. A value
// outside the declared set or range is a usage error (exit 1) naming what is allowed.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include <upres/options.hpp>

namespace upres::cli {

// --<name> of operation `op`, bound to target, which receives the declared default first.
//   Enum options: target is the enum type E (parse_enum<E>).
//   Int / Real options: int, float or double, checked against [min, max].
//   Flag options: bool.  Text options: std::string.
CLI::Option* add_declared(CLI::App* cmd, const OperationDesc& op, const char* name,
                          std::string& target);
CLI::Option* add_declared(CLI::App* cmd, const OperationDesc& op, const char* name, int& target);
CLI::Option* add_declared(CLI::App* cmd, const OperationDesc& op, const char* name, double& target);
CLI::Option* add_declared(CLI::App* cmd, const OperationDesc& op, const char* name, float& target);
CLI::Option* add_declared(CLI::App* cmd, const OperationDesc& op, const char* name, bool& target);

// The validator of an enum option: accepts the declared names, else "unknown <what> 'x'
// (allowed: ...)".
CLI::Validator enum_validator(const EnumDesc& d);

template <class E>
CLI::Option* add_declared(CLI::App* cmd, const OperationDesc& op, const char* name, E& target) {
    const OptionDesc& o = op.option(name);
    const EnumDesc& d = enum_desc<E>();
    if (o.def[0] != '\0') target = static_cast<E>(d.parse(o.def));
    return cmd
        ->add_option_function<std::string>(
            o.flag(), [&target, &d](const std::string& v) { target = static_cast<E>(d.parse(v)); },
            o.help())
        ->check(enum_validator(d));
}

}  // namespace upres::cli
