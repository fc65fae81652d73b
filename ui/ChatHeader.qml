import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import PowerInfer.App

// Conversation title, the model chip (opens the picker), settings, export.
Rectangle {
    id: root

    required property ChatController controller
    property bool sidebarShown: true
    signal sidebarToggled
    signal modelPickerRequested
    signal settingsRequested
    signal tuningRequested

    implicitHeight: 56
    color: Theme.background

    Rectangle {
        anchors.bottom: parent.bottom
        width: parent.width
        height: 1
        color: Theme.border
    }

    RowLayout {
        anchors.fill: parent
        anchors.leftMargin: 8
        anchors.rightMargin: 12
        spacing: 8

        IconButton {
            objectName: "sidebarToggle"
            iconName: "sidebar"
            tip: root.sidebarShown ? qsTr("Hide the conversations") : qsTr("Show the conversations")
            iconColor: root.sidebarShown ? Theme.accent : Theme.textMuted
            onClicked: root.sidebarToggled()
        }

        Label {
            text: root.controller.currentTitle !== "" ? root.controller.currentTitle : qsTr("New chat")
            font.pixelSize: Theme.fontSizeLarge
            font.weight: Font.DemiBold
            color: Theme.text
            elide: Text.ElideRight
            Layout.fillWidth: true
        }

        Button {
            id: modelChip
            objectName: "modelChip"
            Accessible.name: qsTr("Model: %1. Choose a model").arg(modelLabel.text)
            onClicked: root.modelPickerRequested()
            padding: 8
            leftPadding: 12
            rightPadding: 10
            contentItem: RowLayout {
                spacing: 8
                Rectangle {
                    width: 8
                    height: 8
                    radius: 4
                    color: {
                        switch (root.controller.modelState) {
                        case ChatController.Ready: return Theme.success
                        case ChatController.Loading: return Theme.warning
                        case ChatController.Failed: return Theme.danger
                        default: return Theme.textFaint
                        }
                    }
                }
                Label {
                    id: modelLabel
                    text: root.controller.modelState === ChatController.NoModel
                          ? qsTr("Choose a model") : root.controller.modelName
                    color: Theme.text
                    font.weight: Font.Medium
                    elide: Text.ElideRight
                    // Narrow windows: the chip gives way before the buttons.
                    Layout.maximumWidth: Math.max(60, Math.min(280, root.width - 420))
                }
                Icon {
                    name: "chevron-down"
                    size: 14
                    color: Theme.textFaint
                }
            }
            background: Rectangle {
                implicitHeight: 36
                radius: 18
                color: modelChip.down ? Theme.selected : modelChip.hovered ? Theme.hover : Theme.surface
                border.width: 1
                border.color: modelChip.visualFocus ? Theme.accent : Theme.border
            }
        }

        IconButton {
            objectName: "tuningButton"
            iconName: "chip"
            tip: qsTr("Sparse engine tuning")
            onClicked: root.tuningRequested()
        }

        IconButton {
            objectName: "metricsToggle"
            iconName: "activity"
            tip: root.controller.settings.showMetrics ? qsTr("Hide metrics") : qsTr("Show metrics")
            checkable: true
            checked: root.controller.settings.showMetrics
            iconColor: checked ? Theme.accent : Theme.textMuted
            onToggled: root.controller.settings.showMetrics = checked
        }

        IconButton {
            iconName: "sliders"
            tip: qsTr("Chat settings")
            onClicked: root.settingsRequested()
        }

        IconButton {
            iconName: "more"
            tip: qsTr("More actions")
            onClicked: moreMenu.popup()
            AppMenu {
                id: moreMenu
                AppMenuItem {
                    text: qsTr("Regenerate last reply")
                    enabled: root.controller.messages.count > 0 && !root.controller.generating
                    onTriggered: root.controller.regenerate()
                }
                AppMenuSeparator {}
                AppMenuItem {
                    text: qsTr("Export as Markdown…")
                    enabled: root.controller.messages.count > 0
                    onTriggered: root.controller.exportInteractive("markdown")
                }
                AppMenuItem {
                    text: qsTr("Export as JSON…")
                    enabled: root.controller.messages.count > 0
                    onTriggered: root.controller.exportInteractive("json")
                }
                AppMenuItem {
                    text: qsTr("Export all conversations…")
                    onTriggered: root.controller.exportAllInteractive()
                }
                AppMenuItem {
                    text: qsTr("Import conversations…")
                    onTriggered: root.controller.importInteractive()
                }
            }
        }
    }
}
