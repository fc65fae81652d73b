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
            // The catalog's estimate for this file beside the measured speed,
            // so that users learn how far to trust the estimates.
            // (machineText changes when the bandwidth measurement arrives.)
            readonly property double estimate: root.controller.modelState === ChatController.Ready
                && root.controller.catalog.machineText !== ""
                ? root.controller.catalog.estimatedTokensPerSecondForFile(root.controller.modelPath) : 0
            visible: root.controller.tokensPerSecond > 0 || estimate > 0
            text: {
                const measured = root.controller.tokensPerSecond > 0
                               ? qsTr("%1 tok/s").arg(root.controller.tokensPerSecond.toFixed(1)) : ""
                const est = estimate <= 0 ? ""
                          : root.controller.catalog.speedIsBound ? qsTr("estimated up to %1").arg(estimate.toFixed(0))
                          : qsTr("estimated about %1").arg(estimate.toFixed(0))
                return measured !== "" && est !== "" ? qsTr("%1 (%2)").arg(measured).arg(est)
                                                     : measured + est
            }
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
