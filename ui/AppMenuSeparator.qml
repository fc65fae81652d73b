import QtQuick
import QtQuick.Controls

// A thin line between groups of an AppMenu.
MenuSeparator {
    topPadding: 4
    bottomPadding: 4
    contentItem: Rectangle {
        implicitWidth: 200
        implicitHeight: 1
        color: Theme.border
    }
}
