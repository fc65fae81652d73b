#include "engine_worker.h"

#include <qcoro/qcorosignal.h>

#include <QElapsedTimer>
#include <QMetaObject>
#include <algorithm>

#include "powerinfer/threads.h"

namespace powerinfer::app {

namespace {

QString fromUtf8(const std::string& s) { return QString::fromUtf8(s.data(), qsizetype(s.size())); }

// The prompt's length as the engine will see it (the in-process engine
// remembers the tokens, so generate() does not encode the turn again); 0 if
// the engine cannot say.
int countPromptTokens(const powerinfer::Engine& engine, const powerinfer::GenerateRequest& r) {
    try {
        return engine.count_prompt_tokens(r);
    } catch (const std::exception&) {
        return 0;  // generate() reports the problem itself
    }
}

// Leaves out the oldest turns (never a leading system prompt, never the last
// message) until the prompt plus room for a reply fits the context. Returns
// the messages dropped; promptTokens is updated to the kept prompt's length.
int fitToContext(const powerinfer::Engine& engine, powerinfer::GenerateRequest& r,
                 int& promptTokens) {
    const int nCtx = engine.info().n_ctx;
    if (r.messages.empty() || nCtx <= 0) return 0;
    // A reply needs room; a quarter of the context at most, so that long
    // max_tokens settings do not empty the history.
    const int reserve = std::clamp(r.max_tokens, 1, std::max(1, nCtx / 4));
    const size_t first = r.messages.front().role == "system" ? 1 : 0;
    int dropped = 0;
    while (promptTokens + reserve > nCtx && r.messages.size() > first + 1) {
        r.messages.erase(r.messages.begin() + std::ptrdiff_t(first));
        ++dropped;
        // A turn starts with the user: drop the assistant's answer with it.
        while (r.messages.size() > first + 1 && r.messages[first].role != "user") {
            r.messages.erase(r.messages.begin() + std::ptrdiff_t(first));
            ++dropped;
        }
        promptTokens = countPromptTokens(engine, r);
    }
    return dropped;
}

void registerMetaTypes() {
    static const bool done = [] {
        qRegisterMetaType<LoadOutcome>();
        qRegisterMetaType<StreamChunk>();
        qRegisterMetaType<GenerationOutcome>();
        qRegisterMetaType<CalibrationOutcome>();
        qRegisterMetaType<PlacementPreview>();
        qRegisterMetaType<CompareOutcome>();
        qRegisterMetaType<powerinfer::Tuning>();
        qRegisterMetaType<powerinfer::MemoryReport>();
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
    std::optional<powerinfer::LoadOptions> previous;
    if (engine_) previous.swap(loadedOptions_);
    engine_.reset();
    loadedOptions_.reset();
    const auto fill = [&](const powerinfer::LoadOptions& loaded) {
        // A few conversations keep their KV cache, so that going back to one
        // evaluates only its new turn: as many as kConversationContextBytes
        // hold besides the first (at most kMaxConversationContexts).
        const int64_t perContext = engine_->memory().host_kv_cache;
        engine_->set_conversation_contexts(
            perContext > 0 ? int(std::clamp<int64_t>(1 + kConversationContextBytes / perContext, 1,
                                                     kMaxConversationContexts))
                           : 1);
        outcome.conversationContexts = engine_->conversation_contexts();
        outcome.info = engine_->info();
        outcome.memory = engine_->memory();
        outcome.deviceName = fromUtf8(outcome.memory.device_name);
        outcome.tuning = engine_->tuning();
        outcome.modelPath = QString::fromStdU16String(loaded.model_path.u16string());
        modelPath_ = loaded.model_path;
        loadedOptions_ = loaded;
        loadedOptions_->progress = nullptr;
    };
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
        if (cancel->load()) throw powerinfer::LoadCancelled();
        engine_ = factory_(options);
        if (!engine_) throw powerinfer::EngineError("the engine factory returned no engine");
        outcome.ok = true;
        fill(options);
    } catch (const powerinfer::LoadCancelled&) {
        outcome.cancelled = true;
        outcome.error = tr("Loading was cancelled.");
    } catch (const std::exception& e) {
        outcome.error = fromUtf8(e.what());
    }
    if (!outcome.ok) {
        engine_.reset();
        // A file that fails must not cost the user the model that worked.
        if (previous) {
            try {
                engine_ = factory_(*previous);
                if (engine_) {
                    fill(*previous);
                    outcome.restored = true;
                }
            } catch (const std::exception&) {
                engine_.reset();  // it loaded before; if it no longer does, no model
            }
        }
    }
    emit loadFinished(id, outcome);
}

void EngineWorker::unload() { engine_.reset(); }

void EngineWorker::setTuning(powerinfer::Tuning tuning) {
    queueTuning(tuning);
    applyPendingTuning();
}

void EngineWorker::queueTuning(const powerinfer::Tuning& tuning) {
    std::lock_guard lock(tuningMutex_);
    pendingTuning_ = tuning;
}

void EngineWorker::applyPendingTuning() {
    std::optional<powerinfer::Tuning> t;
    {
        std::lock_guard lock(tuningMutex_);
        t.swap(pendingTuning_);
    }
    if (!t || !engine_) return;
    engine_->set_tuning(*t);
    emit tuningApplied(engine_->tuning(), engine_->memory());
}

void EngineWorker::reset() {
    if (engine_) engine_->reset();
}

void EngineWorker::prefill(GenerationJob job, CancelFlag cancel) {
    if (!engine_ || cancel->load()) return;
    powerinfer::GenerateRequest request;
    request.messages = std::move(job.messages);
    request.prompt = std::move(job.prompt);
    int promptTokens = countPromptTokens(*engine_, request);
    if (job.dropOldestToFit) fitToContext(*engine_, request, promptTokens);
    try {
        engine_->prefill(request, cancel.get());
    } catch (const std::exception&) {
        // The next turn evaluates it and reports what is wrong.
    }
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
    request.prompt = std::move(job.prompt);
    request.max_tokens = job.maxTokens;
    request.sampling = job.sampling;
    request.stop = std::move(job.stop);

    int promptTokens = countPromptTokens(*engine_, request);
    const int droppedMessages =
        job.dropOldestToFit ? fitToContext(*engine_, request, promptTokens) : 0;
    // Time-based batching: the thread is busy inside generate(), so no timer
    // can fire here; instead each token checks whether a batch is due.
    using Clock = std::chrono::steady_clock;
    std::string pending;
    std::vector<powerinfer::TokenMetrics> samples;
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
        chunk.promptTokens = promptTokens;
        const double seconds = std::chrono::duration<double>(now - firstToken).count();
        chunk.tokensPerSecond = seconds > 0 && totalTokens > 1 ? (totalTokens - 1) / seconds : 0;
        // Moved, not copied: the batch's one copy of each sample is the
        // push_back below.
        if (!samples.empty())
            chunk.samples =
                std::make_shared<const std::vector<powerinfer::TokenMetrics>>(std::move(samples));
        samples.clear();
        chunk.memory = engine_->memory();
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
        if (isSparseSample(ev.metrics)) {
            sparsitySum += ev.metrics.sparsity();
            hitSum += ev.metrics.hit_rate();
            ++metricSamples;
        }
        // A slow GUI must not make batches grow without bound: keep the latest.
        if (samples.size() >= kMaxSamplesPerChunk) samples.erase(samples.begin());
        samples.push_back(ev.metrics);
        // The engine applies a tuning before its next token; a placement
        // preview asked for meanwhile is answered now, not after the reply.
        applyPendingTuning();
        runPendingPreview();
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
        outcome.promptTokensPerSecond = r.prompt_tokens_per_s;
        outcome.notice = fromUtf8(r.notice);
        outcome.droppedMessages = droppedMessages;
        if (metricSamples > 0) {
            outcome.sparsity = sparsitySum / metricSamples;
            outcome.hitRate = hitSum / metricSamples;
        }
    } catch (const powerinfer::EngineError& e) {
        // The facade throws EngineError only for requests it cannot serve.
        flush(Clock::now());
        outcome.error = fromUtf8(e.what());
        outcome.invalidRequest = true;
        outcome.contextExceeded = promptTokens > 0 && promptTokens >= engine_->info().n_ctx;
        outcome.droppedMessages = droppedMessages;
    } catch (const std::exception& e) {
        flush(Clock::now());
        outcome.error = fromUtf8(e.what());
    }
    emit generationFinished(id, outcome);
}

void EngineWorker::calibrate(quint64 id, CalibrationRequest request, CancelFlag cancel) {
    CalibrationOutcome outcome;
    try {
        if (!calibrator_) throw powerinfer::EngineError("this build cannot calibrate models");
        // The calibration reads the model itself: free the loaded copy first.
        engine_.reset();
        const auto progress = [&](double fraction, double eta, const std::string& line) {
            emit calibrationProgress(id, fraction, eta, fromUtf8(line));
            return !cancel->load();
        };
        const std::filesystem::path sidecar = calibrator_(request, progress);
        outcome.ok = true;
        outcome.sidecar = QString::fromStdU16String(sidecar.u16string());
    } catch (const powerinfer::LoadCancelled&) {
        outcome.cancelled = true;
        outcome.error = tr("Calibration was cancelled.");
    } catch (const std::exception& e) {
        outcome.error = fromUtf8(e.what());
    }
    emit calibrationFinished(id, outcome);
}

void EngineWorker::queuePreview(quint64 id, const powerinfer::Tuning& tuning) {
    std::lock_guard lock(tuningMutex_);
    pendingPreview_ = std::make_pair(id, tuning);
}

void EngineWorker::runPendingPreview() {
    std::optional<std::pair<quint64, powerinfer::Tuning>> p;
    {
        std::lock_guard lock(tuningMutex_);
        p.swap(pendingPreview_);
    }
    if (p) preview(p->first, p->second);
}

void EngineWorker::preview(quint64 id, powerinfer::Tuning tuning) {
    PlacementPreview p;
    if (previewer_) {
        try {
            p = previewer_(engine_.get(), modelPath_, tuning);
        } catch (const std::exception& e) {
            p.note = fromUtf8(e.what());
        }
    } else {
        p.note = tr("no placement preview in this build");
    }
    emit previewReady(id, p);
}

void EngineWorker::compare(quint64 id, GenerationJob job, CancelFlag cancel) {
    CompareOutcome out;
    if (!engine_) {
        out.error = tr("No model is loaded. Choose a model first.");
        emit compareFinished(id, out);
        return;
    }
    const powerinfer::Tuning saved = engine_->tuning();
    powerinfer::GenerateRequest request;
    request.messages = std::move(job.messages);
    request.max_tokens = job.maxTokens;
    request.sampling.temperature = 0;  // greedy: the paths must be comparable
    request.reuse_cache = false;
    const auto run = [&](bool sparse, std::vector<int32_t>& tokens, double& tps, QString& text) {
        powerinfer::Tuning t = saved;
        t.sparse = sparse;
        engine_->set_tuning(t);
        engine_->reset();
        const auto r = engine_->generate(
            request, [&](const powerinfer::TokenEvent& ev) { tokens.push_back(ev.token); },
            cancel.get());
        tps = r.decode_tokens_per_s;
        text = fromUtf8(r.text);
    };
    try {
        std::vector<int32_t> dense, sparse;
        run(false, dense, out.denseTokensPerSecond, out.denseText);
        run(true, sparse, out.sparseTokensPerSecond, out.sparseText);
        const size_t n = std::max(dense.size(), sparse.size());
        size_t equal = 0;
        bool same = true;
        for (size_t i = 0; i < std::min(dense.size(), sparse.size()); ++i) {
            same = same && dense[i] == sparse[i];
            if (same) ++out.commonPrefix;
            if (dense[i] == sparse[i]) ++equal;
        }
        out.tokens = int(n);
        out.agreement = n ? double(equal) / double(n) : 1.0;
        out.ok = true;
    } catch (const std::exception& e) {
        out.error = fromUtf8(e.what());
    }
    engine_->set_tuning(saved);
    // The chat's cached prefix is gone: the next reply evaluates its prompt afresh.
    engine_->reset();
    emit compareFinished(id, out);
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
    // The engine thread (and the engine's own workers, see
    // LoadOptions::low_priority_threads) run below normal priority: inference
    // may use every core, and the GUI thread still always gets one.
    connect(
        &thread_, &QThread::started, worker, [] { powerinfer::lower_current_thread_priority(); },
        Qt::DirectConnection);
    // Queued: results are delivered on this (GUI) thread.
    connect(worker, &EngineWorker::loadProgress, this, [this](quint64 id, double f) {
        if (id == currentLoad_) emit loadProgress(f);
    });
    connect(worker, &EngineWorker::loadFinished, this, &EngineClient::loadFinished);
    connect(worker, &EngineWorker::piecesReady, this, [this](quint64 id, const StreamChunk& c) {
        if (id == currentGeneration_) emit piecesReady(c);
        emit generationPieces(id, c);
    });
    connect(worker, &EngineWorker::generationFinished, this,
            [this](quint64 id, const GenerationOutcome& outcome) {
                --generationsInFlight_;
                emit generationFinished(id, outcome);
                if (generationsInFlight_ == 0) emit generationsIdle();
            });
    connect(worker, &EngineWorker::tuningApplied, this, &EngineClient::tuningApplied);
    connect(worker, &EngineWorker::calibrationProgress, this,
            [this](quint64 id, double f, double eta, const QString& line) {
                if (id == currentCalibration_) emit calibrationProgress(f, eta, line);
            });
    connect(worker, &EngineWorker::calibrationFinished, this, &EngineClient::calibrationFinished);
    connect(worker, &EngineWorker::previewReady, this, &EngineClient::previewReady);
    connect(worker, &EngineWorker::compareFinished, this,
            [this](quint64 id, const CompareOutcome& outcome) {
                --generationsInFlight_;
                emit compareFinished(id, outcome);
                if (generationsInFlight_ == 0) emit generationsIdle();
            });
    thread_.start();
}

EngineClient::~EngineClient() {
    stopPrefill();
    cancelLoad();
    cancelGeneration();
    cancelCalibration();
    thread_.quit();
    thread_.wait();
}

QCoro::Task<LoadOutcome> EngineClient::load(powerinfer::LoadOptions options) {
    stopPrefill();
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
        if (currentLoad_ == id) loaded_ = outcome.ok || outcome.restored;
        co_return outcome;
    }
}

