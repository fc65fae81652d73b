import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import PowerInfer.App

// The remote backend in the settings: an OpenAI-compatible server (vLLM, a
// llama.cpp server, Ollama, powerinfer-server on another machine), its model
// from /v1/models, and an API key kept in the OS keychain only.
ColumnLayout {
    id: section

    required property ChatController controller
    readonly property AppSettings settings: controller.settings

    spacing: 8


    Label {
        text: qsTr("Chat through a server on another machine instead of a local model. Conversations are stored here as usual.")
        color: Theme.textMuted
        font.pixelSize: Theme.fontSizeSmall
        wrapMode: Text.Wrap
        Layout.fillWidth: true
    }
    ThemedTextField {
        id: urlField
        objectName: "remoteUrl"
        text: section.settings.remoteUrl
        placeholderText: qsTr("http://192.168.1.20:8080/v1")
        color: Theme.text
        Layout.fillWidth: true
        Accessible.name: qsTr("Server address")
    }
    ThemedTextField {
        id: keyField
        objectName: "remoteApiKey"
        placeholderText: qsTr("API key (optional; kept in the OS keychain)")
        echoMode: TextInput.Password
        color: Theme.text
        Layout.fillWidth: true
        Accessible.name: qsTr("Remote API key")
    }
    RowLayout {
        Layout.fillWidth: true
        spacing: 8
        ComboBox {
            id: modelBox
            objectName: "remoteModel"
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
            model: section.controller.remoteModels
            Layout.fillWidth: true
            displayText: currentIndex >= 0 ? currentText
                         : section.settings.remoteModel !== "" ? section.settings.remoteModel
                         : qsTr("model: the server's first")
            Accessible.name: qsTr("Remote model")
        }
        SecondaryButton {
            text: qsTr("List models")
            enabled: urlField.text.trim() !== "" && !section.controller.remoteBusy
            onClicked: section.controller.listRemoteModels(urlField.text, keyField.text)
        }
    }
    PrimaryButton {
        objectName: "remoteConnect"
        text: section.controller.isRemote ? qsTr("Reconnect") : qsTr("Connect")
        enabled: urlField.text.trim() !== ""
        Layout.alignment: Qt.AlignRight
        onClicked: {
            section.controller.connectRemote(urlField.text,
                                             modelBox.currentIndex >= 0 ? modelBox.currentText
                                                                        : section.settings.remoteModel,
                                             keyField.text)
            keyField.text = ""
        }
    }
    Label {
        objectName: "remoteStatus"
        visible: text !== ""
        text: section.controller.remoteStatus
        color: Theme.textMuted
        font.pixelSize: Theme.fontSizeSmall
        wrapMode: Text.Wrap
        Layout.fillWidth: true
    }
    Label {
        objectName: "keychainStatus"
        visible: text !== ""
        text: section.controller.keychainStatus
        color: section.controller.keychainStatus.indexOf("not available") >= 0
               || section.controller.keychainStatus.indexOf("no OS keychain") >= 0
               ? Theme.warning : Theme.textMuted
        font.pixelSize: Theme.fontSizeSmall
        wrapMode: Text.Wrap
        Layout.fillWidth: true
    }
}
