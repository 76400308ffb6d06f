// Span2D<T>: the small view type kernels and backends take, built from a public ImageView at
// the launch site. Trivially copyable, usable on host and device.
#pragma once

#include <cstddef>

#include <upres/image.hpp>
#include "core/hd.hpp"

namespace upres {

template <class T>
struct Span2D {
    T* data;
    int width;
    int height;
    int channels;
    std::ptrdiff_t stride;  // elements

    UPRES_HD T* row(int y) const { return data + static_cast<std::ptrdiff_t>(y) * stride; }
    UPRES_HD T& operator()(int x, int y, int c = 0) const {
        return data[static_cast<std::ptrdiff_t>(y) * stride +
                    static_cast<std::ptrdiff_t>(x) * channels + c];
    }
};

template <class T>
Span2D<T> span_of(const ImageView<T>& v) {
    return {v.data(), v.width(), v.height(), v.channels(), v.stride()};
}

}  // namespace upres
