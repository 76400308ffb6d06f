// The BRISQUE model: libsvm's text format of the epsilon-SVR (RBF kernel) and the features'
// ranges, read once per directory; the prediction (upres/brisque.hpp).
#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
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

std::ifstream open(const std::string& path) {
    std::ifstream f(path);
    if (!f)
        throw Error(ErrorCode::IoError,
                    "cannot open the brisque model file '" + path +
                        "' (set model_dir, or UPRES_MODEL_DIR, to the "
                        "folder holding brisque_svm.txt and brisque_range.txt)");
    return f;
}

std::shared_ptr<const Model> load(const std::string& dir) {
    auto m = std::make_shared<Model>();
    const std::string svm = dir + "/brisque_svm.txt", range = dir + "/brisque_range.txt";
    {
        std::ifstream f = open(svm);
        std::string line;
        int ln = 0;
        bool in_sv = false, have_gamma = false, have_rho = false;
        while (std::getline(f, line)) {
            ++ln;
            if (line.empty()) continue;
            std::istringstream is(line);
            if (!in_sv) {
                std::string key, v;
                is >> key >> v;
                if (key == "svm_type" && v != "epsilon_svr")
                    corrupt(svm, ln, "svm_type " + v + " (allowed: epsilon_svr)");
                if (key == "kernel_type" && v != "rbf")
                    corrupt(svm, ln, "kernel_type " + v + " (allowed: rbf)");
                if (key == "gamma")
                    have_gamma = static_cast<bool>(std::istringstream(v) >> m->gamma);
                if (key == "rho") have_rho = static_cast<bool>(std::istringstream(v) >> m->rho);
                if (key == "SV") in_sv = true;
                continue;
            }
            double c;
            if (!(is >> c))
                corrupt(svm, ln, "a support vector line must start with its coefficient");
            BrisqueFeatures s{};
            std::string tok;
            while (is >> tok) {
                const auto colon = tok.find(':');
                int idx = 0;
                double v = 0;
                std::istringstream a(tok.substr(0, colon == std::string::npos ? 0 : colon)),
                    b(colon == std::string::npos ? "" : tok.substr(colon + 1));
                if (colon == std::string::npos || !(a >> idx) || !(b >> v) || idx < 1 ||
                    idx > kBrisqueFeatures)
                    corrupt(svm, ln, "'" + tok + "' is not index:value with index 1..36");
                s[idx - 1] = v;
            }
            m->coef.push_back(c);
            m->sv.push_back(s);
        }
        if (!have_gamma || !have_rho || m->coef.empty())
            corrupt(svm, ln, "the file ends without gamma, rho or support vectors");
    }
    {
        std::ifstream f = open(range);
        std::string line;
        int ln = 0, k = 0;
        while (std::getline(f, line)) {
            ++ln;
            if (line.empty() || line[0] == '#') continue;
            if (k >= kBrisqueFeatures) corrupt(range, ln, "more than 36 ranges");
            std::istringstream is(line);
            if (!(is >> m->lo[k] >> m->hi[k]) || !(m->hi[k] > m->lo[k]))
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
