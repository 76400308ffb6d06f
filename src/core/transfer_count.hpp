// How many images upres has copied between host and device memory (copy(), and the staging of
// host images by the Cuda backends, which goes through it). Tests use it to prove that a pipeline
// keeps its intermediates on the device. Internal header.
#pragma once

#include <cstdint>

namespace upres::detail {
std::uint64_t host_device_copies() noexcept;
}  // namespace upres::detail
