// config.json <-> Tuning (docs/architecture.md, "Knobs"). Unknown keys are
// ignored so that newer files still load; a known key with a wrong type or
// value is an error naming the key.
#include <cmath>
#include <fstream>
#include <sstream>
#include <system_error>

#include "powerinfer/engine.h"
#include "powerinfer/utf8_path.h"
#include "runtime/json.h"

namespace powerinfer {
namespace {

using runtime::Json;

[[noreturn]] void bad_key(const std::filesystem::path& file, const std::string& key,
                          const std::string& expected) {
    throw EngineError(path_to_utf8(file) + ": \"" + key + "\" must be " + expected +
                      ": fix or delete the file");
}

double number(const Json& root, const std::filesystem::path& file, const std::string& key,
              double fallback, double lo, double hi) {
    const Json* v = root.find(key);
    if (!v) return fallback;
    const double* d = v->as_number();
    if (!d || *d < lo || *d > hi)
        bad_key(file, key, "a number in [" + Json(lo).dump() + ", " + Json(hi).dump() + "]");
    return *d;
}

int integer(const Json& root, const std::filesystem::path& file, const std::string& key,
            int fallback, int lo, int hi) {
    const Json* v = root.find(key);
    if (!v) return fallback;
    const double* d = v->as_number();
    if (!d || *d != std::floor(*d) || *d < lo || *d > hi)
        bad_key(file, key,
                "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return static_cast<int>(*d);
}

}  // namespace

Tuning load_tuning(const std::filesystem::path& config_json) {
    Tuning t;
    std::error_code ec;
    if (!std::filesystem::exists(config_json, ec)) return t;
    std::ifstream in(config_json, std::ios::binary);
    if (!in) throw EngineError(config_json.string() + ": cannot be read: check its permissions");
    std::stringstream ss;
    ss << in.rdbuf();
    const Json root = Json::parse(ss.str(), config_json.string());
    if (!root.as_object())
        throw EngineError(config_json.string() +
                          ": expected a JSON object of settings: fix or delete the file");

    t.hot_neuron_threshold =
        number(root, config_json, "hot_neuron_threshold", t.hot_neuron_threshold, 0.0, 1.0);
    t.predictor_threshold =
        number(root, config_json, "predictor_threshold", t.predictor_threshold, 0.0, 1.0);
    t.cache_window_size =
        integer(root, config_json, "cache_window_size", t.cache_window_size, 0, 1 << 20);
    t.prefetch_depth = integer(root, config_json, "prefetch_depth", t.prefetch_depth, 0, 1024);
    t.chunk_size = integer(root, config_json, "chunk_size", t.chunk_size, 1, 1 << 16);
    t.activation_sparsity =
        number(root, config_json, "activation_sparsity", t.activation_sparsity, -1.0, 0.99);
    if (const Json* v = root.find("force_full_precision_layers")) {
        const auto* arr = v->as_array();
        if (!arr) bad_key(config_json, "force_full_precision_layers", "an array of layer indices");
        for (const Json& e : *arr) {
            const double* d = e.as_number();
            if (!d || *d != std::floor(*d) || *d < 0 || *d > 1e6)
                bad_key(config_json, "force_full_precision_layers", "an array of layer indices");
            t.force_full_precision_layers.push_back(static_cast<int>(*d));
        }
    }
    if (const Json* v = root.find("vram_budget_mb")) {
        // "auto" (or null) means: let the placement decide.
        const std::string* s = v->as_string();
        if (v->is_null() || (s && *s == "auto")) {
            t.vram_budget_mb = -1;
        } else {
            const double* d = v->as_number();
            if (!d || *d != std::floor(*d) || *d < -1 || *d > 1e9)
                bad_key(config_json, "vram_budget_mb", "\"auto\" or a whole number of MiB");
            t.vram_budget_mb = static_cast<int64_t>(*d);
        }
    }
    if (const Json* v = root.find("sparse")) {
        if (!v->as_bool()) bad_key(config_json, "sparse", "true or false");
        t.sparse = *v->as_bool();
    }
    return t;
}

void save_tuning(const std::filesystem::path& config_json, const Tuning& t) {
    Json::Array layers;
    for (int l : t.force_full_precision_layers) layers.emplace_back(l);
    Json root(Json::Object{
        {"hot_neuron_threshold", Json(t.hot_neuron_threshold)},
        {"predictor_threshold", Json(t.predictor_threshold)},
        {"cache_window_size", Json(t.cache_window_size)},
        {"prefetch_depth", Json(t.prefetch_depth)},
        {"chunk_size", Json(t.chunk_size)},
        {"activation_sparsity", Json(t.activation_sparsity)},
        {"force_full_precision_layers", Json(std::move(layers))},
        {"vram_budget_mb", t.vram_budget_mb < 0 ? Json("auto") : Json(t.vram_budget_mb)},
        {"sparse", Json(t.sparse)},
    });
    // Write a temporary file and rename it over the old one, so that a crash
    // never leaves a half-written config.
    std::error_code ec;
    if (config_json.has_parent_path())
        std::filesystem::create_directories(config_json.parent_path(), ec);
    auto tmp = config_json;
    tmp += ".tmp";
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        out << root.dump(2) << '\n';
        out.close();
        if (!out)
            throw EngineError(config_json.string() +
                              ": cannot be written: check the folder's permissions and free space");
    }
    std::filesystem::rename(tmp, config_json, ec);
    if (ec) {
        const std::string why = ec.message();
        std::filesystem::remove(tmp, ec);
        throw EngineError(config_json.string() + ": cannot be replaced: " + why);
    }
}

}  // namespace powerinfer
