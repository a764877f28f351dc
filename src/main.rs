//! The `mem7` binary: everything happens in the library.

fn main() -> std::process::ExitCode {
    mem7::cli::run()
}
