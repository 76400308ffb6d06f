#include "options.hpp"

#include <cstddef>
#include <string>

#include <upres/error.hpp>

namespace upres::cli {

namespace {

const OptionDesc& declared(const OperationDesc& op, const char* name, OptionKind kind) {
    const OptionDesc& o = op.option(name);
    if (o.kind != kind)
        throw Error(ErrorCode::Internal, std::string("the CLI binds ") + op.name + "'s option " +
                                             name + " to a value of another kind");
    return o;
}

// The check of a field option's text: OptionDesc::set on a scratch copy of its field (numbers
// range-checked, enum names against the list), with the declaration's own message.
CLI::Validator field_validator(const OperationDesc& op, const OptionDesc& o) {
    return CLI::Validator(
        [&op, &o](std::string& v) -> std::string {
            try {
                alignas(std::max_align_t) unsigned char scratch[sizeof(std::string) + 64] = {};
                OptionDesc probe = o;
                probe.offset = 0;
                if (o.field == FieldType::String) return {};
                probe.set(scratch, op.name, v);
            } catch (const Error& e) {
                return e.what();
            }
            return {};
        },
        "", "");
}

}  // namespace

CLI::Validator enum_validator(const EnumDesc& d) {
    return CLI::Validator(
        [&d](std::string& v) -> std::string {
            try {
                d.parse(v);
            } catch (const Error& e) {
                return e.what();
            }
            return {};
        },
        "", "");
}

std::map<std::string, CLI::Option*> add_declared_fields(CLI::App* cmd, const OperationDesc& op,
                                                        void* options) {
    std::map<std::string, CLI::Option*> flags;
    for (const OptionDesc& o : op.options) {
        if (o.field == FieldType::None) continue;
        CLI::Option* f = nullptr;
        if (o.kind == OptionKind::Flag) {
            f = cmd->add_flag_callback(
                o.flag(), [&o, &op, options] { o.set(options, op.name, "true"); }, o.help());
        } else {
            f = cmd->add_option_function<std::string>(
                       o.flag(),
                       [&o, &op, options](const std::string& v) { o.set(options, op.name, v); },
                       o.help())
                    ->check(field_validator(op, o))
                    ->type_name(o.kind == OptionKind::Int    ? "INT"
                                : o.kind == OptionKind::Real ? "FLOAT"
                                                             : "TEXT");
        }
        flags[o.name] = f;
    }
    return flags;
}

CLI::Option* add_declared(CLI::App* cmd, const OperationDesc& op, const char* name,
                          std::string& target) {
    const OptionDesc& o = declared(op, name, OptionKind::Text);
    target = o.def;
    return cmd->add_option(o.flag(), target, o.help());
}

CLI::Option* add_declared(CLI::App* cmd, const OperationDesc& op, const char* name, bool& target) {
    const OptionDesc& o = declared(op, name, OptionKind::Flag);
    target = false;
    return cmd->add_flag(o.flag(), target, o.help());
}

}  // namespace upres::cli
