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

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

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

// The type of the options-struct field an option is stored in (FieldType::None: the option is
// not a field of the struct; the command line binds it itself).
enum class FieldType : unsigned char { None, Int, Float, Double, Bool, String, Enum };

template <class T>
constexpr FieldType field_type() {
    if constexpr (std::is_enum_v<T>) {
        static_assert(sizeof(T) == sizeof(int), "option enums are int-sized");
        return FieldType::Enum;
    } else if constexpr (std::is_same_v<T, bool>) {
        return FieldType::Bool;
    } else if constexpr (std::is_same_v<T, int>) {
        return FieldType::Int;
    } else if constexpr (std::is_same_v<T, float>) {
        return FieldType::Float;
    } else if constexpr (std::is_same_v<T, double>) {
        return FieldType::Double;
    } else {
        static_assert(std::is_same_v<T, std::string>, "unsupported option field type");
        return FieldType::String;
    }
}

// The last two members of an OptionDesc stored in field `member` of options struct `Struct`:
//   {"interp", OptionKind::Enum, &enum_desc<Interp>, "bspline", 0, 0, "Interpolation",
//    UPRES_OPTION_FIELD(WarpOptions, interp)}
#define UPRES_OPTION_FIELD(Struct, member)                                                \
    ::upres::field_type<std::remove_cvref_t<decltype(std::declval<Struct&>().member)>>(), \
        offsetof(Struct, member)

// One option of an operation.
struct OptionDesc {
    const char* name;  // the options struct's field in words: "interp" is the command line's
                       // --interp and the Python keyword interp ("max-error" -> max_error)
    OptionKind kind;
    const EnumDesc& (*values)() noexcept;  // Enum only (&enum_desc<E>), else nullptr
    const char* def;  // the default as users would type it ("bspline", "4"); "" = none
    double min, max;  // Int and Real only; both infinite: any number, NaN included
    const char* doc;  // one line, without the allowed values (help adds them)
    FieldType field = FieldType::None;  // where it is stored in the operation's options struct
    std::size_t offset = 0;             // (UPRES_OPTION_FIELD)

    // "--interp"
    std::string flag() const;
    bool unbounded() const noexcept;
    // doc + " (allowed: ...)" for enums, " (min..max)" for numbers, + " [default: def]".
    std::string help() const;
    // Throws Error(InvalidArgument) "<op>: <name> <value> is outside [min, max]" (Int, Real;
    // non-finite values too).
    void check_range(std::string_view op, double value) const;

    // Sets this option's field of `options`, the operation's options struct, from the text users
    // type (an enum name, a number, "true" / "false", any text): the command line and the Python
    // module set every field option through this. Error(InvalidArgument) naming the option and
    // what is allowed; Error(Internal) for an option that is not a field.
    void set(void* options, std::string_view op, std::string_view text) const;
    // The field's value as text (enum names, numbers as "%g" / integers, "true" / "false").
    std::string get(const void* options) const;
};

// Option o stored in another options struct's field (UPRES_OPTION_FIELD of that struct), with its
// own one-line doc where doc is given: a pipeline exposes an operation's option (upscale's
// "iterations" is seabi's) with the same name, kind, values, default and range.
constexpr OptionDesc rebound(const OptionDesc& o, FieldType field, std::size_t offset,
                             const char* doc = nullptr) {
    OptionDesc r = o;
    r.field = field;
    r.offset = offset;
    if (doc) r.doc = doc;
    return r;
}

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
