import QtQuick

// Three pulsing dots while the first token of a reply is awaited.
Row {
    spacing: 5
    height: 20
    Accessible.name: qsTr("The assistant is thinking")
    Repeater {
        model: 3
        delegate: Rectangle {
            required property int index
            width: 7
            height: 7
            radius: 3.5
            y: 7
            color: Theme.textMuted
            SequentialAnimation on opacity {
                loops: Animation.Infinite
                running: visible
                PauseAnimation {
                    duration: index * 160
                }
                NumberAnimation {
                    from: 0.25
                    to: 1
                    duration: 320
                }
                NumberAnimation {
                    from: 1
                    to: 0.25
                    duration: 320
                }
                PauseAnimation {
                    duration: (2 - index) * 160
                }
            }
        }
    }
}
