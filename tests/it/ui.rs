//! `mem7 ui`, through the real binary on a loopback port: every route, the read clocks,
//! pagination, the escaping of hostile values, the token rules, new writes showing up,
//! the pages as a real headless browser (Debian's chromium) renders them, and the
//! picture's labels on a real day (golden files in `tests/snapshots/svg/`, and no
//! overlapping text as the browser draws a busy day).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::world::{self, Sandbox, worked_example};

const POLICY: &str = "default-src 'none'; style-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";
const TOKEN: &str = "ui-test-token-0123456789abcdef";

/// A `mem7 ui` child on a free loopback port; killed when dropped.
struct Ui {
    child: Child,
    /// `127.0.0.1:PORT`
    addr: String,
}

impl Drop for Ui {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Ui {
    fn start(sb: &Sandbox, now: Option<&str>, token: Option<&str>) -> Ui {
        Ui::start_with(sb, now, token, &[])
    }

    fn start_with(
        sb: &Sandbox,
        now: Option<&str>,
        token: Option<&str>,
        vars: &[(&str, &std::path::Path)],
    ) -> Ui {
        let mut cmd = sb.command(&["ui", "--listen", "127.0.0.1:0"], now);
        if let Some(t) = token {
            cmd.env("MEM7_TOKEN", t);
        }
        for (k, v) in vars {
            cmd.env(k, v);
        }
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let line = lines.next().expect("ui printed nothing").unwrap();
        let addr = line
            .strip_prefix("mem7 ui: serving http://")
            .and_then(|rest| rest.strip_suffix("/ (Ctrl-C stops)"))
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_string();
        assert!(!addr.ends_with(":0"), "the real port is printed: {line}");
        std::thread::spawn(move || for _ in lines {});
        Ui { child, addr }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    fn get(&self, path: &str) -> Resp {
        self.request("GET", path, &[])
    }

    /// One HTTP/1.1 request (connection closed after it), with extra header lines.
    fn request(&self, method: &str, path: &str, headers: &[(&str, &str)]) -> Resp {
        let mut stream = TcpStream::connect(&self.addr).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        let mut req = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
        if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
            req.push_str(&format!("Host: {}\r\n", self.addr));
        }
        for (k, v) in headers {
            req.push_str(&format!("{k}: {v}\r\n"));
        }
        if method != "GET" && method != "HEAD" {
            req.push_str("Content-Length: 0\r\n");
        }
        req.push_str("\r\n");
        stream.write_all(req.as_bytes()).unwrap();
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).unwrap();
        let text = String::from_utf8(raw).expect("UTF-8 response");
        let (head, body) = text.split_once("\r\n\r\n").expect("a response head");
        let mut lines = head.lines();
        let status = lines
            .next()
            .unwrap()
            .split(' ')
            .nth(1)
            .unwrap()
            .parse()
            .unwrap();
        let headers = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
            .collect();
        Resp {
            status,
            headers,
            body: body.to_string(),
        }
    }
}

#[derive(Debug)]
struct Resp {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Resp {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Asserts the status, the content type and the security headers.
    fn expect(&self, status: u16, content_type: &str) -> &Self {
        assert_eq!(self.status, status, "{self:?}");
        assert_eq!(self.header("content-type"), Some(content_type), "{self:?}");
        self.secure()
    }

