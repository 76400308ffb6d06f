// TiffRowReader / TiffRowWriter (upres/io.hpp): TIFF and BigTIFF by rows, for images larger
// than memory. The reader decodes one "block" at a time (a strip, or a row of tiles) and keeps
// the most recent ones (about 64 MiB, at least two): bands read top to bottom with a halo
// re-read blocks they share with the band before, and 2-D boxes those their neighbours read.
// The writer gathers one row of tiles in tile order and writes its tiles (raw when uncompressed).
#include <upres/io.hpp>

#include <algorithm>
#include <string>

#include "io/io_internal.hpp"

#if UPRES_HAVE_TIFF

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

#include "core/atomic_file.hpp"
#include "io/tiff_common.hpp"

namespace upres {

using io_detail::check_side;
using io_detail::fail;
using io_detail::libtiff_says;

namespace {
std::atomic<std::size_t> g_cache_bytes{0};  // io_detail::set_tiff_cache_bytes
std::atomic<std::int64_t> g_decoded{0};     // io_detail::tiff_blocks_decoded
std::atomic<std::int64_t> g_spilled{0};     // io_detail::tiff_blocks_spilled
}  // namespace

void io_detail::set_tiff_cache_bytes(std::size_t bytes) noexcept { g_cache_bytes = bytes; }
std::int64_t io_detail::tiff_blocks_decoded() noexcept { return g_decoded; }
std::int64_t io_detail::tiff_blocks_spilled() noexcept { return g_spilled; }

struct TiffRowReader::Impl {
    std::string path;
    std::FILE* file = nullptr;
    io_detail::TiffMessages msgs;
    io_detail::TiffPtr tif;
    io_detail::TiffLayout layout;
    bool tiled = false;
    std::uint32_t tw = 0, th = 0;  // tile size; strips: th = rows per strip
    std::size_t px = 1;            // bytes per sample
    // Decoded blocks and, for read_box on a tiled TIFF, decoded tiles: each the least recently
    // used replaced first, about kCacheBytes of each (at least 2 blocks: a band's halo reaches
    // back into the block before the one it ends in; with one block kept, a tiled cuda warp
    // decoded every row of tiles twice). The boxes of neighbouring 2-D tiles overlap: with the
    // last two strips kept, a stripped Deflate 8192^2 RGB input took 19.8 s to rotate in tiles
    // on 2 cores, every tile of a band decoding its rows' strips again (a tiled one: 0.56 s).
    static constexpr std::size_t kCacheBytes = std::size_t{64} << 20;
    struct Cached {
        std::int64_t index = -1;
        std::uint64_t used = 0;
        std::vector<unsigned char> data;
    };
    struct Lru {
        std::vector<Cached> entries;
        std::unordered_map<std::int64_t, std::size_t> where;  // index -> entry
        bool full = false;                                    // an entry has been replaced
    };
    Lru blocks, cache;
    std::vector<unsigned char> tile;
    std::uint64_t clock = 0;

