// libFuzzer target of the command line: the bytes are a command line, one argument per line, run
// through the whole CLI (upres::cli::run: parsing, option checks, the command itself) on small
// input files. A usage error (exit 1) or an upres::Error (exit 2 and up) is the expected outcome
// of a bad command line; a crash, a sanitizer report, a leak, an uncaught exception or the
// CLI's "internal error" exit code is a finding.
//
// Files: each command line runs in a private temporary folder holding small inputs (below); an
// argument "@NAME" is that folder's file NAME (in.png, gray.pgm, f.pfm, in16.tif, left.png,
// right.png, a.png, b.png, c.png, flow.npy, model.srcnn, list.txt, or any other name for an
// output). After each run every file the command wrote is removed and the inputs are restored.
// Skipped (not run) are command lines with an argument holding "/" or ".." (no file outside the
// folder is read or written) or an integer of three digits or more, an exponent or a hex/binary
// literal: outputs of up to gigapixels would only measure the allocator and the clock.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <upres/error.hpp>
#include <upres/image.hpp>
#include <upres/io.hpp>
#include <upres/srcnn.hpp>
#include "app.hpp"
#include "random_srcnn.hpp"

namespace fs = std::filesystem;

namespace {

struct Stamp {
    ino_t inode = 0;
    off_t size = 0;
    std::int64_t mtime_ns = 0;
    bool operator==(const Stamp&) const = default;
};

Stamp stamp(const fs::path& p) {
    struct stat st;
    if (::stat(p.c_str(), &st) != 0) return {};
    return {st.st_ino, st.st_size,
            std::int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec};
}

struct Inputs {
    fs::path dir;
    fs::path models;                           // UPRES_MODEL_DIR while fuzzing
    std::map<std::string, std::string> bytes;  // input name -> its content
    std::map<std::string, Stamp> stamps;       // input name -> its file's identity
    int home = -1;                             // the folder libFuzzer was started in
};

Inputs* g_inputs = nullptr;

std::string read_all(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

template <class T>
upres::Image<T> pattern(int w, int h, int c, double scale, unsigned seed, int shift = 0) {
    upres::Image<T> img(w, h, c);
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> noise(0.0, 0.1);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x)
            for (int k = 0; k < c; ++k) {
                const double v =
                    0.5 + 0.4 * std::sin(0.7 * (x + shift) + 0.3 * y + k) + noise(rng) - 0.05;
                img.view()(x, y, k) = static_cast<T>(v * scale);
            }
    return img;
}

void make_inputs(const fs::path& dir, Inputs& in) {
    using namespace upres;
    write_image((dir / "in.png").string(), pattern<std::uint8_t>(12, 10, 3, 255, 1).view());
    write_image((dir / "gray.pgm").string(), pattern<std::uint8_t>(12, 10, 1, 255, 2).view());
    write_image((dir / "f.pfm").string(), pattern<float>(12, 10, 3, 1.0, 3).view());
    try {  // TIFF support is optional (libtiff)
        write_image((dir / "in16.tif").string(),
                    pattern<std::uint16_t>(12, 10, 1, 65535, 4).view());
    } catch (const Error&) {
    }
    write_image((dir / "left.png").string(), pattern<std::uint8_t>(32, 20, 1, 255, 5, 3).view());
    write_image((dir / "right.png").string(), pattern<std::uint8_t>(32, 20, 1, 255, 5, 0).view());
    const char* frames[3] = {"a.png", "b.png", "c.png"};
    for (int i = 0; i < 3; ++i)
        write_image((dir / frames[i]).string(), pattern<std::uint8_t>(16, 12, 1, 255, 6, i).view());
    Image<float> flow = pattern<float>(12, 10, 2, 2.0, 7);
    write_image((dir / "flow.npy").string(), flow.view());
    std::mt19937 rng(8);
    const SrcnnModel m = upres::test::random_srcnn_model(rng, {5, 1, 3}, 4, 2, 0.05, 2);
    save_srcnn_model(m, (dir / "model.srcnn").string());
    std::ofstream((dir / "list.txt").string()) << "a.png\nb.png\nc.png\n";
    for (const auto& e : fs::directory_iterator(dir))
        in.bytes[e.path().filename().string()] = read_all(e.path());
}

// Removes what a run wrote and restores inputs it replaced or deleted (a file written in place
// or renamed over changes its inode, size or modification time).
void restore(Inputs& in) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(in.dir, ec)) {
        const std::string name = e.path().filename().string();
        if (in.bytes.count(name) == 0 || !e.is_regular_file()) fs::remove_all(e.path(), ec);
    }
    for (const auto& [name, bytes] : in.bytes) {
        const fs::path p = in.dir / name;
        if (stamp(p) == in.stamps[name]) continue;
        std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
        in.stamps[name] = stamp(p);
    }
}

