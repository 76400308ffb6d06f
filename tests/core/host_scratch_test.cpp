// HostScratch (core/host_scratch.hpp): one cached block reused between calls, a second block
// while the cached one is in use, and host_release_cached_memory(). HostStaging
// (core/host_staging.hpp): blocks given back are taken again, the smallest that fits; rows copied
// over several threads, strided and contiguous.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <numeric>
#include <vector>

#include <upres/context.hpp>

#include "core/host_scratch.hpp"
#include "core/host_staging.hpp"

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

TEST(HostStaging, TakesBackTheSmallestBlockThatFits) {
    host_release_cached_memory();
    void* large = nullptr;
    void* small = nullptr;
    {
        HostStaging a, b;
        a.reserve(3 << 20);
        b.reserve(1 << 20);
        large = a.get(), small = b.get();
        ASSERT_NE(large, nullptr);
        ASSERT_NE(small, nullptr);
        EXPECT_GE(a.bytes(), std::size_t{3} << 20);
        std::memset(large, 1, 3 << 20);
        std::memset(small, 2, 1 << 20);
    }
    {
        HostStaging c, d;
        c.reserve(1000);  // the small block, not the large one
        EXPECT_EQ(c.get(), small);
        d.reserve(2 << 20);  // the large one
        EXPECT_EQ(d.get(), large);
        c.reserve(4 << 20);  // grows: a block of its own, the small one given back
        EXPECT_NE(c.get(), small);
        EXPECT_NE(c.get(), large);
        EXPECT_GE(c.bytes(), std::size_t{4} << 20);
        HostStaging e;
        e.reserve(1 << 20);
        EXPECT_EQ(e.get(), small);
    }
    EXPECT_NO_THROW(host_release_cached_memory());
    HostStaging f;
    f.reserve(1 << 20);  // a fresh block after the release (the address may repeat)
    EXPECT_NE(f.get(), nullptr);
}

TEST(HostStaging, CopiesRowsOverThreads) {
    // Rows of 3001 bytes, 3200 of them (9.6 MB: several threads), from rows 3072 bytes apart into
    // rows 3008 apart, and a contiguous block; a single row under 1 MiB.
    const int rows = 3200;
    const std::size_t row = 3001;
    std::vector<std::uint8_t> src(std::size_t{3072} * rows);
    std::iota(src.begin(), src.end(), std::uint8_t{3});
    for (std::size_t i = 0; i < src.size(); i += 7) src[i] ^= static_cast<std::uint8_t>(i >> 8);
    std::vector<std::uint8_t> dst(std::size_t{3008} * rows, 0);
    copy_rows_parallel(dst.data(), 3008, src.data(), 3072, row, rows, 0);
    for (int r = 0; r < rows; ++r) {
        ASSERT_EQ(std::memcmp(dst.data() + std::size_t{3008} * r,
                              src.data() + std::size_t{3072} * r, row),
                  0)
            << "row " << r;
        ASSERT_EQ(dst[std::size_t{3008} * r + row], 0) << "row " << r << " written past its end";
    }
    std::vector<std::uint8_t> flat(src.size(), 0);
    copy_rows_parallel(flat.data(), 3072, src.data(), 3072, 3072, rows, 5);
    EXPECT_EQ(flat, src);
    std::vector<std::uint8_t> one(row, 0);
    copy_rows_parallel(one.data(), 0, src.data(), 0, row, 1, 4);
    EXPECT_EQ(std::memcmp(one.data(), src.data(), row), 0);
    copy_rows_parallel(one.data(), 0, src.data(), 0, row, 0, 4);  // no rows: nothing
    EXPECT_FALSE(host_page_locked(src.data(), src.size()));       // ordinary memory
}

}  // namespace
}  // namespace upres
