import QtQuick
import QtQuick.Controls

// A switch drawn in the theme's colours: the Basic style's track and knob
// (palette.midlight and palette.window) nearly vanished against the dark
// drawer. Off: an outlined track with a muted knob; on: the accent.
Switch {
    id: control

    indicator: Rectangle {
        implicitWidth: 40
        implicitHeight: 22
        x: control.mirrored ? control.width - width - control.rightPadding : control.leftPadding
        y: control.topPadding + (control.availableHeight - height) / 2
        radius: height / 2
        opacity: control.enabled ? 1 : 0.45
        color: control.checked ? Theme.accent : Theme.surface
        border.width: 1.5
        border.color: control.checked ? Theme.accent : Theme.textMuted

        Rectangle {
            x: control.checked ? parent.width - width - 3 : 3
            anchors.verticalCenter: parent.verticalCenter
            width: 16
            height: 16
            radius: 8
            color: control.checked ? Theme.accentText : Theme.textMuted
            Behavior on x {
                NumberAnimation {
                    duration: 100
                }
            }
        }
    }
}
