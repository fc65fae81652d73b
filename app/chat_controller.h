// The QML-facing controller of the chat window: conversations, the message
// stream, the model. GUI thread only; it talks to the store (own thread) and
// the engine (own thread) through awaitable calls, written as QCoro
// coroutines that read top to bottom.
#pragma once

#include <qcoro/qcorotask.h>
#include <qqmlintegration.h>

#include <QObject>
#include <QPointer>
#include <QTimer>
#include <QUrl>

#include "app_settings.h"
#include "background_calibration.h"
#include "chat_store.h"
#include "conversation_list_model.h"
#include "download_catalog.h"
#include "engine_worker.h"
#include "local_api_server.h"
#include "message_list_model.h"
#include "model_catalog.h"
#include "model_downloader.h"
#include "remote_engine.h"
#include "sparse_controller.h"

namespace powerinfer::app {

// Asks the user for a file or folder; returns the local path, or "" when
// cancelled. The executable injects Qt's file dialogs (QFileDialog: it saves
// where the user typed, full paths included, and needs no QML module);
// tests inject a function that answers at once.
enum class FileDialogKind { Save, Open, Folder };
using FileChooser = std::function<QString(FileDialogKind kind, const QString& title,
                                          const QString& start, const QString& filter)>;

class ChatController : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("created by the application and passed to the window")
    Q_PROPERTY(ConversationListModel* conversations READ conversations CONSTANT)
    Q_PROPERTY(MessageListModel* messages READ messages CONSTANT)
    Q_PROPERTY(ModelCatalog* models READ models CONSTANT)
    Q_PROPERTY(AppSettings* settings READ settings CONSTANT)
    Q_PROPERTY(SparseController* sparse READ sparse CONSTANT)
    Q_PROPERTY(LocalApiServer* apiServer READ apiServer CONSTANT)
    Q_PROPERTY(ModelDownloads* downloads READ downloads CONSTANT)
    Q_PROPERTY(DownloadCatalog* catalog READ catalog CONSTANT)
    Q_PROPERTY(BackgroundCalibration* backgroundCalibration READ backgroundCalibration CONSTANT)
    // The remote backend (an OpenAI-compatible server).
    Q_PROPERTY(QStringList remoteModels READ remoteModels NOTIFY remoteChanged)
    Q_PROPERTY(QString remoteStatus READ remoteStatus NOTIFY remoteChanged)
    Q_PROPERTY(QString keychainStatus READ keychainStatus NOTIFY remoteChanged)
    Q_PROPERTY(bool remoteBusy READ remoteBusy NOTIFY remoteChanged)
    Q_PROPERTY(bool isRemote READ isRemote NOTIFY modelChanged)

    Q_PROPERTY(qint64 currentConversationId READ currentConversationId NOTIFY conversationChanged)
    Q_PROPERTY(QString currentTitle READ currentTitle NOTIFY conversationChanged)
    Q_PROPERTY(
        QString systemPrompt READ systemPrompt WRITE setSystemPrompt NOTIFY systemPromptChanged)
    Q_PROPERTY(QString searchText READ searchText WRITE setSearchText NOTIFY searchTextChanged)
    Q_PROPERTY(bool generating READ generating NOTIFY generatingChanged)

    Q_PROPERTY(ModelState modelState READ modelState NOTIFY modelChanged)
    Q_PROPERTY(double loadProgress READ loadProgress NOTIFY loadProgressChanged)
    Q_PROPERTY(QString modelPath READ modelPath NOTIFY modelChanged)
    Q_PROPERTY(QString modelName READ modelName NOTIFY modelChanged)
    Q_PROPERTY(QString modelDetails READ modelDetails NOTIFY modelChanged)
    // Why the loaded model's own chat template is not used as is (none in
    // the file, or one that cannot render) and what is used instead; "".
    Q_PROPERTY(QString templateWarning READ templateWarning NOTIFY modelChanged)
    Q_PROPERTY(QString device READ device NOTIFY modelChanged)
    Q_PROPERTY(QString loadError READ loadError NOTIFY modelChanged)

    Q_PROPERTY(double tokensPerSecond READ tokensPerSecond NOTIFY statsChanged)
    Q_PROPERTY(int contextUsed READ contextUsed NOTIFY statsChanged)
    Q_PROPERTY(int contextSize READ contextSize NOTIFY statsChanged)
    // The context length the loaded model was asked for (the setting at load).
    Q_PROPERTY(int requestedContextLength READ requestedContextLength NOTIFY modelChanged)
    Q_PROPERTY(QString notice READ notice NOTIFY noticeChanged)

public:
    enum class ModelState { NoModel, Loading, Ready, Failed };
    Q_ENUM(ModelState)

