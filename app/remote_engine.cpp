#include "remote_engine.h"

#include <qcoro/qcorotask.h>

#include <QEventLoop>
#include <QTimer>
#include <optional>
#include <stdexcept>

#include "remote_chat_client.h"

namespace powerinfer::app {

namespace {

constexpr char kPrefix[] = "remote:";

// Runs a task to its end on this thread (the engine thread, which has no
// event loop of its own while inside a call).
template <typename T>
T runHere(QCoro::Task<T> task) {
    QEventLoop loop;
    std::optional<T> result;
    const auto wrap = [&](QCoro::Task<T> t) -> QCoro::Task<> {
        result = co_await std::move(t);
        loop.quit();
    };
    wrap(std::move(task));
    if (!result) loop.exec();
    return std::move(*result);
}

std::string utf8(const QString& s) { return s.toUtf8().toStdString(); }

}  // namespace

QString remoteModelPath(const QString& url, const QString& model) {
    return QLatin1String(kPrefix) + url.trimmed() + QLatin1Char('#') + model.trimmed();
}

bool isRemoteModelPath(const QString& path) { return path.startsWith(QLatin1String(kPrefix)); }

bool parseRemoteModelPath(const QString& path, QUrl* url, QString* model) {
    if (!isRemoteModelPath(path)) return false;
    const QString rest = path.mid(int(sizeof(kPrefix)) - 1);
    const int hash = rest.lastIndexOf(QLatin1Char('#'));
    *url = QUrl(hash >= 0 ? rest.left(hash) : rest);
    *model = hash >= 0 ? rest.mid(hash + 1) : QString();
    return true;
}

std::unique_ptr<RemoteEngine> RemoteEngine::connect(const powerinfer::LoadOptions& options,
                                                    const QString& apiKey) {
    QUrl url;
    QString model;
    const QString path = QString::fromStdU16String(options.model_path.u16string());
    if (!parseRemoteModelPath(path, &url, &model))
        throw powerinfer::EngineError("not a remote server address");
    if (const QString problem = RemoteChatClient::urlProblem(url); !problem.isEmpty())
        throw powerinfer::EngineError(utf8(problem));
    RemoteChatClient client;
    client.setBaseUrl(url);
    client.setApiKey(apiKey);
    client.setTimeoutMs(15000);
    if (options.progress && !options.progress(0.1f)) throw powerinfer::LoadCancelled();
    QString error;
    const QStringList models = runHere(client.listModels(&error));
    if (models.isEmpty()) throw powerinfer::EngineError(utf8(error));
    if (model.isEmpty()) model = models.constFirst();
    if (!models.contains(model))
        throw powerinfer::EngineError(
            utf8(QObject::tr("The server %1 has no model \"%2\"; it has: %3.")
                     .arg(url.authority(), model, models.join(", "))));
    auto engine = std::unique_ptr<RemoteEngine>(new RemoteEngine);
    engine->url_ = client.baseUrl();
    engine->model_ = model;
    engine->apiKey_ = apiKey;
    engine->tuning_ = options.tuning;
    engine->tuning_.sparse = false;
    powerinfer::ModelInfo& info = engine->info_;
    info.architecture = "remote";
    info.name = utf8(model);
    info.n_ctx = options.n_ctx;
    info.n_ctx_train = options.n_ctx;
    info.device = utf8(QObject::tr("remote: %1").arg(url.authority()));
    info.sparse_status = utf8(
        QObject::tr("remote server: it streams text only, so hot-neuron hits, sparsity, the time "
                    "split, per-layer activity and device memory are not available here; "
                    "tokens/s is measured from the stream"));
    if (options.progress) options.progress(1.0f);
    return engine;
}

powerinfer::MemoryReport RemoteEngine::memory() const {
    powerinfer::MemoryReport m;
    m.device_name = info_.device;
    m.simulated = false;
    return m;
}

std::string RemoteEngine::format_chat(const std::vector<powerinfer::ChatMessage>& messages) const {
    std::string text;
    for (const auto& m : messages) text += m.role + ": " + m.content + "\n";
    return text;
}

std::vector<int32_t> RemoteEngine::tokenize(const std::string& text, bool) const {
    return std::vector<int32_t>((text.size() + 3) / 4, 0);
}

powerinfer::GenerateResult RemoteEngine::generate(
    const powerinfer::GenerateRequest& request,
    const std::function<void(const powerinfer::TokenEvent&)>& on_token,
    const std::atomic<bool>* cancel) {
    RemoteChatClient client;
    client.setBaseUrl(url_);
    client.setApiKey(apiKey_);
    RemoteChatRequest chat;
    chat.model = model_;
    chat.maxTokens = request.max_tokens;
    chat.temperature = request.sampling.temperature;
    chat.topP = request.sampling.top_p;
    if (request.messages.empty()) {
        chat.messages << RemoteMessage{QStringLiteral("user"),
                                       QString::fromStdString(request.prompt)};
    } else {
        for (const auto& m : request.messages)
            chat.messages << RemoteMessage{QString::fromStdString(m.role),
                                           QString::fromStdString(m.content)};
    }
    // Stop: the flag the app flips is polled while the stream runs.
    QTimer poll;
    poll.setInterval(20);
    QObject::connect(&poll, &QTimer::timeout, &client, [&] {
        if (cancel && cancel->load()) client.stop();
    });
    poll.start();
    int pieces = 0;
    const RemoteReply reply = runHere(client.chat(chat, [&](const QString& piece) {
        powerinfer::TokenEvent event;
        event.piece = utf8(piece);
        event.token = 0;
        event.metrics.token_index = pieces++;
        if (on_token) on_token(event);
    }));
    poll.stop();
    // Not an EngineError (that is for invalid requests): the server failed.
    if (!reply.ok) throw std::runtime_error(utf8(reply.error));
    powerinfer::GenerateResult result;
    result.text = utf8(reply.text);
    result.finish = reply.stopped                    ? powerinfer::FinishReason::Cancelled
                    : reply.finishReason == "length" ? powerinfer::FinishReason::Length
                                                     : powerinfer::FinishReason::Stop;
    result.generated_tokens = reply.completionTokens > 0 ? reply.completionTokens : reply.chunks;
    result.prompt_tokens = reply.promptTokens > 0 ? reply.promptTokens : 0;
    result.evaluated_prompt_tokens = result.prompt_tokens;
    result.decode_tokens_per_s = reply.tokensPerSecond;
    return result;
}

}  // namespace powerinfer::app