    // A compressed block or tile decoded a second time (the cache had dropped it), or that
    // read_box decodes once the cache is full, is written to a temporary file (in TMPDIR,
    // unnamed: gone with the process) and read back from there afterwards. The boxes of a
    // rotation's band span far more rows than the cache holds, and the next band's boxes read
    // most of them again: a stripped Deflate 8192^2 RGB input (one row per strip) took 5.0 s to
    // rotate by 30 degrees in tiles on 2 cores, every row decoded 17 times on average; now
    // 1.41-1.49 s (a tiled uncompressed input: 0.58-0.73 s). Writing every block a box decodes
    // took 1.24-1.38 s, but wrote the box of a task of upres.dask, read once, for nothing;
    // writing only blocks decoded twice, 1.55 s. Rows read once by bands (a zoom), and a box
    // read once within the cache, are never written. Where the file cannot be made or
    // written (no TMPDIR, a full disk), blocks are decoded again.
    struct Spill {
        std::size_t unit = 0;             // bytes of one entry
        std::vector<std::uint8_t> state;  // per index: 0 not decoded, 1 decoded, 2 in the file
        int fd = -1;                      // -1: not made yet, -2: cannot be made
        bool writing = true;              // false after a failed write
        Spill() = default;
        Spill(const Spill&) = delete;
        Spill& operator=(const Spill&) = delete;
        ~Spill() {
            if (fd >= 0) ::close(fd);
        }
        // Entry i into dst from the file, if it is there.
        bool read(std::int64_t i, unsigned char* dst) {
            if (state.empty() || state[static_cast<std::size_t>(i)] != 2) return false;
            if (io_detail::pread_all(
                    fd, dst, unit, static_cast<std::int64_t>(i) * static_cast<std::int64_t>(unit)))
                return true;
            state[static_cast<std::size_t>(i)] = 1;  // decode it again
            return false;
        }
        // Entry i was just decoded into data; `boxes`: for a box (read_box) once the cache is
        // full, whose neighbours will read it again.
        void decoded(std::int64_t i, const unsigned char* data, bool boxes) {
            if (state.empty()) return;
            std::uint8_t& s = state[static_cast<std::size_t>(i)];
            if (s == 0 && !boxes) {
                s = 1;
                return;
            }
            if (s == 0) s = 1;
            if (s != 1 || !writing) return;
            if (fd == -1) fd = io_detail::open_temporary_file();
            if (fd < 0) {
                fd = -2;
                writing = false;
                return;
            }
            if (io_detail::pwrite_all(
                    fd, data, unit,
                    static_cast<std::int64_t>(i) * static_cast<std::int64_t>(unit))) {
                s = 2;
                ++g_spilled;
            } else {
                writing = false;
            }
        }
    };
    Spill spilled_blocks, spilled_tiles;

    // The entry for `index` in c (up to max(least, kCacheBytes / bytes) entries of `bytes`, the
    // least recently used replaced first), and whether it already holds it; a new entry is
    // filed under its index by mark() once its data is decoded.
    std::pair<Cached*, bool> slot_for(Lru& c, std::int64_t index, std::size_t bytes,
                                      std::size_t least) {
        if (const auto it = c.where.find(index); it != c.where.end()) {
            Cached& e = c.entries[it->second];
            e.used = ++clock;
            return {&e, true};
        }
        std::size_t k = c.entries.size();
        const std::size_t keep = g_cache_bytes ? g_cache_bytes.load() : kCacheBytes;
        if (k < std::max(least, keep / std::max<std::size_t>(1, bytes))) {
            c.entries.emplace_back();
        } else {
            k = 0;
            for (std::size_t i = 1; i < c.entries.size(); ++i)
                if (c.entries[i].used < c.entries[k].used) k = i;
            c.where.erase(c.entries[k].index);
            c.full = true;
        }
        Cached& e = c.entries[k];
        e.index = -1;
        e.used = ++clock;
        e.data.resize(bytes);
        return {&e, false};
    }
    void mark(Lru& c, Cached* e, std::int64_t index) {
        e->index = index;
        c.where[index] = static_cast<std::size_t>(e - c.entries.data());
    }

    ~Impl() {
        tif.reset();
        if (file) std::fclose(file);
    }
    std::size_t row_bytes() const { return std::size_t{layout.width} * layout.channels * px; }

    // Block b (rows [b th, b th + th) of the image), decoded unless it is kept; boxes: for
    // read_box (Spill).
    const unsigned char* load(int b, bool boxes = false) {
        const auto [slot, kept] = slot_for(blocks, b, row_bytes() * th, 2);
        if (kept) return slot->data.data();
        std::vector<unsigned char>& block = slot->data;
        if (spilled_blocks.read(b, block.data())) {
            mark(blocks, slot, b);
            return block.data();
        }
        const std::uint32_t y0 = static_cast<std::uint32_t>(b) * th;
        const std::uint32_t rows = std::min<std::uint32_t>(th, layout.height - y0);
        TIFF* t = tif.get();
        ++g_decoded;
        if (!tiled) {
            const tstrip_t s = TIFFComputeStrip(t, y0, 0);
            const tmsize_t want = static_cast<tmsize_t>(row_bytes() * rows);
            const tmsize_t got = TIFFReadEncodedStrip(t, s, block.data(), want);
            if (got < want)
                fail(ErrorCode::CorruptData, path,
                     "cannot read TIFF strip " + std::to_string(s) + " (rows " +
                         std::to_string(y0) + " to " + std::to_string(y0 + rows - 1) +
                         "): it is missing, truncated or corrupt" + libtiff_says(msgs));
        } else {
            const std::size_t trow = std::size_t{tw} * layout.channels * px;
            tile.resize(trow * th);
            for (std::uint32_t x = 0; x < layout.width; x += tw) {
                const ttile_t k = TIFFComputeTile(t, x, y0, 0, 0);
                if (TIFFReadEncodedTile(t, k, tile.data(), static_cast<tmsize_t>(tile.size())) <
                    static_cast<tmsize_t>(tile.size()))
                    fail(ErrorCode::CorruptData, path,
                         "cannot read the TIFF tile at (x " + std::to_string(x) + ", y " +
                             std::to_string(y0) + "): it is missing, truncated or corrupt" +
                             libtiff_says(msgs));
                const std::size_t n =
                    std::size_t{std::min(tw, layout.width - x)} * layout.channels * px;
                for (std::uint32_t r = 0; r < rows; ++r)
                    std::memcpy(
                        block.data() + r * row_bytes() + std::size_t{x} * layout.channels * px,
                        tile.data() + r * trow, n);
            }
        }
        spilled_blocks.decoded(b, block.data(), boxes && blocks.full);
        mark(blocks, slot, b);
        return block.data();
    }

