// SEABI's option table (upres/options.hpp) and the SeabiMethod names.
#include <cstddef>

#include <upres/options.hpp>
#include <upres/seabi.hpp>

#include "core/operations.hpp"
#include "ops/seabi/seabi_option_rows.hpp"

namespace upres {

namespace {
constexpr EnumEntry kMethods[] = {
    {static_cast<int>(SeabiMethod::LSeai), "lseai", "edge-adaptive construction only"},
    {static_cast<int>(SeabiMethod::SilSeabi), "silseabi",
     "construction + one back-projection, always applied"},
    {static_cast<int>(SeabiMethod::LSeabi), "lseabi",
     "construction + back-projection until the error is small"},
};
constexpr EnumDesc kMethodDesc{"SEABI method", kMethods};
}  // namespace

template <>
const EnumDesc& enum_desc<SeabiMethod>() noexcept {
    return kMethodDesc;
}
const char* to_string(SeabiMethod m) noexcept { return enum_name(m); }
SeabiMethod parse_seabi_method(const std::string& name) { return parse_enum<SeabiMethod>(name); }

namespace ops {
namespace {
constexpr OptionDesc kSeabiOptions[] = {
    {"method", OptionKind::Enum, &enum_desc<SeabiMethod>, "silseabi", 0, 0, "SEABI variant",
     UPRES_OPTION_FIELD(SeabiOptions, method)},
    rebound(seabi_rows::kIterations, UPRES_OPTION_FIELD(SeabiOptions, max_iterations)),
    rebound(seabi_rows::kMaxError, UPRES_OPTION_FIELD(SeabiOptions, max_error)),
    {"lattice", OptionKind::Enum, &enum_desc<Lattice>, "centered", 0, 0,
     "where output pixels sit: centered (warp --zoom, imresize) or cosited (the paper)",
     UPRES_OPTION_FIELD(SeabiOptions, lattice)},
    {"stripes", OptionKind::Int, nullptr, "0", 0, 65536,
     "cpu backend: horizontal stripes P, 0 = one per thread (the result does not depend on P)",
     UPRES_OPTION_FIELD(SeabiOptions, stripes)},
};
}  // namespace
const OperationDesc kSeabiDesc{"seabi", "SEABI x2 super-resolution of an 8-bit luma plane",
                               kSeabiOptions};
}  // namespace ops

}  // namespace upres
