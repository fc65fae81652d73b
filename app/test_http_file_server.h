// A small HTTP/1.1 file server on 127.0.0.1 for the download tests: serves
// one file with or without Range support, throttled, dropping or stalling the
// connection part-way, behind a redirect (with Hugging Face's X-Linked-Etag)
// or not at all (404). It records every request it gets. Test code only.
#pragma once

#include <QFile>
#include <QList>
#include <QPointer>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTimer>
#include <memory>

namespace powerinfer::test {

class HttpFileServer : public QObject {
public:
    struct Request {
        QByteArray method, path, range, ifRange;
    };
    struct Options {
        bool ranges = true;         // honour "Range: bytes=N-"
        qint64 bytesPerSecond = 0;  // 0: as fast as the socket takes it
        qint64 dropAfter = -1;      // close after this many body bytes (once)
        qint64 stallAfter = -1;     // stop sending after this many body bytes
        QByteArray linkedEtag;      // X-Linked-Etag on the redirect
        QByteArray etag = "\"v1\"";
        QByteArray contentDisposition;  // sent with the file when set
    };

    // Routes: /model.gguf (the file), /redirect/model.gguf (302 to it),
    // /loop.gguf (302 to itself), anything else 404.
    explicit HttpFileServer(QString file) : file_(std::move(file)) {
        server_.listen(QHostAddress::LocalHost, 0);
        connect(&server_, &QTcpServer::newConnection, this, [this] {
            while (QTcpSocket* s = server_.nextPendingConnection()) accept(s);
        });
    }
    Options options;
    QList<Request> requests;
    qint64 bodyBytesSent = 0;  // over all responses

    QString url(const QString& path) const {
        return QStringLiteral("http://127.0.0.1:%1%2").arg(server_.serverPort()).arg(path);
    }
    // Closes every open connection (as a server that died would).
    void dropAll() {
        for (const auto& c : connections_)
            if (c->socket) c->socket->abort();
    }

private:
    struct Connection {
        QPointer<QTcpSocket> socket;
        QByteArray buffer;
        std::unique_ptr<QFile> file;
        qint64 remaining = 0, sent = 0, budget = 0;
        QTimer tick;
        bool responding = false;
    };

    void accept(QTcpSocket* socket) {
        auto c = std::make_shared<Connection>();
        c->socket = socket;
        connections_.append(c);
        connect(socket, &QTcpSocket::readyRead, this, [this, c] { onRead(c); });
        connect(socket, &QTcpSocket::bytesWritten, this, [this, c] { pump(c); });
        connect(socket, &QTcpSocket::disconnected, this, [this, c] {
            c->tick.stop();
            connections_.removeOne(c);
            if (c->socket) c->socket->deleteLater();
        });
        c->tick.setInterval(20);
        std::weak_ptr<Connection> weak = c;  // the timer lives in c: no cycle
        connect(&c->tick, &QTimer::timeout, this, [this, weak] {
            const auto c = weak.lock();
            if (!c) return;
            c->budget += std::max<qint64>(1, options.bytesPerSecond / 50);
            pump(c);
        });
    }

    void onRead(const std::shared_ptr<Connection>& c) {
        c->buffer += c->socket->readAll();
        const int end = c->buffer.indexOf("\r\n\r\n");
        if (end < 0 || c->responding) return;
        c->responding = true;
        const QList<QByteArray> lines = c->buffer.left(end).split('\n');
        const QList<QByteArray> first = lines.value(0).trimmed().split(' ');
        Request r;
        r.method = first.value(0);
        r.path = first.value(1);
        for (const QByteArray& line : lines.mid(1)) {
            const int colon = line.indexOf(':');
            const QByteArray name = line.left(colon).trimmed().toLower();
            const QByteArray value = line.mid(colon + 1).trimmed();
            if (name == "range") r.range = value;
            if (name == "if-range") r.ifRange = value;
        }
        requests.append(r);
        respond(c, r);
    }

    void respond(const std::shared_ptr<Connection>& c, const Request& r) {
        if (r.path == "/redirect/model.gguf" || r.path == "/loop.gguf") {
            QByteArray head = "HTTP/1.1 302 Found\r\nLocation: " +
                              QByteArray(r.path == "/loop.gguf" ? "/loop.gguf" : "/model.gguf") +
                              "\r\nContent-Length: 0\r\nConnection: close\r\n";
            if (!options.linkedEtag.isEmpty())
                head += "X-Linked-Etag: \"" + options.linkedEtag + "\"\r\n";
            c->socket->write(head + "\r\n");
            c->socket->disconnectFromHost();
            return;
        }
        c->file = std::make_unique<QFile>(file_);
        if (r.path != "/model.gguf" || !c->file->open(QIODevice::ReadOnly)) {
            c->socket->write(
                "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: "
                "9\r\nConnection: close\r\n\r\nnot found");
            c->socket->disconnectFromHost();
            return;
        }
        const qint64 size = c->file->size();
        qint64 start = 0;
        if (options.ranges && r.range.startsWith("bytes=") && r.range.endsWith('-') &&
            (r.ifRange.isEmpty() || r.ifRange == options.etag))
            start = r.range.mid(6, r.range.size() - 7).toLongLong();
        QByteArray head;
        if (start > 0) {
            head = "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes " +
                   QByteArray::number(start) + "-" + QByteArray::number(size - 1) + "/" +
                   QByteArray::number(size) + "\r\n";
        } else {
            head = "HTTP/1.1 200 OK\r\n";
        }
        if (options.ranges) head += "Accept-Ranges: bytes\r\n";
        head += "ETag: " + options.etag + "\r\nContent-Type: application/octet-stream\r\n";
        if (!options.contentDisposition.isEmpty())
            head += "Content-Disposition: " + options.contentDisposition + "\r\n";
        head +=
            "Content-Length: " + QByteArray::number(size - start) + "\r\nConnection: close\r\n\r\n";
        c->socket->write(head);
        c->file->seek(start);
        c->remaining = size - start;
        if (options.bytesPerSecond > 0) c->tick.start();
        pump(c);
    }

    void pump(const std::shared_ptr<Connection>& c) {
        if (!c->socket || !c->file || c->remaining <= 0) return;
        while (c->remaining > 0 && c->socket->bytesToWrite() < (4 << 20)) {
            qint64 n = std::min<qint64>(c->remaining, 1 << 20);
            if (options.bytesPerSecond > 0) n = std::min(n, c->budget);
            if (options.stallAfter >= 0) n = std::min(n, options.stallAfter - c->sent);
            if (options.dropAfter >= 0 && !dropped_) n = std::min(n, options.dropAfter - c->sent);
            if (n <= 0) break;
            const QByteArray bytes = c->file->read(n);
            c->socket->write(bytes);
            c->remaining -= bytes.size();
            c->sent += bytes.size();
            bodyBytesSent += bytes.size();
            if (options.bytesPerSecond > 0) c->budget -= bytes.size();
        }
        if (options.dropAfter >= 0 && !dropped_ && c->sent >= options.dropAfter) {
            dropped_ = true;
            c->socket->flush();
            c->socket->abort();
            return;
        }
        if (c->remaining == 0) {
            c->tick.stop();
            c->socket->disconnectFromHost();
        }
    }

    QString file_;
    QTcpServer server_;
    QList<std::shared_ptr<Connection>> connections_;
    bool dropped_ = false;
};

}  // namespace powerinfer::test
