// compare's option table (upres/options.hpp): PSNR and SSIM (MetricOptions).
#include <cstddef>
#include <upres/metrics.hpp>

#include <upres/options.hpp>

#include "core/operations.hpp"

namespace upres::ops {

namespace {
constexpr OptionDesc kCompareOptions[] = {
    {"shave", OptionKind::Int, nullptr, "0", 0, 32767,
     "Pixels removed from every border before comparing", UPRES_OPTION_FIELD(MetricOptions, shave)},
    {"no-y", OptionKind::Flag, nullptr, "", 0, 0,
     "Colour images: use all channels instead of luma Y"},
    {"data-range", OptionKind::Real, nullptr, "0", 0, 1e30,
     "Peak value for PSNR / SSIM; 0 = from the pixel type (255, 65535, 1; 255 on Y)",
     UPRES_OPTION_FIELD(MetricOptions, data_range)},
};
}  // namespace

const OperationDesc kCompareDesc{"compare", "PSNR and SSIM of two images (on Y for colour)",
                                 kCompareOptions};

}  // namespace upres::ops
