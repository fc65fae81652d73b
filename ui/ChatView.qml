import QtQuick
import QtQuick.Controls
import PowerInfer.App

// The message list. It follows the newest text while a reply streams, and
// stops following as soon as the user scrolls up (until they return to the
// end or send again).
Item {
    id: root

    required property ChatController controller
    signal editRequested(string uid, string text)
    signal suggestionChosen(string text)

    function followTail() {
        list.following = true
        list.toEnd()
    }

    // The loaded model's chat template is not used as is (the file has none,
    // or one that cannot render): replies may be poor, so it stays in view.
    Rectangle {
        id: templateWarning
        objectName: "templateWarning"
        visible: root.controller.templateWarning !== ""
        anchors.left: parent.left
        anchors.right: parent.right
        height: visible ? warningText.implicitHeight + 16 : 0
        color: Qt.rgba(Theme.warning.r, Theme.warning.g, Theme.warning.b, 0.12)
        Label {
            id: warningText
            objectName: "templateWarningText"
            anchors.verticalCenter: parent.verticalCenter
            x: 20
            width: parent.width - 40
            text: root.controller.templateWarning
            wrapMode: Text.Wrap
            color: Theme.text
            font.pixelSize: Theme.fontSizeSmall
        }
    }

    ListView {
        id: list
        objectName: "messageList"

        property bool following: true
        property bool autoScrolling: false

        function nearEnd() {
            return contentY + height >= originY + contentHeight - 48
        }
        function toEnd() {
            autoScrolling = true
            positionViewAtEnd()
            autoScrolling = false
        }

        anchors.fill: parent
        anchors.topMargin: templateWarning.height
        // One row per user message, per segment of a reply and per reply's
        // footer: only the rows near the viewport exist.
        model: ChatRowsModel {
            id: rows
            messages: root.controller.messages
        }
        clip: true
        topMargin: 12
        bottomMargin: 24
        cacheBuffer: 1200
        boundsBehavior: Flickable.StopAtBounds
        Accessible.name: qsTr("Messages")
        Accessible.role: Accessible.List

        delegate: ChatRow {
            width: ListView.view.width
            controller: root.controller
            hoveredMessage: list.hoveredMessage
            onEditRequested: (uid, text) => root.editRequested(uid, text)
        }

        // The message under the pointer, whichever of its rows it is over:
        // its actions show. A handler declared in a Flickable sits on its
        // content item: its position is already in content coordinates
        // (adding contentY to it as well picked a neighbour, or nothing).
        // Qt moves it as the rows scroll under a still pointer.
        readonly property int hoveredMessage: pointer.hovered
            ? rows.messageIndexAt(indexAt(pointer.point.position.x, pointer.point.position.y))
            : -1
        HoverHandler {
            id: pointer
        }

        ScrollBar.vertical: ScrollBar {
            onPressedChanged: list.following = !pressed && list.nearEnd()
        }

        onContentYChanged: if (!autoScrolling && (moving || dragging)) following = nearEnd()
        onMovementEnded: following = nearEnd()
        onContentHeightChanged: if (following) Qt.callLater(toEnd)
        onCountChanged: if (following) Qt.callLater(toEnd)
        // A newly opened conversation starts at its end; one opened from a
        // search hit at the first matching message (at its matching segment).
        Connections {
            target: root.controller
            function onConversationChanged() { root.followTail() }
            function onRevealMessage(message) {
                list.following = false
                // The paragraph with the searched word, in a long reply.
                list.revealRow = rows.firstRowContaining(message, root.controller.searchText)
                Qt.callLater(list.reveal)
            }
        }
        property int revealRow: -1
        function reveal() {
            if (revealRow < 0)
                return
            autoScrolling = true
            positionViewAtIndex(revealRow, ListView.Beginning)
            autoScrolling = false
        }
    }

    EmptyState {
        anchors.fill: parent
        visible: list.count === 0
        controller: root.controller
        onSuggestionChosen: text => root.suggestionChosen(text)
    }

    IconButton {
        anchors.horizontalCenter: parent.horizontalCenter
        anchors.bottom: parent.bottom
        anchors.bottomMargin: 12
        visible: !list.following && list.count > 0 && !list.nearEnd()
        iconName: "chevron-down"
        tip: qsTr("Jump to the latest message")
        iconColor: Theme.text
        background: Rectangle {
            radius: 16
            color: Theme.surfaceRaised
            border.color: Theme.border
        }
        onClicked: root.followTail()
    }
}
