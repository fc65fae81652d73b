// The server's CompletionBackend: one thread owns the Engine and serves a FIFO
// request queue, so requests never overlap on the engine (it is not
// re-entrant) and the HTTP thread never blocks on generation.
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include "completion_backend.h"

namespace powerinfer::server {

class EngineThreadBackend final : public CompletionBackend {
    Q_OBJECT
public:
    // modelId: the name clients use in "model" (e.g. the file's stem).
    EngineThreadBackend(std::unique_ptr<powerinfer::Engine> engine, QString modelId,
                        QObject* parent = nullptr);
    // Cancels queued and running jobs (each still gets its terminal event) and
    // joins the engine thread.
    ~EngineThreadBackend() override;

    QString modelId() const override { return modelId_; }
    QStringList modelAliases() const override;
    powerinfer::ModelInfo modelInfo() const override { return info_; }
    QString requestProblem(const powerinfer::GenerateRequest& request) const override {
        return QString::fromStdString(engine_->request_problem(request));
    }
    CompletionJob* submit(const powerinfer::GenerateRequest& request) override;
    BackendStatus status() const override;

private:
    struct Pending {
        CompletionJob* job = nullptr;  // ours until its terminal event is posted
        powerinfer::GenerateRequest request;
    };

    void run();
    // Generates; returns the terminal event for run() to post.
    JobEvent serve(Pending& pending);

    std::unique_ptr<powerinfer::Engine> engine_;
    const QString modelId_;
    const powerinfer::ModelInfo info_;

    mutable std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<Pending> queue_;
    bool stopping_ = false;
    int running_ = 0;
    CompletionJob* current_ = nullptr;
    powerinfer::MemoryReport memory_;
    std::optional<powerinfer::TokenMetrics> lastToken_;

    std::thread thread_;
};

}  // namespace powerinfer::server
