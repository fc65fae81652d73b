#include "engine_thread_backend.h"

#include <algorithm>
#include <exception>
#include <map>

namespace powerinfer::server {

EngineThreadBackend::EngineThreadBackend(std::unique_ptr<powerinfer::Engine> engine,
                                         QString modelId, QObject* parent, int concurrency)
    : CompletionBackend(parent),
      engine_(std::move(engine)),
      modelId_(std::move(modelId)),
      info_(engine_->info()) {
    if (concurrency > 1) {
        try {
            engine_->set_max_sequences(concurrency);
            concurrency_ = concurrency;
            batchingNote_ = QString::fromStdString(engine_->batching_note());
        } catch (const std::exception& e) {
            batchingNote_ = QStringLiteral(
                                "--concurrency %1 is not available, requests run one at "
                                "a time: %2")
                                .arg(concurrency)
                                .arg(QString::fromUtf8(e.what()));
        }
    }
    memory_ = engine_->memory();  // with the sequences' caches
    thread_ = std::thread([this] { concurrency_ > 1 ? runBatched() : run(); });
}

EngineThreadBackend::~EngineThreadBackend() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
        for (auto& pending : queue_) pending.job->cancel();
        if (current_) current_->cancel();
        for (CompletionJob* job : batch_) job->cancel();
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
    } catch (const std::exception& e) {
        terminal = failure(e, pending.request);
    }
    snapshotMemory();
    return terminal;
}

JobEvent EngineThreadBackend::failure(const std::exception& e,
                                      const powerinfer::GenerateRequest& request) const {
    JobEvent terminal;
    terminal.kind = JobEvent::Kind::Failed;
    if (dynamic_cast<const powerinfer::EngineError*>(&e)) {
        // The facade throws EngineError only for requests it cannot serve
        // (e.g. a prompt longer than the context): the client's problem.
        terminal.httpStatus = 400;
        terminal.error = QString::fromStdString(e.what());
        if (dynamic_cast<const powerinfer::ContextLengthExceeded*>(&e) ||
            promptExceedsContext(*engine_, request))
            terminal.code = kContextLengthExceeded;
    } else {
        terminal.httpStatus = 500;
        terminal.error = QStringLiteral("internal error in the engine: %1").arg(e.what());
    }
    return terminal;
}

void EngineThreadBackend::snapshotMemory() {
    powerinfer::MemoryReport memory;
    try {
        memory = engine_->memory();
    } catch (const std::exception&) {
        return;  // keep the previous snapshot; a failed report must not fail the job
    }
    std::lock_guard lock(mutex_);
    memory_ = memory;
}

void EngineThreadBackend::runBatched() {
    std::map<int, Pending> active;  // sequence -> request
    auto publish = [&] {
        std::lock_guard lock(mutex_);
        batch_.clear();
        for (const auto& [id, p] : active) batch_.push_back(p.job);
        running_ = int(active.size());
    };
    for (;;) {
        std::vector<Pending> admitted;
        {
            std::unique_lock lock(mutex_);
            wake_.wait(lock, [&] { return stopping_ || !queue_.empty() || !active.empty(); });
            if (queue_.empty() && active.empty()) return;  // stopping and drained
            // New requests join between steps, up to the concurrency.
            while (int(active.size() + admitted.size()) < concurrency_ && !queue_.empty()) {
                admitted.push_back(std::move(queue_.front()));
                queue_.pop_front();
            }
        }
        for (Pending& p : admitted) {
            if (p.job->isCancelled()) {
                JobEvent t;
                t.kind = JobEvent::Kind::Finished;
                t.result.finish = powerinfer::FinishReason::Cancelled;
                p.job->post(std::move(t));
                continue;
            }
            try {
                const int id = engine_->start_sequence(p.request);
                active[id] = std::move(p);
            } catch (const std::exception& e) {
                p.job->post(failure(e, p.request));
            }
        }
        publish();
        if (active.empty()) continue;
        // A cancelled or disconnected request frees its slot at this step.
        for (const auto& [id, p] : active)
            if (p.job->isCancelled()) engine_->cancel_sequence(id);
        std::vector<powerinfer::SequenceUpdate> updates;
        try {
            updates = engine_->step();
        } catch (const std::exception& e) {
            // Not a request's fault: every sequence of the step fails.
            for (auto& [id, p] : active) {
                engine_->cancel_sequence(id);
                JobEvent t;
                t.kind = JobEvent::Kind::Failed;
                t.httpStatus = 500;
                t.error = QStringLiteral("internal error in the engine: %1").arg(e.what());
                p.job->post(std::move(t));
            }
            active.clear();
            try {
                engine_->step();  // reports the cancelled sequences, freeing their slots
            } catch (const std::exception&) {
            }
            publish();
            continue;
        }
        bool anyFinished = false;
        for (powerinfer::SequenceUpdate& u : updates) {
            auto it = active.find(u.sequence);
            if (it == active.end()) continue;
            CompletionJob* job = it->second.job;
            for (powerinfer::TokenEvent& e : u.events) {
                if (e.token >= 0) {
                    std::lock_guard lock(mutex_);
                    lastToken_ = e.metrics;
                }
                if (e.piece.empty()) continue;
                JobEvent piece;
                piece.piece = std::move(e.piece);
                job->post(std::move(piece));
            }
            if (!u.finished) continue;
            anyFinished = true;
            active.erase(it);
            {
                // Off the list before the terminal event: after it, the
                // HTTP thread may delete the job.
                std::lock_guard lock(mutex_);
                batch_.erase(std::remove(batch_.begin(), batch_.end(), job), batch_.end());
                running_ = int(active.size());
            }
            JobEvent t;
            t.kind = JobEvent::Kind::Finished;
            t.result = std::move(u.result);
            job->post(std::move(t));
        }
        if (anyFinished) snapshotMemory();
    }
}

}  // namespace powerinfer::server
