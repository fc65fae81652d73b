import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import PowerInfer.App

// A fenced code block: language label, Copy button, monospace body.
Rectangle {
    id: block

    property string code
    property string language
    // Still streaming: its accessible name waits for the whole code.
    property bool live: false
    signal copyRequested

    implicitHeight: header.height + scroller.height + 24
    radius: Theme.radius
    color: Theme.codeBackground
    border.color: Theme.border

    Rectangle {
        id: header
        width: parent.width
        height: 34
        radius: Theme.radius
        color: Theme.codeHeader
        // Square off the header's bottom corners.
        Rectangle {
            anchors.bottom: parent.bottom
            width: parent.width
            height: parent.radius
            color: parent.color
        }
        RowLayout {
            anchors.fill: parent
            anchors.leftMargin: 14
            anchors.rightMargin: 6
            Label {
                text: block.language !== "" ? block.language : qsTr("code")
                color: Theme.textMuted
                font.family: Theme.monoFamily
                font.pixelSize: Theme.fontSizeSmall
                Layout.fillWidth: true
            }
            IconButton {
                id: copyButton
                objectName: "copyCodeButton"
                property bool copied: false
                iconName: copied ? "check" : "copy"
                text: copied ? qsTr("Copied") : qsTr("Copy")
                tip: qsTr("Copy code")
                implicitHeight: 26
                padding: 4
                leftPadding: 8
                rightPadding: 8
                onClicked: {
                    block.copyRequested()
                    copied = true
                    resetCopied.restart()
                }
                Timer {
                    id: resetCopied
                    interval: 1500
                    onTriggered: copyButton.copied = false
                }
            }
        }
    }

    // Long lines scroll sideways instead of wrapping back to column 0.
    Flickable {
        id: scroller
        objectName: "codeScroller"
        anchors.top: header.bottom
        anchors.left: parent.left
        anchors.right: parent.right
        anchors.margins: 12
        anchors.leftMargin: 14
        height: body.implicitHeight + (hbar.visible ? hbar.height + 2 : 0)
        contentWidth: body.implicitWidth
        contentHeight: body.implicitHeight
        flickableDirection: Flickable.HorizontalFlick
        boundsBehavior: Flickable.StopAtBounds
        clip: true
        interactive: contentWidth > width
        ScrollBar.horizontal: ScrollBar {
            id: hbar
            policy: scroller.contentWidth > scroller.width ? ScrollBar.AlwaysOn : ScrollBar.AlwaysOff
            visible: policy === ScrollBar.AlwaysOn
        }

        TextEdit {
            id: body
            text: block.code
            textFormat: TextEdit.PlainText
            readOnly: true
            selectByMouse: true
            wrapMode: TextEdit.NoWrap
            color: Theme.codeText
            selectionColor: Theme.accent
            font.family: Theme.monoFamily
            font.pixelSize: Theme.fontSize - 1
            Accessible.role: Accessible.StaticText
            Accessible.name: block.live ? "" : qsTr("Code: %1").arg(block.code)
        }
        // Keywords, strings, comments and numbers of the fence's language.
        CodeHighlighter {
            objectName: "codeHighlighter"
            document: body.textDocument
            language: block.language
            keywordColor: Theme.syntaxKeyword
            stringColor: Theme.syntaxString
            commentColor: Theme.syntaxComment
            numberColor: Theme.syntaxNumber
        }
    }
}
