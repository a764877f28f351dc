//! The bitemporal picture of one key: its versions as rectangles in valid time (x) ×
//! transaction time (y), the way the temporal-database literature draws them. Written as
//! text with deterministic output (the same history gives the same bytes, so it diffs),
//! every piece of text escaped here, once.
//!
//! Both axes are ordinal: each distinct instant a version starts or ends at gets its own
//! tick, evenly spaced, so a change a minute after the last one is as visible as one a
//! year later. Open ends (+∞) run to the edge of the plot and end in an arrow, so
//! "until further notice" is visible.

use std::fmt::Write as _;

pub use super::escape;
use super::ticks;
use crate::core::Version;
use crate::core::time::{TxTime, ValidTime};
use crate::front::render::shorten;
use layout::Layout;

mod layout;

/// What to draw besides the versions.
#[derive(Clone, Copy)]
pub struct Picture<'a> {
    pub key: &'a str,
    /// Every version of the key, as `history` lists them.
    pub versions: &'a [Version],
    /// "Now" on both clocks (valid: this machine's clock; transaction: what mem7
    /// believes now).
    pub now: (ValidTime, TxTime),
    /// Lines for a read's `valid_at` and `as_of`, when given.
    pub valid_at: Option<ValidTime>,
    pub as_of: Option<TxTime>,
    /// Where each rectangle links (`#v{n}` anchors by default; the page links rows).
    pub link: Option<&'a dyn Fn(usize) -> String>,
}

/// Above the plot: the key, the legend, and the "now" label over the plot.
const TOP: i64 = 80;
/// Room past the last finite tick for open ends.
const OPEN: i64 = 110;
/// The baseline of the rotated y-axis title; its glyphs lie within 11 px left of it
/// and 3 px right.
const Y_TITLE_X: i64 = 16;
/// The least room between two labels, and between a label and a title.
const GAP: i64 = 12;
/// The height a line of 12 px text takes (its box, with ascent and descent).
const LINE: i64 = 15;
const LEGEND: &str =
    "blue: believed now · grey, dashed: no longer believed · arrow: until further notice";

/// The width of `text` at the picture's 12 px, generously estimated (DejaVu Sans, the
/// widest of the usual sans fonts, draws a digit 7.6 px wide), so that labels placed
/// by this estimate do not touch in any of them.
fn text_width(text: &str) -> i64 {
    let tenths: i64 = text
        .chars()
        .map(|c| match c {
            '0'..='9' | 'A'..='Z' => 80,
            ':' | '.' | ',' | '-' | ' ' | '\'' | '(' | ')' | '/' => 45,
            'a'..='z' | '_' => 70,
            c if c.is_ascii() => 80,
            _ => 120,
        })
        .sum();
    (tenths + 9) / 10
}

/// The picture's stylesheet: inside a standalone document, and part of the page's
/// stylesheet when the picture is inlined (the page's Content-Security-Policy allows no
/// inline `<style>`).
pub const STYLE: &str = "\
         .v rect{fill:#dbeafe;stroke:#1d4ed8;stroke-width:1.5}\
         .v.closed rect{fill:#f1f5f9;stroke:#64748b;stroke-dasharray:4 3}\
         .v text{fill:#0f172a}.v.closed text{fill:#475569}\
         .axis{stroke:#334155;stroke-width:1}.tick{stroke:#cbd5e1;stroke-width:1}\
         .label{fill:#334155}.now{stroke:#dc2626;stroke-width:1.5}\
         .read{stroke:#7c3aed;stroke-width:1.5;stroke-dasharray:6 3}\
         .open{fill:#1d4ed8}.v.closed .open{fill:#64748b}";

/// Writes the picture as one standalone SVG document.
pub fn render(p: &Picture<'_>) -> String {
    draw(p, true)
}

/// The same picture without its `<style>`, for inlining into a page whose stylesheet
/// holds [`STYLE`].
pub fn render_embedded(p: &Picture<'_>) -> String {
    draw(p, false)
}

