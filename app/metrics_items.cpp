#include "metrics_items.h"

#include <QImage>
#include <QPainter>
#include <QPainterPath>
#include <algorithm>
#include <cmath>
#include <vector>

namespace powerinfer::app {

MetricsView::MetricsView(QQuickItem* parent) : QQuickPaintedItem(parent) {
    setAntialiasing(true);
    connect(this, &MetricsView::colorsChanged, this, [this] { update(); });
}

void MetricsView::setSource(MetricsModel* source) {
    if (source_ == source) return;
    if (source_) disconnect(source_, nullptr, this, nullptr);
    source_ = source;
    if (source_)
        connect(source_, &MetricsModel::updated, this, [this] {
            if (isVisible())
                refresh();
            else
                stale_ = true;
        });
    emit sourceChanged();
    update();
}

void MetricsView::itemChange(ItemChange change, const ItemChangeData& value) {
    QQuickPaintedItem::itemChange(change, value);
    if (change == ItemVisibleHasChanged && value.boolValue && stale_) {
        stale_ = false;
        refresh();
    }
}

void HitRateChart::paint(QPainter* p) {
    const QRectF r = boundingRect().adjusted(34, 9, -4, -8);
    if (r.width() <= 0 || r.height() <= 0) return;
    p->setRenderHint(QPainter::Antialiasing);
    QFont f = p->font();
    f.setPixelSize(10);
    p->setFont(f);
    for (int k = 0; k <= 4; ++k) {
        const double y = r.bottom() - r.height() * k / 4.0;
        p->setPen(QPen(grid_, 1));
        p->drawLine(QPointF(r.left(), y), QPointF(r.right(), y));
        p->setPen(text_);
        p->drawText(QRectF(0, y - 7, r.left() - 4, 14), Qt::AlignRight | Qt::AlignVCenter,
                    QStringLiteral("%1%").arg(k * 25));
    }
    if (!source_ || source_->count() == 0) return;
    const int n = source_->count(), cap = source_->capacity();
    // The window fills from the right, so the newest token is always at the edge.
    const auto x = [&](int i) {
        return r.right() - r.width() * double(n - 1 - i) / double(cap - 1);
    };
    const auto y = [&](double v) { return r.bottom() - r.height() * std::clamp(v, 0.0, 1.0); };
    const auto series = [&](auto value, const QColor& colour, Qt::PenStyle style, bool fill) {
        QPainterPath path;
        bool open = false;
        double firstX = 0, lastX = 0;
        for (int i = 0; i < n; ++i) {
            const double v = value(i);
            if (v < 0) {
                open = false;
                continue;
            }
            const QPointF pt(x(i), y(v));
            if (!open) {
                path.moveTo(pt);
                if (path.elementCount() == 1) firstX = pt.x();
            } else {
                path.lineTo(pt);
            }
            lastX = pt.x();
            open = true;
        }
        if (path.isEmpty()) return;
        if (fill) {
            QPainterPath area = path;
            area.lineTo(lastX, r.bottom());
            area.lineTo(firstX, r.bottom());
            area.closeSubpath();
            QColor c = colour;
            c.setAlphaF(0.14f);
            p->fillPath(area, c);
        }
        p->setPen(QPen(colour, 2, style, Qt::RoundCap, Qt::RoundJoin));
        p->drawPath(path);
    };
    series([&](int i) { return source_->sparseAt(i) ? source_->hitRateAt(i) : -1.0; }, primary_,
           Qt::SolidLine, true);
    series([&](int i) { return source_->recallAt(i); }, secondary_, Qt::DashLine, false);
}

LayerHeatmap::LayerHeatmap(QQuickItem* parent) : MetricsView(parent) {
    connect(this, &MetricsView::sourceChanged, this, &LayerHeatmap::updateRange);
    connect(this, &LayerHeatmap::modeChanged, this, [this] {
        updateRange();
        update();
    });
}

float LayerHeatmap::value(int i, int layer) const {
    return mode_ == QLatin1String("active") ? source_->layerActiveFractionAt(i, layer)
                                            : source_->layerHitRateAt(i, layer);
}

void LayerHeatmap::updateRange() {
    // The 5th..95th percentile: one outlier must not wash out the rest.
    std::vector<float> values;
    if (source_) {
        values.reserve(size_t(source_->count()) * size_t(source_->layers()));
        for (int i = 0; i < source_->count(); ++i)
            for (int l = 0; l < source_->layers(); ++l)
                if (const float v = value(i, l); v >= 0) values.push_back(v);
    }
    double lo = 0, hi = 1;
    if (!values.empty()) {
        const auto pick = [&](double q) {
            auto it = values.begin() + std::ptrdiff_t(q * double(values.size() - 1));
            std::nth_element(values.begin(), it, values.end());
            return double(*it);
        };
        lo = pick(0.05);
        hi = pick(0.95);
    }
    if (hi - lo < 0.02) lo = std::max(0.0, hi - 0.02);  // a flat window stays mid-scale
    if (lo == low_ && hi == high_) return;
    low_ = lo;
    high_ = hi;
    emit rangeChanged();
}

void LayerHeatmap::paint(QPainter* p) {
    if (!source_) return;
    const int n = source_->count(), cap = source_->capacity(), layers = source_->layers();
    p->fillRect(boundingRect(), empty_);
    if (n == 0 || layers == 0) return;
    // One pixel per (token, layer), scaled up without smoothing: crisp cells
    // and a single drawImage call however many cells there are.
    QImage img(cap, layers, QImage::Format_ARGB32_Premultiplied);
    img.fill(empty_);
    const bool active = mode_ == QLatin1String("active");
    for (int i = 0; i < n; ++i) {
        const int col = cap - n + i;
        for (int l = 0; l < layers; ++l) {
            const float v =
                active ? source_->layerActiveFractionAt(i, l) : source_->layerHitRateAt(i, l);
            if (v < 0) continue;
            const float t = std::clamp(v, 0.0f, 1.0f);
            const QColor c =
                QColor::fromRgbF(empty_.redF() + (primary_.redF() - empty_.redF()) * t,
                                 empty_.greenF() + (primary_.greenF() - empty_.greenF()) * t,
                                 empty_.blueF() + (primary_.blueF() - empty_.blueF()) * t);
            img.setPixel(col, l, c.rgb());
        }
    }
    p->setRenderHint(QPainter::SmoothPixmapTransform, false);
    p->drawImage(boundingRect(), img);
}

void ExpertHeatmap::paint(QPainter* p) {
    if (!source_) return;
    p->fillRect(boundingRect(), empty_);
    const int layers = source_->expertLayers(), experts = source_->expertCount();
    const double top = source_->expertShareMax();
    if (layers == 0 || experts == 0 || top <= 0) return;
    // One pixel per (expert, layer), scaled up without smoothing.
    QImage img(experts, layers, QImage::Format_ARGB32_Premultiplied);
    for (int l = 0; l < layers; ++l)
        for (int e = 0; e < experts; ++e) {
            // Square root: the tail of a skewed routing stays visible.
            const float t =
                float(std::sqrt(std::clamp(source_->expertShare(l, e) / top, 0.0, 1.0)));
            const QColor c =
                QColor::fromRgbF(empty_.redF() + (primary_.redF() - empty_.redF()) * t,
                                 empty_.greenF() + (primary_.greenF() - empty_.greenF()) * t,
                                 empty_.blueF() + (primary_.blueF() - empty_.blueF()) * t);
            img.setPixel(e, l, c.rgb());
        }
    p->setRenderHint(QPainter::SmoothPixmapTransform, false);
    p->drawImage(boundingRect(), img);
}

}  // namespace powerinfer::app
