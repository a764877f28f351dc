//! `mem7 ui`: the read-only web page, served by the binary itself (axum). Every route
//! answers GET (and HEAD) only; any other method gets 405, so the page has no way to
//! write. Each request first catches the engine up with the files (a cheap check of
//! sizes and mtimes), so a write by the CLI, an agent or `git pull` shows on the next
//! page load.
//!
//! Every response carries a strict Content-Security-Policy (no script at all, styles only
//! from `/assets/style.css`), `nosniff` and `no-referrer`. On loopback without a token,
//! requests must name a loopback host (against DNS rebinding); with a token, requests
//! carry `Authorization: Bearer TOKEN`, or the cookie set by opening `/?token=TOKEN` once.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::extract::{Path, RawQuery, Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use super::page::{self, PER_PAGE, Query};
use crate::core::chain::ChainKey;
use crate::core::level::Level;
use crate::core::time::TxTime;
use crate::engine::Scoped;
use crate::engine::{Engine, Find, ReadAt, Timeline, TimelineClock, Window};
use crate::error::{Error, Result};
use crate::front::auth::Expected;
use crate::front::env::Env;
use crate::front::request;
use crate::front::session::{Session, Voice};
use crate::front::workspaces;

/// The policy on every response: nothing runs, nothing loads from elsewhere.
pub const CSP: &str = "default-src 'none'; style-src 'self'; img-src 'self' data:; \
                       base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/// The cookie that `/?token=TOKEN` sets, so that a browser can open the page.
pub const COOKIE: &str = "mem7_ui";

/// What every request shares: one engine and the environment read at start (the
/// shell's [`Session`]), and the chain key.
struct Ui {
    session: Session,
    chain_key: ChainKey,
    /// The last verify report and the files it read (names, sizes, modification
    /// times): `/verify` hashes every byte only when a file changed.
    verified: Mutex<Option<(Vec<crate::store::FileStat>, crate::verify::Report)>>,
}

/// Who may ask: everyone on a loopback host, or the holders of the token.
struct Guard {
    token: Option<Expected>,
    /// The cookie's value for this token (derived, so the cookie is not the token).
    cookie: Option<Expected>,
    cookie_value: String,
}

fn cookie_value(token: &str) -> String {
    blake3::Hash::from(blake3::derive_key(
        "mem7 ui cookie 2026-12-01 v1",
        token.trim().as_bytes(),
    ))
    .to_hex()
    .to_string()
}

/// Serves the page on `listener` until Ctrl-C.
pub async fn serve(
    engine: Engine,
    env: Env,
    chain_key: ChainKey,
    listener: tokio::net::TcpListener,
    token: Option<String>,
) -> Result<()> {
    let addr: SocketAddr = listener
        .local_addr()
        .map_err(|e| Error::io("<listener>", e))?;
    let ui = Arc::new(Ui {
        session: Session::new(engine, env, Voice("mem7 ui")),
        chain_key,
        verified: Mutex::new(None),
    });
    let cookie_value = token.as_deref().map(cookie_value).unwrap_or_default();
    let guard = Arc::new(Guard {
        token: token.as_deref().map(Expected::new),
        cookie: token.as_deref().map(|_| Expected::new(&cookie_value)),
        cookie_value,
    });
    let app = axum::Router::new()
        .route("/", get(keys))
        .route("/k/{*key}", get(key))
        .route("/timeline", get(timeline))
        .route("/verify", get(verify))
        .route(
            "/healthz",
            get(|| async { text("text/plain; charset=utf-8", "ok\n") }),
        )
        .route(
            "/assets/style.css",
            get(|| async { text("text/css; charset=utf-8", page::stylesheet()) }),
        )
        .fallback(|| async {
            html(
                StatusCode::NOT_FOUND,
                page::problem_page("Not found", "There is no such page.", None),
            )
        })
        .with_state(ui)
        .layer(middleware::from_fn_with_state(guard, guarded));
    axum::serve(listener, app)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
        .map_err(|e| Error::io(addr.to_string(), e))
}

fn text(content_type: &'static str, body: impl Into<String>) -> Response {
    ([(header::CONTENT_TYPE, content_type)], body.into()).into_response()
}

fn html(status: StatusCode, body: String) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        body,
    )
        .into_response()
}

