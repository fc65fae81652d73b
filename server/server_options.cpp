#include "server_options.h"

#include <QCommandLineParser>

namespace powerinfer::server {

namespace {

struct Flags {
    QCommandLineOption model{{QStringLiteral("m"), QStringLiteral("model")},
                             QStringLiteral("GGUF model to serve (required)."),
                             QStringLiteral("path")};
    QCommandLineOption host{QStringLiteral("host"),
                            QStringLiteral("Address to listen on (default 127.0.0.1). Anything but "
                                           "loopback needs --api-key or --insecure."),
                            QStringLiteral("address"), QStringLiteral("127.0.0.1")};
    QCommandLineOption port{QStringLiteral("port"),
                            QStringLiteral("TCP port (default 8080; 0 = any free)."),
                            QStringLiteral("n"), QStringLiteral("8080")};
    QCommandLineOption apiKey{
        QStringLiteral("api-key"),
        QStringLiteral("Require 'Authorization: Bearer KEY' on /v1 and /metrics "
                       "(or set POWERINFER_API_KEY)."),
        QStringLiteral("key")};
    QCommandLineOption insecure{QStringLiteral("insecure"),
                                QStringLiteral("Allow a non-loopback --host without an API key.")};
    QCommandLineOption sparse{
        QStringLiteral("sparse"),
        QStringLiteral("Sparse hybrid inference (the default; needs the model's "
                       "sidecar, else it runs dense).")};
    QCommandLineOption dense{QStringLiteral("dense"),
                             QStringLiteral("Dense, exact reference inference.")};
    QCommandLineOption threads{QStringLiteral("threads"),
                               QStringLiteral("CPU threads (default: all cores)."),
                               QStringLiteral("n")};
    QCommandLineOption ctx{QStringLiteral("ctx"), QStringLiteral("Context length (default 2048)."),
                           QStringLiteral("n")};
    QCommandLineOption gpu{QStringLiteral("gpu"),
                           QStringLiteral("CUDA device index; -1 = CPU only (default: automatic)."),
                           QStringLiteral("n")};
    QCommandLineOption hot{QStringLiteral("hot-neuron-threshold"),
                           QStringLiteral("Activation mass the GPU-resident neurons cover (0-1]."),
                           QStringLiteral("x")};
    QCommandLineOption predictor{
        QStringLiteral("predictor-threshold"),
        QStringLiteral("Predicted probability above which a neuron is computed (0-1)."),
        QStringLiteral("x")};
    QCommandLineOption prefetch{QStringLiteral("prefetch-depth"),
                                QStringLiteral("Layers ahead whose cold neurons are staged."),
                                QStringLiteral("n")};
    QCommandLineOption cache{QStringLiteral("cache-window"),
                             QStringLiteral("Tokens a cold neuron stays cached on the device."),
                             QStringLiteral("n")};
    QCommandLineOption activation{
        QStringLiteral("activation-sparsity"),
        QStringLiteral(
            "CPU exact activation sparsity in [0, 0.99] (-1 = the sidecar's calibrated level)."),
        QStringLiteral("s")};
    QCommandLineOption headCandidates{
        QStringLiteral("head-candidates"),
        QStringLiteral("Output-head rows computed exactly per token, the rest from the sidecar's "
                       "low-rank preview (-1 = default, 0 = the dense head)."),
        QStringLiteral("n")};
    QCommandLineOption vram{QStringLiteral("vram-budget-mb"),
                            QStringLiteral("Device memory the placement may use (-1 = automatic)."),
                            QStringLiteral("mb")};
    QCommandLineOption concurrency{
        QStringLiteral("concurrency"),
        QStringLiteral("Requests decoded together, one forward pass per step (default 1)."),
        QStringLiteral("n"), QStringLiteral("1")};
    QCommandLineOption maxQueue{
        QStringLiteral("max-queue"),
        QStringLiteral("Requests that may wait for the model (default 64); more get 429."),
        QStringLiteral("n"), QStringLiteral("64")};
    QCommandLineOption maxBody{QStringLiteral("max-body-kb"),
                               QStringLiteral("Largest request body in KiB (default 1024)."),
                               QStringLiteral("n"), QStringLiteral("1024")};
    QCommandLineOption requestTimeout{
        QStringLiteral("request-timeout"),
        QStringLiteral("Seconds a client has to send a whole request (default 30)."),
        QStringLiteral("s"), QStringLiteral("30")};
    QCommandLineOption version{{QStringLiteral("v"), QStringLiteral("version")},
                               QStringLiteral("Print the version and exit.")};
    QCommandLineOption help{{QStringLiteral("h"), QStringLiteral("help")},
                            QStringLiteral("Show this help and exit.")};

    void addTo(QCommandLineParser& p) const {
        p.addOptions({model,          host,    port, apiKey,     insecure, sparse,
                      dense,          threads, ctx,  gpu,        hot,      predictor,
                      prefetch,       cache,   vram, activation, maxQueue, maxBody,
                      requestTimeout, version, help, concurrency, headCandidates});
    }
};

// Reads a number option into *out, checking [lo, hi]; returns an error or empty.
template <typename T>
QString readNumber(const QCommandLineParser& p, const QCommandLineOption& o, double lo, double hi,
                   T* out) {
    if (!p.isSet(o)) return {};
    const QString text = p.value(o);
    bool ok = false;
    const double v = text.toDouble(&ok);
    const bool integral = std::is_integral_v<T>;
    if (!ok || v < lo || v > hi || (integral && v != double(qint64(v))))
        return QStringLiteral("--%1 must be %2 between %3 and %4, got '%5'.")
            .arg(o.names().last(),
                 integral ? QStringLiteral("an integer") : QStringLiteral("a number"))
            .arg(lo)
            .arg(hi)
            .arg(text);
    *out = T(v);
    return {};
}

}  // namespace

QString serverUsage() {
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral(
        "OpenAI-compatible HTTP server for a local model, with Prometheus metrics at /metrics."));
    Flags().addTo(p);
    return p.helpText();
}