    fn secure(&self) -> &Self {
        assert_eq!(
            self.header("content-security-policy"),
            Some(POLICY),
            "{self:?}"
        );
        assert_eq!(self.header("x-content-type-options"), Some("nosniff"));
        assert_eq!(self.header("referrer-policy"), Some("no-referrer"));
        self
    }
}

const HTML: &str = "text/html; charset=utf-8";

/// The values in the rows of a list page's table.
fn values(body: &str) -> Vec<String> {
    body.split("<div class=\"value\"><p>")
        .skip(1)
        .map(|rest| rest.split("</p>").next().unwrap().to_string())
        .collect()
}

#[test]
fn every_route_answers_with_its_type_and_the_policy() {
    let sb = worked_example(&["infra"]);
    let ui = Ui::start(&sb, Some("2026-04-20T00:00:00Z"), None);

    // The list at the worked example's four questions.
    for (query, expected) in [
        ("/?valid_at=2026-04-10&as_of=2026-04-11", vec!["Cloudflare"]),
        ("/?valid_at=2026-04-10", vec!["local only"]),
        ("/?valid_at=2026-03-01", vec!["Railway"]),
        ("/?valid_at=2026-02-01", vec![]),
        ("/", vec!["local only"]),
        ("/?tag=infra&prefix=event7:", vec!["local only"]),
        ("/?tag=other", vec![]),
        ("/?q=cloudflare&valid_at=2026-04-01", vec!["Cloudflare"]),
        ("/?q=cloudflare&mode=lexical", vec![]),
    ] {
        let r = ui.get(query);
        r.expect(200, HTML);
        assert_eq!(values(&r.body), expected, "{query}: {}", r.body);
    }
    let r = ui.get("/?valid_at=2026-04-10&as_of=2026-04-11");
    assert!(
        r.body
            .contains("valid at <span class=\"mono\">2026-04-10T00:00:00Z</span>")
    );
    assert!(
        r.body
            .contains("href=\"/k/event7%3Ahost?valid_at=2026-04-10&amp;as_of=2026-04-11\""),
        "{}",
        r.body
    );

    // The key page: the picture (one rectangle per version, each linking to its row),
    // every version with its four clocks, agent, tags, file:line.
    let r = ui.get("/k/event7%3Ahost");
    r.expect(200, HTML);
    assert_eq!(r.body.matches("<rect ").count(), 5, "{}", r.body);
    for n in 1..=5 {
        assert!(r.body.contains(&format!("<a href=\"#row-{n}\">")), "{n}");
        assert!(r.body.contains(&format!("<tr id=\"row-{n}\"")), "{n}");
    }
    assert!(
        !r.body.contains("class=\"match\""),
        "no read given, none marked"
    );
    assert!(
        !r.body.contains("<style>"),
        "the picture's style is in the stylesheet"
    );
    for text in [
        "Railway",
        "Cloudflare",
        "local only",
        // Row 3 (Cloudflare, believed from 03-20 until 04-12): all four clocks.
        "<td class=\"time mono\">2026-03-20T<wbr>00:00:00Z</td><td class=\"time mono\">∞</td>\
         <td class=\"time mono\">2026-03-20T<wbr>00:00:00Z</td><td class=\"time mono\">2026-04-12T<wbr>00:00:00Z</td>",
        "memory/2026-02-15.md:1",
        "memory/2026-04-12.md:1",
        "<td>tester</td>",
        "<span class=\"tag\">infra</span>",
        "<p>local only</p>",
    ] {
        assert!(r.body.contains(text), "{text}: {}", r.body);
    }
    // With the read's clocks, the answering version is marked and the lines are drawn.
    let r = ui.get("/k/event7:host?valid_at=2026-04-10&as_of=2026-04-11");
    r.expect(200, HTML);
    assert!(
        r.body.contains("<tr id=\"row-3\" class=\"match\">"),
        "{}",
        r.body
    );
    assert_eq!(r.body.matches("class=\"match\"").count(), 1);
    assert!(r.body.contains("valid_at 2026-04-10T00:00:00Z"));
    ui.get("/k/nobody:here").expect(404, HTML);

    // Timeline on either clock.
    let r = ui.get("/timeline");
    r.expect(200, HTML);
    assert_eq!(
        r.body.matches("<tr").count(),
        1 + 3,
        "believed now: {}",
        r.body
    );
    let r = ui.get("/timeline?clock=tx");
    r.expect(200, HTML);
    assert_eq!(
        r.body.matches("<tr").count(),
        1 + 5,
        "every version: {}",
        r.body
    );
    let r = ui.get("/timeline?clock=valid&since=2026-03-01&until=2026-04-06");
    assert_eq!(values(&r.body), ["Cloudflare", "local only"], "{}", r.body);
    let r = ui.get("/timeline?clock=sideways");
    r.expect(400, HTML);
    assert!(r.body.contains("clock"), "{}", r.body);

    // Verify: the head and the entry count `mem7 verify` reports.
    let cli = sb.ok(&["verify"], None).stdout;
    let head = cli.lines().find_map(|l| l.strip_prefix("head ")).unwrap();
    let r = ui.get("/verify");
    r.expect(200, HTML);
    assert!(
        r.body.contains(&format!("<code>{head}</code>")),
        "{}",
        r.body
    );
    assert!(
        r.body.contains("verified: 3 entries in 3 files"),
        "{}",
        r.body
    );

    let r = ui.get("/healthz");
    r.expect(200, "text/plain; charset=utf-8");
    assert_eq!(r.body, "ok\n");
    let r = ui.get("/assets/style.css");
    r.expect(200, "text/css; charset=utf-8");
    assert!(r.body.contains(".v.closed rect"), "the picture's style too");
    ui.get("/nowhere").expect(404, HTML);

    // A bad time is a 400 page naming the problem.
    for (query, named) in [
        ("/?valid_at=yesterday", "valid_at"),
        ("/?as_of=2026-13-01", "as_of"),
        ("/k/event7:host?valid_at=soon", "valid_at"),
        ("/timeline?since=later", "since"),
        ("/?page=0", "page"),
        ("/?q=x&mode=telepathy", "mode"),
    ] {
        let r = ui.get(query);
        r.expect(400, HTML);
        assert!(
            r.body.contains(&format!("<p>{named}: ")),
            "{query}: {}",
            r.body
        );
    }

    // Meaning search without an embedding provider says so (and what to do).
    let r = ui.get("/?q=host&mode=semantic");
    r.expect(400, HTML);
    assert!(r.body.contains("meaning search"), "{}", r.body);

    // No write endpoint: every other method is refused on every route.
    for path in [
        "/",
        "/k/event7:host",
        "/timeline",
        "/verify",
        "/healthz",
        "/nowhere",
    ] {
        for method in ["POST", "PUT", "DELETE", "PATCH"] {
            let r = ui.request(method, path, &[]);
            r.expect(405, HTML);
            assert_eq!(r.header("allow"), Some("GET, HEAD"), "{method} {path}");
        }
    }
    let head = ui.request("HEAD", "/", &[]);
    assert_eq!(head.status, 200);
    head.secure();
}

#[test]
fn pages_of_fifty_keep_the_other_parameters() {
    let sb = Sandbox::new();
    let lines: String = (0..120)
        .map(|i| {
            format!(
                "{{\"key\": \"p:k{i:03}\", \"value\": \"value {i:03}\", \"tags\": [\"bulk\"]}}\n"
            )
        })
        .chain(std::iter::once(
            "{\"key\": \"q:other\", \"value\": \"not bulk\"}\n".to_string(),
        ))
        .collect();
    let r = sb.run_stdin(&["import", "-"], None, &lines);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let ui = Ui::start(&sb, None, None);

    let r = ui.get("/?prefix=p:&tag=bulk");
    r.expect(200, HTML);
    assert_eq!(values(&r.body).len(), 50);
    assert_eq!(values(&r.body)[0], "value 000");
    assert!(!r.body.contains("rel=\"prev\""));
    assert!(
        r.body
            .contains("<a rel=\"next\" href=\"/?prefix=p%3A&amp;tag=bulk&amp;page=2\">"),
        "{}",
        r.body
    );
    let r = ui.get("/?prefix=p%3A&tag=bulk&page=3");
    assert_eq!(values(&r.body).len(), 20);
    assert_eq!(values(&r.body)[0], "value 100");
    assert!(r.body.contains("<span>101–120</span>"), "{}", r.body);
    assert!(
        r.body
            .contains("<a rel=\"prev\" href=\"/?prefix=p%3A&amp;tag=bulk&amp;page=2\">"),
        "{}",
        r.body
    );
    assert!(!r.body.contains("rel=\"next\""));
    assert!(values(&ui.get("/?prefix=p:&page=4").body).is_empty());
    // Search pages the same way.
    let r = ui.get("/?q=value&mode=lexical&page=2");
    assert_eq!(values(&r.body).len(), 50, "{}", r.body);
    assert!(
        r.body
            .contains("href=\"/?q=value&amp;mode=lexical&amp;page=3\""),
        "{}",
        r.body
    );
    // The timeline too.
    let r = ui.get("/timeline?prefix=p:&page=2");
    assert_eq!(values(&r.body).len(), 50);
    assert!(
        r.body.contains("href=\"/timeline?prefix=p%3A&amp;page=3\""),
        "{}",
        r.body
    );
}

/// Values a person or an agent might store that must stay text.
const HOSTILE: &[&str] = &[
    "<script>alert(1)</script>",
    "a <img src=x onerror=alert(1)> b",
    "\"><svg onload=alert(1)>",
    "[click me](javascript:alert(1))",
    "[click me](JaVaScRiPt:alert(1)) and [data](data:text/html,<script>alert(1)</script>)",
    "<a href=\"javascript:alert(1)\">x</a>",
];

fn store_hostile(sb: &Sandbox) -> String {
    for (i, v) in HOSTILE.iter().enumerate() {
        sb.ok(
            &["store", &format!("evil:{i}"), v],
            Some("2026-04-01T00:00:00Z"),
        );
    }
    // Keys can hold `/`, `@`, `+` and `:` (but no markup): their links still work.
    sb.ok(
        &["store", "odd/key@x+y", "fine"],
        Some("2026-04-01T00:00:00Z"),
    );
    let long = "<script>alert(1)</script>".repeat(2_000);
    sb.ok(&["store", "evil:long", &long], Some("2026-04-01T00:00:00Z"));
    long
}

/// The tags of a page's markup (or of a browser's serialized DOM): text never holds a
/// raw `<`, so every `<` opens a tag.
fn tags(body: &str) -> impl Iterator<Item = &str> {
    body.split('<')
        .skip(1)
        .map(|t| t.split('>').next().unwrap_or(""))
}

/// No element, event handler or script link from a value in the page's markup.
fn assert_inert(body: &str, what: &str) {
    let mut svgs = 0;
    for tag in tags(body) {
        let lower = tag.to_ascii_lowercase();
        let name = lower
            .split(|c: char| c.is_whitespace() || c == '/')
            .next()
            .unwrap_or("");
        assert!(
            !matches!(
                name,
                "script" | "img" | "iframe" | "object" | "embed" | "style"
            ),
            "{what}: a <{name}> element: <{tag}>"
        );
        svgs += usize::from(name == "svg");
        // Attribute names only: quoted values left out.
        let names = lower.split('"').step_by(2).collect::<Vec<_>>().join(" ");
        assert!(
            !names
                .split_whitespace()
                .skip(1)
                .any(|a| a.starts_with("on")),
            "{what}: an event handler in <{tag}>"
        );
        for href in lower.split("href=\"").skip(1) {
            assert!(
                !["javascript:", "vbscript:", "data:"]
                    .iter()
                    .any(|s| href.trim_start().starts_with(s)),
                "{what}: a script link in <{tag}>"
            );
        }
    }
    assert!(svgs <= 1, "{what}: only the picture is an <svg>");
}

#[test]
fn hostile_values_stay_text_on_every_page() {
    let sb = Sandbox::new();
    let long = store_hostile(&sb);
    let ui = Ui::start(&sb, None, None);
    let escaped_long = long.replace('<', "&lt;").replace('>', "&gt;");

    let list = ui.get("/");
    list.expect(200, HTML);
    assert_inert(&list.body, "list");
    assert!(list.body.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(list.body.contains("a &lt;img src=x onerror=alert(1)&gt; b"));
    assert!(list.body.contains("click me"), "the link's text stays");
    assert!(list.body.contains(&escaped_long), "the long value, whole");
    assert!(
        list.body.contains("href=\"/k/odd%2Fkey%40x%2By\""),
        "{}",
        list.body
    );
    let r = ui.get("/k/odd%2Fkey%40x%2By");
    r.expect(200, HTML);
    assert!(r.body.contains("<p>fine</p>"));

    for i in 0..HOSTILE.len() {
        let r = ui.get(&format!("/k/evil:{i}"));
        r.expect(200, HTML);
        assert_inert(&r.body, &format!("key page {i}"));
        // One picture, inlined; its text is escaped too.
        assert_eq!(r.body.matches("<svg").count(), 1, "{}", r.body);
    }
    let r = ui.get("/k/evil:long");
    assert_inert(&r.body, "long key page");
    assert!(r.body.contains(&escaped_long));
    let r = ui.get("/timeline?clock=tx");
    assert_inert(&r.body, "timeline");
    assert!(r.body.contains("&lt;svg onload=alert(1)&gt;"));
    let r = ui.get("/?q=alert&mode=lexical");
    assert_inert(&r.body, "search");
    assert!(r.body.contains("&lt;script&gt;"), "{}", r.body);

    // What a request echoes back is escaped too.
    for query in [
        "/?prefix=%22%3E%3Cscript%3Ealert(1)%3C/script%3E",
        "/?q=%22%3E%3Cimg%20src=x%20onerror=alert(1)%3E",
        "/?valid_at=%3Cscript%3E",
        "/timeline?since=%22%3E%3Cscript%3E",
        "/k/%3Cscript%3E",
    ] {
        let r = ui.get(query);
        r.secure();
        assert_inert(&r.body, query);
    }
}

#[test]
fn off_loopback_a_token_is_required() {
    let sb = Sandbox::new();
    for args in [
        vec!["ui", "--listen", "0.0.0.0:0"],
        vec!["ui", "--listen", "[::]:0"],
    ] {
        let r = sb.run(&args, None);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains("token"), "{}", r.stderr);
        assert!(r.stderr.contains("MEM7_TOKEN"), "{}", r.stderr);
        assert!(r.stdout.is_empty(), "nothing served");
    }
    let r = sb.run(&["ui", "--listen", "0.0.0.0:0", "--token", "short"], None);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("at least 16 characters"), "{}", r.stderr);
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = busy.local_addr().unwrap().port();
    let r = sb.run(&["ui", "--listen", &format!("127.0.0.1:{port}")], None);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("cannot listen"), "{}", r.stderr);
}