/// The security headers on every response, after the checks of [`check`].
async fn guarded(State(guard): State<Arc<Guard>>, req: Request, next: Next) -> Response {
    let mut resp = check(&guard, req, next).await;
    let h = resp.headers_mut();
    for (name, value) in [
        (header::CONTENT_SECURITY_POLICY, CSP),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::REFERRER_POLICY, "no-referrer"),
        (header::X_FRAME_OPTIONS, "DENY"),
        // Every load shows what memory holds now.
        (header::CACHE_CONTROL, "no-store"),
    ] {
        h.insert(name, HeaderValue::from_static(value));
    }
    resp
}

async fn check(guard: &Guard, req: Request, next: Next) -> Response {
    let allowed = {
        let header_text = |name| req.headers().get(name).and_then(|v| v.to_str().ok());
        crate::front::auth::origin_allowed(header_text(header::ORIGIN), header_text(header::HOST))
    };
    if !allowed {
        return html(
            StatusCode::FORBIDDEN,
            page::problem_page(
                "Forbidden",
                "This page answers no request sent by another site (its Origin is not this server's).",
                Some("open the page itself at its own address"),
            ),
        );
    }
    if req.method() != Method::GET && req.method() != Method::HEAD {
        let mut resp = html(
            StatusCode::METHOD_NOT_ALLOWED,
            page::problem_page(
                "Method not allowed",
                "mem7 ui is read-only: it answers GET requests only.",
                Some("write with `mem7 store` or an agent's memory_store"),
            ),
        );
        resp.headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
        return resp;
    }
    let Some(token) = &guard.token else {
        if !loopback_host(&req) {
            return html(
                StatusCode::FORBIDDEN,
                page::problem_page(
                    "Forbidden",
                    "This page answers only requests addressed to localhost, 127.0.0.1 or [::1].",
                    Some("open it at http://127.0.0.1:PORT/"),
                ),
            );
        }
        return next.run(req).await;
    };
    if req.uri().path() == "/healthz" {
        return next.run(req).await;
    }
    let headers = req.headers();
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    let cookie = headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|c| c.trim().strip_prefix(COOKIE)?.strip_prefix('='))
        .any(|v| guard.cookie.as_ref().is_some_and(|c| c.matches(v)));
    if token.matches_bearer(bearer) || cookie {
        return next.run(req).await;
    }
    let query = Query::parse(req.uri().query());
    if let Some(given) = query.get("token")
        && token.matches(given)
    {
        // Set the cookie and show the same page without the token in its address.
        // Never `//host…` (or `/\host…`), which a browser would take for another site.
        let path = req.uri().path();
        let path = if path.starts_with("//") || path.starts_with("/\\") {
            "/"
        } else {
            path
        };
        let location = query.link_with(path, "token", None);
        let mut resp = (StatusCode::SEE_OTHER, "").into_response();
        let h = resp.headers_mut();
        if let Ok(v) = HeaderValue::from_str(&location) {
            h.insert(header::LOCATION, v);
        }
        if let Ok(v) = HeaderValue::from_str(&format!(
            "{COOKIE}={}; Path=/; HttpOnly; SameSite=Strict",
            guard.cookie_value
        )) {
            h.insert(header::SET_COOKIE, v);
        }
        return resp;
    }
    let mut resp = html(
        StatusCode::UNAUTHORIZED,
        page::problem_page(
            "Token required",
            "This page needs the token given to `mem7 ui --token` (or MEM7_TOKEN).",
            Some(
                "send `Authorization: Bearer <token>`, or open /?token=<token> once in a browser (it sets a cookie)",
            ),
        ),
    );
    resp.headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    resp
}

/// Whether the request names a loopback host (or none: only browsers are fooled by DNS
/// rebinding, and they always send one).
fn loopback_host(req: &Request) -> bool {
    let Some(host) = req.headers().get(header::HOST) else {
        return true;
    };
    let Ok(host) = host.to_str() else {
        return false;
    };
    let name = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => host.rsplit_once(':').map_or(host, |(name, _)| name),
    };
    name.eq_ignore_ascii_case("localhost")
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// What a view answers: a status and a page.
type Answer = (StatusCode, String);

