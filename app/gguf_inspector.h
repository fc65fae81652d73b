// Model-picker facts read from a GGUF header (architecture, name, dominant
// weight type) through the engine's validating reader. Safe on any file: a
// bad one yields ModelFileInfo::error instead of throwing.
#pragma once

#include "model_catalog.h"

namespace powerinfer::app {

ModelFileInfo ggufModelInfo(const QString& path);

// The quantization a file is known by: its general.file_type (llama.cpp's
// llama_ftype: 15 is "Q4_K_M") where it says one, else the type holding
// most matrix bytes. A Q4_K_M file keeps some matrices in Q5_0/Q6_K/Q8_0,
// and Qwen2.5-Coder and Gemma 3 files showed as "Q5_0" and "Q8_0".
QString quantLabel(int64_t fileType, const QString& dominantType);

}  // namespace powerinfer::app
