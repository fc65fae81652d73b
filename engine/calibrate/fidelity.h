// Sparse-vs-dense fidelity (powerinfer/evaluation.h): drives the model
// directly, like calibration. These are the names the engine's tests use.
#pragma once

#include "powerinfer/evaluation.h"

namespace powerinfer::calibrate {

using powerinfer::evaluate_fidelity;
using powerinfer::FidelityOptions;
using powerinfer::FidelityResult;

}  // namespace powerinfer::calibrate