    // The decoded tile at tile column tx, tile row ty (tw x th pixels, edge tiles padded).
    const unsigned char* tile_at(std::uint32_t tx, std::uint32_t ty) {
        const std::uint32_t across = (layout.width + tw - 1) / tw;
        const std::int64_t index = std::int64_t{ty} * across + tx;
        const std::size_t bytes = std::size_t{tw} * th * layout.channels * px;
        const auto [slot, kept] = slot_for(cache, index, bytes, 8);
        if (kept) return slot->data.data();
        if (spilled_tiles.read(index, slot->data.data())) {
            mark(cache, slot, index);
            return slot->data.data();
        }
        const std::uint32_t x = tx * tw, y = ty * th;
        ++g_decoded;
        const ttile_t k = TIFFComputeTile(tif.get(), x, y, 0, 0);
        if (TIFFReadEncodedTile(tif.get(), k, slot->data.data(), static_cast<tmsize_t>(bytes)) <
            static_cast<tmsize_t>(bytes))
            fail(ErrorCode::CorruptData, path,
                 "cannot read the TIFF tile at (x " + std::to_string(x) + ", y " +
                     std::to_string(y) + "): it is missing, truncated or corrupt" +
                     libtiff_says(msgs));
        spilled_tiles.decoded(index, slot->data.data(), cache.full);
        mark(cache, slot, index);
        return slot->data.data();
    }
};

TiffRowReader::TiffRowReader(const std::string& path) : impl_(std::make_unique<Impl>()) {
    Impl& m = *impl_;
    m.path = path;
    m.msgs.path = path;
    m.file = std::fopen(path.c_str(), "rb");
    if (!m.file)
        fail(ErrorCode::IoError, path, std::string("cannot open: ") + std::strerror(errno));
    m.tif = io_detail::open_tiff(path, m.file, "rm", &m.msgs, ErrorCode::CorruptData);
    m.layout = io_detail::tiff_layout(path, m.tif.get(), m.msgs);
    check_side(path, "TIFF", m.layout.width, "width", kMaxTiledDimension,
               " (the limit of the row-wise paths)");
    check_side(path, "TIFF", m.layout.height, "height", kMaxTiledDimension,
               " (the limit of the row-wise paths)");
    if (m.layout.planar_separate)
        fail(ErrorCode::UnsupportedFormat, path,
             "row-wise reading needs contiguous samples (planar configuration 1, 'chunky'); this "
             "TIFF stores each channel in its own plane");
    m.px = pixel_size(m.layout.type);
    TIFF* t = m.tif.get();
    m.tiled = TIFFIsTiled(t) != 0;
    if (m.tiled) {
        TIFFGetField(t, TIFFTAG_TILEWIDTH, &m.tw);
        TIFFGetField(t, TIFFTAG_TILELENGTH, &m.th);
        if (m.tw == 0 || m.th == 0 || m.tw > (1u << 16) || m.th > (1u << 16) ||
            TIFFTileSize(t) !=
                static_cast<tmsize_t>(std::size_t{m.tw} * m.th * m.layout.channels * m.px))
            fail(ErrorCode::CorruptData, path,
                 "inconsistent TIFF tile size " + std::to_string(m.tw) + " x " +
                     std::to_string(m.th) + libtiff_says(m.msgs));
        // A block is one row of tiles: bound it (a hostile header could claim a huge one).
        const std::size_t wide =
            std::max(m.row_bytes(), std::size_t{m.tw} * m.layout.channels * m.px);
        if (wide * m.th > (std::size_t{1} << 30))
            fail(ErrorCode::UnsupportedFormat, path,
                 "TIFF rows of tiles of " + std::to_string(m.th) + " rows of " +
                     std::to_string(wide) +
                     " bytes exceed 1 GiB; rewrite it with smaller tiles (e.g. `vips tiffsave "
                     "--tile --tile-height 256`)");
    } else {
        std::uint32_t rps = 0;
        TIFFGetFieldDefaulted(t, TIFFTAG_ROWSPERSTRIP, &rps);
        m.th = std::clamp<std::uint32_t>(rps, 1, m.layout.height);
        if (TIFFScanlineSize64(t) != m.row_bytes())
            fail(ErrorCode::CorruptData, path,
                 "inconsistent TIFF scanline size" + libtiff_says(m.msgs));
        // A block is one strip: bound it (a hostile header could claim a huge one).
        if (m.row_bytes() * m.th > (std::size_t{1} << 30))
            fail(ErrorCode::UnsupportedFormat, path,
                 "TIFF strips of " + std::to_string(m.th) + " rows of " +
                     std::to_string(m.row_bytes()) +
                     " bytes exceed 1 GiB; rewrite it tiled (e.g. `vips tiffsave --tile`)");
    }
    std::uint16_t compression = COMPRESSION_NONE;
    TIFFGetFieldDefaulted(t, TIFFTAG_COMPRESSION, &compression);
    if (compression != COMPRESSION_NONE) {  // uncompressed blocks are as cheap to read again
        const std::size_t down = (m.layout.height + m.th - 1) / m.th;
        m.spilled_blocks.unit = m.row_bytes() * m.th;
        m.spilled_blocks.state.assign(m.tiled ? 0 : down, 0);  // a tiled TIFF's rows: its tiles
        if (m.tiled) {
            const std::size_t across = (m.layout.width + m.tw - 1) / m.tw;
            m.spilled_tiles.unit = std::size_t{m.tw} * m.th * m.layout.channels * m.px;
            m.spilled_tiles.state.assign(across * down, 0);
        }
    }
}

TiffRowReader::~TiffRowReader() = default;
PixelType TiffRowReader::type() const { return impl_->layout.type; }
int TiffRowReader::width() const { return static_cast<int>(impl_->layout.width); }
int TiffRowReader::height() const { return static_cast<int>(impl_->layout.height); }
int TiffRowReader::channels() const { return impl_->layout.channels; }
bool TiffRowReader::tiled() const noexcept { return impl_->tiled; }

void TiffRowReader::read_rows(int y0, int rows, void* dst, std::ptrdiff_t stride) {
    Impl& m = *impl_;
    if (y0 < 0 || rows < 0 || y0 + static_cast<long long>(rows) > m.layout.height)
        fail(ErrorCode::InvalidArgument, m.path,
             "rows [" + std::to_string(y0) + ", " + std::to_string(y0 + rows) +
                 ") are outside the image's " + std::to_string(m.layout.height) + " rows");
    const std::size_t rb = m.row_bytes();
    for (int y = y0; y < y0 + rows;) {
        const int b = static_cast<int>(static_cast<std::uint32_t>(y) / m.th);
        const unsigned char* block = m.load(b);
        const int in_block = static_cast<int>(static_cast<std::uint32_t>(y) - b * m.th);
        const int n = std::min<int>(y0 + rows - y, static_cast<int>(m.th) - in_block);
        for (int r = 0; r < n; ++r)
            std::memcpy(static_cast<unsigned char*>(dst) + static_cast<std::ptrdiff_t>(y - y0 + r) *
                                                               stride *
                                                               static_cast<std::ptrdiff_t>(m.px),
                        block + (in_block + r) * rb, rb);
        y += n;
    }
}

void TiffRowReader::read_box(int x0, int y0, int w, int h, void* dst, std::ptrdiff_t stride) {
    Impl& m = *impl_;
    if (x0 < 0 || y0 < 0 || w < 1 || h < 1 || std::int64_t{x0} + w > m.layout.width ||
        std::int64_t{y0} + h > m.layout.height)
        fail(ErrorCode::InvalidArgument, m.path,
             "the box of " + std::to_string(w) + " x " + std::to_string(h) + " pixels at (" +
                 std::to_string(x0) + ", " + std::to_string(y0) + ") is not inside the image");
    const std::size_t pb = std::size_t{static_cast<std::size_t>(m.layout.channels)} * m.px;
    if (!m.tiled) {  // strips: the box's columns of each row from its decoded strip
        for (int y = y0; y < y0 + h; ++y) {
            const int b = static_cast<int>(static_cast<std::uint32_t>(y) / m.th);
            const unsigned char* block = m.load(b, true);
            std::memcpy(static_cast<unsigned char*>(dst) + static_cast<std::ptrdiff_t>(y - y0) *
                                                               stride *
                                                               static_cast<std::ptrdiff_t>(m.px),
                        block + (static_cast<std::uint32_t>(y) - b * m.th) * m.row_bytes() +
                            static_cast<std::size_t>(x0) * pb,
                        static_cast<std::size_t>(w) * pb);
        }
        return;
    }
    const std::size_t trow = m.tw * pb;
    auto* out = static_cast<unsigned char*>(dst);
    const std::uint32_t x1 = static_cast<std::uint32_t>(x0 + w),
                        y1 = static_cast<std::uint32_t>(y0 + h);
    for (std::uint32_t ty = static_cast<std::uint32_t>(y0) / m.th; ty * m.th < y1; ++ty)
        for (std::uint32_t tx = static_cast<std::uint32_t>(x0) / m.tw; tx * m.tw < x1; ++tx) {
            const unsigned char* t = m.tile_at(tx, ty);
            const std::uint32_t ax = std::max<std::uint32_t>(tx * m.tw, x0);
            const std::uint32_t bx = std::min<std::uint32_t>((tx + 1) * m.tw, x1);
            const std::uint32_t ay = std::max<std::uint32_t>(ty * m.th, y0);
            const std::uint32_t by = std::min<std::uint32_t>((ty + 1) * m.th, y1);
            for (std::uint32_t y = ay; y < by; ++y)
                std::memcpy(out +
                                (static_cast<std::ptrdiff_t>(y) - y0) * stride *
                                    static_cast<std::ptrdiff_t>(m.px) +
                                (ax - x0) * pb,
                            t + (y - ty * m.th) * trow + (ax - tx * m.tw) * pb, (bx - ax) * pb);
        }
}

struct TiffRowWriter::Impl {
    std::string path;
    int width, height, channels;
    PixelType type;
    int tile;
    std::size_t px;
    bool big = false;
    detail::AtomicFile file;
    io_detail::TiffMessages msgs;
    io_detail::TiffPtr tif;
    std::vector<unsigned char> band, tiles;  // rows of one row of tiles; its tiles in order
    int band_rows = 0, rows = 0;

