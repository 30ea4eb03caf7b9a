#!/usr/bin/env python3
"""HTTP mirror benchmark: Goblin Store against Varnish, nginx proxy_cache and nginx itself.

The procedure of the seed benchmark (../shared/seeds/000_0490647b8e5f0b1a.txt), sized for
a 2-CPU machine (issue 7, "Benchmark"):

  * a seeded corpus (make_corpus.py) served by an nginx origin on loopback whose access log
    counts every request that reaches it;
  * for each cache under test, a fresh instance on loopback, pinned to CPU 0 (the client,
    goblin-bench, runs on CPU 1; the origin floats), then three phases through goblin-bench:
      population  the population manifest (each object once) at concurrency 32,
      probe       1,000 requests at concurrency 1,
      warm        the measured manifest (Zipf-skewed) at concurrency 8;
    after each phase the origin must have seen exactly one request per object, otherwise
    the case is VOID (a cache that refetches is not serving the replay from its own store);
  * per case: Gbit/s of body bytes, TTFB and TTLB p50/p90/p99/p99.9/mean, RSS (VmRSS summed
    over the server's process tree), the memory cgroup's peak, resident object bytes as
    the seed defines them, and bytes read from disk (/proc/PID/io read_bytes, summed).

Two scenarios (--scenario): "equal" runs every server in a memory cgroup limited to
--limit (page cache included), "ram" in one without a limit. The page cache is dropped
before every case; the origin's files are then read once so the origin never waits on
the disk (nginx-direct has no origin and starts cold; its population pass warms it).

Cases (--peers): nginx-direct (the files straight from nginx: the loopback ceiling),
varnish (file storage, 4 KiB granularity, everything cached 7 days, no grace or keep,
streamed fills), nginx-proxy (proxy_cache, cache lock on), goblin (once per --heads).

Results: one table on stdout, and everything as JSON in WORKDIR/results-<scenario>-<time>.json.
--plot draws docs/http-mirror-*.png from result files.

Usage:
  run_http_bench.py [--workdir /work/bench-http] [--size 4G] [--scenario equal|ram|both]
                    [--peers nginx-direct,varnish,nginx-proxy,goblin] [--heads 16K,64K,128K,256K]
  run_http_bench.py --smoke            # 50 MB, nginx-direct and Goblin (64K), seconds
  run_http_bench.py --plot results-a.json results-b.json
"""

import argparse
import fcntl
import hashlib
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_corpus  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SERVER_CPU, CLIENT_CPU = "0", "1"
CGROUP_NAME = "goblinbench"
LOCK_PATH = "/tmp/goblin-http-bench.lock"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, proc, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("server exited with %s before listening on %d" % (proc.returncode, port))
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("nothing listens on port %d after %d s" % (port, timeout))


def human(n):
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return "%.2f %s" % (n / (1 << shift), unit)
    return "%d B" % n


# ---------------------------------------------------------------------------------------
# Processes, cgroups, /proc
# ---------------------------------------------------------------------------------------

def tree(pid):
    """pid and all its descendants."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            for task in os.listdir("/proc/%d/task" % p):
                with open("/proc/%d/task/%s/children" % (p, task)) as f:
                    todo.extend(int(c) for c in f.read().split())
        except OSError:
            pass
    return out


def proc_field(pid, name, key):
    try:
        with open("/proc/%d/%s" % (pid, name)) as f:
            for line in f:
                if line.startswith(key):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def rss_bytes(pid):
    return sum(proc_field(p, "status", "VmRSS:") for p in tree(pid)) * 1024


def cpu_seconds(pid):
    """User + system CPU time of the process tree."""
    total = 0
    for p in tree(pid):
        try:
            with open("/proc/%d/stat" % p) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except (OSError, IndexError, ValueError):
            pass
    return total / os.sysconf("SC_CLK_TCK")


def loadavg():
    with open("/proc/loadavg") as f:
        return [float(x) for x in f.read().split()[:3]]


def read_bytes(pid):
    return sum(proc_field(p, "io", "read_bytes:") for p in tree(pid))


class Cgroup:
    """One memory cgroup, v1 (memory.limit_in_bytes) or v2 (memory.max)."""

    def __init__(self):
        v1 = "/sys/fs/cgroup/memory"
        if os.path.isdir(v1) and os.path.exists(os.path.join(v1, "memory.limit_in_bytes")):
            self.v2, self.path = False, os.path.join(v1, CGROUP_NAME)
        elif os.path.exists("/sys/fs/cgroup/cgroup.controllers"):
            self.v2, self.path = True, os.path.join("/sys/fs/cgroup", CGROUP_NAME)
            with open("/sys/fs/cgroup/cgroup.subtree_control", "w") as f:
                f.write("+memory")
        else:
            raise RuntimeError("no memory cgroup controller mounted at /sys/fs/cgroup")
        os.makedirs(self.path, exist_ok=True)

    def _write(self, name, value):
        with open(os.path.join(self.path, name), "w") as f:
            f.write(str(value))

    def _read(self, name):
        try:
            with open(os.path.join(self.path, name)) as f:
                return f.read().strip()
        except OSError:
            return ""

    def reset(self, limit):
        """Empties the cgroup's charges and sets its limit (None: unlimited)."""
        if self.v2:
            self._write("memory.max", limit or "max")
            try:
                self._write("memory.reclaim", 1 << 40)
            except OSError:
                pass
        else:
            try:
                self._write("memory.force_empty", 0)
            except OSError:
                pass
            self._write("memory.limit_in_bytes", limit or -1)
            self._write("memory.max_usage_in_bytes", 0)

    def procs_file(self):
        return os.path.join(self.path, "cgroup.procs")

    def usage(self):
        return int(self._read("memory.current" if self.v2 else "memory.usage_in_bytes") or 0)

    def peak(self):
        return int(self._read("memory.peak" if self.v2 else "memory.max_usage_in_bytes") or 0)

    def stat(self):
        out = {}
        for line in self._read("memory.stat").splitlines():
            k, _, v = line.partition(" ")
            out[k] = int(v)
        return out


