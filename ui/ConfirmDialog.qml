import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

// A small modal question with a confirm and a cancel button.
Dialog {
    id: dialog

    property string message
    property string confirmText: qsTr("OK")
    property bool destructive: false

    parent: Overlay.overlay
    anchors.centerIn: parent
    width: Math.min(420, parent ? parent.width - 48 : 420)
    modal: true
    padding: 20
    topPadding: 8

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
        bottomPadding: 4
    }
    contentItem: Label {
        text: dialog.message
        wrapMode: Text.Wrap
        color: Theme.textMuted
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
            text: dialog.confirmText
            destructive: dialog.destructive
            onClicked: dialog.accept()
            Layout.bottomMargin: 16
            Layout.rightMargin: 16
        }
    }
}
