//! Where everything of one bitemporal picture goes: its two ordinal axes, the labels that
//! fit on them, the margins and the rows around the plot. Drawing is `svg.rs`'s.

use super::{GAP, LEGEND, LINE, OPEN, Picture, TOP, Y_TITLE_X, text_width};
use crate::core::time::{TxTime, ValidTime};
use crate::view::ticks;

/// An ordinal axis: the distinct finite instants, evenly spaced.
pub(super) struct Axis {
    pub(super) ticks: Vec<i64>,
    pub(super) step: i64,
}

impl Axis {
    /// The axis through `ticks` (sorted, each once) in about `room` pixels.
    fn new(mut ticks: Vec<i64>, room: i64) -> Axis {
        ticks.sort_unstable();
        ticks.dedup();
        let n = ticks.len().max(1) as i64;
        // Wide steps for a few versions, narrower ones (down to 10 px) for many.
        let step = (room / n).clamp(10, 120);
        Axis { ticks, step }
    }

    /// The offset of an instant (open ends go past the last tick).
    fn at(&self, micros: i64) -> i64 {
        match self.ticks.binary_search(&micros) {
            Ok(i) => i as i64 * self.step,
            // Between ticks (a line for valid_at/as_of): placed proportionally.
            Err(0) => 0,
            // After the last tick but finite (now, a read's line): halfway to +∞.
            Err(i) if i >= self.ticks.len() => self.span() + OPEN / 2,
            Err(i) => {
                let (a, b) = (self.ticks[i - 1], self.ticks[i]);
                let frac = (micros - a) as f64 / (b - a) as f64;
                ((i as f64 - 1.0 + frac) * self.step as f64).round() as i64
            }
        }
    }

    /// The length of the axis up to its last finite tick.
    fn span(&self) -> i64 {
        (self.ticks.len().saturating_sub(1)) as i64 * self.step
    }

    /// Where open ends stop.
    pub(super) fn end(&self) -> i64 {
        self.span() + OPEN
    }
}

/// Whether a time is a place on an axis (∞ sits past the last tick instead).
fn finite(m: i64) -> bool {
    m != crate::core::time::INFINITY_MICROS
}

