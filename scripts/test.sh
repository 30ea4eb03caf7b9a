#!/usr/bin/env bash
# THE test command: installs what is missing (on Debian, as root), then runs formatting,
# lints, the release build, the Rust tests and the differential compat suite.
#
#   bash scripts/test.sh
#
# Fails on any failure. The two test stages (cargo test, pytest) both run even when the
# first fails, so one CI run reports both; the script then exits non-zero.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

START=$SECONDS
step() { printf '\n==> %s (t=%ds)\n' "$*" "$((SECONDS - START))"; }

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
        echo "need root to run: $*" >&2
        return 1
    fi
}

# --- System packages: redis-server and redis-tools (the reference and its tools), memcached,
# nginx (the origin of the HTTP mirror benchmark's smoke run), nutcracker (twemproxy, the
# proxy test_twemproxy.py puts in front of Goblins), redis-sentinel (test_sentinel.py's
# sentinels), logrotate (test_packaging.py rotates a live log with packaging/'s snippet),
# libmemcached-tools (memccp, memcdump, memcstat: the memcache tests' real clients),
# locales (localedef, for the en_US.UTF-8 collation test_sort.py sorts under) ---
missing=()
command -v redis-server >/dev/null || missing+=(redis-server)
command -v redis-cli >/dev/null && command -v redis-benchmark >/dev/null || missing+=(redis-tools)
command -v memcached >/dev/null || missing+=(memcached)
command -v memccp >/dev/null || missing+=(libmemcached-tools)
command -v nginx >/dev/null || missing+=(nginx)
command -v nutcracker >/dev/null || [ -x /usr/sbin/nutcracker ] || missing+=(nutcracker)
command -v redis-sentinel >/dev/null || missing+=(redis-sentinel)
command -v logrotate >/dev/null || [ -x /usr/sbin/logrotate ] || missing+=(logrotate)
command -v python3 >/dev/null || missing+=(python3 python3-pip)
command -v localedef >/dev/null && [ -d /usr/share/i18n/locales ] || missing+=(locales)
if [ "${#missing[@]}" -gt 0 ]; then
    step "apt-get install ${missing[*]}"
    # Keep Debian's packages from starting their own services (redis on 6379, memcached on
    # 11211, nginx on 80): the tests start their own servers on free ports.
    created_policy=0
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        as_root sh -c 'printf "#!/bin/sh\nexit 101\n" > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d'
        created_policy=1
    fi
    as_root apt-get update -q
    DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -q "${missing[@]}"
    if [ "$created_policy" -eq 1 ]; then as_root rm -f /usr/sbin/policy-rc.d; fi
fi

# --- The en_US.UTF-8 locale, compiled when the system lacks it ---
if ! locale -a 2>/dev/null | grep -qix 'en_US.utf8'; then
    step "localedef en_US.UTF-8"
    as_root localedef -i en_US -f UTF-8 en_US.UTF-8
fi

# --- Python packages for compat-tests ---
if ! python3 -c 'import redis, pytest, pytest_asyncio, pytest_timeout, hypothesis' 2>/dev/null; then
    step "pip install -r compat-tests/requirements.txt"
    if ! python3 -m pip --version >/dev/null 2>&1; then
        DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -q python3-pip
    fi
    python3 -m pip install -q -r compat-tests/requirements.txt ||
        python3 -m pip install -q --break-system-packages -r compat-tests/requirements.txt
fi

# --- Rust ---
step "cargo fmt --all -- --check"
cargo fmt --all -- --check

step "cargo clippy --workspace --all-targets -- -D warnings"
cargo clippy --workspace --all-targets -- -D warnings

# The fuzz crates are outside the workspace (cargo fuzz builds them with nightly flags);
# checking them here keeps them compiling as the code they drive changes.
for fuzz in server/fuzz objcache/fuzz; do
    step "cargo check --manifest-path $fuzz/Cargo.toml"
    cargo check --manifest-path "$fuzz/Cargo.toml" --target-dir "${CARGO_TARGET_DIR:-$ROOT/target}/fuzz-check"
done

step "cargo build --release"
cargo build --release

failed=()

step "cargo test --workspace --no-fail-fast"
cargo test --workspace --no-fail-fast || failed+=("cargo test")

# --- Differential suite against redis-server (and compat-tests/memcache when present) ---
export GOBLIN_BIN="${GOBLIN_BIN:-${CARGO_TARGET_DIR:-$ROOT/target}/release/goblin-server}"
step "python3 -m pytest compat-tests -q (GOBLIN_BIN=$GOBLIN_BIN)"
python3 -m pytest compat-tests -q || failed+=("pytest compat-tests")
step "python3 -m pytest compat-tests/http -q with the io_uring origin client"
GOBLIN_MIRROR_CLIENT=uring python3 -m pytest compat-tests/http -q || failed+=("pytest compat-tests/http (uring)")

# --- Benchmarks: a quick smoke run of each, so they keep working (figures: BENCHMARKS.md) ---
step "scripts/benchmark_smoke.sh"
bash scripts/benchmark_smoke.sh > "${TMPDIR:-/tmp}/goblin-benchmark-smoke.log" 2>&1 || {
    tail -30 "${TMPDIR:-/tmp}/goblin-benchmark-smoke.log"
    failed+=("benchmark smoke")
}

step "done"
if [ "${#failed[@]}" -gt 0 ]; then
    echo "FAILED: ${failed[*]}" >&2
    exit 1
fi
echo "all green in $((SECONDS - START))s"
