// API keys of remote servers in the OS keychain (Secret Service on Linux,
// the Keychain on macOS, the Credential Manager on Windows) through
// QtKeychain; never in the settings. Where no keychain answers (a session
// without a secret service, e.g. CI), every call says so and nothing is
// stored anywhere.
#pragma once

#include <qcoro/qcorotask.h>

#include <QString>

namespace powerinfer::app {

struct KeychainResult {
    bool ok = false;
    QString key;    // read: the stored key ("" when none is stored)
    QString error;  // why the keychain could not be used
};

// The key is filed under the server's address.
QCoro::Task<KeychainResult> readApiKey(QString serverUrl);
QCoro::Task<KeychainResult> writeApiKey(QString serverUrl, QString key);
QCoro::Task<KeychainResult> deleteApiKey(QString serverUrl);
bool keychainBuiltIn();

}  // namespace powerinfer::app