/// Runs a view on a blocking thread: catch up with the files, then `f` (the shell's
/// [`Session::call`]). Input errors
/// become 400 pages naming the problem; other failures 500 pages.
async fn view<F>(ui: Arc<Ui>, f: F) -> Response
where
    F: FnOnce(&mut Engine, TxTime, &Ui) -> Result<Answer> + Send + 'static,
{
    let done =
        tokio::task::spawn_blocking(move || ui.session.call(|engine, now, _| f(engine, now, &ui)))
            .await;
    match done {
        Ok(Ok((status, body))) => html(status, body),
        Ok(Err(e)) => {
            // A conflicted memory file is the workspace's state, not the request's.
            let status = match (&e, e.kind()) {
                (Error::Conflict { .. }, _) => StatusCode::CONFLICT,
                (_, crate::error::Kind::Input) => StatusCode::BAD_REQUEST,
                (_, crate::error::Kind::Internal) => StatusCode::INTERNAL_SERVER_ERROR,
            };
            if status != StatusCode::BAD_REQUEST {
                eprintln!("mem7 ui: error: {e}");
            }
            html(
                status,
                page::problem_page(
                    if status == StatusCode::BAD_REQUEST {
                        "Bad request"
                    } else {
                        "Error"
                    },
                    &e.to_string(),
                    e.hint().as_deref(),
                ),
            )
        }
        Err(join) => html(
            StatusCode::INTERNAL_SERVER_ERROR,
            page::problem_page(
                "Error",
                &format!("mem7 failed inside this request ({join}); the server is still running"),
                None,
            ),
        ),
    }
}

/// The `page` parameter (from 1).
fn page_number(q: &Query) -> Result<usize> {
    match q.get("page") {
        None => Ok(1),
        Some(t) => t.parse::<usize>().ok().filter(|&n| n >= 1).ok_or_else(|| {
            Error::input(
                format!("page: {t:?} is not a page number"),
                "pages count from 1",
            )
        }),
    }
}

/// The rows a page asks the index for: its own, and one more.
fn page_window(page: usize) -> Window {
    Window {
        offset: (page - 1).saturating_mul(PER_PAGE),
        limit: PER_PAGE + 1,
    }
}

/// A page's rows from [`page_window`]'s answer, and whether there are more.
fn window<T>(mut rows: Vec<T>) -> (Vec<T>, bool) {
    let more = rows.len() > PER_PAGE;
    rows.truncate(PER_PAGE);
    (rows, more)
}

/// This page's rows of `all`, and whether there are more.
fn slice<T: Clone>(all: &[T], page: usize) -> (Vec<T>, bool) {
    let start = (page - 1).saturating_mul(PER_PAGE).min(all.len());
    let end = start.saturating_add(PER_PAGE).min(all.len());
    (all[start..end].to_vec(), all.len() > end)
}

/// `mode` as the page offers it, in the words of the CLI and MCP.
async fn keys(State(ui): State<Arc<Ui>>, RawQuery(raw): RawQuery) -> Response {
    let q = Query::parse(raw.as_deref());
    view(ui, move |engine, now, ui| {
        let (valid_at, as_of) = request::read_times(
            ("valid_at", q.get("valid_at")),
            ("as_of", q.get("as_of")),
            now,
        )?;
        let at = ReadAt {
            valid_at,
            as_of,
            now,
        };
        let page = page_number(&q)?;
        let mode = request::search_mode(q.get("mode"))?;
        let tags = q.all("tag");
        let prefix = q.get("prefix").map(str::to_string);
        // A blank search box lists every key, as no search does.
        let search = q
            .get("q")
            .filter(|t| !t.trim().is_empty())
            .map(str::to_string);
        let scope = request::level("scope", q.get("scope"))?;
        let mut open = workspaces::around(engine, ui.session.env(), scope)?;
        // A search searches each scope by meaning as the CLI's does (it used to answer
        // 400, "the embedding provider is `none`", whenever a personal workspace
        // existed).
        if search.is_some() {
            workspaces::enable_embeddings(&mut open, ui.session.env(), Voice("mem7 ui"));
        }
        let narrow = (prefix.as_deref(), &tags[..]);
        let (shown, has_next, stated) = match &search {
            Some(text) => {
                let find = Find {
                    text: text.to_string(),
                    raw: false,
                    tags: tags.clone(),
                    key_prefix: prefix.clone(),
                    limit: page.saturating_mul(PER_PAGE).saturating_add(1),
                    mode,
                };
                let found = open.search(&find, at, None)?;
                let all: Vec<Scoped> = found
                    .rows
                    .into_iter()
                    .map(|h| Scoped {
                        level: h.level,
                        version: h.hit.version,
                        shadowed: h.shadowed,
                    })
                    .collect();
                let (shown, has_next) = slice(&all, page);
                (shown, has_next, found.at)
            }
            // One page and one row more (to know whether there is a next page).
            None => {
                let found = open.list_window(narrow, at, None, page_window(page))?;
                let (shown, has_next) = window(found.rows);
                (shown, has_next, found.at)
            }
        };
        // The scope column, when more than one scope answers.
        let scopes: Vec<(Level, bool)> = match open.stacked() {
            true => shown.iter().map(|s| (s.level, s.shadowed)).collect(),
            false => Vec::new(),
        };
        let rows: Vec<_> = shown.into_iter().map(|s| s.version).collect();
        Ok((
            StatusCode::OK,
            page::list_page(&page::ListPage {
                query: &q,
                rows: &rows,
                page,
                has_next,
                valid_at,
                as_of: stated.as_of,
                search: search.as_deref(),
                scopes: &scopes,
            }),
        ))
    })
    .await
}