class Server:
    """A process group started by this script; stopped by its own pid only."""

    def __init__(self, name, cmd, log, cgroup=None, cpu=None, cwd=None):
        prefix = "echo $$ > %s && " % cgroup.procs_file() if cgroup else ""
        pin = "taskset -c %s " % cpu if cpu is not None else ""
        shell = prefix + "exec " + pin + " ".join(shq(c) for c in cmd)
        self.name = name
        self.log = open(log, "ab")
        self.proc = subprocess.Popen(["sh", "-c", shell], stdout=self.log, stderr=subprocess.STDOUT,
                                     cwd=cwd, start_new_session=True)
        self.pid = self.proc.pid

    def stop(self, sig=signal.SIGTERM):
        if self.proc.poll() is None:
            try:
                os.killpg(self.pid, sig)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.pid, signal.SIGKILL)
                self.proc.wait()
        self.log.close()


def shq(s):
    s = str(s)
    if s and all(c.isalnum() or c in "-_./:=,+@%" for c in s):
        return s
    return "'" + s.replace("'", "'\\''") + "'"


def drop_caches():
    subprocess.run(["sync"], check=True)
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3")


def read_all(root):
    """Reads every file under root once (puts the origin's files in the page cache)."""
    buf = bytearray(1 << 20)
    for d, _, files in os.walk(root):
        for name in files:
            with open(os.path.join(d, name), "rb", buffering=0) as f:
                while f.readinto(buf):
                    pass


# ---------------------------------------------------------------------------------------
# Configurations
# ---------------------------------------------------------------------------------------

NGINX_MAIN = """\
user root;
worker_processes %(workers)d;
daemon off;
master_process on;
pid %(dir)s/nginx.pid;
error_log %(dir)s/error.log warn;
events { worker_connections 4096; }
http {
    default_type application/octet-stream;
    sendfile on;
    tcp_nopush off;  # on: 40 ms stalls on proxy_cache hits over loopback (delayed ACK)
    tcp_nodelay on;
    keepalive_timeout 300s;
    keepalive_requests 1000000;
    client_body_temp_path %(dir)s/tmp-body;
    proxy_temp_path %(dir)s/tmp-proxy;
    fastcgi_temp_path %(dir)s/tmp-fcgi;
    uwsgi_temp_path %(dir)s/tmp-uwsgi;
    scgi_temp_path %(dir)s/tmp-scgi;
%(http)s
}
"""

ORIGIN_HTTP = """\
    log_format count '$msec $status $body_bytes_sent $request_uri';
    access_log %(dir)s/access.log count;
    server {
        listen 127.0.0.1:%(port)d reuseport;
        root %(docroot)s;
        etag on;
    }
"""

DIRECT_HTTP = """\
    access_log off;
    server {
        listen 127.0.0.1:%(port)d;
        root %(docroot)s;
    }
"""

