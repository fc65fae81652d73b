import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import PowerInfer.App

// Edits one of the user's messages and sends it again; the conversation is
// cut after it.
Dialog {
    id: dialog

    required property ChatController controller
    property string uid

    function edit(messageUid, text) {
        uid = messageUid
        editor.text = text
        open()
        editor.forceActiveFocus()
    }

    parent: Overlay.overlay
    anchors.centerIn: parent
    width: Math.min(620, parent ? parent.width - 64 : 620)
    modal: true
    padding: 20
    topPadding: 4
    title: qsTr("Edit message")

    background: Rectangle {
        radius: Theme.radiusLarge
        color: Theme.surfaceRaised
        border.color: Theme.border
    }
    header: Label {
        text: dialog.title
        font.pixelSize: Theme.fontSizeLarge
        font.weight: Font.DemiBold
        color: Theme.text
        padding: 20
        bottomPadding: 8
    }
    contentItem: ColumnLayout {
        spacing: 8
        TextArea {
            id: editor
            Layout.fillWidth: true
            Layout.preferredHeight: 160
            wrapMode: TextEdit.Wrap
            selectByMouse: true
            color: Theme.text
            Accessible.name: qsTr("Message text")
            background: Rectangle {
                radius: 8
                color: Theme.surface
                border.color: editor.activeFocus ? Theme.accent : Theme.border
            }
        }
        Label {
            text: qsTr("Later messages in this conversation will be replaced by the new reply.")
            color: Theme.textMuted
            font.pixelSize: Theme.fontSizeSmall
            wrapMode: Text.Wrap
            Layout.fillWidth: true
        }
    }
    footer: RowLayout {
        spacing: 8
        Item {
            Layout.fillWidth: true
        }
        SecondaryButton {
            text: qsTr("Cancel")
            onClicked: dialog.reject()
            Layout.bottomMargin: 16
        }
        PrimaryButton {
            text: qsTr("Save and resend")
            enabled: editor.text.trim() !== ""
            onClicked: {
                dialog.controller.editAndResend(dialog.uid, editor.text)
                dialog.accept()
            }
            Layout.bottomMargin: 16
            Layout.rightMargin: 16
        }
    }
}
