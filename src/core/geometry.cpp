#include <upres/error.hpp>
#include <upres/geometry.hpp>

namespace upres {

const char* to_string(Border b) noexcept {
    switch (b) {
        case Border::Mirror:
            return "mirror";
        case Border::Reflect:
            return "reflect";
        case Border::Nearest:
            return "nearest";
        case Border::Wrap:
            return "wrap";
        case Border::Constant:
            return "constant";
    }
    return "unknown";
}

Border parse_border(const std::string& name) {
    for (Border b :
         {Border::Mirror, Border::Reflect, Border::Nearest, Border::Wrap, Border::Constant})
        if (name == to_string(b)) return b;
    throw Error(
        ErrorCode::InvalidArgument,
        "unknown border '" + name + "' (allowed: mirror, reflect, nearest, wrap, constant)");
}

}  // namespace upres
