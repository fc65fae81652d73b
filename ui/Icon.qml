import QtQuick
import QtQuick.Controls

// A tinted icons/ glyph. A disabled, flat Button is the public way to get
// the Controls' icon colouring in Qt 6.4; being disabled it takes no input.
Button {
    property string name
    property color color: Theme.textMuted
    property int size: 16

    enabled: false
    flat: true
    padding: 0
    display: AbstractButton.IconOnly
    icon.source: name !== "" ? "icons/" + name + ".svg" : ""
    icon.width: size
    icon.height: size
    icon.color: color
    background: null
    implicitWidth: size
    implicitHeight: size
    Accessible.ignored: true
}
