import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import PowerInfer.App

// One row of the chat (a ChatRowsModel row): a user's message, one segment
// of a reply (a paragraph or a code block; the first one beside the avatar),
// or a reply's footer (its state, why it failed, its actions). The view
// creates only the rows near what is shown, so a long reply costs a
// screenful of items however long it is.
Item {
    id: row

    required property ChatController controller
    required property int index
    required property string rowKind
    required property int messageIndex
    required property string uid
    required property string role
    required property string state
    required property double tokensPerSecond
    required property int completionTokens
    required property string notice
    required property int segmentIndex
    required property string kind
    required property string body
    required property string language
    required property bool hasSegments
    // The message under the pointer (the view's): its actions show.
    property int hoveredMessage: -1

    readonly property bool isUser: rowKind === "user"
    readonly property bool isLast: messageIndex === controller.messages.count - 1
    // Only the live reply streams; a row saved "partial" by a crash comes back
    // "interrupted" (the store's recovery), with Continue and Regenerate.
    readonly property bool streaming: state === "partial" && controller.generating
    // "length": cut at the max-tokens limit (its notice says so).
    readonly property bool cutOff: state === "interrupted" || state === "stopped" || state === "length"
                                   || (state === "partial" && !controller.generating)
    readonly property string stateText: state === "stopped" ? qsTr("Stopped")
                                        : state === "error" ? qsTr("Reply failed")
                                        : qsTr("Interrupted")
    // Every row of a message shares one column; a reply's text starts right
    // of the avatar (30 px and 14 px of space).
    readonly property real columnWidth: Math.min(width - 64, Theme.contentMaxWidth)
    readonly property real columnX: Math.round((width - columnWidth) / 2)
    readonly property real replyX: columnX + 44
    readonly property real replyWidth: columnWidth - 44

    signal editRequested(string uid, string text)

    implicitHeight: part.item ? part.item.implicitHeight : 0
    Accessible.role: Accessible.ListItem
    // Read again when the reply stops streaming (not per batch).
    Accessible.name: rowKind === "user"
                     ? qsTr("You") + ": " + controller.messages.contentAt(messageIndex)
                     : rowKind === "footer" ? [qsTr("End of the reply"),
                                               cutOff || state === "error" ? stateText : "",
                                               notice].filter(t => t !== "").join(". ")
                     : segmentIndex === 0 ? qsTr("Assistant") + ": " + (streaming ? "" : body)
                     : (streaming ? "" : body)

    Loader {
        id: part
        width: row.width
        sourceComponent: row.rowKind === "user" ? userPart
                         : row.rowKind === "segment" ? segmentPart : footerPart
    }

    component Avatar: Rectangle {
        width: 30
        height: 30
        radius: 15
        color: Theme.accentSoft
        border.color: Theme.border
        Image {
            anchors.centerIn: parent
            source: "icons/logo.svg"
            sourceSize: Qt.size(18, 18)
            // Decoded off the GUI thread: a new reply's row is created while
            // the previous frame is due.
            asynchronous: true
            Accessible.ignored: true
        }
    }

    // The copy/edit/continue/regenerate buttons and the statistics, shown on
    // hover (always for the last reply once it is done). Created the first
    // time they are wanted, not with the row: a new row shows without them,
    // and their place is kept so that nothing moves when they come.
    component Actions: Loader {
        id: actions
        // The row these are for (an inline component sees no ids outside it).
        required property var owner
        objectName: "messageActions"
        readonly property bool shown: (owner.hoveredMessage === owner.messageIndex
                                       || (owner.isLast && !owner.isUser)) && !owner.streaming
        property bool wanted: false
        onShownChanged: if (shown) wanted = true
        Component.onCompleted: if (shown) wanted = true
        active: shown || wanted
        height: 28
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
                onClicked: actions.owner.controller.copyText(
                               actions.owner.controller.messages.contentAt(actions.owner.messageIndex))
            }
            IconButton {
                objectName: "editMessageButton"
                visible: actions.owner.isUser
                iconName: "edit"
                tip: qsTr("Edit and resend")
                implicitWidth: 28
                implicitHeight: 28
                padding: 6
                enabled: !actions.owner.controller.generating
                onClicked: actions.owner.editRequested(actions.owner.uid,
                                             actions.owner.controller.messages.contentAt(actions.owner.messageIndex))
            }
            IconButton {
                objectName: "continueButton"
                visible: !actions.owner.isUser && actions.owner.isLast && actions.owner.cutOff
                iconName: "send"
                tip: qsTr("Continue this reply")
                implicitWidth: 28
                implicitHeight: 28
                padding: 6
                enabled: !actions.owner.controller.generating
                onClicked: actions.owner.controller.continueLast()
            }
            IconButton {
                objectName: "regenerateButton"
                visible: !actions.owner.isUser && actions.owner.isLast
                iconName: "refresh"
                tip: qsTr("Regenerate reply")
                implicitWidth: 28
                implicitHeight: 28
                padding: 6
                enabled: !actions.owner.controller.generating
                onClicked: actions.owner.controller.regenerate()
            }
            Label {
                visible: !actions.owner.isUser && actions.owner.completionTokens > 0
                Layout.leftMargin: 6
                text: qsTr("%1 tokens · %2 tok/s").arg(actions.owner.completionTokens)
                                                   .arg(actions.owner.tokensPerSecond.toFixed(1))
                color: Theme.textFaint
                font.pixelSize: Theme.fontSizeSmall
            }
        }
    }

    // The user's message, in a bubble on the right; its actions below it.
    Component {
        id: userPart
        Item {
            implicitHeight: 10 + bubble.height + 6 + 28 + 10
            Rectangle {
                id: bubble
                readonly property real maxTextWidth: row.columnWidth * 0.78 - 32
                x: row.columnX + row.columnWidth - width
                y: 10
                width: Math.min(measure.implicitWidth, maxTextWidth) + 32
                height: userText.implicitHeight + 22
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
                    text: row.controller.messages.contentAt(row.messageIndex)
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
            Actions {
                owner: row
                x: row.columnX + row.columnWidth - width
                y: bubble.y + bubble.height + 6
            }
        }
    }

    // One segment of a reply; the first one has the avatar beside it.
    Component {
        id: segmentPart
        Item {
            implicitHeight: 10 + segment.height
            Loader {
                active: row.segmentIndex === 0
                x: row.columnX
                y: 12
                sourceComponent: Avatar {}
            }
            MessageSegment {
                id: segment
                x: row.replyX
                y: 10
                width: row.replyWidth
                live: row.streaming
                controller: row.controller
                kind: row.kind
                body: row.body
                language: row.language
            }
        }
    }

    // The end of a reply: the typing indicator while the first token is
    // awaited, "Stopped"/"Interrupted"/"Reply failed", the notice, actions.
    Component {
        id: footerPart
        Item {
            readonly property real topPad: footerColumn.implicitHeight > 0 || !row.hasSegments ? 10 : 0
            readonly property real bodyHeight: row.hasSegments ? footerColumn.implicitHeight
                                                         : Math.max(footerColumn.implicitHeight, 32)
            implicitHeight: topPad + bodyHeight + 6 + 28 + 10
            Loader {
                active: !row.hasSegments
                x: row.columnX
                y: 12
                sourceComponent: Avatar {}
            }
            Column {
                id: footerColumn
                x: row.replyX
                y: parent.topPad
                width: row.replyWidth
                spacing: 10
                Loader {
                    active: row.streaming && !row.hasSegments
                    visible: active
                    sourceComponent: TypingIndicator {}
                }
                Label {
                    objectName: "replyStateLabel"
                    visible: (row.cutOff && row.state !== "length") || row.state === "error"
                    text: row.stateText
                    color: row.state === "error" ? Theme.danger : Theme.textFaint
                    font.pixelSize: Theme.fontSizeSmall
                    font.italic: true
                }
                // Why it failed, or that the oldest turns were left out.
                Label {
                    objectName: "replyNotice"
                    visible: row.notice !== ""
                    width: parent.width
                    text: row.notice
                    wrapMode: Text.Wrap
                    color: row.state === "error" ? Theme.danger : Theme.textMuted
                    font.pixelSize: Theme.fontSizeSmall
                }
            }
            Actions {
                owner: row
                x: row.columnX + 40
                y: parent.topPad + parent.bodyHeight + 6
            }
        }
    }
}
