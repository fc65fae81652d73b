import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import PowerInfer.App

// Model, speed, context use and device, along the bottom edge.
Rectangle {
    id: root

    required property ChatController controller

    implicitHeight: 30
    color: Theme.sidebar

    Rectangle {
        width: parent.width
        height: 1
        color: Theme.border
    }

    RowLayout {
        anchors.fill: parent
        anchors.leftMargin: 16
        anchors.rightMargin: 16
        spacing: 18

        component StatusItem: Label {
            color: Theme.textMuted
            font.pixelSize: Theme.fontSizeSmall
            elide: Text.ElideRight
        }

        StatusItem {
            objectName: "statusModel"
            text: root.controller.modelState === ChatController.Ready
                  ? root.controller.modelName + (root.controller.modelDetails !== ""
                                                 ? "  ·  " + root.controller.modelDetails : "")
                  : qsTr("No model")
            Layout.fillWidth: true
            Accessible.name: qsTr("Model: %1").arg(text)
        }
        StatusItem {
            objectName: "statusSpeed"
            visible: root.controller.tokensPerSecond > 0
            text: qsTr("%1 tok/s").arg(root.controller.tokensPerSecond.toFixed(1))
            Accessible.name: qsTr("Speed: %1").arg(text)
        }
        StatusItem {
            objectName: "statusContext"
            visible: root.controller.contextSize > 0
            text: qsTr("Context %1 / %2").arg(root.controller.contextUsed).arg(root.controller.contextSize)
            Accessible.name: text
        }
        StatusItem {
            objectName: "statusDevice"
            visible: root.controller.device !== ""
            text: root.controller.device
            Layout.maximumWidth: 260
            Accessible.name: qsTr("Device: %1").arg(text)
        }
    }
}
