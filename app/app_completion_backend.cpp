#include "app_completion_backend.h"

#include <QFileInfo>

namespace powerinfer::app {

using powerinfer::server::BackendStatus;
using powerinfer::server::CompletionJob;
using powerinfer::server::JobEvent;

namespace {

void postCancelled(CompletionJob* job) {
    JobEvent done;
    done.kind = JobEvent::Kind::Finished;
    done.result.finish = powerinfer::FinishReason::Cancelled;
    job->post(std::move(done));
}

void postFailure(CompletionJob* job, int status, const QString& message, const QString& code = {}) {
    JobEvent failed;
    failed.kind = JobEvent::Kind::Failed;
    failed.httpStatus = status;
    failed.error = message;
    failed.code = code;
    job->post(std::move(failed));
}

}  // namespace

AppCompletionBackend::AppCompletionBackend(EngineClient* engine, QObject* parent)
    : CompletionBackend(parent), engine_(engine) {
    cancelPoll_.setInterval(20);
    connect(&cancelPoll_, &QTimer::timeout, this, [this] {
        if (running_ && running_->job && running_->job->isCancelled())
            running_->cancel->store(true);
    });
    connect(engine, &EngineClient::loadFinished, this, [this](quint64, const LoadOutcome& out) {
        if (!out.ok) return;
        modelPath_ = out.modelPath;
        info_ = out.info;
        memory_ = out.memory;
        lastToken_.reset();
    });
    connect(engine, &EngineClient::tuningApplied, this,
            [this](const powerinfer::Tuning&, const powerinfer::MemoryReport& m) { memory_ = m; });
    connect(engine, &EngineClient::generationPieces, this,
            [this](quint64 id, const StreamChunk& chunk) {
                if (!running_ || running_->id != id) return;
                memory_ = chunk.memory;
                if (chunk.samples) lastToken_ = chunk.samples;  // the batch, not a copy
                if (chunk.text.isEmpty() || !running_->job) return;
                JobEvent piece;
                piece.piece = chunk.text.toStdString();
                running_->job->post(std::move(piece));
            });
    connect(engine, &EngineClient::generationFinished, this,
            [this](quint64 id, const GenerationOutcome& outcome) {
                if (running_ && running_->id == id) finishRunning(outcome);
            });
    connect(engine, &EngineClient::generationsIdle, this, &AppCompletionBackend::startNext);
}

AppCompletionBackend::~AppCompletionBackend() {
    if (running_) {
        running_->cancel->store(true);
        if (running_->job) postCancelled(running_->job);
    }
    for (const Pending& p : queue_)
        if (p.job) postCancelled(p.job);
}

QString AppCompletionBackend::modelId() const {
    if (modelPath_.isEmpty()) return {};
    QString name = QFileInfo(modelPath_).fileName();
    if (name.endsWith(QLatin1String(".gguf"), Qt::CaseInsensitive)) name.chop(5);
    return name;
}

QStringList AppCompletionBackend::modelAliases() const {
    QStringList aliases;
    if (!info_.name.empty()) aliases << QString::fromStdString(info_.name);
    if (!modelPath_.isEmpty()) aliases << QFileInfo(modelPath_).fileName();
    return aliases;
}

BackendStatus AppCompletionBackend::status() const {
    BackendStatus s;
    s.queued = int(queue_.size());
    s.running = running_ ? 1 : 0;
    s.memory = memory_;
    if (lastToken_ && !lastToken_->empty()) s.lastToken = lastToken_->back();
    return s;
}

CompletionJob* AppCompletionBackend::submit(const powerinfer::GenerateRequest& request) {
    auto* job = new CompletionJob;
    queue_.push_back({job, request});
    startNext();
    return job;
}

void AppCompletionBackend::startNext() {
    while (!running_ && !queue_.empty()) {
        if (!engine_) {
            for (const Pending& p : queue_)
                if (p.job) postFailure(p.job, 503, tr("The app's engine has shut down."));
            queue_.clear();
            return;
        }
        // The user's chat (or another job) is on the engine: wait for it.
        if (engine_->generationsInFlight() > 0) return;
        Pending next = std::move(queue_.front());
        queue_.pop_front();
        if (!next.job) continue;
        if (next.job->isCancelled()) {
            postCancelled(next.job);
            continue;
        }
        if (!engine_->isLoaded()) {
            postFailure(next.job, 503,
                        tr("No model is loaded in PowerInfer Desktop. Load one in the app, then "
                           "retry."));
            continue;
        }
        GenerationJob job;
        job.messages = next.request.messages;
        job.prompt = next.request.prompt;
        job.maxTokens = next.request.max_tokens;
        job.sampling = next.request.sampling;
        job.stop = next.request.stop;
        Running r;
        r.job = next.job;
        r.cancel = std::make_shared<std::atomic<bool>>(false);
        r.id = engine_->submitGeneration(std::move(job), r.cancel);
        running_ = std::move(r);
        cancelPoll_.start();
    }
}

void AppCompletionBackend::finishRunning(const GenerationOutcome& outcome) {
    const QPointer<CompletionJob> job = running_->job;
    running_.reset();
    cancelPoll_.stop();
    if (!job) return;
    if (!outcome.ok) {
        int status = 500;
        if (outcome.invalidRequest)
            status = 400;
        else if (!engine_ || !engine_->isLoaded())
            status = 503;
        return postFailure(
            job, status, outcome.error,
            outcome.contextExceeded ? powerinfer::server::kContextLengthExceeded : QString());
    }
    JobEvent done;
    done.kind = JobEvent::Kind::Finished;
    auto& r = done.result;
    r.text = outcome.text.toStdString();
    r.finish = outcome.finish;
    r.prompt_tokens = outcome.promptTokens;
    r.evaluated_prompt_tokens = outcome.promptTokens;
    r.generated_tokens = outcome.generatedTokens;
    r.decode_tokens_per_s = outcome.tokensPerSecond;
    r.prompt_tokens_per_s = outcome.promptTokensPerSecond;
    r.notice = outcome.notice.toStdString();
    job->post(std::move(done));
}

}  // namespace powerinfer::app
