// Shared test helpers: seeded random images, GPU skip, tolerance comparison that reports the
// worst pixel, its location and how many pixels exceed the tolerance.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>

#include <upres/context.hpp>
#include <upres/error.hpp>
#include <upres/image.hpp>
#include <upres/io.hpp>
#include <upres/rows.hpp>

namespace upres::test {

// Skips the current test visibly when no CUDA device is usable.
#define UPRES_REQUIRE_GPU()                                                        \
    do {                                                                           \
        if (!::upres::cuda_available()) GTEST_SKIP() << "no CUDA device: skipped"; \
    } while (0)

// Golden files (tests/data) and real images (data/, filled by scripts/fetch_data.sh). The
// environment variables UPRES_TEST_DATA_DIR and UPRES_DATA_DIR override the build-time paths
// (used when a build is carried to another machine, e.g. by tools/gpu_check.sh).
inline std::string env_or(const char* var, const char* fallback) {
    const char* v = std::getenv(var);
    return (v && *v) ? v : fallback;
}
inline std::string data_path(const std::string& rel) {
    return env_or("UPRES_TEST_DATA_DIR", UPRES_TEST_DATA_DIR) + "/" + rel;
}
// Path of a real image in data/. Tests that need one fail (not skip) when it is missing: the
// test command fetches data first.
inline std::string sample_path(const std::string& rel) {
    return env_or("UPRES_DATA_DIR", UPRES_DATA_DIR) + "/" + rel;
}

// A context on backend b with `threads` CPU threads (0: all).
inline Context ctx_of(Backend b, int threads = 0) {
    Context c;
    c.backend = b;
    c.threads = threads;
    return c;
}

// A golden file of tests/data (NPY, PNG, ...) read with upres's own reader, as pixel type T
// (Error(InvalidArgument) if the file holds another type).
template <class T>
Image<T> load_golden(const std::string& rel) {
    return std::move(read_image(data_path(rel)).as<T>());
}

// Random image with values in [lo, hi] (never all zero), fixed seed.
template <class T>
Image<T> random_image(int w, int h, int c, std::uint32_t seed, double lo = 0.0,
                      double hi = PixelTraits<T>::max_value) {
    Image<T> img(w, h, c);
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> dist(lo, hi);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w * c; ++x) {
            double v = dist(rng);
            if constexpr (std::is_integral_v<T>)
                img.view().row(y)[x] = static_cast<T>(std::lround(v));
            else
                img.view().row(y)[x] = static_cast<T>(v);
        }
    return img;
}

// Runs f and expects an upres::Error with `code` whose message contains `text` (error messages
// must name what is wrong).
template <class F>
void expect_error(F&& f, ErrorCode code, const std::string& text) {
    try {
        f();
        ADD_FAILURE() << "no upres::Error thrown (expected one mentioning '" << text << "')";
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), code) << e.what();
        EXPECT_NE(std::string(e.what()).find(text), std::string::npos)
            << "message '" << e.what() << "' does not mention '" << text << "'";
    }
}

struct CompareResult {
    double max_abs = 0.0;
    int worst_x = -1, worst_y = -1, worst_c = -1;
    double worst_a = 0.0, worst_b = 0.0;
    std::int64_t over = 0;
    std::int64_t nonfinite = 0;
};

