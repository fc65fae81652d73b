#include "model/expert_placement.h"

#include <algorithm>
#include <cstring>

#include "common/error.h"
#include "gguf/gguf.h"
#include "model/model.h"
#include "powerinfer/utf8_path.h"

namespace powerinfer::model {
namespace {

constexpr uint32_t kExpertSidecarVersion = 1;

std::string count_key(int64_t l) { return "blk." + std::to_string(l) + ".expert_count"; }

[[noreturn]] void refuse(const std::filesystem::path& path, const std::string& why) {
    throw EngineError("sidecar " + path_to_utf8(path) + ": " + why +
                      "; run powerinfer-calibrate -m MODEL --corpus FILE to record the experts' "
                      "routing again");
}

}  // namespace

bool is_expert_sidecar(const gguf::GgufFile& f) {
    return f.get_string("general.architecture").value_or("") == "powerinfer-sidecar" &&
           f.get_string("powerinfer.kind").value_or("") == "experts";
}

void write_expert_sidecar(const std::filesystem::path& path, const ExpertRoutingStats& s) {
    using gguf::Value;
    gguf::GgufWriter w;
    w.set("general.architecture", Value::str("powerinfer-sidecar"));
    w.set("powerinfer.kind", Value::str("experts"));
    w.set("powerinfer.format_version", Value::u32(kExpertSidecarVersion));
    w.set("powerinfer.tool_version", Value::str("powerinfer-calibrate 0.1"));
    w.set("powerinfer.model_hash", Value::str(s.model_hash));
    w.set("powerinfer.model_bytes", Value::u64(s.model_bytes));
    w.set("powerinfer.n_layer", Value::u32(static_cast<uint32_t>(s.n_layer)));
    w.set("powerinfer.n_expert", Value::u32(static_cast<uint32_t>(s.n_expert)));
    w.set("powerinfer.n_expert_used", Value::u32(static_cast<uint32_t>(s.n_expert_used)));
    w.set("powerinfer.calib_tokens", Value::u64(s.calib_tokens));
    for (int64_t l = 0; l < s.n_layer; ++l) {
        const auto& c = s.counts.at(static_cast<size_t>(l));
        std::vector<int32_t> v(c.begin(), c.end());
        std::vector<uint8_t> bytes(v.size() * sizeof(int32_t));
        std::memcpy(bytes.data(), v.data(), bytes.size());
        w.add_tensor(count_key(l), GgmlType::I32, {static_cast<uint64_t>(s.n_expert)},
                     std::move(bytes));
    }
    w.write(path);
}

ExpertRoutingStats read_expert_sidecar(const std::filesystem::path& path,
                                       const std::string& expected_hash) {
    std::unique_ptr<gguf::GgufFile> f;
    try {
        f = gguf::GgufFile::open(path);
    } catch (const EngineError& e) {
        refuse(path, std::string("unreadable (") + e.what() + ")");
    }
    if (!is_expert_sidecar(*f)) refuse(path, "not an expert-routing sidecar");
    if (f->get_int("powerinfer.format_version").value_or(0) != kExpertSidecarVersion)
        refuse(path, "written by an incompatible version of powerinfer-calibrate");
    ExpertRoutingStats s;
    s.model_hash = f->get_string("powerinfer.model_hash").value_or("");
    if (!expected_hash.empty() && s.model_hash != expected_hash)
        refuse(path, "made for another model file (hash " + s.model_hash + ", model " +
                         expected_hash + ")");
    s.model_bytes = static_cast<uint64_t>(f->get_int("powerinfer.model_bytes").value_or(0));
    s.n_layer = f->get_int("powerinfer.n_layer").value_or(0);
    s.n_expert = f->get_int("powerinfer.n_expert").value_or(0);
    s.n_expert_used = f->get_int("powerinfer.n_expert_used").value_or(0);
    s.calib_tokens = static_cast<uint64_t>(f->get_int("powerinfer.calib_tokens").value_or(0));
    if (s.n_layer <= 0 || s.n_layer > 4096 || s.n_expert <= 0 || s.n_expert > 512 ||
        s.n_expert_used <= 0 || s.n_expert_used > s.n_expert)
        refuse(path, "invalid layer or expert counts");
    for (int64_t l = 0; l < s.n_layer; ++l) {
        const auto* t = f->tensor(count_key(l));
        if (!t || t->type != GgmlType::I32 || t->n_elements != static_cast<uint64_t>(s.n_expert))
            refuse(path, "tensor " + count_key(l) + " is missing or has a wrong shape");
        std::vector<int32_t> v(static_cast<size_t>(s.n_expert));
        std::memcpy(v.data(), t->data, v.size() * sizeof(int32_t));
        int64_t sum = 0;
        for (int32_t c : v) {
            if (c < 0) refuse(path, "negative routing count in " + count_key(l));
            sum += c;
        }
        if (static_cast<uint64_t>(sum) != s.calib_tokens * static_cast<uint64_t>(s.n_expert_used))
            refuse(path, "the routing counts of layer " + std::to_string(l) +
                             " do not add up to tokens x experts per token");
        s.counts.emplace_back(v.begin(), v.end());
    }
    return s;
}

ExpertPlacement plan_expert_placement(const Model& model, const ExpertRoutingStats& stats,
                                      int64_t budget_bytes, double coverage) {
    const ModelConfig& c = model.config();
    if (!c.moe()) throw EngineError("expert placement needs a mixture-of-experts model");
    std::vector<int64_t> bytes;
    for (int64_t l = 0; l < c.n_layer; ++l)
        bytes.push_back(model.layer(static_cast<int>(l)).moe.expert_bytes());
    if (stats.n_expert != c.n_expert)
        throw EngineError("the expert-routing sidecar's shape (" + std::to_string(stats.n_layer) +
                          " layers x " + std::to_string(stats.n_expert) +
                          " experts) does not match the model: run powerinfer-calibrate again");
    return plan_expert_placement(bytes, stats, budget_bytes, coverage);
}

ExpertPlacement plan_expert_placement(const std::vector<int64_t>& layer_expert_bytes,
                                      const ExpertRoutingStats& stats, int64_t budget_bytes,
                                      double coverage) {
    const int64_t n_layer = static_cast<int64_t>(layer_expert_bytes.size());
    if (stats.n_layer != n_layer || static_cast<int64_t>(stats.counts.size()) != n_layer)
        throw EngineError("the expert-routing sidecar's shape (" + std::to_string(stats.n_layer) +
                          " layers x " + std::to_string(stats.n_expert) +
                          " experts) does not match the model: run powerinfer-calibrate again");
    ExpertPlacement p;
    p.budget_bytes = std::max<int64_t>(0, budget_bytes);
    p.on_device.resize(static_cast<size_t>(n_layer));
    struct Candidate {
        int32_t layer, expert;
        int64_t count, bytes;
    };
    std::vector<Candidate> all;
    int64_t routed = 0;
    for (int64_t l = 0; l < n_layer; ++l) {
        const int64_t bytes = layer_expert_bytes[static_cast<size_t>(l)];
        for (int64_t e = 0; e < stats.n_expert; ++e) {
            const int64_t n = stats.counts[static_cast<size_t>(l)][static_cast<size_t>(e)];
            all.push_back({static_cast<int32_t>(l), static_cast<int32_t>(e), n, bytes});
            routed += n;
            p.expert_bytes += bytes;
        }
    }
    p.total_experts = static_cast<int64_t>(all.size());
    // count / bytes descending, compared without division.
    std::stable_sort(all.begin(), all.end(), [](const Candidate& a, const Candidate& b) {
        return static_cast<double>(a.count) * static_cast<double>(b.bytes) >
               static_cast<double>(b.count) * static_cast<double>(a.bytes);
    });
    int64_t hits = 0;
    for (const Candidate& k : all) {
        // Past the coverage asked for, the cache gets the rest.
        if (coverage < 1.0 && routed > 0 &&
            static_cast<double>(hits) >= coverage * static_cast<double>(routed))
            break;
        if (p.placed_bytes + k.bytes > p.budget_bytes) break;  // the rest ranks lower
        p.placed_bytes += k.bytes;
        p.on_device[static_cast<size_t>(k.layer)].push_back(k.expert);
        ++p.placed_experts;
        hits += k.count;
    }
    p.routed_share = routed > 0 ? static_cast<double>(hits) / static_cast<double>(routed) : 0.0;
    return p;
}

}  // namespace powerinfer::model