async fn key(
    State(ui): State<Arc<Ui>>,
    Path(key): Path<String>,
    RawQuery(raw): RawQuery,
) -> Response {
    let q = Query::parse(raw.as_deref());
    view(ui, move |engine, now, ui| {
        let valid_at = q
            .get("valid_at")
            .map(|t| request::valid_time("valid_at", t))
            .transpose()?;
        let as_of = q
            .get("as_of")
            .map(|t| request::tx_time("as_of", t))
            .transpose()?;
        // The narrowest scope that has the key draws it, as `history --svg` does.
        let mut open = workspaces::around(engine, ui.session.env(), None)?;
        let (engine, versions) = open.drawn(&key)?;
        if versions.is_empty() {
            return Ok((
                StatusCode::NOT_FOUND,
                page::problem_page(
                    "No such key",
                    &format!("No version of {key} was ever recorded."),
                    Some("the list of keys is at /"),
                ),
            ));
        }
        Ok((
            StatusCode::OK,
            page::key_page(&page::KeyPage {
                key: &key,
                versions: &versions,
                now: (now.as_valid(), engine.believed_now(now)?),
                valid_at,
                as_of,
            }),
        ))
    })
    .await
}

async fn timeline(State(ui): State<Arc<Ui>>, RawQuery(raw): RawQuery) -> Response {
    let q = Query::parse(raw.as_deref());
    view(ui, move |engine, _, _| {
        let by_tx = match q.get("clock") {
            None | Some("valid") => false,
            Some("tx") => true,
            Some(other) => {
                return Err(Error::input(
                    format!("clock: {other:?} is not a clock"),
                    "use clock=valid (when facts held) or clock=tx (when mem7 recorded them)",
                ));
            }
        };
        let since = q
            .get("since")
            .map(|t| request::valid_time("since", t))
            .transpose()?;
        let until = q
            .get("until")
            .map(|t| request::valid_time("until", t))
            .transpose()?;
        let page = page_number(&q)?;
        let (rows, has_next) = window(engine.timeline(&Timeline {
            clock: TimelineClock::by_tx(by_tx),
            since,
            until,
            prefix: q.get("prefix"),
            window: Some(page_window(page)),
        })?);
        Ok((
            StatusCode::OK,
            page::timeline_page(&page::TimelinePage {
                query: &q,
                by_tx,
                rows: &rows,
                page,
                has_next,
            }),
        ))
    })
    .await
}

async fn verify(State(ui): State<Arc<Ui>>) -> Response {
    view(ui, move |engine, now, ui| {
        let ws = engine.workspace();
        let files = ws.scan()?;
        let mut cached = ui.verified.lock().unwrap_or_else(|p| p.into_inner());
        let mut report = match cached.as_ref() {
            Some((seen, report)) if *seen == files => report.clone(),
            _ => {
                let report = crate::verify::verify(ws, &ui.chain_key, None)?;
                *cached = Some((files, report.clone()));
                report
            }
        };
        drop(cached);
        report
            .findings
            .extend(crate::verify::recorded_ahead(ws, now)?);
        Ok((StatusCode::OK, page::verify_page(&report)))
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_host(host: Option<&str>) -> Request {
        let mut b = Request::builder().uri("/");
        if let Some(h) = host {
            b = b.header(header::HOST, h);
        }
        b.body(axum::body::Body::empty()).unwrap()
    }

    #[test]
    fn only_loopback_hosts_pass_without_a_token() {
        for ok in [
            None,
            Some("127.0.0.1:7078"),
            Some("localhost:7078"),
            Some("LOCALHOST"),
            Some("[::1]:7078"),
        ] {
            assert!(loopback_host(&with_host(ok)), "{ok:?}");
        }
        for bad in ["evil.example:7078", "127.0.0.1.evil.example", "[::2]:1"] {
            assert!(!loopback_host(&with_host(Some(bad))), "{bad}");
        }
    }
}
