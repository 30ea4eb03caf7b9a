#!/usr/bin/env bash
# Runs Redis's own test suite (the tests/ of a built Redis 7.2.4 source tree) against
# goblin-server and against that tree's real redis-server, and prints each unit's passes and
# failures side by side. By hand, not in CI (it takes hours for every unit).
#
#   scripts/redis-suite.sh [options] [UNIT...]
#
#   UNIT                 unit/type/list, integration/aof, ... (default: every unit of the
#                        tree's tests/test_helper.tcl all_tests list)
#   --redis-src DIR      the built Redis 7.2.4 tree [/work/redis-7.2.4]
#   --goblin BIN         goblin-server [target/release/goblin-server]
#   --servers LIST       goblin,redis, goblin or redis [goblin,redis]
#   --jobs N             units run at once [2]
#   --unit-timeout SECS  a unit still running after this is stopped and counted aborted [3600]
#   --out DIR            where the logs and the table go [a new directory under /tmp]
#   --base-port P        first port of job slot 0 (slot n: P + 3100 n), apart from another
#                        run's on the same machine [21000]. runtest also takes ports
#                        P - 32 .. P + 3000 plus 10000, so P + 3100 (N - 1) + 13000 must stay
#                        under 65536; below the kernel's ephemeral range (32768 up) no
#                        outgoing connection takes a port the run needs
#   --report             run nothing: print the table of the logs already in --out
#
# Each server gets its own copy of the tree per job slot (runtest cleans tests/tmp when it
# starts, so two runs cannot share one). In Goblin's copy src/redis-server is a two-line
# wrapper that execs a copy of goblin-server taken at start; redis-cli, redis-benchmark and
# redis-check-* stay Redis's. Every unit runs as
#   ./runtest --single UNIT --clients 1 --timeout 120 --durable --baseport P --portcount 3000
# in its own session; when it ends, anything left in that session or running from the copy
# is killed, so no process outlives the script.
#
# Output: OUT/<server>/<unit>.log (runtest's output), OUT/results.tsv (unit, then ok, err and
# aborted for each server) and the table on standard output. `ok`/`err` count runtest's
# [ok]/[err] lines; `!` marks a unit that stopped early (an [exception], runtest's TIMEOUT,
# or the unit timeout), whose later tests did not run at all.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
REDIS_SRC=/work/redis-7.2.4
GOBLIN="$ROOT/target/release/goblin-server"
SERVERS=goblin,redis
JOBS=2
UNIT_TIMEOUT=3600
OUT=""
REPORT=0
BASE_PORT=21000
UNITS=()

while [ $# -gt 0 ]; do
    case "$1" in
    --redis-src) REDIS_SRC="$2"; shift 2 ;;
    --goblin) GOBLIN="$2"; shift 2 ;;
    --servers) SERVERS="$2"; shift 2 ;;
    --jobs) JOBS="$2"; shift 2 ;;
    --unit-timeout) UNIT_TIMEOUT="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    --base-port) BASE_PORT="$2"; shift 2 ;;
    --report) REPORT=1; shift ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "unknown option: $1" >&2; exit 2 ;;
    *) UNITS+=("$1"); shift ;;
    esac
done

if [ $((BASE_PORT + 3100 * (JOBS - 1) + 13000)) -gt 65535 ] || [ "$BASE_PORT" -lt 1057 ]; then
    echo "--base-port $BASE_PORT: runtest would need ports past 65535 or under 1025 (see --help)" >&2
    exit 2
fi
if [ "${#UNITS[@]}" -eq 0 ]; then
    mapfile -t UNITS < <(sed -n '/^set ::all_tests {/,/^}/{/^ /s/ //gp}' "$REDIS_SRC/tests/test_helper.tcl")
fi
IFS=, read -r -a SERVER_LIST <<<"$SERVERS"

# ok err aborted, from a runtest log.
count() { # log
    local clean
    clean="$(tr -d '\000' <"$1" 2>/dev/null | sed 's/\x1b\[[0-9;]*m//g' || true)"
    local ok err aborted=0
    ok=$(grep -c '^\[ok\]:' <<<"$clean" || true)
    err=$(grep -c '^\[err\]:' <<<"$clean" || true)
    if grep -qE '^\[(exception|unit-timeout|TIMEOUT)\]:' <<<"$clean" ||
        ! grep -qE '^\[[0-9]+/[0-9]+ done\]:|All tests passed|The following tests failed' <<<"$clean"; then
        aborted=1
    fi
    echo "$ok $err $aborted"
}

