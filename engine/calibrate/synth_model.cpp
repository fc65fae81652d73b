#include "calibrate/synth_model.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <numeric>
#include <random>

#include "calibrate/predictor_trainer.h"
#include "common/error.h"
#include "gguf/gguf.h"
#include "sparse/sidecar.h"
#include "tensor/quant.h"

namespace powerinfer::calibrate {
namespace {

using gguf::Value;
using gguf::ValueType;

struct XorShift {
    uint64_t s;
    uint64_t next() {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        return s;
    }
};

// A pool of random quantized blocks of one type and scale; rows are copied
// from it at random block offsets.
// A portable stand-in for a normal variate (Irwin-Hall: four uniforms of
// 24 bits, centred and scaled to unit variance): integer arithmetic and
// exactly rounded float operations only, so every platform gives the same.
float portable_normal(XorShift& rng) {
    float s = 0.0f;
    for (int i = 0; i < 4; ++i) s += static_cast<float>(rng.next() >> 40) * 0x1p-24f;
    return (s - 2.0f) * std::sqrt(3.0f);
}

class BlockPool {
public:
    // portable: values from portable_normal instead of std::normal_distribution.
    BlockPool(GgmlType type, float sigma, int64_t max_row_blocks, uint64_t seed,
              bool portable = false, int64_t pool_blocks = int64_t{1} << 16)
        : type_(type), pool_blocks_(pool_blocks) {
        const auto tr = ggml_traits(type);
        block_bytes_ = tr.block_bytes;
        n_blocks_ = pool_blocks_ + max_row_blocks;
        const int64_t n = n_blocks_ * tr.block_elems;
        std::vector<float> x(static_cast<size_t>(n));
        if (portable) {
            XorShift prng{seed * 0x9E3779B97F4A7C15ull + 7};
            for (auto& v : x) v = sigma * portable_normal(prng);
        } else {
            std::mt19937_64 rng(seed);
            std::normal_distribution<float> nd(0.0f, sigma);
            for (auto& v : x) v = nd(rng);
        }
        data_.resize(static_cast<size_t>(n_blocks_ * block_bytes_));
        tensor::quantize_row_ref(type, x.data(), data_.data(), n);
    }
    void fill(uint8_t* dst, int64_t rows, int64_t row_bytes, XorShift& rng) const {
        const int64_t row_blocks = row_bytes / block_bytes_;
        for (int64_t r = 0; r < rows; ++r) {
            const int64_t off =
                static_cast<int64_t>(rng.next() % static_cast<uint64_t>(pool_blocks_));
            std::memcpy(dst + r * row_bytes, data_.data() + off * block_bytes_,
                        static_cast<size_t>(row_blocks * block_bytes_));
        }
    }

private:
    GgmlType type_;
    int64_t pool_blocks_;
    int64_t block_bytes_ = 0;
    int64_t n_blocks_ = 0;
    std::vector<uint8_t> data_;
};

std::vector<uint8_t> float_bytes(const std::vector<float>& v) {
    std::vector<uint8_t> out(v.size() * 4);
    std::memcpy(out.data(), v.data(), out.size());
    return out;
}

// <unk>, <s>, </s>, the 256 byte tokens, then made-up word pieces.
void add_vocab(gguf::GgufWriter& w, int64_t n_vocab) {
    std::vector<Value> tokens, scores, types;
    auto add = [&](std::string t, float score, int32_t type) {
        tokens.push_back(Value::str(std::move(t)));
        scores.push_back(Value::f32(score));
        types.push_back(Value::i32(type));
    };
    add("<unk>", 0, 2);
    add("<s>", 0, 3);
    add("</s>", 0, 3);
    static const char* hex = "0123456789ABCDEF";
    for (int b = 0; b < 256; ++b) add(std::string("<0x") + hex[b >> 4] + hex[b & 15] + ">", 0, 6);
    static const char* letters = "etaoinshrdlucmfwypvbgkjqxz";
    for (int64_t i = 0; static_cast<int64_t>(tokens.size()) < n_vocab; ++i) {
        // "▁" + a base-26 spelling of i: unique, and single letters come first.
        std::string piece;
        int64_t k = i;
        do {
            piece.insert(piece.begin(), letters[k % 26]);
            k /= 26;
        } while (k > 0);
        add(i % 2 ? piece : "\xe2\x96\x81" + piece, -static_cast<float>(i), 1);
    }
    w.set("tokenizer.ggml.model", Value::str("llama"));
    w.set("tokenizer.ggml.tokens", Value::array(ValueType::STRING, std::move(tokens)));
    w.set("tokenizer.ggml.scores", Value::array(ValueType::FLOAT32, std::move(scores)));
    w.set("tokenizer.ggml.token_type", Value::array(ValueType::INT32, std::move(types)));
    w.set("tokenizer.ggml.bos_token_id", Value::u32(1));
    w.set("tokenizer.ggml.eos_token_id", Value::u32(2));
    w.set("tokenizer.ggml.unknown_token_id", Value::u32(0));
    w.set("tokenizer.ggml.add_bos_token", Value::boolean(true));
}

}  // namespace

SynthSpec synth_preset(const std::string& name) {
    SynthSpec s;
    if (name == "smollm2-135m") {
        s.n_layer = 30;
        s.n_embd = 576;
        s.n_ff = 1536;
        s.n_head = 9;
        s.n_head_kv = 3;
        s.n_vocab = 49152;
        s.n_ctx = 8192;
        s.type = GgmlType::Q4_0;
    } else if (name == "llama-7b") {
        s.n_layer = 32;
        s.n_embd = 4096;
        s.n_ff = 11008;
        s.n_head = 32;
        s.n_head_kv = 32;
        s.n_vocab = 32000;
        s.n_ctx = 4096;
        s.type = GgmlType::Q4_0;
    } else {
        throw EngineError("unknown preset '" + name + "': use smollm2-135m or llama-7b");
    }
    return s;
}

void write_synthetic_model(const std::filesystem::path& path, const SynthSpec& spec) {
    const int64_t E = spec.n_embd, F = spec.n_ff;
    if (spec.n_layer <= 0 || E <= 0 || F <= 0 || spec.n_head <= 0 || spec.n_head_kv <= 0 ||
        spec.n_head % spec.n_head_kv != 0 || E % spec.n_head != 0 || spec.n_vocab < 259) {
        throw EngineError(
            "invalid synthetic model shape (need positive sizes, heads dividing "
            "n_embd, head_count a multiple of head_count_kv, vocab >= 259)");
    }
    const int64_t head_dim = E / spec.n_head;
    if (head_dim % 2) throw EngineError("head dimension must be even");
    const int64_t kv_dim = spec.n_head_kv * head_dim;
    const GgmlType t = spec.type;
    const auto tr = ggml_traits(t);
    if (!tr.supported || E % tr.block_elems || F % tr.block_elems) {
        throw EngineError("n_embd and n_ff must be multiples of " + std::to_string(tr.block_elems) +
                          " for type " + std::string(tr.name));
    }
    if (spec.arch != "llama" && spec.arch != "qwen2" && spec.arch != "qwen3")
        throw EngineError("synthetic models are llama, qwen2 or qwen3, not '" + spec.arch + "'");
    gguf::GgufWriter w;
    const std::string a = spec.arch + ".";
    w.set("general.architecture", Value::str(spec.arch));
    w.set("general.name", Value::str("synthetic-" + std::to_string(spec.n_layer) + "x" +
                                     std::to_string(E) + "x" + std::to_string(F)));
    w.set(a + "context_length", Value::u32(static_cast<uint32_t>(spec.n_ctx)));
    w.set(a + "embedding_length", Value::u32(static_cast<uint32_t>(E)));
    w.set(a + "block_count", Value::u32(static_cast<uint32_t>(spec.n_layer)));
    w.set(a + "feed_forward_length", Value::u32(static_cast<uint32_t>(F)));
    w.set(a + "attention.head_count", Value::u32(static_cast<uint32_t>(spec.n_head)));
    w.set(a + "attention.head_count_kv", Value::u32(static_cast<uint32_t>(spec.n_head_kv)));
    w.set(a + "rope.dimension_count", Value::u32(static_cast<uint32_t>(head_dim)));
    w.set(a + "attention.layer_norm_rms_epsilon", Value::f32(1e-5f));
    w.set(a + "rope.freq_base", Value::f32(10000.0f));
    add_vocab(w, spec.n_vocab);

    XorShift rng{spec.seed * 0x9E3779B97F4A7C15ull + 1};
    const int64_t max_row_blocks = std::max(E, F) / tr.block_elems + 1;
    // Scales keep activations O(1) through the random network.
    BlockPool pool_e(t, 1.0f / std::sqrt(float(E)), max_row_blocks, spec.seed + 1);
    BlockPool pool_f(t, 1.0f / std::sqrt(float(F)), max_row_blocks, spec.seed + 2);
    BlockPool pool_emb(t, 1.0f, max_row_blocks, spec.seed + 3);
    auto matrix = [&](const std::string& name, int64_t cols, int64_t rows, const BlockPool& pool) {
        const int64_t rb = static_cast<int64_t>(*ggml_row_bytes(t, static_cast<uint64_t>(cols)));
        std::vector<uint8_t> data(static_cast<size_t>(rb * rows));
        pool.fill(data.data(), rows, rb, rng);
        w.add_tensor(name, t, {static_cast<uint64_t>(cols), static_cast<uint64_t>(rows)},
                     std::move(data));
    };
    std::mt19937_64 vrng(spec.seed + 5);
    // A norm or bias vector: ones (or 1 +- 0.25 noise) for norms, small noise for biases.
    auto vec = [&](const std::string& name, int64_t n, float base, float noise) {
        std::vector<float> v(static_cast<size_t>(n), base);
        std::normal_distribution<float> nd(0.0f, noise);
        if (noise > 0)
            for (auto& x : v) x += nd(vrng);
        w.add_tensor(name, GgmlType::F32, {static_cast<uint64_t>(n)}, float_bytes(v));
    };
    const float norm_noise = spec.random_norms ? 0.25f : 0.0f;
    matrix("token_embd.weight", E, spec.n_vocab, pool_emb);
    for (int64_t l = 0; l < spec.n_layer; ++l) {
        const std::string b = "blk." + std::to_string(l) + ".";
        vec(b + "attn_norm.weight", E, 1.0f, norm_noise);
        matrix(b + "attn_q.weight", E, E, pool_e);
        matrix(b + "attn_k.weight", E, kv_dim, pool_e);
        matrix(b + "attn_v.weight", E, kv_dim, pool_e);
        if (spec.arch == "qwen2") {
            vec(b + "attn_q.bias", E, 0.0f, 0.1f);
            vec(b + "attn_k.bias", kv_dim, 0.0f, 0.1f);
            vec(b + "attn_v.bias", kv_dim, 0.0f, 0.1f);
        }
        if (spec.arch == "qwen3") {
            vec(b + "attn_q_norm.weight", head_dim, 1.0f, norm_noise);
            vec(b + "attn_k_norm.weight", head_dim, 1.0f, norm_noise);
        }
        matrix(b + "attn_output.weight", E, E, pool_e);
        vec(b + "ffn_norm.weight", E, 1.0f, norm_noise);
        matrix(b + "ffn_gate.weight", E, F, pool_e);
        matrix(b + "ffn_up.weight", E, F, pool_e);
        matrix(b + "ffn_down.weight", F, E, pool_f);
    }
    vec("output_norm.weight", E, 1.0f, norm_noise);
    if (!spec.tied_output) matrix("output.weight", E, spec.n_vocab, pool_e);
    w.write(path);
    if (!spec.write_sidecar) return;

    // The sidecar: power-law activity in a random hot-first order per layer,
    // random predictors of a realistic rank (their cost is real; synthetic
    // activity mode ignores their answer).
    auto model = gguf::GgufFile::open(path);
    sparse::Sidecar sc;
    sc.model_hash = sparse::model_hash(*model);
    sc.model_bytes = model->file_size();
    sc.n_layer = spec.n_layer;
    sc.n_embd = E;
    sc.n_ff = F;
    sc.target_sparsity = static_cast<float>(spec.sparsity);
    sc.synthetic = true;
    sc.zipf_s = static_cast<float>(spec.zipf_s);
    const int64_t rank = spec.predictor_rank > 0 ? spec.predictor_rank : (E < 2048 ? 64 : 256);
    const auto p = sparse::zipf_activity(F, spec.zipf_s, 1.0 - spec.sparsity);
    std::mt19937_64 prng(spec.seed + 7);
    const GgmlType pt = spec.predictor_f16 ? GgmlType::F16 : GgmlType::F32;
    auto random_matrix = [&](int64_t rows, int64_t cols) {
        std::vector<float> v(static_cast<size_t>(rows * cols));
        std::normal_distribution<float> nd(0.0f, 1.0f / std::sqrt(float(cols)));
        for (auto& x : v) x = nd(prng);
        return pack(v, pt == GgmlType::F16);
    };
    sc.layers.resize(static_cast<size_t>(spec.n_layer));
    for (auto& ls : sc.layers) {
        ls.perm.resize(static_cast<size_t>(F));
        std::iota(ls.perm.begin(), ls.perm.end(), 0);
        std::shuffle(ls.perm.begin(), ls.perm.end(), prng);
        ls.act_freq.assign(static_cast<size_t>(F), 0.0f);
        ls.act_mass.assign(static_cast<size_t>(F), 0.0f);
        for (int64_t k = 0; k < F; ++k) {
            ls.act_freq[static_cast<size_t>(ls.perm[static_cast<size_t>(k)])] =
                p[static_cast<size_t>(k)];
            ls.act_mass[static_cast<size_t>(ls.perm[static_cast<size_t>(k)])] =
                p[static_cast<size_t>(k)];
        }
        ls.predictor.rank = rank;
        ls.predictor.type = pt;
        ls.predictor.w1 = random_matrix(rank, E);
        ls.predictor.b1.assign(static_cast<size_t>(rank), 0.0f);
        ls.predictor.w2 = random_matrix(F, rank);
        ls.predictor.b2.assign(static_cast<size_t>(F), 0.0f);
    }
    sparse::write_sidecar(sparse::default_sidecar_path(path), sc);
}

SynthMoeSpec synth_moe_preset(const std::string& name) {
    SynthMoeSpec s;
    if (name == "tiny-qwen3moe") {
        s.seed = 19;
    } else if (name == "tiny-qwen2moe") {
        s.arch = "qwen2moe";
        s.n_ff_shexp = 512;
        s.seed = 21;
    } else if (name == "tiny-mixtral") {
        s.arch = "llama";
        s.n_head = 8;
        s.n_head_kv = 4;
        s.head_dim = 32;
        s.n_ff = 256;
        s.expert_type = GgmlType::Q4_K;
        s.down_type = GgmlType::Q4_K;
        s.attn_type = GgmlType::Q6_K;
        s.embd_type = GgmlType::Q6_K;
        s.output_type = GgmlType::Q4_K;
        s.seed = 20;
    } else if (name == "tiny-qwen35") {
        s.arch = "qwen35";
        s.n_expert = 0;
        s.n_expert_used = 0;
        s.n_rot = 16;
        s.seed = 35;
    } else if (name == "tiny-qwen35moe") {
        s.arch = "qwen35moe";
        s.n_ff_shexp = 256;
        s.n_rot = 16;
        s.seed = 36;
    } else if (name == "qwen3-30b-a3b" || name == "qwen3-30b-a3b-q4k") {
        s.n_layer = 4;
        s.n_embd = 2048;
        s.n_head = 32;
        s.n_head_kv = 4;
        s.head_dim = 128;
        s.n_ff = 6144;
        s.n_ff_exp = 768;
        s.n_expert = 128;
        s.n_expert_used = 8;
        s.n_vocab = 32768;
        s.n_ctx = 4096;
        s.random_norms = false;
        s.zipf_s = 1.0;
        s.seed = 30;
        if (name == "qwen3-30b-a3b-q4k") s.down_type = GgmlType::Q4_K;
    } else {
        throw EngineError("unknown MoE preset '" + name +
                          "': use tiny-qwen3moe, tiny-qwen2moe, tiny-mixtral, tiny-qwen35, "
                          "tiny-qwen35moe, qwen3-30b-a3b or qwen3-30b-a3b-q4k");
    }
    return s;
}

void write_synthetic_moe_model(const std::filesystem::path& path, const SynthMoeSpec& spec) {
    const int64_t E = spec.n_embd, F = spec.expert_width(), NE = spec.n_expert;
    const int64_t hd = spec.head_dim, qd = spec.n_head * hd, kd = spec.n_head_kv * hd;
    const bool qwen2 = spec.arch == "qwen2moe";
    const bool q35 = spec.qwen35(), q35_moe = spec.arch == "qwen35moe";
    if (spec.arch != "qwen3moe" && spec.arch != "llama" && !qwen2 && !q35)
        throw EngineError(
            "synthetic MoE models are qwen3moe, qwen2moe, qwen35, qwen35moe or llama, not '" +
            spec.arch + "'");
    if (q35 && (spec.ssm_conv < 2 || spec.ssm_state <= 0 || spec.ssm_groups <= 0 ||
                spec.ssm_v_heads % spec.ssm_groups || spec.full_attention_interval <= 0 ||
                (q35_moe && spec.n_ff_shexp <= 0)))
        throw EngineError("invalid synthetic qwen35 shape");
    if (qwen2 && (spec.n_ff_shexp <= 0 || qd != E))
        throw EngineError(
            "a synthetic qwen2moe needs a shared expert and n_head * head_dim = n_embd");
    if (spec.n_layer <= 0 || E <= 0 || F <= 0 || hd <= 0 || hd % 2 || spec.n_head <= 0 ||
        spec.n_head_kv <= 0 || spec.n_head % spec.n_head_kv ||
        (spec.arch != "qwen35" &&
         (NE <= 0 || spec.n_expert_used <= 0 || spec.n_expert_used > NE)) ||
        spec.n_vocab < 259)
        throw EngineError(
            "invalid synthetic MoE shape (positive sizes, even head_dim, head_count a multiple of "
            "head_count_kv, 1 <= expert_used_count <= expert_count, vocab >= 259)");
    for (GgmlType t :
         {spec.attn_type, spec.expert_type, spec.down_type, spec.embd_type, spec.output_type}) {
        const auto tr = ggml_traits(t);
        if (!tr.supported || E % tr.block_elems || F % tr.block_elems || qd % tr.block_elems)
            throw EngineError(
                "n_embd, the expert width and n_head * head_dim must be multiples of " +
                std::to_string(tr.block_elems) + " for type " + std::string(tr.name));
    }
    gguf::GgufWriter w;
    const std::string a = spec.arch + ".";
    auto u32 = [](int64_t v) { return Value::u32(static_cast<uint32_t>(v)); };
    w.set("general.architecture", Value::str(spec.arch));
    w.set("general.name", Value::str("synthetic-moe-" + std::to_string(spec.n_layer) + "x" +
                                     std::to_string(NE) + "x" + std::to_string(F)));
    w.set(a + "context_length", u32(spec.n_ctx));
    w.set(a + "embedding_length", u32(E));
    w.set(a + "block_count", u32(spec.n_layer));
    w.set(a + "feed_forward_length", u32(spec.n_ff));
    w.set(a + "attention.head_count", u32(spec.n_head));
    w.set(a + "attention.head_count_kv", u32(spec.n_head_kv));
    w.set(a + "attention.key_length", u32(hd));
    w.set(a + "attention.value_length", u32(hd));
    const int64_t n_rot = spec.n_rot > 0 ? spec.n_rot : hd;
    w.set(a + "rope.dimension_count", u32(n_rot));
    w.set(a + "attention.layer_norm_rms_epsilon", Value::f32(1e-6f));
    w.set(a + "rope.freq_base", Value::f32(1000000.0f));
    if (spec.arch != "qwen35") {
        w.set(a + "expert_count", u32(NE));
        w.set(a + "expert_used_count", u32(spec.n_expert_used));
    }
    if (spec.arch != "llama" && spec.arch != "qwen35")
        w.set(a + "expert_feed_forward_length", u32(F));
    if (qwen2 || q35_moe) w.set(a + "expert_shared_feed_forward_length", u32(spec.n_ff_shexp));
    // Qwen3.5's Gated DeltaNet sizes, and its M-RoPE sections (text
    // positions use the first three, which cover the rotated pairs).
    const int64_t SK = spec.ssm_state, HK = spec.ssm_groups, HV = spec.ssm_v_heads;
    const int64_t key_dim = SK * HK, value_dim = SK * HV, conv_dim = 2 * key_dim + value_dim;
    if (q35) {
        w.set(a + "ssm.conv_kernel", u32(spec.ssm_conv));
        w.set(a + "ssm.inner_size", u32(value_dim));
        w.set(a + "ssm.state_size", u32(SK));
        w.set(a + "ssm.time_step_rank", u32(HV));
        w.set(a + "ssm.group_count", u32(HK));
        w.set(a + "full_attention_interval", u32(spec.full_attention_interval));
        const int32_t pairs = static_cast<int32_t>(n_rot / 2);
        const int32_t third = (pairs + 2) / 3;
        std::vector<Value> sections{Value::i32(third), Value::i32(third),
                                    Value::i32(pairs - 2 * third), Value::i32(0)};
        w.set(a + "rope.dimension_sections", Value::array(ValueType::INT32, sections));
    }
    add_vocab(w, spec.n_vocab);

    XorShift rng{spec.seed * 0x9E3779B97F4A7C15ull + 1};
    // (qwen35's dense FFN rows are n_ff long; the other presets' pools stay as they were.)
    const int64_t max_row_blocks = std::max({E, F, qd, q35 ? spec.n_ff : 0}) / 32 + 1;
    // Small models need few distinct blocks (and are made in a test).
    const int64_t pool_blocks = E >= 1024 ? int64_t{1} << 16 : int64_t{1} << 11;
    std::map<std::pair<GgmlType, int64_t>, std::unique_ptr<BlockPool>> pools;
    auto pool_for = [&](GgmlType t, int64_t fan_in) -> const BlockPool& {
        auto& p = pools[{t, fan_in}];
        if (!p)
            p = std::make_unique<BlockPool>(t, 1.0f / std::sqrt(static_cast<float>(fan_in)),
                                            max_row_blocks, spec.seed + pools.size() * 31, true,
                                            pool_blocks);
        return *p;
    };
    // rows x cols of type t, n_stack deep (0: a plain matrix).
    auto matrix = [&](const std::string& name, GgmlType t, int64_t cols, int64_t rows,
                      int64_t n_stack = 0) {
        const int64_t rb = static_cast<int64_t>(*ggml_row_bytes(t, static_cast<uint64_t>(cols)));
        const int64_t n_rows = rows * std::max<int64_t>(1, n_stack);
        std::vector<uint8_t> data(static_cast<size_t>(rb * n_rows));
        pool_for(t, cols).fill(data.data(), n_rows, rb, rng);
        std::vector<uint64_t> shape{static_cast<uint64_t>(cols), static_cast<uint64_t>(rows)};
        if (n_stack > 0) shape.push_back(static_cast<uint64_t>(n_stack));
        w.add_tensor(name, t, shape, std::move(data));
    };
    auto floats = [&](int64_t n, float base, float sigma) {
        std::vector<float> v(static_cast<size_t>(n));
        for (auto& x : v) x = base + sigma * portable_normal(rng);
        return v;
    };
    auto vec = [&](const std::string& name, int64_t n) {
        w.add_tensor(name, GgmlType::F32, {static_cast<uint64_t>(n)},
                     float_bytes(floats(n, 1.0f, spec.random_norms ? 0.25f : 0.0f)));
    };
    // The skew's carrier: a constant in dimension 0 of every embedding.
    const float carrier = 4.0f;
    {
        std::vector<float> emb = floats(E * spec.n_vocab, 0.0f, 1.0f);
        if (spec.zipf_s > 0)
            for (int64_t t = 0; t < spec.n_vocab; ++t) emb[static_cast<size_t>(t * E)] += carrier;
        const int64_t rb =
            static_cast<int64_t>(*ggml_row_bytes(spec.embd_type, static_cast<uint64_t>(E)));
        std::vector<uint8_t> data(static_cast<size_t>(rb * spec.n_vocab));
        tensor::quantize_row_ref(spec.embd_type, emb.data(), data.data(), E * spec.n_vocab);
        w.add_tensor("token_embd.weight", spec.embd_type,
                     {static_cast<uint64_t>(E), static_cast<uint64_t>(spec.n_vocab)},
                     std::move(data));
    }
    // The router (skewed by zipf_s), the stacked experts and the shared
    // expert of qwen2moe/qwen35moe.
    auto expert_ffn = [&](const std::string& b) {
        std::vector<float> router = floats(E * NE, 0.0f, 1.0f / std::sqrt(static_cast<float>(E)));
        if (spec.zipf_s > 0) {
            // Ranks in a random order (Fisher-Yates on the portable generator).
            std::vector<int64_t> rank(static_cast<size_t>(NE));
            std::iota(rank.begin(), rank.end(), int64_t{0});
            for (int64_t i = NE - 1; i > 0; --i)
                std::swap(rank[static_cast<size_t>(i)],
                          rank[static_cast<size_t>(rng.next() % static_cast<uint64_t>(i + 1))]);
            for (int64_t e = 0; e < NE; ++e)
                router[static_cast<size_t>(e * E)] = static_cast<float>(
                    -spec.zipf_s * std::log(static_cast<double>(rank[static_cast<size_t>(e)] + 1)) /
                    carrier);
        }
        w.add_tensor(b + "ffn_gate_inp.weight", GgmlType::F32,
                     {static_cast<uint64_t>(E), static_cast<uint64_t>(NE)}, float_bytes(router));
        matrix(b + "ffn_gate_exps.weight", spec.expert_type, E, F, NE);
        matrix(b + "ffn_up_exps.weight", spec.expert_type, E, F, NE);
        matrix(b + "ffn_down_exps.weight", spec.down_type, F, E, NE);
        if (qwen2 || q35_moe) {
            const int64_t FS = spec.n_ff_shexp;
            w.add_tensor(b + "ffn_gate_inp_shexp.weight", GgmlType::F32, {static_cast<uint64_t>(E)},
                         float_bytes(floats(E, 0.0f, 1.0f / std::sqrt(static_cast<float>(E)))));
            matrix(b + "ffn_gate_shexp.weight", spec.expert_type, E, FS);
            matrix(b + "ffn_up_shexp.weight", spec.expert_type, E, FS);
            matrix(b + "ffn_down_shexp.weight", spec.down_type, FS, E);
        }
    };
    for (int64_t l = 0; q35 && l < spec.n_layer; ++l) {
        const std::string b = "blk." + std::to_string(l) + ".";
        vec(b + "attn_norm.weight", E);
        if ((l + 1) % spec.full_attention_interval != 0) {
            // Gated DeltaNet: q|k|v for the convolution, the output gate z,
            // the decay (alpha, dt bias, A) and the write strength (beta).
            matrix(b + "attn_qkv.weight", spec.attn_type, E, conv_dim);
            matrix(b + "attn_gate.weight", spec.attn_type, E, value_dim);
            w.add_tensor(b + "ssm_conv1d.weight", GgmlType::F32,
                         {static_cast<uint64_t>(spec.ssm_conv), static_cast<uint64_t>(conv_dim)},
                         float_bytes(floats(spec.ssm_conv * conv_dim, 0.0f, 0.5f)));
            w.add_tensor(b + "ssm_dt.bias", GgmlType::F32, {static_cast<uint64_t>(HV)},
                         float_bytes(floats(HV, 0.0f, 1.0f)));
            std::vector<float> a_neg = floats(HV, 0.0f, 0.5f);
            for (auto& x : a_neg) x = -std::exp(x);  // -exp(A_log), as the converter writes it
            w.add_tensor(b + "ssm_a", GgmlType::F32, {static_cast<uint64_t>(HV)},
                         float_bytes(a_neg));
            matrix(b + "ssm_beta.weight", spec.attn_type, E, HV);
            matrix(b + "ssm_alpha.weight", spec.attn_type, E, HV);
            vec(b + "ssm_norm.weight", SK);
            matrix(b + "ssm_out.weight", spec.attn_type, value_dim, E);
        } else {
            // Gated attention: each head's query followed by its gate.
            matrix(b + "attn_q.weight", spec.attn_type, E, 2 * qd);
            matrix(b + "attn_k.weight", spec.attn_type, E, kd);
            matrix(b + "attn_v.weight", spec.attn_type, E, kd);
            vec(b + "attn_q_norm.weight", hd);
            vec(b + "attn_k_norm.weight", hd);
            matrix(b + "attn_output.weight", spec.attn_type, qd, E);
        }
        vec(b + "post_attention_norm.weight", E);
        if (!q35_moe) {
            matrix(b + "ffn_gate.weight", spec.expert_type, E, spec.n_ff);
            matrix(b + "ffn_up.weight", spec.expert_type, E, spec.n_ff);
            matrix(b + "ffn_down.weight", spec.down_type, spec.n_ff, E);
            continue;
        }
        expert_ffn(b);
    }
    for (int64_t l = 0; !q35 && l < spec.n_layer; ++l) {
        const std::string b = "blk." + std::to_string(l) + ".";
        vec(b + "attn_norm.weight", E);
        matrix(b + "attn_q.weight", spec.attn_type, E, qd);
        matrix(b + "attn_k.weight", spec.attn_type, E, kd);
        matrix(b + "attn_v.weight", spec.attn_type, E, kd);
        if (qwen2) {
            for (const auto& [bias, n] : {std::pair<const char*, int64_t>{"attn_q.bias", qd},
                                          {"attn_k.bias", kd},
                                          {"attn_v.bias", kd}})
                w.add_tensor(b + bias, GgmlType::F32, {static_cast<uint64_t>(n)},
                             float_bytes(floats(n, 0.0f, 0.1f)));
        }
        if (spec.arch == "qwen3moe") {
            vec(b + "attn_q_norm.weight", hd);
            vec(b + "attn_k_norm.weight", hd);
        }
        matrix(b + "attn_output.weight", spec.attn_type, qd, E);
        vec(b + "ffn_norm.weight", E);
        expert_ffn(b);
    }
    vec("output_norm.weight", E);
    matrix("output.weight", spec.output_type, E, spec.n_vocab);
    w.write(path);
}

}  // namespace powerinfer::calibrate