#[test]
fn with_a_token_requests_carry_it_or_its_cookie() {
    let sb = Sandbox::new();
    sb.ok(&["store", "k:secret", "only for the team"], None);
    let ui = Ui::start(&sb, None, Some(TOKEN));

    let r = ui.get("/");
    r.expect(401, HTML);
    assert!(!r.body.contains("only for the team"));
    ui.get("/k/k:secret").expect(401, HTML);
    ui.get("/?token=wrong-token-0123456789abcdef")
        .expect(401, HTML);
    ui.get("/healthz").expect(200, "text/plain; charset=utf-8");

    let bearer = format!("Bearer {TOKEN}");
    let r = ui.request("GET", "/", &[("Authorization", &bearer)]);
    r.expect(200, HTML);
    assert!(r.body.contains("only for the team"));

    // A browser opens /?token=… once: the cookie is set and the token leaves the address.
    let r = ui.get(&format!("/?valid_at=2030-01-01&token={TOKEN}"));
    assert_eq!(r.status, 303, "{r:?}");
    r.secure();
    assert_eq!(r.header("location"), Some("/?valid_at=2030-01-01"));
    let r2 = ui.get(&format!("//evil.example/?token={TOKEN}"));
    assert_eq!(
        r2.header("location"),
        Some("/"),
        "no redirect to another site"
    );
    let cookie = r.header("set-cookie").unwrap().to_string();
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    assert!(
        !cookie.contains(TOKEN),
        "the cookie is derived, not the token: {cookie}"
    );
    let pair = cookie.split(';').next().unwrap();
    let r = ui.request("GET", "/k/k:secret", &[("Cookie", &format!("a=b; {pair}"))]);
    r.expect(200, HTML);
    assert!(r.body.contains("only for the team"));
    let r = ui.request("GET", "/", &[("Cookie", "mem7_ui=0123")]);
    r.expect(401, HTML);
    // A token also lifts the loopback Host check (the token guards it).
    let r = ui.request(
        "GET",
        "/",
        &[("Host", "mem7.example:80"), ("Authorization", &bearer)],
    );
    r.expect(200, HTML);
    let r = ui.request("POST", "/", &[("Authorization", &bearer)]);
    r.expect(405, HTML);
}

