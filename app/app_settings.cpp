#include "app_settings.h"

#include <QDir>
#include <QStandardPaths>

namespace powerinfer::app {

namespace {
QString toText(double v) { return QString::number(v, 'g', 6); }
QString toText(int v) { return QString::number(v); }
QString toText(qint64 v) { return QString::number(v); }
QString toText(const QString& v) { return v; }
QString toText(bool v) { return v ? QStringLiteral("true") : QStringLiteral("false"); }
}  // namespace

QString AppSettings::defaultModelsFolder() {
    const QString env = qEnvironmentVariable("POWERINFER_MODEL_DIR");
    if (!env.isEmpty()) return env;
    return QStandardPaths::writableLocation(QStandardPaths::GenericCacheLocation) +
           QStringLiteral("/powerinfer/models");
}

template <typename T>
void AppSettings::assign(T& field, T value, const char* key, void (AppSettings::*notify)()) {
    if (field == value) return;
    field = value;
    emit(this->*notify)();
    if (!restoring_) emit persistRequested(QString::fromLatin1(key), toText(value));
}

void AppSettings::setTemperature(double v) {
    assign(temperature_, qBound(0.0, v, 2.0), "temperature");
}
void AppSettings::setTopP(double v) { assign(topP_, qBound(0.0, v, 1.0), "top_p"); }
void AppSettings::setTopK(int v) { assign(topK_, qBound(0, v, 1000), "top_k"); }
void AppSettings::setMaxTokens(int v) { assign(maxTokens_, qBound(1, v, 32768), "max_tokens"); }
void AppSettings::setContextLength(int v) {
    assign(contextLength_, qBound(256, v, 131072), "context_length");
}
void AppSettings::setThemeMode(const QString& v) {
    if (v == QLatin1String("system") || v == QLatin1String("light") || v == QLatin1String("dark"))
        assign(themeMode_, v, "theme");
}
void AppSettings::setModelsFolder(const QString& v) { assign(modelsFolder_, v, "models_folder"); }
void AppSettings::setLastModelPath(const QString& v) { assign(lastModelPath_, v, "last_model"); }
void AppSettings::setShowMetrics(bool v) { assign(showMetrics_, v, "show_metrics"); }
void AppSettings::setSparseEngine(int v) {
    if (v == 2 || v == 3) assign(sparseEngine_, v, "sparse_engine");
}
void AppSettings::setApiServerEnabled(bool v) {
    assign(apiServerEnabled_, v, "api_server_enabled");
}
void AppSettings::setApiServerPort(int v) {
    assign(apiServerPort_, qBound(0, v, 65535), "api_server_port");
}

void AppSettings::setApiServerKey(const QString& v) {
    assign(apiServerKey_, v.trimmed(), "api_server_key");
}
void AppSettings::setShowSidebar(bool v) { assign(showSidebar_, v, "show_sidebar"); }
void AppSettings::setLastConversationId(qint64 v) {
    assign(lastConversationId_, std::max<qint64>(0, v), "last_conversation",
           &AppSettings::lastConversationIdChanged);
}
void AppSettings::setRepeatPenalty(double v) {
    assign(repeatPenalty_, qBound(1.0, v, 2.0), "repeat_penalty");
}

qint64 AppSettings::kvCacheBytes(int nLayers, int nEmbd, int nHead, int nHeadKv, int nCtx) {
    if (nLayers <= 0 || nEmbd <= 0 || nHead <= 0 || nCtx <= 0) return 0;
    const qint64 kvDim = qint64(nEmbd) / nHead * (nHeadKv > 0 ? nHeadKv : nHead);
    return 2 * qint64(nLayers) * kvDim * qint64(nCtx) * 2;  // 2 bytes per F16 element
}

void AppSettings::resetSampling() {
    setRepeatPenalty(1.0);
    setTemperature(0.7);
    setTopP(0.95);
    setTopK(40);
    setMaxTokens(512);
}
void AppSettings::setHostReadBandwidth(double v) {
    assign(hostReadBandwidth_, std::max(0.0, v), "host_read_bandwidth");
}
void AppSettings::setHostDecodeRate(double v) {
    assign(hostDecodeRate_, std::max(0.0, v), "host_decode_rate");
}
void AppSettings::setRemoteUrl(const QString& v) { assign(remoteUrl_, v.trimmed(), "remote_url"); }
void AppSettings::setRemoteModel(const QString& v) {
    assign(remoteModel_, v.trimmed(), "remote_model");
}

void AppSettings::restore(const QHash<QString, QString>& stored) {
    restoring_ = true;
    bool ok = false;
    const auto number = [&](const char* key, auto setter) {
        const auto it = stored.find(QString::fromLatin1(key));
        if (it == stored.end()) return;
        const double v = it->toDouble(&ok);
        if (ok) setter(v);
    };
    number("temperature", [this](double v) { setTemperature(v); });
    number("top_p", [this](double v) { setTopP(v); });
    number("top_k", [this](double v) { setTopK(int(v)); });
    number("max_tokens", [this](double v) { setMaxTokens(int(v)); });
    number("context_length", [this](double v) { setContextLength(int(v)); });
    number("api_server_port", [this](double v) { setApiServerPort(int(v)); });
    number("repeat_penalty", [this](double v) { setRepeatPenalty(v); });
    number("last_conversation", [this](double v) { setLastConversationId(qint64(v)); });
    number("host_read_bandwidth", [this](double v) { setHostReadBandwidth(v); });
    number("host_decode_rate", [this](double v) { setHostDecodeRate(v); });
    if (stored.contains(QStringLiteral("remote_url")))
        setRemoteUrl(stored.value(QStringLiteral("remote_url")));
    if (stored.contains(QStringLiteral("remote_model")))
        setRemoteModel(stored.value(QStringLiteral("remote_model")));
    if (stored.contains(QStringLiteral("api_server_key")))
        setApiServerKey(stored.value(QStringLiteral("api_server_key")));
    if (stored.contains(QStringLiteral("show_sidebar")))
        setShowSidebar(stored.value(QStringLiteral("show_sidebar")) == QLatin1String("true"));
    if (stored.contains(QStringLiteral("theme")))
        setThemeMode(stored.value(QStringLiteral("theme")));
    if (stored.contains(QStringLiteral("models_folder")))
        setModelsFolder(stored.value(QStringLiteral("models_folder")));
    if (stored.contains(QStringLiteral("last_model")))
        setLastModelPath(stored.value(QStringLiteral("last_model")));
    if (stored.contains(QStringLiteral("sparse_engine")))
        setSparseEngine(stored.value(QStringLiteral("sparse_engine")).toInt());
    if (stored.contains(QStringLiteral("show_metrics")))
        setShowMetrics(stored.value(QStringLiteral("show_metrics")) == QLatin1String("true"));
    if (stored.contains(QStringLiteral("api_server_enabled")))
        setApiServerEnabled(stored.value(QStringLiteral("api_server_enabled")) ==
                            QLatin1String("true"));
    restoring_ = false;
}

}  // namespace powerinfer::app
