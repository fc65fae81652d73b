// Model-picker facts read from a GGUF header (architecture, name, dominant
// weight type) through the engine's validating reader. Safe on any file: a
// bad one yields ModelFileInfo::error instead of throwing.
#pragma once

#include "model_catalog.h"

namespace powerinfer::app {

ModelFileInfo ggufModelInfo(const QString& path);

}  // namespace powerinfer::app
