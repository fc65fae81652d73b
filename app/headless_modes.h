// The desktop executable's headless modes, run without a window or display:
// --download (the app's own downloader, progress on stderr) and --remote
// (one chat turn through an OpenAI-compatible server, the reply on stdout).
#pragma once

#include <qcoro/qcorotask.h>

#include <QString>

namespace powerinfer::app {

struct HeadlessDownload {
    QString url;
    QString sha256;
    QString dataDir;    // its stored models folder is used ...
    QString modelsDir;  // ... unless this is given
};
// Resolves to the process exit code: 0 once the file is verified and in the
// models folder, else 1 (the message is on stderr).
QCoro::Task<int> runHeadlessDownload(HeadlessDownload request);

struct HeadlessRemote {
    QString url;     // the server's base URL (…/v1 or its root)
    QString apiKey;  // empty: none
    QString model;   // empty: the first of /v1/models
    QString prompt;
    int maxTokens = 256;
    int stopAfterMs = -1;  // stop the reply after this long (tests of Stop)
};
// Streams the reply to stdout; resolves to 0 when it finished (or was
// stopped as asked), else 1 with the message on stderr.
QCoro::Task<int> runHeadlessRemote(HeadlessRemote request);

}  // namespace powerinfer::app