#[test]
fn without_a_token_only_loopback_hosts_are_answered() {
    // Against DNS rebinding: a page on evil.example whose name now points at 127.0.0.1
    // sends `Host: evil.example`.
    let sb = Sandbox::new();
    sb.ok(&["store", "k:a", "1"], None);
    let ui = Ui::start(&sb, None, None);
    let r = ui.request("GET", "/", &[("Host", "evil.example:7078")]);
    r.expect(403, HTML);
    assert!(!r.body.contains("<p>1</p>"));
    for host in ["localhost:7078", "127.0.0.1"] {
        ui.request("GET", "/", &[("Host", host)]).expect(200, HTML);
    }
}

/// Polls `path` until its body holds `text` (or fails, showing the last body).
fn wait_for(ui: &Ui, path: &str, text: &str) {
    let mut body = String::new();
    let seen = world::poll(|| {
        body = ui.get(path).body;
        body.contains(text)
    });
    assert!(seen, "{text:?} never appeared on {path}: {body}");
}

#[test]
fn new_writes_show_on_the_next_load() {
    // On the real clock: the server reads its clock once, so on a pinned one its "now"
    // would stay before the writes it must show as what holds now.
    let sb = Sandbox::new().on_the_real_clock();
    sb.ok(&["store", "k:one", "first value"], None);
    let ui = Ui::start(&sb, None, None);
    wait_for(&ui, "/", "first value");
    // Another process writes while the page is served…
    sb.ok(&["store", "k:two", "written while serving"], None);
    wait_for(&ui, "/", "written while serving");
    sb.ok(&["store", "k:one", "changed value"], None);
    wait_for(&ui, "/k/k:one", "changed value");
    wait_for(&ui, "/timeline?clock=tx", "changed value");
    // …and an entry arrives in the files (git pull, a person's editor).
    // (It was recorded far ahead, in 2099, so it holds from then: the transaction-time
    // timeline lists it.)
    sb.append_by_hand("k:pulled", "from another machine");
    wait_for(&ui, "/timeline?clock=tx", "from another machine");
    wait_for(&ui, "/verify", "unsealed");
}

