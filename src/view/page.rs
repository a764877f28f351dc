//! The pages of `mem7 ui`, as pure functions from versions (and the read's clocks) to
//! HTML strings. Text from the memory enters markup only through [`escape`] (keys, tags,
//! agents, file names, anything a request echoes) or [`markdown`] (values), so nothing a
//! value holds can become an element or a script: raw HTML in a value turns into text,
//! and links to `javascript:`, `vbscript:` and `data:` lose their target.

use std::fmt::Write as _;

use super::escape;
pub use super::markdown::markdown;
use super::svg::{self, Picture};
pub use super::url::{Query, key_path, link, safe_url, url_encode};
use crate::core::Version;
use crate::core::time::{TxTime, ValidTime};
use crate::verify::Report;

/// Rows per page of the lists.
pub const PER_PAGE: usize = 50;

/// The page's stylesheet, served at `/assets/style.css` (with the picture's own).
pub const STYLE: &str = r#":root{--fg:#0f172a;--muted:#64748b;--line:#e2e8f0;--accent:#1d4ed8;--bg:#f8fafc}
*{box-sizing:border-box}
body{margin:0;font:14px/1.5 ui-sans-serif,system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);background:var(--bg)}
header{background:#0f172a;color:#e2e8f0;padding:10px 24px;display:flex;gap:24px;align-items:baseline}
header .brand{font-weight:700;font-size:16px;color:#fff;text-decoration:none}
header nav a{color:#cbd5e1;text-decoration:none;margin-right:16px}
header nav a.here{color:#fff;border-bottom:2px solid #60a5fa}
main{max-width:1280px;margin:0 auto;padding:20px 24px 48px}
h1{font-size:22px;margin:4px 0 4px;overflow-wrap:anywhere}
h1.mono{font-size:20px}
h2{font-size:16px;margin:28px 0 8px}
.sub{color:var(--muted);margin:0 0 16px}
a{color:var(--accent)}
code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
table.rows{border-collapse:collapse;width:100%;background:#fff;border:1px solid var(--line)}
table.rows th{text-align:left;font-weight:600;color:#334155;background:#f1f5f9;border-bottom:1px solid var(--line);padding:6px 10px;white-space:nowrap}
table.rows td{border-top:1px solid var(--line);padding:6px 10px;vertical-align:top}
table.rows td.when{white-space:nowrap}
table.rows td.time{min-width:7.5em}
.scroll{overflow-x:auto}
table.rows td.key{overflow-wrap:anywhere;min-width:10em}
tr:target{background:#fef9c3}
tr.match{background:#f5f3ff}tr.match td:first-child{box-shadow:inset 3px 0 0 #7c3aed}
tr.past{color:var(--muted)}
.value{min-width:8em;max-width:60em;overflow-wrap:anywhere}
.value h1,.value h2,.value h3,.value h4,.value h5,.value h6{font-size:15px;margin:.3em 0}
.value>:first-child{margin-top:0}.value>:last-child{margin-bottom:0}
.value pre{white-space:pre-wrap;background:#f1f5f9;padding:6px 8px;border-radius:4px}
.value blockquote{margin:0;padding-left:10px;border-left:3px solid var(--line)}
.tag{display:inline-block;background:#e0e7ff;color:#3730a3;border-radius:9px;padding:0 7px;margin:1px 2px 1px 0;font-size:12px}
.state{font-size:12px;border-radius:9px;padding:0 7px;white-space:nowrap}
.state.now{background:#dbeafe;color:#1e3a8a}.state.past{background:#f1f5f9;color:#475569}.state.read{background:#ede9fe;color:#5b21b6}
form.read{display:flex;flex-wrap:wrap;gap:10px 14px;align-items:end;background:#fff;border:1px solid var(--line);padding:12px;margin:0 0 16px;border-radius:6px}
form.read label{display:flex;flex-direction:column;font-size:12px;color:#334155;gap:2px}
form.read input,form.read select{font:inherit;padding:4px 6px;border:1px solid #cbd5e1;border-radius:4px}
form.read button{font:inherit;padding:5px 14px;border:0;border-radius:4px;background:var(--accent);color:#fff}
.pager{display:flex;gap:16px;margin:12px 0;color:var(--muted)}
.picture{background:#fff;border:1px solid var(--line);border-radius:6px;padding:8px;overflow-x:auto;margin:12px 0}
.picture svg{display:block;max-width:none}
.picture a:hover rect{stroke-width:3}
.banner{padding:10px 14px;border-radius:6px;margin:8px 0 16px;font-weight:600}
.banner.ok{background:#dcfce7;color:#14532d}.banner.broken{background:#fee2e2;color:#7f1d1d}
.problem{background:#fff;border:1px solid #fecaca;border-left:4px solid #dc2626;padding:12px 16px;border-radius:6px}
.empty{color:var(--muted);font-style:italic}
"#;

/// The whole stylesheet: the page's and the picture's.
pub fn stylesheet() -> String {
    format!("{STYLE}{}\n", svg::STYLE)
}

/// The page a view sits in.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Nav {
    Keys,
    Timeline,
    Verify,
    None,
}

/// A complete HTML document around `body`.
pub fn layout(title: &str, nav: Nav, body: &str) -> String {
    let link = |href: &str, label: &str, here: bool| {
        format!(
            "<a href=\"{href}\"{}>{label}</a>",
            if here { " class=\"here\"" } else { "" }
        )
    };
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <meta name=\"referrer\" content=\"no-referrer\">\
         <title>{} · mem7</title><link rel=\"stylesheet\" href=\"/assets/style.css\"></head>\n\
         <body><header><a class=\"brand\" href=\"/\">mem7</a><nav>{}{}{}</nav></header>\n\
         <main>\n{body}</main></body></html>\n",
        escape(title),
        link("/", "Keys", nav == Nav::Keys),
        link("/timeline", "Timeline", nav == Nav::Timeline),
        link("/verify", "Verify", nav == Nav::Verify),
    )
}

fn tags_html(tags: &[String]) -> String {
    tags.iter()
        .map(|t| format!("<span class=\"tag\">{}</span>", escape(t)))
        .collect()
}

/// An instant in a cell; it may break after the date.
fn time_cell(t: String) -> String {
    format!(
        "<td class=\"time mono\">{}</td>",
        escape(&t).replacen('T', "T<wbr>", 1)
    )
}

fn source_html(v: &Version) -> String {
    format!(
        "<td class=\"when mono\">{}:{}</td>",
        escape(&v.source.file),
        v.source.line
    )
}

/// Previous/next links for page `page` (from 1) of a list.
fn pager(query: &Query, path: &str, page: usize, has_next: bool, shown: usize) -> String {
    let mut s = String::from("<nav class=\"pager\">");
    if page > 1 {
        let prev = (page - 1).to_string();
        let _ = write!(
            s,
            "<a rel=\"prev\" href=\"{}\">← previous</a>",
            escape(&query.link_with(path, "page", Some(&prev)))
        );
    }
    let first = (page - 1) * PER_PAGE;
    if shown > 0 {
        let _ = write!(s, "<span>{}–{}</span>", first + 1, first + shown);
    }
    if has_next {
        let next = (page + 1).to_string();
        let _ = write!(
            s,
            "<a rel=\"next\" href=\"{}\">next →</a>",
            escape(&query.link_with(path, "page", Some(&next)))
        );
    }
    s.push_str("</nav>\n");
    s
}

/// What the key list shows.
pub struct ListPage<'a> {
    pub query: &'a Query,
    /// This page's rows (at most [`PER_PAGE`]).
    pub rows: &'a [Version],
    pub page: usize,
    pub has_next: bool,
    pub valid_at: ValidTime,
    pub as_of: TxTime,
    /// The search's words, when this is a search.
    pub search: Option<&'a str>,
    /// With several scopes: each row's scope and whether a narrower scope overrides it
    /// (a column of its own); empty for one workspace.
    pub scopes: &'a [(crate::core::level::Level, bool)],
}

/// `/`: the keys with their values at (valid_at, as_of), or a search's hits.
pub fn list_page(p: &ListPage<'_>) -> String {
    let q = p.query;
    let field = |name: &str| escape(q.get(name).unwrap_or(""));
    let mode = q.get("mode").unwrap_or("");
    let option = |value: &str, label: &str| {
        format!(
            "<option value=\"{value}\"{}>{label}</option>",
            if mode == value { " selected" } else { "" }
        )
    };
    let mut s = String::new();
    let _ = write!(
        s,
        "<h1>{}</h1>\n<p class=\"sub\">valid at <span class=\"mono\">{}</span> · as of <span class=\"mono\">{}</span></p>\n",
        if p.search.is_some() { "Search" } else { "Keys" },
        p.valid_at,
        p.as_of
    );
    let _ = writeln!(
        s,
        "<form class=\"read\" method=\"get\" action=\"/\">\
         <label>search<input name=\"q\" value=\"{}\" placeholder=\"words\"></label>\
         <label>by<select name=\"mode\">{}{}{}{}</select></label>\
         <label>key prefix<input name=\"prefix\" value=\"{}\" placeholder=\"project:\"></label>\
         <label>tag<input name=\"tag\" value=\"{}\"></label>\
         <label>valid at<input name=\"valid_at\" value=\"{}\" placeholder=\"now\"></label>\
         <label>as of<input name=\"as_of\" value=\"{}\" placeholder=\"now\"></label>\
         <button type=\"submit\">Show</button></form>",
        field("q"),
        option("", "default"),
        option("lexical", "lexical"),
        option("semantic", "semantic"),
        option("hybrid", "hybrid"),
        field("prefix"),
        field("tag"),
        field("valid_at"),
        field("as_of"),
    );
    if p.rows.is_empty() {
        s.push_str(if p.search.is_some() {
            "<p class=\"empty\">Nothing matches at this time.</p>\n"
        } else {
            "<p class=\"empty\">No key holds a value at this time.</p>\n"
        });
        s.push_str(&pager(q, "/", p.page, false, 0));
        return layout(p.search.unwrap_or("Keys"), Nav::Keys, &s);
    }
    // The key page draws the read's clocks when they were given.
    let clocks: Vec<(&str, &str)> = ["valid_at", "as_of"]
        .into_iter()
        .filter_map(|n| q.get(n).map(|v| (n, v)))
        .collect();
    let _ = writeln!(
        s,
        "<div class=\"scroll\"><table class=\"rows\"><thead><tr><th>key</th><th>value</th><th>valid from</th>\
         <th>valid to</th><th>tags</th>{}</tr></thead><tbody>",
        if p.scopes.is_empty() {
            ""
        } else {
            "<th>scope</th>"
        }
    );
    for (i, v) in p.rows.iter().enumerate() {
        let scope = match p.scopes.get(i) {
            Some((level, false)) => format!("<td class=\"scope\">{level}</td>"),
            Some((level, true)) => format!(
                "<td class=\"scope shadowed\" title=\"a narrower scope answers for this key\">{level} (shadowed)</td>"
            ),
            None => String::new(),
        };
        let _ = writeln!(
            s,
            "<tr><td class=\"key mono\"><a href=\"{}\">{}</a></td><td><div class=\"value\">{}</div></td>{}{}<td>{}</td>{scope}</tr>",
            escape(&link(&key_path(&v.key), &clocks)),
            escape(&v.key),
            markdown(&v.value),
            time_cell(v.valid_from.to_rfc3339()),
            time_cell(v.valid_to.to_rfc3339()),
            tags_html(&v.tags),
        );
    }
    s.push_str("</tbody></table></div>\n");
    s.push_str(&pager(q, "/", p.page, p.has_next, p.rows.len()));
    layout(p.search.unwrap_or("Keys"), Nav::Keys, &s)
}

/// What a key's page shows.
pub struct KeyPage<'a> {
    pub key: &'a str,
    /// Every version, as `history` lists them.
    pub versions: &'a [Version],
    pub now: (ValidTime, TxTime),
    /// The read's clocks, drawn as lines (and the matching version marked), when given.
    pub valid_at: Option<ValidTime>,
    pub as_of: Option<TxTime>,
}

/// `/k/KEY`: the picture, then every version with its four clocks and its value.
pub fn key_page(p: &KeyPage<'_>) -> String {
    let row_link = |i: usize| format!("#row-{}", i + 1);
    let picture = svg::render_embedded(&Picture {
        key: p.key,
        versions: p.versions,
        now: p.now,
        valid_at: p.valid_at,
        as_of: p.as_of,
        link: Some(&row_link),
    });
    let believed = p.versions.iter().filter(|v| v.tx_to.is_infinite()).count();
    let mut s = String::new();
    let _ = writeln!(
        s,
        "<h1 class=\"mono\">{}</h1>\n<p class=\"sub\">{} version{}, {} believed now. \
         Valid time runs left to right, transaction time top to bottom; a rectangle links to its row.</p>",
        escape(p.key),
        p.versions.len(),
        if p.versions.len() == 1 { "" } else { "s" },
        believed
    );
    if p.valid_at.is_some() || p.as_of.is_some() {
        let _ = writeln!(
            s,
            "<p class=\"sub\">The dashed violet lines are a read at valid_at {} as of {}: it answers the rectangle where they cross (the violet row).</p>",
            p.valid_at.unwrap_or(p.now.0),
            p.as_of.unwrap_or(p.now.1)
        );
    }
    let _ = writeln!(s, "<div class=\"picture\">{picture}</div>");
    let (at_valid, at_tx) = (
        p.valid_at.unwrap_or(p.now.0).micros(),
        p.as_of.unwrap_or(p.now.1).micros(),
    );
    s.push_str(
        "<h2>Versions</h2>\n<div class=\"scroll\"><table class=\"rows\"><thead><tr><th>#</th><th>value</th>\
         <th>valid from</th><th>valid to</th><th>believed from</th><th>believed to</th>\
         <th>agent</th><th>tags</th><th>entry</th></tr></thead><tbody>\n",
    );
    for (i, v) in p.versions.iter().enumerate() {
        let matches = (p.valid_at.is_some() || p.as_of.is_some())
            && v.valid_from.micros() <= at_valid
            && at_valid < v.valid_to.micros()
            && v.tx_from.micros() <= at_tx
            && at_tx < v.tx_to.micros();
        let class = match (v.tx_to.is_infinite(), matches) {
            (_, true) => " class=\"match\"",
            (false, false) => " class=\"past\"",
            (true, false) => "",
        };
        let mut state = if v.tx_to.is_infinite() {
            "<span class=\"state now\">believed</span>"
        } else {
            "<span class=\"state past\">no longer believed</span>"
        }
        .to_string();
        if matches {
            state.push_str("<br><span class=\"state read\">the read's answer</span>");
        }
        let _ = writeln!(
            s,
            "<tr id=\"row-{n}\"{class}><td><a href=\"#row-{n}\">{n}</a><br>{state}</td><td><div class=\"value\">{}</div></td>{}{}{}{}<td>{}</td><td>{}</td>{}</tr>",
            markdown(&v.value),
            time_cell(v.valid_from.to_rfc3339()),
            time_cell(v.valid_to.to_rfc3339()),
            time_cell(v.tx_from.to_rfc3339()),
            time_cell(v.tx_to.to_rfc3339()),
            escape(&v.agent),
            tags_html(&v.tags),
            source_html(v),
            n = i + 1,
        );
    }
    s.push_str("</tbody></table></div>\n");
    layout(p.key, Nav::None, &s)
}

/// What the timeline shows.
pub struct TimelinePage<'a> {
    pub query: &'a Query,
    pub by_tx: bool,
    pub rows: &'a [Version],
    pub page: usize,
    pub has_next: bool,
}

/// `/timeline`: versions in the order of one clock.
pub fn timeline_page(p: &TimelinePage<'_>) -> String {
    let q = p.query;
    let field = |name: &str| escape(q.get(name).unwrap_or(""));
    let mut s = String::new();
    let _ = writeln!(
        s,
        "<h1>Timeline</h1>\n<p class=\"sub\">{}</p>",
        if p.by_tx {
            "every version ever recorded, by when mem7 learned it (transaction time)"
        } else {
            "what mem7 believes now, by when it held in the world (valid time)"
        }
    );
    let _ = writeln!(
        s,
        "<form class=\"read\" method=\"get\" action=\"/timeline\">\
         <label>clock<select name=\"clock\"><option value=\"valid\"{}>valid time</option>\
         <option value=\"tx\"{}>transaction time</option></select></label>\
         <label>since<input name=\"since\" value=\"{}\"></label>\
         <label>until<input name=\"until\" value=\"{}\"></label>\
         <label>key prefix<input name=\"prefix\" value=\"{}\"></label>\
         <button type=\"submit\">Show</button></form>",
        if p.by_tx { "" } else { " selected" },
        if p.by_tx { " selected" } else { "" },
        field("since"),
        field("until"),
        field("prefix"),
    );
    if p.rows.is_empty() {
        s.push_str("<p class=\"empty\">No versions in that range.</p>\n");
        return layout("Timeline", Nav::Timeline, &s);
    }
    s.push_str(
        "<div class=\"scroll\"><table class=\"rows\"><thead><tr><th>when</th><th>key</th><th>value</th>\
         <th>valid from</th><th>valid to</th><th>believed to</th><th>agent</th><th>entry</th></tr></thead><tbody>\n",
    );
    for v in p.rows {
        let at = if p.by_tx {
            v.tx_from.to_rfc3339()
        } else {
            v.valid_from.to_rfc3339()
        };
        let _ = writeln!(
            s,
            "<tr{}>{}<td class=\"key mono\"><a href=\"{}\">{}</a></td><td><div class=\"value\">{}</div></td>{}{}{}<td>{}</td>{}</tr>",
            if v.tx_to.is_infinite() {
                ""
            } else {
                " class=\"past\""
            },
            time_cell(at),
            escape(&key_path(&v.key)),
            escape(&v.key),
            markdown(&v.value),
            time_cell(v.valid_from.to_rfc3339()),
            time_cell(v.valid_to.to_rfc3339()),
            time_cell(v.tx_to.to_rfc3339()),
            escape(&v.agent),
            source_html(v),
        );
    }
    s.push_str("</tbody></table></div>\n");
    s.push_str(&pager(q, "/timeline", p.page, p.has_next, p.rows.len()));
    layout("Timeline", Nav::Timeline, &s)
}

/// `/verify`: the chain's head, its entry count and every finding at file:line.
pub fn verify_page(report: &Report) -> String {
    let breaks = report.findings.iter().filter(|f| f.is_break()).count();
    let warnings = report.findings.len() - breaks;
    let mut s = String::from("<h1>Verify</h1>\n");
    let _ = writeln!(
        s,
        "<p class=\"banner {}\">{}: {} entr{} in {} file{}, {} problem{}, {} warning{}</p>",
        if breaks == 0 { "ok" } else { "broken" },
        if breaks == 0 { "verified" } else { "BROKEN" },
        report.entries,
        if report.entries == 1 { "y" } else { "ies" },
        report.files,
        if report.files == 1 { "" } else { "s" },
        breaks,
        if breaks == 1 { "" } else { "s" },
        warnings,
        if warnings == 1 { "" } else { "s" },
    );
    let _ = writeln!(
        s,
        "<p>head <code>{}</code></p>",
        match &report.head {
            Some(h) => escape(&h.to_string()),
            None => "(empty: no entries)".to_string(),
        }
    );
    if report.findings.is_empty() {
        s.push_str("<p class=\"empty\">Every entry verifies.</p>\n");
    } else {
        s.push_str(
            "<div class=\"scroll\"><table class=\"rows\"><thead><tr><th>where</th><th>kind</th><th>key</th>\
             <th>what</th></tr></thead><tbody>\n",
        );
        for f in &report.findings {
            let _ = writeln!(
                s,
                "<tr{}><td class=\"mono\">{}:{}</td><td>{}{}</td><td class=\"key mono\">{}</td><td>{}</td></tr>",
                if f.is_break() { "" } else { " class=\"past\"" },
                escape(&f.file),
                f.line,
                if f.is_break() { "" } else { "warning: " },
                escape(f.kind.name()),
                escape(&f.key),
                escape(&f.message),
            );
        }
        s.push_str("</tbody></table></div>\n");
    }
    layout("Verify", Nav::Verify, &s)
}

/// A page saying what is wrong with a request (or the workspace) and what to do.
pub fn problem_page(title: &str, problem: &str, hint: Option<&str>) -> String {
    let mut s = format!(
        "<h1>{}</h1>\n<div class=\"problem\"><p>{}</p>",
        escape(title),
        escape(problem)
    );
    if let Some(h) = hint {
        let _ = write!(s, "<p>hint: {}</p>", escape(h));
    }
    s.push_str("</div>\n<p><a href=\"/\">back to the keys</a></p>\n");
    layout(title, Nav::None, &s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_html_in_a_value_stays_text() {
        for hostile in [
            "<script>alert(1)</script>",
            "a <img src=x onerror=alert(1)> b",
            "\"><svg onload=alert(1)>",
            "<div>\n<script>alert(1)</script>\n</div>",
            "<iframe src=\"https://example.com\"></iframe>",
        ] {
            let html = markdown(hostile);
            for tag in ["<script", "<img", "<svg", "<div", "<iframe"] {
                assert!(!html.contains(tag), "{hostile:?} gave {html}");
            }
            assert!(html.contains("&lt;"), "{hostile:?} gave {html}");
        }
    }

    #[test]
    fn script_links_lose_their_target() {
        for hostile in [
            "[x](javascript:alert(1))",
            "[x](JavaScript:alert(1))",
            "[x]( \tjava\tscript:alert(1))",
            "[x](<java\nscript:alert(1)>)",
            "[x](&#106;avascript:alert(1))",
            "[x](vbscript:msgbox(1))",
            "[x](data:text/html;base64,PHNjcmlwdD4=)",
            "<javascript:alert(1)>",
            "![x](javascript:alert(1))",
            "[x][r]\n\n[r]: javascript:alert(1)",
            "[\u{1}x](\u{1}javascript:alert(1))",
        ] {
            let html = markdown(hostile);
            assert!(!html.contains("href"), "{hostile:?} gave {html}");
            assert!(
                !html.to_ascii_lowercase().contains("javascript:alert(1)\""),
                "{html}"
            );
        }
        let ok = markdown("see [the docs](https://example.com/a?b=1&c=\"2\") and ![logo](/x.png)");
        assert!(
            ok.contains("<a href=\"https://example.com/a?b=1&amp;c=%222%22\">the docs</a>"),
            "{ok}"
        );
        assert!(ok.contains("<a href=\"/x.png\">logo</a>"), "{ok}");
        assert!(!ok.contains("<img"), "{ok}");
    }

    #[test]
    fn markdown_renders() {
        assert_eq!(
            markdown("**bold** `c`"),
            "<p><strong>bold</strong> <code>c</code></p>\n"
        );
        assert!(markdown("- a\n- b").contains("<li>a</li>"));
    }

    #[test]
    fn links_keep_the_other_parameters() {
        let q = Query::parse(Some("valid_at=2026-04-10&tag=a+b&page=2&tag=c%26d"));
        assert_eq!(q.get("tag"), Some("a b"));
        assert_eq!(q.all("tag"), ["a b", "c&d"]);
        assert_eq!(
            q.link_with("/", "page", Some("3")),
            "/?valid_at=2026-04-10&tag=a%20b&tag=c%26d&page=3"
        );
        assert_eq!(key_path("event7:host/x"), "/k/event7%3Ahost%2Fx");
    }
}
