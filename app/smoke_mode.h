// The desktop app's options and its smoke mode (--prompt, --screenshot,
// --quit-after-reply, ...): one prompt, one reply, a screenshot, an exit
// code, with the GUI thread's worst stall measured (gui_max_stall_ms).
#pragma once

#include <qcoro/qcorotask.h>

#include <QSize>
#include <QString>
#include <QStringList>

#include "headless_modes.h"

class QQmlApplicationEngine;

namespace powerinfer::app {

class ChatController;

// What the command line asked for (desktop_app.cpp parses it).
struct DesktopOptions {
    QString dataDir;
    QString model;
    bool modelMustExist = true;  // DesktopServices::modelMustExist
    QString prompt;
    QString screenshot;
    QString theme;
    QString sparseEngine;  // "v2" / "v3": a one-off override
    QStringList tuning;  // key=value
    bool showMetrics = false;
    bool showTuning = false;
    bool showSettings = false;
    int screenshotAfterTokens = 0;
    QString calibrate;  // bundled, conversations or a text file
    int calibrationTokens = 0;
    bool compare = false;
    bool quitAfterReply = false;
    QString keysAfterReply;  // a key sequence typed into the window after the reply
    QSize windowSize;        // empty: the window's own default
    bool showCatalog = false;
    bool calibrateBackground = false;
    QString downloadEntry;  // a catalog entry id to download at start
    bool waitDownload = false;
    int screenshotDelayMs = 400;
    // Headless modes (no window): --download, --remote.
    HeadlessDownload download;
    HeadlessRemote remote;
};

// Prints "powerinfer-desktop: MESSAGE" on stderr.
void printFailure(const QString& message);

// Runs the smoke mode on the loaded window; exits the application with its
// code (0: the reply came and everything asked for was done).
QCoro::Task<> runSmoke(ChatController* controller, QQmlApplicationEngine* qml,
                       DesktopOptions options);

}  // namespace powerinfer::app
