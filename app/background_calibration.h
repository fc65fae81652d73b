// Calibration in the background: the sparse sidecar of a model file made on
// a pool thread by the injected Calibrator (which loads its own copy of the
// model), while the loaded model keeps answering dense on the engine thread.
// Progress, time left and Cancel; the model list reads the status of each
// file ("calibrated", "not calibrated", "calibrating 43 %"). GUI thread only.
#pragma once

#include <qqmlintegration.h>

#include <QElapsedTimer>
#include <QObject>
#include <atomic>
#include <memory>

#include "engine_worker.h"  // Calibrator, CalibrationRequest

namespace powerinfer::app {

class BackgroundCalibration : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("provided by ChatController")
    Q_PROPERTY(bool available READ available CONSTANT)
    Q_PROPERTY(bool running READ running NOTIFY changed)
    Q_PROPERTY(QString modelPath READ modelPath NOTIFY changed)
    Q_PROPERTY(double progress READ progress NOTIFY changed)
    Q_PROPERTY(QString etaText READ etaText NOTIFY changed)
    Q_PROPERTY(QString line READ line NOTIFY changed)
    Q_PROPERTY(QString error READ error NOTIFY changed)
    // Bumped whenever a status may have changed (for QML bindings).
    Q_PROPERTY(int revision READ revision NOTIFY changed)
public:
    explicit BackgroundCalibration(QObject* parent = nullptr);
    ~BackgroundCalibration() override;

    void setCalibrator(Calibrator calibrator) { calibrator_ = std::move(calibrator); }
    // Corpus tokens (20,000 by default; the quick variant uses 2,000).
    void setTokens(int64_t tokens) { tokens_ = tokens; }
    bool available() const { return bool(calibrator_); }
    bool running() const { return running_; }
    QString modelPath() const { return modelPath_; }
    double progress() const { return progress_; }
    QString etaText() const;
    QString line() const { return line_; }
    QString error() const { return error_; }
    int revision() const { return revision_; }

    // Starts calibrating this file on the bundled corpus; "" when it started,
    // else why not.
    Q_INVOKABLE QString start(const QString& modelPath);
    Q_INVOKABLE void cancel();
    // "calibrated", "not calibrated" or "calibrating 43 %".
    Q_INVOKABLE QString statusFor(const QString& modelPath) const;

signals:
    void changed();
    // The sidecar is written (ok) or the run failed or was cancelled.
    void finished(const QString& modelPath, bool ok, const QString& message);

private:
    Calibrator calibrator_;
    int64_t tokens_ = 20000;
    bool running_ = false;
    QString modelPath_, line_, error_, corpus_;
    double progress_ = 0, eta_ = -1;
    int revision_ = 0;
    QElapsedTimer clock_;
    std::shared_ptr<std::atomic<bool>> cancel_;
};

}  // namespace powerinfer::app
