import QtQuick
import QtQuick.Controls

// A spin box in the theme's colours, bound on the control itself: Qt 6.4
// does not pass a palette change on to controls inside a popup (the
// settings drawer's spin boxes stayed white after switching to dark until
// the drawer was reopened).
SpinBox {
    palette.window: Theme.surfaceRaised
    palette.base: Theme.surface
    palette.text: Theme.text
    palette.button: Theme.surfaceRaised
    palette.buttonText: Theme.text
    palette.highlight: Theme.accent
    palette.highlightedText: Theme.accentText
    palette.mid: Theme.border
    palette.dark: Theme.textMuted
    palette.light: Theme.surfaceRaised
    palette.midlight: Theme.border
    palette.disabled.text: Theme.textFaint
    palette.disabled.buttonText: Theme.textFaint
}
