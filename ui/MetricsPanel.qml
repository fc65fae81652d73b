import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import PowerInfer.App

// The engine's live numbers beside the chat: hit rate and recall over the
// last tokens, a layers x tokens heatmap, speeds, the time split, memory.
Rectangle {
    id: root

    required property ChatController controller
    readonly property SparseController sparse: controller.sparse
    readonly property MetricsModel metrics: sparse.metrics
    readonly property bool ready: controller.modelState === ChatController.Ready
    signal calibrateRequested
    signal tuningRequested
    signal closeRequested

    function mib(bytes) {
        return bytes >= 1024 * 1024 * 1024 ? (bytes / 1073741824).toFixed(2) + " GiB"
                                            : (bytes / 1048576).toFixed(bytes < 10485760 ? 1 : 0) + " MiB"
    }
    function pct(v) { return (v * 100).toFixed(1) + "%" }
    // Sparse figures need a sparse token first (before it: "–", not 0 %).
    readonly property bool haveSparse: metrics.sparse && metrics.count > 0
    // A real accelerator holds the hot part (not the CPU device that stands
    // in for one on a machine without a GPU): the GPU-only figures apply.
    readonly property bool onDevice: !metrics.simulated

    color: Theme.sidebar
    Accessible.role: Accessible.Pane
    Accessible.name: qsTr("Engine metrics")

    Rectangle {
        width: 1
        height: parent.height
        color: Theme.border
    }

    component SectionTitle: Label {
        color: Theme.textFaint
        font.pixelSize: Theme.fontSizeSmall
        font.weight: Font.DemiBold
        font.capitalization: Font.AllUppercase
        font.letterSpacing: 0.6
        Layout.topMargin: 8
    }

    // Every figure says what it is and what a good value is (hover).
    component Stat: ColumnLayout {
        id: stat
        property string label
        property string value
        property string tip
        spacing: 0
        ToolTip.visible: statHover.hovered && tip !== ""
        ToolTip.text: tip
        ToolTip.delay: 400
        HoverHandler {
            id: statHover
        }
        Layout.fillWidth: true
        Accessible.role: Accessible.StaticText
        Accessible.name: label + ": " + value
        Label {
            text: parent.value
            color: Theme.text
            font.pixelSize: Theme.fontSizeLarge
            font.weight: Font.DemiBold
            font.family: Theme.monoFamily
        }
        Label {
            text: parent.label
            color: Theme.textMuted
            font.pixelSize: 11
        }
    }

    ScrollView {
        anchors.fill: parent
        anchors.leftMargin: 1
        contentWidth: availableWidth

        ColumnLayout {
            width: root.width - 33
            x: 16
            spacing: 8

            RowLayout {
                Layout.fillWidth: true
                Layout.topMargin: 14
                Label {
                    text: qsTr("Engine metrics")
                    font.pixelSize: Theme.fontSizeLarge
                    font.weight: Font.DemiBold
                    color: Theme.text
                    Layout.fillWidth: true
                }
                IconButton {
                    objectName: "openTuning"
                    iconName: "sliders"
                    tip: qsTr("Tune the sparse engine")
                    onClicked: root.tuningRequested()
                }
                IconButton {
                    objectName: "closeMetrics"
                    iconName: "close"
                    tip: qsTr("Close the metrics panel")
                    onClicked: root.closeRequested()
                }
            }

            // After a calibration: what the dense/sparse comparison measured.
            Label {
                objectName: "recommendation"
                visible: root.sparse.recommendation !== ""
                text: root.sparse.recommendation
                color: root.sparse.recommendSparse ? Theme.success : Theme.text
                wrapMode: Text.Wrap
                font.pixelSize: Theme.fontSizeSmall
                Layout.fillWidth: true
            }

            // Dense (no sidecar, or switched off): say so, and offer the fix.
            Rectangle {
                objectName: "denseNotice"
                visible: root.ready && !root.metrics.sparse
                Layout.fillWidth: true
                implicitHeight: denseColumn.implicitHeight + 20
                radius: Theme.radius
                color: Theme.accentSoft
                ColumnLayout {
                    id: denseColumn
                    anchors.fill: parent
                    anchors.margins: 10
                    spacing: 6
                    Label {
                        text: root.controller.isRemote ? qsTr("Remote server")
                              : root.metrics.moe ? qsTr("Mixture of experts")
                              : root.metrics.hasSidecar && !root.sparse.sparseEnabled
                              ? qsTr("Dense mode (sparse switched off)") : qsTr("Running dense")
                        color: Theme.text
                        font.weight: Font.DemiBold
                    }
                    Label {
                        // The engine's reason names the command-line tool;
                        // here the button beside it does the same.
                        // A remote server's reason lists what it cannot report.
                        text: root.metrics.hasSidecar || root.controller.isRemote
                              ? root.metrics.sparseStatus
                              : root.metrics.sparseStatus.replace(/ ?\(run powerinfer-calibrate[^)]*\)/, "")
                                + qsTr(" — Calibrate… creates one from here.")
                        color: Theme.textMuted
                        wrapMode: Text.Wrap
                        Layout.fillWidth: true
                        font.pixelSize: Theme.fontSizeSmall
                    }
                    PrimaryButton {
                        objectName: "calibrateButton"
                        visible: !root.metrics.hasSidecar && !root.controller.isRemote
                        text: qsTr("Calibrate…")
                        onClicked: root.calibrateRequested()
                    }
                }
            }

            GridLayout {
                Layout.fillWidth: true
                columns: 3
                rowSpacing: 8
                Stat {
                    objectName: "decodeStat"
                    label: qsTr("decode tok/s")
                    value: root.metrics.decodeTokensPerSecond.toFixed(1)
                    tip: qsTr("Tokens of the reply generated per second. Reading speed is about 5-10; higher is better.")
                }
                Stat {
                    label: qsTr("prompt tok/s")
                    value: root.metrics.promptTokensPerSecond > 0
                           ? root.metrics.promptTokensPerSecond.toFixed(0) : "–"
                    tip: qsTr("Prompt tokens read per second before the reply starts. Usually several times the decode speed; higher is better.")
                }
                Stat {
                    objectName: "hitRateStat"
                    // Where the hot part lives only matters on a real device:
                    // on a CPU machine it read 0.0 % with advice to raise a
                    // knob that has no effect there.
                    visible: root.onDevice
                    label: root.haveSparse && !root.metrics.hotColdSplit ? qsTr("hot-neuron hits (no split)")
                                                                         : qsTr("hot-neuron hits")
                    value: !root.haveSparse ? "–"
                           : root.metrics.hotColdSplit ? root.pct(root.metrics.hitRate) : qsTr("n/a")
                    tip: root.haveSparse && !root.metrics.hotColdSplit
                         ? qsTr("Every active neuron ran where it is stored: without a GPU nothing is cold, so the hit rate would read 100 % at any threshold and tells nothing.")
                         : qsTr("Share of the active neurons already on the device (hot or cached). Near 100 % means little waits on the CPU; below 80 % try a higher hot-neuron threshold.")
                }
                Stat {
                    label: qsTr("FFN sparsity")
                    value: root.haveSparse ? root.pct(root.metrics.sparsity) : "–"
                    tip: qsTr("Share of the FFN neurons skipped per token. Higher saves more work; the quality stays close to dense up to the calibrated level (about 50 %).")
                }
                Stat {
                    objectName: "weightBytesStat"
                    label: qsTr("weights read")
                    value: root.haveSparse && root.metrics.weightBytesRatio >= 0
                           ? root.pct(root.metrics.weightBytesRatio) : "–"
                    tip: qsTr("Weight bytes read per token against dense: the output head reads a small preview and its likeliest rows, the FFN skips the neurons that stay quiet (v3: the inputs that barely count, in every matrix). Lower reads less memory; – when not measured.")
                }
                Stat {
                    label: qsTr("predictor recall")
                    value: root.metrics.recall >= 0 ? root.pct(root.metrics.recall) : "–"
                    tip: qsTr("Share of the truly active neurons the predictor found (sampled against dense). Above 90 % keeps replies close to dense; – when not sampled.")
                }
                Stat {
                    label: qsTr("ms / token")
                    value: root.metrics.tokenMs > 0 ? root.metrics.tokenMs.toFixed(1) : "–"
                    tip: qsTr("Wall time per generated token, all of it (1000 / decode tok/s). Lower is better; the bar below splits it.")
                }
            }

            // A mixture-of-experts model: experts instead of neurons (the
            // neuron hit rate and per-layer activity do not apply).
            ExpertSection {
                metrics: root.metrics
                visible: root.metrics.moe
                Layout.fillWidth: true
            }

            SectionTitle {
                visible: !root.metrics.moe && root.onDevice
                text: qsTr("Hit rate, last %1 tokens").arg(root.metrics.capacity)
            }
            HitRateChart {
                visible: !root.metrics.moe && root.onDevice
                objectName: "hitRateChart"
                source: root.metrics
                Layout.fillWidth: true
                Layout.preferredHeight: 104
                primaryColor: Theme.chart1
                secondaryColor: Theme.chart2
                gridColor: Theme.border
                textColor: Theme.textFaint
                Accessible.role: Accessible.Chart
                Accessible.name: qsTr("Hot-neuron hit rate over the last tokens")
            }
            Row {
                visible: !root.metrics.moe && root.onDevice
                spacing: 12
                Repeater {
                    model: [{ label: qsTr("hit rate"), color: Theme.chart1 },
                            { label: qsTr("predictor recall"), color: Theme.chart2 }]
                    Row {
                        required property var modelData
                        spacing: 4
                        Rectangle {
                            width: 12
                            height: 3
                            color: parent.modelData.color
                            anchors.verticalCenter: parent.verticalCenter
                        }
                        Label {
                            text: parent.modelData.label
                            color: Theme.textMuted
                            font.pixelSize: 11
                        }
                    }
                }
            }

            RowLayout {
                visible: !root.metrics.moe
                Layout.fillWidth: true
                SectionTitle {
                    text: heatMode.currentIndex === 0 ? qsTr("Active per layer")
                                                      : qsTr("Hits per layer")
                    Layout.fillWidth: true
                }
                ComboBox {
                    id: heatMode
                    objectName: "heatmapMode"
                    model: [qsTr("Active"), qsTr("Hit rate")]
                    Accessible.name: qsTr("Heatmap value")
                    implicitHeight: 28
                    font.pixelSize: Theme.fontSizeSmall
                    Layout.topMargin: 8
                }
            }
            LayerHeatmap {
                visible: !root.metrics.moe
                id: heatmap
                objectName: "layerHeatmap"
                source: root.metrics
                mode: heatMode.currentIndex === 0 ? "active" : "hit"
                Layout.fillWidth: true
                Layout.preferredHeight: Math.max(60, Math.min(150, root.metrics.layers * 4))
                primaryColor: Theme.chart1
                emptyColor: Theme.heatLow
                Accessible.role: Accessible.Chart
                Accessible.name: qsTr("Per-layer heatmap: %1 layers by the last %2 tokens")
                                 .arg(root.metrics.layers).arg(root.metrics.count)
            }
            Label {
                visible: !root.metrics.moe
                text: qsTr("layer 0 at the top · newest token at the right · colour %1 → %2")
                      .arg(root.pct(heatmap.low)).arg(root.pct(heatmap.high))
                color: Theme.textFaint
                font.pixelSize: 11
                wrapMode: Text.Wrap
                Layout.fillWidth: true
            }

            SectionTitle {
                text: qsTr("Time per token")
            }
            StackedBar {
                objectName: "timeSplit"
                Layout.fillWidth: true
                // The parts add up to the whole token: "other" is attention,
                // norms, the output head and sampling.
                title: qsTr("%1 ms per token").arg(root.metrics.tokenMs.toFixed(1))
                format: v => v.toFixed(2) + " ms"
                // Rebuilt (its bars and legend recreated) on every update:
                // not while the panel is hidden.
                segments: !root.visible ? [] : [
                    { label: qsTr("predictor"), value: root.metrics.predictorMs, color: Theme.chart3 },
                    { label: qsTr("device FFN"), value: root.metrics.deviceMs, color: Theme.chart1 },
                    { label: qsTr("CPU FFN"), value: root.metrics.cpuMs, color: Theme.chart4 },
                    { label: qsTr("other"), value: root.metrics.otherMs, color: Theme.chart6 }
                ]
                ToolTip.visible: splitHover.hovered
                ToolTip.text: qsTr("Where a token's time goes: predictors, the FFN's hot part on the device and its cold part on the CPU, and everything else (attention, norms, output head, sampling).")
                HoverHandler {
                    id: splitHover
                }
            }

            SectionTitle {
                text: qsTr("Memory")
            }
            StackedBar {
                objectName: "deviceMemory"
                // A simulated device's "budget" (0.0 MiB of 1024.00 GiB on a
                // 23.5 GB machine) means nothing; its parts are in RAM below.
                visible: root.onDevice
                Layout.fillWidth: true
                title: root.metrics.deviceName !== "" ? root.metrics.deviceName : qsTr("Device")
                total: root.metrics.budgetBytes
                format: root.mib
                segments: !root.visible ? [] : [
                    { label: qsTr("dense"), value: root.metrics.denseWeights, color: Theme.chart6 },
                    { label: root.metrics.moe ? qsTr("placed experts") : qsTr("hot"),
                      value: root.metrics.hotNeurons, color: Theme.chart1 },
                    { label: root.metrics.moe ? qsTr("expert cache") : qsTr("cache"),
                      value: root.metrics.neuronCache, color: Theme.chart4 },
                    { label: qsTr("KV"), value: root.metrics.kvCache, color: Theme.chart3 },
                    { label: qsTr("predictors"), value: root.metrics.predictors, color: Theme.chart5 }
                ]
            }
            StackedBar {
                objectName: "ramMemory"
                Layout.fillWidth: true
                Layout.topMargin: 6
                title: qsTr("RAM")
                subtitle: root.metrics.simulated ? qsTr("The simulated device's parts live in RAM too.") : ""
                format: root.mib
                segments: !root.visible ? [] : [
                    { label: qsTr("model weights"), value: root.metrics.hostWeights, color: Theme.chart6 },
                    { label: qsTr("device (simulated)"),
                      value: root.metrics.simulated ? root.metrics.deviceUsed : 0,
                      color: Theme.chart1 }
                ]
            }
            Item {
                Layout.preferredHeight: 16
            }
        }
    }
}
