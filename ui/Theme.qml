pragma Singleton
import QtQuick

// Colours, type and spacing for the whole UI, in a light and a dark palette.
// "system" follows the desktop: Qt 6.4 has no QStyleHints::colorScheme, so the
// system palette's window lightness decides.
QtObject {
    id: theme

    // "system", "light" or "dark"; bound to the user's setting by Main.qml.
    property string mode: "system"
    readonly property SystemPalette systemPalette: SystemPalette {
        colorGroup: SystemPalette.Active
    }
    readonly property bool dark: mode === "dark"
                                 || (mode === "system" && systemPalette.window.hslLightness < 0.5)

    readonly property color background: dark ? "#121317" : "#ffffff"
    readonly property color sidebar: dark ? "#18191e" : "#f5f6f8"
    readonly property color surface: dark ? "#1f2127" : "#ffffff"
    readonly property color surfaceRaised: dark ? "#262931" : "#ffffff"
    readonly property color hover: dark ? "#24262d" : "#eceef2"
    readonly property color selected: dark ? "#2a2d36" : "#e4e7ee"
    readonly property color border: dark ? "#2c2f37" : "#e3e5ea"
    readonly property color text: dark ? "#e8e9ed" : "#1d1f24"
    readonly property color textMuted: dark ? "#9a9ea8" : "#646a75"
    readonly property color textFaint: dark ? "#6c707a" : "#9298a3"
    readonly property color accent: dark ? "#8b8ff8" : "#5b5bd6"
    readonly property color accentText: "#ffffff"
    readonly property color accentSoft: dark ? "#2a2b4a" : "#eeeefd"
    readonly property color userBubble: dark ? "#2b2d4d" : "#ecedfd"
    readonly property color userBubbleText: dark ? "#eceefe" : "#1d1f3a"
    readonly property color codeBackground: dark ? "#0d0e11" : "#f6f7f9"
    readonly property color codeHeader: dark ? "#17181c" : "#eceef1"
    readonly property color codeText: dark ? "#d7dae0" : "#24292f"
    // Code block syntax colours (CodeHighlighter).
    readonly property color syntaxKeyword: dark ? "#c792ea" : "#8839c9"
    readonly property color syntaxString: dark ? "#a5d6a7" : "#116329"
    readonly property color syntaxComment: dark ? "#7f8591" : "#6e7781"
    readonly property color syntaxNumber: dark ? "#f7b267" : "#b35900"
    readonly property color danger: dark ? "#ff6b6b" : "#d93036"
    readonly property color success: dark ? "#4cc38a" : "#1f9d55"
    readonly property color warning: dark ? "#f5b84a" : "#b7791f"
    // Series and categories in the metrics panel (distinct in both palettes).
    readonly property color chart1: dark ? "#8b8ff8" : "#5b5bd6"
    readonly property color chart2: dark ? "#4cc38a" : "#1f9d55"
    readonly property color chart3: dark ? "#f5b84a" : "#d08a16"
    readonly property color chart4: dark ? "#5fb3f0" : "#1f7fc4"
    readonly property color chart5: dark ? "#e07ab8" : "#c0468f"
    readonly property color chart6: dark ? "#7c8190" : "#9aa0ab"
    readonly property color heatLow: dark ? "#1b1d24" : "#f1f2f8"
    readonly property color shadow: dark ? "#80000000" : "#1a000000"

    readonly property string fontFamily: Qt.fontFamilies().indexOf("Inter") >= 0 ? "Inter"
                                                                                 : Qt.application.font.family
    readonly property string monoFamily: Qt.fontFamilies().indexOf("DejaVu Sans Mono") >= 0
                                         ? "DejaVu Sans Mono" : "monospace"
    readonly property int fontSize: 14
    readonly property int fontSizeSmall: 12
    readonly property int fontSizeLarge: 16
    readonly property int fontSizeTitle: 18

    readonly property int radius: 10
    readonly property int radiusLarge: 16
    readonly property int spacing: 8
    readonly property int sidebarWidth: 280
    readonly property int contentMaxWidth: 820
}
