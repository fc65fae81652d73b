#include "theme_palette.h"

#include <QGuiApplication>
#include <QHash>
#include <QtDebug>

namespace powerinfer::app {

namespace {

const QHash<QString, QPalette::ColorRole>& roles() {
    static const QHash<QString, QPalette::ColorRole> r{
        {QStringLiteral("window"), QPalette::Window},
        {QStringLiteral("windowText"), QPalette::WindowText},
        {QStringLiteral("base"), QPalette::Base},
        {QStringLiteral("alternateBase"), QPalette::AlternateBase},
        {QStringLiteral("text"), QPalette::Text},
        {QStringLiteral("button"), QPalette::Button},
        {QStringLiteral("buttonText"), QPalette::ButtonText},
        {QStringLiteral("brightText"), QPalette::BrightText},
        {QStringLiteral("highlight"), QPalette::Highlight},
        {QStringLiteral("highlightedText"), QPalette::HighlightedText},
        {QStringLiteral("placeholderText"), QPalette::PlaceholderText},
        {QStringLiteral("toolTipBase"), QPalette::ToolTipBase},
        {QStringLiteral("toolTipText"), QPalette::ToolTipText},
        {QStringLiteral("light"), QPalette::Light},
        {QStringLiteral("midlight"), QPalette::Midlight},
        {QStringLiteral("mid"), QPalette::Mid},
        {QStringLiteral("dark"), QPalette::Dark},
        {QStringLiteral("shadow"), QPalette::Shadow},
        {QStringLiteral("link"), QPalette::Link},
        {QStringLiteral("linkVisited"), QPalette::LinkVisited},
    };
    return r;
}

}  // namespace

QPalette ThemePalette::paletteFrom(const QVariantMap& colors, QStringList* unknown) {
    QPalette p;
    // The active roles first, so that "disabled.*" overrides what it names.
    for (int pass = 0; pass < 2; ++pass) {
        for (auto it = colors.cbegin(); it != colors.cend(); ++it) {
            QString name = it.key();
            const bool disabled = name.startsWith(QLatin1String("disabled."));
            if (disabled != (pass == 1)) continue;
            if (disabled) name = name.mid(9);
            const auto role = roles().constFind(name);
            const QColor c = it.value().value<QColor>();
            if (role == roles().cend() || !c.isValid()) {
                if (unknown) unknown->append(it.key());
                continue;
            }
            if (disabled) {
                p.setColor(QPalette::Disabled, *role, c);
            } else {
                p.setColor(QPalette::Active, *role, c);
                p.setColor(QPalette::Inactive, *role, c);
                p.setColor(QPalette::Disabled, *role, c);
            }
        }
    }
    return p;
}

void ThemePalette::apply(const QVariantMap& colors) {
    QStringList unknown;
    const QPalette p = paletteFrom(colors, &unknown);
    if (!unknown.isEmpty())
        qWarning("ThemePalette: unknown palette roles or colours: %s",
                 qPrintable(unknown.join(QLatin1String(", "))));
    // QApplication (widgets, e.g. QFileDialog) follows QGuiApplication's palette.
    QGuiApplication::setPalette(p);
}

QColor ThemePalette::color(const QString& role) const {
    QString name = role;
    const bool disabled = name.startsWith(QLatin1String("disabled."));
    if (disabled) name = name.mid(9);
    const auto r = roles().constFind(name);
    if (r == roles().cend()) return {};
    return QGuiApplication::palette().color(disabled ? QPalette::Disabled : QPalette::Active, *r);
}

}  // namespace powerinfer::app