/// Where everything of one picture goes: the axes, the labels that fit, the margins and
/// the rows below and right of the plot.
pub(super) struct Layout {
    pub(super) x: Axis,
    pub(super) y: Axis,
    pub(super) x_labels: Vec<ticks::Label>,
    pub(super) y_labels: Vec<(usize, String)>,
    pub(super) left: i64,
    pub(super) label_y: i64,
    pub(super) date_y: i64,
    pub(super) x_title_y: i64,
    pub(super) valid_at_y: i64,
    pub(super) right_labels: Vec<(i64, String, &'static str)>,
    pub(super) width: i64,
    pub(super) height: i64,
}

/// The width an x label needs: its text or the date under it, whichever is wider.
fn x_width(l: &ticks::Label) -> i64 {
    text_width(&l.text).max(l.date.as_deref().map_or(0, text_width))
}

/// The two axes: every finite time of the versions, now and the read's clocks take their
/// own places.
fn axes(p: &Picture<'_>) -> (Axis, Axis) {
    let mut valid_ticks: Vec<i64> = Vec::new();
    let mut tx_ticks: Vec<i64> = Vec::new();
    for v in p.versions {
        for m in [v.valid_from.micros(), v.valid_to.micros()] {
            if finite(m) {
                valid_ticks.push(m);
            }
        }
        for m in [v.tx_from.micros(), v.tx_to.micros()] {
            if finite(m) {
                tx_ticks.push(m);
            }
        }
    }
    // Now and the read's clocks take their own places on the axes.
    valid_ticks.push(p.now.0.micros());
    tx_ticks.push(p.now.1.micros());
    valid_ticks.extend(p.valid_at.map(ValidTime::micros));
    tx_ticks.extend(p.as_of.map(TxTime::micros));
    let n = p.versions.len() as i64;
    let x = Axis::new(valid_ticks, (n * 90).clamp(480, 1600));
    let y = Axis::new(tx_ticks, (n * 44).clamp(240, 2400));
    (x, y)
}

/// The labels, as many as fit: on the x axis a label (and the date under it, where it is
/// new) must clear its neighbours and the ∞ at the end; on the y axis one line must clear
/// the next.
fn axis_labels(x: &Axis, y: &Axis) -> (Vec<ticks::Label>, Vec<(usize, String)>) {
    let x_labels = ticks::fit(&x.ticks, |labels, k| {
        let apart = labels
            .windows(2)
            .all(|w| (x_width(&w[0]) + x_width(&w[1])) / 2 + GAP <= k as i64 * x.step);
        let last = labels.last().is_none_or(|l| {
            let to_end = (x.ticks.len() - 1 - l.index) as i64 * x.step + OPEN;
            x_width(l) / 2 + text_width("∞") / 2 + GAP <= to_end
        });
        apart && last
    });
    let y_labels: Vec<(usize, String)> = ticks::fit(&y.ticks, |_, k| k as i64 * y.step >= LINE + 2)
        .into_iter()
        .map(|l| match l.date {
            Some(d) => (l.index, format!("{d} {}", l.text)),
            None => (l.index, l.text),
        })
        .collect();
    (x_labels, y_labels)
}

impl Layout {
    /// Lays one picture out.
    pub(super) fn new(p: &Picture<'_>) -> Layout {
        let (x, y) = axes(p);
        let (x_labels, y_labels) = axis_labels(&x, &y);

        // The left margin holds the y labels right of the rotated title, and half of the
        // first x label.
        let widest_y = y_labels
            .iter()
            .map(|(_, t)| text_width(t))
            .max()
            .unwrap_or(0);
        let first_x = x_labels.first().map_or(0, x_width);
        let title_edge = Y_TITLE_X + 3 + GAP;
        let left = (title_edge + widest_y + 8)
            .max(title_edge + first_x / 2)
            .max(120);
        let y1 = TOP + y.end();

        // Below the plot: the x labels, their dates, the axis title, the read's valid_at.
        let label_y = y1 + 20;
        let date_y = label_y + LINE;
        let dates = x_labels.iter().any(|l| l.date.is_some());
        let x_title_y = if dates { date_y } else { label_y } + LINE + 10;
        let valid_at_y = x_title_y + LINE + 6;
        let bottom = if p.valid_at.is_some() {
            valid_at_y
        } else {
            x_title_y
        } + 16;

        let mut layout = Layout {
            x,
            y,
            x_labels,
            y_labels,
            left,
            label_y,
            date_y,
            x_title_y,
            valid_at_y,
            right_labels: Vec::new(),
            width: 0,
            height: 0,
        };
        layout.right_labels = layout.right_labels(p);
        let x1 = layout.left + layout.x.end();
        let right = layout
            .right_labels
            .iter()
            .map(|(_, t, _)| 6 + text_width(t) + 12)
            .max()
            .unwrap_or(0)
            .max(40);
        layout.width = (x1 + right).max(left + text_width(LEGEND) + 10);
        layout.height = y1.max(layout.right_labels.last().map_or(0, |l| l.0)) + bottom - y1;
        layout
    }

    /// Right of the plot: "now" and the read's as_of, moved apart when they are close.
    fn right_labels(&self, p: &Picture<'_>) -> Vec<(i64, String, &'static str)> {
        let mut right_labels: Vec<(i64, String, &str)> =
            vec![(self.py(p.now.1.micros()) + 4, "now".to_string(), "#dc2626")];
        if let Some(t) = p.as_of {
            right_labels.push((
                self.py(t.micros()) + 4,
                format!("as_of {}", ticks::full(t.micros())),
                "#7c3aed",
            ));
        }
        right_labels.sort_by_key(|(y, _, _)| *y);
        for i in 1..right_labels.len() {
            right_labels[i].0 = right_labels[i].0.max(right_labels[i - 1].0 + LINE);
        }
        right_labels
    }

    /// The picture's x for a valid time.
    pub(super) fn px(&self, m: i64) -> i64 {
        self.left
            + if finite(m) {
                self.x.at(m)
            } else {
                self.x.end()
            }
    }

    /// The picture's y for a transaction time.
    pub(super) fn py(&self, m: i64) -> i64 {
        TOP + if finite(m) {
            self.y.at(m)
        } else {
            self.y.end()
        }
    }

    /// The plot's corners: (x0, y0, x1, y1).
    pub(super) fn plot(&self) -> (i64, i64, i64, i64) {
        (self.left, TOP, self.left + self.x.end(), TOP + self.y.end())
    }
}
