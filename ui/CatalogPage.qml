import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import PowerInfer.App

// Get a model: the curated catalog with fit estimates for this machine and
// downloads, or any https link to a .gguf file.
Dialog {
    id: page

    required property ChatController controller
    readonly property DownloadCatalog catalog: controller.catalog
    readonly property ModelDownloads downloads: controller.downloads

    parent: Overlay.overlay
    anchors.centerIn: parent
    width: Math.min(820, parent ? parent.width - 48 : 820)
    height: Math.min(720, parent ? parent.height - 48 : 720)
    modal: true
    padding: 20
    topPadding: 4
    title: qsTr("Get a model")
    onAboutToShow: page.catalog.ensureBandwidth()

    background: Rectangle {
        radius: Theme.radiusLarge
        color: Theme.surfaceRaised
        border.color: Theme.border
    }
    header: RowLayout {
        Label {
            text: page.title
            font.pixelSize: Theme.fontSizeTitle
            font.weight: Font.DemiBold
            color: Theme.text
            Layout.fillWidth: true
            Layout.margins: 20
            Layout.bottomMargin: 8
        }
        IconButton {
            iconName: "close"
            tip: qsTr("Close")
            onClicked: page.close()
            Layout.rightMargin: 12
        }
    }

    function rowOf(fileName) { return page.downloads.rowOf(fileName) }

    contentItem: ColumnLayout {
        spacing: 10

        Label {
            objectName: "machineText"
            text: page.catalog.machineText
            color: Theme.textMuted
            font.pixelSize: Theme.fontSizeSmall
            wrapMode: Text.Wrap
            Layout.fillWidth: true
        }
        RowLayout {
            spacing: 8
            Layout.fillWidth: true
            TextField {
                id: urlField
                objectName: "urlField"
                placeholderText: qsTr("or paste an https:// link to a .gguf file")
                color: Theme.text
                Layout.fillWidth: true
                Accessible.name: qsTr("Model link")
                onAccepted: addButton.clicked()
            }
            TextField {
                id: shaField
                placeholderText: qsTr("SHA-256 (optional)")
                color: Theme.text
                Layout.preferredWidth: 180
                Accessible.name: qsTr("Expected SHA-256")
            }
            SecondaryButton {
                id: addButton
                text: qsTr("Download")
                enabled: urlField.text.trim() !== ""
                onClicked: {
                    const error = page.catalog.downloadUrl(urlField.text, shaField.text)
                    pasteError.text = error
                    if (error === "") {
                        urlField.text = ""
                        shaField.text = ""
                    }
                }
            }
        }
        Label {
            id: pasteError
            visible: text !== ""
            color: Theme.danger
            font.pixelSize: Theme.fontSizeSmall
            wrapMode: Text.Wrap
            Layout.fillWidth: true
        }
        Label {
            visible: page.catalog.problems !== ""
            text: page.catalog.problems
            color: Theme.warning
            font.pixelSize: Theme.fontSizeSmall
            wrapMode: Text.Wrap
            Layout.fillWidth: true
        }

        ListView {
            id: list
            objectName: "catalogList"
            Layout.fillWidth: true
            Layout.fillHeight: true
            clip: true
            spacing: 6
            model: page.catalog
            ScrollBar.vertical: ScrollBar {}
            delegate: CatalogDelegate {
                width: ListView.view.width
                readonly property BackgroundCalibration calibration: page.controller.backgroundCalibration
                calibrationStatus: installed && calibration.revision >= 0
                                   ? calibration.statusFor(page.controller.models.folder + "/" + fileName) : ""
                canCalibrate: calibration.available && !calibration.running
                onCalibrateRequested: f => {
                    const error = calibration.start(page.controller.models.folder + "/" + f)
                    if (error !== "")
                        pasteError.text = error
                }
                onDownloadRequested: r => {
                    const error = page.catalog.download(r)
                    if (error !== "")
                        pasteError.text = error
                }
                onLoadRequested: f => {
                    page.controller.loadModel(page.controller.models.folder + "/" + f)
                    page.close()
                }
                onPauseRequested: f => page.downloads.pause(page.rowOf(f))
                onResumeRequested: f => page.downloads.resume(page.rowOf(f))
                onCancelRequested: f => page.downloads.cancel(page.rowOf(f))
            }
        }

        // Downloads that are not catalog entries (pasted links).
        Repeater {
            model: page.downloads
            delegate: DownloadRow {
                downloads: page.downloads
                visible: !page.catalogHas(fileName)
                Layout.fillWidth: true
                onRenameRequested: (r, name) => renameDialog.ask(r, name)
            }
        }
    }

    RenameDownloadDialog {
        id: renameDialog
        downloads: page.downloads
    }

    // Whether a file name belongs to a catalog entry (shown in its row).
    function catalogHas(fileName) {
        for (let i = 0; i < page.catalog.count; ++i)
            if (page.catalog.fileNameAt(i) === fileName)
                return true
        return false
    }

    footer: RowLayout {
        spacing: 8
        Label {
            text: qsTr("Files go to %1. Unfinished downloads resume where they stopped, also after a restart.")
                  .arg(page.controller.models.folder)
            color: Theme.textFaint
            font.pixelSize: Theme.fontSizeSmall - 1
            elide: Text.ElideMiddle
            Layout.fillWidth: true
            Layout.leftMargin: 20
            Layout.bottomMargin: 18
        }
        SecondaryButton {
            text: qsTr("Close")
            onClicked: page.close()
            Layout.rightMargin: 20
            Layout.bottomMargin: 18
        }
    }
}
