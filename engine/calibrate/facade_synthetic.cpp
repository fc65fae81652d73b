// powerinfer/synthetic.h over calibrate/synth_model.
#include "calibrate/synth_model.h"
#include "powerinfer/synthetic.h"

namespace powerinfer {
namespace {

GgmlType parse_type(const std::string& s) {
    for (uint32_t id = 0; id < 40; ++id) {
        auto t = ggml_type_traits(id);
        if (t && t->supported && t->name == s) return static_cast<GgmlType>(id);
    }
    throw EngineError("unknown or unsupported type '" + s + "'");
}

}  // namespace

void check_synthetic_weight_type(const std::string& type) { parse_type(type); }

SyntheticModelSpec synthetic_preset(const std::string& name) {
    const calibrate::SynthSpec s = calibrate::synth_preset(name);
    SyntheticModelSpec p;
    p.n_layer = s.n_layer;
    p.n_embd = s.n_embd;
    p.n_ff = s.n_ff;
    p.n_head = s.n_head;
    p.n_head_kv = s.n_head_kv;
    p.n_vocab = s.n_vocab;
    p.n_ctx = s.n_ctx;
    p.weight_type = std::string(ggml_type_name(s.type));
    p.seed = s.seed;
    p.write_sidecar = s.write_sidecar;
    p.zipf_s = s.zipf_s;
    p.sparsity = s.sparsity;
    p.predictor_rank = s.predictor_rank;
    return p;
}

void write_synthetic_model(const std::filesystem::path& path, const SyntheticModelSpec& p) {
    calibrate::SynthSpec s;
    s.n_layer = p.n_layer;
    s.n_embd = p.n_embd;
    s.n_ff = p.n_ff;
    s.n_head = p.n_head;
    s.n_head_kv = p.n_head_kv;
    s.n_vocab = p.n_vocab;
    s.n_ctx = p.n_ctx;
    s.type = parse_type(p.weight_type);
    s.seed = p.seed;
    s.write_sidecar = p.write_sidecar;
    s.zipf_s = p.zipf_s;
    s.sparsity = p.sparsity;
    s.predictor_rank = p.predictor_rank;
    calibrate::write_synthetic_model(path, s);
}

}  // namespace powerinfer
