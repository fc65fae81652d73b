// measure_decode_rate (powerinfer/fit_estimate.h): a short real decode of a
// synthetic model of the default model's shape, so that the fit estimate's
// speed carries this engine's kernels, threads and caches, not only the
// memory's read bandwidth (small models are compute-bound).
#include <algorithm>
#include <system_error>

#include "powerinfer/engine.h"
#include "powerinfer/fit_estimate.h"
#include "powerinfer/synthetic.h"

namespace powerinfer {

double measure_decode_rate(const std::filesystem::path& scratch_dir, int threads) {
    SyntheticModelSpec spec = synthetic_preset("smollm2-135m");
    spec.weight_type = "Q4_1";   // the default model's
    spec.write_sidecar = false;  // dense, as a new model runs
    std::error_code ec;
    std::filesystem::create_directories(scratch_dir, ec);
    const std::filesystem::path path = scratch_dir / "powerinfer-decode-probe.gguf";
    // Removed on every way out, a throw included.
    struct Remove {
        std::filesystem::path p;
        ~Remove() {
            std::error_code e;
            std::filesystem::remove(p, e);
        }
    } remove{path};
    write_synthetic_model(path, spec);
    const auto file_bytes = static_cast<double>(std::filesystem::file_size(path));

    LoadOptions o;
    o.model_path = path;
    o.n_threads = threads;
    o.n_ctx = 256;
    o.device = "cpu";
    const std::unique_ptr<Engine> engine = Engine::load(o);
    GenerateRequest r;
    r.prompt = "The decode probe";
    r.max_tokens = 16;
    r.sampling.temperature = 0;
    r.reuse_cache = false;
    double best = 0;
    // The first run warms the caches and the thread pool. A reply that
    // ended early (random weights may pick the end token) does not count.
    for (int run = 0; run < 4; ++run) {
        const GenerateResult g = engine->generate(r, nullptr);
        if (run > 0 && g.generated_tokens >= r.max_tokens / 2)
            best = std::max(best, g.decode_tokens_per_s);
    }
    if (best <= 0) throw EngineError("the decode probe's replies ended before they began");
    return best * file_bytes;
}

}  // namespace powerinfer
