import QtQuick
import QtQuick.Controls

// The accent-coloured call to action (Send, Load, Save).
Button {
    id: control

    property bool destructive: false

    padding: 10
    leftPadding: 16
    rightPadding: 16
    font.family: Theme.fontFamily
    font.pixelSize: Theme.fontSize
    font.weight: Font.DemiBold
    Accessible.name: text

    contentItem: Text {
        text: control.text
        font: control.font
        color: Theme.accentText
        horizontalAlignment: Text.AlignHCenter
        verticalAlignment: Text.AlignVCenter
        elide: Text.ElideRight
    }
    background: Rectangle {
        implicitHeight: 36
        radius: 8
        color: control.destructive ? Theme.danger : Theme.accent
        opacity: !control.enabled ? 0.4 : control.down ? 0.8 : control.hovered ? 0.9 : 1
        border.width: control.visualFocus ? 2 : 0
        border.color: Theme.text
    }
}
