import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import PowerInfer.App

// "Compare with dense": the last user message, greedy, 32 tokens, through
// the dense and the sparse path; token agreement and speeds side by side.
ColumnLayout {
    id: root

    required property ChatController controller
    readonly property SparseController sparse: controller.sparse

    spacing: 6

    SecondaryButton {
        objectName: "compareButton"
        text: root.sparse.comparing ? qsTr("Comparing…") : qsTr("Compare with dense")
        enabled: root.controller.modelState === ChatController.Ready && !root.controller.generating
                 && !root.sparse.comparing && root.controller.messages.count > 0
        onClicked: root.controller.compareWithDense()
    }
    Label {
        text: qsTr("Replays your last message greedily (32 tokens) through both paths.")
        color: Theme.textMuted
        font.pixelSize: Theme.fontSizeSmall
        wrapMode: Text.Wrap
        Layout.fillWidth: true
    }
    BusyIndicator {
        visible: root.sparse.comparing
        running: visible
        implicitWidth: 28
        implicitHeight: 28
    }
    GridLayout {
        objectName: "compareResult"
        visible: root.sparse.compareDone
        columns: 3
        columnSpacing: 16
        Layout.fillWidth: true
        Accessible.role: Accessible.StaticText
        Accessible.name: qsTr("Agreement %1 percent over %2 tokens; dense %3 tokens per second, sparse %4")
                         .arg((root.sparse.compareAgreement * 100).toFixed(0)).arg(root.sparse.compareTokens)
                         .arg(root.sparse.compareDenseTps.toFixed(1)).arg(root.sparse.compareSparseTps.toFixed(1))
        Label { text: qsTr("agreement"); color: Theme.textMuted; font.pixelSize: Theme.fontSizeSmall }
        Label { text: qsTr("dense tok/s"); color: Theme.textMuted; font.pixelSize: Theme.fontSizeSmall }
        Label { text: qsTr("sparse tok/s"); color: Theme.textMuted; font.pixelSize: Theme.fontSizeSmall }
        Label {
            text: (root.sparse.compareAgreement * 100).toFixed(0) + "%"
            color: root.sparse.compareAgreement >= 0.9 ? Theme.success : Theme.warning
            font.pixelSize: Theme.fontSizeLarge
            font.weight: Font.DemiBold
        }
        Label {
            text: root.sparse.compareDenseTps.toFixed(1)
            color: Theme.text
            font.pixelSize: Theme.fontSizeLarge
            font.family: Theme.monoFamily
        }
        Label {
            text: root.sparse.compareSparseTps.toFixed(1)
            color: Theme.text
            font.pixelSize: Theme.fontSizeLarge
            font.family: Theme.monoFamily
        }
    }
    Label {
        visible: root.sparse.compareDone
        text: qsTr("Identical for the first %1 of %2 tokens (greedy replies diverge for good after one different token).")
              .arg(root.sparse.compareCommonPrefix).arg(root.sparse.compareTokens)
        color: Theme.textMuted
        font.pixelSize: Theme.fontSizeSmall
        wrapMode: Text.Wrap
        Layout.fillWidth: true
    }
    Label {
        visible: root.sparse.compareError !== ""
        text: root.sparse.compareError
        color: Theme.danger
        wrapMode: Text.Wrap
        Layout.fillWidth: true
    }
}
