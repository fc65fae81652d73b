import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import PowerInfer.App

// One catalog entry: what it is, whether the engine runs it, whether it fits
// this machine (and how fast), and its download with progress.
ItemDelegate {
    id: row

    required property int index
    required property string name
    required property string family
    required property string parameters
    required property string quant
    required property string sizeText
    required property string licence
    required property string kind
    required property int contextLength
    required property bool supported
    required property string note
    required property string fitVerdict
    required property string fitSummary
    required property bool installed
    required property int downloadState
    required property double downloadProgress
    required property string downloadText
    required property string fileName
    required property bool isDefault
    // How far the catalog's size and SHA-256 were checked ("size approximate", …).
    required property string checkText
    required property string checkNote
    // For an installed entry: its calibration ("calibrated", …) and whether
    // a background calibration can start now.
    property string calibrationStatus: ""
    property bool canCalibrate: false

    // ModelDownloads.State: Queued 0, Running 1, Paused 2, Verifying 3, Done 4, Failed 5.
    readonly property bool active: downloadState >= 0 && downloadState <= 3
    readonly property color fitColor: fitVerdict === "gpu" || fitVerdict === "cpu" ? Theme.success
                                      : fitVerdict === "hybrid" ? Theme.accent
                                      : fitVerdict === "nofit" ? Theme.danger : Theme.textMuted

    signal downloadRequested(int row)
    signal loadRequested(string fileName)
    signal pauseRequested(string fileName)
    signal resumeRequested(string fileName)
    signal cancelRequested(string fileName)
    signal calibrateRequested(string fileName)

    padding: 12
    hoverEnabled: true
    Accessible.name: qsTr("%1, %2, %3").arg(name).arg(sizeText).arg(fitSummary)

    background: Rectangle {
        radius: Theme.radius
        color: row.hovered ? Theme.hover : "transparent"
        border.color: row.isDefault ? Theme.accent : Theme.border
    }

    contentItem: ColumnLayout {
        spacing: 6
        RowLayout {
            spacing: 10
            Layout.fillWidth: true
            ColumnLayout {
                spacing: 2
                Layout.fillWidth: true
                Label {
                    text: row.isDefault ? qsTr("%1  (recommended first model)").arg(row.name) : row.name
                    color: Theme.text
                    font.weight: Font.DemiBold
                    elide: Text.ElideRight
                    Layout.fillWidth: true
                }
                Label {
                    text: [row.family, row.parameters, row.quant, row.sizeText,
                           row.kind === "chat" ? qsTr("chat") : qsTr("base"),
                           qsTr("%1k context").arg(Math.round(row.contextLength / 1024)), row.licence]
                          .filter(s => s !== "").join("  ·  ")
                    color: Theme.textMuted
                    font.pixelSize: Theme.fontSizeSmall
                    elide: Text.ElideRight
                    Layout.fillWidth: true
                }
            }
            PrimaryButton {
                objectName: "download_" + row.fileName
                visible: !row.installed && !row.active && row.supported
                text: row.downloadState === 5 ? qsTr("Retry") : qsTr("Download")
                onClicked: row.downloadState === 5 ? row.resumeRequested(row.fileName)
                                                   : row.downloadRequested(row.index)
            }
            SecondaryButton {
                visible: row.installed
                text: qsTr("Load")
                onClicked: row.loadRequested(row.fileName)
            }
            IconButton {
                visible: row.downloadState === 1 || row.downloadState === 0
                iconName: "stop"
                tip: qsTr("Pause")
                onClicked: row.pauseRequested(row.fileName)
            }
            SecondaryButton {
                visible: row.downloadState === 2
                text: qsTr("Resume")
                onClicked: row.resumeRequested(row.fileName)
            }
            IconButton {
                visible: row.active || row.downloadState === 5
                iconName: "close"
                tip: qsTr("Cancel and delete the partial file")
                onClicked: row.cancelRequested(row.fileName)
            }
        }
        RowLayout {
            spacing: 8
            Layout.fillWidth: true
            Rectangle {
                implicitWidth: 8
                implicitHeight: 8
                radius: 4
                color: row.supported ? row.fitColor : Theme.textFaint
                Layout.alignment: Qt.AlignTop
                Layout.topMargin: 5
            }
            Label {
                text: row.supported ? row.fitSummary : row.note
                color: row.supported ? row.fitColor : Theme.textMuted
                font.pixelSize: Theme.fontSizeSmall
                wrapMode: Text.Wrap
                Layout.fillWidth: true
            }
        }
        Label {
            objectName: "check_" + row.fileName
            text: row.checkText
            color: Theme.textFaint
            font.pixelSize: Theme.fontSizeSmall - 1
            elide: Text.ElideRight
            Layout.fillWidth: true
            HoverHandler {
                id: checkHover
            }
            ToolTip.visible: checkHover.hovered && row.checkNote !== ""
            ToolTip.text: row.checkNote
        }
        Label {
            visible: row.supported && row.note !== ""
            text: row.note
            color: Theme.textFaint
            font.pixelSize: Theme.fontSizeSmall - 1
            Layout.fillWidth: true
        }
        ProgressBar {
            visible: row.active
            indeterminate: row.downloadProgress < 0 || row.downloadState === 3
            value: Math.max(0, row.downloadProgress)
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
                    width: parent.width * Math.max(0, row.downloadProgress)
                    height: parent.height
                    radius: 2
                    color: Theme.accent
                }
            }
        }
        RowLayout {
            visible: row.installed
            spacing: 8
            Layout.fillWidth: true
            Label {
                objectName: "calibration_" + row.fileName
                text: row.calibrationStatus
                color: row.calibrationStatus === qsTr("calibrated") ? Theme.success : Theme.textMuted
                font.pixelSize: Theme.fontSizeSmall
                font.weight: Font.Medium
            }
            SecondaryButton {
                visible: row.canCalibrate && row.calibrationStatus === qsTr("not calibrated")
                text: qsTr("Calibrate in the background")
                Accessible.description: qsTr("Make its sparse sidecar; the model is usable dense meanwhile")
                onClicked: row.calibrateRequested(row.fileName)
            }
            Item {
                Layout.fillWidth: true
            }
        }
        Label {
            visible: row.downloadText !== ""
            text: row.downloadText
            color: row.downloadState === 5 ? Theme.danger
                   : row.downloadState === 4 ? Theme.success : Theme.textMuted
            font.pixelSize: Theme.fontSizeSmall
            wrapMode: Text.Wrap
            Layout.fillWidth: true
        }
    }
}
