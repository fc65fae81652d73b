import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import PowerInfer.App

// Model state under the header: load progress (cancellable), a failed
// load's message, or a hint when no model is loaded.
Rectangle {
    id: root

    required property ChatController controller
    signal modelPickerRequested
    signal catalogRequested

    readonly property int modelState: controller.modelState

    visible: modelState !== ChatController.Ready
    implicitHeight: visible ? content.implicitHeight + 20 : 0
    color: modelState === ChatController.Failed ? Qt.rgba(Theme.danger.r, Theme.danger.g, Theme.danger.b, 0.10)
                                                : Theme.accentSoft

    RowLayout {
        id: content
        anchors.fill: parent
        anchors.leftMargin: 20
        anchors.rightMargin: 16
        spacing: 12

        ColumnLayout {
            Layout.fillWidth: true
            spacing: 6
            Label {
                Layout.fillWidth: true
                wrapMode: Text.Wrap
                color: root.modelState === ChatController.Failed ? Theme.danger : Theme.text
                text: {
                    switch (root.modelState) {
                    case ChatController.Loading:
                        return qsTr("Loading %1… %2%").arg(root.controller.modelName)
                                                      .arg(Math.round(root.controller.loadProgress * 100))
                    case ChatController.Failed:
                        return qsTr("Could not load the model: %1").arg(root.controller.loadError)
                    default:
                        return root.controller.models.count > 0
                               ? qsTr("No model loaded. Choose a GGUF model to start chatting.")
                               : qsTr("No model yet. Get one from the catalog (it says which fit this computer), or open a GGUF file.")
                    }
                }
            }
            ProgressBar {
                id: progress
                visible: root.modelState === ChatController.Loading
                value: root.controller.loadProgress
                Layout.fillWidth: true
                Accessible.name: qsTr("Model loading progress")
                background: Rectangle {
                    implicitHeight: 4
                    radius: 2
                    color: Theme.border
                }
                contentItem: Item {
                    implicitHeight: 4
                    Rectangle {
                        width: progress.visualPosition * parent.width
                        height: parent.height
                        radius: 2
                        color: Theme.accent
                    }
                }
            }
        }
        SecondaryButton {
            visible: root.modelState === ChatController.Loading
            text: qsTr("Cancel")
            onClicked: root.controller.cancelLoad()
        }
        SecondaryButton {
            objectName: "getModelButton"
            visible: root.modelState !== ChatController.Loading
            text: qsTr("Get a model…")
            onClicked: root.catalogRequested()
        }
        PrimaryButton {
            visible: root.modelState !== ChatController.Loading
            text: qsTr("Choose model")
            onClicked: root.modelPickerRequested()
        }
    }
}
