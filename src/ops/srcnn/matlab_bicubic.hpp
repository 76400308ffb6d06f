// MATLAB imresize's bicubic as a warp (internal): the interpolation of SRCNN's pipeline and of
// NLM-SR's frames and back-projection, on host or device views.
#pragma once

#include <upres/context.hpp>
#include <upres/image.hpp>
#include <upres/warp.hpp>

namespace upres {

// MATLAB-style bicubic resize of src into dst (dst's size sets the factor): centre-aligned
// (u = (x + 0.5) * n / m - 0.5), Keys a = -0.5, Border::Reflect, antialias when shrinking.
template <class T>
void matlab_bicubic(ImageView<const T> src, ImageView<T> dst, const Context& ctx) {
    WarpOptions wo;
    wo.interp = Interp::Cubic;
    wo.cubic_a = -0.5;
    wo.border = Border::Reflect;
    wo.antialias = dst.width() < src.width() || dst.height() < src.height();
    warp(src, dst, Transform::make_resize(), wo, ctx);
}

}  // namespace upres