    std::function<void(int)> on_checkpoint;
    bool checkpoint = false;
    bool uncompressed = true;

    Impl(const std::string& p, int w, int h, int c, PixelType t, const TiffRowWriterOptions& o)
        : path(p),
          width(w),
          height(h),
          channels(c),
          type(t),
          tile(o.tile),
          px(pixel_size(t)),
          file(o.partial_path.empty() ? detail::AtomicFile(p)
                                      : detail::AtomicFile(p, o.partial_path)),
          on_checkpoint(o.on_checkpoint),
          checkpoint(!o.partial_path.empty()) {}
    std::size_t row_bytes() const { return std::size_t{1} * width * channels * px; }

    // Uncommitted (an error, or the caller keeps the partial file): libtiff must write nothing
    // more. Its TIFFClose would write a directory at the end of the file (on a full disk, a
    // header pointing past it): the descriptor is swapped for a read-only one first, so every
    // such write fails and the file keeps its last checkpoint.
    ~Impl() {
        if (!tif) return;
        const int nul = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (nul >= 0) {
            ::dup2(nul, TIFFFileno(tif.get()));
            ::close(nul);
        }
        tif.reset();
    }

    [[noreturn]] void write_failed(const char* what) {
        const int e = errno;
        fail(ErrorCode::IoError, path,
             std::string(what) + " failed" + (e ? std::string(": ") + std::strerror(e) : "") +
                 libtiff_says(msgs));
    }

