import QtQuick
import QtQuick.Controls

// A slider whose handle is drawn in the accent colour: the Basic style's
// (palette.window with a palette.mid border) nearly vanished against the
// dark drawer.
Slider {
    id: control

    handle: Rectangle {
        x: control.leftPadding + (control.horizontal ? control.visualPosition * (control.availableWidth - width)
                                                     : (control.availableWidth - width) / 2)
        y: control.topPadding + (control.horizontal ? (control.availableHeight - height) / 2
                                                    : control.visualPosition * (control.availableHeight - height))
        implicitWidth: 18
        implicitHeight: 18
        radius: width / 2
        color: control.enabled ? Theme.accent : Theme.textFaint
        border.width: control.visualFocus ? 3 : 2
        border.color: control.visualFocus ? Theme.text : Theme.surface
    }
}
