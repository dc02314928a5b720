#!/usr/bin/env bash
# Builds the Debian package: the release binary, the man pages and shell completions it generates,
# the copyright file (packaging/copyright.sh: ocetool's licence and every crate linked into the
# binary), then `cargo deb` with the metadata in cli/Cargo.toml. The package lands in the cargo
# target directory's debian/ folder (target/debian, or $CARGO_TARGET_DIR/debian); its path is the
# last line printed.
# Needs cargo-deb on PATH (`cargo install --locked cargo-deb`) and jq.
set -euo pipefail
# A relative CARGO_TARGET_DIR means the caller's directory, not the repository's.
if [ -n "${CARGO_TARGET_DIR:-}" ]; then
    CARGO_TARGET_DIR=$(realpath -m -- "$CARGO_TARGET_DIR")
    export CARGO_TARGET_DIR
fi
cd "$(dirname "$0")/.."
cargo build --release --locked -p ocetool
# Where cargo put it: CARGO_TARGET_DIR, a configured build.target-dir, or ./target.
target_dir=$(cargo metadata --format-version 1 --no-deps --locked | jq -er .target_directory)
bin=$target_dir/release/ocetool
out=target/packaging
rm -rf "$out"
mkdir -p "$out/man" "$out/completions"
"$bin" manpage --out-dir "$out/man" >/dev/null
gzip -9n "$out"/man/*.8 "$out"/man/*.5
"$bin" completions bash >"$out/completions/ocetool"
"$bin" completions zsh >"$out/completions/_ocetool"
"$bin" completions fish >"$out/completions/ocetool.fish"
bash packaging/copyright.sh >"$out/copyright"
cargo deb -p ocetool --no-build --locked --strip "$@"