/// Debian's chromium; when it is not installed, a failure saying how to get it, or
/// `None` when `MEM7_TEST_ALLOW_MISSING` lists `chromium` (the test then passes, skipped).
fn chromium() -> Option<PathBuf> {
    let found = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .chain([PathBuf::from("/usr/bin")])
        .flat_map(|d| ["chromium", "chromium-browser"].map(|n| d.join(n)))
        .find(|p| p.is_file());
    if found.is_none() {
        world::missing(
            "chromium",
            "the browser tests need Debian's chromium, which is not installed",
            "install it with `sudo apt-get install chromium` (.ci/run does when apt-get is there)",
        );
    }
    found
}

/// Runs headless chromium on `url` with `args` (a fresh profile each time); returns its
/// standard output.
fn browse(url: &str, args: &[&str]) -> String {
    let profile = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(chromium().expect("the test checked for chromium"))
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .arg(url)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromium starts");
    let mut out = String::new();
    let reader = {
        let mut stdout = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = stdout.read_to_string(&mut s);
            s
        })
    };
    let deadline = Instant::now() + Duration::from_secs(90);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("chromium did not finish on {url} within 90 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    out.push_str(&reader.join().unwrap());
    assert!(status.success(), "chromium failed on {url}: {status}");
    out
}

#[test]
fn a_real_browser_renders_the_picture_and_keeps_markup_as_text() {
    if chromium().is_none() {
        return;
    }
    let sb = worked_example(&["infra"]);
    store_hostile(&sb);
    let ui = Ui::start(&sb, Some("2026-04-20T00:00:00Z"), None);

    // The key page as the browser built it: one rectangle per version, every value.
    let dom = browse(&ui.url("/k/event7%3Ahost"), &["--dump-dom"]);
    assert!(dom.contains("<svg"), "{dom}");
    assert_eq!(dom.matches("<rect ").count(), 5, "{dom}");
    for value in ["Railway", "Cloudflare", "local only"] {
        assert!(dom.contains(&format!("<p>{value}</p>")), "{value}: {dom}");
    }
    for n in 1..=5 {
        assert!(dom.contains(&format!("id=\"row-{n}\"")), "{n}");
    }

    // Hostile values: the browser built no element from them; their text is there.
    for (i, value) in HOSTILE.iter().enumerate() {
        let dom = browse(&ui.url(&format!("/k/evil:{i}")), &["--dump-dom"]);
        assert_inert(&dom, &format!("the browser's DOM of {value:?}"));
        assert_eq!(dom.matches("<svg").count(), 1, "only the picture: {dom}");
    }
    let dom = browse(&ui.url("/k/evil:0"), &["--dump-dom"]);
    assert!(
        dom.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
        "{dom}"
    );
    let dom = browse(&ui.url("/k/evil:1"), &["--dump-dom"]);
    assert!(
        dom.contains("a &lt;img src=x onerror=alert(1)&gt; b"),
        "{dom}"
    );
    let dom = browse(&ui.url("/"), &["--dump-dom"]);
    assert_inert(&dom, "the browser's DOM of the list");
    assert!(dom.contains("&lt;svg onload=alert(1)&gt;"), "{dom}");

    // A screenshot of the worked example's key page; MEM7_UPDATE_SCREENSHOT=1 keeps it
    // as docs/img/ui-key-page.png.
    let shot = tempfile::tempdir().unwrap();
    let png = shot.path().join("key.png");
    browse(
        &ui.url("/k/event7%3Ahost?valid_at=2026-04-10&as_of=2026-04-11"),
        &[
            "--window-size=1280,1040",
            &format!("--screenshot={}", png.display()),
        ],
    );
    let bytes = std::fs::read(&png).expect("a screenshot");
    assert!(bytes.starts_with(b"\x89PNG"), "a PNG");
    assert!(
        bytes.len() > 20_000,
        "a page, not a blank: {} bytes",
        bytes.len()
    );
    if std::env::var_os("MEM7_UPDATE_SCREENSHOT").is_some() {
        let docs = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/img/ui-key-page.png");
        std::fs::write(docs, bytes).unwrap();
    }
}

