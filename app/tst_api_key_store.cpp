// The API key of a remote server in a real OS keychain: a private D-Bus
// session bus with gnome-keyring-daemon's Secret Service (what QtKeychain's
// libsecret backend talks to on a Linux desktop), in a temporary home. The
// key is stored the way the window stores it (ChatController), read back by
// a NEW process, never found in plain text in any file (the settings in
// SQLite, any QSettings file, the keyring file itself), and deleted.
// Without dbus-daemon or gnome-keyring-daemon the test skips locally and
// fails under CI=true (scripts/deps installs them).
#include <qcoro/qcorotask.h>

#include <QDBusConnection>
#include <QDBusConnectionInterface>
#include <QDBusInterface>
#include <QDBusObjectPath>
#include <QDBusReply>
#include <QDirIterator>
#include <QGuiApplication>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include "api_key_store.h"
#include "chat_controller.h"
#include "remote_engine.h"

using namespace powerinfer::app;

namespace {

template <typename T>
T run(QCoro::Task<T> task) {
    return QCoro::waitFor(std::move(task));
}

// The child process: reads the key filed under argv[2] and prints
// "key:<key>" or "error:<message>".
int readKeyInChild(int argc, char** argv) {
    QCoreApplication app(argc, argv);
    const KeychainResult r = run(readApiKey(QString::fromLocal8Bit(argv[2])));
    std::printf("%s\n", (r.ok ? "key:" + r.key : "error:" + r.error).toUtf8().constData());
    return r.ok ? 0 : 1;
}

const char kConnection[] = "tst_api_key_store";

}  // namespace

class TestApiKeyStore : public QObject {
    Q_OBJECT
    QTemporaryDir home_;
    QProcess bus_, keyring_;

    // Reads the key in a new process of this executable (same environment:
    // the private bus and home).
    QString readInNewProcess(const QString& url) {
        QProcess p;
        p.start(QCoreApplication::applicationFilePath(), {"--read-key", url});
        if (!p.waitForFinished(30000)) return QStringLiteral("timeout");
        return QString::fromUtf8(p.readAllStandardOutput()).trimmed() +
               QString::fromUtf8(p.readAllStandardError()).trimmed();
    }

