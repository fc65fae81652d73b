import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import PowerInfer.App

// Names a download's file in the models folder. A name already taken is
// not refused outright: the dialog says so and offers a free one.
Dialog {
    id: dialog

    required property ModelDownloads downloads
    property int row: -1

    function ask(downloadRow, currentName) {
        row = downloadRow
        nameField.text = currentName
        problem.text = ""
        open()
        nameField.forceActiveFocus()
        nameField.select(0, Math.max(0, currentName.lastIndexOf(".gguf")))
    }
    function save() {
        const error = dialog.downloads.rename(dialog.row, nameField.text)
        if (error === "") {
            dialog.accept()
            return
        }
        problem.text = error
        // Offer a free name in place of one that is taken.
        let wanted = nameField.text.trim()
        if (!wanted.toLowerCase().endsWith(".gguf"))
            wanted += ".gguf"
        const free = dialog.downloads.freeFileName(wanted, dialog.row)
        if (free !== wanted)
            nameField.text = free
    }

    objectName: "renameDownloadDialog"
    parent: Overlay.overlay
    anchors.centerIn: parent
    width: Math.min(520, parent ? parent.width - 64 : 520)
    modal: true
    padding: 20
    topPadding: 4
    title: qsTr("File name")

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
        ThemedTextField {
            id: nameField
            objectName: "renameField"
            Layout.fillWidth: true
            Accessible.name: qsTr("File name in the models folder")
            onAccepted: dialog.save()
            onTextEdited: problem.text = ""
        }
        Label {
            id: problem
            objectName: "renameProblem"
            visible: text !== ""
            color: Theme.warning
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
            objectName: "renameSave"
            text: qsTr("Rename")
            enabled: nameField.text.trim() !== ""
            onClicked: dialog.save()
            Layout.bottomMargin: 16
            Layout.rightMargin: 16
        }
    }
}
