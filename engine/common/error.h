// EngineError lives in the facade (powerinfer/error.h); engine code keeps
// including this name.
#pragma once

#include "powerinfer/error.h"
