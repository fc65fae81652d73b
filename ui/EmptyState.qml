import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import PowerInfer.App

// What a new conversation shows: a greeting and a few prompt suggestions.
Item {
    id: root

    required property ChatController controller
    signal suggestionChosen(string text)

    ColumnLayout {
        anchors.centerIn: parent
        width: Math.min(parent.width - 64, 640)
        spacing: 14

        Image {
            source: "icons/logo.svg"
            sourceSize: Qt.size(56, 56)
            Layout.alignment: Qt.AlignHCenter
            Accessible.ignored: true
        }
        Label {
            text: qsTr("How can I help?")
            font.pixelSize: 26
            font.weight: Font.DemiBold
            color: Theme.text
            Layout.alignment: Qt.AlignHCenter
        }
        Label {
            text: root.controller.modelState === ChatController.Ready
                  ? qsTr("Chatting with %1, running locally on %2.").arg(root.controller.modelName)
                                                                   .arg(root.controller.device)
                  : qsTr("Choose a model to start. Everything runs on this computer.")
            color: Theme.textMuted
            wrapMode: Text.Wrap
            horizontalAlignment: Text.AlignHCenter
            Layout.fillWidth: true
        }

        GridLayout {
            Layout.fillWidth: true
            Layout.topMargin: 18
            columns: 2
            rowSpacing: 10
            columnSpacing: 10
            Repeater {
                model: [
                    qsTr("Explain sparse neural network inference in simple terms."),
                    qsTr("Write a Python function that checks whether a number is prime."),
                    qsTr("Give me three ideas for a weekend project."),
                    qsTr("Summarise the plot of Frankenstein in four sentences.")
                ]
                delegate: Button {
                    id: card
                    required property string modelData
                    Layout.fillWidth: true
                    Layout.preferredHeight: 64
                    Accessible.name: modelData
                    onClicked: root.suggestionChosen(modelData)
                    contentItem: Label {
                        text: card.modelData
                        wrapMode: Text.Wrap
                        color: Theme.textMuted
                        verticalAlignment: Text.AlignVCenter
                        maximumLineCount: 2
                        elide: Text.ElideRight
                    }
                    padding: 14
                    background: Rectangle {
                        radius: Theme.radius
                        color: card.hovered ? Theme.hover : Theme.surface
                        border.color: card.visualFocus ? Theme.accent : Theme.border
                    }
                }
            }
        }
    }
}