    ChatController(ChatStore* store, EngineClient* engine, ModelCatalog* models,
                   AppSettings* settings, QObject* parent = nullptr);
    ~ChatController() override;

    // Opens the store, restores settings, lists conversations. Resolves to an
    // empty string, or a message the user must see (the app cannot run).
    QCoro::Task<QString> initialize();

    ConversationListModel* conversations() { return &conversations_; }
    MessageListModel* messages() { return &messages_; }
    ModelCatalog* models() { return models_; }
    AppSettings* settings() { return settings_; }
    SparseController* sparse() { return &sparse_; }
    LocalApiServer* apiServer() { return &apiServer_; }
    QStringList remoteModels() const { return remoteModels_; }
    QString remoteStatus() const { return remoteStatus_; }
    QString keychainStatus() const { return keychainStatus_; }
    bool remoteBusy() const { return remoteBusy_; }
    bool isRemote() const;
    // Shared with the engine factory, which reads the key on the engine thread.
    void setRemoteCredentials(std::shared_ptr<RemoteCredentials> c) { credentials_ = std::move(c); }
    // Lists the server's models (remoteModels / remoteStatus).
    Q_INVOKABLE void listRemoteModels(const QString& url, const QString& apiKey);
    // Chats through the server from now on; a non-empty key is stored in the
    // OS keychain (only there), an empty one is read from it.
    Q_INVOKABLE void connectRemote(const QString& url, const QString& model, const QString& apiKey);
    QCoro::Task<bool> connectRemoteServer(QString url, QString model, QString apiKey);
    ModelDownloads* downloads() { return &downloads_; }
    DownloadCatalog* catalog() { return &catalog_; }
    BackgroundCalibration* backgroundCalibration() { return &calibration_; }

    qint64 currentConversationId() const { return current_.id; }
    QString currentTitle() const { return current_.title; }
    QString systemPrompt() const { return current_.systemPrompt; }
    void setSystemPrompt(const QString& prompt);
    QString searchText() const { return searchText_; }
    void setSearchText(const QString& text);
    bool generating() const { return generating_; }

    ModelState modelState() const { return modelState_; }
    double loadProgress() const { return loadProgress_; }
    QString modelPath() const { return modelPath_; }
    QString modelName() const { return modelName_; }
    QString modelDetails() const { return modelDetails_; }
    QString templateWarning() const { return templateWarning_; }
    QString device() const { return device_; }
    QString loadError() const { return loadError_; }
    double tokensPerSecond() const { return tokensPerSecond_; }
    int contextUsed() const { return contextUsed_; }
    int contextSize() const { return contextSize_; }
    int requestedContextLength() const { return requestedContext_; }
    QString notice() const { return notice_; }

    // QML entry points: each starts a coroutine and returns at once.
    Q_INVOKABLE void newConversation();
    Q_INVOKABLE void openConversation(qint64 id);
    Q_INVOKABLE void renameConversation(qint64 id, const QString& title);
    Q_INVOKABLE void deleteConversation(qint64 id);
    Q_INVOKABLE void send(const QString& text);
    Q_INVOKABLE void stop();
    Q_INVOKABLE void regenerate();
    // Appends to an interrupted (or stopped) last reply.
    Q_INVOKABLE void continueLast();
    Q_INVOKABLE void editAndResend(const QString& uid, const QString& text);
    Q_INVOKABLE void loadModel(const QString& pathOrUrl);
    Q_INVOKABLE void cancelLoad();
    Q_INVOKABLE void exportConversation(const QUrl& file, const QString& format);
    // Through the injected file dialogs (no-ops without one).
    Q_INVOKABLE void exportInteractive(const QString& format);
    Q_INVOKABLE void exportAllInteractive();
    Q_INVOKABLE void importInteractive();
    Q_INVOKABLE void openModelInteractive();
    Q_INVOKABLE void chooseModelsFolderInteractive();
    // A file to read, as a file: URL ("" when cancelled or without dialogs).
    Q_INVOKABLE QUrl chooseOpenFile(const QString& title, const QString& filter);
    // Documents (created if missing), else the home folder: always exists.
    Q_INVOKABLE QString defaultExportFolder() const;
    void setFileChooser(FileChooser chooser) { fileChooser_ = std::move(chooser); }
    Q_INVOKABLE void copyText(const QString& text);
    // What a context of this many tokens costs for the loaded model.
    Q_INVOKABLE QString contextMemoryText(int tokens) const;
    Q_INVOKABLE void dismissNotice();
    Q_INVOKABLE void showMessage(const QString& text) { showNotice(text); }
    // Something dropped onto the window: a .gguf file is loaded, a folder
    // becomes the models folder; anything else gets a notice.
    Q_INVOKABLE void openDropped(const QString& urlOrPath);
    Q_INVOKABLE bool canRegenerate() const;
    Q_INVOKABLE bool canContinue() const;
    // Greedy, 32 tokens of the last user message through the dense and sparse paths.
    Q_INVOKABLE void compareWithDense();

