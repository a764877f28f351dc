//! The `mem7` binary: everything happens in the library.

// The unwinder (`_Unwind_*`, for panics) linked in from GCC's static `libgcc_eh` rather
// than loaded from `libgcc_s.so.1` at every start: that library's constructor probes the
// CPU with `cpuid`, which traps to the hypervisor on a virtual machine, and it was a tenth
// of the user time of `mem7 --version` (issue 25, `just bench-start`). Whole, so that
// every symbol std asks for is here before the linker meets `-lgcc_s`, which `--as-needed`
// then drops. The same as `gcc -static-libgcc`; only this binary, not tests or examples.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[link(name = "gcc_eh", kind = "static", modifiers = "+whole-archive")]
unsafe extern "C" {}

fn main() -> std::process::ExitCode {
    mem7::cli::run()
}
