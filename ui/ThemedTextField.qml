import QtQuick
import QtQuick.Controls

// A text field in the theme's colours, bound on the control itself: Qt 6.4
// does not pass a palette change on into a popup (the settings drawer), so
// the API key and remote server fields stayed white after switching to dark.
TextField {
    color: Theme.text
    placeholderTextColor: Theme.textFaint
    palette.base: Theme.surface
    palette.text: Theme.text
    palette.highlight: Theme.accent
    palette.highlightedText: Theme.accentText
    palette.mid: Theme.border
    palette.dark: Theme.textMuted
}
