// Calibration (docs/architecture.md, "Sparse subsystem"). The options, the
// report and the entry point are public (powerinfer/calibration.h); these
// are the names the engine and its tests use.
#pragma once

#include "powerinfer/calibration.h"

namespace powerinfer::calibrate {

using CalibrateOptions = CalibrationOptions;
using LayerReport = CalibrationLayerReport;
using TargetReport = CalibrationTargetReport;
using CalibrateReport = CalibrationReport;
using powerinfer::calibrate_model;

}  // namespace powerinfer::calibrate
