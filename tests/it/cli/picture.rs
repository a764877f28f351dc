//! The bitemporal picture (`history --svg`).

use super::*;

// ---------------------------------------------------------------------------------------
// The bitemporal picture.

#[test]
fn history_svg_draws_every_version_deterministically_and_escapes_values() {
    let s = worked_example(&[]);
    let args = [
        "history",
        "event7:host",
        "--svg",
        "--as-of",
        "2026-04-11",
        "--valid-at",
        "2026-04-10",
    ];
    let a = s.ok(&args, Some(NOW));
    let b = s.ok(&args, Some(NOW));
    assert_eq!(a.stdout, b.stdout, "the same history gives the same bytes");
    let svg = &a.stdout;
    assert!(
        svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""),
        "{svg}"
    );
    assert!(svg.trim_end().ends_with("</svg>"));
    let history = s.ok(&["history", "event7:host", "--json"], Some(NOW));
    let n = history.json().as_array().unwrap().len();
    assert_eq!(svg.matches("<rect ").count(), n, "{svg}");
    for value in ["Railway", "Cloudflare", "local only"] {
        // Labelled (shortened when the rectangle is narrow), and whole in its tooltip.
        assert!(
            svg.contains(&format!("<title>event7:host = {value}\n")),
            "{value}: {svg}"
        );
        let label = format!(">{}", &value[..4]);
        assert!(svg.contains(&label), "{value}: {svg}");
    }
    assert!(svg.contains(">now</text>"));
    assert!(svg.contains(">as_of 2026-04-11</text>"));
    assert!(svg.contains(">valid_at 2026-04-10</text>"));
    // --valid-at belongs to the picture only.
    assert_eq!(
        s.run(
            &["history", "event7:host", "--valid-at", "2026-04-10"],
            Some(NOW)
        )
        .code,
        2
    );

    // Hostile values and tags stay text.
    let hostile = [
        "<script>alert(1)</script>",
        "<img src=x onerror=alert(1)>",
        "\"><svg onload=alert(1)>",
        "[link](javascript:alert(1))",
    ];
    for v in hostile {
        s.ok(&["store", "evil", v, "--tag", "x"], None);
    }
    s.ok(&["store", "evil", &"long ".repeat(2000)], None);
    let svg = s.ok(&["history", "evil", "--svg"], None).stdout;
    assert_eq!(svg.matches("<svg").count(), 1, "{svg}");
    assert!(
        !svg.contains("<script") && !svg.contains("<img") && !svg.contains("<svg onload"),
        "{svg}"
    );
    assert!(!svg.contains("href=\"javascript"), "{svg}");
    assert!(svg.contains("&lt;script&gt;"));
    assert!(
        svg.len() < 40_000,
        "a long value is shortened: {} bytes",
        svg.len()
    );
}
