// The model summary printed by `powerinfer-cli --info`.
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>

#include "gguf/gguf.h"

namespace powerinfer::gguf {
namespace {

std::string format_bytes(uint64_t n) {
    static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double x = static_cast<double>(n);
    int unit = 0;
    while (x >= 1024.0 && unit < 4) {
        x /= 1024.0;
        ++unit;
    }
    char buf[32];
    if (unit == 0)
        std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(n));
    else
        std::snprintf(buf, sizeof buf, "%.2f %s", x, kUnits[unit]);
    return buf;
}

std::string format_count(uint64_t n) {
    // 134515008 -> "134.52 M": parameter counts are read at a glance.
    char buf[32];
    if (n >= 1000000000ull)
        std::snprintf(buf, sizeof buf, "%.2f B", static_cast<double>(n) / 1e9);
    else if (n >= 1000000ull)
        std::snprintf(buf, sizeof buf, "%.2f M", static_cast<double>(n) / 1e6);
    else
        std::snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(n));
    return buf;
}

std::string format_value(const Value& v) {
    if (const auto* s = v.as_string()) return s->size() > 60 ? s->substr(0, 57) + "..." : *s;
    if (const auto* a = v.as_array()) {
        // Per-layer values (e.g. head counts of some models) are short arrays.
        if (a->items.size() <= 8 && a->elem_type != ValueType::ARRAY) {
            std::string out = "[";
            for (size_t i = 0; i < a->items.size(); ++i) {
                if (i) out += ", ";
                out += format_value(a->items[i]);
            }
            return out + "]";
        }
        std::string out = "[";
        out += std::to_string(a->items.size());
        out += " x ";
        out += value_type_name(a->elem_type);
        return out + "]";
    }
    if (const auto b = v.as_bool()) return *b ? "true" : "false";
    if (v.type == ValueType::FLOAT32 || v.type == ValueType::FLOAT64) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%g", *v.as_float());
        return buf;
    }
    if (const auto i = v.as_int()) return std::to_string(*i);
    if (const auto u = v.as_uint()) return std::to_string(*u);
    return "?";
}

// llama.cpp's llama_ftype: what general.file_type means.
std::string_view file_type_name(int64_t ftype) {
    static constexpr std::pair<int64_t, std::string_view> kNames[] = {
        {0, "all F32"},     {1, "mostly F16"},   {2, "mostly Q4_0"}, {3, "mostly Q4_1"},
        {7, "mostly Q8_0"}, {8, "mostly Q5_0"},  {9, "mostly Q5_1"}, {10, "mostly Q2_K"},
        {11, "Q3_K_S"},     {12, "Q3_K_M"},      {13, "Q3_K_L"},     {14, "Q4_K_S"},
        {15, "Q4_K_M"},     {16, "Q5_K_S"},      {17, "Q5_K_M"},     {18, "Q6_K"},
        {19, "IQ2_XXS"},    {20, "IQ2_XS"},      {21, "Q2_K_S"},     {22, "IQ3_XS"},
        {23, "IQ3_XXS"},    {24, "IQ1_S"},       {25, "IQ4_NL"},     {26, "IQ3_S"},
        {27, "IQ3_M"},      {28, "IQ2_S"},       {29, "IQ2_M"},      {30, "IQ4_XS"},
        {31, "IQ1_M"},      {32, "mostly BF16"}, {36, "TQ1_0"},      {37, "TQ2_0"},
    };
    for (const auto& [id, name] : kNames)
        if (id == ftype) return name;
    return "unknown";
}

std::string pad(std::string s, size_t width, bool right = false) {
    if (s.size() >= width) return s;
    return right ? std::string(width - s.size(), ' ') + s : s + std::string(width - s.size(), ' ');
}

std::string format_shape(const std::vector<uint64_t>& shape) {
    std::string out;
    for (size_t i = 0; i < shape.size(); ++i) {
        if (i) out += " x ";
        out += std::to_string(shape[i]);
    }
    return out;
}

}  // namespace