/// The picture: laid out, then drawn head, axes, versions and the read's lines in turn.
fn draw(p: &Picture<'_>, standalone: bool) -> String {
    let l = Layout::new(p);
    let mut s = String::with_capacity(2048 + p.versions.len() * 600);
    draw_head(&mut s, p, &l, standalone);
    draw_axes(&mut s, &l);
    // The versions, in history order.
    for (i, v) in p.versions.iter().enumerate() {
        draw_version(&mut s, p, &l, i, v);
    }
    draw_reads(&mut s, p, &l);
    s.push_str("</svg>\n");
    s
}

/// The opening `<svg>`, its title, the style (standalone only), the key and the legend.
fn draw_head(s: &mut String, p: &Picture<'_>, l: &Layout, standalone: bool) {
    let (width, height, left) = (l.width, l.height, l.left);
    let _ = writeln!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" \
         viewBox=\"0 0 {width} {height}\" font-family=\"ui-sans-serif, system-ui, sans-serif\" \
         font-size=\"12\" role=\"img\" aria-labelledby=\"title\">"
    );
    let _ = writeln!(
        s,
        "<title id=\"title\">mem7: {} versions of {} in valid time × transaction time</title>",
        p.versions.len(),
        escape(p.key)
    );
    if standalone {
        s.push_str("<style>");
        s.push_str(STYLE);
        s.push_str("</style>\n");
    }
    let _ = writeln!(
        s,
        "<text x=\"{left}\" y=\"24\" font-size=\"15\" font-weight=\"600\">{}</text>",
        escape(p.key)
    );
    let _ = writeln!(
        s,
        "<text x=\"{left}\" y=\"48\" class=\"label\">{LEGEND}</text>"
    );
}

/// The axes, their ticks and labels, their titles and the ∞ at their ends.
fn draw_axes(s: &mut String, l: &Layout) {
    let (x0, y0, x1, y1) = l.plot();
    let (label_y, date_y, x_title_y) = (l.label_y, l.date_y, l.x_title_y);
    let _ = writeln!(
        s,
        "<line class=\"axis\" x1=\"{x0}\" y1=\"{y1}\" x2=\"{x1}\" y2=\"{y1}\"/>\
         <line class=\"axis\" x1=\"{x0}\" y1=\"{y0}\" x2=\"{x0}\" y2=\"{y1}\"/>"
    );
    let mut x_labels = l.x_labels.iter().peekable();
    for (i, &t) in l.x.ticks.iter().enumerate() {
        let tx = l.px(t);
        let _ = writeln!(
            s,
            "<line class=\"tick\" x1=\"{tx}\" y1=\"{y0}\" x2=\"{tx}\" y2=\"{y1}\"/>"
        );
        if let Some(l) = x_labels.next_if(|l| l.index == i) {
            let _ = writeln!(
                s,
                "<text class=\"label\" x=\"{tx}\" y=\"{label_y}\" text-anchor=\"middle\">{}</text>",
                l.text
            );
            if let Some(d) = &l.date {
                let _ = writeln!(
                    s,
                    "<text class=\"label\" x=\"{tx}\" y=\"{date_y}\" text-anchor=\"middle\">{d}</text>"
                );
            }
        }
    }
    let mut y_labels = l.y_labels.iter().peekable();
    for (i, &t) in l.y.ticks.iter().enumerate() {
        let ty = l.py(t);
        let _ = writeln!(
            s,
            "<line class=\"tick\" x1=\"{x0}\" y1=\"{ty}\" x2=\"{x1}\" y2=\"{ty}\"/>"
        );
        if let Some((_, text)) = y_labels.next_if(|(j, _)| *j == i) {
            let _ = writeln!(
                s,
                "<text class=\"label\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{text}</text>",
                x0 - 8,
                ty + 4
            );
        }
    }
    let _ = writeln!(
        s,
        "<text class=\"label\" x=\"{}\" y=\"{x_title_y}\" text-anchor=\"middle\">valid time (when it held in the world) →</text>",
        l.left + l.x.end() / 2
    );
    let _ = writeln!(
        s,
        "<text class=\"label\" x=\"{Y_TITLE_X}\" y=\"{0}\" transform=\"rotate(-90 {Y_TITLE_X} {0})\" text-anchor=\"middle\">transaction time (when mem7 believed it) ↓</text>",
        TOP + l.y.end() / 2
    );
    let _ = writeln!(
        s,
        "<text class=\"label\" x=\"{x1}\" y=\"{label_y}\" text-anchor=\"middle\">∞</text>\
         <text class=\"label\" x=\"{}\" y=\"{}\" text-anchor=\"end\">∞</text>",
        x0 - 8,
        y1 + 4
    );
}

