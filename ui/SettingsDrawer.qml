import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import PowerInfer.App

// Per-conversation system prompt, sampling settings, appearance, the
// local API server switch and the remote server.
Drawer {
    id: drawer

    required property ChatController controller
    readonly property AppSettings settings: controller.settings

    edge: Qt.RightEdge
    width: 380
    padding: 0

    background: Rectangle {
        color: Theme.surfaceRaised
        Rectangle {
            width: 1
            height: parent.height
            color: Theme.border
        }
    }

    component SectionTitle: Label {
        color: Theme.textFaint
        font.pixelSize: Theme.fontSizeSmall
        font.weight: Font.DemiBold
        font.capitalization: Font.AllUppercase
        font.letterSpacing: 0.6
        Layout.topMargin: 10
    }

    component SliderRow: ColumnLayout {
        id: sliderRow
        property string label
        property alias from: slider.from
        property alias to: slider.to
        property alias stepSize: slider.stepSize
        property real value
        property int decimals: 2
        signal moved(real value)
        Layout.fillWidth: true
        spacing: 2
        RowLayout {
            Layout.fillWidth: true
            Label {
                text: sliderRow.label
                color: Theme.text
                Layout.fillWidth: true
            }
            Label {
                text: sliderRow.value.toFixed(sliderRow.decimals)
                color: Theme.textMuted
                font.family: Theme.monoFamily
            }
        }
        ThemedSlider {
            id: slider
            Layout.fillWidth: true
            // The theme's colours set on the control itself: Qt 6.4 does not pass a
            // palette change on to controls inside a popup (this drawer), so they
            // kept the colours they were created with until it was reopened.
            palette.window: Theme.surfaceRaised
            palette.base: Theme.surface
            palette.text: Theme.text
            palette.button: Theme.surfaceRaised
            palette.buttonText: Theme.text
            palette.highlight: Theme.accent
            palette.highlightedText: Theme.accentText
            palette.mid: Theme.border
            palette.dark: Theme.textMuted
            palette.light: Theme.surfaceRaised
            palette.midlight: Theme.border
            value: sliderRow.value
            Accessible.name: sliderRow.label
            onMoved: sliderRow.moved(value)
        }
    }

    ScrollView {
        objectName: "settingsScroll"
        anchors.fill: parent
        contentWidth: availableWidth

        ColumnLayout {
            width: drawer.width - 48
            x: 24
            spacing: 10

            RowLayout {
                Layout.fillWidth: true
                Layout.topMargin: 18
                Label {
                    text: qsTr("Chat settings")
                    font.pixelSize: Theme.fontSizeTitle
                    font.weight: Font.DemiBold
                    color: Theme.text
                    Layout.fillWidth: true
                }
                IconButton {
                    iconName: "close"
                    tip: qsTr("Close")
                    onClicked: drawer.close()
                }
            }

            SectionTitle {
                text: qsTr("System prompt")
            }
            TextArea {
                id: systemPrompt
                Layout.fillWidth: true
                Layout.preferredHeight: 110
                wrapMode: TextEdit.Wrap
                placeholderText: qsTr("For this conversation, e.g. “You are a concise assistant.”")
                text: drawer.controller.systemPrompt
                color: Theme.text
                selectByMouse: true
                Accessible.name: qsTr("System prompt")
                onEditingFinished: drawer.controller.systemPrompt = text
                background: Rectangle {
                    radius: 8
                    color: Theme.surface
                    border.color: systemPrompt.activeFocus ? Theme.accent : Theme.border
                }
            }

            SectionTitle {
                text: qsTr("Sampling")
            }
            SliderRow {
                label: qsTr("Temperature")
                from: 0
                to: 2
                stepSize: 0.05
                value: drawer.settings.temperature
                onMoved: v => drawer.settings.temperature = v
            }
            SliderRow {
                label: qsTr("Top-p")
                from: 0
                to: 1
                stepSize: 0.01
                value: drawer.settings.topP
                onMoved: v => drawer.settings.topP = v
            }
            RowLayout {
                Layout.fillWidth: true
                Label {
                    text: qsTr("Top-k")
                    color: Theme.text
                    Layout.fillWidth: true
                }
                ThemedSpinBox {
                    from: 0
                    to: 1000
                    editable: true
                    value: drawer.settings.topK
                    Accessible.name: qsTr("Top-k")
                    onValueModified: drawer.settings.topK = value
                }
            }
            RowLayout {
                Layout.fillWidth: true
                Label {
                    text: qsTr("Max tokens")
                    color: Theme.text
                    Layout.fillWidth: true
                }
                ThemedSpinBox {
                    from: 1
                    to: 32768
                    stepSize: 64
                    editable: true
                    value: drawer.settings.maxTokens
                    Accessible.name: qsTr("Max tokens")
                    onValueModified: drawer.settings.maxTokens = value
                }
            }
            SliderRow {
                objectName: "repeatPenaltyRow"
                label: qsTr("Repeat penalty")
                from: 1
                to: 2
                stepSize: 0.05
                value: drawer.settings.repeatPenalty
                onMoved: v => drawer.settings.repeatPenalty = v
                ToolTip.visible: repeatHover.hovered
                ToolTip.text: qsTr("Above 1.0 makes recently used tokens less likely (1.1 is a common choice; 1.0 = off).")
                HoverHandler {
                    id: repeatHover
                }
            }
            SecondaryButton {
                text: qsTr("Reset to defaults")
                onClicked: drawer.settings.resetSampling()
            }

            SectionTitle {
                text: qsTr("Context")
            }
            RowLayout {
                Layout.fillWidth: true
                Label {
                    text: qsTr("Context length (tokens)")
                    color: Theme.text
                    Layout.fillWidth: true
                }
                ThemedSpinBox {
                    id: contextBox
                    objectName: "contextLengthBox"
                    from: 256
                    to: 131072
                    stepSize: 256
                    editable: true
                    value: drawer.settings.contextLength
                    textFromValue: v => String(v)
                    valueFromText: t => parseInt(t)
                    Accessible.name: qsTr("Context length")
                    onValueModified: drawer.settings.contextLength = value
                }
            }
            Label {
                objectName: "contextMemory"
                Layout.fillWidth: true
                text: drawer.controller.contextMemoryText(drawer.settings.contextLength)
                      + "\n" + qsTr("Longer conversations keep their newest turns; the chat says when older ones were left out.")
                color: Theme.textMuted
                font.pixelSize: Theme.fontSizeSmall
                wrapMode: Text.Wrap
            }
            SecondaryButton {
                objectName: "applyContextButton"
                visible: drawer.controller.modelState === ChatController.Ready
                         && drawer.settings.contextLength !== drawer.controller.requestedContextLength
                text: qsTr("Reload the model with this context")
                onClicked: drawer.controller.loadModel(drawer.controller.modelPath)
            }

            SectionTitle {
                text: qsTr("Appearance")
            }
            ComboBox {
                id: themeBox
                palette.window: Theme.surfaceRaised
                palette.base: Theme.surface
                palette.text: Theme.text
                palette.button: Theme.surfaceRaised
                palette.buttonText: Theme.text
                palette.highlight: Theme.accent
                palette.highlightedText: Theme.accentText
                palette.mid: Theme.border
                palette.dark: Theme.textMuted
                palette.light: Theme.surfaceRaised
                palette.midlight: Theme.border
                Layout.fillWidth: true
                textRole: "label"
                valueRole: "mode"
                model: [
                    { mode: "system", label: qsTr("Follow the system") },
                    { mode: "light", label: qsTr("Light") },
                    { mode: "dark", label: qsTr("Dark") }
                ]
                Accessible.name: qsTr("Theme")
                objectName: "themeBox"
                // The Basic style draws the current row in the highlighted
                // text colour (white) on a white row: "Follow the system"
                // was invisible. The rows use the theme's colours instead.
                delegate: ItemDelegate {
                    id: themeRow
                    required property var modelData
                    required property int index
                    width: themeBox.width
                    text: modelData.label
                    highlighted: themeBox.highlightedIndex === index
                    font.family: Theme.fontFamily
                    font.pixelSize: Theme.fontSize
                    font.weight: themeBox.currentIndex === index ? Font.DemiBold : Font.Normal
                    contentItem: Text {
                        text: themeRow.text
                        font: themeRow.font
                        color: Theme.text
                        elide: Text.ElideRight
                        verticalAlignment: Text.AlignVCenter
                    }
                    background: Rectangle {
                        color: themeRow.highlighted || themeRow.down ? Theme.hover : "transparent"
                        radius: 6
                    }
                }
                popup.background: Rectangle {
                    color: Theme.surfaceRaised
                    border.width: 1
                    border.color: Theme.border
                    radius: 8
                }
                Component.onCompleted: currentIndex = indexOfValue(drawer.settings.themeMode)
                onActivated: drawer.settings.themeMode = currentValue
            }

            SectionTitle {
                text: qsTr("Local API server")
            }
            RowLayout {
                Layout.fillWidth: true
                Label {
                    text: qsTr("Serve the loaded model to other programs on this computer (OpenAI-compatible)")
                    color: Theme.text
                    wrapMode: Text.Wrap
                    Layout.fillWidth: true
                }
                ThemedSwitch {
                    objectName: "apiServerSwitch"
                    checked: drawer.settings.apiServerEnabled
                    Accessible.name: qsTr("Local API server")
                    onToggled: drawer.settings.apiServerEnabled = checked
                }
            }
            RowLayout {
                Layout.fillWidth: true
                Label {
                    text: qsTr("Port")
                    color: Theme.text
                    Layout.fillWidth: true
                }
                ThemedSpinBox {
                    from: 1024
                    to: 65535
                    editable: true
                    value: drawer.settings.apiServerPort
                    textFromValue: v => String(v)
                    valueFromText: t => parseInt(t)
                    Accessible.name: qsTr("API server port")
                    onValueModified: drawer.settings.apiServerPort = value
                }
            }
            RowLayout {
                Layout.fillWidth: true
                Label {
                    text: qsTr("API key")
                    color: Theme.text
                }
                ThemedTextField {
                    objectName: "apiServerKey"
                    Layout.fillWidth: true
                    text: drawer.settings.apiServerKey
                    placeholderText: qsTr("none: any program on this computer may call it")
                    echoMode: TextInput.PasswordEchoOnEdit
                    color: Theme.text
                    Accessible.name: qsTr("API key")
                    onEditingFinished: drawer.settings.apiServerKey = text
                }
            }
            RowLayout {
                id: apiStatus
                readonly property LocalApiServer api: drawer.controller.apiServer
                Layout.fillWidth: true
                visible: drawer.settings.apiServerEnabled
                Label {
                    objectName: "apiServerStatus"
                    text: apiStatus.api.running ? apiStatus.api.url : apiStatus.api.error
                    color: apiStatus.api.running ? Theme.success : Theme.danger
                    font.family: apiStatus.api.running ? Theme.monoFamily : Theme.fontFamily
                    textFormat: Text.PlainText
                    wrapMode: Text.Wrap
                    Layout.fillWidth: true
                    Accessible.name: apiStatus.api.running ? qsTr("API server address") : qsTr("API server error")
                }
                IconButton {
                    visible: apiStatus.api.running
                    iconName: "copy"
                    tip: qsTr("Copy the address")
                    onClicked: drawer.controller.copyText(apiStatus.api.url)
                }
            }
            SectionTitle {
                text: qsTr("Remote server")
            }
            RemoteServerSection {
                controller: drawer.controller
                Layout.fillWidth: true
            }
            Item {
                Layout.preferredHeight: 24
            }
        }
    }
}