    // Writes a row of tiles from n rows (at base, `stride` bytes apart) ending at row `rows`,
    // the last tile row padded with its last row and the last tile column with zeros. The
    // tiles are first gathered in tile order, then written one after the other; uncompressed
    // ones as they are (TIFFWriteRawTile: TIFFWriteTile's encoder copies each tile once more).
    // One thread gathering and writing 80000-pixel u16 rows reached half of the disk's write
    // speed: the gathering copy took as long as the writes. A large row of tiles (8 MB or more)
    // is gathered by up to 4 helper threads, in chunks of about 1 MB taken in order, while this
    // thread writes each chunk as soon as it is gathered (the copy hides behind the writes).
    void write_tile_row(const unsigned char* base, std::size_t stride, int n) {
        const int y0 = rows - n;
        const std::size_t pb = std::size_t{1} * channels * px;
        const std::size_t trow = tile * pb, tbytes = trow * tile;
        const int across = (width + tile - 1) / tile;
        tiles.resize(tbytes * across);
        const auto gather = [&](int t0, int t1) {
            for (int t = t0; t < t1; ++t) {
                const int x = t * tile, cols = std::min(tile, width - x);
                unsigned char* d = tiles.data() + tbytes * t;
                for (int r = 0; r < tile; ++r, d += trow) {
                    std::memcpy(d, base + std::min(r, n - 1) * stride + x * pb, cols * pb);
                    if (cols < tile) std::memset(d + cols * pb, 0, (tile - cols) * pb);
                }
            }
        };
        TIFF* tp = tif.get();
        const auto write = [&](int t) {
            unsigned char* tb = tiles.data() + tbytes * t;
            const auto x = static_cast<std::uint32_t>(t * tile);
            errno = 0;
            return uncompressed
                       ? TIFFWriteRawTile(
                             tp, TIFFComputeTile(tp, x, static_cast<std::uint32_t>(y0), 0, 0), tb,
                             static_cast<tmsize_t>(tbytes)) == static_cast<tmsize_t>(tbytes)
                       : TIFFWriteTile(tp, tb, x, static_cast<std::uint32_t>(y0), 0, 0) >= 0;
        };
        const int team = tiles.size() < (std::size_t{8} << 20)
                             ? 0
                             : std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 1,
                                          std::min(4, across));
        if (team == 0) {
            gather(0, across);
            for (int t = 0; t < across; ++t)
                if (!write(t)) write_failed("TIFF tile write");
            return;
        }
        const int chunk = std::max<int>(1, static_cast<int>((std::size_t{1} << 20) / tbytes));
        const int chunks = (across + chunk - 1) / chunk;
        std::atomic<int> next{0};
        const auto ready = std::make_unique<std::atomic<bool>[]>(static_cast<std::size_t>(chunks));
        std::mutex mu;
        std::condition_variable cv;
        std::vector<std::thread> helpers;
        for (int k = 0; k < team; ++k)
            helpers.emplace_back([&] {
                for (int c; (c = next++) < chunks;) {
                    gather(c * chunk, std::min(across, (c + 1) * chunk));
                    {
                        const std::lock_guard<std::mutex> l(mu);
                        ready[c] = true;
                    }
                    cv.notify_all();
                }
            });
        bool ok = true;
        for (int c = 0; c < chunks && ok; ++c) {
            {
                std::unique_lock<std::mutex> l(mu);
                cv.wait(l, [&] { return ready[c].load(); });
            }
            for (int t = c * chunk; t < std::min(across, (c + 1) * chunk) && ok; ++t) ok = write(t);
        }
        const int err = errno;
        next = chunks;  // a failed write: the helpers take no further chunk
        for (std::thread& h : helpers) h.join();
        errno = err;
        if (!ok) write_failed("TIFF tile write");
    }
    // After a write_rows call that completed rows of tiles: the directory so far is written, so
    // that a resumed job keeps them. Once per call, not per row of tiles: each checkpoint
    // rewrites the whole tile index (1.5 MB for a 80000^2 BigTIFF of 256-pixel tiles).
    void checkpoint_written() {
        const int written = rows - band_rows;
        if (!checkpoint || written >= height) return;
        errno = 0;
        if (!TIFFCheckpointDirectory(tif.get())) write_failed("TIFF checkpoint");
        if (on_checkpoint) on_checkpoint(written);
    }
    // Writes the gathered band (band_rows rows).
    void flush_band() {
        write_tile_row(band.data(), row_bytes(), band_rows);
        band_rows = 0;
    }
};

