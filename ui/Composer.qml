import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import PowerInfer.App

// Message input: Enter sends, Shift+Enter adds a line; Stop while a reply
// streams (the partial reply is kept).
Item {
    id: root

    required property ChatController controller
    signal sent

    function focusInput() {
        input.forceActiveFocus()
    }
    function setText(text) {
        input.text = text
        input.cursorPosition = text.length
        input.forceActiveFocus()
    }
    function submit() {
        if (input.text.trim() === "" || root.controller.generating)
            return
        root.controller.send(input.text)
        input.text = ""
        root.sent()
    }

    implicitHeight: card.implicitHeight + 28

    Rectangle {
        id: card
        width: Math.min(parent.width - 64, Theme.contentMaxWidth + 16)
        anchors.horizontalCenter: parent.horizontalCenter
        anchors.top: parent.top
        anchors.topMargin: 6
        implicitHeight: Math.min(Math.max(input.implicitHeight, 24), 200) + 26
        radius: Theme.radiusLarge + 4
        color: Theme.surface
        border.width: input.activeFocus ? 2 : 1
        border.color: input.activeFocus ? Qt.rgba(Theme.accent.r, Theme.accent.g, Theme.accent.b, 0.6)
                                        : Theme.border

        ScrollView {
            id: scroll
            anchors.left: parent.left
            anchors.right: sendButton.left
            anchors.top: parent.top
            anchors.bottom: parent.bottom
            anchors.leftMargin: 16
            anchors.rightMargin: 8
            anchors.topMargin: 11
            anchors.bottomMargin: 11
            TextArea {
                id: input
                objectName: "composerInput"
                placeholderText: root.controller.modelState === ChatController.Ready
                                 ? qsTr("Message %1…").arg(root.controller.modelName)
                                 : qsTr("Load a model to start chatting")
                wrapMode: TextEdit.Wrap
                color: Theme.text
                placeholderTextColor: Theme.textFaint
                selectByMouse: true
                padding: 0
                topPadding: 4
                bottomPadding: 4
                font.pixelSize: Theme.fontSize + 1
                background: null
                Accessible.name: qsTr("Message")
                Keys.onReturnPressed: event => {
                    if (event.modifiers & Qt.ShiftModifier) {
                        event.accepted = false
                    } else {
                        root.submit()
                    }
                }
                Keys.onEnterPressed: event => Keys.returnPressed(event)
            }
        }

        IconButton {
            id: sendButton
            objectName: "sendButton"
            anchors.right: parent.right
            anchors.bottom: parent.bottom
            anchors.margins: 9
            implicitWidth: 36
            implicitHeight: 36
            iconName: root.controller.generating ? "stop" : "send"
            iconColor: Theme.accentText
            tip: root.controller.generating ? qsTr("Stop (Esc)") : qsTr("Send (Enter)")
            enabled: root.controller.generating
                     || (input.text.trim() !== "" && root.controller.modelState === ChatController.Ready)
            onClicked: root.controller.generating ? root.controller.stop() : root.submit()
            background: Rectangle {
                radius: 18
                color: root.controller.generating ? Theme.text : Theme.accent
                opacity: sendButton.enabled ? (sendButton.hovered ? 0.88 : 1) : 0.35
            }
        }
    }

    Label {
        anchors.top: card.bottom
        anchors.topMargin: 4
        anchors.horizontalCenter: parent.horizontalCenter
        text: qsTr("Enter to send · Shift+Enter for a new line")
        color: Theme.textFaint
        font.pixelSize: Theme.fontSizeSmall - 1
    }
}
