#include "chat_controller.h"

#include <qcoro/qcorofuture.h>

#include <QClipboard>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QGuiApplication>
#include <QThread>
#include <QUuid>
#include <algorithm>
#include <filesystem>
#include <memory>

#include "api_key_store.h"
#include "remote_chat_client.h"

namespace powerinfer::app {

namespace {

std::string utf8(const QString& s) { return s.toStdString(); }

// An engine message as a sentence of its own: capitalised, with a full stop
// (the context error ran into the advice after it: "...size Raise the...").
QString asSentence(QString text) {
    text = text.trimmed();
    if (text.isEmpty()) return text;
    text[0] = text[0].toUpper();
    if (!QStringLiteral(".!?…").contains(text.back())) text += QLatin1Char('.');
    return text;
}

// What goes between a cut-off reply and its continuation: the model starts
// its new turn without the space a word boundary needs ("...the headThe
// knight..."), so one is put in unless either side already has it or the
// continuation starts with punctuation.
QString continuationJoint(const QString& before, const QString& after) {
    if (before.isEmpty() || after.isEmpty()) return {};
    const QChar last = before.back(), first = after.front();
    if (last.isSpace() || first.isSpace()) return {};
    if (QStringLiteral(".,;:!?)]}…'\"").contains(first)) return {};
    if (QStringLiteral("([{'\"/-").contains(last)) return {};
    return QStringLiteral(" ");
}

QString titleFrom(const QString& text) {
    QString line = text.section(QLatin1Char('\n'), 0, 0).simplified();
    if (line.size() > 48) line = line.left(47).trimmed() + QChar(0x2026);
    return line.isEmpty() ? ChatController::tr("New chat") : line;
}

QString paramsText(int64_t n) {
    if (n >= 1'000'000'000) return QStringLiteral("%1B").arg(double(n) / 1e9, 0, 'f', 1);
    if (n >= 1'000'000) return QStringLiteral("%1M").arg(double(n) / 1e6, 0, 'f', 0);
    return QString::number(n);
}

}  // namespace

ChatController::ChatController(ChatStore* store, EngineClient* engine, ModelCatalog* models,
                               AppSettings* settings, QObject* parent)
    : QObject(parent),
      store_(store),
      engine_(engine),
      models_(models),
      settings_(settings),
      sparse_(engine, store),
      catalog_(settings, &downloads_, models),
      apiServer_(engine, settings) {
    // A pasted link's file is named after its model (general.name).
    if (models)
        downloads_.setInspector([models](const QString& path) { return models->inspect(path); });
    // A verified download appears in the model list at once.
    connect(&downloads_, &ModelDownloads::downloadFinished, this, [this](const QString& path) {
        models_->refresh();
        showNotice(calibration_.available()
                       ? tr("%1 is downloaded and verified. Calibrate it for sparse inference "
                            "(in the background; it runs dense meanwhile) from its row.")
                             .arg(QFileInfo(path).fileName())
                       : tr("%1 is downloaded and verified.").arg(QFileInfo(path).fileName()));
    });
    // A renamed download: the list shows the new name, and the loaded model
    // (if it is that file) is known by it.
    connect(&downloads_, &ModelDownloads::fileRenamed, this,
            [this](const QString& oldPath, const QString& newPath) {
                models_->refresh();
                if (modelPath_ == oldPath) {
                    modelPath_ = newPath;
                    modelName_ = QFileInfo(newPath).completeBaseName();
                    emit modelChanged();
                }
            });
    // A new sidecar shows in the model list; the loaded model uses it from
    // its next load.
    connect(&calibration_, &BackgroundCalibration::finished, this,
            [this](const QString& path, bool ok, const QString& message) {
                models_->refresh();
                if (!ok) {
                    showNotice(message);
                } else if (path == modelPath_) {
                    showNotice(tr("%1 is calibrated: load it again to run it sparse.")
                                   .arg(QFileInfo(path).fileName()));
                } else {
                    showNotice(tr("%1 is calibrated.").arg(QFileInfo(path).fileName()));
                }
            });
    connect(&sparse_, &SparseController::reloadRequested, this,
            [this](const QString& path) { loadModelFile(path); });
    checkpointTimer_.setInterval(kCheckpointIntervalMs);
    connect(&checkpointTimer_, &QTimer::timeout, this, &ChatController::checkpoint);
    connect(settings_, &AppSettings::persistRequested, this,
            [this](const QString& key, const QString& value) {
                if (store_) store_->setSetting(key, value);
            });
    connect(settings_, &AppSettings::changed, this, [this] {
        models_->setFolder(settings_->modelsFolder());
        downloads_.setFolder(settings_->modelsFolder());
    });
    connect(store_, &ChatStore::errorOccurred, this, &ChatController::showNotice);
}

ChatController::~ChatController() {
    // A reply in flight keeps its partial text: write it before going away.
    if (generating_ && engine_) engine_->cancelGeneration();
    checkpoint();
}

QCoro::Task<QString> ChatController::initialize() {
    QPointer<ChatController> self(this);
    const QString error = co_await store_->open();
    if (!self) co_return QString();
    if (!error.isEmpty()) co_return error;
    const QHash<QString, QString> stored = co_await store_->settings();
    if (!self) co_return QString();
    settings_->restore(stored);
    models_->setFolder(settings_->modelsFolder());
    downloads_.setFolder(settings_->modelsFolder());
    catalog_.load();
    co_await refreshConversations();
    if (!self) co_return QString();
    // Where the user left off (a deleted conversation is simply not found).
    if (settings_->lastConversationId() > 0)
        co_await openConversationAsync(settings_->lastConversationId());
    co_return QString();
}

void ChatController::setSystemPrompt(const QString& prompt) {
    if (prompt == current_.systemPrompt) return;
    current_.systemPrompt = prompt;
    if (current_.id != 0) store_->setSystemPrompt(current_.id, prompt);
    emit systemPromptChanged();
}

void ChatController::setSearchText(const QString& text) {
    if (text == searchText_) return;
    searchText_ = text;
    emit searchTextChanged();
    refreshConversations();
}

QCoro::Task<> ChatController::refreshConversations() {
    QPointer<ChatController> self(this);
    const quint64 generation = ++searchGeneration_;
    const QList<ConversationRecord> list = co_await store_->conversations(searchText_);
    // Typing fast starts several searches; only the latest one is shown.
    if (!self || generation != searchGeneration_) co_return;
    conversations_.setConversations(list);
}

void ChatController::newConversation() {
    if (generating_) stop();
    current_ = ConversationRecord{};
    messages_.clear();
    contextUsed_ = 0;
    emit statsChanged();
    emit conversationChanged();
    emit systemPromptChanged();
}

void ChatController::openConversation(qint64 id) { openConversationAsync(id); }

QCoro::Task<> ChatController::openConversationAsync(qint64 id) {
    QPointer<ChatController> self(this);
    const int row = conversations_.indexOfId(id);
    if (row < 0 || id == current_.id) co_return;
    current_ = conversations_.at(row);
    current_.snippet.clear();
    settings_->setLastConversationId(id);
    messages_.clear();
    emit conversationChanged();
    emit systemPromptChanged();
    // Message bodies are loaded only when a conversation is opened.
    const QList<MessageRecord> list = co_await store_->messages(id);
    if (!self || current_.id != id) co_return;
    messages_.setMessages(list);
    if (!searchText_.trimmed().isEmpty()) {
        // Opened from a search hit: show the first message with a searched word.
        const QStringList words = searchText_.simplified().split(QLatin1Char(' '));
        for (int i = 0; i < list.size(); ++i) {
            const bool hit = std::any_of(words.begin(), words.end(), [&](const QString& w) {
                return list[i].content.contains(w, Qt::CaseInsensitive);
            });
            if (hit) {
                emit revealMessage(i);
                break;
            }
        }
    }
    if (generating_ && streaming_.conversationId == id) {
        // Back to a conversation whose reply is still streaming: show the live row.
        const int live = messages_.indexOfUid(streaming_.uid);
        if (live >= 0) messages_.truncateFrom(live);
        messages_.append(streaming_);
    }
    contextUsed_ = 0;
    for (const MessageRecord& m : list)
        if (m.role == QLatin1String("assistant"))
            contextUsed_ = m.promptTokens + m.completionTokens;
    emit statsChanged();
    prefillConversation();
}

void ChatController::renameConversation(qint64 id, const QString& title) {
    const QString t = title.simplified();
    if (t.isEmpty()) return;
    conversations_.rename(id, t);
    store_->renameConversation(id, t);
    if (id == current_.id) {
        current_.title = t;
        emit conversationChanged();
    }
}

void ChatController::deleteConversation(qint64 id) {
    if (generating_ && streaming_.conversationId == id) stop();
    conversations_.remove(id);
    store_->deleteConversation(id);
    if (id == current_.id) newConversation();
}

void ChatController::send(const QString& text) { sendMessage(text); }
void ChatController::regenerate() { regenerateReply(); }
void ChatController::continueLast() { continueReply(); }
void ChatController::editAndResend(const QString& uid, const QString& text) {
    editMessage(uid, text);
}
void ChatController::loadModel(const QString& pathOrUrl) { loadModelFile(pathOrUrl); }

void ChatController::stop() {
    if (generating_) engine_->cancelGeneration();
}

void ChatController::cancelLoad() { engine_->cancelLoad(); }

void ChatController::compareWithDense() {
    if (generating_ || modelState_ != ModelState::Ready) return;
    GenerationJob job = snapshotJob();
    // Up to the last user message: the reply after it is what is being compared.
    while (!job.messages.empty() && job.messages.back().role != "user") job.messages.pop_back();
    if (job.messages.empty()) {
        showNotice(tr("Send a message first: the comparison replays the last one."));
        return;
    }
    job.maxTokens = 32;
    sparse_.runCompare(std::move(job));
}

bool ChatController::canRegenerate() const {
    return !generating_ && modelState_ == ModelState::Ready && messages_.rowCount() > 0 &&
           messages_.at(messages_.rowCount() - 1).role == QLatin1String("assistant");
}

bool ChatController::canContinue() const {
    if (!canRegenerate()) return false;
    const MessageRecord& last = messages_.at(messages_.rowCount() - 1);
    return !last.content.isEmpty() &&
           (last.state == QLatin1String("interrupted") || last.state == QLatin1String("stopped") ||
            last.state == QLatin1String("length"));
}

MessageRecord ChatController::newMessage(const QString& role, const QString& content) const {
    MessageRecord m;
    m.uid = QUuid::createUuid().toString(QUuid::WithoutBraces);
    m.conversationId = current_.id;
    m.role = role;
    m.content = content;
    m.createdAt = QDateTime::currentDateTimeUtc();
    return m;
}

void ChatController::prefillConversation() {
    if (generating_ || modelState_ != ModelState::Ready || isRemote()) return;
    GenerationJob job = snapshotJob();
    if (job.messages.empty() || job.messages.back().role != "assistant") return;
    engine_->prefill(std::move(job));
}

GenerationJob ChatController::snapshotJob() const {
    GenerationJob job;
    if (!current_.systemPrompt.trimmed().isEmpty())
        job.messages.push_back({"system", utf8(current_.systemPrompt)});
    for (const MessageRecord& m : messages_.records()) {
        if (m.state == QLatin1String("error") || m.content.isEmpty()) continue;
        if (m.role != QLatin1String("user") && m.role != QLatin1String("assistant")) continue;
        job.messages.push_back({utf8(m.role), utf8(m.content)});
    }
    job.maxTokens = settings_->maxTokens();
    job.dropOldestToFit = true;
    job.sampling.temperature = float(settings_->temperature());
    job.sampling.top_p = float(settings_->topP());
    job.sampling.top_k = settings_->topK();
    job.sampling.repeat_penalty = float(settings_->repeatPenalty());
    return job;
}

QCoro::Task<bool> ChatController::sendMessage(QString text) {
    QPointer<ChatController> self(this);
    text = text.trimmed();
    if (text.isEmpty()) co_return false;
    if (generating_) {
        showNotice(tr("Wait for the reply to finish, or press Stop."));
        co_return false;
    }
    if (modelState_ != ModelState::Ready) {
        showNotice(tr("Load a model first: click the model name at the top."));
        co_return false;
    }
    setGenerating(true);  // claimed now so that a double Enter cannot send twice
    if (current_.id == 0) {
        const ConversationRecord created =
            co_await store_->createConversation(titleFrom(text), current_.systemPrompt);
        if (!self) co_return false;
        if (created.id == 0) {
            setGenerating(false);
            co_return false;
        }
        current_ = created;
        settings_->setLastConversationId(created.id);
        conversations_.prepend(created);
        emit conversationChanged();
    }
    const MessageRecord user = newMessage(QStringLiteral("user"), text);
    messages_.append(user);
    co_await store_->saveMessage(user);
    if (!self) co_return false;
    conversations_.touch(current_.id, QDateTime::currentDateTimeUtc());
    co_return co_await runReply();
}

QCoro::Task<bool> ChatController::regenerateReply() {
    QPointer<ChatController> self(this);
    if (!canRegenerate()) co_return false;
    setGenerating(true);
    const int last = messages_.rowCount() - 1;
    const QString uid = messages_.at(last).uid;
    messages_.truncateFrom(last);
    co_await store_->deleteMessagesFrom(current_.id, uid);
    if (!self) co_return false;
    co_return co_await runReply();
}

QCoro::Task<bool> ChatController::continueReply() {
    if (!canContinue()) co_return false;
    setGenerating(true);
    co_return co_await runReply(messages_.at(messages_.rowCount() - 1));
}

QCoro::Task<bool> ChatController::editMessage(QString uid, QString text) {
    QPointer<ChatController> self(this);
    text = text.trimmed();
    const int row = messages_.indexOfUid(uid);
    if (text.isEmpty() || row < 0 || messages_.at(row).role != QLatin1String("user"))
        co_return false;
    if (generating_ || modelState_ != ModelState::Ready) {
        if (generating_)
            showNotice(tr("Wait for the reply to finish, or press Stop."));
        else
            showNotice(tr("Load a model first: click the model name at the top."));
        co_return false;
    }
    setGenerating(true);
    // Editing rewrites history from that message on: later turns are dropped.
    messages_.truncateFrom(row);
    co_await store_->deleteMessagesFrom(current_.id, uid);
    if (!self) co_return false;
    const MessageRecord user = newMessage(QStringLiteral("user"), text);
    messages_.append(user);
    co_await store_->saveMessage(user);
    if (!self) co_return false;
    co_return co_await runReply();
}

QCoro::Task<bool> ChatController::runReply(MessageRecord continued) {
    QPointer<ChatController> self(this);
    GenerationJob job = snapshotJob();
    // Continuing keeps the reply's row and text; the new text is appended.
    // The facade formats a chat only with a fresh assistant turn, so the
    // model is asked to go on from its own cut-off reply.
    const bool continuing = !continued.uid.isEmpty();
    const QString prefix = continuing ? continued.content : QString();
    if (continuing) {
        job.messages.push_back(
            {"user", utf8(tr("Continue your previous reply exactly where it stopped, without "
                             "repeating it."))});
        streaming_ = continued;
        streaming_.state = QStringLiteral("partial");
        messages_.updateLast(streaming_);
    } else {
        streaming_ = newMessage(QStringLiteral("assistant"), QString());
        streaming_.state = QStringLiteral("partial");
        streaming_.model = modelName_;
        messages_.append(streaming_);
    }
    const int priorTokens = continuing ? continued.completionTokens : 0;
    tokensPerSecond_ = 0;
    emit statsChanged();

    const auto streamingVisible = [this] {
        const int n = messages_.rowCount();
        return n > 0 && messages_.at(n - 1).uid == streaming_.uid;
    };
    // A continuation is joined to the cut-off text at its first piece, the
    // same way in the view, the checkpoints and the final save.
    const auto joinPending = std::make_shared<bool>(continuing);
    const QMetaObject::Connection pieces =
        connect(engine_, &EngineClient::piecesReady, this,
                [this, streamingVisible, priorTokens, joinPending](const StreamChunk& c) {
                    QElapsedTimer cost;
                    cost.start();
                    QString text = c.text;
                    if (*joinPending && !text.isEmpty()) {
                        *joinPending = false;
                        text.prepend(continuationJoint(streaming_.content, text));
                    }
                    streaming_.content += text;
                    streaming_.completionTokens = priorTokens + c.totalTokens;
                    streaming_.tokensPerSecond = c.tokensPerSecond;
                    if (streamingVisible()) messages_.appendToLast(text);
                    tokensPerSecond_ = c.tokensPerSecond;
                    contextUsed_ = c.promptTokens + c.totalTokens;
                    emit statsChanged();
                    sparse_.chunkArrived(c);
                    emit streamBatchApplied(c.totalTokens, cost.nsecsElapsed());
                });
    checkpointTimer_.start();

    const GenerationOutcome out = co_await engine_->generate(job);
    if (!self) co_return false;
    disconnect(pieces);
    checkpointTimer_.stop();
    sparse_.replyFinished(out);

    MessageRecord done = streaming_;
    if (out.ok) {
        done.content = prefix + continuationJoint(prefix, out.text) + out.text;
        done.state = QStringLiteral("complete");
        if (out.finish == powerinfer::FinishReason::Cancelled)
            done.state = QStringLiteral("stopped");
        // Cut at max tokens, not ended by the model: said under the reply,
        // with Continue (canContinue).
        if (out.finish == powerinfer::FinishReason::Length) {
            done.state = QStringLiteral("length");
            done.notice = tr("Stopped at the %1-token limit. Continue goes on from here; Max "
                             "tokens in Chat settings sets the limit.")
                              .arg(job.maxTokens);
        }
        done.promptTokens = out.promptTokens;
        done.completionTokens = priorTokens + out.generatedTokens;
        done.tokensPerSecond = out.tokensPerSecond;
        done.sparsity = out.sparsity;
        done.hitRate = out.hitRate;
    } else {
        done.state = QStringLiteral("error");
        // The error stays in the chat, under the reply it ended.
        done.notice = out.contextExceeded
                          ? tr("%1 To make room, raise the context length in Chat settings, or "
                               "start a new chat.")
                                .arg(asSentence(out.error))
                          : out.error;
    }
    if (out.droppedMessages > 0)
        done.notice = tr("The conversation is longer than the context (%1 tokens): the oldest "
                         "%n message(s) were left out of this reply.",
                         nullptr, out.droppedMessages)
                          .arg(contextSize_);
    // A failed reply stays in the chat with its error (error rows are never
    // sent back to the model; Regenerate replaces it).
    // A continued reply that failed keeps its earlier text as it was.
    if (!out.ok && continuing) done.state = continued.state;
    if (streamingVisible()) messages_.updateLast(done);
    co_await store_->saveMessage(done);
    if (!self) co_return false;
    conversations_.touch(done.conversationId, QDateTime::currentDateTimeUtc());
    if (out.ok) {
        tokensPerSecond_ = out.tokensPerSecond;
        contextUsed_ = out.promptTokens + out.generatedTokens;
        emit statsChanged();
        if (!out.notice.isEmpty()) showNotice(out.notice);
    } else {
        showNotice(tr("The model could not reply: %1").arg(out.error));
    }
    if (out.droppedMessages > 0) showNotice(done.notice);
    streaming_ = MessageRecord{};
    setGenerating(false);
    if (out.ok) prefillConversation();
    emit replyFinished(out.ok, out.error);
    co_return out.ok;
}

void ChatController::checkpoint() {
    if (!generating_ || streaming_.uid.isEmpty() || streaming_.content.isEmpty()) return;
    const QString uid = streaming_.uid;
    const int length = int(streaming_.content.size());
    // Store writes are FIFO, so the final save always lands after this one.
    store_->saveMessage(streaming_).then(this, [this, uid, length](qint64 id) {
        if (id > 0) emit checkpointSaved(uid, length);
    });
}

QCoro::Task<bool> ChatController::loadModelFile(QString path) {
    QPointer<ChatController> self(this);
    if (path.startsWith(QLatin1String("file:"))) path = QUrl(path).toLocalFile();
    if (path.isEmpty()) co_return false;
    // A file the picker already knows to be broken is not worth unloading
    // the working model for.
    const QString knownError = models_->errorFor(path);
    if (!knownError.isEmpty()) {
        showNotice(tr("%1 cannot be loaded: %2").arg(QFileInfo(path).fileName(), knownError));
        co_return false;
    }
    if (generating_) stop();
    const quint64 generation = ++loadGeneration_;
    // What the window shows now, to go back to if the new file fails.
    const bool hadModel = modelState_ == ModelState::Ready;
    const QStringList shown = {modelPath_, modelName_, modelDetails_, device_, templateWarning_};
    modelPath_ = path;
    modelName_ = QFileInfo(path).completeBaseName();
    QUrl remoteUrl;
    QString remoteModel;
    if (parseRemoteModelPath(path, &remoteUrl, &remoteModel))
        modelName_ = remoteModel.isEmpty() ? remoteUrl.authority()
                                           : tr("%1 at %2").arg(remoteModel, remoteUrl.authority());
    modelDetails_.clear();
    device_.clear();
    templateWarning_.clear();
    loadError_.clear();
    loadProgress_ = 0;
    // The status bar's speed and context were the previous model's.
    tokensPerSecond_ = 0;
    contextUsed_ = 0;
    emit statsChanged();
    emit loadProgressChanged();
    setModelState(ModelState::Loading);

    powerinfer::LoadOptions options;
    options.model_path = std::filesystem::path(path.toStdU16String());
    options.n_ctx = settings_->contextLength();
    // Every core, below normal priority (the engine thread lowers itself in
    // EngineClient): the GUI thread preempts the workers whenever it has
    // work, so the window stays smooth and replies use the whole CPU.
    options.n_threads = std::max(1, QThread::idealThreadCount());
    options.low_priority_threads = true;
    // In sparse mode without a GPU the CPU device's workers run beside the
    // pool; with the GUI rendering too, half the cores each is fastest (2
    // cores: 53 tok/s against 36 with a full set each).
    options.device_threads = std::max(1, QThread::idealThreadCount() / 2);
    options.tuning = sparse_.tuningForModel(path);
    options.sparse_engine = settings_->sparseEngine();
    const QMetaObject::Connection progress =
        connect(engine_, &EngineClient::loadProgress, this, [this](double f) {
            loadProgress_ = f;
            emit loadProgressChanged();
        });
    const LoadOutcome out = co_await engine_->load(options);
    if (!self) co_return false;
    disconnect(progress);
    if (generation != loadGeneration_) co_return false;  // superseded by a newer pick

    if (out.ok) {
        const powerinfer::ModelInfo& info = out.info;
        // The file name stays the model's label: general.name is often a
        // training-run id ("Smollm2 135M 8k Lc100K Mix1 Ep2").
        QStringList details;
        if (!info.architecture.empty()) details << QString::fromStdString(info.architecture);
        // What the file says it is (general.file_type), as the picker shows
        // it; the engine names the type holding most bytes.
        const QString fileQuant =
            isRemoteModelPath(path) ? QString() : models_->inspect(path).quant;
        if (!fileQuant.isEmpty())
            details << fileQuant;
        else if (!info.quant.empty())
            details << QString::fromStdString(info.quant);
        if (info.n_params > 0) details << tr("%1 params").arg(paramsText(info.n_params));
        if (info.file_bytes > 0) details << formatBytes(info.file_bytes);
        if (isRemoteModelPath(path))
            details = QStringList{tr("remote server (OpenAI-compatible)")};
        else if (info.has_sidecar)
            details << tr("sparse sidecar");
        else
            details << tr("no sidecar");
        modelDetails_ = details.join(QStringLiteral(" · "));
        device_ = out.deviceName;
        if (device_.isEmpty()) device_ = QString::fromStdString(info.device);
        contextSize_ = info.n_ctx;
        requestedContext_ = int(options.n_ctx);
        modelShape_ = {info.n_layers,  info.n_embd,      info.n_head,
                       info.n_head_kv, info.n_ctx_train, out.conversationContexts};
        contextUsed_ = 0;
        settings_->setLastModelPath(path);
        loadProgress_ = 1;
        emit loadProgressChanged();
        emit statsChanged();
        sparse_.modelLoaded(path, out);
        setModelState(ModelState::Ready);
        // Stays above the chat while this model is loaded (replies may be
        // poor): which format is used instead, and what to do.
        templateWarning_ = QString::fromStdString(info.template_warning);
        if (!templateWarning_.isEmpty()) emit modelChanged();
        prefillConversation();
    } else if (out.restored && hadModel) {
        // The previous model is loaded again: the window goes back to it.
        modelPath_ = shown[0];
        modelName_ = shown[1];
        modelDetails_ = shown[2];
        device_ = shown[3];
        templateWarning_ = shown[4];
        loadProgress_ = 1;
        emit loadProgressChanged();
        sparse_.modelLoaded(modelPath_, out);
        setModelState(ModelState::Ready);
        if (!out.cancelled)
            showNotice(tr("Could not load %1 (%2). Still using %3.")
                           .arg(QFileInfo(path).fileName(), out.error, modelName_));
    } else if (out.cancelled) {
        setModelState(ModelState::NoModel);
    } else {
        loadError_ = out.error;
        setModelState(ModelState::Failed);
    }
    co_return out.ok;
}

QString ChatController::loadModelFromCommandLine(const QString& path) {
    if (isRemoteModelPath(path) || QFileInfo::exists(path)) {
        loadModelFile(path);
        return {};
    }
    const QString error =
        tr("There is no file at %1. Check the path, or choose a model with the model name "
           "at the top.")
            .arg(QDir::toNativeSeparators(path));
    ++loadGeneration_;  // a load still running does not come back over this
    modelPath_ = path;
    modelName_ = QFileInfo(path).completeBaseName();
    modelDetails_.clear();
    device_.clear();
    templateWarning_.clear();
    loadError_ = error;
    setModelState(ModelState::Failed);
    return error;
}

void ChatController::openModelInteractive() {
    if (!fileChooser_) return;
    const QString path = fileChooser_(FileDialogKind::Open, tr("Open a GGUF model"),
                                      models_->folder(), tr("GGUF models (*.gguf);;All files (*)"));
    if (!path.isEmpty()) loadModel(path);
}

bool ChatController::isRemote() const { return isRemoteModelPath(modelPath_); }

void ChatController::listRemoteModels(const QString& url, const QString& apiKey) {
    [](QPointer<ChatController> self, QString url, QString key) -> QCoro::Task<> {
        self->remoteBusy_ = true;
        self->remoteStatus_ = tr("Asking %1 for its models…").arg(url);
        emit self->remoteChanged();
        if (key.isEmpty()) {
            const KeychainResult stored = co_await readApiKey(url);
            key = stored.key;
        }
        if (!self) co_return;
        RemoteChatClient client;
        client.setBaseUrl(QUrl::fromUserInput(url));
        client.setApiKey(key);
        QString error;
        const QStringList models = co_await client.listModels(&error);
        if (!self) co_return;
        self->remoteBusy_ = false;
        self->remoteModels_ = models;
        self->remoteStatus_ = models.isEmpty()
                                  ? error
                                  : tr("%n model(s) on this server.", nullptr, int(models.size()));
        emit self->remoteChanged();
    }(QPointer<ChatController>(this), url, apiKey);
}

void ChatController::connectRemote(const QString& url, const QString& model,
                                   const QString& apiKey) {
    connectRemoteServer(url, model, apiKey);
}

QCoro::Task<bool> ChatController::connectRemoteServer(QString url, QString model, QString apiKey) {
    QPointer<ChatController> self(this);
    url = url.trimmed();
    if (const QString problem = RemoteChatClient::urlProblem(QUrl::fromUserInput(url));
        !problem.isEmpty()) {
        remoteStatus_ = problem;
        emit remoteChanged();
        co_return false;
    }
    // The key goes to the OS keychain or nowhere: never into the settings.
    // Two statements, not a conditional around co_await: GCC 12 destroys
    // such temporaries twice.
    KeychainResult stored;
    if (apiKey.isEmpty())
        stored = co_await readApiKey(url);
    else
        stored = co_await writeApiKey(url, apiKey);
    if (!self) co_return false;
    if (apiKey.isEmpty()) apiKey = stored.key;
    keychainStatus_ = stored.ok ? (apiKey.isEmpty() ? tr("No API key.")
                                                    : tr("The API key is kept in the OS keychain."))
                                : stored.error;
    emit remoteChanged();
    credentials_->setApiKey(apiKey);
    settings_->setRemoteUrl(url);
    settings_->setRemoteModel(model);
    const bool ok = co_await loadModelFile(remoteModelPath(url, model));
    if (!self) co_return false;
    remoteStatus_ = ok ? tr("Connected to %1.").arg(url) : loadError_;
    emit remoteChanged();
    co_return ok;
}

void ChatController::openDropped(const QString& urlOrPath) {
    const QUrl url(urlOrPath);
    const QString path = url.isLocalFile() ? url.toLocalFile() : urlOrPath;
    const QFileInfo fi(path);
    if (fi.isDir()) {
        settings_->setModelsFolder(fi.absoluteFilePath());
        showNotice(tr("Models folder: %1").arg(fi.absoluteFilePath()));
    } else if (fi.isFile() &&
               fi.suffix().compare(QLatin1String("gguf"), Qt::CaseInsensitive) == 0) {
        loadModel(fi.absoluteFilePath());
    } else {
        showNotice(tr("Drop a .gguf model file, a folder of models, or an https link to a .gguf."));
    }
}

void ChatController::chooseModelsFolderInteractive() {
    if (!fileChooser_) return;
    const QString folder = fileChooser_(FileDialogKind::Folder, tr("Choose the models folder"),
                                        models_->folder(), QString());
    if (!folder.isEmpty()) settings_->setModelsFolder(folder);
}

QUrl ChatController::chooseOpenFile(const QString& title, const QString& filter) {
    if (!fileChooser_) return {};
    const QString path = fileChooser_(FileDialogKind::Open, title, QDir::homePath(), filter);
    return path.isEmpty() ? QUrl() : QUrl::fromLocalFile(path);
}

QString ChatController::contextMemoryText(int tokens) const {
    const qint64 bytes = AppSettings::kvCacheBytes(modelShape_.layers, modelShape_.embd,
                                                   modelShape_.heads, modelShape_.kvHeads, tokens);
    if (bytes <= 0) return tr("memory: load a model to see the cost");
    QString text = tr("KV cache: %1 of memory").arg(formatBytes(bytes));
    if (modelShape_.conversationContexts > 1)
        text += tr(" per conversation; the %1 most recent keep theirs, so going back to one "
                   "reads only its new turn")
                    .arg(modelShape_.conversationContexts);
    if (modelShape_.trainedContext > 0 && tokens > modelShape_.trainedContext)
        text += tr(" · the model was trained on %1 tokens: longer contexts are capped there")
                    .arg(modelShape_.trainedContext);
    return text;
}

void ChatController::copyText(const QString& text) {
    if (auto* clipboard = QGuiApplication::clipboard()) clipboard->setText(text);
    showNotice(tr("Copied to the clipboard"));
}

void ChatController::dismissNotice() { showNotice(QString()); }

void ChatController::setGenerating(bool on) {
    if (on == generating_) return;
    generating_ = on;
    emit generatingChanged();
}

void ChatController::setModelState(ModelState state) {
    modelState_ = state;
    emit modelChanged();
}

void ChatController::showNotice(const QString& text) {
    if (text == notice_) return;
    notice_ = text;
    emit noticeChanged();
}

}  // namespace powerinfer::app