TiffRowWriter::TiffRowWriter(const std::string& path, int width, int height, int channels,
                             PixelType type, const TiffRowWriterOptions& opts) {
    if (width < 1 || width > kMaxTiledDimension || height < 1 || height > kMaxTiledDimension)
        fail(ErrorCode::InvalidArgument, path,
             "TIFF size " + std::to_string(width) + " x " + std::to_string(height) +
                 " is outside [1, " + std::to_string(kMaxTiledDimension) + "] per side");
    if (channels < 1 || channels > 4)
        fail(ErrorCode::UnsupportedFormat, path,
             std::to_string(channels) + " channels (allowed: 1 to 4)");
    if (opts.tile != 0 && (opts.tile < 16 || opts.tile > 4096 || opts.tile % 16 != 0))
        fail(ErrorCode::InvalidArgument, path,
             "TIFF tile side " + std::to_string(opts.tile) +
                 " is not a multiple of 16 in [16, 4096] (0: automatic)");
    TiffRowWriterOptions o = opts;
    if (o.tile == 0) o.tile = tiff_tile_side(width, height);
    impl_ = std::make_unique<Impl>(path, width, height, channels, type, o);
    Impl& m = *impl_;
    m.msgs.path = path;
    const double bytes = static_cast<double>(width) * height * channels * m.px;
    m.big = o.bigtiff || bytes > 3.9e9;
    m.tif =
        io_detail::open_tiff(path, m.file.file(), m.big ? "w8" : "w", &m.msgs, ErrorCode::IoError);
    TIFF* tp = m.tif.get();
    const bool is_float = type == PixelType::F32;
    TIFFSetField(tp, TIFFTAG_IMAGEWIDTH, static_cast<std::uint32_t>(width));
    TIFFSetField(tp, TIFFTAG_IMAGELENGTH, static_cast<std::uint32_t>(height));
    TIFFSetField(tp, TIFFTAG_SAMPLESPERPIXEL, static_cast<std::uint16_t>(channels));
    TIFFSetField(tp, TIFFTAG_BITSPERSAMPLE, static_cast<std::uint16_t>(m.px * 8));
    TIFFSetField(tp, TIFFTAG_SAMPLEFORMAT,
                 static_cast<std::uint16_t>(is_float ? SAMPLEFORMAT_IEEEFP : SAMPLEFORMAT_UINT));
    TIFFSetField(tp, TIFFTAG_PLANARCONFIG, static_cast<std::uint16_t>(PLANARCONFIG_CONTIG));
    TIFFSetField(
        tp, TIFFTAG_PHOTOMETRIC,
        static_cast<std::uint16_t>(channels >= 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK));
    if (channels == 2 || channels == 4) {
        const std::uint16_t extra[1] = {EXTRASAMPLE_UNASSALPHA};
        TIFFSetField(tp, TIFFTAG_EXTRASAMPLES, static_cast<std::uint16_t>(1), extra);
    }
    TIFFSetField(tp, TIFFTAG_TILEWIDTH, static_cast<std::uint32_t>(o.tile));
    TIFFSetField(tp, TIFFTAG_TILELENGTH, static_cast<std::uint32_t>(o.tile));
    m.uncompressed = !o.deflate;
    if (o.deflate) {
        TIFFSetField(tp, TIFFTAG_COMPRESSION,
                     static_cast<std::uint16_t>(COMPRESSION_ADOBE_DEFLATE));
        TIFFSetField(tp, TIFFTAG_ZIPQUALITY, io_detail::kDeflateLevel);
        TIFFSetField(
            tp, TIFFTAG_PREDICTOR,
            static_cast<std::uint16_t>(is_float ? PREDICTOR_FLOATINGPOINT : PREDICTOR_HORIZONTAL));
    } else {
        TIFFSetField(tp, TIFFTAG_COMPRESSION, static_cast<std::uint16_t>(COMPRESSION_NONE));
    }
    m.band.resize(m.row_bytes() * o.tile);
}

