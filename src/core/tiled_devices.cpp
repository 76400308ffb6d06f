// The band runner of tiled_devices.hpp.
#include "core/tiled_devices.hpp"

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <mutex>
#include <string>
#include <thread>

#include <upres/error.hpp>

#include "core/device_scope.hpp"
#include "core/dispatch.hpp"

namespace upres::tiled {

std::vector<int> cuda_devices(const char* op, const TiledOptions& to, const Context& ctx) {
    require_cuda(op);
    std::vector<int> devices = to.devices;
    for (std::size_t i = 0; i < devices.size(); ++i) {
        check_device(devices[i], op, false);
        if (std::find(devices.begin(), devices.begin() + static_cast<std::ptrdiff_t>(i),
                      devices[i]) != devices.begin() + static_cast<std::ptrdiff_t>(i))
            throw Error(
                ErrorCode::InvalidArgument,
                std::string(op) + ": device " + std::to_string(devices[i]) + " is named twice");
    }
    if (devices.empty()) {
        check_device(ctx.device, op);
        devices.push_back(ctx.device);  // -1: the current device
    }
    return devices;
}

namespace {

void add(TiledStats& to, const TiledStats& s) {
    to.bands += s.bands;
    to.band_rows = std::max(to.band_rows, s.band_rows);
    to.rows_read += s.rows_read;
    to.pixels_read += s.pixels_read;
    to.buffer_bytes += s.buffer_bytes;
    to.device_bytes += s.device_bytes;
}

}  // namespace

TiledStats run_bands(int bands, const std::vector<int>& devices, const Context& ctx,
                     const std::function<std::unique_ptr<BandWorker>(int, const Context&)>& make,
                     bool first_alone) {
    const int n = static_cast<int>(devices.size());
    std::vector<std::unique_ptr<BandWorker>> workers;
    for (int k = 0; k < n; ++k) {
        Context c = ctx;
        c.device = devices[k];
        workers.push_back(make(k, c));
    }
    TiledStats st;
    if (n == 1) {
        for (int b = 0; b < bands; ++b) {
            workers[0]->compute(b);
            workers[0]->write(b);
        }
        add(st, workers[0]->stats);
        return st;
    }

    // done: the last band computed (its worker waits until it is written); written: the bands
    // written so far. A failure anywhere sets `failed` and wakes everyone.
    std::mutex mu;
    std::condition_variable cv;
    int written = 0;
    std::vector<int> done(n, -1);
    bool failed = false;
    std::exception_ptr error;
    const auto fail_with = [&](std::exception_ptr e) {
        const std::lock_guard<std::mutex> l(mu);
        if (!error) error = e;
        failed = true;
        cv.notify_all();
    };
    std::vector<std::thread> threads;
    for (int k = 0; k < n; ++k)
        threads.emplace_back([&, k] {
            try {
                for (int b = k; b < bands; b += n) {
                    {
                        // The previous band of this device is written: its buffers are free.
                        std::unique_lock<std::mutex> l(mu);
                        cv.wait(l, [&] {
                            return failed ||
                                   (written > b - n && (k == 0 || !first_alone || done[0] >= 0));
                        });
                        if (failed) return;
                    }
                    workers[k]->compute(b);
                    const std::lock_guard<std::mutex> l(mu);
                    done[k] = b;
                    cv.notify_all();
                }
            } catch (...) {
                fail_with(std::current_exception());
            }
        });
    try {
        for (int b = 0; b < bands; ++b) {
            {
                std::unique_lock<std::mutex> l(mu);
                cv.wait(l, [&] { return failed || done[b % n] == b; });
                if (failed) break;
            }
            workers[b % n]->write(b);
            const std::lock_guard<std::mutex> l(mu);
            written = b + 1;
            cv.notify_all();
        }
    } catch (...) {
        fail_with(std::current_exception());
    }
    for (std::thread& t : threads) t.join();
    if (error) std::rethrow_exception(error);
    for (const auto& w : workers) add(st, w->stats);
    return st;
}

}  // namespace upres::tiled
