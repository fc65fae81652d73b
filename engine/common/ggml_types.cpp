#include "common/ggml_types.h"

#include <limits>
#include <utility>

namespace powerinfer {
namespace {

struct Entry {
    uint32_t id;
    GgmlTypeTraits traits;
};

// Block layouts as defined by ggml (ggml-common.h); "supported" marks the
// types our CPU kernels implement.
constexpr Entry kTypes[] = {
    {0, {"F32", 1, 4, true}},          {1, {"F16", 1, 2, true}},
    {2, {"Q4_0", 32, 18, true}},       {3, {"Q4_1", 32, 20, true}},
    {6, {"Q5_0", 32, 22, true}},       {7, {"Q5_1", 32, 24, true}},
    {8, {"Q8_0", 32, 34, true}},       {9, {"Q8_1", 32, 36, false}},
    {10, {"Q2_K", 256, 84, false}},    {11, {"Q3_K", 256, 110, false}},
    {12, {"Q4_K", 256, 144, true}},    {13, {"Q5_K", 256, 176, true}},
    {14, {"Q6_K", 256, 210, true}},    {15, {"Q8_K", 256, 292, false}},
    {16, {"IQ2_XXS", 256, 66, false}}, {17, {"IQ2_XS", 256, 74, false}},
    {18, {"IQ3_XXS", 256, 98, false}}, {19, {"IQ1_S", 256, 50, false}},
    {20, {"IQ4_NL", 32, 18, false}},   {21, {"IQ3_S", 256, 110, false}},
    {22, {"IQ2_S", 256, 82, false}},   {23, {"IQ4_XS", 256, 136, false}},
    {24, {"I8", 1, 1, false}},         {25, {"I16", 1, 2, false}},
    {26, {"I32", 1, 4, false}},        {27, {"I64", 1, 8, false}},
    {28, {"F64", 1, 8, false}},        {29, {"IQ1_M", 256, 56, false}},
    {30, {"BF16", 1, 2, true}},        {34, {"TQ1_0", 256, 54, false}},
    {35, {"TQ2_0", 256, 66, false}},
};

}  // namespace

std::optional<GgmlTypeTraits> ggml_type_traits(uint32_t type_id) {
    for (const auto& e : kTypes)
        if (e.id == type_id) return e.traits;
    return std::nullopt;
}

GgmlTypeTraits ggml_traits(GgmlType t) {
    // Every enumerator is in the table.
    return *ggml_type_traits(static_cast<uint32_t>(t));
}

std::string_view ggml_type_name(GgmlType t) { return ggml_traits(t).name; }

std::optional<uint64_t> ggml_row_bytes(GgmlType t, uint64_t n) {
    const auto tr = ggml_traits(t);
    if (n % tr.block_elems != 0) return std::nullopt;
    const uint64_t blocks = n / tr.block_elems;
    if (blocks > std::numeric_limits<uint64_t>::max() / tr.block_bytes) return std::nullopt;
    return blocks * tr.block_bytes;
}

std::string_view llama_ftype_name(int64_t file_type) {
    // llama_ftype values that name one quantization (llama.cpp's list).
    static constexpr std::pair<int64_t, const char*> kFileTypes[] = {
        {0, "F32"},      {1, "F16"},      {2, "Q4_0"},    {3, "Q4_1"},    {7, "Q8_0"},
        {8, "Q5_0"},     {9, "Q5_1"},     {10, "Q2_K"},   {11, "Q3_K_S"}, {12, "Q3_K_M"},
        {13, "Q3_K_L"},  {14, "Q4_K_S"},  {15, "Q4_K_M"}, {16, "Q5_K_S"}, {17, "Q5_K_M"},
        {18, "Q6_K"},    {19, "IQ2_XXS"}, {20, "IQ2_XS"}, {21, "Q2_K_S"}, {22, "IQ3_XS"},
        {23, "IQ3_XXS"}, {24, "IQ1_S"},   {25, "IQ4_NL"}, {26, "IQ3_S"},  {27, "IQ3_M"},
        {28, "IQ2_S"},   {29, "IQ2_M"},   {30, "IQ4_XS"}, {31, "IQ1_M"},  {32, "BF16"},
        {36, "TQ1_0"},   {37, "TQ2_0"},
    };
    for (const auto& [id, name] : kFileTypes)
        if (id == file_type) return name;
    return {};
}

}  // namespace powerinfer