TiffRowWriter::~TiffRowWriter() = default;
bool TiffRowWriter::bigtiff() const noexcept { return impl_->big; }
int TiffRowWriter::rows_written() const noexcept { return impl_->rows; }
void TiffRowWriter::keep_partial() noexcept { impl_->file.keep(); }

void TiffRowWriter::write_rows(int y0, int rows, const void* src, std::ptrdiff_t stride) {
    Impl& m = *impl_;
    if (y0 != m.rows || rows < 0 || rows > m.height - m.rows)
        fail(ErrorCode::InvalidArgument, m.path,
             "rows [" + std::to_string(y0) + ", " + std::to_string(y0 + rows) +
                 ") do not continue the " + std::to_string(m.rows) + " rows written (of " +
                 std::to_string(m.height) + ")");
    const std::size_t rb = m.row_bytes();
    const std::size_t sb = static_cast<std::size_t>(stride) * m.px;
    const auto* in = static_cast<const unsigned char*>(src);
    bool flushed = false;
    for (int r = 0; r < rows;) {
        // Whole rows of tiles (or the image's last rows) straight from the caller's rows.
        const int n = std::min(m.tile, rows - r);
        if (m.band_rows == 0 && (n == m.tile || n == m.height - m.rows)) {
            m.rows += n;
            m.write_tile_row(in + static_cast<std::size_t>(r) * sb, sb, n);
            r += n;
            flushed = true;
            continue;
        }
        std::memcpy(m.band.data() + m.band_rows * rb, in + static_cast<std::size_t>(r) * sb, rb);
        ++m.band_rows;
        ++m.rows;
        ++r;
        if (m.band_rows == m.tile || m.rows == m.height) {
            m.flush_band();
            flushed = true;
        }
    }
    if (flushed) m.checkpoint_written();
}

