// The option tables of every operation (upres/options.hpp), each defined in its operation's
// folder (src/ops/<op>/<op>_options.cpp) and listed once by upres::operations().
#pragma once

#include <upres/options.hpp>

namespace upres::ops {

extern const OperationDesc kContextDesc;    // src/core/options.cpp
extern const OperationDesc kConvertDesc;    // src/core/options.cpp
extern const OperationDesc kCompareDesc;    // src/ops/metrics/metrics_options.cpp
extern const OperationDesc kPrefilterDesc;  // src/ops/bspline/bspline_options.cpp
extern const OperationDesc kWarpDesc;       // src/ops/warp/warp_options.cpp
extern const OperationDesc kSeabiDesc;      // src/ops/seabi/seabi_options.cpp
extern const OperationDesc kSrcnnDesc;      // src/ops/srcnn/srcnn_options.cpp
extern const OperationDesc kUpscaleDesc;    // src/pipelines/upscale/upscale_options.cpp
extern const OperationDesc kStereoDesc;     // src/ops/stereo/stereo_options.cpp
extern const OperationDesc kNlmsrDesc;      // src/ops/nlmsr/nlmsr_options.cpp
extern const OperationDesc kQualityDesc;    // src/ops/brisque/brisque_options.cpp

}  // namespace upres::ops
