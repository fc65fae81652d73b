// powerinfer-calibrate: profiles a model over a corpus, trains the
// activation predictors and writes MODEL.powerinfer.gguf.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>

#include "powerinfer/calibration.h"
#include "powerinfer/console.h"
#include "powerinfer/engine.h"
#include "powerinfer/evaluation.h"
#include "powerinfer/placement.h"
#include "powerinfer/utf8_path.h"

namespace {

void usage() {
    std::fprintf(
        stderr,
        "usage: powerinfer-calibrate -m MODEL.gguf --corpus FILE [--tokens N (8192)]\n"
        "  [--target-sparsity S[,S2,...]] (default: the measured recommendation, the highest\n"
        "  level whose held-out perplexity rise is within --max-ppl-rise; a given target is\n"
        "  the default level and skips the curve unless --curve-tokens is given)\n"
        "  [--curve-tokens N (2048; 0: no curve)] [--curve-window N (256)]\n"
        "  [--curve-levels L1,L2,...] [--max-ppl-rise F (0.02)]\n"
        "  [--no-curve-speed] (default: decoding is timed at the levels within the bound and\n"
        "  the fastest is the default; a higher level only where it decodes 3%% faster)\n"
        "  [--rank-max R] [--target-recall R] [--samples N]\n"
        "  [--epochs N] [-t THREADS] [--f32-predictors] [-o SIDECAR]\n"
        "  [--predictors | --no-predictors] (default: predictors only when a CUDA GPU is\n"
        "  present; the CPU's exact path needs none, a GPU split does) [--up-sigmas K (4)]\n"
        "       powerinfer-calibrate -m MODEL --eval-fidelity PROMPTS_FILE [-n N]\n"
        "  [--sidecar PATH] [--ppl TEXT] [--ppl-windows K] [--hot-neuron-threshold F]\n"
        "  [--predictor-threshold F] [--prefetch-depth N] [--cache-window N]\n"
        "  [--vram-budget-mb N] [-t THREADS] [--device-threads N] [--down-type Q8_0|F16|F32]\n"
        "  [--validate-every N (0: off; recall/error samples cost a dense FFN)]\n"
        "  (one JSON line per prompt, then a summary line)\n");
}

}  // namespace

