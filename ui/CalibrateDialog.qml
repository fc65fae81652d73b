import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import PowerInfer.App

// Creates the model's sidecar: pick a corpus and a target sparsity, follow
// the progress, cancel; the model reloads with its sidecar when done.
Dialog {
    id: dialog

    required property ChatController controller
    readonly property SparseController sparse: controller.sparse
    property url corpusFile

    title: qsTr("Calibrate for sparse inference")
    modal: true
    anchors.centerIn: Overlay.overlay
    width: 480
    closePolicy: sparse.calibrating ? Popup.NoAutoClose : Popup.CloseOnEscape

    background: Rectangle {
        color: Theme.surfaceRaised
        radius: Theme.radiusLarge
        border.color: Theme.border
    }

    ColumnLayout {
        anchors.fill: parent
        spacing: 10

        Label {
            objectName: "calibrateWhat"
            text: qsTr("Runs the model over a text and records which FFN neurons fire, then measures "
                       + "on held-out text how much sparsity the model takes (the recommended level). "
                       + "With a GPU it also trains a small predictor per layer. A few minutes for a "
                       + "small model.")
            color: Theme.textMuted
            wrapMode: Text.Wrap
            Layout.fillWidth: true
        }
        ButtonGroup { id: sourceGroup }
        RadioButton {
            id: bundled
            objectName: "corpusBundled"
            text: qsTr("Bundled text (Frankenstein, public domain)")
            checked: true
            ButtonGroup.group: sourceGroup
        }
        RowLayout {
            RadioButton {
                id: ownFile
                text: qsTr("A text file")
                ButtonGroup.group: sourceGroup
            }
            SecondaryButton {
                text: dialog.corpusFile.toString() !== "" ? dialog.corpusFile.toString().replace(/^.*\//, "")
                                                         : qsTr("Choose…")
                enabled: ownFile.checked
                onClicked: {
                    const url = dialog.controller.chooseOpenFile(qsTr("Choose a text corpus"),
                                                                 qsTr("Text (*.txt *.md);;All files (*)"))
                    if (url.toString() !== "")
                        dialog.corpusFile = url
                }
            }
        }
        RadioButton {
            id: conversations
            text: qsTr("My conversations")
            ButtonGroup.group: sourceGroup
        }
        CheckBox {
            id: autoTarget
            objectName: "autoTarget"
            text: qsTr("Recommended level: measured on held-out text (the highest level whose perplexity rises at most 2 %)")
            checked: true
            enabled: !dialog.sparse.calibrating
            contentItem: Label {
                leftPadding: parent.indicator.width + parent.spacing
                text: parent.text
                color: Theme.text
                wrapMode: Text.Wrap
            }
            Layout.fillWidth: true
        }
        RowLayout {
            Layout.fillWidth: true
            visible: !autoTarget.checked
            Label {
                text: qsTr("Target sparsity")
                color: Theme.text
                Layout.fillWidth: true
            }
            Label {
                text: (target.value * 100).toFixed(0) + "%"
                color: Theme.text
                font.family: Theme.monoFamily
            }
        }
        ThemedSlider {
            id: target
            visible: !autoTarget.checked
            Layout.fillWidth: true
            from: 0.2
            to: 0.9
            stepSize: 0.05
            value: 0.5
            Accessible.name: qsTr("Target sparsity")
        }
        CheckBox {
            objectName: "quickCalibration"
            text: qsTr("Quick: %1 tokens instead of 8,192 (faster, a rougher sidecar)")
                  .arg("2,000")
            checked: dialog.sparse.calibrationTokens < 8192
            enabled: !dialog.sparse.calibrating
            onToggled: dialog.sparse.calibrationTokens = checked ? 2000 : 8192
            contentItem: Label {
                leftPadding: parent.indicator.width + parent.spacing
                text: parent.text
                color: Theme.text
                wrapMode: Text.Wrap
            }
            Layout.fillWidth: true
        }
        Label {
            text: qsTr("Afterwards the app compares dense and sparse on this machine and keeps sparse on only if it is faster.")
            color: Theme.textMuted
            font.pixelSize: Theme.fontSizeSmall
            wrapMode: Text.Wrap
            Layout.fillWidth: true
        }

        ColumnLayout {
            visible: dialog.sparse.calibrating || dialog.sparse.calibrationError !== ""
            Layout.fillWidth: true
            ProgressBar {
                objectName: "calibrationProgress"
                Layout.fillWidth: true
                value: dialog.sparse.calibrationProgress
                Accessible.name: qsTr("Calibration progress")
            }
            Label {
                text: dialog.sparse.calibrationError !== ""
                      ? dialog.sparse.calibrationError
                      : qsTr("%1% · %2").arg((dialog.sparse.calibrationProgress * 100).toFixed(0))
                        .arg(dialog.sparse.calibrationEta >= 0
                             ? qsTr("about %1 s left").arg(dialog.sparse.calibrationEta.toFixed(0))
                             : qsTr("estimating…"))
                color: dialog.sparse.calibrationError !== "" ? Theme.danger : Theme.textMuted
                wrapMode: Text.Wrap
                Layout.fillWidth: true
            }
        }

        RowLayout {
            Layout.alignment: Qt.AlignRight
            SecondaryButton {
                text: dialog.sparse.calibrating ? qsTr("Cancel calibration") : qsTr("Close")
                onClicked: dialog.sparse.calibrating ? dialog.sparse.cancelCalibration() : dialog.close()
            }
            PrimaryButton {
                objectName: "startCalibration"
                text: qsTr("Calibrate")
                enabled: !dialog.sparse.calibrating && (!ownFile.checked || dialog.corpusFile.toString() !== "")
                onClicked: dialog.sparse.calibrate(bundled.checked ? "bundled" : ownFile.checked ? "file"
                                                                                                  : "conversations",
                                                   dialog.corpusFile, autoTarget.checked ? -1 : target.value)
            }
        }
    }

    Connections {
        target: dialog.sparse
        function onCalibrationChanged() {
            if (!dialog.sparse.calibrating && dialog.sparse.calibrationError === ""
                    && dialog.sparse.calibrationProgress >= 1)
                dialog.close()
        }
    }

}
