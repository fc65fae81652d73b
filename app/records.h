// Plain value types shared by the store, the models and the controller.
#pragma once

#include <QDateTime>
#include <QList>
#include <QMetaType>
#include <QString>

namespace powerinfer::app {

struct ConversationRecord {
    qint64 id = 0;
    QString title;
    QString systemPrompt;
    QDateTime createdAt;
    QDateTime updatedAt;
    QString snippet;  // search hit context; empty outside a search
};

// Message states: a row is "partial" while a reply streams (checkpointed),
// then "complete", "stopped" (user pressed Stop), "length" (cut at max
// tokens) or "error"; a row left
// "partial" by a crash becomes "interrupted" when the store is next opened.
struct MessageRecord {
    qint64 id = 0;  // database rowid; 0 until first saved
    QString uid;    // stable identity chosen by the app, used for upserts
    qint64 conversationId = 0;
    QString role;  // "user", "assistant", "system"
    QString content;
    QDateTime createdAt;
    QString model;
    int promptTokens = 0;
    int completionTokens = 0;
    double tokensPerSecond = 0;
    double sparsity = -1;  // -1: unknown (dense run or no metrics)
    double hitRate = -1;
    QString state = QStringLiteral("complete");
    // Shown under the reply: the error of a failed one, or that the oldest
    // turns were left out to fit the context. Never sent to the model.
    QString notice;
};

}  // namespace powerinfer::app

Q_DECLARE_METATYPE(powerinfer::app::ConversationRecord)
Q_DECLARE_METATYPE(powerinfer::app::MessageRecord)
