import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import PowerInfer.App

// Conversations: new, search (full text), open, rename, delete.
Rectangle {
    id: root

    required property ChatController controller
    signal conversationChosen

    function focusSearch() {
        search.forceActiveFocus()
        search.selectAll()
    }

    color: Theme.sidebar

    Rectangle {
        anchors.right: parent.right
        width: 1
        height: parent.height
        color: Theme.border
    }

    ColumnLayout {
        anchors.fill: parent
        anchors.margins: 12
        anchors.rightMargin: 13
        spacing: 10

        RowLayout {
            Layout.fillWidth: true
            Layout.topMargin: 4
            Layout.leftMargin: 4
            spacing: 10
            Image {
                source: "icons/logo.svg"
                sourceSize: Qt.size(28, 28)
                Layout.preferredWidth: 28
                Layout.preferredHeight: 28
                Accessible.ignored: true
            }
            Label {
                text: "PowerInfer"
                font.pixelSize: Theme.fontSizeLarge
                font.weight: Font.Bold
                color: Theme.text
                Layout.fillWidth: true
            }
        }

        Button {
            id: newChat
            Layout.fillWidth: true
            Layout.topMargin: 6
            text: qsTr("New chat")
            Accessible.name: qsTr("New chat")
            onClicked: {
                root.controller.newConversation()
                root.conversationChosen()
            }
            contentItem: RowLayout {
                spacing: 8
                Label {
                    text: "+"
                    font.pixelSize: 18
                    color: Theme.accent
                    Layout.leftMargin: 2
                }
                Label {
                    text: newChat.text
                    color: Theme.text
                    font.weight: Font.Medium
                    Layout.fillWidth: true
                }
                Label {
                    text: "Ctrl+N"
                    color: Theme.textFaint
                    font.pixelSize: Theme.fontSizeSmall - 1
                }
            }
            background: Rectangle {
                implicitHeight: 40
                radius: Theme.radius
                color: newChat.down ? Theme.selected : newChat.hovered ? Theme.hover : Theme.surface
                border.width: 1
                border.color: newChat.visualFocus ? Theme.accent : Theme.border
            }
        }

        TextField {
            id: search
            Layout.fillWidth: true
            placeholderText: qsTr("Search conversations")
            Accessible.name: qsTr("Search conversations")
            leftPadding: 34
            color: Theme.text
            selectByMouse: true
            onTextChanged: searchDelay.restart()
            Keys.onEscapePressed: text = ""
            background: Rectangle {
                implicitHeight: 38
                radius: Theme.radius
                color: Theme.surface
                border.width: search.activeFocus ? 2 : 1
                border.color: search.activeFocus ? Theme.accent : Theme.border
            }
            Icon {
                name: "search"
                color: Theme.textFaint
                anchors.left: parent.left
                anchors.leftMargin: 11
                anchors.verticalCenter: parent.verticalCenter
            }
            // Search as the user types, without a query per keystroke.
            Timer {
                id: searchDelay
                interval: 200
                onTriggered: root.controller.searchText = search.text
            }
        }

        Label {
            text: root.controller.searchText !== "" ? qsTr("Results") : qsTr("Recent")
            color: Theme.textFaint
            font.pixelSize: Theme.fontSizeSmall
            font.weight: Font.DemiBold
            font.capitalization: Font.AllUppercase
            font.letterSpacing: 0.6
            Layout.leftMargin: 6
            Layout.topMargin: 6
        }

        ListView {
            id: list
            objectName: "conversationList"
            Layout.fillWidth: true
            Layout.fillHeight: true
            clip: true
            spacing: 2
            model: root.controller.conversations
            boundsBehavior: Flickable.StopAtBounds
            ScrollBar.vertical: ScrollBar {}
            delegate: ConversationDelegate {
                width: ListView.view.width
                controller: root.controller
                onChosen: root.conversationChosen()
                onDeleteRequested: (id, title) => confirmDelete.ask(id, title)
            }

            Label {
                anchors.centerIn: parent
                width: parent.width - 24
                visible: list.count === 0
                horizontalAlignment: Text.AlignHCenter
                wrapMode: Text.Wrap
                color: Theme.textFaint
                text: root.controller.searchText !== "" ? qsTr("No conversation matches.")
                                                        : qsTr("Your conversations will appear here.")
            }
        }
    }

    ConfirmDialog {
        id: confirmDelete

        property var conversationId: 0

        function ask(id, title) {
            conversationId = id
            message = qsTr("Delete “%1”? Its messages cannot be recovered.").arg(title)
            open()
        }

        title: qsTr("Delete conversation")
        confirmText: qsTr("Delete")
        destructive: true
        onAccepted: root.controller.deleteConversation(conversationId)
    }
}
