import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import PowerInfer.App

// Mixture-of-experts models in the metrics panel: the expert hit rate over
// the window (routings a device expert served, placed or cached) and the
// per-layer expert heatmap (routed share per expert since the load).
ColumnLayout {
    id: section

    required property MetricsModel metrics
    function pct(v) { return (v * 100).toFixed(1) + "%" }

    spacing: 8
    Accessible.role: Accessible.Grouping
    Accessible.name: qsTr("Experts")

    Label {
        text: qsTr("Experts")
        color: Theme.textFaint
        font.pixelSize: Theme.fontSizeSmall
        font.weight: Font.DemiBold
        font.capitalization: Font.AllUppercase
        font.letterSpacing: 0.6
        Layout.topMargin: 8
    }
    RowLayout {
        Layout.fillWidth: true
        spacing: 12
        Repeater {
            model: [
                { name: "expertHitRate", label: qsTr("expert hits"),
                  value: !section.metrics.expertPlacement ? qsTr("CPU only")
                         : section.metrics.expertsRouted > 0 ? section.pct(section.metrics.expertHitRate) : "–",
                  tip: section.metrics.expertPlacement
                       ? qsTr("Share of the routed experts that ran on the device (placed or in the expert cache) over the last tokens. Higher means less work waits on the CPU; raise the VRAM budget or the cache window if it is low.")
                       : qsTr("Every expert runs on the CPU: no expert sidecar, no device budget, or sparse mode is off (see the status above).") },
                { name: "expertCacheShare", label: qsTr("from the cache"),
                  value: section.metrics.expertPlacement && section.metrics.expertsRouted > 0
                         ? section.pct(section.metrics.expertCacheShare) : "–",
                  tip: qsTr("Share of the routed experts the expert cache served (recently used or prefetched by the next layers' routers).") },
                { name: "expertsRouted", label: qsTr("routings in window"),
                  value: section.metrics.expertsRouted > 0 ? String(section.metrics.expertsRouted) : "–",
                  tip: qsTr("Expert routings (tokens x layers x experts per token) the figures are over.") }
            ]
            ColumnLayout {
                required property var modelData
                objectName: modelData.name
                spacing: 0
                Layout.fillWidth: true
                ToolTip.visible: hover.hovered
                ToolTip.text: modelData.tip
                ToolTip.delay: 400
                Accessible.role: Accessible.StaticText
                Accessible.name: modelData.label + ": " + modelData.value
                HoverHandler {
                    id: hover
                }
                Label {
                    text: parent.modelData.value
                    color: Theme.text
                    font.pixelSize: Theme.fontSizeLarge
                    font.weight: Font.DemiBold
                    font.family: Theme.monoFamily
                }
                Label {
                    text: parent.modelData.label
                    color: Theme.textMuted
                    font.pixelSize: 11
                }
            }
        }
    }
    ExpertHeatmap {
        objectName: "expertHeatmap"
        source: section.metrics
        Layout.fillWidth: true
        Layout.preferredHeight: Math.max(48, Math.min(160, section.metrics.expertLayers * 12))
        primaryColor: Theme.chart1
        emptyColor: Theme.heatLow
        Accessible.role: Accessible.Chart
        Accessible.name: qsTr("Expert heatmap: %1 layers by %2 experts")
                         .arg(section.metrics.expertLayers).arg(section.metrics.expertCount)
    }
    Label {
        text: qsTr("routed share per expert · layer 0 at the top · expert 0 at the left · colour 0 → %1 (square root)")
              .arg(section.pct(section.metrics.expertShareMax))
        color: Theme.textFaint
        font.pixelSize: 11
        wrapMode: Text.Wrap
        Layout.fillWidth: true
    }
}
