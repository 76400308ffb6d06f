// The quality command's option table (upres/options.hpp): BRISQUE's model folder.
#include <upres/brisque.hpp>
#include <upres/options.hpp>

#include "core/operations.hpp"

namespace upres::ops {
namespace {
constexpr OptionDesc kQualityOptions[] = {
    {"model-dir", OptionKind::Text, nullptr, "", 0, 0,
     "Folder of brisque_svm.txt and brisque_range.txt (default: the bundled models)",
     UPRES_OPTION_FIELD(BrisqueOptions, model_dir)},
};
}  // namespace
const OperationDesc kQualityDesc{"quality", "No-reference quality: BRISQUE (lower is better)",
                                 kQualityOptions};
}  // namespace upres::ops