PROXY_HTTP = """\
    access_log off;
    proxy_cache_path %(dir)s/cache levels=1:2 keys_zone=bench:%(keys)dm max_size=%(max)dm inactive=7d use_temp_path=off;
    upstream origin {
        server 127.0.0.1:%(origin)d;
        keepalive 64;
        keepalive_requests 1000000;
    }
    server {
        listen 127.0.0.1:%(port)d;
        location / {
            proxy_pass http://origin;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_cache bench;
            proxy_cache_valid any 7d;
            proxy_cache_lock on;
            proxy_cache_lock_timeout 60s;
            add_header X-Cache $upstream_cache_status;
        }
    }
"""

VCL = """\
vcl 4.1;

backend origin {
    .host = "127.0.0.1";
    .port = "%(origin)d";
    .first_byte_timeout = 60s;
    .between_bytes_timeout = 60s;
}

sub vcl_recv {
    unset req.http.Cookie;
    return (hash);
}

sub vcl_backend_response {
    set beresp.ttl = 7d;
    set beresp.grace = 0s;
    set beresp.keep = 0s;
    set beresp.do_stream = true;
    unset beresp.http.Set-Cookie;
    return (deliver);
}
"""


def nginx_conf(path, dir_, workers, http):
    os.makedirs(dir_, exist_ok=True)
    with open(path, "w") as f:
        f.write(NGINX_MAIN % {"workers": workers, "dir": dir_, "http": http})


class Origin:
    def __init__(self, work, docroot):
        self.dir = os.path.join(work, "origin")
        self.port = free_port()
        self.log_path = os.path.join(self.dir, "access.log")
        conf = os.path.join(self.dir, "nginx.conf")
        nginx_conf(conf, self.dir, 2, ORIGIN_HTTP % {"dir": self.dir, "port": self.port, "docroot": docroot})
        if os.path.exists(self.log_path):
            os.remove(self.log_path)
        self.server = Server("origin", ["nginx", "-p", self.dir, "-c", conf], os.path.join(self.dir, "stdout.log"))
        wait_port(self.port, self.server.proc)

    def count(self):
        time.sleep(0.3)  # nginx logs a request just after its last byte is sent
        with open(self.log_path, "rb") as f:
            return f.read().count(b"\n")

    def stop(self):
        self.server.stop(signal.SIGQUIT)


