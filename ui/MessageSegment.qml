import QtQuick
import QtQuick.Controls
import PowerInfer.App

// One part of a reply: Markdown prose, or a code block with a Copy button.
Loader {
    id: segment

    required property ChatController controller
    // A segment's row (ChatRowsModel): only a row whose text changed is laid
    // out again.
    required property string kind
    required property string body
    required property string language

    // A streaming reply's new segment is created off the batch that brought
    // it (asynchronous: in the window's idle time between frames), so that a
    // code block's many items never lengthen one event-loop slice; a reply
    // opened whole loads at once.
    property bool live: false
    asynchronous: live
    sourceComponent: kind === "code" ? codeComponent : proseComponent

    Component {
        id: proseComponent
        TextEdit {
            id: prose
            objectName: "proseText"
            width: segment.width
            text: segment.body
            textFormat: TextEdit.MarkdownText
            readOnly: true
            selectByMouse: true
            wrapMode: TextEdit.Wrap
            color: Theme.text
            selectionColor: Theme.accent
            selectedTextColor: Theme.accentText
            font.family: Theme.fontFamily
            font.pixelSize: Theme.fontSize + 1
            onLinkActivated: link => Qt.openUrlExternally(link)
            Accessible.role: Accessible.StaticText
            // Named once the reply is done, like its message row: a copy of
            // the growing text per batch only fed the garbage collector.
            Accessible.name: segment.live ? "" : segment.body
            // "2." stays "2." (Qt 6.4 numbers every list from 1).
            ListNumbering {
                document: prose.textDocument
                markdown: segment.body
            }
        }
    }

    Component {
        id: codeComponent
        CodeBlock {
            width: segment.width
            code: segment.body
            language: segment.language
            live: segment.live
            onCopyRequested: segment.controller.copyText(segment.body)
        }
    }
}