/// Version `i` as a linked box, with its value where it fits and arrows on its open sides.
fn draw_version(s: &mut String, p: &Picture<'_>, l: &Layout, i: usize, v: &Version) {
    let (left, right) = (l.px(v.valid_from.micros()), l.px(v.valid_to.micros()));
    let (top, bottom) = (l.py(v.tx_from.micros()), l.py(v.tx_to.micros()));
    let (w, h) = ((right - left).max(2), (bottom - top).max(2));
    let class = if v.tx_to.is_infinite() {
        "v"
    } else {
        "v closed"
    };
    let href = match p.link {
        Some(f) => f(i),
        None => format!("#v{}", i + 1),
    };
    let _ = write!(
        s,
        "<g class=\"{class}\" id=\"v{}\"><a href=\"{}\"><title>{}</title>\
         <rect x=\"{left}\" y=\"{top}\" width=\"{w}\" height=\"{h}\" rx=\"3\"/>",
        i + 1,
        escape(&href),
        escape(&tooltip(v))
    );
    if h >= LINE
        && let Some(text) = fit_text(&v.value, w - 10)
    {
        let _ = write!(
            s,
            "<text x=\"{}\" y=\"{}\">{}</text>",
            left + 5,
            top + h.min(28) / 2 + 4,
            escape(&text)
        );
    }
    if v.valid_to.is_infinite() {
        let (ax, ay) = (right, top + h / 2);
        let _ = write!(
            s,
            "<path class=\"open\" d=\"M{} {} L{ax} {ay} L{} {} Z\"/>",
            ax - 8,
            ay - 5,
            ax - 8,
            ay + 5
        );
    }
    if v.tx_to.is_infinite() {
        let (ax, ay) = (left + w / 2, bottom);
        let _ = write!(
            s,
            "<path class=\"open\" d=\"M{} {} L{ax} {ay} L{} {} Z\"/>",
            ax - 5,
            ay - 8,
            ax + 5,
            ay - 8
        );
    }
    s.push_str("</a></g>\n");
}

/// Now on both axes, the read's lines, the labels right of the plot, and a word when no
/// version was ever recorded.
fn draw_reads(s: &mut String, p: &Picture<'_>, l: &Layout) {
    let (x0, y0, x1, y1) = l.plot();
    let (now_valid, now_tx) = p.now;
    let nx = l.px(now_valid.micros());
    let ny = l.py(now_tx.micros());
    let _ = writeln!(
        s,
        "<line class=\"now\" x1=\"{nx}\" y1=\"{y0}\" x2=\"{nx}\" y2=\"{y1}\"/>\
         <text x=\"{nx}\" y=\"{}\" fill=\"#dc2626\" text-anchor=\"middle\">now</text>\
         <line class=\"now\" x1=\"{x0}\" y1=\"{ny}\" x2=\"{x1}\" y2=\"{ny}\"/>",
        y0 - 8
    );
    if let Some(t) = p.valid_at {
        let vx = l.px(t.micros());
        let text = format!("valid_at {}", ticks::full(t.micros()));
        // Centred under its line, kept inside the picture.
        let half = text_width(&text) / 2;
        let cx = vx.clamp(half + 4, (l.width - half - 4).max(half + 4));
        let valid_at_y = l.valid_at_y;
        let _ = writeln!(
            s,
            "<line class=\"read\" x1=\"{vx}\" y1=\"{y0}\" x2=\"{vx}\" y2=\"{y1}\"/>\
             <text x=\"{cx}\" y=\"{valid_at_y}\" fill=\"#7c3aed\" text-anchor=\"middle\">{text}</text>"
        );
    }
    if let Some(t) = p.as_of {
        let ay = l.py(t.micros());
        let _ = writeln!(
            s,
            "<line class=\"read\" x1=\"{x0}\" y1=\"{ay}\" x2=\"{x1}\" y2=\"{ay}\"/>"
        );
    }
    for (ly, text, fill) in &l.right_labels {
        let _ = writeln!(
            s,
            "<text x=\"{}\" y=\"{ly}\" fill=\"{fill}\">{text}</text>",
            x1 + 6
        );
    }
    if p.versions.is_empty() {
        let _ = writeln!(
            s,
            "<text x=\"{}\" y=\"{}\" class=\"label\">no version of this key was ever recorded</text>",
            l.left + 10,
            TOP + 30
        );
    }
}

