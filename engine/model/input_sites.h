// The one-token products of a model's graph, by the input they take: what
// sparse engine v3's input sparsity (sparse/input_sparsity.h) runs on.
#pragma once

#include <vector>

#include "tensor/matmul.h"

namespace powerinfer::model {

enum class InputSite : int { AttnIn, AttnOut, FfnIn, FfnMid, Head };
inline constexpr int kInputSites = 5;

// The matrices one product takes together (the graph's order: q, k, v; gate,
// up), their site and layer (-1 for the head).
struct SiteMatrices {
    InputSite site = InputSite::AttnIn;
    int layer = -1;
    std::vector<tensor::WeightView> ws;
};

}  // namespace powerinfer::model