int main(int argc_in, char** argv_in) {
    using namespace powerinfer;
    Utf8Arguments args(argc_in, argv_in);
    use_utf8_console();
    const int argc = args.argc();
    char** argv = args.argv();
    try {
        CalibrationOptions opt;
        opt.target_sparsity = -1;  // the measured recommendation unless given
        bool curve_given = false;
        FidelityOptions fid;
        auto list = [](const std::string& v) {
            std::vector<double> out;
            for (size_t p = 0; p <= v.size();) {
                const size_t q = std::min(v.find(',', p), v.size());
                size_t used = 0;
                const std::string item = v.substr(p, q - p);
                const double x = std::stod(item, &used);
                if (used != item.size()) throw EngineError("not a number: '" + item + "'");
                out.push_back(x);
                p = q + 1;
            }
            return out;
        };
        std::string prompts_file;
        int predictors = -1;  // -1: only when a CUDA GPU is present
        for (int i = 1; i < argc; ++i) {
            const std::string a = argv[i];
            auto next = [&]() -> std::string {
                if (i + 1 >= argc) throw EngineError("missing value after " + a);
                return argv[++i];
            };
            if (a == "-m" || a == "--model")
                opt.model_path = path_from_utf8(next());
            else if (a == "--corpus")
                opt.corpus_path = path_from_utf8(next());
            else if (a == "-o" || a == "--output")
                opt.output_path = path_from_utf8(next());
            else if (a == "--tokens")
                opt.tokens = std::stoll(next());
            else if (a == "--target-sparsity") {
                // One value, or several separated by commas (one corpus run).
                opt.target_sparsities = list(next());
                opt.target_sparsity = opt.target_sparsities.front();
                // A chosen target is the sidecar's default level, and no
                // curve is measured unless --curve-tokens asks for one.
                opt.default_to_recommended = false;
                if (!curve_given) opt.curve_tokens = 0;
            } else if (a == "--curve-tokens") {
                opt.curve_tokens = std::stoll(next());
                curve_given = true;
            } else if (a == "--curve-window")
                opt.curve_window = std::stoll(next());
            else if (a == "--curve-levels")
                opt.curve_levels = list(next());
            else if (a == "--no-curve-speed")
                opt.curve_speed = false;
            else if (a == "--max-ppl-rise")
                opt.max_ppl_rise = std::stod(next());
            else if (a == "--rank-max")
                opt.rank_max = std::stoll(next());
            else if (a == "--target-recall")
                opt.target_recall = std::stod(next());
            else if (a == "--samples")
                opt.max_samples = std::stoll(next());
            else if (a == "--epochs")
                opt.epochs = std::stoi(next());
            else if (a == "-t" || a == "--threads")
                opt.n_threads = std::stoi(next());
            else if (a == "--no-predictors")
                predictors = 0;
            else if (a == "--predictors")
                predictors = 1;
            else if (a == "--up-sigmas")
                opt.up_sigmas = std::stod(next());
            else if (a == "--f32-predictors")
                opt.f16_predictors = false;
            else if (a == "--eval-fidelity")
                prompts_file = next();
            else if (a == "-n")
                fid.n_predict = std::stoi(next());
            else if (a == "--sidecar")
                fid.sidecar_path = path_from_utf8(next());
            else if (a == "--ppl")
                fid.ppl_text = path_from_utf8(next());
            else if (a == "--ppl-windows")
                fid.ppl_windows = std::stoll(next());
            else if (a == "--hot-neuron-threshold")
                fid.tuning.hot_neuron_threshold = std::stod(next());
            else if (a == "--predictor-threshold")
                fid.tuning.predictor_threshold = std::stod(next());
            else if (a == "--prefetch-depth")
                fid.tuning.prefetch_depth = std::stoi(next());
            else if (a == "--cache-window")
                fid.tuning.cache_window_size = std::stoi(next());
            else if (a == "--vram-budget-mb")
                fid.tuning.vram_budget_mb = std::stoll(next());
            else if (a == "--device-threads")
                fid.device_threads = std::stoi(next());
            else if (a == "--down-type")
                fid.down_type = next();
            else if (a == "--validate-every")
                fid.validate_every = std::stoi(next());
            else if (a == "--version") {
                std::printf("%s %s\n", "powerinfer-calibrate", version_string().c_str());
                return 0;
            } else if (a == "-h" || a == "--help") {
                usage();
                return 0;
            } else {
                usage();
                throw EngineError("unknown option " + a);
            }
        }
        if (!prompts_file.empty()) {
            std::ifstream in(path_from_utf8(prompts_file));
            if (!in) throw EngineError("cannot read " + prompts_file);
            for (std::string line; std::getline(in, line);) {
                if (!line.empty()) fid.prompts.push_back(line);
            }
            fid.model_path = opt.model_path;
            fid.n_threads = opt.n_threads;
            fid.on_json_line = [](const std::string& s) { std::printf("%s\n", s.c_str()); };
            const auto r = evaluate_fidelity(fid);
            std::fprintf(stderr, "%s\n%s", r.sparse_status.c_str(), r.layer_table.c_str());
            std::printf("%s\n", r.summary_json().c_str());
            return 0;
        }
        if (opt.model_path.empty() || opt.corpus_path.empty()) {
            usage();
            throw EngineError("give the model (-m) and a text corpus (--corpus)");
        }
        for (double t : opt.target_sparsities) {
            if (!(t >= 0 && t < 1)) throw EngineError("--target-sparsity values must be in [0, 1)");
        }
        for (double t : opt.curve_levels) {
            if (!(t >= 0 && t < 1)) throw EngineError("--curve-levels values must be in [0, 1)");
        }
        if (opt.curve_tokens < 0) throw EngineError("--curve-tokens must be >= 0 (0: no curve)");
        if (opt.curve_window < 8 || opt.curve_window > opt.window)
            throw EngineError("--curve-window must be in [8, " + std::to_string(opt.window) + "]");
        if (!(opt.max_ppl_rise > 0 && opt.max_ppl_rise < 1))
            throw EngineError("--max-ppl-rise must be a fraction in (0, 1), e.g. 0.02");
        if (predictors < 0) {
            const GpuStatus gpu = gpu_status("auto");
            predictors = gpu.present ? 1 : 0;
            std::fprintf(stderr, "calibrate: %s: %s\n", gpu.description.c_str(),
                         predictors ? "training predictors for the GPU split"
                                    : "no predictors (the CPU computes activity exactly; "
                                      "--predictors trains them for a GPU)");
        }
        opt.train_predictors = predictors == 1;
        opt.log = [](const std::string& s) { std::fprintf(stderr, "%s\n", s.c_str()); };
        const auto r = calibrate_model(opt);
        for (const auto& t : r.targets) {
            std::printf(
                "target sparsity %.2f\nlayer  rank  recall  precision  predicted_active  "
                "threshold\n",
                t.target_sparsity);
            double rec = 0, act = 0;
            for (size_t l = 0; l < t.layers.size(); ++l) {
                const auto& L = t.layers[l];
                std::printf("%5zu  %4lld  %6.3f  %9.3f  %16.3f  %9.4g\n", l,
                            static_cast<long long>(L.rank), L.recall, L.precision,
                            L.predicted_active, L.threshold);
                rec += L.recall;
                act += L.predicted_active;
            }
            const double n = t.layers.empty() ? 1.0 : double(t.layers.size());
            std::printf("mean recall %.3f, mean predicted active %.3f\nwrote %s\n", rec / n,
                        act / n, path_to_utf8(t.sidecar_path).c_str());
        }
        if (!r.curve.points.empty()) {
            std::printf(
                "sparsity curve: %lld held-out tokens per level, dense perplexity %.4f\n"
                "level  delivered  ppl_rise  mean_kl  top1   decode vs dense  bytes vs dense\n",
                static_cast<long long>(r.curve.tokens_scored), r.curve.dense_ppl);
            for (const auto& p : r.curve.points) {
                std::printf("%5.2f  %9.3f  %+7.2f%%  %7.4f  %5.3f", p.level, p.delivered,
                            100.0 * p.ppl_rise, p.mean_kl, p.top1);
                if (p.speed > 0)
                    std::printf("  %6.3fx         ", p.speed);
                else
                    std::printf("  not timed      ");
                if (p.bytes > 0)
                    std::printf("  %.3f\n", p.bytes);
                else
                    std::printf("  -\n");
            }
            if (r.curve.recommended >= 0)
                std::printf("recommended sparsity %.2f (perplexity within +%.0f%%)\n",
                            r.curve.recommended, 100.0 * r.curve.bound);
            else
                std::printf("recommended sparsity none (no level within +%.0f%%)\n",
                            100.0 * r.curve.bound);
        }
        if (!r.curve_note.empty()) std::printf("note: %s\n", r.curve_note.c_str());
        std::printf("default sparsity %.2f (activation_sparsity -1)\n", r.curve.default_level);
        if (r.input_default_level >= 0) {
            std::printf("sparse engine v3 (--sparse-engine v3): default %.2f, timed",
                        r.input_default_level);
            for (const auto& p : r.input_points)
                std::printf(" %.2f: %.3fx%s", p.level, p.speed,
                            &p == &r.input_points.back() ? "\n" : ",");
        }
        std::printf("tokens %lld, run %.1f s, curve %.1f s, training %.1f s\n",
                    static_cast<long long>(r.tokens), r.run_seconds, r.curve_seconds,
                    r.train_seconds);
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "powerinfer-calibrate: %s\n", e.what());
        return 1;
    }
}
