#include "options.hpp"

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

// Range check of Int / Real options through the declaration's own message.
CLI::Validator range_validator(const OperationDesc& op, const OptionDesc& o) {
    return CLI::Validator(
        [&op, &o](std::string& v) -> std::string {
            try {
                std::size_t used = 0;
                const double x = std::stod(v, &used);
                if (used != v.size()) return "'" + v + "' is not a number";
                o.check_range(op.name, x);
            } catch (const Error& e) {
                return e.what();
            } catch (const std::exception&) {
                return "'" + v + "' is not a number";
            }
            return {};
        },
        "", "");
}

template <class T>
CLI::Option* add_number(CLI::App* cmd, const OperationDesc& op, const char* name, T& target,
                        OptionKind kind) {
    const OptionDesc& o = declared(op, name, kind);
    if (o.def[0] != '\0') target = static_cast<T>(std::stod(o.def));
    return cmd->add_option(o.flag(), target, o.help())->check(range_validator(op, o));
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

CLI::Option* add_declared(CLI::App* cmd, const OperationDesc& op, const char* name,
                          std::string& target) {
    const OptionDesc& o = declared(op, name, OptionKind::Text);
    target = o.def;
    return cmd->add_option(o.flag(), target, o.help());
}

CLI::Option* add_declared(CLI::App* cmd, const OperationDesc& op, const char* name, int& target) {
    return add_number(cmd, op, name, target, OptionKind::Int);
}
CLI::Option* add_declared(CLI::App* cmd, const OperationDesc& op, const char* name,
                          double& target) {
    return add_number(cmd, op, name, target, OptionKind::Real);
}
CLI::Option* add_declared(CLI::App* cmd, const OperationDesc& op, const char* name, float& target) {
    return add_number(cmd, op, name, target, OptionKind::Real);
}

CLI::Option* add_declared(CLI::App* cmd, const OperationDesc& op, const char* name, bool& target) {
    const OptionDesc& o = declared(op, name, OptionKind::Flag);
    target = false;
    return cmd->add_flag(o.flag(), target, o.help());
}

}  // namespace upres::cli
