// Command-line flags made from the operations' option declarations (upres/options.hpp): the
// flag's name, its help (doc, allowed values or range, default), and the check of its value all
// come from the declaration, so a flag cannot drift from the library. A value outside the
// declared set or range is a usage error (exit 1) naming what is allowed.
#pragma once

#include <CLI/CLI.hpp>

#include <map>
#include <string>

#include <upres/options.hpp>

namespace upres::cli {

// A flag for every option of `op` stored in a field of `options` (its options struct:
// WarpOptions for "warp", ...), which it sets through OptionDesc::set. Adding such an option to
// an operation is its field and its declaration: every command of the operation then takes it.
// Returns the flags by option name (for the options that apply to one method only).
std::map<std::string, CLI::Option*> add_declared_fields(CLI::App* cmd, const OperationDesc& op,
                                                        void* options);

// --<name> for an option of `op` that is not a field of its options struct, bound to target,
// which receives the declared default first: Text options to a std::string, Flag options to a
// bool, Enum options to the enum type E.
CLI::Option* add_declared(CLI::App* cmd, const OperationDesc& op, const char* name,
                          std::string& target);
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