std::string describe(const GgufFile& file) {
    std::string out;
    const auto line = [&](std::string_view label, const std::string& value) {
        out += "  " + pad(std::string(label), 22) + value + "\n";
    };
    const auto key_line = [&](std::string_view label, const std::string& key) {
        if (const Value* v = file.find(key)) line(label, format_value(*v));
    };

    out += "GGUF v" + std::to_string(file.version()) + ", " + format_bytes(file.file_size()) +
           ", " + std::to_string(file.metadata().size()) + " metadata keys, " +
           std::to_string(file.tensors().size()) + " tensors, alignment " +
           std::to_string(file.alignment()) + "\n";

    const std::string arch = file.get_string("general.architecture").value_or("");
    out += "\nModel\n";
    line("architecture", arch.empty() ? "(not set)" : arch);
    key_line("name", "general.name");
    key_line("size label", "general.size_label");
    if (const auto ftype = file.get_int("general.file_type"))
        line("file type",
             std::to_string(*ftype) + " (" + std::string(file_type_name(*ftype)) + ")");
    if (!arch.empty()) {
        static constexpr std::pair<const char*, const char*> kHyper[] = {
            {"context length", "context_length"},
            {"embedding length", "embedding_length"},
            {"block count", "block_count"},
            {"feed-forward length", "feed_forward_length"},
            {"attention heads", "attention.head_count"},
            {"KV heads", "attention.head_count_kv"},
            {"rope freq base", "rope.freq_base"},
            {"rope dimensions", "rope.dimension_count"},
            {"RMS norm epsilon", "attention.layer_norm_rms_epsilon"},
            {"vocab size (arch)", "vocab_size"},
        };
        for (const auto& [label, suffix] : kHyper) key_line(label, arch + "." + suffix);
    }

    out += "\nTokenizer\n";
    key_line("model", "tokenizer.ggml.model");
    key_line("pre-tokenizer", "tokenizer.ggml.pre");
    if (const Value* tokens = file.find("tokenizer.ggml.tokens")) {
        if (const Array* a = tokens->as_array())
            line("vocab size", std::to_string(a->items.size()));
    }
    if (const Value* merges = file.find("tokenizer.ggml.merges")) {
        if (const Array* a = merges->as_array()) line("merges", std::to_string(a->items.size()));
    }
    key_line("BOS token id", "tokenizer.ggml.bos_token_id");
    key_line("EOS token id", "tokenizer.ggml.eos_token_id");
    if (file.find("tokenizer.chat_template")) line("chat template", "yes");

    // Tensor table: widths from the content so columns line up.
    const auto& tensors = file.tensors();
    size_t w_name = 4, w_type = 4, w_shape = 5, w_bytes = 5;
    for (const auto& t : tensors) {
        w_name = std::max(w_name, t.name.size());
        w_type = std::max(w_type, ggml_type_name(t.type).size());
        w_shape = std::max(w_shape, format_shape(t.shape).size());
        w_bytes = std::max(w_bytes, format_bytes(t.n_bytes).size());
    }
    out += "\nTensors\n";
    const auto row = [&](const std::string& name, const std::string& type, const std::string& shape,
                         const std::string& bytes) {
        out += "  " + pad(name, w_name) + "  " + pad(type, w_type) + "  " + pad(shape, w_shape) +
               "  " + pad(bytes, w_bytes, true) + "\n";
    };
    row("name", "type", "shape", "bytes");
    row(std::string(w_name, '-'), std::string(w_type, '-'), std::string(w_shape, '-'),
        std::string(w_bytes, '-'));
    uint64_t total_bytes = 0, total_elems = 0;
    struct PerType {
        uint64_t count = 0, bytes = 0;
    };
    std::map<std::string_view, PerType> per_type;
    for (const auto& t : tensors) {
        row(t.name, std::string(ggml_type_name(t.type)), format_shape(t.shape),
            format_bytes(t.n_bytes));
        total_bytes += t.n_bytes;
        total_elems += t.n_elements;
        auto& p = per_type[ggml_type_name(t.type)];
        ++p.count;
        p.bytes += t.n_bytes;
    }
    out += "\nTotals\n";
    line("tensors", std::to_string(tensors.size()));
    line("parameters", format_count(total_elems));
    line("tensor data", format_bytes(total_bytes));
    for (const auto& [type, p] : per_type) {
        line("  " + std::string(type), pad(std::to_string(p.count), 5, true) + " tensors  " +
                                           pad(format_bytes(p.bytes), 11, true));
    }
    return out;
}

}  // namespace powerinfer::gguf