QString exposureError(const QHostAddress& address, const QString& host, bool haveApiKey,
                      bool insecure) {
    if (address.isLoopback() || haveApiKey || insecure) return {};
    return QStringLiteral(
               "refusing to listen on %1 without an API key: anyone who can reach this address "
               "could use the model. Pass --api-key KEY (or set POWERINFER_API_KEY), or --insecure "
               "if the network is trusted, or use --host 127.0.0.1.")
        .arg(host);
}

OptionsOutcome parseServerOptions(const QStringList& args, const QProcessEnvironment& env) {
    OptionsOutcome out;
    QCommandLineParser p;
    p.setSingleDashWordOptionMode(QCommandLineParser::ParseAsLongOptions);
    const Flags f;
    f.addTo(p);
    if (!p.parse(args)) {
        out.error = p.errorText() + QStringLiteral(" (see --help)");
        return out;
    }
    if (!p.positionalArguments().isEmpty()) {
        out.error = QStringLiteral("unexpected argument '%1' (see --help)")
                        .arg(p.positionalArguments().first());
        return out;
    }
    ServerOptions o;
    o.showHelp = p.isSet(f.help);
    o.showVersion = p.isSet(f.version);
    if (o.showHelp || o.showVersion) {
        out.options = o;
        return out;
    }
    if (!p.isSet(f.model)) {
        out.error = QStringLiteral("--model is required: the GGUF file to serve.");
        return out;
    }
    o.load.model_path = p.value(f.model).toStdString();

    o.host = p.value(f.host);
    if (o.host.compare(QLatin1String("localhost"), Qt::CaseInsensitive) == 0)
        o.address = QHostAddress(QHostAddress::LocalHost);
    else if (!o.address.setAddress(o.host)) {
        out.error =
            QStringLiteral("--host '%1' is not an IP address (e.g. 127.0.0.1, 0.0.0.0, ::1).")
                .arg(o.host);
        return out;
    }
    QString error;
    int port = 8080;
    const auto check = [&](QString e) {
        if (error.isEmpty()) error = std::move(e);
    };
    check(readNumber(p, f.port, 0, 65535, &port));
    o.port = quint16(port);
    o.server.apiKey =
        p.isSet(f.apiKey) ? p.value(f.apiKey) : env.value(QStringLiteral("POWERINFER_API_KEY"));
    o.insecure = p.isSet(f.insecure);

    auto& load = o.load;
    auto& t = load.tuning;
    if (p.isSet(f.sparse) && p.isSet(f.dense))
        check(QStringLiteral("--sparse and --dense exclude each other."));
    if (p.isSet(f.sparse)) t.sparse = true;
    if (p.isSet(f.dense)) t.sparse = false;
    check(readNumber(p, f.threads, 0, 1024, &load.n_threads));
    check(readNumber(p, f.concurrency, 1, 64, &o.concurrency));
    check(readNumber(p, f.ctx, 16, 1 << 20, &load.n_ctx));
    int gpu = -2;
    check(readNumber(p, f.gpu, -1, 64, &gpu));
    if (gpu == -1) load.device = "cpu";
    if (gpu >= 0) load.device = "cuda:" + std::to_string(gpu);
    check(readNumber(p, f.hot, 1e-6, 1.0, &t.hot_neuron_threshold));
    check(readNumber(p, f.predictor, 0.0, 1.0, &t.predictor_threshold));
    check(readNumber(p, f.prefetch, 0, 64, &t.prefetch_depth));
    check(readNumber(p, f.cache, 0, 1 << 20, &t.cache_window_size));
    check(readNumber(p, f.vram, -1, double(1 << 30), &t.vram_budget_mb));
    check(readNumber(p, f.activation, -1.0, 0.99, &t.activation_sparsity));
    check(readNumber(p, f.headCandidates, -1, 1 << 24, &t.head_candidates));
    check(readNumber(p, f.maxQueue, 1, 1 << 20, &o.server.maxQueuedRequests));
    int maxBodyKb = 1024;
    check(readNumber(p, f.maxBody, 1, 1 << 20, &maxBodyKb));
    o.server.limits.maxBodyBytes = qint64(maxBodyKb) * 1024;
    int timeoutS = 30;
    check(readNumber(p, f.requestTimeout, 1, 3600, &timeoutS));
    o.server.limits.requestTimeoutMs = timeoutS * 1000;
    if (!error.isEmpty()) {
        out.error = error;
        return out;
    }
    if (QString e = exposureError(o.address, o.host, !o.server.apiKey.isEmpty(), o.insecure);
        !e.isEmpty()) {
        out.error = e;
        return out;
    }
    out.options = std::move(o);
    return out;
}

}  // namespace powerinfer::server
