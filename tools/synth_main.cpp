// powerinfer-synth: writes a synthetic llama-architecture GGUF (random
// weights, minimal vocabulary) and its power-law sidecar, for benchmarks on
// machines that cannot download models.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "powerinfer/console.h"
#include "powerinfer/engine.h"
#include "powerinfer/synthetic.h"
#include "powerinfer/utf8_path.h"

namespace {

void usage() {
    std::fprintf(stderr,
                 "usage: powerinfer-synth -o MODEL.gguf [--preset smollm2-135m|llama-7b]\n"
                 "  [--layers N] [--embd N] [--ff N] [--heads N] [--heads-kv N] [--vocab N]\n"
                 "  [--ctx N] [--type Q4_0|Q4_1|Q8_0|F16|...] [--seed N]\n"
                 "  [--zipf S] [--sparsity F] [--pred-rank R] [--no-sidecar]\n");
}

std::string parse_type(const std::string& s) {
    powerinfer::check_synthetic_weight_type(s);
    return s;
}

}  // namespace

int main(int argc_in, char** argv_in) {
    using namespace powerinfer;
    Utf8Arguments args(argc_in, argv_in);
    use_utf8_console();
    const int argc = args.argc();
    char** argv = args.argv();
    try {
        SyntheticModelSpec spec;
        std::string out;
        for (int i = 1; i < argc; ++i) {
            const std::string a = argv[i];
            auto next = [&]() -> std::string {
                if (i + 1 >= argc) throw EngineError("missing value after " + a);
                return argv[++i];
            };
            auto num = [&] { return std::stoll(next()); };
            if (a == "-o" || a == "--output")
                out = next();
            else if (a == "--preset")
                spec = synthetic_preset(next());
            else if (a == "--layers")
                spec.n_layer = num();
            else if (a == "--embd")
                spec.n_embd = num();
            else if (a == "--ff")
                spec.n_ff = num();
            else if (a == "--heads")
                spec.n_head = num();
            else if (a == "--heads-kv")
                spec.n_head_kv = num();
            else if (a == "--vocab")
                spec.n_vocab = num();
            else if (a == "--ctx")
                spec.n_ctx = num();
            else if (a == "--type")
                spec.weight_type = parse_type(next());
            else if (a == "--seed")
                spec.seed = static_cast<uint64_t>(num());
            else if (a == "--zipf")
                spec.zipf_s = std::stod(next());
            else if (a == "--sparsity")
                spec.sparsity = std::stod(next());
            else if (a == "--pred-rank")
                spec.predictor_rank = num();
            else if (a == "--no-sidecar")
                spec.write_sidecar = false;
            else if (a == "--version") {
                std::printf("%s %s\n", "powerinfer-synth", version_string().c_str());
                return 0;
            } else if (a == "-h" || a == "--help") {
                usage();
                return 0;
            } else {
                usage();
                throw EngineError("unknown option " + a);
            }
        }
        if (out.empty()) {
            usage();
            throw EngineError("give the output path with -o");
        }
        const auto t0 = std::chrono::steady_clock::now();
        write_synthetic_model(path_from_utf8(out), spec);
        const double s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::fprintf(stderr, "wrote %s (%lld layers, %lld x %lld, %s)%s in %.1f s\n", out.c_str(),
                     static_cast<long long>(spec.n_layer), static_cast<long long>(spec.n_embd),
                     static_cast<long long>(spec.n_ff), spec.weight_type.c_str(),
                     spec.write_sidecar ? " + sidecar" : "", s);
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "powerinfer-synth: %s\n", e.what());
        return 1;
    }
}
