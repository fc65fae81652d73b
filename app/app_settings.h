// User preferences (sampling defaults, theme, models folder). GUI thread
// only; persisted through the store's settings table by ChatController. A
// generation takes a snapshot (GenerationJob), never reads these live.
#pragma once

#include <qqmlintegration.h>

#include <QHash>
#include <QObject>

namespace powerinfer::app {

class AppSettings : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("provided by ChatController")
    Q_PROPERTY(double temperature READ temperature WRITE setTemperature NOTIFY changed)
    Q_PROPERTY(double topP READ topP WRITE setTopP NOTIFY changed)
    Q_PROPERTY(int topK READ topK WRITE setTopK NOTIFY changed)
    Q_PROPERTY(int maxTokens READ maxTokens WRITE setMaxTokens NOTIFY changed)
    Q_PROPERTY(int contextLength READ contextLength WRITE setContextLength NOTIFY changed)
    // "system" (follow the desktop), "light" or "dark".
    Q_PROPERTY(QString themeMode READ themeMode WRITE setThemeMode NOTIFY changed)
    Q_PROPERTY(QString modelsFolder READ modelsFolder WRITE setModelsFolder NOTIFY changed)
    Q_PROPERTY(QString lastModelPath READ lastModelPath WRITE setLastModelPath NOTIFY changed)
    // The metrics side panel (toggled in the header).
    Q_PROPERTY(bool showMetrics READ showMetrics WRITE setShowMetrics NOTIFY changed)
    // The sparse engine a calibrated model loads with: 2 (FFN neurons, the
    // default) or 3 (input sparsity on every matrix, opt-in: --sparse-engine).
    Q_PROPERTY(int sparseEngine READ sparseEngine WRITE setSparseEngine NOTIFY changed)
    // The conversation sidebar (collapsible from the header).
    Q_PROPERTY(bool showSidebar READ showSidebar WRITE setShowSidebar NOTIFY changed)
    // Reopened at start (0: none). Its own signal: it changes at every new
    // chat's first send, and `changed` re-reads every setting's binding.
    Q_PROPERTY(qint64 lastConversationId READ lastConversationId WRITE setLastConversationId NOTIFY
                   lastConversationIdChanged)
    Q_PROPERTY(double repeatPenalty READ repeatPenalty WRITE setRepeatPenalty NOTIFY changed)
    // The "Local API server" switch: an OpenAI-compatible API on 127.0.0.1.
    Q_PROPERTY(bool apiServerEnabled READ apiServerEnabled WRITE setApiServerEnabled NOTIFY changed)
    // 0 picks a free port (tests).
    Q_PROPERTY(int apiServerPort READ apiServerPort WRITE setApiServerPort NOTIFY changed)
    // Empty: no key. Else clients send "Authorization: Bearer KEY".
    Q_PROPERTY(QString apiServerKey READ apiServerKey WRITE setApiServerKey NOTIFY changed)
    // The host's RAM read bandwidth (bytes/s), measured once for the fit
    // estimates; 0 until measured.
    Q_PROPERTY(double hostReadBandwidth READ hostReadBandwidth WRITE setHostReadBandwidth NOTIFY
                   changed)
    // The decode probe's rate (weight bytes/s of a real decode, see
    // powerinfer::measure_decode_rate), measured once; 0 until measured.
    Q_PROPERTY(double hostDecodeRate READ hostDecodeRate WRITE setHostDecodeRate NOTIFY changed)
    // The remote backend (an OpenAI-compatible server): its address and
    // model id. The API key is never here: it lives in the OS keychain.
    Q_PROPERTY(QString remoteUrl READ remoteUrl WRITE setRemoteUrl NOTIFY changed)
    Q_PROPERTY(QString remoteModel READ remoteModel WRITE setRemoteModel NOTIFY changed)
public:
    using QObject::QObject;

    double temperature() const { return temperature_; }
    double topP() const { return topP_; }
    int topK() const { return topK_; }
    int maxTokens() const { return maxTokens_; }
    int contextLength() const { return contextLength_; }
    QString themeMode() const { return themeMode_; }
    QString modelsFolder() const { return modelsFolder_; }
    QString lastModelPath() const { return lastModelPath_; }
    bool showMetrics() const { return showMetrics_; }
    int sparseEngine() const { return sparseEngine_; }
    void setSparseEngine(int v);
    bool apiServerEnabled() const { return apiServerEnabled_; }
    int apiServerPort() const { return apiServerPort_; }
    QString apiServerKey() const { return apiServerKey_; }
    bool showSidebar() const { return showSidebar_; }
    qint64 lastConversationId() const { return lastConversationId_; }
    double repeatPenalty() const { return repeatPenalty_; }
    double hostReadBandwidth() const { return hostReadBandwidth_; }
    double hostDecodeRate() const { return hostDecodeRate_; }
    QString remoteUrl() const { return remoteUrl_; }
    QString remoteModel() const { return remoteModel_; }
    void setHostReadBandwidth(double v);
    void setHostDecodeRate(double v);
    void setRemoteUrl(const QString& v);
    void setRemoteModel(const QString& v);

    void setTemperature(double v);
    void setTopP(double v);
    void setTopK(int v);
    void setMaxTokens(int v);
    void setContextLength(int v);
    void setThemeMode(const QString& v);
    void setModelsFolder(const QString& v);
    void setLastModelPath(const QString& v);
    void setShowMetrics(bool v);
    void setApiServerEnabled(bool v);
    void setApiServerPort(int v);
    void setApiServerKey(const QString& v);
    void setShowSidebar(bool v);
    void setLastConversationId(qint64 v);
    void setRepeatPenalty(double v);
    // KV-cache bytes of a context of n tokens for a model of this shape
    // (F16 K and V per layer, as the engine keeps them); 0 if unknown.
    static qint64 kvCacheBytes(int nLayers, int nEmbd, int nHead, int nHeadKv, int nCtx);

    // Applies stored values (unknown keys ignored, bad values keep defaults)
    // without emitting persist requests.
    void restore(const QHash<QString, QString>& stored);
    Q_INVOKABLE void resetSampling();

    // $POWERINFER_MODEL_DIR, else the fetch-model cache (~/.cache/powerinfer/models).
    static QString defaultModelsFolder();

signals:
    void changed();
    void lastConversationIdChanged();
    // A value the user changed, to be stored.
    void persistRequested(const QString& key, const QString& value);

private:
    template <typename T>
    void assign(T& field, T value, const char* key,
                void (AppSettings::*notify)() = &AppSettings::changed);

    double temperature_ = 0.7;
    double topP_ = 0.95;
    int topK_ = 40;
    int maxTokens_ = 512;
    int contextLength_ = 2048;
    QString themeMode_ = QStringLiteral("system");
    QString modelsFolder_ = defaultModelsFolder();
    QString lastModelPath_;
    bool showMetrics_ = false;
    int sparseEngine_ = 2;
    bool apiServerEnabled_ = false;
    int apiServerPort_ = 8080;
    QString apiServerKey_;
    bool showSidebar_ = true;
    qint64 lastConversationId_ = 0;
    double repeatPenalty_ = 1.0;
    double hostReadBandwidth_ = 0;
    double hostDecodeRate_ = 0;
    QString remoteUrl_, remoteModel_;
    bool restoring_ = false;
};

}  // namespace powerinfer::app
