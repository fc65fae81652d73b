// Tensor element types as numbered in GGUF / ggml, with their block layout.
// One table serves the GGUF validator, the quant kernels and the placement's
// byte accounting.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace powerinfer {

enum class GgmlType : uint32_t {
    F32 = 0,
    F16 = 1,
    Q4_0 = 2,
    Q4_1 = 3,
    Q5_0 = 6,
    Q5_1 = 7,
    Q8_0 = 8,
    Q8_1 = 9,
    Q2_K = 10,
    Q3_K = 11,
    Q4_K = 12,
    Q5_K = 13,
    Q6_K = 14,
    Q8_K = 15,
    IQ2_XXS = 16,
    IQ2_XS = 17,
    IQ3_XXS = 18,
    IQ1_S = 19,
    IQ4_NL = 20,
    IQ3_S = 21,
    IQ2_S = 22,
    IQ4_XS = 23,
    I8 = 24,
    I16 = 25,
    I32 = 26,
    I64 = 27,
    F64 = 28,
    IQ1_M = 29,
    BF16 = 30,
    TQ1_0 = 34,
    TQ2_0 = 35,
};

struct GgmlTypeTraits {
    std::string_view name;
    uint32_t block_elems;  // elements per block (1 for plain types)
    uint32_t block_bytes;  // bytes per block
    bool supported;        // whether our kernels can compute with it
};

// Traits for a raw type id as found in a file; nullopt for ids ggml does not
// define (the GGUF reader rejects those).
std::optional<GgmlTypeTraits> ggml_type_traits(uint32_t type_id);
GgmlTypeTraits ggml_traits(GgmlType t);
std::string_view ggml_type_name(GgmlType t);
// The quantization a general.file_type (llama.cpp's llama_ftype) names
// ("Q4_K_M" for 15); empty for a value that names none.
std::string_view llama_ftype_name(int64_t file_type);

// Bytes of one row of n elements; nullopt if n is not a multiple of the block
// size or the size overflows.
std::optional<uint64_t> ggml_row_bytes(GgmlType t, uint64_t n);

}  // namespace powerinfer
