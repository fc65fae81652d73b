#include "engine_thread_backend.h"

#include <exception>

namespace powerinfer::server {

EngineThreadBackend::EngineThreadBackend(std::unique_ptr<powerinfer::Engine> engine,
                                         QString modelId, QObject* parent)
    : CompletionBackend(parent),
      engine_(std::move(engine)),
      modelId_(std::move(modelId)),
      info_(engine_->info()),
      memory_(engine_->memory()) {
    thread_ = std::thread([this] { run(); });
}

EngineThreadBackend::~EngineThreadBackend() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
        for (auto& pending : queue_) pending.job->cancel();
        if (current_) current_->cancel();
    }
    wake_.notify_all();
    thread_.join();
}

QStringList EngineThreadBackend::modelAliases() const {
    QStringList aliases;
    if (!info_.name.empty()) aliases << QString::fromStdString(info_.name);
    aliases << modelId_ + QStringLiteral(".gguf");
    return aliases;
}

CompletionJob* EngineThreadBackend::submit(const powerinfer::GenerateRequest& request) {
    auto* job = new CompletionJob;
    {
        std::lock_guard lock(mutex_);
        if (stopping_) job->cancel();
        queue_.push_back({job, request});
    }
    wake_.notify_one();
    return job;
}

BackendStatus EngineThreadBackend::status() const {
    std::lock_guard lock(mutex_);
    BackendStatus s;
    s.queued = int(queue_.size());
    s.running = running_;
    s.memory = memory_;
    s.lastToken = lastToken_;
    return s;
}

void EngineThreadBackend::run() {
    for (;;) {
        Pending pending;
        {
            std::unique_lock lock(mutex_);
            wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
            if (queue_.empty()) return;  // stopping and drained
            pending = std::move(queue_.front());
            queue_.pop_front();
            current_ = pending.job;
            running_ = 1;
        }
        JobEvent terminal = serve(pending);
        {
            std::lock_guard lock(mutex_);
            current_ = nullptr;
            running_ = 0;
        }
        // Last: once its terminal event is delivered, the HTTP thread may
        // delete the job at any moment, so nothing here (the destructor's
        // cancel of current_ included) may reach it after this post.
        pending.job->post(std::move(terminal));
    }
}

JobEvent EngineThreadBackend::serve(Pending& pending) {
    CompletionJob* job = pending.job;
    JobEvent terminal;
    if (job->isCancelled()) {
        terminal.kind = JobEvent::Kind::Finished;
        terminal.result.finish = powerinfer::FinishReason::Cancelled;
        return terminal;
    }
    try {
        auto onToken = [this, job](const powerinfer::TokenEvent& token) {
            {
                std::lock_guard lock(mutex_);
                lastToken_ = token.metrics;
            }
            if (!token.piece.empty()) {
                JobEvent piece;
                piece.piece = token.piece;
                job->post(std::move(piece));
            }
        };
        terminal.kind = JobEvent::Kind::Finished;
        terminal.result = engine_->generate(pending.request, onToken, job->cancelFlag());
    } catch (const powerinfer::EngineError& e) {
        // The facade throws EngineError only for requests it cannot serve
        // (e.g. a prompt longer than the context): the client's problem.
        terminal = {};
        terminal.kind = JobEvent::Kind::Failed;
        terminal.httpStatus = 400;
        terminal.error = QString::fromStdString(e.what());
        if (dynamic_cast<const powerinfer::ContextLengthExceeded*>(&e) ||
            promptExceedsContext(*engine_, pending.request))
            terminal.code = kContextLengthExceeded;
    } catch (const std::exception& e) {
        terminal = {};
        terminal.kind = JobEvent::Kind::Failed;
        terminal.httpStatus = 500;
        terminal.error = QStringLiteral("internal error in the engine: %1").arg(e.what());
    }
    powerinfer::MemoryReport memory;
    bool haveMemory = false;
    try {
        memory = engine_->memory();
        haveMemory = true;
    } catch (const std::exception&) {
        // Keep the previous snapshot; a failed report must not fail the job.
    }
    {
        std::lock_guard lock(mutex_);
        if (haveMemory) memory_ = memory;
    }
    return terminal;
}

}  // namespace powerinfer::server