#[test]
fn the_inertness_check_catches_live_markup() {
    for live in [
        "<p><script>alert(1)</script></p>",
        "<p><img src=x onerror=alert(1)></p>",
        "<p>\"><svg onload=alert(1)></p>",
        "<a href=\"javascript:alert(1)\">x</a>",
        "<a href=\" JavaScript:alert(1)\">x</a>",
        "<a href=\"data:text/html,x\">x</a>",
    ] {
        let caught = std::panic::catch_unwind(|| assert_inert(live, "check"));
        assert!(caught.is_err(), "{live} passed the check");
    }
    assert_inert(
        "<p>&lt;script&gt; <a href=\"/k/a\">a</a></p><input value=\"&quot; onerror=x\">",
        "inert",
    );
}

#[test]
fn a_foreign_origin_is_refused_whatever_the_token() {
    let sb = worked_example(&["infra"]);
    let token = "ui-token-0123456789abcdef";
    for with_token in [false, true] {
        let ui = Ui::start(
            &sb,
            Some("2026-04-12T12:00:00Z"),
            with_token.then_some(token),
        );
        let bearer = format!("Bearer {token}");
        let mut headers = vec![("Origin", "https://evil.example")];
        if with_token {
            headers.push(("Authorization", bearer.as_str()));
        }
        let r = ui.request("GET", "/", &headers);
        assert_eq!(r.status, 403, "token {with_token}: {r:?}");
        let own = format!("http://{}", ui.addr);
        let mut headers = vec![("Origin", own.as_str())];
        if with_token {
            headers.push(("Authorization", bearer.as_str()));
        }
        assert_eq!(ui.request("GET", "/", &headers).status, 200);
    }
}

// ---------------------------------------------------------------------------------------
// Pictures readable on a real day: the tick labels of `history --svg` (the same picture
// the key page inlines) as golden files, and no two pieces of text overlapping as a
// browser draws them.

/// Stores `key` once per `(recorded, value, valid_from)`, with the clock pinned at
/// `recorded`.
fn store_at(sb: &Sandbox, key: &str, writes: &[(&str, &str, Option<&str>)]) {
    for (recorded, value, valid_from) in writes {
        let mut args = vec!["store", key, value];
        if let Some(from) = valid_from {
            args.extend(["--valid-from", from]);
        }
        sb.ok(&args, Some(recorded));
    }
}

/// Compares `svg` with `tests/snapshots/svg/NAME.svg`; `MEM7_UPDATE_GOLDEN=1` writes it
/// instead.
fn golden(name: &str, svg: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots/svg")
        .join(format!("{name}.svg"));
    if std::env::var_os("MEM7_UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, svg).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (MEM7_UPDATE_GOLDEN=1 cargo test --test it ui:: writes it)",
            path.display()
        )
    });
    assert!(
        svg == want,
        "the picture differs from {} (look at both; MEM7_UPDATE_GOLDEN=1 cargo test \
         --test it ui:: rewrites it):\n{svg}",
        path.display()
    );
}

/// The text of every `<text>` element of an SVG, in order.
fn svg_texts(svg: &str) -> Vec<&str> {
    svg.split("<text ")
        .skip(1)
        .map(|t| {
            t.split_once('>')
                .unwrap()
                .1
                .split("</text>")
                .next()
                .unwrap()
        })
        .collect()
}

