//! Links the `mem7` binary at a fixed address on Linux (not as a position-independent
//! executable), because every command pays for its start.
//!
//! A position-independent `mem7` carries about 50,000 absolute pointers in its read-only
//! data (vtables, panic locations, tables of strings). The dynamic loader rewrites each
//! at every start, which copies about 240 pages of memory before `main` runs: two thirds
//! of the page faults of `mem7 --version`, and the half of its start-up that made it
//! twice as slow as `git --version` (issue 25; `just bench-start`). Linked at a fixed
//! address, those pointers are final in the file and the pages are shared from the page
//! cache. Shared libraries, the heap, the stack and mappings keep their random
//! addresses; only the executable's own image does not move.
//!
//! Test binaries, examples and other platforms link as the toolchain decides.

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let target_env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && target_env == "gnu" {
        println!("cargo::rustc-link-arg-bins=-no-pie");
    }
}
