#include "powerinfer/engine.h"

#ifndef POWERINFER_VERSION
#error "POWERINFER_VERSION must be defined by the build (engine/runtime/CMakeLists.txt)"
#endif

namespace powerinfer {

std::string version_string() { return POWERINFER_VERSION; }

}  // namespace powerinfer
