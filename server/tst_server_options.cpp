#include <QTest>

#include "server_options.h"

using namespace powerinfer::server;

namespace {

OptionsOutcome parse(QStringList args, QProcessEnvironment env = QProcessEnvironment()) {
    args.prepend(QStringLiteral("powerinfer-server"));
    return parseServerOptions(args, env);
}

}  // namespace

class TestServerOptions : public QObject {
    Q_OBJECT
private slots:
    void defaultsToLoopback() {
        const auto out = parse({QStringLiteral("--model"), QStringLiteral("m.gguf")});
        QVERIFY2(out.options, qPrintable(out.error));
        QVERIFY(out.options->address.isLoopback());
        QCOMPARE(out.options->port, quint16(8080));
        QVERIFY(out.options->server.apiKey.isEmpty());
        QCOMPARE(out.options->load.model_path.string(), std::string("m.gguf"));
        QCOMPARE(out.options->load.device, std::string("auto"));
        QCOMPARE(out.options->concurrency, 1);  // one request at a time unless asked
    }

    void refusesToExposeTheModelWithoutAKey() {
        auto out = parse({QStringLiteral("-m"), QStringLiteral("m.gguf"), QStringLiteral("--host"),
                          QStringLiteral("0.0.0.0")});
        QVERIFY(!out.options);
        QVERIFY2(out.error.contains(QLatin1String("--api-key")) &&
                     out.error.contains(QLatin1String("--insecure")),
                 qPrintable(out.error));
        out = parse({QStringLiteral("-m"), QStringLiteral("m.gguf"), QStringLiteral("--host"),
                     QStringLiteral("0.0.0.0"), QStringLiteral("--api-key"), QStringLiteral("k")});
        QVERIFY(out.options);
        QCOMPARE(out.options->server.apiKey, QStringLiteral("k"));
        out = parse({QStringLiteral("-m"), QStringLiteral("m.gguf"), QStringLiteral("--host"),
                     QStringLiteral("::"), QStringLiteral("--insecure")});
        QVERIFY(out.options);
        QProcessEnvironment env;
        env.insert(QStringLiteral("POWERINFER_API_KEY"), QStringLiteral("from-env"));
        out = parse({QStringLiteral("-m"), QStringLiteral("m.gguf"), QStringLiteral("--host"),
                     QStringLiteral("10.0.0.2")},
                    env);
        QVERIFY(out.options);
        QCOMPARE(out.options->server.apiKey, QStringLiteral("from-env"));
        out = parse({QStringLiteral("-m"), QStringLiteral("m.gguf"), QStringLiteral("--host"),
                     QStringLiteral("localhost")});
        QVERIFY(out.options);
        QVERIFY(out.options->address.isLoopback());
    }

    void mapsEngineFlags() {
        const auto out =
            parse({QStringLiteral("-m"),        QStringLiteral("m.gguf"),
                   QStringLiteral("--threads"), QStringLiteral("3"),
                   QStringLiteral("--ctx"),     QStringLiteral("4096"),
                   QStringLiteral("--gpu"),     QStringLiteral("1"),
                   QStringLiteral("--dense"),   QStringLiteral("--hot-neuron-threshold"),
                   QStringLiteral("0.7"),       QStringLiteral("--prefetch-depth"),
                   QStringLiteral("3"),         QStringLiteral("--cache-window"),
                   QStringLiteral("16"),        QStringLiteral("--vram-budget-mb"),
                   QStringLiteral("2048"),      QStringLiteral("--predictor-threshold"),
                   QStringLiteral("0.4"),       QStringLiteral("--port"),
                   QStringLiteral("0"),         QStringLiteral("--max-body-kb"),
                   QStringLiteral("64"),        QStringLiteral("--concurrency"),
                   QStringLiteral("4")});
        QVERIFY2(out.options, qPrintable(out.error));
        const auto& l = out.options->load;
        QCOMPARE(l.n_threads, 3);
        QCOMPARE(l.n_ctx, 4096);
        QCOMPARE(l.device, std::string("cuda:1"));
        QCOMPARE(l.tuning.sparse, false);
        QCOMPARE(l.tuning.hot_neuron_threshold, 0.7);
        QCOMPARE(l.tuning.prefetch_depth, 3);
        QCOMPARE(l.tuning.cache_window_size, 16);
        QCOMPARE(l.tuning.vram_budget_mb, int64_t(2048));
        QCOMPARE(l.tuning.predictor_threshold, 0.4);
        QCOMPARE(out.options->port, quint16(0));
        QCOMPARE(out.options->server.limits.maxBodyBytes, qint64(64 * 1024));
        QCOMPARE(out.options->concurrency, 4);
        QCOMPARE(parse({QStringLiteral("-m"), QStringLiteral("m"), QStringLiteral("--gpu"),
                        QStringLiteral("-1")})
                     .options->load.device,
                 std::string("cpu"));
    }

    void rejectsBadValues_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("mentions");
        QTest::newRow("no model") << QStringList{} << "--model";
        QTest::newRow("port range") << QStringList{"-m", "m", "--port", "70000"} << "--port";
        QTest::newRow("threshold range")
            << QStringList{"-m", "m", "--hot-neuron-threshold", "2"} << "--hot-neuron-threshold";
        QTest::newRow("threads text") << QStringList{"-m", "m", "--threads", "many"} << "--threads";
        QTest::newRow("concurrency 0")
            << QStringList{"-m", "m", "--concurrency", "0"} << "--concurrency";
        QTest::newRow("fractional ctx") << QStringList{"-m", "m", "--ctx", "100.5"} << "--ctx";
        QTest::newRow("bad host") << QStringList{"-m", "m", "--host", "example"} << "--host";
        QTest::newRow("sparse and dense")
            << QStringList{"-m", "m", "--sparse", "--dense"} << "--sparse";
        QTest::newRow("unknown flag") << QStringList{"-m", "m", "--turbo"} << "turbo";
        QTest::newRow("stray argument") << QStringList{"-m", "m", "extra"} << "extra";
    }
    void rejectsBadValues() {
        QFETCH(QStringList, args);
        QFETCH(QString, mentions);
        const auto out = parse(args);
        QVERIFY(!out.options);
        QVERIFY2(out.error.contains(mentions), qPrintable(out.error));
    }

    void versionNeedsNoModel() {
        const auto out = parse({QStringLiteral("--version")});
        QVERIFY(out.options);
        QVERIFY(out.options->showVersion);
        QVERIFY(serverUsage().contains(QLatin1String("--api-key")));
    }
};

QTEST_GUILESS_MAIN(TestServerOptions)
#include "tst_server_options.moc"
