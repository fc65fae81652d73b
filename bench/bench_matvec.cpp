// Quantized matvec throughput against the machine's memory bandwidth.
//
// For each weight type, y = W x on an 11008 x 4096 matrix (a 7B model's FFN
// shape), median of several runs, at each thread count; next to it the
// memcpy and read bandwidth of buffers larger than the L3 cache, measured in
// the same run. Decode speed is bound by how close matvec gets to memory
// bandwidth, so "% of copy" is the number to watch.
//
// Options: kUsage below (--help prints it).
//
// --layout colsparse runs the input-major copy (tensor/input_major.h) with
// the --sparsity shares of the inputs skipped (a random kept set per run):
// its GB/s count the bytes it reads (kept columns and the used groups' scales).
// --layout colread reads the kept columns' codes of the same copies with no
// arithmetic, paired with a front-to-back read of as many bytes: what the
// column product's access pattern alone costs (one tile of outputs).
// --layout copydense runs the dense product from the input-major copy
// (input_major_matmul; --batch tokens), paired with the dense one.
// --layout u4rows runs the sparse head's preview format (tensor/u4_rows.h:
// 4-bit rows with a float scale and offset each, an int8 input) of the same
// shape, built from the type's dequantized matrix, once per type asked for.
// --layout panels runs the row-panel layout (tensor/panels.h; Q4_1 on
// AVX-512) where the level has it; --batch N > 1 times matmul over N tokens
// (a decode step over N sequences) instead of matvec.
//
// The matrices rotate through copies totalling --working-set-mb so that the
// weights come from DRAM; 0 keeps one copy (cache-resident for small shapes,
// which shows the kernels' compute limit). --stat min reports the fastest run instead of the
// median: on a shared, busy machine it estimates what the kernels do when they get the CPU.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "common/ggml_types.h"
#include "common/weight_memory.h"
#include "tensor/input_major.h"
#include "tensor/matmul.h"
#include "tensor/panels.h"
#include "tensor/quant.h"
#include "tensor/thread_pool.h"
#include "tensor/u4_rows.h"

using namespace powerinfer;
using namespace powerinfer::tensor;
using Clock = std::chrono::steady_clock;

namespace {

constexpr size_t kBigBuffer = size_t(512) << 20;  // well past any L3
size_t g_working_set = size_t(160) << 20;         // matrices rotate through this much

std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream ss(s);
    for (std::string item; std::getline(ss, item, ',');)
        if (!item.empty()) out.push_back(item);
    return out;
}

bool g_use_min = false;

std::string join(const std::vector<std::string>& v) {
    std::string out;
    for (const auto& s : v) out += (out.empty() ? "" : ",") + s;
    return out;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return g_use_min ? v.front() : v[v.size() / 2];
}

// Random bytes with small fp16 scales: valid blocks of every format, much
// faster to make than quantizing 45M floats.
std::vector<uint8_t> random_matrix(GgmlType t, int64_t rows, int64_t cols, std::mt19937& rng) {
    const auto tr = ggml_traits(t);
    const size_t row_bytes = *ggml_row_bytes(t, static_cast<uint64_t>(cols));
    std::vector<uint8_t> m(row_bytes * static_cast<size_t>(rows));
    if (tr.block_elems == 1) {
        std::normal_distribution<float> d(0.0f, 0.05f);
        std::vector<float> row(static_cast<size_t>(cols));
        for (int64_t r = 0; r < rows; ++r) {
            for (auto& v : row) v = d(rng);
            quantize_row_ref(t, row.data(), m.data() + r * row_bytes, cols);
        }
        return m;
    }
    std::uniform_int_distribution<uint32_t> word;
    for (size_t i = 0; i + 4 <= m.size(); i += 4) {
        const uint32_t w = word(rng);
        std::memcpy(&m[i], &w, 4);
    }
    int offsets[2] = {0, -1};
    if (t == GgmlType::Q4_1 || t == GgmlType::Q5_1 || t == GgmlType::Q4_K || t == GgmlType::Q5_K)
        offsets[1] = 2;
    if (t == GgmlType::Q6_K) offsets[0] = 208;
    const uint16_t scale = fp32_to_fp16(0.01f);
    for (size_t b = 0; b < m.size(); b += tr.block_bytes)
        for (int off : offsets)
            if (off >= 0) std::memcpy(&m[b + off], &scale, 2);
    return m;
}

