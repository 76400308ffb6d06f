// Whether two views share any byte of memory (their first-to-last element ranges intersect):
// operations refuse such arguments unless they allow the exact same view (in place).
#pragma once

#include <cstddef>
#include <cstdint>

#include <upres/image.hpp>

namespace upres {

template <class A, class B>
bool views_overlap(const ImageView<A>& a, const ImageView<B>& b) noexcept {
    auto range = [](const auto& v) {
        const auto* s = reinterpret_cast<const unsigned char*>(v.data());
        const auto* e = reinterpret_cast<const unsigned char*>(
            v.data() + std::ptrdiff_t{v.height() - 1} * v.stride() +
            std::ptrdiff_t{v.width()} * v.channels());
        return std::pair<std::uintptr_t, std::uintptr_t>(reinterpret_cast<std::uintptr_t>(s),
                                                         reinterpret_cast<std::uintptr_t>(e));
    };
    const auto [as, ae] = range(a);
    const auto [bs, be] = range(b);
    return as < be && bs < ae;
}

}  // namespace upres
