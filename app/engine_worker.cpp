#include "engine_worker.h"

#include <qcoro/qcorosignal.h>

#include <QElapsedTimer>
#include <QMetaObject>

namespace powerinfer::app {

namespace {

QString fromUtf8(const std::string& s) { return QString::fromUtf8(s.data(), qsizetype(s.size())); }

void registerMetaTypes() {
    static const bool done = [] {
        qRegisterMetaType<LoadOutcome>();
        qRegisterMetaType<StreamChunk>();
        qRegisterMetaType<GenerationOutcome>();
        return true;
    }();
    Q_UNUSED(done);
}

}  // namespace

EngineWorker::EngineWorker(EngineFactory factory, std::chrono::milliseconds batchInterval)
    : factory_(std::move(factory)), batchInterval_(batchInterval) {}

EngineWorker::~EngineWorker() = default;

void EngineWorker::load(quint64 id, powerinfer::LoadOptions options, CancelFlag cancel) {
    LoadOutcome outcome;
    // Free the previous model first: two models at once may not fit in memory.
    engine_.reset();
    if (cancel->load()) {
        outcome.cancelled = true;
        outcome.error = tr("Loading was cancelled.");
        emit loadFinished(id, outcome);
        return;
    }
    int lastPercent = -1;
    options.progress = [this, id, cancel, &lastPercent](float fraction) {
        const int percent = int(fraction * 100.0f);
        if (percent != lastPercent) {  // at most 101 signals per load
            lastPercent = percent;
            emit loadProgress(id, double(fraction));
        }
        return !cancel->load();
    };
    try {
        engine_ = factory_(options);
        if (!engine_) throw powerinfer::EngineError("the engine factory returned no engine");
        outcome.ok = true;
        outcome.info = engine_->info();
        outcome.deviceName = fromUtf8(engine_->memory().device_name);
    } catch (const powerinfer::LoadCancelled&) {
        outcome.cancelled = true;
        outcome.error = tr("Loading was cancelled.");
    } catch (const std::exception& e) {
        outcome.error = fromUtf8(e.what());
    }
    if (!outcome.ok) engine_.reset();
    emit loadFinished(id, outcome);
}

void EngineWorker::unload() { engine_.reset(); }

void EngineWorker::setTuning(powerinfer::Tuning tuning) {
    if (engine_) engine_->set_tuning(tuning);
}

void EngineWorker::reset() {
    if (engine_) engine_->reset();
}

void EngineWorker::generate(quint64 id, GenerationJob job, CancelFlag cancel) {
    GenerationOutcome outcome;
    if (!engine_) {
        outcome.error = tr("No model is loaded. Choose a model first.");
        emit generationFinished(id, outcome);
        return;
    }
    powerinfer::GenerateRequest request;
    request.messages = std::move(job.messages);
    request.max_tokens = job.maxTokens;
    request.sampling = job.sampling;

    // Time-based batching: the thread is busy inside generate(), so no timer
    // can fire here; instead each token checks whether a batch is due.
    using Clock = std::chrono::steady_clock;
    std::string pending;
    int pendingTokens = 0, totalTokens = 0;
    double sparsitySum = 0, hitSum = 0;
    int metricSamples = 0;
    auto lastEmit = Clock::now() - batchInterval_;
    Clock::time_point firstToken;
    const auto flush = [&](Clock::time_point now) {
        if (pendingTokens == 0 && pending.empty()) return;
        StreamChunk chunk;
        chunk.text = fromUtf8(pending);
        chunk.tokens = pendingTokens;
        chunk.totalTokens = totalTokens;
        const double seconds = std::chrono::duration<double>(now - firstToken).count();
        chunk.tokensPerSecond = seconds > 0 && totalTokens > 1 ? (totalTokens - 1) / seconds : 0;
        pending.clear();
        pendingTokens = 0;
        lastEmit = now;
        emit piecesReady(id, chunk);
    };
    const auto onToken = [&](const powerinfer::TokenEvent& ev) {
        const auto now = Clock::now();
        if (totalTokens == 0) firstToken = now;
        pending += ev.piece;
        ++pendingTokens;
        ++totalTokens;
        if (ev.metrics.ffn_neurons_total > 0) {
            sparsitySum += ev.metrics.sparsity();
            hitSum += ev.metrics.hit_rate();
            ++metricSamples;
        }
        if (now - lastEmit >= batchInterval_) flush(now);
    };
    try {
        const powerinfer::GenerateResult r = engine_->generate(request, onToken, cancel.get());
        flush(Clock::now());
        outcome.ok = true;
        outcome.text = fromUtf8(r.text);
        outcome.finish = r.finish;
        outcome.promptTokens = r.prompt_tokens;
        outcome.generatedTokens = r.generated_tokens;
        outcome.tokensPerSecond = r.decode_tokens_per_s;
        outcome.notice = fromUtf8(r.notice);
        if (metricSamples > 0) {
            outcome.sparsity = sparsitySum / metricSamples;
            outcome.hitRate = hitSum / metricSamples;
        }
    } catch (const std::exception& e) {
        flush(Clock::now());
        outcome.error = fromUtf8(e.what());
    }
    emit generationFinished(id, outcome);
}

EngineClient::EngineClient(EngineFactory factory, QObject* parent,
                           std::chrono::milliseconds batchInterval)
    : QObject(parent) {
    registerMetaTypes();
    thread_.setObjectName(QStringLiteral("engine"));
    auto* worker = new EngineWorker(std::move(factory), batchInterval);
    worker->moveToThread(&thread_);
    worker_ = worker;
    connect(&thread_, &QThread::finished, worker, &QObject::deleteLater);
    // Queued: results are delivered on this (GUI) thread.
    connect(worker, &EngineWorker::loadProgress, this, [this](quint64 id, double f) {
        if (id == currentLoad_) emit loadProgress(f);
    });
    connect(worker, &EngineWorker::loadFinished, this, &EngineClient::loadFinished);
    connect(worker, &EngineWorker::piecesReady, this, [this](quint64 id, const StreamChunk& c) {
        if (id == currentGeneration_) emit piecesReady(c);
    });
    connect(worker, &EngineWorker::generationFinished, this, &EngineClient::generationFinished);
    thread_.start();
}

EngineClient::~EngineClient() {
    cancelLoad();
    cancelGeneration();
    thread_.quit();
    thread_.wait();
}

QCoro::Task<LoadOutcome> EngineClient::load(powerinfer::LoadOptions options) {
    cancelLoad();
    const quint64 id = ++nextId_;
    currentLoad_ = id;
    loadCancel_ = std::make_shared<std::atomic<bool>>(false);
    loaded_ = false;
    QMetaObject::invokeMethod(
        worker_, [w = worker_.data(), id, options, c = loadCancel_] { w->load(id, options, c); },
        Qt::QueuedConnection);
    QPointer<EngineClient> self(this);
    for (;;) {
        const auto [doneId, outcome] = co_await qCoro(this, &EngineClient::loadFinished);
        if (!self) co_return LoadOutcome{};
        if (doneId != id) continue;
        if (currentLoad_ == id) loaded_ = outcome.ok;
        co_return outcome;
    }
}

QCoro::Task<GenerationOutcome> EngineClient::generate(GenerationJob job) {
    const quint64 id = ++nextId_;
    currentGeneration_ = id;
    generationCancel_ = std::make_shared<std::atomic<bool>>(false);
    QMetaObject::invokeMethod(
        worker_,
        [w = worker_.data(), id, job = std::move(job), c = generationCancel_]() mutable {
            w->generate(id, std::move(job), c);
        },
        Qt::QueuedConnection);
    QPointer<EngineClient> self(this);
    for (;;) {
        const auto [doneId, outcome] = co_await qCoro(this, &EngineClient::generationFinished);
        if (!self) co_return GenerationOutcome{};
        if (doneId == id) co_return outcome;
    }
}

void EngineClient::unload() {
    cancelLoad();
    loaded_ = false;
    QMetaObject::invokeMethod(worker_, &EngineWorker::unload, Qt::QueuedConnection);
}

void EngineClient::setTuning(const powerinfer::Tuning& tuning) {
    QMetaObject::invokeMethod(
        worker_, [w = worker_.data(), tuning] { w->setTuning(tuning); }, Qt::QueuedConnection);
}

void EngineClient::reset() {
    QMetaObject::invokeMethod(worker_, &EngineWorker::reset, Qt::QueuedConnection);
}

void EngineClient::cancelLoad() {
    if (loadCancel_) loadCancel_->store(true);
}

void EngineClient::cancelGeneration() {
    if (generationCancel_) generationCancel_->store(true);
}

}  // namespace powerinfer::app
