// Context::device for the duration of one operation (internal): the calling thread's current
// CUDA device set to it, and put back afterwards. Every operation's entry holds one once the
// backend is resolved, so its kernels, pooled memory and device queries are the named device's.
#pragma once

#include <upres/context.hpp>

namespace upres {

class DeviceScope {
  public:
    // backend: the resolved one (only Cuda acts). Throws Error(InvalidArgument) naming `op` and
    // the devices there are when ctx.device does not exist.
    DeviceScope(const Context& ctx, Backend backend, const char* op);
    ~DeviceScope();
    DeviceScope(const DeviceScope&) = delete;
    DeviceScope& operator=(const DeviceScope&) = delete;

  private:
    int previous_ = -1;  // the device to restore; -1: nothing changed
};

// Checks that `device` is a device this machine has, or -1 where `current` allows the calling
// thread's current device (Error(InvalidArgument) naming the devices there are otherwise).
void check_device(int device, const char* op, bool current = true);

}  // namespace upres
