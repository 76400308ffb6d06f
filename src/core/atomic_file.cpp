// AtomicFile (core/atomic_file.hpp).
#include "core/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include <upres/error.hpp>

namespace upres::detail {

namespace {
[[noreturn]] void fail(const std::string& path, const std::string& what) {
    throw Error(ErrorCode::IoError, path + ": " + what);
}
}  // namespace

AtomicFile::AtomicFile(const std::string& path) : path_(path) {
    static std::atomic<unsigned> counter{0};
    temp_ =
        path + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter.fetch_add(1));
    open_temp(O_EXCL);
}

AtomicFile::AtomicFile(const std::string& path, const std::string& temp)
    : path_(path), temp_(temp) {
    open_temp(O_TRUNC);
}

void AtomicFile::open_temp(int flags) {
    const int fd = ::open(temp_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | flags, 0666);
    if (fd < 0)  // the target's folder decides (missing, read-only, full): name the target
        fail(path_, std::string("cannot write: ") + std::strerror(errno));
    file_ = ::fdopen(fd, "w+b");
    if (!file_) {
        const int err = errno;
        ::close(fd);
        ::unlink(temp_.c_str());
        fail(path_, std::string("cannot open the temporary file: ") + std::strerror(err));
    }
}

AtomicFile::~AtomicFile() {
    if (file_) std::fclose(file_);
    if (!committed_ && !keep_) ::unlink(temp_.c_str());
}

void AtomicFile::commit() {
    const bool write_error = std::fflush(file_) != 0 || std::ferror(file_);
    const int err = errno;
    const int close_rc = std::fclose(file_);
    const int close_err = errno;
    file_ = nullptr;
    if (write_error) fail(path_, std::string("write failed: ") + std::strerror(err));
    if (close_rc != 0)
        fail(path_, std::string("write failed on close: ") + std::strerror(close_err));
    if (std::rename(temp_.c_str(), path_.c_str()) != 0)
        fail(path_, std::string("cannot rename the temporary file over the target: ") +
                        std::strerror(errno));
    committed_ = true;
}

}  // namespace upres::detail