/// The value on one line, cut with an ellipsis to fit `room` pixels; `None` when not
/// even one character and the ellipsis fit.
fn fit_text(value: &str, room: i64) -> Option<String> {
    let line = shorten(value, usize::MAX);
    if text_width(&line) <= room {
        return (!line.is_empty()).then_some(line);
    }
    let mut cut = String::new();
    let mut used = text_width("…");
    for c in line.chars() {
        let w = text_width(c.encode_utf8(&mut [0; 4]));
        if used + w > room {
            break;
        }
        used += w;
        cut.push(c);
    }
    let cut = cut.trim_end();
    (!cut.is_empty()).then(|| format!("{cut}…"))
}

fn tooltip(v: &Version) -> String {
    let end = |t: String| if t == "∞" { "∞".to_string() } else { t };
    format!(
        "{} = {}\nvalid {} → {}\nbelieved {} → {}\n{}:{} · agent {}{}",
        v.key,
        shorten(&v.value, 400),
        v.valid_from,
        end(v.valid_to.to_rfc3339()),
        v.tx_from,
        end(v.tx_to.to_rfc3339()),
        v.source.file,
        v.source.line,
        v.agent,
        if v.tags.is_empty() {
            String::new()
        } else {
            format!(" · tags {}", v.tags.join(", "))
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::Source;

    fn version(value: &str, valid: (i64, i64), tx: (i64, i64)) -> Version {
        let t = |m: i64| if m < 0 { i64::MAX } else { m * 86_400_000_000 };
        Version {
            key: "k".into(),
            value: value.into(),
            tags: vec![],
            agent: "a".into(),
            valid_from: ValidTime::from_micros(t(valid.0)),
            valid_to: ValidTime::from_micros(t(valid.1)),
            tx_from: TxTime::from_micros(t(tx.0)),
            tx_to: TxTime::from_micros(t(tx.1)),
            tier: None,
            source: Source::default(),
        }
    }

    fn picture(versions: &[Version]) -> String {
        render(&Picture {
            key: "k",
            versions,
            now: (ValidTime::from_micros(0), TxTime::from_micros(0)),
            valid_at: None,
            as_of: None,
            link: None,
        })
    }

    #[test]
    fn one_rectangle_per_version_deterministically() {
        let vs = [
            version("Railway", (1, -1), (1, 2)),
            version("Railway", (1, 2), (2, -1)),
            version("Cloudflare", (2, -1), (2, -1)),
        ];
        let a = picture(&vs);
        assert_eq!(a, picture(&vs));
        assert_eq!(a.matches("<rect ").count(), 3);
        assert_eq!(a.matches("class=\"v closed\"").count(), 1);
        assert!(a.contains(">Cloudflare</text>"));
        assert!(a.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(a.ends_with("</svg>\n"));
    }

    #[test]
    fn markup_in_values_and_keys_stays_text() {
        let vs = [version(
            "<script>alert(1)</script>\"><svg onload=x>",
            (1, -1),
            (1, -1),
        )];
        let svg = picture(&vs);
        assert!(!svg.contains("<script"), "{svg}");
        assert!(!svg.contains("<svg onload"), "{svg}");
        assert!(svg.contains("&lt;script&gt;"));
        assert_eq!(escape("a\u{0}b\u{7}"), "a\u{fffd}b\u{fffd}");
    }

    #[test]
    fn a_value_is_cut_to_its_rectangle() {
        assert_eq!(fit_text("Cloudflare", 200).as_deref(), Some("Cloudflare"));
        let cut = fit_text("Cloudflare", 40).unwrap();
        assert!(cut.ends_with('…') && text_width(&cut) <= 40, "{cut}");
        assert_eq!(fit_text("Cloudflare", 8), None);
        assert_eq!(fit_text("  ", 100), None);
    }
}
