// The application palette in the theme's colours. Qt Quick controls inside
// popups (the settings drawer's spin boxes, menus, a combo box's list) kept
// the palette they were created with when the theme changed, and Qt's
// widget dialogs (QFileDialog) drew with the desktop's palette: the window
// sets the application palette from its Theme here, which every item and
// widget follows.
#pragma once

#include <qqmlintegration.h>

#include <QColor>
#include <QObject>
#include <QPalette>
#include <QVariantMap>

namespace powerinfer::app {

class ThemePalette : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_SINGLETON
public:
    using QObject::QObject;

    // colors: role name -> colour, the roles of QPalette in lower camel case
    // ("window", "windowText", "base", "text", "button", "buttonText",
    // "highlight", "highlightedText", ...) for the active and inactive
    // groups; "disabled.<role>" for the disabled group. Unknown names are
    // refused with a warning (a typo must not pass silently).
    Q_INVOKABLE void apply(const QVariantMap& colors);
    // The application palette's colour for a role (same names), to check
    // what widgets will draw with.
    Q_INVOKABLE QColor color(const QString& role) const;

    static QPalette paletteFrom(const QVariantMap& colors, QStringList* unknown = nullptr);
};

}  // namespace powerinfer::app
