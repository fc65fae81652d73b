import QtQuick
import QtQuick.Controls

// A flat button showing one of the icons/ glyphs, with a tooltip that is
// also its accessible name.
Button {
    id: control

    property string iconName
    property color iconColor: Theme.textMuted
    property string tip

    flat: true
    padding: 7
    implicitWidth: Math.max(32, implicitContentWidth + leftPadding + rightPadding)
    implicitHeight: 32
    icon.source: iconName !== "" ? "icons/" + iconName + ".svg" : ""
    icon.width: 18
    icon.height: 18
    icon.color: enabled ? iconColor : Theme.textFaint
    display: text !== "" ? AbstractButton.TextBesideIcon : AbstractButton.IconOnly
    font.family: Theme.fontFamily
    font.pixelSize: Theme.fontSizeSmall
    palette.buttonText: Theme.textMuted
    focusPolicy: Qt.TabFocus

    Accessible.name: tip !== "" ? tip : text
    ToolTip.visible: hovered && tip !== ""
    ToolTip.text: tip
    ToolTip.delay: 600

    background: Rectangle {
        radius: 8
        color: control.down ? Theme.selected : control.hovered ? Theme.hover : "transparent"
        border.width: control.visualFocus ? 2 : 0
        border.color: Theme.accent
    }
}
