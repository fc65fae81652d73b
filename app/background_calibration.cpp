#include "background_calibration.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QPointer>
#include <QThread>
#include <QtConcurrent/QtConcurrentRun>

#include "model_catalog.h"  // sidecarPathFor

namespace powerinfer::app {

namespace {

struct RunResult {
    bool ok = false;
    bool cancelled = false;
    QString message;
};

}  // namespace

BackgroundCalibration::BackgroundCalibration(QObject* parent) : QObject(parent) {}

BackgroundCalibration::~BackgroundCalibration() {
    // A run in flight stops at its next progress call; its thread is the
    // pool's, which QCoreApplication waits for.
    if (cancel_) cancel_->store(true);
}

QString BackgroundCalibration::etaText() const {
    if (!running_) return {};
    // The engine's estimate, never below what the elapsed time says.
    double eta = eta_;
    if (progress_ > 0.02) {
        const double byClock = double(clock_.elapsed()) / 1000.0 * (1.0 - progress_) / progress_;
        eta = std::max(eta, byClock);
    }
    if (eta < 0) return {};
    const qint64 s = qint64(eta + 0.5);
    return s < 60 ? tr("%1 s left").arg(s) : tr("%1 min %2 s left").arg(s / 60).arg(s % 60);
}

QString BackgroundCalibration::statusFor(const QString& modelPath) const {
    if (running_ && modelPath == modelPath_)
        return tr("calibrating %1 %").arg(int(progress_ * 100));
    return sidecarPathFor(modelPath).isEmpty() ? tr("not calibrated") : tr("calibrated");
}

QString BackgroundCalibration::start(const QString& modelPath) {
    if (!calibrator_) return tr("This build cannot calibrate models.");
    if (running_)
        return tr("%1 is being calibrated; wait for it or cancel it.")
            .arg(QFileInfo(modelPath_).fileName());
    if (!QFileInfo::exists(modelPath)) return tr("%1 does not exist.").arg(modelPath);
    // The bundled public-domain text, as a file the calibrator can read.
    QFile bundled(QStringLiteral(":/corpus/frankenstein-excerpt.txt"));
    corpus_ = QDir::temp().filePath(
        QStringLiteral("powerinfer-bg-corpus-%1.txt").arg(QCoreApplication::applicationPid()));
    QFile out(corpus_);
    if (!bundled.open(QIODevice::ReadOnly) || !out.open(QIODevice::WriteOnly) ||
        out.write(bundled.readAll()) <= 0)
        return tr("The calibration text could not be prepared in %1.").arg(QDir::tempPath());
    out.close();
    running_ = true;
    modelPath_ = modelPath;
    progress_ = 0;
    eta_ = -1;
    error_.clear();
    line_ = tr("Starting…");
    ++revision_;
    clock_.start();
    cancel_ = std::make_shared<std::atomic<bool>>(false);
    emit changed();

    CalibrationRequest request;
    request.model = std::filesystem::path(modelPath.toStdU16String());
    request.corpus = std::filesystem::path(corpus_.toStdU16String());
    request.targetSparsity = 0.5;
    request.tokens = tokens_;
    // One core stays with the chat (and the GUI).
    request.threads = std::max(1, QThread::idealThreadCount() - 1);
    QPointer<BackgroundCalibration> self(this);
    const Calibrator calibrator = calibrator_;
    const auto cancel = cancel_;
    auto* watcher = new QFutureWatcher<RunResult>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher] {
        watcher->deleteLater();
        const RunResult r = watcher->result();
        QFile::remove(corpus_);
        running_ = false;
        error_ = r.ok ? QString() : r.message;
        progress_ = r.ok ? 1 : progress_;
        line_ = r.ok ? tr("Calibrated: the sidecar is next to the model.") : QString();
        ++revision_;
        emit changed();
        emit finished(modelPath_, r.ok, r.ok ? line_ : r.message);
    });
    watcher->setFuture(QtConcurrent::run([self, calibrator, request, cancel] {
        RunResult r;
        try {
            calibrator(request, [self, cancel](double fraction, double eta, const std::string& l) {
                const QString text = QString::fromUtf8(l.c_str());
                QMetaObject::invokeMethod(
                    self.data(),
                    [self, fraction, eta, text] {
                        if (!self || !self->running_) return;
                        self->progress_ = fraction;
                        self->eta_ = eta;
                        if (!text.isEmpty()) self->line_ = text;
                        ++self->revision_;
                        emit self->changed();
                    },
                    Qt::QueuedConnection);
                return !cancel->load();
            });
            r.ok = true;
        } catch (const powerinfer::LoadCancelled&) {
            r.cancelled = true;
            r.message = QObject::tr("Calibration was cancelled.");
        } catch (const std::exception& e) {
            r.message = QString::fromUtf8(e.what());
        }
        return r;
    }));
    return {};
}

void BackgroundCalibration::cancel() {
    if (cancel_) cancel_->store(true);
}

}  // namespace powerinfer::app
