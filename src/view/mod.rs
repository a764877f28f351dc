//! What people look at: the bitemporal picture of a key (`history --svg`, [`svg`]) and
//! the read-only web page of `mem7 ui` ([`page`] renders, [`server`] serves). Every piece
//! of text from the memory (keys, values, tags, agents, file names) goes through
//! [`escape`] once, where it enters markup.

mod markdown;
pub mod page;
pub mod server;
pub mod svg;
mod ticks;
mod url;

/// Text for XML character data and attribute values: markup characters escaped, and
/// characters XML 1.0 cannot carry replaced (a value may hold any Unicode).
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || matches!(c, '\u{fffe}' | '\u{ffff}') => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}