// Eight 64-bit sums of n bytes at p (n a multiple of 64): a read with no
// arithmetic to speak of (eight independent sums keep the loop far faster
// than memory).
uint64_t read_bytes(const uint8_t* p, size_t n) {
    uint64_t acc[8] = {};
    for (size_t i = 0; i < n; i += 64)
        for (int k = 0; k < 8; ++k) {
            uint64_t v;
            std::memcpy(&v, p + i + 8 * k, 8);
            acc[k] += v;
        }
    uint64_t s = 0;
    for (uint64_t a : acc) s += a;
    return s;
}

// memcpy (counted as read + write traffic, as STREAM does) and a plain
// read loop over a buffer larger than the L3 cache, split over the pool.
struct Bandwidth {
    double copy_gbs = 0;
    double read_gbs = 0;
};

Bandwidth measure_bandwidth(ThreadPool& pool, int reps) {
    std::vector<uint8_t> src(kBigBuffer, 1), dst(kBigBuffer, 0);
    std::vector<double> copy_s, read_s;
    const int64_t chunks = 4096;
    const size_t chunk = kBigBuffer / chunks;
    std::vector<uint64_t> sums(static_cast<size_t>(pool.size()), 0);
    for (int rep = 0; rep < reps + 1; ++rep) {
        auto t0 = Clock::now();
        pool.parallel_for(chunks, [&](int64_t b, int64_t e, int) {
            std::memcpy(dst.data() + b * chunk, src.data() + b * chunk,
                        static_cast<size_t>(e - b) * chunk);
        });
        const double c = std::chrono::duration<double>(Clock::now() - t0).count();
        t0 = Clock::now();
        pool.parallel_for(chunks, [&](int64_t b, int64_t e, int w) {
            sums[static_cast<size_t>(w)] +=
                read_bytes(src.data() + b * chunk, static_cast<size_t>(e - b) * chunk);
        });
        const double r = std::chrono::duration<double>(Clock::now() - t0).count();
        if (rep == 0) continue;  // first touch / page faults
        copy_s.push_back(c);
        read_s.push_back(r);
    }
    uint64_t total = 0;
    for (auto s : sums) total += s;
    if (total == 42) std::printf(" ");  // keeps the read loop alive
    return {2.0 * kBigBuffer / median(copy_s) / 1e9, kBigBuffer / median(read_s) / 1e9};
}

std::vector<int> threads = {1, 2};
std::vector<double> sparsities = {0.0, 0.3, 0.5, 0.7};
int reps = 9;

// A random kept set: each of the cols inputs kept with probability 1 - sp.
void draw_kept(int64_t cols, double sp, std::mt19937& pick, std::vector<int32_t>& ids) {
    ids.clear();
    for (int32_t j = 0; j < cols; ++j)
        if (std::uniform_real_distribution<double>(0, 1)(pick) >= sp) ids.push_back(j);
}

// The input-major copies of `mats` and, for the dense side of a pairing
// (what decode runs), their row panels where this level has them
// (tensor/panels.h; empty: the rows). False where the type has no
// input-major form.
bool copies_and_panels(GgmlType type, const std::vector<std::vector<uint8_t>>& mats, int64_t rows,
                       int64_t cols, size_t row_bytes, std::vector<InputMajorMatrix>& im,
                       std::vector<WeightVector<uint8_t>>& panels) {
    if (!input_major_supported({type, mats[0].data(), rows, cols, row_bytes})) return false;
    for (const auto& m : mats) {
        im.push_back(make_input_major({type, m.data(), rows, cols, row_bytes}));
        panels.push_back(pack_panels({type, m.data(), rows, cols, row_bytes}));
    }
    return true;
}