bool digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

bool acceptable(const std::string& a) {
    if (a.find('/') != std::string::npos || a.find("..") != std::string::npos) return false;
    const std::size_t n = a.size();
    std::size_t i = 0;
    while (i < n) {
        if (!digit(a[i])) {
            ++i;
            continue;
        }
        const bool fraction = i > 0 && a[i - 1] == '.';
        std::size_t j = i;  // digits, with the separators "_" and "'" between them
        while (j < n &&
               (digit(a[j]) || ((a[j] == '_' || a[j] == '\'') && j + 1 < n && digit(a[j + 1]))))
            ++j;
        if (!fraction && j - i >= 3) return false;
        if (j + 1 < n) {
            const char c = a[j], next = a[j + 1];
            if ((c == 'e' || c == 'E') && (digit(next) || next == '+' || next == '-'))
                return false;  // an exponent
            if (j - i == 1 && a[i] == '0' && std::isalpha(static_cast<unsigned char>(c)))
                return false;  // 0x.., 0b.., 0o..
        }
        i = j;
    }
    return true;
}

}  // namespace

// The default models (UPRES_MODEL_DIR) are small random SRCNNs, one per scale, next to copies of
// the shipped BRISQUE model: with the shipped 9-5-5 64/32 networks, their convolutions took 57 %
// of the target's time (perf, 2-core machine); the small ones run the same code paths.
void make_models(const fs::path& dir) {
    const std::string shipped = upres::srcnn_model_dir();
    std::error_code ec;
    for (const char* f : {"brisque_svm.txt", "brisque_range.txt"})
        fs::copy_file(fs::path(shipped) / f, dir / f, ec);
    std::mt19937 rng(9);
    for (int scale = 2; scale <= 4; ++scale)
        upres::save_srcnn_model(upres::test::random_srcnn_model(rng, {5, 1, 3}, 4, 2, 0.05, scale),
                                (dir / ("srcnn_x" + std::to_string(scale) + ".srcnn")).string());
    if (setenv("UPRES_MODEL_DIR", dir.c_str(), 1) != 0) std::abort();
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    // In memory where the machine has /dev/shm: creating and removing the outputs on ext4 took
    // 16 % of the target's time (perf, 2-core machine).
    std::string base = "/tmp";
    if (const char* t = std::getenv("TMPDIR"); t && *t)
        base = t;
    else if (std::error_code ec; fs::is_directory("/dev/shm", ec))
        base = "/dev/shm";
    std::string tmpl = base + "/upres-fuzz-cli-XXXXXX";
    std::string models = base + "/upres-fuzz-cli-models-XXXXXX";
    if (mkdtemp(tmpl.data()) == nullptr || mkdtemp(models.data()) == nullptr) std::abort();
    g_inputs = new Inputs;
    g_inputs->dir = tmpl;
    g_inputs->models = models;
    make_models(g_inputs->models);
    make_inputs(g_inputs->dir, *g_inputs);
    g_inputs->home = ::open(".", O_RDONLY | O_DIRECTORY);
    if (g_inputs->home < 0) std::abort();
    std::atexit([] {
        std::error_code ec;
        fs::remove_all(g_inputs->dir, ec);
        fs::remove_all(g_inputs->models, ec);
    });
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size > 4096) return 0;
    std::vector<std::string> args{"upres"};
    std::string cur;
    for (std::size_t i = 0; i <= size; ++i) {
        if (i == size || data[i] == '\n') {
            if (!cur.empty() && cur[0] == '@')
                cur = (g_inputs->dir / cur.substr(1)).string();
            else if (!acceptable(cur))
                return 0;
            args.push_back(cur);
            cur.clear();
            if (args.size() > 40) return 0;
        } else {
            if (data[i] == 0) return 0;  // argv strings end at NUL
            cur.push_back(static_cast<char>(data[i]));
        }
    }
    for (std::size_t i = 1; i < args.size(); ++i)  // "@NAME": NAME must stay in the folder
        if (args[i].rfind(g_inputs->dir.string() + "/", 0) == 0 &&
            !acceptable(args[i].substr(g_inputs->dir.string().size() + 1)))
            return 0;
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    // Relative paths the command line names land in the folder too; libFuzzer's own paths
    // (corpus, artifacts) stay relative to where it was started.
    if (chdir(g_inputs->dir.c_str()) != 0) std::abort();
    const int rc = upres::cli::run(static_cast<int>(args.size()), argv.data());
    if (fchdir(g_inputs->home) != 0) std::abort();
    restore(*g_inputs);
    if (rc == upres::exit_code(upres::ErrorCode::Internal)) {
        std::fprintf(stderr, "fuzz_cli: the command line ended in an internal error\n");
        std::abort();
    }
    return 0;
}
