// The option machinery of upres/options.hpp, the registry of operations, and the tables of the
// core's own enums (Backend, Border, PixelType) and options (the execution context, convert).
#include <cstddef>

#include <upres/options.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include <upres/context.hpp>
#include <upres/error.hpp>
#include <upres/geometry.hpp>
#include <upres/image.hpp>

#include "core/format_number.hpp"
#include "core/operations.hpp"

namespace upres {

// ------------------------------------------------------------------------------- EnumDesc

const char* EnumDesc::name_of(int value) const noexcept {
    for (const EnumEntry& e : entries)
        if (e.value == value) return e.name;
    return "unknown";
}

bool EnumDesc::contains(int value) const noexcept {
    for (const EnumEntry& e : entries)
        if (e.value == value) return true;
    return false;
}

int EnumDesc::parse(std::string_view name) const {
    for (const EnumEntry& e : entries)
        if (name == e.name) return e.value;
    throw Error(ErrorCode::InvalidArgument, std::string("unknown ") + what + " '" +
                                                std::string(name) + "' (allowed: " + allowed() +
                                                ")");
}

std::string EnumDesc::allowed() const {
    std::string s;
    for (const EnumEntry& e : entries) {
        if (!s.empty()) s += ", ";
        s += e.name;
    }
    return s;
}

// ----------------------------------------------------------------------------- OptionDesc

std::string OptionDesc::flag() const { return std::string("--") + name; }

bool OptionDesc::unbounded() const noexcept { return std::isinf(min) && std::isinf(max); }

namespace {

std::string range_text(const OptionDesc& o) {
    return o.kind == OptionKind::Int ? std::to_string(static_cast<long long>(o.min)) + ".." +
                                           std::to_string(static_cast<long long>(o.max))
                                     : format_number(o.min) + ".." + format_number(o.max);
}

}  // namespace

std::string OptionDesc::help() const {
    std::string h = doc;
    if (kind == OptionKind::Enum && values) h += " (allowed: " + values().allowed() + ")";
    if ((kind == OptionKind::Int || kind == OptionKind::Real) && !unbounded())
        h += " (" + range_text(*this) + ")";
    if (def[0] != '\0' && kind != OptionKind::Flag) h += std::string(" [default: ") + def + "]";
    return h;
}

void OptionDesc::check_range(std::string_view op, double value) const {
    if ((kind != OptionKind::Int && kind != OptionKind::Real) || unbounded()) return;
    if (!std::isfinite(value) || value < min || value > max)
        throw Error(ErrorCode::InvalidArgument,
                    std::string(op) + ": " + name + " " + format_number(value) + " is outside [" +
                        format_number(min) + ", " + format_number(max) + "]");
}

namespace {

[[noreturn]] void bad_value(std::string_view op, const OptionDesc& o, std::string_view text,
                            const std::string& allowed) {
    throw Error(ErrorCode::InvalidArgument,
                std::string(op) + ": " + o.name + " '" + std::string(text) + "' is not " + allowed);
}

// A whole-text number (strtod / strtoll accept a prefix; from_chars has no float form in GCC
// 12's library for every type we need here).
bool parse_number(std::string_view text, double& out) {
    const std::string t(text);
    if (t.empty()) return false;
    char* end = nullptr;
    out = std::strtod(t.c_str(), &end);
    return end == t.c_str() + t.size();
}

}  // namespace

void OptionDesc::set(void* options, std::string_view op, std::string_view text) const {
    if (field == FieldType::None || options == nullptr)
        throw Error(ErrorCode::Internal,
                    std::string(op) + ": option " + name + " is not a field of its options");
    auto* p = static_cast<unsigned char*>(options) + offset;
    double v = 0;
    switch (field) {
        case FieldType::Enum: {
            const int e = values().parse(text);
            std::memcpy(p, &e, sizeof e);
            return;
        }
        case FieldType::Bool: {
            bool b = false;
            if (text == "true" || text == "1")
                b = true;
            else if (text != "false" && text != "0")
                bad_value(op, *this, text, "true or false");
            std::memcpy(p, &b, sizeof b);
            return;
        }
        case FieldType::String: {
            *reinterpret_cast<std::string*>(p) = std::string(text);
            return;
        }
        case FieldType::Int: {
            if (!parse_number(text, v) || v != std::floor(v))
                bad_value(op, *this, text, "an integer");
            check_range(op, v);
            const int i = static_cast<int>(v);
            std::memcpy(p, &i, sizeof i);
            return;
        }
        case FieldType::Float:
        case FieldType::Double: {
            if (!parse_number(text, v)) bad_value(op, *this, text, "a number");
            check_range(op, v);
            if (field == FieldType::Float) {
                const float f = static_cast<float>(v);
                std::memcpy(p, &f, sizeof f);
            } else {
                std::memcpy(p, &v, sizeof v);
            }
            return;
        }
        case FieldType::None:
            break;
    }
}

std::string OptionDesc::get(const void* options) const {
    const auto* p = static_cast<const unsigned char*>(options) + offset;
    switch (field) {
        case FieldType::Enum: {
            int e = 0;
            std::memcpy(&e, p, sizeof e);
            return values().name_of(e);
        }
        case FieldType::Bool: {
            bool b = false;
            std::memcpy(&b, p, sizeof b);
            return b ? "true" : "false";
        }
        case FieldType::String:
            return *reinterpret_cast<const std::string*>(p);
        case FieldType::Int: {
            int i = 0;
            std::memcpy(&i, p, sizeof i);
            return std::to_string(i);
        }
        case FieldType::Float: {
            float f = 0;
            std::memcpy(&f, p, sizeof f);
            return format_number(f);
        }
        case FieldType::Double: {
            double d = 0;
            std::memcpy(&d, p, sizeof d);
            return format_number(d);
        }
        case FieldType::None:
            break;
    }
    throw Error(ErrorCode::Internal, std::string("option ") + name + " is not a field");
}

const OptionDesc& OperationDesc::option(std::string_view n) const {
    for (const OptionDesc& o : options)
        if (n == o.name) return o;
    throw Error(ErrorCode::Internal,
                std::string("operation ") + name + " declares no option '" + std::string(n) + "'");
}

// ------------------------------------------------------------------------------- registry

std::span<const OperationDesc* const> operations() noexcept {
    // One line per operation; its table lives in the operation's folder.
    static const OperationDesc* const kAll[] = {
        &ops::kContextDesc, &ops::kConvertDesc, &ops::kCompareDesc, &ops::kPrefilterDesc,
        &ops::kWarpDesc,    &ops::kSeabiDesc,   &ops::kSrcnnDesc,   &ops::kUpscaleDesc,
        &ops::kStereoDesc,  &ops::kNlmsrDesc,   &ops::kQualityDesc,
    };
    return kAll;
}

const OperationDesc& operation(std::string_view name) {
    std::string names;
    for (const OperationDesc* op : operations()) {
        if (name == op->name) return *op;
        if (!names.empty()) names += ", ";
        names += op->name;
    }
    throw Error(ErrorCode::InvalidArgument,
                "unknown operation '" + std::string(name) + "' (allowed: " + names + ")");
}

// --------------------------------------------------------------------- the core's tables

namespace {

constexpr EnumEntry kBackends[] = {
    {static_cast<int>(Backend::Auto), "auto", "where the data lives: host -> cpu, device -> cuda"},
    {static_cast<int>(Backend::Reference), "reference",
     "double-precision reference, slow on purpose"},
    {static_cast<int>(Backend::Cpu), "cpu", "optimized CPU backend (OpenMP, SIMD)"},
    {static_cast<int>(Backend::Cuda), "cuda", "CUDA backend (host data is staged through it)"},
};
constexpr EnumEntry kBorders[] = {
    {static_cast<int>(Border::Mirror), "mirror", "whole-sample symmetric (scipy 'mirror')"},
    {static_cast<int>(Border::Reflect), "reflect", "half-sample symmetric (scipy 'reflect')"},
    {static_cast<int>(Border::Nearest), "nearest", "edge replication (scipy 'nearest')"},
    {static_cast<int>(Border::Wrap), "wrap", "periodic (scipy 'grid-wrap')"},
    {static_cast<int>(Border::Constant), "constant", "the fill value outside (scipy 'constant')"},
};
constexpr EnumEntry kPixelTypes[] = {
    {static_cast<int>(PixelType::U8), "u8", "8-bit unsigned, 0..255"},
    {static_cast<int>(PixelType::U16), "u16", "16-bit unsigned, 0..65535"},
    {static_cast<int>(PixelType::F32), "f32", "32-bit float, nominally 0..1"},
};
constexpr EnumDesc kBackendDesc{"backend", kBackends};
constexpr EnumDesc kBorderDesc{"border", kBorders};
constexpr EnumDesc kPixelTypeDesc{"depth", kPixelTypes};

}  // namespace

template <>
const EnumDesc& enum_desc<Backend>() noexcept {
    return kBackendDesc;
}
template <>
const EnumDesc& enum_desc<Border>() noexcept {
    return kBorderDesc;
}
template <>
const EnumDesc& enum_desc<PixelType>() noexcept {
    return kPixelTypeDesc;
}

const char* to_string(Backend b) noexcept { return enum_name(b); }
Backend parse_backend(const std::string& name) { return parse_enum<Backend>(name); }
const char* to_string(Border b) noexcept { return enum_name(b); }
Border parse_border(const std::string& name) { return parse_enum<Border>(name); }
const char* to_string(PixelType t) noexcept { return enum_name(t); }

namespace ops {

namespace {
constexpr OptionDesc kContextOptions[] = {
    {"backend", OptionKind::Enum, &enum_desc<Backend>, "auto", 0, 0, "Backend",
     UPRES_OPTION_FIELD(Context, backend)},
    {"threads", OptionKind::Int, nullptr, "0", 0, 4096, "CPU threads, 0 = all cores",
     UPRES_OPTION_FIELD(Context, threads)},
};
constexpr OptionDesc kConvertOptions[] = {
    {"depth", OptionKind::Enum, &enum_desc<PixelType>, "", 0, 0,
     "Output pixel depth, ranges normalized (u8 0..255, u16 0..65535, f32 0..1); default: the "
     "input's depth, or the one depth the output format stores"},
};
}  // namespace

const OperationDesc kContextDesc{"context", "Where and how an operation runs (every command)",
                                 kContextOptions};
const OperationDesc kConvertDesc{"convert", "Convert an image between file formats and depths",
                                 kConvertOptions};

}  // namespace ops

}  // namespace upres
