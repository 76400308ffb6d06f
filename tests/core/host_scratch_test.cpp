// HostScratch (core/host_scratch.hpp): one cached block reused between calls, a second block
// while the cached one is in use, and host_release_cached_memory().
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include <upres/context.hpp>

#include "core/host_scratch.hpp"

namespace upres {
namespace {

TEST(HostScratch, ReusesOneBlockAndReleasesIt) {
    host_release_cached_memory();
    std::uint8_t* first = nullptr;
    {
        const HostScratch a(1 << 20, "test");
        first = a.as<std::uint8_t>();
        ASSERT_NE(first, nullptr);
        EXPECT_EQ(reinterpret_cast<std::uintptr_t>(first) % 64, 0u);
        std::memset(first, 7, 1 << 20);  // the whole block is usable
        // In use: a second scratch gets its own block.
        const HostScratch b(1 << 10, "test");
        EXPECT_NE(b.as<std::uint8_t>(), first);
    }
    {
        const HostScratch a(1 << 19, "test");  // smaller: the cached block again
        EXPECT_EQ(a.as<std::uint8_t>(), first);
    }
    {
        const HostScratch a(1 << 21, "test");  // larger: a new block, then cached
        EXPECT_NE(a.as<std::uint8_t>(), nullptr);
    }
    EXPECT_NO_THROW(host_release_cached_memory());
    EXPECT_NO_THROW(host_release_cached_memory());  // twice: harmless
}

}  // namespace
}  // namespace upres
