import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

// The keyboard shortcuts, one per line (F1 or Ctrl+/).
Dialog {
    id: dialog

    // [keys, what] pairs, the same list the window's Shortcut items use.
    property var shortcuts: []

    parent: Overlay.overlay
    anchors.centerIn: parent
    width: Math.min(440, parent ? parent.width - 48 : 440)
    modal: true
    padding: 20
    topPadding: 8
    title: qsTr("Keyboard shortcuts")

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
    contentItem: GridLayout {
        objectName: "shortcutList"
        columns: 2
        columnSpacing: 24
        rowSpacing: 8
        Repeater {
            model: dialog.shortcuts.length * 2
            Label {
                required property int index
                readonly property var entry: dialog.shortcuts[Math.floor(index / 2)]
                text: index % 2 === 0 ? entry[0] : entry[1]
                color: index % 2 === 0 ? Theme.text : Theme.textMuted
                font.family: index % 2 === 0 ? Theme.monoFamily : Theme.fontFamily
                // The descriptions wrap: at 800x600 the longest ran past the dialog.
                wrapMode: index % 2 === 1 ? Text.Wrap : Text.NoWrap
                Layout.fillWidth: index % 2 === 1
            }
        }
    }
    footer: RowLayout {
        Item {
            Layout.fillWidth: true
        }
        SecondaryButton {
            text: qsTr("Close")
            onClicked: dialog.close()
            Layout.rightMargin: 20
            Layout.bottomMargin: 18
        }
    }
}