QCoro::Task<GenerationOutcome> EngineClient::generate(GenerationJob job) {
    stopPrefill();
    const quint64 id = ++nextId_;
    currentGeneration_ = id;
    generationCancel_ = std::make_shared<std::atomic<bool>>(false);
    ++generationsInFlight_;
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

quint64 EngineClient::submitGeneration(GenerationJob job, CancelFlag cancel) {
    stopPrefill();
    const quint64 id = ++nextId_;
    ++generationsInFlight_;
    QMetaObject::invokeMethod(
        worker_,
        [w = worker_.data(), id, job = std::move(job), c = std::move(cancel)]() mutable {
            w->generate(id, std::move(job), c);
        },
        Qt::QueuedConnection);
    return id;
}

void EngineClient::prefill(GenerationJob job) {
    stopPrefill();
    prefillCancel_ = std::make_shared<std::atomic<bool>>(false);
    QMetaObject::invokeMethod(
        worker_,
        [w = worker_.data(), job = std::move(job), c = prefillCancel_]() mutable {
            w->prefill(std::move(job), c);
        },
        Qt::QueuedConnection);
}

void EngineClient::stopPrefill() {
    if (prefillCancel_) prefillCancel_->store(true);
}

void EngineClient::unload() {
    stopPrefill();
    cancelLoad();
    loaded_ = false;
    QMetaObject::invokeMethod(worker_, &EngineWorker::unload, Qt::QueuedConnection);
}

void EngineClient::setTuning(const powerinfer::Tuning& tuning) {
    // Queued directly (not through the busy command queue) so that a running
    // generation picks it up at its next token; the posted call applies it
    // when the engine is idle.
    stopPrefill();
    worker_->queueTuning(tuning);
    QMetaObject::invokeMethod(
        worker_, [w = worker_.data(), tuning] { w->setTuning(tuning); }, Qt::QueuedConnection);
}

void EngineClient::setCalibrator(Calibrator calibrator) {
    QMetaObject::invokeMethod(
        worker_, [w = worker_.data(), c = std::move(calibrator)] { w->setCalibrator(c); },
        Qt::QueuedConnection);
}

void EngineClient::setPreviewer(PlacementPreviewer previewer) {
    QMetaObject::invokeMethod(
        worker_, [w = worker_.data(), p = std::move(previewer)] { w->setPreviewer(p); },
        Qt::QueuedConnection);
}

QCoro::Task<CalibrationOutcome> EngineClient::calibrate(CalibrationRequest request) {
    stopPrefill();
    cancelGeneration();
    const quint64 id = ++nextId_;
    currentCalibration_ = id;
    calibrationCancel_ = std::make_shared<std::atomic<bool>>(false);
    loaded_ = false;
    QMetaObject::invokeMethod(
        worker_,
        [w = worker_.data(), id, request, c = calibrationCancel_] { w->calibrate(id, request, c); },
        Qt::QueuedConnection);
    QPointer<EngineClient> self(this);
    for (;;) {
        const auto [doneId, outcome] = co_await qCoro(this, &EngineClient::calibrationFinished);
        if (!self) co_return CalibrationOutcome{};
        if (doneId == id) co_return outcome;
    }
}

void EngineClient::cancelCalibration() {
    if (calibrationCancel_) calibrationCancel_->store(true);
}

quint64 EngineClient::requestPreview(const powerinfer::Tuning& tuning) {
    const quint64 id = ++nextId_;
    // Through the pending slot, not the busy command queue: a streaming
    // reply answers it at its next token; the posted call, when idle.
    stopPrefill();
    worker_->queuePreview(id, tuning);
    QMetaObject::invokeMethod(worker_, &EngineWorker::runPendingPreview, Qt::QueuedConnection);
    return id;
}

QCoro::Task<CompareOutcome> EngineClient::compare(GenerationJob job) {
    stopPrefill();
    const quint64 id = ++nextId_;
    generationCancel_ = std::make_shared<std::atomic<bool>>(false);
    ++generationsInFlight_;
    QMetaObject::invokeMethod(
        worker_,
        [w = worker_.data(), id, job = std::move(job), c = generationCancel_]() mutable {
            w->compare(id, std::move(job), c);
        },
        Qt::QueuedConnection);
    QPointer<EngineClient> self(this);
    for (;;) {
        const auto [doneId, out] = co_await qCoro(this, &EngineClient::compareFinished);
        if (!self) co_return CompareOutcome{};
        if (doneId == id) co_return out;
    }
}

void EngineClient::reset() {
    stopPrefill();
    QMetaObject::invokeMethod(worker_, &EngineWorker::reset, Qt::QueuedConnection);
}

void EngineClient::cancelLoad() {
    if (loadCancel_) loadCancel_->store(true);
}

void EngineClient::cancelGeneration() {
    if (generationCancel_) generationCancel_->store(true);
}

}  // namespace powerinfer::app
