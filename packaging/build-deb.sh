#!/usr/bin/env bash
# Builds the Debian package (target/debian/ocetool_*.deb): the release binary, the man pages and
# shell completions it generates, then `cargo deb` with the metadata in cli/Cargo.toml.
# Needs cargo-deb on PATH (`cargo install --locked cargo-deb`).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked -p ocetool
out=target/packaging
rm -rf "$out"
mkdir -p "$out/man" "$out/completions"
target/release/ocetool manpage --out-dir "$out/man" >/dev/null
gzip -9n "$out"/man/*.8 "$out"/man/*.5
target/release/ocetool completions bash >"$out/completions/ocetool"
target/release/ocetool completions zsh >"$out/completions/_ocetool"
target/release/ocetool completions fish >"$out/completions/ocetool.fish"
cargo deb -p ocetool --no-build --locked --strip "$@"