// The input-major copies of `mats`, at each --sparsity level and thread count.
void run_colsparse(const std::string& name, GgmlType type, const std::string& level,
                   const std::vector<std::vector<uint8_t>>& mats, int64_t rows, int64_t cols,
                   size_t row_bytes, const std::vector<float>& x, std::vector<float>& y,
                   const std::vector<Bandwidth>& bw) {
    std::vector<InputMajorMatrix> im;
    std::vector<WeightVector<uint8_t>> panels;
    if (!copies_and_panels(type, mats, rows, cols, row_bytes, im, panels)) return;
    std::mt19937 pick(5);
    for (double sp : sparsities)
        for (size_t ti = 0; ti < threads.size(); ++ti) {
            ThreadPool pool(threads[ti]);
            std::vector<double> secs, ratios;
            double read = 0;
            SparseInput in;
            std::vector<int32_t> ids;
            for (int rep = 0; rep < reps + 2; ++rep) {
                draw_kept(cols, sp, pick, ids);
                const size_t c = static_cast<size_t>(rep) % im.size();
                const InputMajorMatrix& m = im[c];
                prepare_sparse_input(ids.data(), int64_t(ids.size()), x.data(), m.group, in);
                // The dense product of the same matrix just before (paired:
                // the ratio is what a noisy machine can still measure).
                const auto td = Clock::now();
                WeightView dw{type, mats[c].data(), rows, cols, row_bytes};
                if (!panels[c].empty()) dw.panels = panels[c].data();
                matvec(pool, dw, x.data(), y.data());
                const auto t0 = Clock::now();
                colsparse_matvec(pool, m, in, y.data());
                const double s = std::chrono::duration<double>(Clock::now() - t0).count();
                if (rep < 2) continue;
                secs.push_back(s);
                ratios.push_back(std::chrono::duration<double>(t0 - td).count() / s);
                read = double(ids.size()) * double(m.col_bytes()) + double(m.bytes() - m.q.size()) *
                                                                        double(in.groups.size()) /
                                                                        double(m.n_in / m.group);
            }
            const double s = median(secs), gbs = read / s / 1e9;
            std::printf(
                "| %s | %s | colsparse %.0f%% | 1 | %.1f | %d | %.3f | %.1f | %.1f | %.0f%% | "
                "%.0f%% | %.2fx |\n",
                name.c_str(), level.c_str(), 100.0 * sp, read / 1e6, threads[ti], s * 1e3, gbs,
                2.0 * rows * double(cols) * (1.0 - sp) / s / 1e9, 100.0 * gbs / bw[ti].copy_gbs,
                100.0 * gbs / bw[ti].read_gbs, median(ratios));
            std::fflush(stdout);
        }
}

