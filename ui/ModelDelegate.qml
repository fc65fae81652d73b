import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

// One model file in the picker: name, header facts, sidecar badge.
ItemDelegate {
    id: row

    required property string path
    required property string name
    required property string fileName
    required property string architecture
    required property string quant
    required property string sizeText
    required property bool hasSidecar
    required property string error
    property bool current: false
    // "CPU only: … about N tok/s" for this machine ("" when unknown).
    property string fitSummary: ""
    // "calibrated", "not calibrated" or "calibrating 43 %" (background calibration).
    property string calibrationStatus: hasSidecar ? qsTr("calibrated") : qsTr("not calibrated")
    property bool canCalibrate: false
    signal calibrateRequested(string modelPath)

    signal chosen(string modelPath)

    padding: 12
    Accessible.name: qsTr("%1, %2").arg(name).arg(facts.text)
    onClicked: chosen(path)

    background: Rectangle {
        radius: Theme.radius
        color: row.hovered ? Theme.hover : "transparent"
        border.color: row.current ? Theme.accent : Theme.border
        border.width: row.current ? 2 : 1
    }

    contentItem: RowLayout {
        spacing: 12
        Rectangle {
            width: 36
            height: 36
            radius: 8
            color: Theme.accentSoft
            Icon {
                anchors.centerIn: parent
                name: "chip"
                size: 18
                color: Theme.accent
            }
        }
        ColumnLayout {
            Layout.fillWidth: true
            spacing: 2
            Label {
                text: row.name
                color: Theme.text
                font.weight: Font.DemiBold
                elide: Text.ElideRight
                Layout.fillWidth: true
            }
            Label {
                id: facts
                text: row.error !== "" ? row.error
                      : [row.architecture, row.quant, row.sizeText].filter(s => s !== "").join("  ·  ")
                color: row.error !== "" ? Theme.danger : Theme.textMuted
                font.pixelSize: Theme.fontSizeSmall
                elide: Text.ElideRight
                Layout.fillWidth: true
            }
            Label {
                visible: row.fitSummary !== "" && row.error === ""
                text: row.fitSummary
                color: Theme.textMuted
                font.pixelSize: Theme.fontSizeSmall - 1
                elide: Text.ElideRight
                Layout.fillWidth: true
            }
            Label {
                text: row.fileName
                color: Theme.textFaint
                font.pixelSize: Theme.fontSizeSmall - 1
                elide: Text.ElideMiddle
                Layout.fillWidth: true
            }
        }
        SecondaryButton {
            visible: row.canCalibrate && !row.hasSidecar && row.error === ""
                     && row.calibrationStatus === qsTr("not calibrated")
            text: qsTr("Calibrate")
            Accessible.description: qsTr("Make its sparse sidecar in the background; the model stays usable meanwhile")
            onClicked: row.calibrateRequested(row.path)
        }
        Rectangle {
            radius: 10
            implicitWidth: badge.implicitWidth + 16
            implicitHeight: badge.implicitHeight + 6
            color: row.hasSidecar ? Qt.rgba(Theme.success.r, Theme.success.g, Theme.success.b, 0.15)
                                  : Theme.hover
            Label {
                id: badge
                anchors.centerIn: parent
                text: row.calibrationStatus
                color: row.hasSidecar ? Theme.success : Theme.textMuted
                font.pixelSize: Theme.fontSizeSmall - 1
                font.weight: Font.Medium
            }
        }
    }
}
