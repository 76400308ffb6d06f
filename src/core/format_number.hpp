// Numbers and shapes for error messages.
//
// A number for an error message: printf's %g (6 significant digits, exponent form for very large
// or small magnitudes), so 1e300 is not 301 digits and 1e-9 not "0.000000" as with
// std::to_string.
#pragma once

#include <cstdio>
#include <string>

namespace upres {

inline std::string format_number(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

// An image shape for an error message: "W x H x C".
inline std::string shape_text(int w, int h, int c) {
    return std::to_string(w) + " x " + std::to_string(h) + " x " + std::to_string(c);
}

}  // namespace upres
