// Option declarations: every operation declares its options once (name, type, allowed values
// with their names, default, one-line doc). The enum parsers and printers (to_string,
// parse_border, ...), the "(allowed: ...)" error messages, the command line's flags and help,
// and the Python module's keywords all come from these tables, so they can never disagree.
//
//   const upres::OperationDesc& w = upres::operation("warp");
//   for (const upres::OptionDesc& o : w.options) ...          // name, kind, values, default, doc
//   upres::Border b = upres::parse_enum<upres::Border>("wrap");
//   const char* n = upres::enum_name(upres::Interp::Cubic);     // "cubic"
//
// Adding an option is one line in its operation's table (src/ops/<op>/<op>_options.cpp);
// adding an enumerated type is one EnumEntry array and one enum_desc specialisation there.
// docs/adding_an_op.md shows both.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace upres {

// One named value of an enumerated option.
struct EnumEntry {
    int value;         // the enum's value, static_cast<int>
    const char* name;  // what users type: "bspline", "shared-kernel"
    const char* doc;   // one line
};

// The named values of one enum type, in the order they are listed to users.
struct EnumDesc {
    const char* what;  // the noun in messages: "unknown <what> 'x' (allowed: ...)"
    std::span<const EnumEntry> entries;

    // The name of `value`, or "unknown" if it is none of the entries.
    const char* name_of(int value) const noexcept;
    // The value named `name`; throws Error(InvalidArgument)
    // "unknown <what> '<name>' (allowed: a, b, c)".
    int parse(std::string_view name) const;
    // "a, b, c": the names in order.
    std::string allowed() const;
    bool contains(int value) const noexcept;
};

// The table of enum type E. Specialised (declared in E's public header, defined in the library)
// for every public enum that users choose by name.
template <class E>
const EnumDesc& enum_desc() noexcept;

template <class E>
E parse_enum(std::string_view name) {
    return static_cast<E>(enum_desc<E>().parse(name));
}
template <class E>
const char* enum_name(E value) noexcept {
    return enum_desc<E>().name_of(static_cast<int>(value));
}

enum class OptionKind {
    Enum,  // one of `values`
    Int,   // an integer in [min, max]
    Real,  // a finite number in [min, max]
    Flag,  // on / off (the command line's --name; false by default)
    Text,  // free text (a path, or a small grammar stated in doc)
};

// One option of an operation.
struct OptionDesc {
    const char* name;  // the options struct's field in words: "interp" is the command line's
                       // --interp and the Python keyword interp ("max-error" -> max_error)
    OptionKind kind;
    const EnumDesc& (*values)() noexcept;  // Enum only (&enum_desc<E>), else nullptr
    const char* def;  // the default as users would type it ("bspline", "4"); "" = none
    double min, max;  // Int and Real only; both infinite: any number, NaN included
    const char* doc;  // one line, without the allowed values (help adds them)

    // "--interp"
    std::string flag() const;
    bool unbounded() const noexcept;
    // doc + " (allowed: ...)" for enums, " (min..max)" for numbers, + " [default: def]".
    std::string help() const;
    // Throws Error(InvalidArgument) "<op>: <name> <value> is outside [min, max]" (Int, Real;
    // non-finite values too).
    void check_range(std::string_view op, double value) const;
};

// One operation: its name (the CLI's subcommand, the Python function) and its options.
struct OperationDesc {
    const char* name;
    const char* doc;
    std::span<const OptionDesc> options;

    // The option called `name`; throws Error(Internal) if there is none (a programming error).
    const OptionDesc& option(std::string_view name) const;
};

// Every operation that declares options, in a fixed order.
std::span<const OperationDesc* const> operations() noexcept;
// The operation called `name`; Error(InvalidArgument) listing the operations otherwise.
const OperationDesc& operation(std::string_view name);

}  // namespace upres
