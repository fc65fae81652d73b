import QtQuick
import QtQuick.Controls
import PowerInfer.App

// Transient notices from the controller (copied, exported, errors).
Rectangle {
    id: toast

    required property ChatController controller
    readonly property string message: controller.notice

    visible: opacity > 0
    opacity: message !== "" ? 1 : 0
    width: Math.min(label.implicitWidth + 40, 640)
    height: label.implicitHeight + 20
    radius: height / 2
    color: Theme.dark ? "#e8e9ed" : "#1d1f24"
    Accessible.role: Accessible.AlertMessage
    Accessible.name: message

    Behavior on opacity {
        NumberAnimation {
            duration: 150
        }
    }
    onMessageChanged: if (message !== "") hideTimer.restart()

    Label {
        id: label
        anchors.centerIn: parent
        width: Math.min(implicitWidth, 600)
        text: toast.message
        color: Theme.dark ? "#1d1f24" : "#ffffff"
        wrapMode: Text.Wrap
        horizontalAlignment: Text.AlignHCenter
    }
    Timer {
        id: hideTimer
        interval: 4000
        onTriggered: toast.controller.dismissNotice()
    }
    TapHandler {
        onTapped: toast.controller.dismissNotice()
    }
}
