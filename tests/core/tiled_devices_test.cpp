// tiled::run_bands (core/tiled_devices.hpp): bands spread over several workers, each on its own
// thread, are written in order, each after its own compute and before its worker's next; band 0
// runs alone when asked; a failure in a worker or in a write stops every worker and reaches the
// caller. Workers here are host threads (the device index is only passed on), so this runs on
// any machine; the GPU runs are in upscale_tiled_test and stereo_tiled_test (*Cuda*).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include <upres/error.hpp>

#include "core/tiled_devices.hpp"

namespace upres {
namespace {

struct Log {
    std::mutex mu;
    std::vector<int> written;
    std::vector<int> computed_by;  // band -> worker
    std::atomic<int> running{0}, most{0};
    std::atomic<bool> band0_done{false};
    bool started_before_band0 = false;
};

class Fake : public tiled::BandWorker {
  public:
    Fake(int k, Log& log, int fail_at) : k_(k), log_(log), fail_at_(fail_at) {}
    void compute(int band) override {
        const int now = ++log_.running;
        int prev = log_.most.load();
        while (now > prev && !log_.most.compare_exchange_weak(prev, now)) {
        }
        if (band != 0 && !log_.band0_done) {
            const std::lock_guard<std::mutex> l(log_.mu);
            log_.started_before_band0 = true;
        }
        // Later bands of a worker take less time: out-of-order finishing is the usual case.
        std::this_thread::sleep_for(std::chrono::microseconds(200 * ((band * 7) % 5)));
        if (band == fail_at_) {
            --log_.running;
            throw Error(ErrorCode::InvalidArgument, "band " + std::to_string(band) + " failed");
        }
        value_ = band * 10;
        {
            const std::lock_guard<std::mutex> l(log_.mu);
            log_.computed_by[band] = k_;
        }
        if (band == 0) log_.band0_done = true;
        --log_.running;
    }
    void write(int band) override {
        EXPECT_EQ(value_, band * 10) << "band " << band << ": its worker moved on before it was "
                                     << "written";
        const std::lock_guard<std::mutex> l(log_.mu);
        log_.written.push_back(band);
        ++stats.bands;
        stats.rows_read += 3;
    }

  private:
    int k_;
    Log& log_;
    int fail_at_;
    int value_ = -1;
};

TiledStats run(int bands, int workers, Log& log, int fail_at = -1, bool first_alone = false) {
    log.computed_by.assign(bands, -1);
    const std::vector<int> devices(workers, -1);
    return tiled::run_bands(
        bands, devices, Context{},
        [&](int k, const Context&) -> std::unique_ptr<tiled::BandWorker> {
            return std::make_unique<Fake>(k, log, fail_at);
        },
        first_alone);
}

TEST(RunBands, InOrderOverSeveralWorkers) {
    for (const int workers : {1, 2, 3}) {
        Log log;
        const TiledStats st = run(23, workers, log);
        ASSERT_EQ(log.written.size(), 23u);
        for (int b = 0; b < 23; ++b) {
            EXPECT_EQ(log.written[b], b);
            EXPECT_EQ(log.computed_by[b], b % workers);
        }
        EXPECT_EQ(st.bands, 23);
        EXPECT_EQ(st.rows_read, 69);
        EXPECT_LE(log.most.load(), workers);
    }
    Log few;
    EXPECT_EQ(run(1, 3, few).bands, 1);  // fewer bands than workers
    Log none;
    EXPECT_EQ(run(0, 2, none).bands, 0);
}

TEST(RunBands, FirstBandAlone) {
    Log log;
    run(12, 3, log, -1, true);
    EXPECT_FALSE(log.started_before_band0);
    EXPECT_EQ(log.written.size(), 12u);
}

TEST(RunBands, AFailureStopsEveryWorker) {
    for (const int fail_at : {0, 5, 11}) {
        Log log;
        try {
            run(12, 3, log, fail_at);
            ADD_FAILURE() << "no error for band " << fail_at;
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find("band " + std::to_string(fail_at) + " failed"),
                      std::string::npos);
        }
        for (const int b : log.written) EXPECT_LT(b, fail_at);
    }
    // A write that throws (a full disk, a progress callback) reaches the caller too.
    struct Bad : tiled::BandWorker {
        void compute(int) override {}
        void write(int band) override {
            if (band == 4) throw std::runtime_error("disk full");
        }
    };
    EXPECT_THROW(tiled::run_bands(9, {-1, -1}, Context{},
                                  [](int, const Context&) -> std::unique_ptr<tiled::BandWorker> {
                                      return std::make_unique<Bad>();
                                  }),
                 std::runtime_error);
}

}  // namespace
}  // namespace upres
