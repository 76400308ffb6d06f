// SEABI's options that the upscale pipeline exposes too, declared once (upres/options.hpp):
// seabi_options.cpp and src/pipelines/upscale/upscale_options.cpp bind them to their structs'
// fields with rebound(). Internal header.
#pragma once

#include <upres/options.hpp>

namespace upres::ops::seabi_rows {

inline constexpr OptionDesc kIterations{"iterations",
                                        OptionKind::Int,
                                        nullptr,
                                        "4",
                                        1,
                                        1000,
                                        "lseabi: at most this many back-projections"};
inline constexpr OptionDesc kMaxError{
    "max-error",
    OptionKind::Real,
    nullptr,
    "0.25",
    0,
    255,
    "lseabi: stop when the mean absolute LR error is below this (grey levels)"};

}  // namespace upres::ops::seabi_rows