if [ "$REPORT" -eq 0 ]; then
    for tool in redis-server redis-cli redis-benchmark redis-check-aof redis-check-rdb; do
        [ -x "$REDIS_SRC/src/$tool" ] || { echo "$REDIS_SRC/src/$tool missing: build the tree with make" >&2; exit 1; }
    done
    for s in "${SERVER_LIST[@]}"; do
        case "$s" in goblin | redis) ;; *) echo "unknown server: $s" >&2; exit 2 ;; esac
    done
    if [[ ",$SERVERS," == *,goblin,* ]] && [ ! -x "$GOBLIN" ]; then
        echo "$GOBLIN missing: cargo build --release -p goblin-server" >&2
        exit 1
    fi
    [ -n "$OUT" ] || OUT="$(mktemp -d /tmp/redis-suite.XXXXXX)"
    mkdir -p "$OUT"
    OUT="$(cd "$OUT" && pwd)"
    WORK="$(mktemp -d /tmp/redis-suite-trees.XXXXXX)"

    # --- The trees: one per server and job slot ---
    make_tree() { # server slot
        local tree="$WORK/$1-$2"
        mkdir -p "$tree/src"
        cp -r "$REDIS_SRC/tests" "$REDIS_SRC/runtest" "$tree/"
        rm -rf "$tree/tests/tmp"/*
        for tool in redis-cli redis-benchmark redis-check-aof redis-check-rdb redis-server; do
            cp "$REDIS_SRC/src/$tool" "$tree/src/"
        done
        if [ "$1" = goblin ]; then
            printf '#!/bin/sh\nexec %q "$@"\n' "$WORK/goblin-server" >"$tree/src/redis-server"
            chmod +x "$tree/src/redis-server"
        fi
    }
    [[ ",$SERVERS," == *,goblin,* ]] && cp "$GOBLIN" "$WORK/goblin-server"
    for ((slot = 0; slot < JOBS; slot++)); do
        for s in "${SERVER_LIST[@]}"; do make_tree "$s" "$slot"; done
    done

    # --- Stopping what a run leaves ---
    # Kills a session (the runtest started with setsid) and every process whose working
    # directory is inside `tree` (servers the framework started there), by pid.
    stop_leftovers() { # session-id tree
        kill -TERM -- "-$1" 2>/dev/null || true
        sleep 1
        kill -KILL -- "-$1" 2>/dev/null || true
        local pid cwd
        for pid in $(ls /proc | grep -E '^[0-9]+$'); do
            cwd="$(readlink "/proc/$pid/cwd" 2>/dev/null)" || continue
            case "$cwd" in "$2" | "$2"/*) kill -KILL "$pid" 2>/dev/null || true ;; esac
        done
    }
    cleanup() {
        local tree
        [ "${#pids[@]}" -eq 0 ] || kill "${pids[@]}" 2>/dev/null || true
        for tree in "$WORK"/*/; do
            [ -d "$tree" ] || continue
            [ -f "$tree/session" ] && stop_leftovers "$(cat "$tree/session")" "${tree%/}"
        done
        rm -rf "$WORK"
    }
    trap cleanup EXIT
    trap 'exit 130' INT TERM

    # --- Running the units ---
    pids=()
    QUEUE="$WORK/queue"
    for unit in "${UNITS[@]}"; do
        for s in "${SERVER_LIST[@]}"; do echo "$s $unit"; done
    done >"$QUEUE"
    echo 0 >"$WORK/next"

    next_job() { # prints the next "server unit" line, or nothing when the queue is done
        (
            flock 9
            local n
            n=$(cat "$WORK/next")
            echo $((n + 1)) >"$WORK/next"
            sed -n "$((n + 1))p" "$QUEUE"
        ) 9>"$WORK/lock"
    }

    run_unit() { # server slot unit
        local tree="$WORK/$1-$2" log="$OUT/$1/$3.log"
        mkdir -p "$(dirname "$log")"
        local baseport=$((BASE_PORT + $2 * 3100))
        (
            cd "$tree"
            exec setsid ./runtest --single "$3" --clients 1 --timeout 120 --durable \
                --baseport "$baseport" --portcount 3000 >"$log" 2>&1
        ) &
        local pid=$! waited=0
        echo "$pid" >"$tree/session"
        while kill -0 "$pid" 2>/dev/null; do
            if [ "$waited" -ge "$UNIT_TIMEOUT" ]; then
                echo "[unit-timeout]: stopped after ${UNIT_TIMEOUT}s" >>"$log"
                break
            fi
            sleep 2
            waited=$((waited + 2))
        done
        wait "$pid" 2>/dev/null || true
        stop_leftovers "$pid" "$tree"
        rm -f "$tree/session"
        rm -rf "$tree/tests/tmp"/*
    }

    worker() { # slot
        local job server unit
        while job="$(next_job)" && [ -n "$job" ]; do
            read -r server unit <<<"$job"
            run_unit "$server" "$1" "$unit"
            read -r ok err aborted < <(count "$OUT/$server/$unit.log")
            printf '%-8s %-45s ok %4d  err %3d%s\n' "$server" "$unit" "$ok" "$err" \
                "$([ "$aborted" = 1 ] && echo '  (stopped early)')"
        done
    }

    echo "logs in $OUT"
    for ((slot = 0; slot < JOBS; slot++)); do
        worker "$slot" &
        pids+=($!)
    done
    for pid in "${pids[@]}"; do wait "$pid"; done

fi

# --- The table ---
{
    printf 'unit'
    for s in "${SERVER_LIST[@]}"; do printf '\t%s_ok\t%s_err\t%s_aborted' "$s" "$s" "$s"; done
    printf '\n'
    for unit in "${UNITS[@]}"; do
        printf '%s' "$unit"
        for s in "${SERVER_LIST[@]}"; do printf '\t%s' $(count "$OUT/$s/$unit.log"); done
        printf '\n'
    done
} >"$OUT/results.tsv"

echo
printf '%-45s' unit
for s in "${SERVER_LIST[@]}"; do printf ' %14s' "$s ok/err"; done
printf '\n'
awk -F'\t' -v n="${#SERVER_LIST[@]}" 'NR > 1 {
    line = sprintf("%-45s", $1)
    for (i = 0; i < n; i++) {
        ok = $(2 + 3 * i); err = $(3 + 3 * i); ab = $(4 + 3 * i)
        line = line sprintf(" %9d/%-3d%s", ok, err, ab == 1 ? "!" : " ")
        tok[i] += ok; terr[i] += err
    }
    print line
} END {
    line = sprintf("%-45s", "TOTAL")
    for (i = 0; i < n; i++) line = line sprintf(" %9d/%-3d ", tok[i], terr[i])
    print line
}' "$OUT/results.tsv"
echo "(! = the unit stopped early; logs and results.tsv in $OUT)"
