#include "completion_backend.h"

namespace powerinfer::server {

bool promptExceedsContext(const powerinfer::Engine& engine,
                          const powerinfer::GenerateRequest& request) {
    try {
        const std::string text =
            request.messages.empty() ? request.prompt : engine.format_chat(request.messages);
        const size_t n = engine.tokenize(text, true).size();
        return engine.info().n_ctx > 0 && n >= size_t(engine.info().n_ctx);
    } catch (const std::exception&) {
        return false;
    }
}

void CompletionJob::post(JobEvent event) {
    // A queued functor call is safe from any thread; the job outlives it by
    // the contract in the header (deleted only after the terminal event).
    QMetaObject::invokeMethod(
        this, [this, ev = std::move(event)] { emit this->event(ev); }, Qt::QueuedConnection);
}

}  // namespace powerinfer::server
