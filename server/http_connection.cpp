#include "http_connection.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <algorithm>

#include "completion_backend.h"
#include "openai_protocol.h"

namespace powerinfer::server {

namespace {

QByteArray reasonPhrase(int status) {
    switch (status) {
        case 200:
            return "OK";
        case 400:
            return "Bad Request";
        case 401:
            return "Unauthorized";
        case 404:
            return "Not Found";
        case 405:
            return "Method Not Allowed";
        case 408:
            return "Request Timeout";
        case 413:
            return "Payload Too Large";
        case 429:
            return "Too Many Requests";
        case 431:
            return "Request Header Fields Too Large";
        case 500:
            return "Internal Server Error";
        case 503:
            return "Service Unavailable";
        default:
            return "Status";
    }
}

// The value of a header in raw request-head bytes, or empty.
QByteArray headerValue(const QByteArray& head, const QByteArray& lowerName) {
    for (const QByteArray& line : head.split('\n')) {
        const qsizetype colon = line.indexOf(':');
        if (colon <= 0) continue;
        if (line.left(colon).trimmed().toLower() == lowerName) return line.mid(colon + 1).trimmed();
    }
    return {};
}

QByteArray errorBody(int status, const QByteArray& message) {
    ApiError e;
    e.status = status;
    e.message = QString::fromUtf8(message);
    e.code = status == 413   ? QStringLiteral("request_too_large")
             : status == 408 ? QStringLiteral("request_timeout")
                             : QStringLiteral("bad_request");
    return QJsonDocument(e.toJson()).toJson(QJsonDocument::Compact);
}

// "METHOD /target HTTP/1.x", the start of every request we can answer.
bool isHttpRequestLine(QByteArray line) {
    if (line.endsWith('\r')) line.chop(1);
    const QList<QByteArray> parts = line.split(' ');
    if (parts.size() != 3) return false;
    static const QList<QByteArray> methods = {"GET",     "POST",  "PUT",   "DELETE", "HEAD",
                                              "OPTIONS", "PATCH", "TRACE", "CONNECT"};
    return methods.contains(parts[0]) && !parts[1].isEmpty() &&
           (parts[2] == "HTTP/1.1" || parts[2] == "HTTP/1.0");
}

}  // namespace

HttpConnection::HttpConnection(QTcpSocket* socket, const ServerLimits& limits, Handler handler)
    : QObject(socket), socket_(socket), limits_(limits), handler_(std::move(handler)) {
    readyReadConnection_ =
        connect(socket, &QTcpSocket::readyRead, this, &HttpConnection::onReadyRead);
    connect(socket, &QTcpSocket::disconnected, this, &HttpConnection::onDisconnected);
    idleTimer_.setSingleShot(true);
    idleTimer_.setInterval(limits_.idleTimeoutMs);
    connect(&idleTimer_, &QTimer::timeout, this, &HttpConnection::onIdleTimeout);
    requestTimer_.setSingleShot(true);
    requestTimer_.setInterval(limits_.requestTimeoutMs);
    connect(&requestTimer_, &QTimer::timeout, this, &HttpConnection::onRequestTimeout);
    drainTimer_.setSingleShot(true);
    connect(&drainTimer_, &QTimer::timeout, this, &HttpConnection::closeGracefully);
    idleTimer_.start();
}

HttpConnection::~HttpConnection() {
    if (activeJob_) activeJob_->cancel();
}

HttpConnection* HttpConnection::of(QTcpSocket* socket) {
    return socket->findChild<HttpConnection*>(QString(), Qt::FindDirectChildrenOnly);
}

void HttpConnection::onReadyRead() {
    if (!socket_ || gone_) return;
    if (rejecting_) {
        drain();
        return;
    }
    // Inside Qt's read transaction everything before this chunk has been
    // consumed already, so bytesAvailable() is exactly the new data.
    const qint64 fresh = socket_->bytesAvailable();
    if (fresh <= 0) return;
    if (requestBytes_ == 0) requestTimer_.start();
    requestBytes_ += fresh;
    if (!busy_) idleTimer_.start();

    if (!headerComplete_) {
        headerBytes_ += socket_->peek(fresh);
        // Qt 6.4 closes the connection without a word on input it cannot
        // parse; a request line that is not HTTP gets a 400 from us first.
        if (!requestLineChecked_) {
            qsizetype start = 0;  // empty lines before a request are allowed
            while (start < headerBytes_.size() &&
                   (headerBytes_[start] == '\r' || headerBytes_[start] == '\n'))
                ++start;
            const qsizetype eol = headerBytes_.indexOf('\n', start);
            if (eol >= 0 || headerBytes_.size() > 8192) {
                requestLineChecked_ = true;
                if (!isHttpRequestLine(headerBytes_.mid(start, eol < 0 ? -1 : eol - start)))
                    return reject(400, "The request is not valid HTTP/1.1.");
            }
        }
        const qsizetype end = headerBytes_.indexOf("\r\n\r\n");
        if (end < 0) {
            if (headerBytes_.size() > limits_.maxHeaderBytes)
                return reject(431, "The request headers are too large.");
        } else {
            headerComplete_ = true;
            const QByteArray head = headerBytes_.left(end);
            bool ok = false;
            const qint64 declared = headerValue(head, "content-length").toLongLong(&ok);
            if (ok && declared > limits_.maxBodyBytes) {
                // What is still to come: the bytes received so far are
                // discarded by reject() without being counted again.
                drainRemaining_ = std::max<qint64>(0, declared - (headerBytes_.size() - (end + 4)));
                return reject(413, QByteArray("The request body is ") +
                                       QByteArray::number(declared) + " bytes; the limit is " +
                                       QByteArray::number(limits_.maxBodyBytes) + " bytes.");
            }
            // Qt's parser does not answer "Expect: 100-continue"; clients
            // such as curl would otherwise wait a second before the body.
            if (headerValue(head, "expect").toLower() == "100-continue")
                socket_->write("HTTP/1.1 100 Continue\r\n\r\n");
        }
    }
    if (requestBytes_ > limits_.maxHeaderBytes + limits_.maxBodyBytes)
        return reject(413, QByteArray("The request body exceeds the limit of ") +
                               QByteArray::number(limits_.maxBodyBytes) + " bytes.");
    // Qt's parser runs next (connected after us); see whether it gave up.
    QTimer::singleShot(0, this, &HttpConnection::afterQtParsed);
}

void HttpConnection::afterQtParsed() {
    // On malformed input Qt 6.4 disconnects every signal of the socket and
    // leaves it open: our connection handle tells us that happened.
    if (socket_ && !gone_ && !rejecting_ && !readyReadConnection_)
        reject(400, "The request is not valid HTTP/1.1.");
}

void HttpConnection::enqueue(HttpRequest request) {
    requestTimer_.stop();
    resetRequestAccounting();
    if (gone_ || rejecting_) return;
    queue_.push_back(std::move(request));
    if (!busy_) startNext();
}

void HttpConnection::resetRequestAccounting() {
    requestBytes_ = 0;
    headerBytes_.clear();
    headerComplete_ = false;
    requestLineChecked_ = false;
}

QString methodName(QHttpServerRequest::Method method) {
    using M = QHttpServerRequest::Method;
    switch (method) {
        case M::Get:
            return QStringLiteral("GET");
        case M::Put:
            return QStringLiteral("PUT");
        case M::Delete:
            return QStringLiteral("DELETE");
        case M::Post:
            return QStringLiteral("POST");
        case M::Head:
            return QStringLiteral("HEAD");
        case M::Options:
            return QStringLiteral("OPTIONS");
        case M::Patch:
            return QStringLiteral("PATCH");
        case M::Connect:
            return QStringLiteral("CONNECT");
        case M::Trace:
            return QStringLiteral("TRACE");
        default:
            return QStringLiteral("this method");
    }
}

void HttpConnection::startNext() {
    if (busy_ || gone_ || rejecting_ || queue_.empty()) return;
    HttpRequest request = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    streaming_ = false;
    closeAfter_ = request.closeAfter;
    idleTimer_.stop();
    method_ = methodName(request.method);
    path_ = request.path;
    note_.clear();
    status_ = 0;
    exchangeClock_.start();
    handler_(this, request);
}

void HttpConnection::finishExchange() {
    if (busy_) emit exchangeFinished(method_, path_, status_, exchangeClock_.elapsed(), note_);
    busy_ = false;
    streaming_ = false;
    activeJob_ = nullptr;
    if (gone_ || rejecting_) return;
    if (closeAfter_) return closeGracefully();
    idleTimer_.start();
    // Not recursively: a synchronous handler would otherwise nest per request.
    if (!queue_.empty()) QTimer::singleShot(0, this, &HttpConnection::startNext);
}

void HttpConnection::setActiveJob(CompletionJob* job) { activeJob_ = job; }

void HttpConnection::respond(int status, const QByteArray& contentType, const QByteArray& body,
                             const HeaderList& extraHeaders) {
    if (!busy_ || streaming_) return;
    writeHead(status, contentType, body.size(), extraHeaders);
    write(body);
    finishExchange();
}

void HttpConnection::beginStream(const QByteArray& contentType) {
    if (!busy_ || streaming_) return;
    streaming_ = true;
    writeHead(200, contentType, -1, {{"Cache-Control", "no-cache"}, {"X-Accel-Buffering", "no"}});
}

bool HttpConnection::writeChunk(const QByteArray& data) {
    if (!streaming_ || gone_) return false;
    if (data.isEmpty()) return true;  // an empty chunk would end the body
    return write(QByteArray::number(data.size(), 16) + "\r\n" + data + "\r\n");
}

void HttpConnection::endStream() {
    if (!streaming_) return;
    write("0\r\n\r\n");
    finishExchange();
}

void HttpConnection::writeHead(int status, const QByteArray& contentType, qint64 contentLength,
                               const HeaderList& extraHeaders) {
    status_ = status;
    QByteArray head =
        "HTTP/1.1 " + QByteArray::number(status) + ' ' + reasonPhrase(status) + "\r\n";
    head += "Server: powerinfer-server\r\n";
    head += "Content-Type: " + contentType + "\r\n";
    if (contentLength >= 0)
        head += "Content-Length: " + QByteArray::number(contentLength) + "\r\n";
    else
        head += "Transfer-Encoding: chunked\r\n";
    head += closeAfter_ ? "Connection: close\r\n" : "Connection: keep-alive\r\n";
    for (const auto& [name, value] : extraHeaders) head += name + ": " + value + "\r\n";
    head += "\r\n";
    write(head);
}

bool HttpConnection::write(const QByteArray& data) {
    if (gone_ || !socket_ || socket_->state() != QAbstractSocket::ConnectedState) return false;
    socket_->write(data);
    if (socket_->bytesToWrite() > limits_.maxUnsentBytes) {
        // The client stopped reading (or vanished without a FIN): free the
        // engine for others instead of buffering its reply without bound.
        socket_->abort();
        onDisconnected();
        return false;
    }
    return true;
}

void HttpConnection::reject(int status, const QByteArray& message) {
    if (rejecting_ || !socket_ || gone_) return;
    rejecting_ = true;
    idleTimer_.stop();
    requestTimer_.stop();
    queue_.clear();
    // Stop Qt's parser for good; from here on we only discard input.
    QObject::disconnect(socket_, &QTcpSocket::readyRead, nullptr, nullptr);
    readyReadConnection_ = connect(socket_, &QTcpSocket::readyRead, this, &HttpConnection::drain);
    connect(socket_, &QTcpSocket::disconnected, this, &HttpConnection::onDisconnected,
            Qt::UniqueConnection);
    if (socket_->isTransactionStarted()) socket_->commitTransaction();
    if (busy_) {
        // A response is already on the wire: no room for another one.
        if (activeJob_) activeJob_->cancel();
        socket_->abort();
        onDisconnected();
        return;
    }
    busy_ = true;
    closeAfter_ = true;
    const QByteArray body = errorBody(status, message);
    writeHead(status, "application/json", body.size(), {});
    write(body);
    // Read what the client is still sending before closing: closing with
    // unread input makes the kernel reset the connection, and the client
    // could lose the response. Everything buffered now has been seen by
    // onReadyRead already (and is not part of drainRemaining_).
    socket_->readAll();
    drainTimer_.start(2000);
    if (drainRemaining_ == 0) closeGracefully();
}

void HttpConnection::drain() {
    if (!socket_) return;
    const QByteArray discarded = socket_->readAll();
    if (drainRemaining_ >= 0) {
        drainRemaining_ -= discarded.size();
        if (drainRemaining_ <= 0) closeGracefully();
    }
}

void HttpConnection::closeGracefully() {
    drainTimer_.stop();
    idleTimer_.stop();
    requestTimer_.stop();
    if (socket_ && socket_->state() != QAbstractSocket::UnconnectedState)
        socket_->disconnectFromHost();  // after pending writes are flushed
    else
        onDisconnected();
}

void HttpConnection::onIdleTimeout() {
    if (busy_ || gone_) return;
    if (requestBytes_ > 0)
        reject(408, "The request was not received completely in time.");
    else
        closeGracefully();
}

void HttpConnection::onRequestTimeout() {
    if (gone_ || rejecting_) return;
    if (busy_) return;  // a pipelined request waits for the current response
    reject(408, "The request was not received completely in time.");
}

void HttpConnection::onDisconnected() {
    if (gone_) return;
    gone_ = true;
    idleTimer_.stop();
    requestTimer_.stop();
    drainTimer_.stop();
    queue_.clear();
    if (activeJob_) activeJob_->cancel();
    emit clientGone();
    // Qt deletes the socket on disconnect too, unless its parser already cut
    // all signals (malformed input); deleting twice later is harmless.
    if (socket_) socket_->deleteLater();
}

}  // namespace powerinfer::server