// What the column product's access pattern costs the memory system alone:
// the kept columns' codes of the input-major copy read with no arithmetic
// (the kept list split evenly over the pool), paired with a front-to-back
// read of the same byte count of the same copy. The last column is
// sequential time / kept-columns time.
void run_colread(const std::string& name, GgmlType type, const std::string& level,
                 const std::vector<std::vector<uint8_t>>& mats, int64_t rows, int64_t cols,
                 size_t row_bytes, const std::vector<Bandwidth>& bw) {
    if (!input_major_supported({type, mats[0].data(), rows, cols, row_bytes})) return;
    std::vector<InputMajorMatrix> im;
    for (const auto& m : mats)
        im.push_back(make_input_major({type, m.data(), rows, cols, row_bytes}));
    if (im[0].col_bytes() % 64 != 0 || rows > kInputTileChunks * 32) {
        std::fprintf(stderr,
                     "%s colread skipped: it takes one tile of outputs (at most %lld rows) whose "
                     "columns are whole 64-byte lines\n",
                     name.c_str(), static_cast<long long>(kInputTileChunks * 32));
        return;
    }
    std::mt19937 pick(5);
    uint64_t sink = 0;
    for (double sp : sparsities)
        for (size_t ti = 0; ti < threads.size(); ++ti) {
            ThreadPool pool(threads[ti]);
            std::vector<double> secs, ratios;
            std::vector<int32_t> ids;
            std::vector<uint64_t> sums(static_cast<size_t>(threads[ti]), 0);
            double read = 0;
            for (int rep = 0; rep < reps + 2; ++rep) {
                draw_kept(cols, sp, pick, ids);
                // Two different copies, so that neither read finds the other's
                // bytes in the cache.
                const InputMajorMatrix& m = im[static_cast<size_t>(2 * rep) % im.size()];
                const InputMajorMatrix& m2 = im[static_cast<size_t>(2 * rep + 1) % im.size()];
                const size_t cb = m.col_bytes();
                const auto n = static_cast<int64_t>(ids.size());
                const auto t0 = Clock::now();
                pool.parallel_for(n, [&](int64_t b, int64_t e, int w) {
                    uint64_t acc = 0;
                    for (int64_t k = b; k < e; ++k)
                        acc += read_bytes(m.q.data() + size_t(ids[size_t(k)]) * cb, cb);
                    sums[size_t(w)] += acc;
                });
                const auto t1 = Clock::now();
                pool.parallel_for(n, [&](int64_t b, int64_t e, int w) {
                    sums[size_t(w)] += read_bytes(m2.q.data() + size_t(b) * cb, size_t(e - b) * cb);
                });
                const auto t2 = Clock::now();
                if (rep < 2) continue;
                const double s = std::chrono::duration<double>(t1 - t0).count();
                secs.push_back(s);
                ratios.push_back(std::chrono::duration<double>(t2 - t1).count() / s);
                read = double(n) * double(cb);
            }
            for (uint64_t v : sums) sink += v;
            const double s = median(secs), gbs = read / s / 1e9;
            std::printf(
                "| %s | %s | colread %.0f%% | 1 | %.1f | %d | %.3f | %.1f | - | %.0f%% | %.0f%% | "
                "%.2fx |\n",
                name.c_str(), level.c_str(), 100.0 * sp, read / 1e6, threads[ti], s * 1e3, gbs,
                100.0 * gbs / bw[ti].copy_gbs, 100.0 * gbs / bw[ti].read_gbs, median(ratios));
            std::fflush(stdout);
        }
    if (sink == 42) std::printf(" ");  // keeps the reads alive
}

