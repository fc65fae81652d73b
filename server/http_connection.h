// One client connection. Qt HTTP Server 6.4 parses requests but has no limits
// (it buffers any body in full), no timeouts, and keeps parsing pipelined
// requests while an earlier response is still streaming. HttpConnection adds
// what a server facing untrusted clients needs: it sees every byte before
// Qt's parser (its readyRead slot is connected first), enforces header/body
// size limits (413/431) and request/idle timeouts (408), answers requests of
// one connection strictly in order, writes responses (plain or chunked for
// server-sent events), and reports the client going away so its generation is
// cancelled.
#pragma once

#include <QByteArray>
#include <QElapsedTimer>
#include <QHttpServerRequest>
#include <QList>
#include <QObject>
#include <QPair>
#include <QPointer>
#include <QTcpSocket>
#include <QTimer>
#include <deque>
#include <functional>

namespace powerinfer::server {

class CompletionJob;

struct ServerLimits {
    qint64 maxBodyBytes = 1 << 20;     // 413 beyond this
    qint64 maxHeaderBytes = 64 << 10;  // 431 beyond this
    int requestTimeoutMs = 30'000;     // a started request must be complete by then (408)
    int idleTimeoutMs = 120'000;       // keep-alive connection with nothing to do
    qint64 maxUnsentBytes = 8 << 20;   // a client this far behind is not reading: drop it
    int maxConnections = 256;
};

// What the API layer needs of a request, copied out of Qt's request object
// (which Qt reuses for the connection's next request).
struct HttpRequest {
    QHttpServerRequest::Method method = QHttpServerRequest::Method::Unknown;
    QString path;
    QByteArray body;
    QByteArray authorization;
    bool closeAfter = false;  // "Connection: close"
};

using HeaderList = QList<QPair<QByteArray, QByteArray>>;

// "GET", "POST", ... for messages and the request log.
QString methodName(QHttpServerRequest::Method method);

class HttpConnection : public QObject {
    Q_OBJECT
public:
    using Handler = std::function<void(HttpConnection*, const HttpRequest&)>;

    // Becomes a child of the socket. Must be created before Qt's HTTP server
    // connects to the socket, so that its readyRead slot runs first.
    HttpConnection(QTcpSocket* socket, const ServerLimits& limits, Handler handler);
    ~HttpConnection() override;

    static HttpConnection* of(QTcpSocket* socket);

    void enqueue(HttpRequest request);

    // A complete response; ends the current exchange.
    void respond(int status, const QByteArray& contentType, const QByteArray& body,
                 const HeaderList& extraHeaders = {});
    // A streamed response (chunked transfer encoding); endStream() ends the exchange.
    void beginStream(const QByteArray& contentType);
    bool writeChunk(const QByteArray& data);  // false once the client is gone
    void endStream();

    bool isGone() const { return gone_; }
    // Extra words for the exchange's log line (e.g. token counts).
    void setExchangeNote(const QString& note) { note_ = note; }
    // Cancelled if the client goes away before the exchange ends.
    void setActiveJob(CompletionJob* job);

signals:
    void clientGone();
    // One exchange ended: what was asked, the status sent (0: none, e.g. the
    // client left first), how long it took, and the note.
    void exchangeFinished(const QString& method, const QString& path, int status, qint64 ms,
                          const QString& note);

private:
    void onReadyRead();
    void afterQtParsed();
    void onDisconnected();
    void onIdleTimeout();
    void onRequestTimeout();
    void startNext();
    void finishExchange();
    void reject(int status, const QByteArray& message);
    void drain();
    void writeHead(int status, const QByteArray& contentType, qint64 contentLength,
                   const HeaderList& extraHeaders);
    bool write(const QByteArray& data);
    void closeGracefully();
    void resetRequestAccounting();

    QPointer<QTcpSocket> socket_;
    const ServerLimits limits_;
    Handler handler_;
    QMetaObject::Connection readyReadConnection_;

    std::deque<HttpRequest> queue_;
    QString method_, path_, note_;
    int status_ = 0;
    QElapsedTimer exchangeClock_;
    bool busy_ = false;        // an exchange is in progress
    bool closeAfter_ = false;  // current exchange asked for Connection: close
    bool streaming_ = false;
    bool gone_ = false;
    bool rejecting_ = false;
    QPointer<CompletionJob> activeJob_;

    // Accounting for the request being received (reset at each dispatch).
    qint64 requestBytes_ = 0;
    QByteArray headerBytes_;  // raw bytes until the blank line, for Content-Length
    bool headerComplete_ = false;
    bool requestLineChecked_ = false;
    qint64 drainRemaining_ = -1;  // bytes still to discard after a rejection (-1: unknown)

    QTimer idleTimer_;
    QTimer requestTimer_;
    QTimer drainTimer_;
};

}  // namespace powerinfer::server
