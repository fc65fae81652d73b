import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

// A horizontal stacked bar of named parts against a total (a budget), with
// a legend. segments: [{ label, value, color }]; format(value) -> text.
ColumnLayout {
    id: root

    property string title
    property string subtitle
    property var segments: []
    property real total: 0            // <= 0: the sum of the parts
    property var format: v => v.toFixed(1)
    readonly property real used: segments.reduce((a, s) => a + Math.max(0, s.value), 0)
    readonly property real scale: Math.max(total > 0 ? total : used, 1e-9)

    spacing: 4
    Accessible.role: Accessible.Chart
    Accessible.name: title + ": " + segments.map(s => s.label + " " + format(s.value)).join(", ")

    RowLayout {
        Layout.fillWidth: true
        Label {
            text: root.title
            color: Theme.text
            font.weight: Font.Medium
            Layout.fillWidth: true
            wrapMode: Text.Wrap
        }
        Label {
            text: root.total > 0 ? qsTr("%1 of %2").arg(root.format(root.used)).arg(root.format(root.total))
                                 : root.format(root.used)
            color: root.total > 0 && root.used > root.total ? Theme.danger : Theme.textMuted
            font.family: Theme.monoFamily
            font.pixelSize: Theme.fontSizeSmall
        }
    }
    Label {
        visible: root.subtitle !== ""
        text: root.subtitle
        color: Theme.textFaint
        font.pixelSize: Theme.fontSizeSmall
        Layout.fillWidth: true
        wrapMode: Text.Wrap
    }
    Rectangle {
        Layout.fillWidth: true
        Layout.preferredHeight: 12
        radius: 4
        color: Theme.hover
        clip: true
        Row {
            anchors.fill: parent
            Repeater {
                model: root.segments
                Rectangle {
                    required property var modelData
                    width: Math.min(1, Math.max(0, modelData.value) / root.scale) * parent.width
                    height: parent.height
                    color: modelData.color
                }
            }
        }
    }
    Flow {
        Layout.fillWidth: true
        spacing: 10
        Repeater {
            model: root.segments
            Row {
                required property var modelData
                spacing: 4
                visible: modelData.value > 0
                Rectangle {
                    width: 8
                    height: 8
                    radius: 2
                    color: parent.modelData.color
                    anchors.verticalCenter: parent.verticalCenter
                }
                Label {
                    text: parent.modelData.label + " " + root.format(parent.modelData.value)
                    color: Theme.textMuted
                    font.pixelSize: 11
                }
            }
        }
    }
}
