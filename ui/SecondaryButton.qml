import QtQuick
import QtQuick.Controls

// An outlined button for secondary actions (Cancel, Open file).
Button {
    id: control

    padding: 10
    leftPadding: 14
    rightPadding: 14
    font.family: Theme.fontFamily
    font.pixelSize: Theme.fontSize
    Accessible.name: text

    contentItem: Text {
        text: control.text
        font: control.font
        color: control.enabled ? Theme.text : Theme.textFaint
        horizontalAlignment: Text.AlignHCenter
        verticalAlignment: Text.AlignVCenter
        elide: Text.ElideRight
    }
    background: Rectangle {
        implicitHeight: 36
        radius: 8
        color: control.down ? Theme.selected : control.hovered ? Theme.hover : "transparent"
        border.width: 1
        border.color: control.visualFocus ? Theme.accent : Theme.border
    }
}