#[test]
fn tick_labels_are_as_short_as_their_neighbours_allow_golden() {
    struct Case {
        name: &'static str,
        writes: &'static [(&'static str, &'static str, Option<&'static str>)],
        now: &'static str,
        read: Option<(&'static str, &'static str)>,
        labels: &'static [&'static str],
    }
    let cases = [
        Case {
            name: "milliseconds",
            writes: &[
                ("2026-12-03T09:00:00.001Z", "first", None),
                ("2026-12-03T09:00:00.002Z", "second", None),
                ("2026-12-03T09:00:00.004Z", "third", None),
                ("2026-12-03T09:00:00.007Z", "fourth", None),
            ],
            now: "2026-12-03T09:00:01Z",
            read: None,
            // The date once, then the milliseconds that tell the writes apart.
            labels: &["2026-12-03", "09:00:00.001", "09:00:00.004", "09:00:01.000"],
        },
        Case {
            name: "minutes",
            writes: &[
                ("2026-12-03T09:00:00Z", "Railway", None),
                ("2026-12-03T09:05:00Z", "Cloudflare", None),
                ("2026-12-03T09:12:00Z", "Fly", None),
                (
                    "2026-12-03T09:30:00Z",
                    "local only",
                    Some("2026-12-03T08:00:00Z"),
                ),
            ],
            now: "2026-12-03T10:00:00Z",
            read: Some(("2026-12-03T09:06:00Z", "2026-12-03T09:13:00Z")),
            labels: &["08:00", "09:05", "10:00", "as_of 2026-12-03 09:13:00"],
        },
        Case {
            name: "days",
            writes: &[
                ("2026-12-01T09:15:00Z", "Railway", None),
                ("2026-12-02T14:30:00Z", "Cloudflare", None),
                ("2026-12-05T08:00:00Z", "local only", Some("2026-11-28")),
            ],
            now: "2026-12-08T00:00:00Z",
            read: None,
            labels: &["2026-11-28", "2026-12-02", "2026-12-08"],
        },
        Case {
            name: "years",
            writes: &[
                ("2019-03-01T10:00:00Z", "Postgres 11", None),
                ("2021-06-15T10:00:00Z", "Postgres 13", None),
                ("2024-01-10T10:00:00Z", "Postgres 16", None),
                ("2024-02-10T10:00:00Z", "Postgres 9", Some("2015-01-01")),
            ],
            now: "2026-12-03T10:00:00Z",
            read: None,
            labels: &["2015", "2019", "2021", "2026"],
        },
    ];
    for case in cases {
        let sb = Sandbox::new();
        store_at(&sb, "deploy:db", case.writes);
        let mut args = vec!["history", "deploy:db", "--svg"];
        if let Some((valid_at, as_of)) = case.read {
            args.extend(["--valid-at", valid_at, "--as-of", as_of]);
        }
        let svg = sb.ok(&args, Some(case.now)).stdout;
        let texts = svg_texts(&svg);
        for label in case.labels {
            assert!(
                texts.contains(label),
                "{}: no {label:?} in {texts:?}",
                case.name
            );
        }
        // No label repeats the date of its neighbour, and none carries microseconds
        // it does not need.
        assert!(
            !texts.iter().any(|t| t.contains('T') && t.contains("2026-")),
            "{}: {texts:?}",
            case.name
        );
        golden(case.name, &svg);
    }
}

/// Measures, in the browser, the box of every `<text>` in the page's pictures and
/// appends the findings as JSON in `<pre id="boxes">`: the pairs of texts whose boxes
/// intersect, and the texts that stick out of their picture. A control picture with
/// two texts on top of each other shows the measuring works.
const MEASURE: &str = r#"<svg id="control" width="200" height="40"><text x="10" y="20">overlapping</text><text x="30" y="22">text</text></svg>
<script>
(() => {
  const report = [];
  for (const svg of document.querySelectorAll("svg")) {
    const frame = svg.getBoundingClientRect();
    const boxes = [...svg.querySelectorAll("text")].map(t => [t.textContent, t.getBoundingClientRect()]);
    const overlaps = [];
    const outside = [];
    for (let i = 0; i < boxes.length; i++) {
      const [a, r] = boxes[i];
      if (r.left < frame.left - 0.5 || r.right > frame.right + 0.5 || r.top < frame.top - 0.5 || r.bottom > frame.bottom + 0.5) outside.push(a);
      for (let j = i + 1; j < boxes.length; j++) {
        const [b, q] = boxes[j];
        const apart = r.right <= q.left + 0.5 || q.right <= r.left + 0.5 || r.bottom <= q.top + 0.5 || q.bottom <= r.top + 0.5;
        if (!apart) overlaps.push(a + " | " + b);
      }
    }
    report.push({ id: svg.id, texts: boxes.length, overlaps, outside });
  }
  const pre = document.createElement("pre");
  pre.id = "boxes";
  pre.textContent = JSON.stringify(report);
  document.body.appendChild(pre);
})();
</script>"#;

