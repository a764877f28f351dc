//! The integration tests, one binary (`cargo test --test it`): every file here is a
//! module of it, so the library and its dependencies are linked once, not once per file.

mod capture;
mod cli;
mod docs;
mod embed;
mod exit_codes;
mod flows;
mod integrity;
mod layout;
mod local_model;
mod mcp;
mod model;
mod newcomer;
mod owners;
mod properties;
mod search;
mod secrets;
mod stalls;
mod sync;
mod tour;
mod transfer;
mod turns;
mod ui;
mod watch;
mod world;
