// Comparisons of disparity maps for the stereo tests.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include <upres/image.hpp>

namespace upres::test {

// Equal bit for bit, NaN equal to NaN.
inline ::testing::AssertionResult same(const ImageView<const float>& a,
                                       const ImageView<const float>& b) {
    if (a.width() != b.width() || a.height() != b.height())
        return ::testing::AssertionFailure() << "sizes differ";
    for (int y = 0; y < a.height(); ++y)
        for (int x = 0; x < a.width(); ++x) {
            const float u = a.row(y)[x], v = b.row(y)[x];
            if (std::isnan(u) && std::isnan(v)) continue;
            if (std::memcmp(&u, &v, sizeof u) != 0)
                return ::testing::AssertionFailure()
                       << "at x " << x << ", y " << y << ": " << u << " vs " << v;
        }
    return ::testing::AssertionSuccess();
}

// Within tol, NaN where the other is NaN.
inline ::testing::AssertionResult near(const ImageView<const float>& a,
                                       const ImageView<const float>& b, double tol) {
    for (int y = 0; y < a.height(); ++y)
        for (int x = 0; x < a.width(); ++x) {
            const float u = a.row(y)[x], v = b.row(y)[x];
            if (std::isnan(u) != std::isnan(v))
                return ::testing::AssertionFailure()
                       << "validity differs at x " << x << ", y " << y << ": " << u << " vs " << v;
            if (!std::isnan(u) && std::abs(double(u) - double(v)) > tol)
                return ::testing::AssertionFailure()
                       << "at x " << x << ", y " << y << ": " << u << " vs " << v;
        }
    return ::testing::AssertionSuccess();
}

}  // namespace upres::test