// The dense product from the input-major copies (input_major_matmul: rows
// rebuilt slice by slice, then the dense kernels; what sparse engine v3 runs
// for prompts and level 0 once its copies replace the rows), paired with the
// dense product over the panels (or rows) just before it: the last column is
// dense time / copy time.
void run_copydense(const std::string& name, GgmlType type, const std::string& level,
                   const std::vector<std::vector<uint8_t>>& mats, int64_t rows, int64_t cols,
                   size_t row_bytes, int64_t batch, const std::vector<float>& x,
                   std::vector<float>& y, const std::vector<Bandwidth>& bw) {
    std::vector<InputMajorMatrix> im;
    std::vector<WeightVector<uint8_t>> panels;
    if (!copies_and_panels(type, mats, rows, cols, row_bytes, im, panels)) return;
    for (size_t ti = 0; ti < threads.size(); ++ti) {
        ThreadPool pool(threads[ti]);
        std::vector<double> secs, ratios;
        for (int rep = 0; rep < reps + 2; ++rep) {
            const size_t c = static_cast<size_t>(rep) % im.size();
            WeightView dw{type, mats[c].data(), rows, cols, row_bytes};
            if (!panels[c].empty()) dw.panels = panels[c].data();
            const auto td = Clock::now();
            matmul(pool, dw, x.data(), batch, y.data());
            const auto t0 = Clock::now();
            const InputMajorMatrix* ms[] = {&im[c]};
            float* ys[] = {y.data()};
            input_major_matmul(pool, ms, x.data(), batch, ys);
            const double s = std::chrono::duration<double>(Clock::now() - t0).count();
            if (rep < 2) continue;
            secs.push_back(s);
            ratios.push_back(std::chrono::duration<double>(t0 - td).count() / s);
        }
        const double s = median(secs), bytes = double(im[0].bytes()), gbs = bytes / s / 1e9;
        std::printf(
            "| %s | %s | copydense | %lld | %.1f | %d | %.3f | %.1f | %.1f | %.0f%% | %.0f%% | "
            "%.2fx |\n",
            name.c_str(), level.c_str(), static_cast<long long>(batch), bytes / 1e6, threads[ti],
            s * 1e3, gbs, 2.0 * rows * double(cols) * double(batch) / s / 1e9,
            100.0 * gbs / bw[ti].copy_gbs, 100.0 * gbs / bw[ti].read_gbs, median(ratios));
        std::fflush(stdout);
    }
}

// Median seconds of `reps` calls of run(rep) after two warm-up calls (the
// rep index picks the matrix copy).
template <typename Run>
double median_seconds(Run&& run) {
    std::vector<double> secs;
    for (int rep = 0; rep < reps + 2; ++rep) {
        const auto t0 = Clock::now();
        run(rep);
        const double s = std::chrono::duration<double>(Clock::now() - t0).count();
        if (rep >= 2) secs.push_back(s);
    }
    return median(secs);
}

// One row of the table for a product of `bytes` weights and `flops` / 2
// multiply-adds that took s seconds.
void print_row(const std::string& type, const std::string& level, const std::string& layout,
               int64_t batch, double bytes, int threads, double s, double flops,
               const Bandwidth& bw) {
    const double gbs = bytes / s / 1e9;
    std::printf("| %s | %s | %s | %lld | %.1f | %d | %.3f | %.1f | %.1f | %.0f%% | %.0f%% | |\n",
                type.c_str(), level.c_str(), layout.c_str(), static_cast<long long>(batch),
                bytes / 1e6, threads, s * 1e3, gbs, flops / s / 1e9, 100.0 * gbs / bw.copy_gbs,
                100.0 * gbs / bw.read_gbs);
    std::fflush(stdout);
}

// The preview format of the same matrices: the kernel the sparse head runs
// per token, rows split over the pool as there (256 at a time).
void run_u4rows(const std::string& name, GgmlType type, const std::string& level,
                const std::vector<std::vector<uint8_t>>& mats, int64_t rows, int64_t cols,
                size_t row_bytes, const std::vector<float>& x, std::vector<float>& y,
                const std::vector<Bandwidth>& bw) {
    std::vector<U4Rows> us;
    std::vector<float> row(static_cast<size_t>(cols));
    for (const auto& m : mats) {
        us.push_back(make_u4_rows(rows, cols));
        for (int64_t r = 0; r < rows; ++r) {
            dequantize_row(type, m.data() + static_cast<size_t>(r) * row_bytes, row.data(), cols);
            set_u4_row(us.back(), r, row.data(), cols);
        }
    }
    U4Input in;
    quantize_u4_input(x.data(), cols, us[0].cols, in);
    const double bytes = static_cast<double>(us[0].bytes());
    for (size_t ti = 0; ti < threads.size(); ++ti) {
        ThreadPool pool(threads[ti]);
        const double s = median_seconds([&](int rep) {
            const U4Rows& u = us[static_cast<size_t>(rep) % us.size()];
            pool.parallel_for(
                rows,
                [&](int64_t b, int64_t e, int) { u4_rows_product(u, in, b, e, y.data() + b); },
                256);
        });
        print_row(name + " (as U4 rows)", level, "u4rows", 1, bytes, threads[ti], s,
                  2.0 * rows * cols, bw[ti]);
    }
}

}  // namespace