    static QString findTool(const char* name) {
        return QStandardPaths::findExecutable(QString::fromLatin1(name));
    }

private slots:
    void initTestCase() {
        QVERIFY(keychainBuiltIn());
        const QString dbusDaemon = findTool("dbus-daemon");
        const QString keyringDaemon = findTool("gnome-keyring-daemon");
        if (dbusDaemon.isEmpty() || keyringDaemon.isEmpty()) {
            const char* why =
                "dbus-daemon or gnome-keyring-daemon not found (Debian: dbus-daemon, "
                "gnome-keyring, libsecret-1-0; scripts/deps installs them)";
            if (qEnvironmentVariable("CI") == "true") QFAIL(why);
            QSKIP(why);
        }
        // A home of our own: the user's real keyring and settings stay untouched.
        QVERIFY(home_.isValid());
        const QDir home(home_.path());
        for (const char* sub : {"data", "config", "cache", "run"}) QVERIFY(home.mkpath(sub));
        QFile::setPermissions(home.filePath("run"),
                              QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
        qputenv("HOME", home_.path().toLocal8Bit());
        qputenv("XDG_DATA_HOME", home.filePath("data").toLocal8Bit());
        qputenv("XDG_CONFIG_HOME", home.filePath("config").toLocal8Bit());
        qputenv("XDG_CACHE_HOME", home.filePath("cache").toLocal8Bit());
        qputenv("XDG_RUNTIME_DIR", home.filePath("run").toLocal8Bit());
        // QtKeychain picks KWallet on KDE desktops: the Secret Service here.
        for (const char* var : {"XDG_CURRENT_DESKTOP", "DESKTOP_SESSION", "KDE_FULL_SESSION",
                                "KDE_SESSION_VERSION", "GNOME_KEYRING_CONTROL"})
            qunsetenv(var);

        // A bus of our own with no service files: nothing is activated on
        // demand (a second keyring daemon would take the Secret Service's
        // name before ours).
        QFile config(home.filePath("bus.conf"));
        QVERIFY(config.open(QIODevice::WriteOnly));
        config.write(QStringLiteral(
                         "<!DOCTYPE busconfig PUBLIC \"-//freedesktop//DTD D-Bus Bus Configuration "
                         "1.0//EN\" \"http://www.freedesktop.org/standards/dbus/1.0/"
                         "busconfig.dtd\">\n<busconfig><type>session</type><keep_umask/>"
                         "<listen>unix:dir=%1</listen><auth>EXTERNAL</auth>"
                         "<policy context=\"default\">"
                         "<allow send_destination=\"*\" eavesdrop=\"true\"/>"
                         "<allow eavesdrop=\"true\"/><allow own=\"*\"/></policy></busconfig>\n")
                         .arg(home.filePath("run"))
                         .toUtf8());
        config.close();
        bus_.start(dbusDaemon,
                   {"--config-file=" + config.fileName(), "--nofork", "--print-address=1"});
        QVERIFY2(bus_.waitForStarted(10000), qPrintable(bus_.errorString()));
        QByteArray address;
        QElapsedTimer t;
        t.start();
        while (!address.contains('\n') && t.elapsed() < 10000) {
            bus_.waitForReadyRead(200);
            address += bus_.readAllStandardOutput();
        }
        address = address.trimmed();
        QVERIFY2(!address.isEmpty(), bus_.readAllStandardError().constData());
        qputenv("DBUS_SESSION_BUS_ADDRESS", address);

        // --unlock reads the login keyring's password from stdin and creates
        // that keyring, the default collection, without a prompt.
        keyring_.setProcessEnvironment(QProcessEnvironment::systemEnvironment());
        keyring_.start(keyringDaemon, {"--foreground", "--unlock", "--components=secrets"});
        QVERIFY2(keyring_.waitForStarted(10000), qPrintable(keyring_.errorString()));
        keyring_.write("test-keyring-password");
        keyring_.closeWriteChannel();

        // Ready once the Secret Service has a default collection.
        QDBusConnection bus = QDBusConnection::connectToBus(QString::fromLatin1(address),
                                                            QString::fromLatin1(kConnection));
        QVERIFY2(bus.isConnected(), qPrintable(bus.lastError().message()));
        bool ready = false;
        t.restart();
        while (!ready && t.elapsed() < 20000) {
            if (!bus.interface()->isServiceRegistered("org.freedesktop.secrets")) {
                QTest::qWait(100);
                continue;
            }
            QDBusInterface service("org.freedesktop.secrets", "/org/freedesktop/secrets",
                                   "org.freedesktop.Secret.Service", bus);
            const QDBusReply<QDBusObjectPath> alias =
                service.call(QStringLiteral("ReadAlias"), QStringLiteral("default"));
            ready = alias.isValid() && alias.value().path() != QLatin1String("/");
            if (!ready) QTest::qWait(100);
        }
        QVERIFY2(ready, keyring_.readAllStandardError().constData());
    }

    void cleanupTestCase() {
        QDBusConnection::disconnectFromBus(QString::fromLatin1(kConnection));
        for (QProcess* p : {&keyring_, &bus_}) {
            if (p->state() == QProcess::NotRunning) continue;
            p->terminate();
            if (!p->waitForFinished(5000)) {
                p->kill();
                p->waitForFinished(5000);
            }
        }
    }

    void theKeyIsStoredReadByANewProcessNeverInAFileAndDeleted() {
        const QString url = QStringLiteral("http://127.0.0.1:1/v1");
        const QString key = QStringLiteral("sk-test-5f3c9a7e21d04b8c");
        QCOMPARE(readInNewProcess(url), QStringLiteral("key:"));  // nothing stored yet

        // Stored as the window stores it: Connect in the remote-server
        // section (the server is not there; the key is kept all the same).
        const QDir data(QDir(home_.path()).filePath("data"));
        {
            ChatStore store(data.filePath("conversations.sqlite"));
            auto credentials = std::make_shared<RemoteCredentials>();
            EngineClient engine([credentials](const powerinfer::LoadOptions& o) {
                return std::unique_ptr<powerinfer::Engine>(
                    RemoteEngine::connect(o, credentials->apiKey()));
            });
            AppSettings settings;
            ModelCatalog models(nullptr);
            ChatController controller(&store, &engine, &models, &settings);
            controller.setRemoteCredentials(credentials);
            QVERIFY(run(controller.initialize()).isEmpty());
            QVERIFY(!run(controller.connectRemoteServer(url, "some-model", key)));
            QCOMPARE(controller.keychainStatus(),
                     QStringLiteral("The API key is kept in the OS keychain."));
            QCOMPARE(credentials->apiKey(), key);
            QCOMPARE(settings.remoteUrl(), url);
        }

        // A new process finds it in the keychain.
        QCOMPARE(readInNewProcess(url), "key:" + key);
        // Another server's key is another entry.
        QCOMPARE(readInNewProcess(QStringLiteral("http://127.0.0.1:2/v1")), QStringLiteral("key:"));

        // In plain text nowhere: not in the settings (SQLite), not in a
        // QSettings file, not in the (encrypted) keyring file.
        int files = 0;
        bool sawSettings = false, sawKeyring = false;
        QDirIterator it(home_.path(), QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
        while (it.hasNext()) {
            const QString path = it.next();
            QFile f(path);
            if (!f.open(QIODevice::ReadOnly)) continue;  // sockets
            const QByteArray bytes = f.readAll();
            ++files;
            sawSettings |= path.endsWith("conversations.sqlite");
            sawKeyring |= path.endsWith(".keyring");
            QVERIFY2(!bytes.contains(key.toUtf8()), qPrintable(path));
        }
        QVERIFY(sawSettings);
        QVERIFY2(sawKeyring, "the keyring was not written to disk");
        qInfo("%d files checked", files);

        // Deleted: a new process finds nothing.
        const KeychainResult deleted = run(deleteApiKey(url));
        QVERIFY2(deleted.ok, qPrintable(deleted.error));
        QCOMPARE(readInNewProcess(url), QStringLiteral("key:"));
        // Deleting what is not there is fine too.
        QVERIFY(run(deleteApiKey(url)).ok);
    }

    void aKeyWrittenDirectlyRoundTrips() {
        const QString url = QStringLiteral("https://gpu-box.example:8443/v1");
        const KeychainResult w = run(writeApiKey(url, QStringLiteral("another key ÄÖ €")));
        QVERIFY2(w.ok, qPrintable(w.error));
        const KeychainResult r = run(readApiKey(url));
        QVERIFY2(r.ok, qPrintable(r.error));
        QCOMPARE(r.key, QStringLiteral("another key ÄÖ €"));
        QCOMPARE(readInNewProcess(url), QStringLiteral("key:another key ÄÖ €"));
        QVERIFY(run(deleteApiKey(url)).ok);
        QCOMPARE(run(readApiKey(url)).key, QString());
    }
};

int main(int argc, char** argv) {
    if (argc == 3 && qstrcmp(argv[1], "--read-key") == 0) return readKeyInChild(argc, argv);
    QGuiApplication app(argc, argv);  // the controller's clipboard needs a GUI application
    TestApiKeyStore test;
    QTEST_SET_MAIN_SOURCE_PATH
    return QTest::qExec(&test, argc, argv);
}

#include "tst_api_key_store.moc"
