import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import PowerInfer.App

// Choose a model: from the models folder (with header facts) or any .gguf file.
Dialog {
    id: picker

    required property ChatController controller
    signal catalogRequested

    parent: Overlay.overlay
    anchors.centerIn: parent
    width: Math.min(680, parent ? parent.width - 64 : 680)
    height: Math.min(560, parent ? parent.height - 64 : 560)
    modal: true
    padding: 20
    topPadding: 4
    title: qsTr("Choose a model")
    onAboutToShow: controller.models.refresh()

    background: Rectangle {
        radius: Theme.radiusLarge
        color: Theme.surfaceRaised
        border.color: Theme.border
    }
    header: RowLayout {
        Label {
            text: picker.title
            font.pixelSize: Theme.fontSizeTitle
            font.weight: Font.DemiBold
            color: Theme.text
            Layout.fillWidth: true
            Layout.margins: 20
            Layout.bottomMargin: 8
        }
        IconButton {
            iconName: "close"
            tip: qsTr("Close")
            onClicked: picker.close()
            Layout.rightMargin: 12
        }
    }

    contentItem: ColumnLayout {
        spacing: 12

        RowLayout {
            Layout.fillWidth: true
            spacing: 8
            Label {
                text: qsTr("Folder")
                color: Theme.textMuted
                font.pixelSize: Theme.fontSizeSmall
            }
            Label {
                text: picker.controller.models.folder
                color: Theme.text
                font.pixelSize: Theme.fontSizeSmall
                elide: Text.ElideMiddle
                Layout.fillWidth: true
            }
            IconButton {
                iconName: "folder"
                tip: qsTr("Choose the models folder")
                onClicked: picker.controller.chooseModelsFolderInteractive()
            }
            IconButton {
                iconName: "refresh"
                tip: qsTr("Scan the folder again")
                onClicked: picker.controller.models.refresh()
            }
        }

        ListView {
            id: modelList
            objectName: "modelList"
            Layout.fillWidth: true
            Layout.fillHeight: true
            clip: true
            spacing: 6
            model: picker.controller.models
            ScrollBar.vertical: ScrollBar {}
            delegate: ModelDelegate {
                width: ListView.view.width
                fitSummary: picker.controller.catalog.fitSummaryForFile(path)
                // (revision changes with every progress step.)
                calibrationStatus: picker.controller.backgroundCalibration.revision >= 0
                                   ? picker.controller.backgroundCalibration.statusFor(path) : ""
                canCalibrate: picker.controller.backgroundCalibration.available
                              && !picker.controller.backgroundCalibration.running
                onCalibrateRequested: p => {
                    const error = picker.controller.backgroundCalibration.start(p)
                    if (error !== "")
                        picker.controller.showMessage(error)
                }
                current: path === picker.controller.modelPath
                         && picker.controller.modelState === ChatController.Ready
                onChosen: modelPath => {
                    picker.controller.loadModel(modelPath)
                    picker.close()
                }
            }
            Label {
                anchors.centerIn: parent
                width: parent.width - 40
                visible: modelList.count === 0
                horizontalAlignment: Text.AlignHCenter
                wrapMode: Text.Wrap
                color: Theme.textMuted
                text: picker.controller.models.scanning
                      ? qsTr("Looking for models…")
                      : qsTr("No .gguf models in this folder. Get one from the catalog, open a file, or drop a .gguf onto the window.")
            }
        }
    }

    footer: RowLayout {
        spacing: 8
        SecondaryButton {
            text: qsTr("Open file…")
            objectName: "openModelFile"
            onClicked: {
                picker.close()
                picker.controller.openModelInteractive()
            }
            Layout.leftMargin: 20
            Layout.bottomMargin: 18
        }
        SecondaryButton {
            text: qsTr("Get models…")
            onClicked: {
                picker.close()
                picker.catalogRequested()
            }
            Layout.bottomMargin: 18
        }
        Item {
            Layout.fillWidth: true
        }
        SecondaryButton {
            text: qsTr("Close")
            onClicked: picker.close()
            Layout.rightMargin: 20
            Layout.bottomMargin: 18
        }
    }
}