constexpr const char* kUsage =
    "usage: bench_matvec [--threads 1,2] [--types Q4_0,Q8_0] [--reps 9]\n"
    "                    [--level avx2,avx512|all] [--rows 11008] [--cols 4096]\n"
    "                    [--stat median|min] [--working-set-mb 160]\n"
    "                    [--layout rows|panels|colsparse|colread|copydense|u4rows|all]\n"
    "                    [--batch 1] [--sparsity 0,0.3,0.5,0.7]\n";

int main(int argc, char** argv) {
    std::vector<std::string> type_names = {"F32",  "F16",  "BF16", "Q8_0", "Q4_0", "Q4_1",
                                           "Q5_0", "Q5_1", "Q4_K", "Q5_K", "Q6_K"};
    int64_t rows = 11008, cols = 4096;
    std::vector<std::string> layouts{"rows"};
    int64_t batch = 1;
    std::vector<std::string> levels{simd_level()};
    for (int i = 1; i < argc; i += 2) {
        const std::string k = argv[i];
        if (k == "--help" || k == "-h") {
            std::printf("%s", kUsage);
            return 0;
        }
        if (i + 1 >= argc) {
            std::fprintf(stderr, "option %s needs a value\n%s", k.c_str(), kUsage);
            return 2;
        }
        const std::string v = argv[i + 1];
        try {
            if (k == "--threads") {
                threads.clear();
                for (const auto& s : split(v)) threads.push_back(std::stoi(s));
            } else if (k == "--types") {
                type_names = split(v);
            } else if (k == "--reps") {
                reps = std::max(1, std::stoi(v));
            } else if (k == "--level") {
                levels = v == "all" ? available_simd_levels() : split(v);
                for (const auto& l : levels)
                    if (!force_simd_level(l)) {
                        std::fprintf(stderr, "SIMD level %s is not available here (this CPU: %s)\n",
                                     l.c_str(), join(available_simd_levels()).c_str());
                        return 1;
                    }
            } else if (k == "--rows") {
                rows = std::stoll(v);
            } else if (k == "--working-set-mb") {
                g_working_set = size_t(std::max(0, std::stoi(v))) << 20;
            } else if (k == "--stat") {
                g_use_min = v == "min";
            } else if (k == "--layout") {
                layouts = v == "all"
                              ? std::vector<std::string>{"rows", "panels", "colsparse", "u4rows"}
                              : split(v);
            } else if (k == "--batch") {
                batch = std::max<int64_t>(1, std::stoll(v));
            } else if (k == "--sparsity") {
                sparsities.clear();
                for (const auto& f : split(v)) sparsities.push_back(std::stod(f));
            } else if (k == "--cols") {
                cols = std::stoll(v);
            } else {
                std::fprintf(stderr, "unknown option %s\n%s", k.c_str(), kUsage);
                return 2;
            }
        } catch (const std::exception&) {  // std::stoi and friends on a non-number
            std::fprintf(stderr, "option %s: '%s' is not a number\n", k.c_str(), v.c_str());
            return 2;
        }
    }

    std::printf(
        "CPU: %s\nSIMD levels: %s (this CPU: %s), huge pages (panels and input-major copies): "
        "%s\nmatrix: %lld rows x %lld cols, %s of %d runs\n\n",
        cpu_model().c_str(), join(levels).c_str(), join(available_simd_levels()).c_str(),
        huge_page_mode().c_str(), static_cast<long long>(rows), static_cast<long long>(cols),
        g_use_min ? "fastest" : "median", reps);

    std::vector<Bandwidth> bw;
    for (int t : threads) {
        ThreadPool pool(t);
        bw.push_back(measure_bandwidth(pool, reps));
        std::printf(
            "memory bandwidth, %d thread(s): memcpy %.1f GB/s (read+write), read %.1f GB/s\n", t,
            bw.back().copy_gbs, bw.back().read_gbs);
    }
    std::printf(
        "\n| type | level | layout | batch | weight MB | threads | ms | GB/s | GFLOP/s | %% of "
        "copy "
        "| %% of read | speed vs dense (paired: panels where the level has them) |\n");
    std::printf("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");

    std::mt19937 rng(1);
    std::vector<float> x(static_cast<size_t>(cols * batch)), y(static_cast<size_t>(rows * batch));
    std::normal_distribution<float> d(0.0f, 1.0f);
    for (auto& v : x) v = d(rng);

    for (const auto& name : type_names) {
        GgmlType type = GgmlType::F32;
        bool found = false;
        for (uint32_t id = 0; id < 64; ++id) {
            const auto tr = ggml_type_traits(id);
            if (tr && tr->name == name) {
                type = static_cast<GgmlType>(id);
                found = true;
            }
        }
        if (!found) {
            std::fprintf(stderr, "unknown type %s\n", name.c_str());
            return 1;
        }
        const auto rb = ggml_row_bytes(type, static_cast<uint64_t>(cols));
        if (!rb) {
            // A K-quant's rows are whole 256-element super-blocks.
            std::fprintf(stderr, "%s skipped: %lld columns are not whole blocks of this type\n",
                         name.c_str(), static_cast<long long>(cols));
            continue;
        }
        const size_t row_bytes = *rb;
        const size_t bytes = row_bytes * static_cast<size_t>(rows);
        // Enough copies that the working set is far past the L3 cache.
        const size_t copies = std::max<size_t>(1, (g_working_set + bytes - 1) / bytes);
        std::vector<std::vector<uint8_t>> mats;
        for (size_t c = 0; c < copies; ++c) mats.push_back(random_matrix(type, rows, cols, rng));
        for (const auto& level : levels)
            for (const auto& layout : layouts) {
                force_simd_level(level);
                // One panel copy per matrix copy, where this level has panels.
                std::vector<WeightVector<uint8_t>> panels;
                if (layout == "colsparse") {
                    run_colsparse(name, type, level, mats, rows, cols, row_bytes, x, y, bw);
                    continue;
                }
                if (layout == "colread") {
                    run_colread(name, type, level, mats, rows, cols, row_bytes, bw);
                    continue;
                }
                if (layout == "copydense") {
                    run_copydense(name, type, level, mats, rows, cols, row_bytes, batch, x, y, bw);
                    continue;
                }
                if (layout == "u4rows") {
                    run_u4rows(name, type, level, mats, rows, cols, row_bytes, x, y, bw);
                    continue;
                }
                if (layout == "panels") {
                    for (const auto& m : mats) {
                        const WeightView w{type, m.data(), rows, cols, row_bytes};
                        panels.push_back(pack_panels(w));
                        if (panels.back().empty()) break;
                    }
                    if (panels.empty() || panels.back().empty()) continue;
                }
                for (size_t ti = 0; ti < threads.size(); ++ti) {
                    ThreadPool pool(threads[ti]);
                    const double s = median_seconds([&](int rep) {
                        const size_t c = static_cast<size_t>(rep) % copies;
                        WeightView w{type, mats[c].data(), rows, cols, row_bytes};
                        if (!panels.empty()) w.panels = panels[c].data();
                        if (batch == 1) {
                            matvec(pool, w, x.data(), y.data());
                        } else {
                            matmul(pool, w, x.data(), batch, y.data());
                        }
                    });
                    print_row(name, level, layout, batch, double(bytes), threads[ti], s,
                              2.0 * rows * cols * batch, bw[ti]);
                }
            }
    }
    return 0;
}
