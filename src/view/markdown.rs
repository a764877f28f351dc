//! A stored value as HTML for the page: markdown rendered by pulldown-cmark, with
//! nothing in it that could run (raw HTML becomes text, script and data links lose
//! their target).

use pulldown_cmark::{Event, LinkType, Options, Parser, Tag, TagEnd};

use super::url::safe_url;

/// A value as HTML. Markdown is rendered by pulldown-cmark; raw HTML (blocks and inline)
/// becomes text, images become links, and links whose target runs script or embeds data
/// keep their text but lose the link.
pub fn markdown(value: &str) -> String {
    let options =
        Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TABLES | Options::ENABLE_TASKLISTS;
    // For each open link or image: whether it was dropped (its end is dropped too).
    let mut dropped: Vec<bool> = Vec::new();
    let events = Parser::new_ext(value, options).filter_map(move |event| match event {
        Event::Html(text) | Event::InlineHtml(text) => Some(Event::Text(text)),
        Event::Start(Tag::HtmlBlock) => Some(Event::Start(Tag::Paragraph)),
        Event::End(TagEnd::HtmlBlock) => Some(Event::End(TagEnd::Paragraph)),
        Event::Start(Tag::Link {
            link_type,
            dest_url,
            title,
            id,
        }) => {
            let safe = safe_url(&dest_url);
            dropped.push(!safe);
            safe.then_some(Event::Start(Tag::Link {
                link_type,
                dest_url,
                title,
                id,
            }))
        }
        // An image would load from wherever a value points; it is shown as a link to it.
        Event::Start(Tag::Image {
            dest_url, title, ..
        }) => {
            let safe = safe_url(&dest_url);
            dropped.push(!safe);
            safe.then_some(Event::Start(Tag::Link {
                link_type: LinkType::Inline,
                dest_url,
                title,
                id: "".into(),
            }))
        }
        Event::End(TagEnd::Link | TagEnd::Image) => {
            (!dropped.pop().unwrap_or(false)).then_some(Event::End(TagEnd::Link))
        }
        other => Some(other),
    });
    let mut html = String::with_capacity(value.len() * 3 / 2 + 16);
    pulldown_cmark::html::push_html(&mut html, events);
    html
}
