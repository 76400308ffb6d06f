// MemFile: bytes from a fuzzer as a file with a path (/proc/self/fd/N of a memfd holding
// exactly them), so readers open it by name as they would a user's file. Shared by the fuzz
// targets.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace upres_fuzz {

class MemFile {
  public:
    MemFile(const std::uint8_t* data, std::size_t size) : fd_(memfd_create("upres-fuzz", 0)) {
        if (fd_ < 0) std::abort();
        std::size_t off = 0;
        while (off < size) {
            const ssize_t n = write(fd_, data + off, size - off);
            if (n <= 0) std::abort();
            off += static_cast<std::size_t>(n);
        }
        path_ = "/proc/self/fd/" + std::to_string(fd_);
    }
    ~MemFile() { close(fd_); }
    MemFile(const MemFile&) = delete;
    MemFile& operator=(const MemFile&) = delete;
    const std::string& path() const { return path_; }

  private:
    int fd_;
    std::string path_;
};

}  // namespace upres_fuzz
