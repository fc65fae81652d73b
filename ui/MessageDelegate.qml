import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import PowerInfer.App

// One message: the user's in a bubble on the right, the assistant's as
// Markdown and code blocks beside an avatar, with actions and statistics.
Item {
    id: message

    required property ChatController controller
    required property int index
    required property string uid
    required property string role
    // No `content` role: it grows with a streaming reply, and every batch
    // would copy the whole text into the QML engine (garbage collections
    // mid-stream). The text is read from the model where it is needed.
    // A SegmentListModel: while a reply streams only its last row changes.
    required property QtObject segmentModel
    required property string state
    required property double tokensPerSecond
    required property int completionTokens
    required property string notice
    readonly property bool isLast: ListView.view !== null && index === ListView.view.count - 1

    readonly property bool isUser: role === "user"
    // Only the live reply streams; a row saved "partial" by a crash comes back
    // "interrupted" (the store's recovery), with Continue and Regenerate.
    readonly property bool streaming: state === "partial" && controller.generating
    readonly property bool cutOff: state === "interrupted" || state === "stopped"
                                   || (state === "partial" && !controller.generating)

    signal editRequested(string uid, string text)

    implicitHeight: column.implicitHeight + 20
    Accessible.role: Accessible.ListItem
    // Read again when the reply stops streaming (not per batch).
    Accessible.name: (isUser ? qsTr("You") : qsTr("Assistant")) + ": "
                     + (streaming ? "" : controller.messages.contentAt(index))

    HoverHandler {
        id: hover
    }

    ColumnLayout {
        id: column
        width: Math.min(parent.width - 64, Theme.contentMaxWidth)
        anchors.horizontalCenter: parent.horizontalCenter
        anchors.top: parent.top
        anchors.topMargin: 10
        spacing: 6

        // The user's message. Each row creates only its own role's part.
        Loader {
            active: message.isUser
            visible: active
            Layout.alignment: Qt.AlignRight
            sourceComponent: Rectangle {
                id: bubble
                readonly property real maxTextWidth: column.width * 0.78 - 32
                implicitWidth: Math.min(measure.implicitWidth, maxTextWidth) + 32
                implicitHeight: userText.implicitHeight + 22
                radius: Theme.radiusLarge
                color: Theme.userBubble
                // The unwrapped width of the text decides how wide the bubble gets.
                Text {
                    id: measure
                    visible: false
                    text: userText.text
                    font: userText.font
                }
                TextEdit {
                    id: userText
                    x: 16
                    y: 11
                    width: bubble.width - 32
                    // A user's message does not stream: read once per row.
                    text: message.controller.messages.contentAt(message.index)
                    textFormat: TextEdit.PlainText
                    readOnly: true
                    selectByMouse: true
                    wrapMode: TextEdit.Wrap
                    color: Theme.userBubbleText
                    selectionColor: Theme.accent
                    font.family: Theme.fontFamily
                    font.pixelSize: Theme.fontSize + 1
                    Accessible.ignored: true
                }
            }
        }

        // The assistant's reply.
        Loader {
            active: !message.isUser
            visible: active
            Layout.fillWidth: true
            sourceComponent: RowLayout {
                spacing: 14

                Rectangle {
                    Layout.alignment: Qt.AlignTop
                    Layout.topMargin: 2
                    width: 30
                    height: 30
                    radius: 15
                    color: Theme.accentSoft
                    border.color: Theme.border
                    Image {
                        anchors.centerIn: parent
                        source: "icons/logo.svg"
                        sourceSize: Qt.size(18, 18)
                        // Decoded off the GUI thread: a new reply's row is
                        // created while the previous frame is due.
                        asynchronous: true
                        Accessible.ignored: true
                    }
                }

                ColumnLayout {
                    id: replyColumn
                    Layout.fillWidth: true
                    spacing: 10

                    // A positioner, not the layout, stacks the segments: the
                    // layout gave each Loader an explicit height, which the Loader
                    // forces on its item, so a reply restored whole (after a
                    // restart, with the "Interrupted" label below it) kept stale
                    // heights and its paragraphs sat hidden in gaps.
                    Column {
                        objectName: "segmentColumn"
                        // Sized by its segments, which take the reply column's
                        // width (not the Column's own: a positioner skips
                        // zero-width children, and that loop never resolved).
                        Layout.fillWidth: true
                        spacing: 10
                        Repeater {
                            // Rows are added at the end and only the last one's text
                            // grows: existing delegates stay, nothing is re-read.
                            id: segmentRepeater
                            model: message.segmentModel
                            delegate: MessageSegment {
                                width: replyColumn.width
                                live: message.streaming
                                controller: message.controller
                            }
                        }
                    }

                    Loader {
                        active: message.streaming && segmentRepeater.count === 0
                        visible: active
                        sourceComponent: TypingIndicator {}
                    }

                    Label {
                        objectName: "replyStateLabel"
                        visible: message.cutOff || message.state === "error"
                        text: message.state === "stopped" ? qsTr("Stopped")
                              : message.state === "error" ? qsTr("Reply failed")
                              : qsTr("Interrupted")
                        color: message.state === "error" ? Theme.danger : Theme.textFaint
                        font.pixelSize: Theme.fontSizeSmall
                        font.italic: true
                    }

                    // Why it failed, or that the oldest turns were left out.
                    Label {
                        objectName: "replyNotice"
                        visible: message.notice !== ""
                        Layout.fillWidth: true
                        text: message.notice
                        wrapMode: Text.Wrap
                        color: message.state === "error" ? Theme.danger : Theme.textMuted
                        font.pixelSize: Theme.fontSizeSmall
                    }
                }
            }
        }

        // Actions and statistics, shown on hover (always for the last reply
        // once it is done). Created the first time they are wanted, not with
        // the row: a new row (the send's, or a streaming reply's) shows
        // without them, and their place is kept so that nothing moves when
        // they come.
        Loader {
            id: actions
            objectName: "messageActions"
            readonly property bool shown: (hover.hovered || (message.isLast && !message.isUser))
                                          && !message.streaming
            property bool wanted: false
            onShownChanged: if (shown) wanted = true
            active: shown || wanted
            Layout.alignment: message.isUser ? Qt.AlignRight : Qt.AlignLeft
            Layout.leftMargin: message.isUser ? 0 : 40
            Layout.preferredHeight: 28
            opacity: shown ? 1 : 0
            Behavior on opacity {
                NumberAnimation {
                    duration: 120
                }
            }
            sourceComponent: RowLayout {
                spacing: 2

                IconButton {
                    objectName: "copyMessageButton"
                    iconName: "copy"
                    tip: qsTr("Copy message")
                    implicitWidth: 28
                    implicitHeight: 28
                    padding: 6
                    onClicked: message.controller.copyText(
                                   message.controller.messages.contentAt(message.index))
                }
                IconButton {
                    objectName: "editMessageButton"
                    visible: message.isUser
                    iconName: "edit"
                    tip: qsTr("Edit and resend")
                    implicitWidth: 28
                    implicitHeight: 28
                    padding: 6
                    enabled: !message.controller.generating
                    onClicked: message.editRequested(
                                   message.uid, message.controller.messages.contentAt(message.index))
                }
                IconButton {
                    objectName: "continueButton"
                    visible: !message.isUser && message.isLast && message.cutOff
                    iconName: "send"
                    tip: qsTr("Continue this reply")
                    implicitWidth: 28
                    implicitHeight: 28
                    padding: 6
                    enabled: !message.controller.generating
                    onClicked: message.controller.continueLast()
                }
                IconButton {
                    objectName: "regenerateButton"
                    visible: !message.isUser && message.isLast
                    iconName: "refresh"
                    tip: qsTr("Regenerate reply")
                    implicitWidth: 28
                    implicitHeight: 28
                    padding: 6
                    enabled: !message.controller.generating
                    onClicked: message.controller.regenerate()
                }
                Label {
                    visible: !message.isUser && message.completionTokens > 0
                    Layout.leftMargin: 6
                    text: qsTr("%1 tokens · %2 tok/s").arg(message.completionTokens)
                                                       .arg(message.tokensPerSecond.toFixed(1))
                    color: Theme.textFaint
                    font.pixelSize: Theme.fontSizeSmall
                }
            }
        }
    }
}
