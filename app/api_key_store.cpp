#include "api_key_store.h"

#include <qcoro/qcorosignal.h>

#include <QObject>
#include <QPointer>

#ifdef POWERINFER_HAVE_KEYCHAIN
#include <qt6keychain/keychain.h>
#endif

namespace powerinfer::app {

namespace {

constexpr char kService[] = "PowerInfer Desktop remote servers";

#ifdef POWERINFER_HAVE_KEYCHAIN
QString keychainError(const QKeychain::Job& job) {
    return QObject::tr(
               "The OS keychain is not available (%1): the API key is used for this "
               "session only and is not stored anywhere.")
        .arg(job.errorString());
}

// The job lives on the heap and goes with deleteLater: this coroutine is
// resumed from the job's own (queued) signal, and the frame that would hold
// a job on the stack ends inside that call.
template <typename Job>
QCoro::Task<KeychainResult> run(Job* job) {
    job->setAutoDelete(false);
    job->start();
    co_await qCoro(job, &QKeychain::Job::finished);
    job->deleteLater();
    KeychainResult r;
    if (job->error() == QKeychain::NoError) {
        r.ok = true;
    } else if (job->error() == QKeychain::EntryNotFound) {
        r.ok = true;  // nothing stored yet
    } else {
        r.error = keychainError(*job);
    }
    co_return r;
}
#endif

}  // namespace

bool keychainBuiltIn() {
#ifdef POWERINFER_HAVE_KEYCHAIN
    return true;
#else
    return false;
#endif
}

#ifdef POWERINFER_HAVE_KEYCHAIN
QCoro::Task<KeychainResult> readApiKey(QString serverUrl) {
    auto* job = new QKeychain::ReadPasswordJob(QString::fromLatin1(kService));
    job->setKey(serverUrl);
    const QPointer<QKeychain::ReadPasswordJob> alive(job);
    KeychainResult r = co_await run(job);
    if (r.ok && alive) r.key = alive->textData();
    co_return r;
}

QCoro::Task<KeychainResult> writeApiKey(QString serverUrl, QString key) {
    auto* job = new QKeychain::WritePasswordJob(QString::fromLatin1(kService));
    job->setKey(serverUrl);
    job->setTextData(key);
    co_return co_await run(job);
}

QCoro::Task<KeychainResult> deleteApiKey(QString serverUrl) {
    auto* job = new QKeychain::DeletePasswordJob(QString::fromLatin1(kService));
    job->setKey(serverUrl);
    co_return co_await run(job);
}
#else
namespace {
KeychainResult unavailable() {
    KeychainResult r;
    r.error = QObject::tr(
        "This build has no OS keychain support (QtKeychain): the API key is "
        "used for this session only and is not stored anywhere.");
    return r;
}
}  // namespace
QCoro::Task<KeychainResult> readApiKey(QString) { co_return unavailable(); }
QCoro::Task<KeychainResult> writeApiKey(QString, QString) { co_return unavailable(); }
QCoro::Task<KeychainResult> deleteApiKey(QString) { co_return unavailable(); }
#endif

}  // namespace powerinfer::app
