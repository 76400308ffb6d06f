// SRCNN's options that the upscale pipeline exposes too, declared once (upres/options.hpp):
// srcnn_options.cpp and src/pipelines/upscale/upscale_options.cpp bind them to their structs'
// fields with rebound() (upscale's docs say they apply to its srcnn method). Internal header.
#pragma once

#include <upres/options.hpp>
#include <upres/srcnn.hpp>

namespace upres::ops::srcnn_rows {

inline constexpr OptionDesc kModel{"model",
                                   OptionKind::Text,
                                   nullptr,
                                   "",
                                   0,
                                   0,
                                   "A .srcnn weights file instead of the bundled model for the "
                                   "scale"};
inline constexpr OptionDesc kPrecision{"precision",
                                       OptionKind::Enum,
                                       &enum_desc<SrcnnPrecision>,
                                       "fp32",
                                       0,
                                       0,
                                       "Arithmetic on the cuda backend (cpu and reference run "
                                       "fp32)"};
inline constexpr OptionDesc kVariant{"variant",
                                     OptionKind::Enum,
                                     &enum_desc<SrcnnVariant>,
                                     "auto",
                                     0,
                                     0,
                                     "CUDA kernels for every layer"};

}  // namespace upres::ops::srcnn_rows
