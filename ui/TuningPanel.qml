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
        // Acts only where a GPU holds neurons (staging, prediction).
        property bool gpuOnly: false
        readonly property bool noEffect: gpuOnly && drawer.sparse.metrics.simulated
        // Before calibration no knob acts: the model runs dense.
        readonly property string why: !drawer.sparse.metrics.hasSidecar
                                      ? qsTr("No effect until the model is calibrated: it runs dense.")
                                      : noEffect ? qsTr("No effect on this machine: no GPU holds neurons.")
                                      : ""
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
        ThemedSlider {
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
            objectName: "knobHelp_" + knob.key
            text: (knob.why !== "" ? knob.why + " " : "")
                  + knob.help + " " + qsTr("Default %1.").arg(knob.defaultText)
            color: knob.why !== "" ? Theme.warning : Theme.textMuted
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
                ThemedSwitch {
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
                gpuOnly: true
                label: qsTr("Hot-neuron threshold")
                help: qsTr("Share of each layer's activation mass kept on the device.")
                defaultText: "0.85"
                from: 0.05; to: 1; stepSize: 0.01; decimals: 2
                value: drawer.sparse.hotNeuronThreshold
            }
            Knob {
                key: "predictor_threshold"
                gpuOnly: true
                label: qsTr("Predictor threshold")
                help: qsTr("Probability above which a neuron is computed; lower = safer, slower.")
                defaultText: "0.5"
                from: 0.05; to: 0.95; stepSize: 0.01; decimals: 2
                value: drawer.sparse.predictorThreshold
            }
            Knob {
                key: "activation_sparsity"
                label: qsTr("Activation sparsity (CPU)")
                help: qsTr("Share of FFN neurons skipped per token by exact activity on the CPU; -1 = the sidecar's default: the fastest level within the perplexity bound, timed on this machine when it calibrated. Higher skips more and is less exact; whether it is faster depends on the CPU (0 runs the dense FFN).")
                defaultText: "-1"
                from: -1; to: 0.9; stepSize: 0.05; decimals: 2
                value: drawer.sparse.activationSparsity
            }
            Rectangle {
                id: curveBox
                objectName: "sparsityCurve"
                // After calibration: the sidecar's measured curve (perplexity
                // rise over held-out text per delivered sparsity), the bound,
                // the recommended and the current point, and speed where the
                // dense/sparse comparison measured it.
                visible: drawer.sparse.curve.length > 0 && drawer.sparse.metrics.hasSidecar
                Layout.fillWidth: true
                implicitHeight: curveColumn.implicitHeight + 20
                radius: Theme.radius
                color: Theme.surface
                border.color: Theme.border
                readonly property var points: drawer.sparse.curve
                // Decode speed vs dense per level: "Compare with dense" where
                // it ran, else what calibration timed (hollow), by level.
                readonly property var speeds: {
                    const live = drawer.sparse.speedPoints
                    const out = live.map(q => ({ level: q.level, ratio: q.ratio, timed: false }))
                    for (const p of points)
                        if (p.speed > 0 && !live.some(q => Math.abs(q.level - p.level) < 1e-6))
                            out.push({ level: p.level, ratio: p.speed, timed: true })
                    return out.sort((a, b) => a.level - b.level)
                }
                readonly property bool anyTimed: speeds.some(q => q.timed)
                readonly property real current: drawer.sparse.currentSparsity
                readonly property real bound: drawer.sparse.curveBound
                // The curve at a level (linear between measured levels).
                function at(level, key) {
                    const p = points
                    if (p.length === 0) return 0
                    if (level <= p[0].level) return p[0][key]
                    for (let i = 1; i < p.length; ++i) {
                        if (level <= p[i].level) {
                            const f = (level - p[i - 1].level) / (p[i].level - p[i - 1].level)
                            return p[i - 1][key] + f * (p[i][key] - p[i - 1][key])
                        }
                    }
                    return p[p.length - 1][key]
                }
                function pct(v, digits) { return (v * 100).toFixed(digits) + " %" }
                function signedPct(v) { return (v >= 0 ? "+" : "") + (v * 100).toFixed(1) + " %" }
                readonly property string summary: points.length === 0 ? "" :
                    (drawer.sparse.recommendedSparsity >= 0
                     ? qsTr("Recommended: %1 (perplexity %2).").arg(pct(drawer.sparse.recommendedSparsity, 0))
                       .arg(signedPct(at(drawer.sparse.recommendedSparsity, "pplRise")))
                     : qsTr("No level stays within the bound: dense is recommended."))
                    + (drawer.sparse.defaultSparsity >= 0
                       && drawer.sparse.defaultSparsity !== drawer.sparse.recommendedSparsity
                       && at(drawer.sparse.defaultSparsity, "speed") > 0
                     ? " " + qsTr("Default: %1, the fastest within it when calibrating (%2x dense%3).")
                       .arg(pct(drawer.sparse.defaultSparsity, 0))
                       .arg(at(drawer.sparse.defaultSparsity, "speed").toFixed(2))
                       .arg(at(drawer.sparse.defaultSparsity, "bytes") > 0
                            ? qsTr(", reading %1 of dense's weight bytes").arg(pct(at(drawer.sparse.defaultSparsity, "bytes"), 0))
                            : "")
                     : "")
                    + " " + (current >= 0
                     ? qsTr("Now %1: perplexity %2, KL %3, top-1 %4.").arg(pct(current, 0))
                       .arg(signedPct(at(current, "pplRise"))).arg(at(current, "meanKl").toFixed(3))
                       .arg(pct(at(current, "top1"), 0))
                     : "")
                Accessible.role: Accessible.Chart
                Accessible.name: qsTr("Measured sparsity curve")
                Accessible.description: summary
                ColumnLayout {
                    id: curveColumn
                    anchors.fill: parent
                    anchors.margins: 10
                    spacing: 4
                    Label {
                        text: qsTr("Measured after calibration")
                        color: Theme.text
                        font.weight: Font.Medium
                    }
                    Canvas {
                        id: curveCanvas
                        objectName: "curveCanvas"
                        Layout.fillWidth: true
                        Layout.preferredHeight: 170
                        // For tests: what the last paint drew.
                        property int drawnPoints: 0
                        property int drawnSpeeds: 0
                        property int drawnTimed: 0  // of those, calibration's (hollow)
                        property real currentX: -1
                        readonly property var deps: [curveBox.points, curveBox.speeds, curveBox.current,
                                                     Theme.dark, width, height]
                        onDepsChanged: requestPaint()
                        onPaint: {
                            const ctx = getContext("2d")
                            ctx.reset()
                            const p = curveBox.points
                            const left = 34, right = curveBox.speeds.length > 0 ? 34 : 8, top = 8, bottom = 22
                            const w = width - left - right, h = height - top - bottom
                            if (p.length === 0 || w <= 0 || h <= 0) { drawnPoints = 0; return }
                            // x: delivered sparsity 0..max; y: perplexity rise 0..max (at least 3x the bound).
                            let xmax = 0.1, ymax = Math.max(3 * curveBox.bound, 0.02)
                            for (const q of p) { xmax = Math.max(xmax, q.delivered); ymax = Math.max(ymax, q.pplRise) }
                            xmax = Math.ceil(xmax * 10 + 0.001) / 10
                            ymax = Math.min(ymax, 10 * Math.max(curveBox.bound, 0.01))
                            const X = v => left + w * Math.max(0, v) / xmax
                            const Y = v => top + h * (1 - Math.max(0, Math.min(v, ymax)) / ymax)
                            ctx.font = "10px sans-serif"
                            ctx.lineWidth = 1
                            // Axes, ticks and labels.
                            ctx.strokeStyle = Theme.border
                            ctx.fillStyle = Theme.textMuted
                            ctx.beginPath(); ctx.moveTo(left, top); ctx.lineTo(left, top + h); ctx.lineTo(left + w, top + h); ctx.stroke()
                            for (let t = 0; t <= xmax + 1e-6; t += 0.2) {
                                ctx.fillText((t * 100).toFixed(0) + "%", X(t) - 8, top + h + 13)
                            }
                            const ystep = ymax > 0.1 ? 0.05 : ymax > 0.04 ? 0.02 : 0.01
                            for (let t = 0; t <= ymax + 1e-6; t += ystep) {
                                ctx.fillText("+" + (t * 100).toFixed(0) + "%", 2, Y(t) + 3)
                            }
                            // The bound.
                            if (curveBox.bound > 0) {
                                ctx.strokeStyle = Theme.warning
                                ctx.setLineDash([4, 3])
                                ctx.beginPath(); ctx.moveTo(left, Y(curveBox.bound)); ctx.lineTo(left + w, Y(curveBox.bound)); ctx.stroke()
                                ctx.setLineDash([])
                            }
                            // The curve.
                            ctx.strokeStyle = Theme.chart1
                            ctx.fillStyle = Theme.chart1
                            ctx.lineWidth = 2
                            ctx.beginPath()
                            for (let i = 0; i < p.length; ++i) {
                                if (i === 0) ctx.moveTo(X(p[i].delivered), Y(p[i].pplRise))
                                else ctx.lineTo(X(p[i].delivered), Y(p[i].pplRise))
                            }
                            ctx.stroke()
                            for (const q of p) {
                                ctx.beginPath(); ctx.arc(X(q.delivered), Y(q.pplRise), 3, 0, 2 * Math.PI); ctx.fill()
                            }
                            drawnPoints = p.length
                            // Speed (right axis: sparse / dense tok/s) where measured.
                            const s = curveBox.speeds
                            if (s.length > 0) {
                                // Whole tenths around 1.0x and every measured ratio.
                                let lo = 0.8, hi = 1.2
                                for (const q of s) { lo = Math.min(lo, q.ratio - 0.05); hi = Math.max(hi, q.ratio + 0.05) }
                                lo = Math.floor(lo * 10) / 10
                                hi = Math.ceil(hi * 10) / 10
                                const S = v => top + h * (1 - (v - lo) / (hi - lo))
                                ctx.fillStyle = Theme.textMuted
                                ctx.fillText(hi.toFixed(1) + "x", left + w + 4, top + 8)
                                ctx.fillText("1.0x", left + w + 4, S(1) + 3)
                                ctx.fillText(lo.toFixed(1) + "x", left + w + 4, top + h)
                                ctx.strokeStyle = Theme.chart2
                                ctx.globalAlpha = 0.5
                                ctx.lineWidth = 1
                                ctx.setLineDash([2, 2])
                                ctx.beginPath(); ctx.moveTo(left, S(1)); ctx.lineTo(left + w, S(1)); ctx.stroke()
                                ctx.setLineDash([])
                                ctx.globalAlpha = 1
                                // Squares first, then each figure on a plate where it
                                // covers no square and no other figure: left of its
                                // square, else above, else below, else none.
                                const taken = s.map(q => ({ x: X(curveBox.at(q.level, "delivered")) - 5,
                                                           y: S(q.ratio) - 5, w: 10, h: 10 }))
                                const free = r => !taken.some(t => r.x < t.x + t.w && t.x < r.x + r.w
                                                                   && r.y < t.y + t.h && t.y < r.y + r.h)
                                let timed = 0
                                for (const q of s) {
                                    const x = X(curveBox.at(q.level, "delivered")), y = S(q.ratio)
                                    ctx.fillStyle = Theme.chart2
                                    ctx.strokeStyle = Theme.chart2
                                    if (q.timed) {
                                        ctx.lineWidth = 1.5
                                        ctx.fillStyle = Theme.surface
                                        ctx.fillRect(x - 4, y - 4, 8, 8)
                                        ctx.strokeRect(x - 3.5, y - 3.5, 7, 7)
                                        ++timed
                                    } else {
                                        ctx.fillRect(x - 4, y - 4, 8, 8)
                                    }
                                }
                                for (const q of s) {
                                    const x = X(curveBox.at(q.level, "delivered")), y = S(q.ratio)
                                    const label = q.ratio.toFixed(2) + "x"
                                    const tw = ctx.measureText(label).width
                                    const plate = [{ x: x - tw - 10, y: y - 7, w: tw + 4, h: 13 },
                                                   { x: x - tw / 2 - 2, y: y - 20, w: tw + 4, h: 13 },
                                                   { x: x - tw / 2 - 2, y: y + 7, w: tw + 4, h: 13 }]
                                                  .find(r => r.x >= 0 && free(r))
                                    if (!plate) continue
                                    taken.push(plate)
                                    ctx.fillStyle = Theme.surface
                                    ctx.fillRect(plate.x, plate.y, plate.w, plate.h)
                                    ctx.fillStyle = Theme.chart2
                                    ctx.fillText(label, plate.x + 2, plate.y + 10)
                                }
                                drawnTimed = timed
                            } else {
                                drawnTimed = 0
                            }
                            drawnSpeeds = s.length
                            // The current point: a ring on the curve.
                            if (curveBox.current >= 0) {
                                const cx = X(curveBox.at(curveBox.current, "delivered"))
                                const cy = Y(curveBox.at(curveBox.current, "pplRise"))
                                ctx.strokeStyle = Theme.text
                                ctx.lineWidth = 2
                                ctx.beginPath(); ctx.arc(cx, cy, 6, 0, 2 * Math.PI); ctx.stroke()
                                currentX = cx
                            } else {
                                currentX = -1
                            }
                        }
                    }
                    Flow {
                        Layout.fillWidth: true
                        spacing: 10
                        component Key: Row {
                            property color swatch
                            property string text
                            spacing: 4
                            Rectangle { width: 10; height: 10; radius: 5; color: parent.swatch; anchors.verticalCenter: parent.verticalCenter }
                            Label { text: parent.text; color: Theme.textMuted; font.pixelSize: 11 }
                        }
                        Key { swatch: Theme.chart1; text: qsTr("perplexity rise vs delivered sparsity") }
                        Key { swatch: Theme.warning; text: qsTr("bound +%1 %").arg((curveBox.bound * 100).toFixed(0)) }
                        Key { swatch: Theme.text; text: qsTr("current") }
                        Key { visible: curveBox.speeds.length > 0; swatch: Theme.chart2; text: qsTr("decode speed vs dense (right axis)") }
                    }
                    Label {
                        objectName: "curveSummary"
                        text: curveBox.summary
                        color: Theme.textMuted
                        font.pixelSize: Theme.fontSizeSmall
                        wrapMode: Text.Wrap
                        Layout.fillWidth: true
                    }
                    Label {
                        text: curveBox.anyTimed
                              ? qsTr("Hollow squares: decode timed when calibrating; \u201cCompare with dense\u201d below measures the current level (filled).")
                              : curveBox.speeds.length > 0 ? ""
                              : qsTr("Speed: \u201cCompare with dense\u201d below measures it at the current level.")
                        visible: text !== ""
                        color: Theme.textFaint
                        font.pixelSize: 11
                        wrapMode: Text.Wrap
                        Layout.fillWidth: true
                    }
                }
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
                gpuOnly: true
                label: qsTr("Prefetch depth")
                help: qsTr("Layers ahead whose predicted cold neurons are staged.")
                defaultText: "2"
                from: 0; to: 8
                value: drawer.sparse.prefetchDepth
            }
            Knob {
                key: "cache_window_size"
                gpuOnly: true
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
