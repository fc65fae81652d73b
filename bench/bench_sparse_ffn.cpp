// The FFN alone, dense against the exact sparse executor, on the inputs a
// real text gives: a teacher-forced pass over held-out text (one token at a
// time, as decoding) records every layer's normalised FFN input; then each
// executor runs over all of them, alternating run by run, median of --runs.
// This isolates the part of a token that sparse mode changes (bench_decode
// measures the whole token).
//
//   bench_sparse_ffn MODEL SIDECAR [--text tests/data/frankenstein.txt]
//                    [--skip 100000] [--tokens 64] [--threads 1] [--runs 7]
//                    [--sparsity S] [--dump FILE]
//
// --dump FILE writes the recorded FFN inputs instead of timing (for offline
// studies of predictors): int32 n_layer, n_embd, count, then per record an
// int32 layer and n_embd floats, in the order the forward pass ran them.
//
// Prints the CPU, a table (microseconds per token for all layers' FFNs,
// the ratio, delivered sparsity and the fraction of up rows computed) and a
// final JSON line.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gguf/gguf.h"
#include "model/model.h"
#include "sparse/exact_ffn.h"
#include "sparse/sidecar.h"
#include "tensor/matmul.h"
#include "tensor/quant.h"
#include "tensor/sparse_down.h"
#include "tokenizer/tokenizer.h"