void TiffRowWriter::commit() {
    Impl& m = *impl_;
    if (m.rows != m.height)
        fail(
            ErrorCode::InvalidArgument, m.path,
            "commit after " + std::to_string(m.rows) + " of " + std::to_string(m.height) + " rows");
    errno = 0;
    if (!TIFFFlush(m.tif.get())) m.write_failed("TIFF write");
    TIFF* raw = m.tif.release();
    TIFFClose(raw);
    if (!m.msgs.error.empty()) m.write_failed("TIFF write");
    m.file.commit();
}

}  // namespace upres

#else  // !UPRES_HAVE_TIFF

namespace upres {
namespace {
[[noreturn]] void no_tiff(const std::string& path) {
    io_detail::fail(ErrorCode::UnsupportedFormat, path,
                    "TIFF is not available: this build of upres lacks libtiff");
}
}  // namespace
struct TiffRowReader::Impl {};
struct TiffRowWriter::Impl {};
TiffRowReader::TiffRowReader(const std::string& path) { no_tiff(path); }
TiffRowReader::~TiffRowReader() = default;
PixelType TiffRowReader::type() const { return PixelType::U8; }
int TiffRowReader::width() const { return 0; }
int TiffRowReader::height() const { return 0; }
int TiffRowReader::channels() const { return 0; }
bool TiffRowReader::tiled() const noexcept { return false; }
void TiffRowReader::read_rows(int, int, void*, std::ptrdiff_t) {}
void TiffRowReader::read_box(int, int, int, int, void*, std::ptrdiff_t) {}
TiffRowWriter::TiffRowWriter(const std::string& path, int, int, int, PixelType,
                             const TiffRowWriterOptions&) {
    no_tiff(path);
}
TiffRowWriter::~TiffRowWriter() = default;
bool TiffRowWriter::bigtiff() const noexcept { return false; }
int TiffRowWriter::rows_written() const noexcept { return 0; }
void TiffRowWriter::keep_partial() noexcept {}
void TiffRowWriter::write_rows(int, int, const void*, std::ptrdiff_t) {}
void TiffRowWriter::commit() {}
}  // namespace upres

#endif

namespace upres {

int tiff_tile_side(int width, int height) noexcept {
    const int side = std::clamp(std::max(width, height), 1, 256);  // no overflow near INT_MAX
    return (side + 15) / 16 * 16;
}

}  // namespace upres