// Compares two host views element-wise: |a - b| <= atol + rtol * |b|.
template <class A, class B>
::testing::AssertionResult images_near(const ImageView<A>& a, const ImageView<B>& b, double atol,
                                       double rtol = 0.0) {
    if (a.width() != b.width() || a.height() != b.height() || a.channels() != b.channels())
        return ::testing::AssertionFailure()
               << "shape " << a.width() << "x" << a.height() << "x" << a.channels() << " vs "
               << b.width() << "x" << b.height() << "x" << b.channels();
    CompareResult r;
    for (int y = 0; y < a.height(); ++y)
        for (int x = 0; x < a.width(); ++x)
            for (int c = 0; c < a.channels(); ++c) {
                const double va = static_cast<double>(a(x, y, c));
                const double vb = static_cast<double>(b(x, y, c));
                if (!std::isfinite(va) || !std::isfinite(vb)) {
                    if (!(std::isnan(va) && std::isnan(vb)) && va != vb) ++r.nonfinite;
                    continue;
                }
                const double d = std::abs(va - vb);
                if (d > atol + rtol * std::abs(vb)) ++r.over;
                if (d > r.max_abs) {
                    r.max_abs = d;
                    r.worst_x = x, r.worst_y = y, r.worst_c = c, r.worst_a = va, r.worst_b = vb;
                }
            }
    if (r.over == 0 && r.nonfinite == 0)
        return ::testing::AssertionSuccess() << "max |diff| " << r.max_abs;
    return ::testing::AssertionFailure()
           << r.over << " of " << a.pixel_count() * a.channels() << " values exceed atol " << atol
           << " + rtol " << rtol << " (" << r.nonfinite << " non-finite mismatches); worst |diff| "
           << r.max_abs << " at (x " << r.worst_x << ", y " << r.worst_y << ", c " << r.worst_c
           << "): " << r.worst_a << " vs " << r.worst_b;
}

// Byte-for-byte equality of two host images of the same shape, naming the first difference.
template <class T>
::testing::AssertionResult same_bytes(const Image<T>& a, const Image<T>& b) {
    const std::size_t n = static_cast<std::size_t>(a.width()) * a.channels();
    for (int y = 0; y < a.height(); ++y)
        if (std::memcmp(a.view().row(y), b.view().row(y), sizeof(T) * n) != 0) {
            std::size_t x = 0;
            while (std::memcmp(&a.view().row(y)[x], &b.view().row(y)[x], sizeof(T)) == 0) ++x;
            return ::testing::AssertionFailure()
                   << "first difference at row " << y << ", element " << x << ": "
                   << +a.view().row(y)[x] << " vs " << +b.view().row(y)[x];
        }
    return ::testing::AssertionSuccess();
}

// A tall u8 image for the tiled tests: w x h pixels of the sample photo `name`, stacked on itself
// with 3 rows of offset per copy (no two copies alike, real content across every seam).
inline Image<std::uint8_t> tall_photo(const std::string& name, int w, int h) {
    const Image<std::uint8_t> photo = std::move(read_image(sample_path(name)).as<std::uint8_t>());
    const int c = photo.channels();
    Image<std::uint8_t> in(w, h, c);
    for (int y = 0; y < h; ++y)
        std::memcpy(in.view().row(y),
                    photo.view().row((3 * (y / photo.height()) + y) % photo.height()),
                    static_cast<std::size_t>(w) * c);
    return in;
}

// A host image as a RowSource / RowSink that does not lend its memory (rows_in_memory: nullptr),
// as a file does: the tiled operations then run on their band buffers. The tests run both paths.
class CopyingRowSource final : public RowSource {
  public:
    explicit CopyingRowSource(const detail::RawView& v) : v_(v) {}
    PixelType type() const override { return v_.type(); }
    int width() const override { return v_.width(); }
    int height() const override { return v_.height(); }
    int channels() const override { return v_.channels(); }
    void read_rows(int y0, int rows, void* dst, std::ptrdiff_t stride) override {
        v_.read_rows(y0, rows, dst, stride);
    }

  private:
    ViewRowSource v_;
};

class CopyingRowSink final : public RowSink {
  public:
    explicit CopyingRowSink(const detail::RawView& v) : v_(v) {}
    void write_rows(int y0, int rows, const void* src, std::ptrdiff_t stride) override {
        v_.write_rows(y0, rows, src, stride);
    }
    void commit() override {}

  private:
    ViewRowSink v_;
};

// An image's rows as a source and another's as a sink, lending their memory (in place) or not.
struct RowEnds {
    RowEnds(const detail::RawView& in, const detail::RawView& out, bool lend)
        : vsrc(in), vdst(out), csrc(in), cdst(out), in_place(lend) {}
    RowSource& src() { return in_place ? static_cast<RowSource&>(vsrc) : csrc; }
    RowSink& dst() { return in_place ? static_cast<RowSink&>(vdst) : cdst; }
    ViewRowSource vsrc;
    ViewRowSink vdst;
    CopyingRowSource csrc;
    CopyingRowSink cdst;
    bool in_place;
};

}  // namespace upres::test