def goblin_sizes(sizes, head):
    """(resident object bytes by the seed's definition, heads pool, small arena)."""
    heads = sum(head for s in sizes if s >= head)
    small = sum((s + 15) // 16 * 16 for s in sizes if s < head)
    return heads + small, heads, small


# Per object stored beside the body: the response head Goblin keeps (about 250 B here)
# and the arena's record header. An estimate; it only decides where objects go.
GOBLIN_OBJECT_OVERHEAD = 320
# RAM of a Goblin process besides --memory and --small-memory: index, buffers, binary.
GOBLIN_PROCESS_OVERHEAD = 256 << 20


def goblin_memory(sizes, head, limit):
    """(--memory, --small-memory, note) for one head size. The small arena gets the
    sub-head objects + 25%; --memory, which holds the head slots and then the hottest
    tails, gets whatever of the cgroup limit remains, or without a limit enough for every
    head and every tail (the fits-in-RAM case)."""
    stored = [s + GOBLIN_OBJECT_OVERHEAD for s in sizes]
    small = sum((s + 15) // 16 * 16 for s in stored if s < head) * 5 // 4 + (32 << 20)
    heads = sum(head for s in stored if s >= head)
    tails = sum(s - head for s in stored if s >= head)
    if limit is None:
        return heads + tails * 11 // 10 + (64 << 20), small, "heads and all tails"
    memory = limit - small - GOBLIN_PROCESS_OVERHEAD
    if memory < heads * 21 // 20:
        return max(memory, 64 << 20), small, "does not fit: heads need %s" % human(heads)
    return memory, small, "heads + %s of hot tails" % human(memory - heads)


def start_case(case, args, corpus, origin, cgroup, sizes, limit):
    """Starts the server of one case; returns (Server, port, extra info)."""
    work = os.path.join(args.workdir, "case")
    subprocess.run(["rm", "-rf", work], check=True)
    os.makedirs(work)
    port = free_port()
    log = os.path.join(work, "server.log")
    total = corpus["bytes"]
    info = {}
    kind = case["kind"]
    if kind == "nginx-direct":
        conf = os.path.join(work, "nginx.conf")
        nginx_conf(conf, work, args.nginx_workers, DIRECT_HTTP % {"port": port, "docroot": corpus["docroot"]})
        cmd = ["nginx", "-p", work, "-c", conf]
    elif kind == "nginx-proxy":
        conf = os.path.join(work, "nginx.conf")
        http = PROXY_HTTP % {"dir": work, "port": port, "origin": origin.port, "keys": 64,
                             "max": total * 2 // (1 << 20) + 1024}
        nginx_conf(conf, work, args.nginx_workers, http)
        cmd = ["nginx", "-p", work, "-c", conf]
    elif kind == "varnish":
        vcl = os.path.join(work, "bench.vcl")
        with open(vcl, "w") as f:
            f.write(VCL % {"origin": origin.port})
        storage = "%dM" % (total * 3 // 2 // (1 << 20) + 512)
        info["storage"] = storage
        cmd = ["varnishd", "-F", "-j", "none", "-a", "127.0.0.1:%d" % port, "-f", vcl,
               "-s", "file,%s/varnish.bin,%s,4K" % (work, storage),
               "-p", "default_grace=0", "-p", "default_keep=0", "-n", os.path.join(work, "varnish"),
               "-T", "127.0.0.1:%d" % free_port()]
    elif kind == "goblin":
        head = case["head"]
        memory, small_memory, note = goblin_memory(sizes, head, limit)
        memory = args.goblin_memory or "%dM" % (memory >> 20)
        small_memory = args.goblin_small_memory or "%dM" % (small_memory >> 20)
        info.update(memory=memory, small_memory=small_memory, sizing=note)
        cmd = [args.goblin_bin, "--port", free_port(), "--save", "", "--http-port", port,
               "--mirror", "http://127.0.0.1:%d" % origin.port, "--mirror-client", "plain",
               "--no-memcache", "--ssd-dir", os.path.join(work, "goblin-pool"),
               "--ram-head", "%dK" % (head >> 10), "--memory", memory, "--small-memory", small_memory,
               "--cores", args.goblin_cores, "--default-ttl", 604800, "--max-item-size", "64M"]
        cmd += args.goblin_args.split()
        os.makedirs(os.path.join(work, "goblin-pool"))
    else:
        raise ValueError(kind)
    info["cmd"] = " ".join(shq(c) for c in cmd)
    server = Server(case["name"], [str(c) for c in cmd], log, cgroup=cgroup, cpu=SERVER_CPU, cwd=work)
    wait_port(port, server.proc)
    return server, port, info


def bench(args, port, manifest, concurrency, label, limit=None):
    cmd = ["taskset", "-c", CLIENT_CPU, args.bench_bin, "--protocol", "http", "--addr", "127.0.0.1:%d" % port,
           "--manifest", manifest, "--concurrency", str(concurrency), "--format", "json", "--label", label]
    if limit:
        cmd += ["--limit", str(limit)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.phase_timeout)
    if p.returncode != 0:
        raise RuntimeError("goblin-bench %s failed (%d): %s" % (label, p.returncode, p.stderr.strip()[-2000:]))
    if p.stderr.strip():
        print("  goblin-bench: " + p.stderr.strip()[-1000:], file=sys.stderr)
    return json.loads(p.stdout.strip().splitlines()[-1])


def http_get(port, path):
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(b"GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" % path.encode())
        data = b""
        while chunk := s.recv(1 << 16):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return head.decode(errors="replace"), body


def run_case(case, args, corpus, origin, cgroup, limit, sizes):
    name = case["name"]
    print("== %s (%s)" % (name, "limit %s" % human(limit) if limit else "no limit"), flush=True)
    drop_caches()
    if case["kind"] != "nginx-direct":
        read_all(corpus["docroot"])
    cgroup.reset(limit)
    result = {"case": name, "kind": case["kind"], "head": case.get("head"), "limit": limit, "void": [],
              "start": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    server = None
    try:
        server, port, info = start_case(case, args, corpus, origin, cgroup, sizes, limit)
        result.update(info)
        time.sleep(0.5)
        result["rss_start"] = rss_bytes(server.pid)
        base = origin.count()
        io0 = read_bytes(server.pid)
        root = corpus["root"]
        expect = 0 if case["kind"] == "nginx-direct" else corpus["objects"]
        warm = ["warm"] + ["warm%d" % i for i in range(2, args.warm_repeat + 1)]
        for phase, manifest, conc, lim in [("population", "population.txt", 32, None),
                                           ("probe", "probe.txt", 1, None)] + [
                                           (w, "measured.txt", 8, None) for w in warm]:
            io_before, cpu_before, load_before = read_bytes(server.pid), cpu_seconds(server.pid), loadavg()
            perf = None
            if phase in args.profile:
                perf_data = os.path.join(args.workdir, "perf-%s-%s.data" % (name, phase))
                perf = subprocess.Popen(["perf", "record", "-q", "-F", "499", "-g", "-o", perf_data,
                                         "-p", ",".join(str(p) for p in tree(server.pid))],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            r = bench(args, port, os.path.join(root, manifest), conc, "%s/%s" % (name, phase), lim)
            if perf:
                perf.send_signal(signal.SIGINT)
                perf.wait()
                rep = subprocess.run(["perf", "report", "-i", perf_data, "--stdio", "--no-children",
                                      "--sort", "dso,symbol", "-g", "none", "--percent-limit", "1"],
                                     capture_output=True, text=True)
                result["profile-" + phase] = [line for line in rep.stdout.splitlines() if line and not line.startswith("#")][:40]
                print("  profile of the %s phase (perf, server process):\n    " % phase + "\n    ".join(result["profile-" + phase]))
            r["read_bytes"] = read_bytes(server.pid) - io_before
            r["server_cpu_s"] = round(cpu_seconds(server.pid) - cpu_before, 2)
            r["gbit_per_cpu_s"] = r["bytes"] * 8 / 1e9 / r["server_cpu_s"] if r["server_cpu_s"] else None
            r["loadavg_before"], r["loadavg_after"] = load_before, loadavg()
            r["origin_requests"] = origin.count() - base
            r["rss"] = rss_bytes(server.pid)
            r["cgroup_usage"] = cgroup.usage()
            result[phase] = r
            print("  %-10s %7.3f Gbit/s  %6d req  %d err  ttfb p50 %8.1f p99 %9.1f us  ttlb p50 %8.1f us"
                  "  origin %d  read %s  rss %s  cpu %.1f s  load %.1f" % (
                      phase, r["gbit_per_s"], r["requests"], r["errors"], r["ttfb_us"]["p50"],
                      r["ttfb_us"]["p99"], r["ttlb_us"]["p50"], r["origin_requests"],
                      human(r["read_bytes"]), human(r["rss"]), r["server_cpu_s"], r["loadavg_after"][0]),
                  flush=True)
            if r["errors"]:
                result["void"].append("%s: %d errors" % (phase, r["errors"]))
            if r["origin_requests"] != expect:
                result["void"].append("%s: origin saw %d requests, want %d" % (phase, r["origin_requests"], expect))
        if len(warm) > 1:
            # Replays of one server: the median by Gbit/s stands for the phase.
            rounds = [result.pop(w) if w != "warm" else result[w] for w in warm]
            result["warm_rounds"] = rounds
            result["warm"] = sorted(rounds, key=lambda r: r["gbit_per_s"])[len(rounds) // 2]
        result["rss"] = rss_bytes(server.pid)
        result["read_bytes_total"] = read_bytes(server.pid) - io0
        result["cgroup_peak"] = cgroup.peak()
        result["cgroup_stat"] = {k: v for k, v in cgroup.stat().items()
                                 if k in ("cache", "rss", "mapped_file", "file", "anon", "shmem", "total_cache",
                                          "total_rss", "pgmajfault", "total_pgmajfault")}
        if case["kind"] == "goblin":
            try:
                head, body = http_get(port, "/goblin/stats")
                result["goblin_stats"] = json.loads(body) if head.startswith("HTTP/1.1 200") else head
            except (OSError, ValueError) as e:
                result["goblin_stats"] = "unavailable: %s" % e
    except Exception as e:  # a case that breaks is reported, and the others still run
        result["void"].append("failed: %s" % e)
        print("  FAILED: %s" % e, flush=True)
    finally:
        if server:
            result["exit"] = server.proc.poll()
            if result["exit"] is not None:
                oom = result["exit"] == -signal.SIGKILL and limit
                result["void"].append("server died (%s)" % ("SIGKILL: cgroup OOM kill" if oom
                                                           else "exit status %s" % result["exit"]))
            server.stop()
            with open(os.path.join(args.workdir, "case", "server.log"), "rb") as f:
                result["server_log_tail"] = f.read()[-3000:].decode(errors="replace")
    if case["kind"] == "goblin":
        result["object_bytes"] = goblin_sizes(sizes, case["head"])[0]
    elif case["kind"] in ("varnish", "nginx-proxy", "nginx-direct"):
        result["object_bytes"] = corpus["bytes_page_rounded"]
    if result["void"]:
        print("  VOID: " + "; ".join(result["void"]), flush=True)
    return result


def median_of(values):
    """The median of numbers; of dicts, the median of each key; otherwise the first value."""
    first = values[0]
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return statistics.median(values)
    if all(isinstance(v, dict) for v in values):
        return {k: median_of([v[k] for v in values if k in v]) for k in first}
    return first


def merge_runs(runs):
    """One result for repeated runs of a case: every number is the median over the runs
    (each metric on its own), the runs themselves are kept under "runs", and the case is
    void when any run is."""
    if len(runs) == 1:
        return runs[0]
    merged = median_of(runs)
    for key in ("case", "kind", "head", "limit", "start", "object_bytes"):
        merged[key] = runs[0][key]
    merged["void"] = [v for r in runs for v in r["void"]]
    merged["runs"] = runs
    return merged


# ---------------------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------------------

def table(results, corpus):
    cols = ["case", "pop Gb/s", "warm Gb/s", "warm Gb/cpu-s", "TTFB p50/p90/p99/p99.9/mean us", "TTLB p50/p90/p99/p99.9/mean us",
            "RSS", "cg peak", "object bytes", "disk read warm", "status"]
    rows = []
    for r in results:
        def g(phase, key):
            return r.get(phase, {}).get(key)

        def dist(phase, key):
            d = g(phase, key)
            return "/".join("%.0f" % d[k] for k in ("p50", "p90", "p99", "p99_9", "mean")) if d else "-"
        rows.append([
            r["case"],
            "%.3f" % g("population", "gbit_per_s") if g("population", "gbit_per_s") is not None else "-",
            "%.3f" % g("warm", "gbit_per_s") if g("warm", "gbit_per_s") is not None else "-",
            "%.2f" % g("warm", "gbit_per_cpu_s") if g("warm", "gbit_per_cpu_s") else "-",
            dist("warm", "ttfb_us"), dist("warm", "ttlb_us"),
            human(r.get("rss", 0)), human(r.get("cgroup_peak", 0)),
            human(r.get("object_bytes", 0)),
            human(g("warm", "read_bytes") or 0),
            "VOID" if r["void"] else "ok",
        ])
    widths = [max(len(str(x)) for x in col) for col in zip(cols, *rows)]
    lines = ["| " + " | ".join(str(c).ljust(w) for c, w in zip(row, widths)) + " |" for row in [cols] + rows]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


def markdown(paths):
    """The BENCHMARKS.md tables of result files: one per scenario."""
    for p in paths:
        with open(p) as f:
            run = json.load(f)
        lim = run.get("limit")
        print("\n%s, `%s` (%s, load average %s at the start)\n" % (
            "Equal memory: %s cgroup" % human(lim) if lim else "Fits in RAM: no limit", os.path.basename(p),
            run["date"], "/".join("%s" % x for x in run["machine"]["loadavg"])))
        print("| case | population Gbit/s | warm Gbit/s | warm Gbit per server CPU-s | TTFB p50 / p90 / p99 / p99.9 / mean (us)"
              " | TTLB p50 / p90 / p99 / p99.9 / mean (us) | RSS | cgroup peak | object bytes | disk read, warm | |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for r in run["results"]:
            w, pop = r.get("warm", {}), r.get("population", {})

            def dist(d):
                return " / ".join("%.0f" % d[k] for k in ("p50", "p90", "p99", "p99_9", "mean")) if d else "-"
            runs = r.get("runs", [r])
            spread = ", ".join("%.2f" % x["warm"]["gbit_per_s"] for x in runs if "warm" in x)
            print("| %s | %s | %s (%s) | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                r["case"],
                "%.2f" % pop["gbit_per_s"] if pop else "-",
                "%.2f" % w["gbit_per_s"] if w else "-", spread,
                "%.2f" % w["gbit_per_cpu_s"] if w.get("gbit_per_cpu_s") else "-",
                dist(w.get("ttfb_us")), dist(w.get("ttlb_us")),
                human(r.get("rss", 0)), human(r.get("cgroup_peak", 0)), human(r.get("object_bytes", 0)),
                human(w.get("read_bytes", 0)),
                "VOID: " + "; ".join(sorted(set(v.splitlines()[0][:100] for v in r["void"]))) if r["void"] else "ok"))


def plot(paths, out_dir):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = []
    for p in paths:
        with open(p) as f:
            runs.append(json.load(f))
    for metric, title, fname in (
        (lambda r: r["warm"]["gbit_per_s"], "warm replay, Gbit/s of body bytes", "http-mirror-throughput.png"),
        (lambda r: r["warm"]["ttfb_us"]["p50"], "warm replay, TTFB p50 (us)", "http-mirror-ttfb-p50.png"),
        (lambda r: r["warm"]["ttfb_us"]["p99"], "warm replay, TTFB p99 (us)", "http-mirror-ttfb-p99.png"),
    ):
        fig, axes = plt.subplots(1, len(runs), figsize=(5.5 * len(runs), 4), squeeze=False)
        for ax, run in zip(axes[0], runs):
            ok = [r for r in run["results"] if "warm" in r]
            gob = sorted((r for r in ok if r["kind"] == "goblin"), key=lambda r: r["head"])
            heads = [int(r["head"]) >> 10 for r in gob]
            if gob:
                ax.plot(heads, [metric(r) for r in gob], "o-", color="tab:green", label="Goblin")
                for r in gob:
                    if r["void"]:
                        ax.annotate("void", (int(r["head"]) >> 10, metric(r)), fontsize=7)
            styles = {"varnish": "tab:red", "nginx-proxy": "tab:blue", "nginx-direct": "tab:gray"}
            for r in ok:
                if r["kind"] in styles:
                    ax.axhline(metric(r), color=styles[r["kind"]], ls="--",
                               label=r["case"] + (" (void)" if r["void"] else ""))
            failed = [r for r in run["results"] if r["kind"] == "goblin" and "warm" not in r]
            if failed:
                ax.text(0.5, 0.5, "Goblin without a result at %s:\n%s" % (
                    ", ".join("%dK" % (int(r["head"]) >> 10) for r in failed),
                    sorted(set(v.splitlines()[0][:60] for r in failed for v in r["void"]),
                           key=lambda v: "died" not in v)[0]),
                    transform=ax.transAxes, ha="center", fontsize=7, color="tab:green")
            ax.set_xscale("log", base=2)
            ax.set_xlim(12, 340)
            ax.set_xticks([16, 32, 64, 128, 256])
            ax.set_xticklabels(["16K", "32K", "64K", "128K", "256K"])
            ax.set_xlabel("Goblin --ram-head")
            lim = run.get("limit")
            ax.set_title("%s (%s corpus)" % ("equal memory, %s cgroup" % human(lim) if lim else "fits in RAM",
                                            human(run["corpus"]["bytes"])), fontsize=9)
            ax.grid(alpha=0.3)
            ax.set_ylim(bottom=0)
            ax.legend(fontsize=7)
        fig.suptitle(title)
        fig.tight_layout()
        path = os.path.join(out_dir, fname)
        fig.savefig(path, dpi=110)
        plt.close(fig)
        print("wrote", path)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workdir", default="/work/bench-http")
    ap.add_argument("--size", default="4G")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--scenario", choices=["equal", "ram", "both"], default="both")
    ap.add_argument("--limit", default="1.5G", help="memory cgroup limit of the equal-memory scenario")
    ap.add_argument("--peers", default="nginx-direct,varnish,nginx-proxy,goblin")
    ap.add_argument("--heads", default="16K,64K,128K,256K")
    # The server under test has one CPU (SERVER_CPU): one worker, one loop. Two on one CPU
    # time-slice, and a request waits behind the other's turn (TTFB p99 2-5 ms, not 1).
    ap.add_argument("--nginx-workers", type=int, default=1, help="worker processes of the nginx under test")
    ap.add_argument("--goblin-bin", default=os.path.join(REPO, "target", "release", "goblin-server"))
    ap.add_argument("--goblin-cores", default="1", help="--cores of the Goblin under test")
    ap.add_argument("--goblin-memory", help="--memory for Goblin [default: the rest of --limit, or every head and tail]")
    ap.add_argument("--goblin-small-memory", help="--small-memory [default: the sub-head objects + 25%%]")
    ap.add_argument("--goblin-args", default="", help="extra goblin-server flags")
    ap.add_argument("--bench-bin", default=os.path.join(REPO, "target", "release", "goblin-bench"))
    ap.add_argument("--warm-repeat", type=int, default=1,
                    help="replay the measured manifest this many times on each server; the median stands")
    ap.add_argument("--profile", nargs="?", const="warm", default="", type=lambda v: v.split(","),
                    help="perf record the server during these phases (comma-separated; default warm)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per case; the report gives each metric's median")
    ap.add_argument("--phase-timeout", type=int, default=900)
    ap.add_argument("--smoke", action="store_true", help="50 MB corpus, nginx-direct and Goblin 64K only")
    ap.add_argument("--plot", nargs="+", metavar="RESULTS", help="only draw the plots from result files")
    ap.add_argument("--markdown", nargs="+", metavar="RESULTS", help="only print result files as markdown tables")
    ap.add_argument("--plot-dir", default=os.path.join(REPO, "docs"))
    args = ap.parse_args()

    if args.markdown:
        markdown(args.markdown)
        return 0
    if args.plot:
        plot(args.plot, args.plot_dir)
        return 0
    if args.smoke:
        args.size, args.peers, args.heads = "50M", "nginx-direct,goblin", "64K"
        if args.scenario == "both":
            args.scenario = "ram"
    if os.path.realpath(args.workdir).startswith(os.path.realpath(REPO) + os.sep):
        ap.error("--workdir must be outside the git tree")
    os.makedirs(args.workdir, exist_ok=True)
    for binary in (args.bench_bin,) + ((args.goblin_bin,) if "goblin" in args.peers else ()):
        if not os.access(binary, os.X_OK):
            ap.error("%s is not built (cargo build --release -p goblin-objcache-load; "
                     "cargo build --release -p goblin-server)" % binary)

    # One run at a time on this machine: the cgroup, drop_caches and the CPUs are shared,
    # and so is the work directory.
    lock = open(LOCK_PATH, "w")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        print("another run_http_bench.py holds %s; waiting for it" % LOCK_PATH, flush=True)
        fcntl.flock(lock, fcntl.LOCK_EX)
    if "goblin" in args.peers:
        # The binary under test is copied, so a rebuild during the run changes nothing.
        bindir = os.path.join(args.workdir, "bin")
        os.makedirs(bindir, exist_ok=True)
        copy = os.path.join(bindir, "goblin-server")
        shutil.copy2(args.goblin_bin, copy)
        args.goblin_bin = copy
        git = subprocess.run(["git", "-C", REPO, "log", "-1", "--format=%h %cI"], capture_output=True, text=True)
        args.goblin_build = "%s, built %s, tree at %s" % (
            hashlib.sha256(open(copy, "rb").read()).hexdigest()[:16],
            time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(os.path.getmtime(copy))), git.stdout.strip())
        print("goblin-server under test:", args.goblin_build)

    corpus = make_corpus.make(args.workdir, make_corpus.parse_size(args.size), args.seed)
    sizes = []
    with open(os.path.join(corpus["root"], "population.txt")) as f:
        sizes = [int(line.split()[1]) for line in f]
    print("corpus %s: %d objects, %s, mean %s; manifests sha256: population %s measured %s"
          % (corpus["root"], corpus["objects"], human(corpus["bytes"]), human(corpus["mean"]),
             corpus["sha256"]["population.txt"][:16], corpus["sha256"]["measured.txt"][:16]))

    cases = []
    for peer in args.peers.split(","):
        if peer == "goblin":
            for h in args.heads.split(","):
                head = make_corpus.parse_size(h)
                cases.append({"name": "goblin-%dK" % (head >> 10), "kind": "goblin", "head": head})
        else:
            cases.append({"name": peer, "kind": peer})
    scenarios = ["equal", "ram"] if args.scenario == "both" else [args.scenario]
    cgroup = Cgroup()
    origin = Origin(args.workdir, corpus["docroot"])
    try:
        for scenario in scenarios:
            limit = make_corpus.parse_size(args.limit) if scenario == "equal" else None
            stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
            out = {"scenario": scenario, "limit": limit, "date": stamp, "corpus": corpus,
                   "machine": {"cpus": os.cpu_count(), "loadavg": open("/proc/loadavg").read().split()[:3],
                               "uname": os.uname().release,
                               "nginx": tool_version(["nginx", "-v"]),
                               "varnish": tool_version(["varnishd", "-V"]),
                               "goblin": getattr(args, "goblin_build", None)},
                   "results": []}
            path = os.path.join(args.workdir, "results-%s-%s.json" % (scenario, stamp))
            for case in cases:
                runs = [run_case(case, args, corpus, origin, cgroup, limit, sizes) for _ in range(args.repeat)]
                out["results"].append(merge_runs(runs))
                with open(path, "w") as f:
                    json.dump(out, f, indent=1)
            print("\n%s scenario (%s), %s corpus, load average at the end %s"
                  % (scenario, "cgroup limit %s" % human(limit) if limit else "no limit", human(corpus["bytes"]),
                     " ".join(open("/proc/loadavg").read().split()[:3])))
            print(table(out["results"], corpus))
            print("results:", path)
    finally:
        origin.stop()
        cgroup.reset(None)
    return 0


def tool_version(cmd):
    """The first line a peer prints of its version, or None when it is not installed (the
    smoke run needs neither nginx nor Varnish)."""
    if not shutil.which(cmd[0]):
        return None
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True).stdout
    return out.split("\n")[0].strip()


if __name__ == "__main__":
    sys.exit(main())
