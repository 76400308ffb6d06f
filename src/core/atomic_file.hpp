// AtomicFile: a file written under a temporary name in the target's folder and renamed over the
// target by commit(). Destroyed without commit() (an exception), it removes the temporary file
// and leaves any existing target untouched. Used by image writers (src/io) and model writers
// (src/ops/srcnn). Errors are Error(IoError) with messages "<path>: <what>".
#pragma once

#include <cstdio>
#include <string>

namespace upres::detail {

class AtomicFile {
  public:
    explicit AtomicFile(const std::string& path);
    // With a fixed temporary name (replaced if it exists), for outputs that can be resumed:
    // keep() then leaves the temporary file in place when the object dies uncommitted.
    AtomicFile(const std::string& path, const std::string& temp);
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;
    ~AtomicFile();

    std::FILE* file() const noexcept { return file_; }
    // Flushes, closes and renames over the target; throws Error(IoError) on any failure.
    void commit();
    void keep() noexcept { keep_ = true; }
    const std::string& temp_path() const noexcept { return temp_; }

  private:
    std::string path_, temp_;
    std::FILE* file_ = nullptr;
    bool committed_ = false, keep_ = false;
    void open_temp(int flags);
};

}  // namespace upres::detail
