// The BRISQUE model: libsvm's text format of the epsilon-SVR (RBF kernel) and the features'
// ranges, read once per directory; the prediction (upres/brisque.hpp).
#include <charconv>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <upres/brisque.hpp>
#include <upres/error.hpp>
#include <upres/srcnn.hpp>

namespace upres {

namespace {

struct Model {
    double gamma = 0, rho = 0;
    std::vector<double> coef;                         // one per support vector
    std::vector<BrisqueFeatures> sv;                  // sparse entries filled, the rest 0
    std::array<double, kBrisqueFeatures> lo{}, hi{};  // feature ranges
};

[[noreturn]] void corrupt(const std::string& path, int line, const std::string& what) {
    throw Error(ErrorCode::CorruptData,
                "brisque model '" + path + "', line " + std::to_string(line) + ": " + what);
}

// The lines of a text file. C stdio and std::from_chars below, not iostreams: the parse is
// locale-independent (a program that sets a global locale with ',' decimals reads the same
// model) and needs no locale facets (a Python extension whose libstdc++ is linked statically
// meets the interpreter's own copy, whose facets it cannot use).
std::vector<std::string> read_lines(const std::string& path) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f)
        throw Error(ErrorCode::IoError,
                    "cannot open the brisque model file '" + path +
                        "' (set model_dir, or UPRES_MODEL_DIR, to the "
                        "folder holding brisque_svm.txt and brisque_range.txt)");
    std::string text;
    char buf[65536];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) text.append(buf, n);
    const bool bad = std::ferror(f) != 0;
    std::fclose(f);
    if (bad) throw Error(ErrorCode::IoError, "cannot read the brisque model file '" + path + "'");
    std::vector<std::string> lines;
    std::size_t at = 0;
    while (at < text.size()) {
        std::size_t e = text.find('\n', at);
        if (e == std::string::npos) e = text.size();
        std::string l = text.substr(at, e - at);
        if (!l.empty() && l.back() == '\r') l.pop_back();
        lines.push_back(std::move(l));
        at = e + 1;
    }
    return lines;
}

// The whitespace-separated words of a line.
std::vector<std::string_view> words(std::string_view line) {
    std::vector<std::string_view> w;
    std::size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
        std::size_t j = i;
        while (j < line.size() && line[j] != ' ' && line[j] != '\t') ++j;
        if (j > i) w.push_back(line.substr(i, j - i));
        i = j;
    }
    return w;
}

std::string quoted(std::string_view w) {
    std::string q(1, '\'');
    q.append(w);
    q.push_back('\'');
    return q;
}

// The whole word as a number (no trailing characters).
template <class T>
bool number(std::string_view w, T& out) {
    const auto r = std::from_chars(w.data(), w.data() + w.size(), out);
    return r.ec == std::errc() && r.ptr == w.data() + w.size();
}

std::shared_ptr<const Model> load(const std::string& dir) {
    auto m = std::make_shared<Model>();
    const std::string svm = dir + "/brisque_svm.txt", range = dir + "/brisque_range.txt";
    {
        const std::vector<std::string> lines = read_lines(svm);
        int ln = 0;
        bool in_sv = false, have_gamma = false, have_rho = false;
        for (const std::string& line : lines) {
            ++ln;
            const std::vector<std::string_view> w = words(line);
            if (w.empty()) continue;
            if (!in_sv) {
                const std::string_view key = w[0], v = w.size() > 1 ? w[1] : std::string_view();
                if (key == "svm_type" && v != "epsilon_svr")
                    corrupt(svm, ln, "svm_type " + std::string(v) + " (allowed: epsilon_svr)");
                if (key == "kernel_type" && v != "rbf")
                    corrupt(svm, ln, "kernel_type " + std::string(v) + " (allowed: rbf)");
                if (key == "gamma") have_gamma = number(v, m->gamma);
                if (key == "rho") have_rho = number(v, m->rho);
                if (key == "SV") in_sv = true;
                continue;
            }
            double c;
            if (!number(w[0], c))
                corrupt(svm, ln, "a support vector line must start with its coefficient");
            BrisqueFeatures s{};
            for (std::size_t t = 1; t < w.size(); ++t) {
                const std::string_view tok = w[t];
                const auto colon = tok.find(':');
                int idx = 0;
                double v = 0;
                if (colon == std::string_view::npos || !number(tok.substr(0, colon), idx) ||
                    !number(tok.substr(colon + 1), v) || idx < 1 || idx > kBrisqueFeatures)
                    corrupt(svm, ln, quoted(tok) + " is not index:value with index 1..36");
                s[idx - 1] = v;
            }
            m->coef.push_back(c);
            m->sv.push_back(s);
        }
        if (!have_gamma || !have_rho || m->coef.empty())
            corrupt(svm, ln, "the file ends without gamma, rho or support vectors");
    }
    {
        const std::vector<std::string> lines = read_lines(range);
        int ln = 0, k = 0;
        for (const std::string& line : lines) {
            ++ln;
            const std::vector<std::string_view> w = words(line);
            if (w.empty() || w[0][0] == '#') continue;
            if (k >= kBrisqueFeatures) corrupt(range, ln, "more than 36 ranges");
            if (w.size() < 2 || !number(w[0], m->lo[k]) || !number(w[1], m->hi[k]) ||
                !(m->hi[k] > m->lo[k]))
                corrupt(range, ln, "expected 'min max' with max > min");
            ++k;
        }
        if (k != kBrisqueFeatures) corrupt(range, ln, std::to_string(k) + " ranges (expected 36)");
    }
    return m;
}

std::shared_ptr<const Model> model_for(const std::string& dir) {
    static std::mutex mu;
    static std::map<std::string, std::shared_ptr<const Model>> cache;
    const std::string d = dir.empty() ? srcnn_model_dir() : dir;
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(d);
    if (it != cache.end()) return it->second;
    auto m = load(d);
    cache.emplace(d, m);
    return m;
}

}  // namespace

double brisque_score(const BrisqueFeatures& features, const BrisqueOptions& opts) {
    const auto m = model_for(opts.model_dir);
    BrisqueFeatures x;
    for (int k = 0; k < kBrisqueFeatures; ++k) {
        if (!std::isfinite(features[k]))
            throw Error(ErrorCode::InvalidArgument,
                        "brisque_score: feature " + std::to_string(k) + " is not finite");
        x[k] = -1.0 + 2.0 / (m->hi[k] - m->lo[k]) * (features[k] - m->lo[k]);
    }
    double s = 0.0;
    for (std::size_t i = 0; i < m->coef.size(); ++i) {
        double d2 = 0.0;
        for (int k = 0; k < kBrisqueFeatures; ++k) {
            const double d = x[k] - m->sv[i][k];
            d2 += d * d;
        }
        s += m->coef[i] * std::exp(-m->gamma * d2);
    }
    return s - m->rho;
}

}  // namespace upres
