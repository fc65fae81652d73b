// The server's CompletionBackend: one thread owns the Engine and serves a FIFO
// request queue, so the HTTP thread never blocks on generation. With
// concurrency 1 requests run one at a time through Engine::generate; with
// N > 1 up to N decode together (Engine::start_sequence/step: one forward
// pass per step over all of them), new ones joining between steps.
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "completion_backend.h"

namespace powerinfer::server {

class EngineThreadBackend final : public CompletionBackend {
    Q_OBJECT
public:
    // modelId: the name clients use in "model" (e.g. the file's stem).
    // concurrency > 1 asks the engine for that many sequences; if it cannot,
    // requests run one at a time and batchingNote() says why.
    EngineThreadBackend(std::unique_ptr<powerinfer::Engine> engine, QString modelId,
                        QObject* parent = nullptr, int concurrency = 1);
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

    // Requests decoded together (1 when the engine cannot batch).
    int concurrency() const { return concurrency_; }
    // How batching runs, or why it does not ("" if nothing to say).
    QString batchingNote() const { return batchingNote_; }

private:
    struct Pending {
        CompletionJob* job = nullptr;  // ours until its terminal event is posted
        powerinfer::GenerateRequest request;
    };

    void run();
    void runBatched();
    // Generates; returns the terminal event for run() to post.
    JobEvent serve(Pending& pending);
    // The terminal event of a request the engine threw for.
    JobEvent failure(const std::exception& e, const powerinfer::GenerateRequest& request) const;
    void snapshotMemory();

    std::unique_ptr<powerinfer::Engine> engine_;
    const QString modelId_;
    const powerinfer::ModelInfo info_;

    mutable std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<Pending> queue_;
    bool stopping_ = false;
    int running_ = 0;
    CompletionJob* current_ = nullptr;
    std::vector<CompletionJob*> batch_;  // jobs decoding in a batch (cancelled on destruction)
    int concurrency_ = 1;
    QString batchingNote_;
    powerinfer::MemoryReport memory_;
    std::optional<powerinfer::TokenMetrics> lastToken_;

    std::thread thread_;
};

}  // namespace powerinfer::server
