// The fit estimate's decode speed against measured decodes, in one run:
// for each model, the read-bandwidth bound (measure_host_read_bandwidth), the
// estimate from the decode probe (measure_decode_rate: a synthetic model of
// the default model's shape) and the engine's real decode of the file
// (greedy, the same threads), medians of several rounds interleaved so that
// a busy neighbour hits all three alike.
//   bench_fit_estimate [--threads N] [--rounds N] [--tokens N] model.gguf...
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "powerinfer/engine.h"
#include "powerinfer/fit_estimate.h"
#include "powerinfer/model_file.h"

namespace {

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

std::string cpu_model() {
    std::ifstream f("/proc/cpuinfo");
    std::string line;
    while (std::getline(f, line))
        if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
    return "unknown CPU";
}

powerinfer::FitModelShape shape_of(const std::filesystem::path& path) {
    const powerinfer::ModelFileInfo i = powerinfer::inspect_model_file(path);
    powerinfer::FitModelShape s;
    s.weight_bytes = i.file_bytes;
    s.n_params = i.n_params;
    s.n_layers = int(i.n_layers);
    s.n_embd = int(i.n_embd);
    s.n_head = int(i.n_head);
    s.n_head_kv = int(i.n_head_kv);
    s.n_ff = int(i.n_ff);
    s.n_vocab = int(i.n_vocab);
    return s;
}

}  // namespace

int main(int argc, char** argv) {
    int threads = 2, rounds = 5, tokens = 64;
    std::vector<std::filesystem::path> models;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--threads" && i + 1 < argc)
            threads = std::atoi(argv[++i]);
        else if (a == "--rounds" && i + 1 < argc)
            rounds = std::atoi(argv[++i]);
        else if (a == "--tokens" && i + 1 < argc)
            tokens = std::atoi(argv[++i]);
        else
            models.emplace_back(a);
    }
    if (models.empty()) {
        std::fprintf(stderr,
                     "usage: bench_fit_estimate [--threads N] [--rounds N] [--tokens N] "
                     "model.gguf...\n");
        return 2;
    }
    const std::filesystem::path scratch =
        std::filesystem::temp_directory_path() / "bench_fit_estimate";
    std::vector<double> bandwidth, probe;
    std::vector<std::vector<double>> measured(models.size());
    try {
        std::vector<std::unique_ptr<powerinfer::Engine>> engines;
        for (const auto& m : models) {
            powerinfer::LoadOptions o;
            o.model_path = m;
            o.n_threads = threads;
            o.n_ctx = 1024;
            o.device = "cpu";
            o.tuning.sparse = false;  // a new model runs dense
            engines.push_back(powerinfer::Engine::load(o));
        }
        powerinfer::GenerateRequest r;
        r.messages = {{"user", "What is a GGUF file?"}};
        r.max_tokens = tokens;
        r.sampling.temperature = 0;
        r.reuse_cache = false;
        for (auto& e : engines) e->generate(r, nullptr);  // warm-up
        for (int round = 0; round < rounds; ++round) {
            bandwidth.push_back(powerinfer::measure_host_read_bandwidth(threads));
            probe.push_back(powerinfer::measure_decode_rate(scratch, threads));
            for (size_t i = 0; i < engines.size(); ++i)
                measured[i].push_back(engines[i]->generate(r, nullptr).decode_tokens_per_s);
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_fit_estimate: %s\n", e.what());
        return 1;
    }
    const double bw = median(bandwidth), rate = median(probe);
    std::printf("CPU: %s, %d threads, %d rounds (medians), %d decoded tokens per reply\n",
                cpu_model().c_str(), threads, rounds, tokens);
    std::printf(
        "read bandwidth %.2f GB/s (min %.2f, max %.2f); decode probe %.2f GB/s of "
        "weights (min %.2f, max %.2f)\n\n",
        bw / 1e9, *std::min_element(bandwidth.begin(), bandwidth.end()) / 1e9,
        *std::max_element(bandwidth.begin(), bandwidth.end()) / 1e9, rate / 1e9,
        *std::min_element(probe.begin(), probe.end()) / 1e9,
        *std::max_element(probe.begin(), probe.end()) / 1e9);
    std::printf(
        "| model | bytes per token | bound (up to) | estimate (probe) | measured decode | "
        "bound / measured | estimate / measured |\n");
    std::printf("| --- | --- | --- | --- | --- | --- | --- |\n");
    for (size_t i = 0; i < models.size(); ++i) {
        const powerinfer::FitModelShape s = shape_of(models[i]);
        powerinfer::FitMachine m;
        m.host_read_bytes_per_s = bw;
        const powerinfer::FitEstimate bound = powerinfer::estimate_fit(s, 2048, m);
        m.decode_bytes_per_s = rate;
        const powerinfer::FitEstimate est = powerinfer::estimate_fit(s, 2048, m);
        const double tps = median(measured[i]);
        std::printf("| %s | %lld | %.1f tok/s | %.1f tok/s | %.1f tok/s | %.2f | %.2f |\n",
                    models[i].filename().string().c_str(),
                    static_cast<long long>(s.weight_bytes + powerinfer::fit_kv_cache_bytes(s, 512)),
                    bound.tokens_per_s, est.tokens_per_s, tps, bound.tokens_per_s / tps,
                    est.tokens_per_s / tps);
    }
    return 0;
}
