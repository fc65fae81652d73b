import QtCore
import QtQuick
import QtQuick.Dialogs
import PowerInfer.App

// Asks where to save the open conversation as Markdown or JSON.
FileDialog {
    id: dialog

    required property ChatController controller
    property string format: "markdown"

    function ask(chosenFormat) {
        format = chosenFormat
        const base = (controller.currentTitle !== "" ? controller.currentTitle : "conversation")
                         .replace(/[^\w\- ]+/g, "").trim().replace(/ +/g, "-")
        selectedFile = currentFolder.toString() + "/" + base + (format === "json" ? ".json" : ".md")
        open()
    }

    title: qsTr("Export conversation")
    fileMode: FileDialog.SaveFile
    currentFolder: StandardPaths.writableLocation(StandardPaths.DocumentsLocation)
    defaultSuffix: format === "json" ? "json" : "md"
    nameFilters: format === "json" ? [qsTr("JSON (*.json)")] : [qsTr("Markdown (*.md)")]
    onAccepted: controller.exportConversation(selectedFile, format)
}
