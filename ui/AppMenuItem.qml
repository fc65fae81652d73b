import QtQuick
import QtQuick.Controls

// A row of an AppMenu: the theme's text colour, a rounded hover row, faint
// when disabled.
MenuItem {
    id: item

    leftPadding: 12
    rightPadding: 12
    topPadding: 8
    bottomPadding: 8
    font.family: Theme.fontFamily
    font.pixelSize: Theme.fontSize
    Accessible.name: text

    contentItem: Text {
        objectName: "menuItemText"
        text: item.text
        font: item.font
        color: !item.enabled ? Theme.textFaint : item.destructive ? Theme.danger : Theme.text
        elide: Text.ElideRight
        verticalAlignment: Text.AlignVCenter
    }
    // Delete and the like read in the danger colour.
    property bool destructive: false

    background: Rectangle {
        implicitWidth: 212
        implicitHeight: 34
        radius: 6
        color: item.highlighted && item.enabled ? Theme.hover : "transparent"
    }
}
