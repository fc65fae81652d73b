import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import PowerInfer.App

// One sidebar row: title, last activity, search snippet; rename inline.
ItemDelegate {
    id: row

    required property ChatController controller
    required property int index
    required property var conversationId
    required property string title
    required property string when
    required property string snippet

    readonly property bool current: conversationId === controller.currentConversationId
    property bool renaming: false

    signal chosen
    signal deleteRequested(var id, string title)

    function startRename() {
        renaming = true
        editor.text = title
        editor.forceActiveFocus()
        editor.selectAll()
    }

    height: implicitHeight
    padding: 10
    topPadding: 9
    bottomPadding: 9
    Accessible.name: title
    Accessible.role: Accessible.ListItem
    onClicked: {
        controller.openConversation(conversationId)
        chosen()
    }

    background: Rectangle {
        radius: 8
        color: row.current ? Theme.selected : row.hovered ? Theme.hover : "transparent"
    }

    contentItem: RowLayout {
        spacing: 6
        ColumnLayout {
            Layout.fillWidth: true
            spacing: 2
            RowLayout {
                Layout.fillWidth: true
                visible: !row.renaming
                Label {
                    text: row.title
                    elide: Text.ElideRight
                    color: Theme.text
                    font.weight: row.current ? Font.DemiBold : Font.Normal
                    Layout.fillWidth: true
                }
                Label {
                    text: row.when
                    color: Theme.textFaint
                    font.pixelSize: Theme.fontSizeSmall - 1
                    visible: !row.hovered
                }
            }
            TextField {
                id: editor
                visible: row.renaming
                Layout.fillWidth: true
                Accessible.name: qsTr("Conversation title")
                selectByMouse: true
                onAccepted: {
                    row.controller.renameConversation(row.conversationId, text)
                    row.renaming = false
                }
                Keys.onEscapePressed: row.renaming = false
                onActiveFocusChanged: if (!activeFocus) row.renaming = false
            }
            Label {
                visible: row.snippet !== ""
                text: row.snippet
                color: Theme.textMuted
                font.pixelSize: Theme.fontSizeSmall
                elide: Text.ElideRight
                maximumLineCount: 2
                wrapMode: Text.Wrap
                Layout.fillWidth: true
            }
        }
        IconButton {
            visible: row.hovered && !row.renaming
            iconName: "more"
            tip: qsTr("Conversation actions")
            implicitWidth: 26
            implicitHeight: 26
            padding: 4
            onClicked: menu.popup()
            AppMenu {
                id: menu
                objectName: "conversationMenu"
                AppMenuItem {
                    text: qsTr("Rename")
                    onTriggered: row.startRename()
                }
                AppMenuItem {
                    text: qsTr("Delete…")
                    destructive: true
                    onTriggered: row.deleteRequested(row.conversationId, row.title)
                }
            }
        }
    }
}
