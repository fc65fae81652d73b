import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import PowerInfer.App

// A download that is no catalog entry (a pasted link, also one a crash or a
// quit left unfinished): its state, a progress bar, speed and time left,
// pause / resume / retry, rename, and cancel or remove.
ColumnLayout {
    id: row

    required property ModelDownloads downloads
    required property int index
    required property string title
    required property string fileName
    required property int stateCode
    required property string stateText
    required property string receivedText
    required property string speedText
    required property string etaText
    required property double progress
    required property string error
    required property string note

    signal renameRequested(int row, string name)

    // ModelDownloads.State: Queued 0, Running 1, Paused 2, Verifying 3, Done 4, Failed 5.
    readonly property bool active: stateCode >= 0 && stateCode <= 3
    readonly property bool ended: stateCode === 4 || stateCode === 5

    objectName: "download_" + fileName
    spacing: 4

    RowLayout {
        spacing: 8
        Layout.fillWidth: true
        Label {
            text: row.title
            color: Theme.text
            font.weight: Font.DemiBold
            elide: Text.ElideMiddle
            Layout.fillWidth: true
        }
        SecondaryButton {
            objectName: "resume_" + row.fileName
            visible: row.stateCode === 2 || row.stateCode === 5
            text: row.stateCode === 5 ? qsTr("Retry") : qsTr("Resume")
            onClicked: row.downloads.resume(row.index)
        }
        IconButton {
            objectName: "pause_" + row.fileName
            visible: row.stateCode === 0 || row.stateCode === 1
            iconName: "stop"
            tip: qsTr("Pause (resumes where it stopped)")
            onClicked: row.downloads.pause(row.index)
        }
        IconButton {
            objectName: "rename_" + row.fileName
            visible: row.stateCode !== 3
            iconName: "edit"
            tip: row.stateCode === 4 ? qsTr("Rename the file") : qsTr("Choose the file's name")
            onClicked: row.renameRequested(row.index, row.title)
        }
        IconButton {
            objectName: "cancel_" + row.fileName
            iconName: "close"
            tip: row.ended ? qsTr("Remove from the list") : qsTr("Cancel and delete the partial file")
            onClicked: row.ended ? row.downloads.dismiss(row.index) : row.downloads.cancel(row.index)
        }
    }
    ProgressBar {
        objectName: "progress_" + row.fileName
        visible: row.active
        indeterminate: (row.progress < 0 && row.stateCode !== 2) || row.stateCode === 3
        value: Math.max(0, row.progress)
        Layout.fillWidth: true
        Accessible.name: qsTr("Download progress")
        background: Rectangle {
            implicitHeight: 4
            radius: 2
            color: Theme.border
        }
        contentItem: Item {
            implicitHeight: 4
            Rectangle {
                width: parent.width * Math.max(0, row.progress)
                height: parent.height
                radius: 2
                color: row.stateCode === 2 ? Theme.textFaint : Theme.accent
            }
        }
    }
    Label {
        objectName: "status_" + row.fileName
        text: [row.stateText, row.receivedText, row.speedText, row.etaText].filter(s => s !== "").join("  ·  ")
        color: Theme.textMuted
        font.pixelSize: Theme.fontSizeSmall
        elide: Text.ElideRight
        Layout.fillWidth: true
    }
    Label {
        objectName: "note_" + row.fileName
        visible: text !== ""
        text: row.error !== "" ? row.error : row.note
        color: row.error !== "" ? Theme.danger : row.stateCode === 4 ? Theme.success : Theme.textMuted
        font.pixelSize: Theme.fontSizeSmall
        wrapMode: Text.Wrap
        Layout.fillWidth: true
    }
}
