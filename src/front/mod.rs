//! The front-end support layer: what the CLI, the MCP server and the page stand on, and
//! none of them owns: what they say and check. The long-running machinery they run is
//! [`crate::live`].
//!
//! - [`env`](mod@env): the process's environment, captured once.
//! - [`request`]: one parser per argument, for flags and tool arguments alike.
//! - [`render`]: answers as text for people; [`wire`]: as JSON for programs;
//!   [`said`]: what the layers below report as data (entries ahead of the clock, a
//!   start-up's check, why a key is near or looks alike, a project's ignored setting),
//!   in words.
//! - [`auth`]: the servers' bearer token.
//! - [`block`]: the context block a session starts with.
//! - [`session`]: opening the engine for a front end, one session shared by requests,
//!   the voice a front end speaks with on standard error.
//! - [`owners`]: whose settings count (a project's `mem7.yaml` widens nothing until the
//!   user approves it).
//! - [`workspaces`]: which workspaces (local, project, user) a command opens, and where
//!   a write goes; what a read means across them is [`crate::engine::Scopes`].
//! - [`capture`]: hooks' events written as facts without waiting, the spool, and
//!   where a checkout left off.

pub mod auth;
pub mod block;
pub mod capture;
pub mod env;
pub mod notes;
pub mod owners;
pub mod render;
pub mod request;
pub mod said;
pub mod session;
pub mod wire;
pub mod workspaces;
