#include "completion_backend.h"

namespace powerinfer::server {

void CompletionJob::post(JobEvent event) {
    // A queued functor call is safe from any thread; the job outlives it by
    // the contract in the header (deleted only after the terminal event).
    QMetaObject::invokeMethod(
        this, [this, ev = std::move(event)] { emit this->event(ev); }, Qt::QueuedConnection);
}

}  // namespace powerinfer::server
