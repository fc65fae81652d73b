import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import QtQuick.Window
import PowerInfer.App

// The chat window: sidebar | header, chat, composer, status bar.
ApplicationWindow {
    id: window

    required property ChatController controller
    // Smoke mode (--show-tuning): open the tuning panel once the window is up.
    property bool openTuningAtStart: false
    // Smoke mode (--show-settings): open the chat settings.
    property bool openSettingsAtStart: false
    // --show-catalog, and a newcomer's first start (no model anywhere).
    property bool openCatalogAtStart: false

    // Opens within the screen's free area: on an 800x600 screen a fixed
    // 1280x800 put the model picker, composer and status bar off-screen.
    width: Math.min(1280, Screen.desktopAvailableWidth)
    height: Math.min(800, Screen.desktopAvailableHeight)
    // The layout is made for 800x600 up to 4K; below that it cannot fit
    // (a panel or a taskbar may leave a little less of a small screen).
    minimumWidth: Math.min(800, Screen.desktopAvailableWidth)
    minimumHeight: Math.min(600, Screen.desktopAvailableHeight)
    // The chat column keeps at least this much: the sidebar folds away
    // first when the metrics panel needs the room.
    readonly property int minimumChatWidth: 440
    readonly property bool metricsShown: controller.settings.showMetrics
    readonly property int metricsWidth: Math.min(360, width - minimumChatWidth)
    readonly property bool sidebarShown: controller.settings.showSidebar
        && width - Theme.sidebarWidth - (metricsShown ? metricsWidth : 0) >= minimumChatWidth
    visible: true
    title: controller.currentTitle !== "" ? qsTr("%1 — PowerInfer").arg(controller.currentTitle)
                                          : qsTr("PowerInfer Desktop")
    color: Theme.background
    font.family: Theme.fontFamily
    font.pixelSize: Theme.fontSize

    // The Basic style draws every control from the palette: theme it once here.
    palette.window: Theme.background
    palette.windowText: Theme.text
    palette.base: Theme.surface
    palette.alternateBase: Theme.sidebar
    palette.text: Theme.text
    palette.button: Theme.surfaceRaised
    palette.buttonText: Theme.text
    palette.highlight: Theme.accent
    palette.highlightedText: Theme.accentText
    palette.placeholderText: Theme.textFaint
    palette.mid: Theme.border
    palette.dark: Theme.textMuted
    palette.light: Theme.surfaceRaised
    palette.midlight: Theme.border
    palette.toolTipBase: Theme.surfaceRaised
    palette.toolTipText: Theme.text
    // Disabled controls must look disabled (the accent was kept in both groups).
    palette.disabled.highlight: Theme.border
    palette.disabled.text: Theme.textFaint
    palette.disabled.buttonText: Theme.textFaint
    palette.disabled.windowText: Theme.textFaint
    palette.disabled.dark: Theme.border
    // The same colours as the application palette: Qt 6.4 does not pass a
    // palette change on to controls inside popups (the settings drawer's
    // spin boxes stayed white in the dark theme until it was reopened), and
    // Qt's widget dialogs (QFileDialog) draw with the application palette.
    readonly property var themeColors: ({
        window: Theme.background, windowText: Theme.text, base: Theme.surface,
        alternateBase: Theme.sidebar, text: Theme.text, button: Theme.surfaceRaised,
        buttonText: Theme.text, highlight: Theme.accent, highlightedText: Theme.accentText,
        placeholderText: Theme.textFaint, mid: Theme.border, dark: Theme.textMuted,
        light: Theme.surfaceRaised, midlight: Theme.border, toolTipBase: Theme.surfaceRaised,
        toolTipText: Theme.text, link: Theme.accent, brightText: Theme.accentText,
        "disabled.highlight": Theme.border, "disabled.text": Theme.textFaint,
        "disabled.buttonText": Theme.textFaint, "disabled.windowText": Theme.textFaint,
        "disabled.dark": Theme.border
    })
    onThemeColorsChanged: ThemePalette.apply(themeColors)

    Binding {
        target: Theme
        property: "mode"
        value: window.controller.settings.themeMode
    }

    Shortcut {
        sequence: StandardKey.New
        onActivated: {
            window.controller.newConversation()
            composer.focusInput()
        }
    }
    Shortcut {
        sequence: StandardKey.Find
        onActivated: sidebar.focusSearch()
    }
    Shortcut {
        sequence: "Ctrl+L"
        onActivated: composer.focusInput()
    }
    Shortcut {
        // Not StandardKey.Quit: it is empty on some desktops.
        sequence: "Ctrl+Q"
        context: Qt.ApplicationShortcut
        onActivated: Qt.quit()
    }
    Shortcut {
        sequence: "Ctrl+,"
        onActivated: settingsDrawer.open()
    }
    Shortcut {
        sequences: ["F1", "Ctrl+/"]
        onActivated: shortcutsDialog.open()
    }
    Shortcut {
        sequence: "Escape"
        enabled: window.controller.generating
                 || window.controller.modelState === ChatController.Loading
        onActivated: window.controller.generating ? window.controller.stop()
                                                  : window.controller.cancelLoad()
    }

    RowLayout {
        anchors.fill: parent
        spacing: 0

        Sidebar {
            id: sidebar
            objectName: "sidebar"
            controller: window.controller
            visible: window.sidebarShown
            Layout.fillHeight: true
            Layout.preferredWidth: Theme.sidebarWidth
            onConversationChosen: composer.focusInput()
        }

        ColumnLayout {
            Layout.fillWidth: true
            Layout.fillHeight: true
            spacing: 0

            ChatHeader {
                objectName: "chatHeader"
                controller: window.controller
                sidebarShown: window.sidebarShown
                Layout.fillWidth: true
                onSidebarToggled: {
                    // Asking for the sidebar where it does not fit makes room
                    // by closing the metrics panel.
                    const want = !window.sidebarShown
                    window.controller.settings.showSidebar = want
                    if (want && !window.sidebarShown)
                        window.controller.settings.showMetrics = false
                }
                onModelPickerRequested: modelPicker.open()
                onSettingsRequested: settingsDrawer.open()
                onTuningRequested: tuningPanel.open()
            }

            ModelBanner {
                controller: window.controller
                Layout.fillWidth: true
                onModelPickerRequested: modelPicker.open()
                onCatalogRequested: catalogPage.open()
            }

            ChatView {
                id: chatView
                objectName: "chatView"
                controller: window.controller
                Layout.fillWidth: true
                Layout.fillHeight: true
                onEditRequested: (uid, text) => editDialog.edit(uid, text)
                onSuggestionChosen: text => composer.setText(text)
            }

            Composer {
                id: composer
                controller: window.controller
                Layout.fillWidth: true
                onSent: chatView.followTail()
            }

            StatusBar {
                controller: window.controller
                Layout.fillWidth: true
            }
        }

        MetricsPanel {
            objectName: "metricsPanel"
            controller: window.controller
            visible: window.metricsShown
            Layout.fillHeight: true
            Layout.preferredWidth: window.metricsWidth
            Layout.maximumWidth: window.metricsWidth
            onCloseRequested: window.controller.settings.showMetrics = false
            onCalibrateRequested: calibrateDialog.open()
            onTuningRequested: tuningPanel.open()
        }
    }

    TuningPanel {
        id: tuningPanel
        controller: window.controller
        height: window.height
        onCalibrateRequested: calibrateDialog.open()
    }

    CalibrateDialog {
        id: calibrateDialog
        controller: window.controller
    }

    ModelPicker {
        id: modelPicker
        controller: window.controller
        onCatalogRequested: catalogPage.open()
    }

    CatalogPage {
        id: catalogPage
        objectName: "catalogPage"
        controller: window.controller
    }

    // Drop a .gguf to load it, a folder to make it the models folder, or an
    // https link to a .gguf to download it.
    DropArea {
        anchors.fill: parent
        keys: ["text/uri-list", "text/plain"]
        onDropped: drop => {
            const urls = drop.hasUrls ? drop.urls : [drop.text]
            for (const u of urls) {
                const s = u.toString().trim()
                if (s.startsWith("http://") || s.startsWith("https://")) {
                    const error = window.controller.catalog.downloadUrl(s, "")
                    if (error !== "")
                        window.controller.showMessage(error)
                    else
                        catalogPage.open()
                } else {
                    window.controller.openDropped(s)
                }
            }
            drop.accept()
        }
    }

    SettingsDrawer {
        id: settingsDrawer
        objectName: "settingsDrawer"
        controller: window.controller
        height: window.height
    }

    ShortcutsDialog {
        id: shortcutsDialog
        objectName: "shortcutsDialog"
        shortcuts: [
            ["Ctrl+N", qsTr("New chat")],
            ["Ctrl+F", qsTr("Search conversations")],
            ["Ctrl+L", qsTr("Focus the message box")],
            ["Enter", qsTr("Send")],
            ["Shift+Enter", qsTr("New line in the message")],
            ["Esc", qsTr("Stop the reply, cancel loading, clear the search")],
            ["Ctrl+,", qsTr("Chat settings")],
            ["F1, Ctrl+/", qsTr("This list")],
            ["Ctrl+Q", qsTr("Quit")]
        ]
    }

    EditMessageDialog {
        id: editDialog
        controller: window.controller
    }


    Toast {
        controller: window.controller
        anchors.horizontalCenter: parent.horizontalCenter
        anchors.bottom: parent.bottom
        anchors.bottomMargin: 120
    }

    Component.onCompleted: {
        ThemePalette.apply(themeColors)
        composer.focusInput()
        if (openTuningAtStart)
            tuningPanel.open()
        if (openSettingsAtStart)
            settingsDrawer.open()
        if (openCatalogAtStart)
            catalogPage.open()
    }
}
