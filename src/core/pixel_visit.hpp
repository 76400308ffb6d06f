// Runtime pixel type -> compile-time type: calls f(T{}) with T the C++ type of `t`.
#pragma once

#include <cstdint>

#include <upres/error.hpp>
#include <upres/image.hpp>

namespace upres {

template <class F>
decltype(auto) visit_pixel_type(PixelType t, F&& f) {
    switch (t) {
        case PixelType::U8:
            return f(std::uint8_t{});
        case PixelType::U16:
            return f(std::uint16_t{});
        case PixelType::F32:
            return f(float{});
    }
    throw Error(ErrorCode::Internal, "unknown pixel type");
}

}  // namespace upres
