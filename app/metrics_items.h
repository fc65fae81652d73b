// Painted views of a MetricsModel: a line chart of the hit rate (and
// predictor recall) over the window, and a layers x tokens heatmap. Plain
// QQuickPaintedItems: one QPainter pass per batch, no per-point QML items.
#pragma once

#include <qqmlintegration.h>

#include <QColor>
#include <QPointer>
#include <QQuickPaintedItem>

#include "metrics_model.h"

namespace powerinfer::app {

class MetricsView : public QQuickPaintedItem {
    Q_OBJECT
    Q_PROPERTY(
        powerinfer::app::MetricsModel* source READ source WRITE setSource NOTIFY sourceChanged)
    Q_PROPERTY(QColor primaryColor MEMBER primary_ NOTIFY colorsChanged)
    Q_PROPERTY(QColor secondaryColor MEMBER secondary_ NOTIFY colorsChanged)
    Q_PROPERTY(QColor gridColor MEMBER grid_ NOTIFY colorsChanged)
    Q_PROPERTY(QColor textColor MEMBER text_ NOTIFY colorsChanged)
    Q_PROPERTY(QColor emptyColor MEMBER empty_ NOTIFY colorsChanged)
public:
    explicit MetricsView(QQuickItem* parent = nullptr);
    MetricsModel* source() const { return source_; }
    void setSource(MetricsModel* source);

signals:
    void sourceChanged();
    void colorsChanged();

protected:
    // The source's samples changed: recompute and repaint. A hidden view
    // (the metrics panel closed) only notes it and catches up when shown, so
    // a streamed batch costs it nothing (it used to repaint unseen charts).
    virtual void refresh() { update(); }
    void itemChange(ItemChange change, const ItemChangeData& value) override;
    QPointer<MetricsModel> source_;
    bool stale_ = false;
    QColor primary_{0x5b, 0x5b, 0xd6}, secondary_{0x1f, 0x9d, 0x55}, grid_{0xe3, 0xe5, 0xea},
        text_{0x64, 0x6a, 0x75}, empty_{0xf5, 0xf6, 0xf8};
};

// Hit rate (primaryColor) and recall (secondaryColor, where sampled), 0..1.
class HitRateChart : public MetricsView {
    Q_OBJECT
    QML_ELEMENT
public:
    using MetricsView::MetricsView;
    void paint(QPainter* painter) override;
};

// Rows = layers (0 at the top), columns = the window's tokens (newest at the
// right); colour from emptyColor (0) to primaryColor (1).
class LayerHeatmap : public MetricsView {
    Q_OBJECT
    QML_ELEMENT
    // "hit" (hot+cache hit rate) or "active" (predicted active fraction).
    Q_PROPERTY(QString mode MEMBER mode_ NOTIFY modeChanged)
    // The colour scale spans the window's values (low..high), so that small
    // differences between layers stay visible; QML shows the range.
    Q_PROPERTY(double low READ low NOTIFY rangeChanged)
    Q_PROPERTY(double high READ high NOTIFY rangeChanged)
public:
    explicit LayerHeatmap(QQuickItem* parent = nullptr);
    void paint(QPainter* painter) override;
    void refresh() override {
        updateRange();
        update();
    }
    double low() const { return low_; }
    double high() const { return high_; }
signals:
    void modeChanged();
    void rangeChanged();

private:
    void updateRange();
    float value(int i, int layer) const;

    QString mode_ = QStringLiteral("hit");
    double low_ = 0, high_ = 1;
};

// Mixture-of-experts models: rows = layers (0 at the top), columns = experts
// (0 at the left); colour from emptyColor (no routing) to primaryColor (the
// most routed expert of the whole map, MetricsModel::expertShareMax) on a
// square-root scale, so the skew of the router and its tail both show.
class ExpertHeatmap : public MetricsView {
    Q_OBJECT
    QML_ELEMENT
public:
    using MetricsView::MetricsView;
    void paint(QPainter* painter) override;
};

}  // namespace powerinfer::app