using namespace powerinfer;

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// Runs the dense FFN and keeps a copy of every single-token input.
class Recorder final : public model::FfnExecutor {
public:
    Recorder(model::FfnExecutor& dense, int64_t n_embd) : dense_(dense), n_embd_(n_embd) {}
    void run(int layer, const float* x, int64_t n_tokens, float* out) override {
        if (n_tokens == 1) inputs.push_back({layer, std::vector<float>(x, x + n_embd_)});
        dense_.run(layer, x, n_tokens, out);
    }
    std::vector<std::pair<int, std::vector<float>>> inputs;

private:
    model::FfnExecutor& dense_;
    int64_t n_embd_;
};

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr,
                     "usage: bench_sparse_ffn MODEL SIDECAR [--text F] [--skip CHARS] "
                     "[--tokens N] [--threads T] [--runs R] [--sparsity S] [--dump FILE]\n");
        return 2;
    }
    const std::string model_path = argv[1], sidecar_path = argv[2];
    std::string text_path = "tests/data/frankenstein.txt";
    size_t skip = 100000;
    int n_tokens = 64, threads = 1, runs = 7;
    double sparsity = -1;
    std::string dump_path;
    for (int i = 3; i < argc; ++i) {
        const std::string a = argv[i];
        const std::string v = i + 1 < argc ? argv[i + 1] : "";
        ++i;
        if (a == "--text")
            text_path = v;
        else if (a == "--skip")
            skip = std::stoul(v);
        else if (a == "--tokens")
            n_tokens = std::stoi(v);
        else if (a == "--threads")
            threads = std::stoi(v);
        else if (a == "--runs")
            runs = std::stoi(v);
        else if (a == "--sparsity")
            sparsity = std::stod(v);
        else if (a == "--dump")
            dump_path = v;
        else {
            std::fprintf(stderr, "error: unknown option %s\n", a.c_str());
            return 2;
        }
    }
    try {
        std::ifstream in(text_path);
        if (!in) throw std::runtime_error("cannot read " + text_path);
        std::stringstream ss;
        ss << in.rdbuf();
        const std::string text = ss.str().substr(std::min(skip, ss.str().size()));
        std::shared_ptr<const gguf::GgufFile> file = gguf::GgufFile::open(model_path);
        const auto tok = Tokenizer::from_gguf(*file);
        auto ids = tok->encode(text.substr(0, 20000), false, false);
        if (ids.size() < size_t(n_tokens)) throw std::runtime_error("text too short");
        ids.resize(size_t(n_tokens));

        tensor::ThreadPool pool(threads);
        model::Model m(file, pool, 1024, 256);
        const int64_t n_embd = m.config().n_embd, n_layer = m.config().n_layer;
        Recorder rec(m.dense_ffn(), n_embd);
        m.set_ffn_executor(&rec);
        std::vector<float> logits(size_t(m.config().n_vocab));
        for (int i = 0; i < n_tokens; ++i) m.forward(&ids[size_t(i)], 1, i, 1, logits.data());
        m.set_ffn_executor(nullptr);
        if (!dump_path.empty()) {
            std::ofstream f(dump_path, std::ios::binary);
            const int32_t head[3] = {int32_t(n_layer), int32_t(n_embd), int32_t(rec.inputs.size())};
            f.write(reinterpret_cast<const char*>(head), sizeof head);
            for (const auto& [layer, x] : rec.inputs) {
                const int32_t l = layer;
                f.write(reinterpret_cast<const char*>(&l), sizeof l);
                f.write(reinterpret_cast<const char*>(x.data()),
                        std::streamsize(x.size() * sizeof(float)));
            }
            if (!f) throw std::runtime_error("cannot write " + dump_path);
            std::printf("wrote %zu FFN inputs to %s\n", rec.inputs.size(), dump_path.c_str());
            return 0;
        }

        std::vector<model::FfnWeights> ffn;
        for (int64_t l = 0; l < n_layer; ++l) ffn.push_back(m.ffn_weights(int(l)));
        const sparse::Sidecar sc = sparse::read_sidecar(sidecar_path, sparse::model_hash(*file));
        sparse::ExactSparseFfn exact(pool, ffn, sc);
        exact.set_level(sparsity);

        std::vector<float> out(static_cast<size_t>(n_embd));
        std::vector<double> dense_us, sparse_us;
        int64_t active = 0, up_rows = 0, total = 0;
        for (int r = 0; r < runs + 1; ++r) {  // the first pair warms caches
            auto t0 = Clock::now();
            for (const auto& [layer, x] : rec.inputs) m.dense_ffn().run(layer, x.data(), 1, out.data());
            const double d = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
            t0 = Clock::now();
            int64_t a = 0, u = 0;
            for (const auto& [layer, x] : rec.inputs) {
                const auto c = exact.run(layer, x.data(), out.data());
                a += c.active;
                u += c.up_rows;
            }
            const double s = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
            if (r == 0) continue;
            dense_us.push_back(d / n_tokens);
            sparse_us.push_back(s / n_tokens);
            active += a;
            up_rows += u;
            total += int64_t(rec.inputs.size()) * ffn[0].gate.rows;
        }
        // The down product alone: dense matvec against the column-sparse one
        // over the same active sets (the exact executor's, recomputed here
        // from the dense h with each layer's threshold at this level).
        {
            std::vector<tensor::NeuronMajorDown> nm;
            for (const auto& w : ffn)
                nm.push_back(tensor::neuron_major_supported(w.down)
                                 ? tensor::make_neuron_major_down(w.down)
                                 : tensor::NeuronMajorDown{});
            const int64_t n_ff = ffn[0].gate.rows;
            std::vector<tensor::SparseDownInput> ins(rec.inputs.size());
            std::vector<std::vector<float>> hs(rec.inputs.size());
            std::mt19937 rng(1);
            for (size_t k = 0; k < rec.inputs.size(); ++k) {
                std::vector<int32_t> ids;
                std::vector<float> hv;
                hs[k].resize(size_t(n_ff));
                for (int32_t i = 0; i < n_ff; ++i) {
                    hs[k][size_t(i)] = std::uniform_real_distribution<float>(-1, 1)(rng);
                    if (rng() % 2) {
                        ids.push_back(i);
                        hv.push_back(hs[k][size_t(i)]);
                    }
                }
                tensor::prepare_sparse_down(ids.data(), hv.data(), int64_t(ids.size()), ins[k]);
            }
            std::vector<double> dd, sd;
            for (int r = 0; r < runs + 1; ++r) {
                auto t0 = Clock::now();
                for (size_t k = 0; k < rec.inputs.size(); ++k)
                    tensor::matvec(pool, ffn[size_t(rec.inputs[k].first)].down, hs[k].data(), out.data());
                const double d = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
                t0 = Clock::now();
                for (size_t k = 0; k < rec.inputs.size(); ++k)
                    if (!nm[size_t(rec.inputs[k].first)].empty())
                        tensor::sparse_down(pool, nm[size_t(rec.inputs[k].first)], ins[k], out.data());
                const double s2 = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
                if (r == 0) continue;
                dd.push_back(d / n_tokens);
                sd.push_back(s2 / n_tokens);
            }
            int64_t nm_layers = 0;
            for (const auto& d : nm) nm_layers += !d.empty();
            std::printf(
                "down alone, random 50%% active: dense %.0f us/token (all %zu layers), sparse %.0f "
                "us/token (the %lld layers with a neuron-major copy)\n",
                median(dd), nm.size(), median(sd), static_cast<long long>(nm_layers));
        }
        const double md = median(dense_us), ms = median(sparse_us);
        const double delivered = 1.0 - double(active) / double(total);
        const double up_frac = double(up_rows) / double(total);
        std::printf("CPU: %s\nmodel: %s, SIMD: %s, %d threads, %d tokens of %s, median of %d\n\n",
                    tensor::cpu_model().c_str(),
                    std::filesystem::path(model_path).filename().string().c_str(),
                    tensor::simd_level().c_str(), threads, n_tokens,
                    std::filesystem::path(text_path).filename().string().c_str(), runs);
        std::printf(
            "| threads | dense FFN us/token | sparse FFN us/token | ratio | delivered sparsity | "
            "up rows computed |\n|---|---|---|---|---|---|\n| %d | %.0f | %.0f | %.3fx | %.3f | "
            "%.3f |\n",
            threads, md, ms, md / ms, delivered, up_frac);
        std::printf(
            "{\"dense_us\": %.1f, \"sparse_us\": %.1f, \"speedup\": %.4f, \"sparsity\": %.4f, "
            "\"up_fraction\": %.4f, \"threads\": %d}\n",
            md, ms, md / ms, delivered, up_frac, threads);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
    return 0;
}
