//! The long-running machinery of `mem7 watch`, `mem7 mcp`, `mem7 serve` and `mem7 ui`:
//! the loop that wakes on a file event or a timer and catches the index up with the
//! files ([`serve_loop`]), the background vector fill it runs a step at a time
//! ([`fill`]), and file-system events, debounced ([`events`]). The front layer
//! (`front`) holds what every front end says and checks; this room holds what keeps
//! running while they do.

pub mod events;
pub mod fill;
pub mod serve_loop;
