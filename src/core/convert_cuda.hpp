// CUDA backend of upres::convert (src/core/convert.cu).
#pragma once

#include <upres/image.hpp>

namespace upres::cuda {

void convert_raw(const detail::RawView& src, const detail::RawView& dst, bool normalize,
                 void* stream);

}  // namespace upres::cuda
