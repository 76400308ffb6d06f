// Border index mapping, written once for host and device. Maps an integer sample index i (any
// value) into [0, n) for the named border, or returns -1 for Border::Constant outside.
#pragma once

#include <upres/geometry.hpp>
#include "core/hd.hpp"

namespace upres {

// True for the five named borders (validation of values that crossed the API as integers).
inline bool is_known_border(Border b) {
    switch (b) {
        case Border::Mirror:
        case Border::Reflect:
        case Border::Nearest:
        case Border::Wrap:
        case Border::Constant:
            return true;
    }
    return false;
}

UPRES_HD int border_index(int i, int n, Border b) {
    if (i >= 0 && i < n) return i;
    switch (b) {
        case Border::Nearest:
            return i < 0 ? 0 : n - 1;
        case Border::Mirror: {  // period 2n - 2
            if (n == 1) return 0;
            const int p = 2 * n - 2;
            int m = i % p;
            if (m < 0) m += p;
            return m < n ? m : p - m;
        }
        case Border::Reflect: {  // period 2n
            const int p = 2 * n;
            int m = i % p;
            if (m < 0) m += p;
            return m < n ? m : p - 1 - m;
        }
        case Border::Wrap: {
            int m = i % n;
            return m < 0 ? m + n : m;
        }
        case Border::Constant:
            return -1;
    }
    return -1;
}

}  // namespace upres
