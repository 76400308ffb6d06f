// Backend resolution: one rule for every operation (architecture rule 5).
//
//   Auto      -> Cuda if the data lives on the device, Cpu otherwise.
//   Reference, Cpu -> need host data; device data is an InvalidArgument error.
//   Cuda      -> needs a CUDA build and a device (BackendUnavailable otherwise). Host data is
//               allowed: the operation stages it through device memory and back.
// Nothing ever falls back silently to another backend.
#pragma once

#include <upres/context.hpp>
#include <upres/image.hpp>

namespace upres {

Backend resolve_backend(const Context& ctx, Location data_location, const char* op);

// Throws Error(BackendUnavailable) naming op if CUDA is not built in or no device exists.
void require_cuda(const char* op);

}  // namespace upres