    // Awaitable forms (used by the entry points, the smoke mode and tests).
    // A reply resolves to true when it finished without an engine error.
    QCoro::Task<bool> sendMessage(QString text);
    QCoro::Task<bool> regenerateReply();
    QCoro::Task<bool> continueReply();
    QCoro::Task<bool> editMessage(QString uid, QString text);
    QCoro::Task<bool> loadModelFile(QString path);
    // A model named on the command line: loaded, or, where no such file
    // exists, the window says so (it showed "No model loaded" and nothing
    // else). Returns the error ("" when the load started).
    QString loadModelFromCommandLine(const QString& path);
    QCoro::Task<> openConversationAsync(qint64 id);
    QCoro::Task<> refreshConversations();
    QCoro::Task<bool> exportTo(QString path, QString format);
    // Every conversation as one JSON file; and back (resolves to the count).
    QCoro::Task<bool> exportAllTo(QString path);
    QCoro::Task<int> importFrom(QString path);

    // Interval of partial-reply checkpoints. At 2 s a kill -9 lost ~35 words
    // already on screen; each checkpoint rewrites one row, so half a second
    // costs little even for a long reply.
    static constexpr int kCheckpointIntervalMs = 500;
    void setCheckpointInterval(int ms) { checkpointTimer_.setInterval(ms); }

signals:
    void conversationChanged();
    void systemPromptChanged();
    void searchTextChanged();
    void generatingChanged();
    void modelChanged();
    void loadProgressChanged();
    void statsChanged();
    void noticeChanged();
    // A reply ended (ok: no engine error); for the smoke mode and tests.
    void replyFinished(bool ok, const QString& error);
    // A partial reply was written to the database.
    void checkpointSaved(const QString& uid, int length);
    // A streamed batch was applied to the models (and through them the
    // views): its GUI-thread cost, for the demo's batch_cost_ratio.
    void streamBatchApplied(int totalTokens, qint64 costNs);
    void exportFinished(bool ok, const QString& message);
    // A conversation opened from a search: the view shows this row (the
    // first message matching the search) instead of the end.
    void revealMessage(int row);
    void remoteChanged();

private:
    // A new reply, or (continued set) more text for that last reply.
    QCoro::Task<bool> runReply(MessageRecord continued = {});
    void checkpoint();
    void setGenerating(bool on);
    void setModelState(ModelState state);
    void showNotice(const QString& text);
    GenerationJob snapshotJob() const;
    // While the user writes: the conversation on screen, its last reply
    // included, is evaluated into the model's context, so that the next
    // message waits only for its own tokens (EngineClient::prefill).
    void prefillConversation();
    MessageRecord newMessage(const QString& role, const QString& content) const;

    QPointer<ChatStore> store_;
    QPointer<EngineClient> engine_;
    QPointer<ModelCatalog> models_;
    QPointer<AppSettings> settings_;
    ConversationListModel conversations_;
    MessageListModel messages_;

    ConversationRecord current_;
    QString searchText_;
    bool generating_ = false;
    // The reply being streamed (kept apart from the view, which may change).
    MessageRecord streaming_;
    QTimer checkpointTimer_;

    ModelState modelState_ = ModelState::NoModel;
    double loadProgress_ = 0;
    QString modelPath_, modelName_, modelDetails_, device_, loadError_, templateWarning_;
    double tokensPerSecond_ = 0;
    int contextUsed_ = 0;
    int contextSize_ = 0;
    int requestedContext_ = 0;
    struct ModelShape {
        int layers = 0, embd = 0, heads = 0, kvHeads = 0, trainedContext = 0;
        int conversationContexts = 1;  // conversations whose KV cache the engine keeps
    } modelShape_;
    QString notice_;
    FileChooser fileChooser_;
    quint64 searchGeneration_ = 0;
    quint64 loadGeneration_ = 0;
    SparseController sparse_;
    ModelDownloads downloads_;
    DownloadCatalog catalog_;
    BackgroundCalibration calibration_;
    std::shared_ptr<RemoteCredentials> credentials_ = std::make_shared<RemoteCredentials>();
    QStringList remoteModels_;
    QString remoteStatus_, keychainStatus_;
    bool remoteBusy_ = false;
    // Last: it serves the engine until everything else is torn down.
    LocalApiServer apiServer_;
};

}  // namespace powerinfer::app
