// The remote backend: a powerinfer::Engine whose replies come from an
// OpenAI-compatible server (vLLM, a llama.cpp server, Ollama, our own
// powerinfer-server), so that the chat, its storage, Stop and the error
// display work as with a local model. It runs on the engine thread like any
// engine: each call spins a local event loop around a RemoteChatClient.
//
// A remote "model path" is remoteModelPath(url, model): "remote:" + the
// server's URL + "#" + the model id. The executable's engine factory hands
// such paths to RemoteEngine::connect and files to the local engine.
#pragma once

#include <QString>
#include <QUrl>
#include <memory>
#include <mutex>

#include "powerinfer/engine.h"

namespace powerinfer::app {

QString remoteModelPath(const QString& url, const QString& model);
bool isRemoteModelPath(const QString& path);
// Splits a remote path; false when it is not one.
bool parseRemoteModelPath(const QString& path, QUrl* url, QString* model);

// The API key for the next connect, set on the GUI thread (from the OS
// keychain) and read on the engine thread. Never written to disk here.
class RemoteCredentials {
public:
    void setApiKey(const QString& key) {
        std::lock_guard lock(mutex_);
        key_ = key;
    }
    QString apiKey() const {
        std::lock_guard lock(mutex_);
        return key_;
    }

private:
    mutable std::mutex mutex_;
    QString key_;
};

class RemoteEngine : public powerinfer::Engine {
public:
    // Asks the server for its models (GET /v1/models) and checks the id
    // (empty: the first). Throws EngineError with the server's message.
    static std::unique_ptr<RemoteEngine> connect(const powerinfer::LoadOptions& options,
                                                 const QString& apiKey);

    const powerinfer::ModelInfo& info() const override { return info_; }
    powerinfer::GenerateResult generate(
        const powerinfer::GenerateRequest& request,
        const std::function<void(const powerinfer::TokenEvent&)>& on_token,
        const std::atomic<bool>* cancel) override;
    // The server applies its own template; this is only the text the app
    // counts for the context meter.
    std::string format_chat(const std::vector<powerinfer::ChatMessage>& messages) const override;
    // The server's tokenizer is not reachable: about four bytes a token, as
    // an estimate for the context meter and for dropping the oldest turns.
    std::vector<int32_t> tokenize(const std::string& text, bool add_special) const override;
    std::string detokenize(const std::vector<int32_t>& tokens) const override { return {}; }
    void set_tuning(const powerinfer::Tuning& tuning) override { tuning_ = tuning; }
    powerinfer::Tuning tuning() const override { return tuning_; }
    powerinfer::TokenMetrics last_metrics() const override { return {}; }
    powerinfer::MemoryReport memory() const override;
    void reset() override {}

private:
    QUrl url_;
    QString model_;
    QString apiKey_;
    powerinfer::ModelInfo info_;
    powerinfer::Tuning tuning_;
};

}  // namespace powerinfer::app
