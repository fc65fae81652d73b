// Per-thread scheduling priority, so that inference on every core never
// starves a GUI thread: lowered threads still get all idle CPU. A GUI lowers
// the thread that calls Engine::generate() with this, and sets
// LoadOptions::low_priority_threads for the engine's own workers.
#pragma once

namespace powerinfer {

// Runs the calling thread below normal priority (Linux: nice 10 for this
// thread only; Windows: THREAD_PRIORITY_BELOW_NORMAL; elsewhere nothing).
// Returns false if the OS refused or cannot do it.
bool lower_current_thread_priority();
// The calling thread's nice value on Linux; on Windows its priority level
// as one (below normal = 10, normal = 0); 0 elsewhere. For tests.
int current_thread_nice();

}  // namespace powerinfer
