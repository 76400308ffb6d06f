// Bands of a tiled operation whose band is a whole-image call (srcnn tiles, stereo bands) spread
// over the GPUs of TiledOptions::devices: a thread per device computes its bands (device k of n
// takes bands k, k + n, ...) into that device's own buffers, and the caller's thread writes the
// bands to the sink in order as they are done. A device waits for its band to be written before
// computing its next (one set of buffers per device: the budget is shared among them). One
// device, or the cpu backend: the caller's thread computes and writes each band in turn.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include <upres/context.hpp>
#include <upres/tiled.hpp>

namespace upres::tiled {

// One device's share: its buffers and what it counted. compute() runs on the device's thread
// (several at once: the source is read under the runner's lock), write() on the caller's.
class BandWorker {
  public:
    virtual ~BandWorker() = default;
    virtual void compute(int band) = 0;
    virtual void write(int band) = 0;
    TiledStats stats;  // summed over the workers by run_bands (bands, reads, buffer bytes)
};

// The devices a cuda tiled call runs on: TiledOptions::devices, each checked to exist and be
// named once, or ctx.device (-1: the calling thread's current device). Error(InvalidArgument)
// naming `op` and the devices there are; Error(BackendUnavailable) without a CUDA device.
std::vector<int> cuda_devices(const char* op, const TiledOptions& to, const Context& ctx);

// Runs bands [0, bands) on the workers make(k, ctx_k) gives, k = 0 .. devices.size() - 1 (for
// the cpu backend: devices is {-1}, one worker on the caller's thread), ctx_k being ctx with
// device devices[k]. first_alone: the other devices start once band 0 is computed (what it
// learns, e.g. the kernels an autotuner chose, then serves them all). An exception from a worker or
// a write (the sink's, the progress callback's) stops every device and reaches the caller, the sink
// not committed. Returns the workers' stats summed (buffer_bytes: the sum of their peaks).
TiledStats run_bands(int bands, const std::vector<int>& devices, const Context& ctx,
                     const std::function<std::unique_ptr<BandWorker>(int, const Context&)>& make,
                     bool first_alone = false);

// run_bands with workers of one kind: each holds its Context (ctx with its device) and a State
// of the operation's (its buffers), and the operation's compute(band, worker) and
// write(band, worker) serve them all.
template <class State>
struct StateWorker final : BandWorker {
    std::function<void(int, StateWorker&)> compute_fn, write_fn;
    Context ctx;
    State state;
    void compute(int band) override { compute_fn(band, *this); }
    void write(int band) override { write_fn(band, *this); }
};

template <class State>
TiledStats run_state_bands(int bands, const std::vector<int>& devices, const Context& ctx,
                           const std::function<void(int, StateWorker<State>&)>& compute,
                           const std::function<void(int, StateWorker<State>&)>& write,
                           bool first_alone = false) {
    return run_bands(
        bands, devices, ctx,
        [&](int, const Context& dc) -> std::unique_ptr<BandWorker> {
            auto w = std::make_unique<StateWorker<State>>();
            w->compute_fn = compute;
            w->write_fn = write;
            w->ctx = dc;
            return w;
        },
        first_alone);
}

}  // namespace upres::tiled
