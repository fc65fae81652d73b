import QtQuick
import QtQuick.Controls

// A pop-up menu in the theme's colours (rounded, padded, a hover row):
// the Basic style's own menu is a square in the desktop's palette. Its
// items are AppMenuItem and AppMenuSeparator.
Menu {
    id: menu

    padding: 4
    font.family: Theme.fontFamily
    font.pixelSize: Theme.fontSize

    background: Rectangle {
        objectName: "menuBackground"
        implicitWidth: 220
        radius: Theme.radius
        color: Theme.surfaceRaised
        border.width: 1
        border.color: Theme.border
    }
}
