// libFuzzer entry point: any byte string must either parse or throw
// GgufError; crashes, sanitizer reports, other exceptions and leaks are bugs.
#include <cstddef>
#include <cstdint>

#include "gguf/gguf.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace powerinfer::gguf;
    try {
        const auto f = GgufFile::from_memory({data, size}, "fuzz.gguf");
        // Touch what consumers touch: every tensor's data range and the
        // summary printer (which walks all metadata it knows).
        uint64_t sum = 0;
        for (const TensorInfo& t : f->tensors()) {
            if (t.n_bytes) sum += t.data[0] + t.data[t.n_bytes - 1];
        }
        const std::string text = describe(*f);
        sum += text.size();
        volatile uint64_t sink = sum;
        (void)sink;
    } catch (const GgufError&) {
    }
    return 0;
}
