import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import PowerInfer.App

// The sparse engine's knobs, applied live between tokens and saved in the
// model's config.json; a placement preview while a slider moves; "Compare
// with dense". Non-modal, from the left, so the chat and the metrics stay
// visible while tuning.
Drawer {
    id: drawer

    required property ChatController controller
    readonly property SparseController sparse: controller.sparse
    readonly property bool ready: controller.modelState === ChatController.Ready
    signal calibrateRequested

    edge: Qt.LeftEdge
    width: 360
    modal: false
    dim: false
    padding: 0

    background: Rectangle {
        color: Theme.surfaceRaised
        Rectangle {
            anchors.right: parent.right
            width: 1
            height: parent.height
            color: Theme.border
        }
    }

    component Knob: ColumnLayout {
        id: knob
        property string key
        property string label
        property string help
        property string defaultText
        property real from
        property real to
        property real stepSize: 1
        property real value
        property int decimals: 0
        Layout.fillWidth: true
        spacing: 2
        RowLayout {
            Layout.fillWidth: true
            Label {
                text: knob.label
                color: Theme.text
                font.weight: Font.Medium
                Layout.fillWidth: true
            }
            Label {
                text: slider.value.toFixed(knob.decimals)
                color: Theme.text
                font.family: Theme.monoFamily
            }
        }
        Slider {
            id: slider
            objectName: "knob_" + knob.key
            Layout.fillWidth: true
            from: knob.from
            to: knob.to
            stepSize: knob.stepSize
            snapMode: Slider.SnapAlways
            value: knob.value
            // Without a sidecar the knobs have nothing to act on.
            enabled: drawer.ready && drawer.sparse.metrics.hasSidecar
            // Dimmed when it has nothing to act on (the Basic style's disabled
            // colours alone were close to the enabled ones in the light theme).
            opacity: enabled ? 1 : 0.4
            Accessible.name: knob.label
            Accessible.description: knob.help
            // Preview while dragging, apply on release (or a key press).
            onMoved: pressed ? drawer.sparse.previewValue(knob.key, value)
                             : drawer.sparse.setValue(knob.key, value)
            onPressedChanged: if (!pressed) drawer.sparse.setValue(knob.key, value)
        }
        Label {
            text: knob.help + " " + qsTr("Default %1.").arg(knob.defaultText)
            color: Theme.textMuted
            font.pixelSize: Theme.fontSizeSmall
            wrapMode: Text.Wrap
            Layout.fillWidth: true
        }
    }

    ScrollView {
        objectName: "tuningScroll"
        anchors.fill: parent
        contentWidth: availableWidth

        ColumnLayout {
            width: drawer.width - 40
            x: 20
            spacing: 12

            RowLayout {
                Layout.fillWidth: true
                Layout.topMargin: 16
                Label {
                    text: qsTr("Sparse engine tuning")
                    font.pixelSize: Theme.fontSizeTitle
                    font.weight: Font.DemiBold
                    color: Theme.text
                    Layout.fillWidth: true
                }
                IconButton {
                    iconName: "close"
                    tip: qsTr("Close tuning")
                    onClicked: drawer.close()
                }
            }
            Label {
                text: qsTr("Changes apply before the next token, even mid-reply.")
                color: Theme.textMuted
                wrapMode: Text.Wrap
                Layout.fillWidth: true
            }

            RowLayout {
                Layout.fillWidth: true
                Label {
                    text: qsTr("Sparse inference")
                    color: Theme.text
                    font.weight: Font.Medium
                    Layout.fillWidth: true
                }
                Switch {
                    objectName: "sparseSwitch"
                    checked: drawer.sparse.sparseEnabled && drawer.sparse.metrics.hasSidecar
                    enabled: drawer.ready && drawer.sparse.metrics.hasSidecar
                    Accessible.name: qsTr("Sparse inference")
                    onToggled: drawer.sparse.setValue("sparse", checked)
                }
            }
            Label {
                text: drawer.sparse.metrics.hasSidecar
                      ? qsTr("Off = dense, the exact reference path.")
                      : qsTr("This model has no sidecar yet, so it runs dense.")
                color: Theme.textMuted
                font.pixelSize: Theme.fontSizeSmall
                wrapMode: Text.Wrap
                Layout.fillWidth: true
            }
            SecondaryButton {
                objectName: "tuningCalibrate"
                visible: drawer.ready && !drawer.sparse.metrics.hasSidecar
                text: qsTr("Calibrate…")
                onClicked: drawer.calibrateRequested()
            }

            Knob {
                key: "hot_neuron_threshold"
                label: qsTr("Hot-neuron threshold")
                help: qsTr("Share of each layer's activation mass kept on the device.")
                defaultText: "0.85"
                from: 0.05; to: 1; stepSize: 0.01; decimals: 2
                value: drawer.sparse.hotNeuronThreshold
            }
            Knob {
                key: "predictor_threshold"
                label: qsTr("Predictor threshold")
                help: qsTr("Probability above which a neuron is computed; lower = safer, slower.")
                defaultText: "0.5"
                from: 0.05; to: 0.95; stepSize: 0.01; decimals: 2
                value: drawer.sparse.predictorThreshold
            }
            Knob {
                key: "activation_sparsity"
                label: qsTr("Activation sparsity (CPU)")
                help: qsTr("Share of FFN neurons skipped per token by exact activity on the CPU; -1 = the calibrated level. Higher is faster and less exact.")
                defaultText: "-1"
                from: -1; to: 0.9; stepSize: 0.05; decimals: 2
                value: drawer.sparse.activationSparsity
            }
            Label {
                visible: drawer.sparse.metrics.simulated
                text: qsTr("No GPU holds neurons: the hot-neuron threshold, prefetch depth and cache window have no effect; the CPU computes what is active exactly.")
                color: Theme.textMuted
                font.pixelSize: Theme.fontSizeSmall
                wrapMode: Text.Wrap
                Layout.fillWidth: true
            }
            Knob {
                key: "prefetch_depth"
                label: qsTr("Prefetch depth")
                help: qsTr("Layers ahead whose predicted cold neurons are staged.")
                defaultText: "2"
                from: 0; to: 8
                value: drawer.sparse.prefetchDepth
            }
            Knob {
                key: "cache_window_size"
                label: qsTr("Cache window")
                help: qsTr("Tokens a cold neuron stays cached on the device after firing.")
                defaultText: "8"
                from: 0; to: 64
                value: drawer.sparse.cacheWindowSize
            }
            RowLayout {
                Layout.fillWidth: true
                Label {
                    text: qsTr("Device budget (MiB)")
                    color: Theme.text
                    font.weight: Font.Medium
                    Layout.fillWidth: true
                }
                SpinBox {
                    objectName: "vramBudget"
                    from: -1
                    to: 1048576
                    stepSize: 64
                    editable: true
                    enabled: drawer.ready
                    value: drawer.sparse.vramBudgetMb
                    textFromValue: v => v < 0 ? qsTr("auto") : v === 0 ? qsTr("none") : String(v)
                    valueFromText: t => t === qsTr("auto") ? -1 : t === qsTr("none") ? 0 : parseInt(t)
                    Accessible.name: qsTr("Device memory budget in MiB")
                    onValueModified: drawer.sparse.setValue("vram_budget_mb", value)
                }
            }
            Label {
                text: qsTr("What the placement may use on the device: auto = free memory minus 512 MiB, none = everything on the CPU.")
                color: Theme.textMuted
                font.pixelSize: Theme.fontSizeSmall
                wrapMode: Text.Wrap
                Layout.fillWidth: true
            }

            Rectangle {
                objectName: "placementPreview"
                Layout.fillWidth: true
                implicitHeight: previewColumn.implicitHeight + 20
                radius: Theme.radius
                color: Theme.surface
                border.color: Theme.border
                Accessible.role: Accessible.StaticText
                Accessible.name: previewText.text
                ColumnLayout {
                    id: previewColumn
                    anchors.fill: parent
                    anchors.margins: 10
                    spacing: 2
                    Label {
                        text: qsTr("Placement preview")
                        color: Theme.text
                        font.weight: Font.Medium
                    }
                    Label {
                        id: previewText
                        objectName: "previewText"
                        text: drawer.sparse.previewAvailable
                              ? qsTr("%L1 of %L2 neurons hot · %3 MiB on the device%4")
                                .arg(drawer.sparse.previewHotNeurons).arg(drawer.sparse.previewTotalNeurons)
                                .arg((drawer.sparse.previewDeviceBytes / 1048576).toFixed(1))
                                .arg(drawer.sparse.previewBudgetLimited ? qsTr(" (budget-limited)") : "")
                              : (drawer.sparse.previewNote !== "" ? drawer.sparse.previewNote
                                                                  : qsTr("No preview yet."))
                        color: Theme.textMuted
                        wrapMode: Text.Wrap
                        Layout.fillWidth: true
                    }
                }
            }

            Label {
                text: qsTr("Saved in %1").arg(drawer.sparse.configPath)
                visible: drawer.sparse.configPath !== ""
                color: drawer.sparse.configError !== "" ? Theme.danger : Theme.textFaint
                font.pixelSize: 11
                wrapMode: Text.WrapAnywhere
                Layout.fillWidth: true
            }
            SecondaryButton {
                objectName: "resetTuning"
                text: qsTr("Reset to defaults")
                enabled: drawer.ready
                onClicked: drawer.sparse.resetToDefaults()
            }

            CompareBox {
                controller: drawer.controller
                Layout.fillWidth: true
                Layout.topMargin: 6
            }
            Item {
                Layout.preferredHeight: 16
            }
        }
    }
}