#[test]
fn a_real_browser_finds_no_overlapping_text_in_a_busy_days_picture() {
    if chromium().is_none() {
        return;
    }
    let sb = Sandbox::new();
    // Twenty-four writes on one day, at odd seconds and microseconds as real writes
    // are, a few of them late corrections of the morning.
    let mut writes = Vec::new();
    for i in 0..24u32 {
        let second = 9 * 3600 + i * 977;
        let recorded = format!(
            "2026-12-03T{:02}:{:02}:{:02}.{:06}Z",
            second / 3600,
            second / 60 % 60,
            second % 60,
            123_457 * (i + 1) % 1_000_000
        );
        let valid_from = (i % 5 == 4).then(|| format!("2026-12-03T08:{:02}:00Z", i));
        writes.push((recorded, format!("host {i}"), valid_from));
    }
    for (recorded, value, valid_from) in &writes {
        let mut args = vec!["store", "deploy:host", value.as_str()];
        if let Some(from) = valid_from {
            args.extend(["--valid-from", from.as_str()]);
        }
        sb.ok(&args, Some(recorded));
    }
    let ui = Ui::start(&sb, Some("2026-12-03T16:00:00Z"), None);
    let css = ui.get("/assets/style.css").body;
    let dir = tempfile::tempdir().unwrap();
    for (i, path) in [
        "/k/deploy:host",
        "/k/deploy:host?valid_at=2026-12-03T10:00:00Z&as_of=2026-12-03T11:30:00Z",
    ]
    .iter()
    .enumerate()
    {
        // The page as served, with its stylesheet inlined and the measuring script
        // added: the page itself runs no script (its policy forbids any), so the copy
        // is loaded from a file.
        let page = ui.get(path);
        page.expect(200, HTML);
        let html = page
            .body
            .replace(
                "<link rel=\"stylesheet\" href=\"/assets/style.css\">",
                &format!("<style>{css}</style>"),
            )
            .replace("</body>", &format!("{MEASURE}</body>"));
        assert!(html.contains("<style>") && html.contains(MEASURE));
        let file = dir.path().join(format!("key{i}.html"));
        std::fs::write(&file, html).unwrap();
        let url = format!("file://{}", file.display());
        let dom = browse(&url, &["--window-size=1400,1000", "--dump-dom"]);
        let json = dom
            .split("<pre id=\"boxes\">")
            .nth(1)
            .and_then(|rest| rest.split("</pre>").next())
            .unwrap_or_else(|| panic!("no measurements in {dom}"))
            .replace("&quot;", "\"")
            .replace("&amp;", "&")
            .replace("&lt;", "<")
            .replace("&gt;", ">");
        let report: serde_json::Value = serde_json::from_str(&json).unwrap();
        let report = report.as_array().unwrap();
        assert_eq!(report.len(), 2, "the picture and the control: {json}");
        let (picture, control) = (&report[0], &report[1]);
        assert_eq!(control["id"], "control");
        assert_eq!(
            control["overlaps"].as_array().unwrap().len(),
            1,
            "the measuring sees an overlap: {json}"
        );
        assert!(
            picture["texts"].as_u64().unwrap() > 30,
            "labels, values and titles: {json}"
        );
        assert_eq!(picture["overlaps"], serde_json::json!([]), "{path}");
        assert_eq!(picture["outside"], serde_json::json!([]), "{path}");
        if std::env::var_os("MEM7_KEEP_SCREENSHOT").is_some() {
            let png = std::env::temp_dir().join(format!("mem7-busy-day-{i}.png"));
            browse(
                &url,
                &[
                    "--window-size=1400,1000",
                    &format!("--screenshot={}", png.display()),
                ],
            );
        }
    }
}

/// With a user workspace beside the project's, the page lists every scope's keys with a
/// scope column (the overridden value marked shadowed), `?scope=` shows one scope, and
/// a key only the user scope holds has its page.
#[test]
fn the_page_shows_every_scope_and_which_one_answers() {
    let sb = Sandbox::new();
    let now = Some("2026-05-01T10:00:00Z");
    let user = sb.dir.path().join("home/.mem7/workspace");
    sb.ok(&["init", user.to_str().unwrap()], None);
    sb.ok(&["store", "pref:editor", "helix"], now);
    sb.ok(&["store", "pref:editor", "vim", "--scope", "project"], now);
    sb.ok(&["store", "user:shell", "fish"], now);
    sb.ok(&["store", "deploy:target", "Render"], now);
    let ui = Ui::start(&sb, now, None);
    let page = ui.get("/");
    page.expect(200, HTML);
    assert!(page.body.contains("<th>scope</th>"), "{}", page.body);
    assert!(page.body.contains("<td class=\"scope\">project</td>"));
    assert!(
        page.body.contains("user (shadowed)") && page.body.contains("helix"),
        "{}",
        page.body
    );
    let only_user = ui.get("/?scope=user");
    only_user.expect(200, HTML);
    assert!(only_user.body.contains("helix") && only_user.body.contains("fish"));
    assert!(!only_user.body.contains("vim") && !only_user.body.contains("Render"));
    ui.get("/k/user%3Ashell").expect(200, HTML);
    ui.get("/?scope=team").expect(400, HTML);
}

/// With a personal workspace beside the project's, the page searches every scope by
/// meaning as the command line does (it answered 400, "the embedding provider is
/// `none`", while `mem7 search --mode semantic` worked).
#[test]
fn the_page_searches_by_meaning_beside_a_personal_workspace() {
    let Some(model) = crate::local_model::model() else {
        return;
    };
    let sb = Sandbox::new();
    let user = sb.dir.path().join("home/.mem7/workspace");
    sb.ok(&["init", user.to_str().unwrap()], None);
    sb.ok(&["store", "pref:editor", "helix"], None);
    sb.ok(&["store", "cat:mat", "the cat sat on the mat"], None);
    let ui = Ui::start_with(&sb, None, None, &[("MEM7_MODEL_DIR", model.as_path())]);
    let r = ui.get("/?q=kitten+on+a+rug&mode=semantic");
    r.expect(200, HTML);
    assert!(r.body.contains("the cat sat on the mat"), "{}", r.body);
}
