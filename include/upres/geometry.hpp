// Borders and geometric transforms shared by the resampling operations.
//
// Coordinates: pixel centres at integer coordinates (as scipy.ndimage); x to the right (column),
// y down (row). Scaling by s maps an output centre x to input (x + 0.5) / s - 0.5.
//
// Borders, named as scipy.ndimage names them (for an input d0 d1 ... d(n-1)):
//   Mirror   (default; the B-spline default) whole-sample symmetric: ... d2 d1 | d0 d1 ... d(n-1) |
//   d(n-2) ... Reflect  half-sample symmetric:  ... d1 d0 | d0 d1 ... d(n-1) | d(n-1) d(n-2) ...
//   Nearest  edge replication:        ... d0 d0 | d0 d1 ... d(n-1) | d(n-1) ...
//   Wrap     periodic:                ... d(n-2) d(n-1) | d0 d1 ... | d0 d1 ...  (scipy
//   'grid-wrap') Constant fill value outside (scipy 'constant' / 'grid-constant', see
//   docs/conventions.md)
#pragma once

#include <array>
#include <string>

#include <upres/options.hpp>

namespace upres {

enum class Border { Mirror, Reflect, Nearest, Wrap, Constant };

const char* to_string(Border b) noexcept;
// Parses "mirror", "reflect", "nearest", "wrap", "constant"; throws Error(InvalidArgument)
// listing the allowed names otherwise.
Border parse_border(const std::string& name);
template <>
const EnumDesc& enum_desc<Border>() noexcept;

}  // namespace upres
