// Thread priority is part of the facade (powerinfer/threads.h); engine code
// keeps including this name.
#pragma once

#include "powerinfer/threads.h"
