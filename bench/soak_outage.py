#!/usr/bin/env python3
"""Outage soak: a Redis-backed cluster and a proxy under steady load while
their backends fail, for a bounded time (issue 32's planned soak).

What runs, every process started here on free loopback ports and stopped at
the end (by the pids recorded here, never by name):

- redis-server (persistence off);
- three `tessera serve --http --redis URL` instances behind HAProxy
  (round-robin per request, health checks every 500 ms);
- `tessera proxy --http` in front of a stdio upstream (`tessera serve
  --stdio`, a child process of the proxy).

The run is cut into ten phases of equal length (two minutes each for the
default 20 minutes): a warm-up, then steady phases between four outage
phases. In each phase two `tessera bench` runs call `echo` for the whole
phase with a steady concurrency, one through HAProxy and one through the
proxy, both over legacy sessions (2025-11-25), which need Redis:

    1 warm-up, 2 steady, 3 Redis restart, 4 steady, 5 upstream killed,
    6 steady, 7 Redis restart, 8 steady, 9 upstream killed, 10 steady

A Redis restart kills redis-server (SIGKILL) 10 s into its phase and starts
a new, empty one on the same port 10 s later; an upstream kill sends SIGKILL
to the proxy's upstream process 10 s into its phase (the proxy starts it
again by itself); a run shorter than 5 minutes (a shake-out) scales both
to a quarter of its phase. Errors are counted per phase and per target, by kind. The
errors of the target an outage hits, during that outage's phase, are the
documented outage errors (README, crates/tessera/guide/scaling.md and proxy.md: 503 with
Retry-After while the session store is down, sessions lost with an empty
Redis, calls to a dead upstream failing at once); every other error counts
against the run. The resident set size of every process is sampled every
5 s; the drift of each long-lived tessera process is the mean of the last
minute against the mean of the first minute after the warm-up.

    bench/soak_outage.py [--minutes N] [--concurrency C] [--tessera BIN]

Needs redis-server and haproxy (Debian packages `redis-server`, `haproxy`)
and a tessera binary (--tessera, else $TESSERA_BIN, else
$CARGO_TARGET_DIR/release/tessera, else target/release/tessera). Writes
bench/results/<UTC date>-soak-outage.md (and .json) and prints the report.
Exit status: 0 when there were no errors beyond the documented ones and
every drift is within 5%, 1 otherwise, 2 when something needed is missing.
Not a CI stage: it runs for minutes by design.
"""

import argparse
import datetime
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
PHASES = [
    ("warm-up", None),
    ("steady", None),
    ("redis restart", "redis"),
    ("steady", None),
    ("upstream killed", "upstream"),
    ("steady", None),
    ("redis restart", "redis"),
    ("steady", None),
    ("upstream killed", "upstream"),
    ("steady", None),
]
# Which load target each outage hits.
HITS = {"redis": "cluster", "upstream": "proxy"}
SAMPLE_EVERY = 5.0
OUTAGE_AT = 10.0
REDIS_DOWN_FOR = 10.0
DRIFT_LIMIT = 0.05


def say(msg):
    print(f"soak-outage: {msg}", file=sys.stderr, flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listen(port, proc, what, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited (status {proc.returncode}) before listening")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"{what} did not listen on port {port} within {timeout:.0f} s")


def rss_kb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def children(pid):
    out = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                out.extend(int(c) for c in f.read().split())
    except OSError:
        pass
    return out


def descendants(pid):
    """Every process under `pid` (children, their children, ...)."""
    out, todo = [], [pid]
    while todo:
        for kid in children(todo.pop()):
            out.append(kid)
            todo.append(kid)
    return out


def start_time(pid):
    """The start time of `pid` (clock ticks since boot), or None once it is
    gone: with the pid, it names one process even if the pid is reused."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


class Cluster:
    """Every process of the soak, by role, started and stopped here."""

    def __init__(self, tessera, workdir):
        self.tessera = tessera
        self.dir = workdir
        self.procs = {}
        self.lock = threading.Lock()
        self.redis_port = free_port()

    def log(self, name):
        return open(os.path.join(self.dir, f"{name}.log"), "ab")

    def spawn(self, role, argv):
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=self.log(role),
                             stderr=subprocess.STDOUT, cwd=self.dir)
        with self.lock:
            self.procs[role] = p
        return p

    def start_redis(self):
        p = self.spawn("redis", ["redis-server", "--port", str(self.redis_port), "--bind",
                                 "127.0.0.1", "--save", "", "--appendonly", "no",
                                 "--daemonize", "no", "--dir", self.dir])
        wait_listen(self.redis_port, p, "redis-server")

    def start(self):
        self.start_redis()
        url = f"redis://127.0.0.1:{self.redis_port}/0"
        backends = []
        for i in (1, 2, 3):
            port = free_port()
            p = self.spawn(f"instance-{i}", [self.tessera, "serve", "--http", f"127.0.0.1:{port}",
                                              "--redis", url, "--allow-host", "127.0.0.1"])
            wait_listen(port, p, f"instance {i}")
            backends.append(port)
        lb = free_port()
        cfg = os.path.join(self.dir, "haproxy.cfg")
        with open(cfg, "w") as f:
            f.write("global\n    maxconn 4096\n\ndefaults\n    mode http\n"
                    "    timeout connect 2s\n    timeout client 120s\n    timeout server 120s\n"
                    "    retries 2\n    option redispatch\n\n"
                    f"frontend mcp\n    bind 127.0.0.1:{lb}\n    default_backend tessera\n\n"
                    "backend tessera\n    balance roundrobin\n")
            for i, port in enumerate(backends, 1):
                f.write(f"    server s{i} 127.0.0.1:{port} check inter 500ms fall 2 rise 1\n")
        p = self.spawn("haproxy", ["haproxy", "-db", "-f", cfg])
        wait_listen(lb, p, "haproxy")
        proxy_port = free_port()
        p = self.spawn("proxy", [self.tessera, "proxy", "--http", f"127.0.0.1:{proxy_port}",
                                 "--", self.tessera, "serve", "--stdio"])
        wait_listen(proxy_port, p, "tessera proxy")
        self.urls = {"cluster": f"http://127.0.0.1:{lb}/mcp",
                     "proxy": f"http://127.0.0.1:{proxy_port}/mcp"}

    def upstream_pid(self):
        kids = children(self.procs["proxy"].pid)
        return kids[0] if kids else None

    def pids(self):
        with self.lock:
            out = {role: p.pid for role, p in self.procs.items() if p.poll() is None}
        up = self.upstream_pid()
        if up:
            out["upstream"] = up
        return out

    def restart_redis(self, events, down_for):
        p = self.procs["redis"]
        p.send_signal(signal.SIGKILL)
        p.wait()
        events.append((time.monotonic(), "redis killed"))
        time.sleep(down_for)
        self.start_redis()
        events.append((time.monotonic(), "redis started again (empty)"))

    def kill_upstream(self, events):
        pid = self.upstream_pid()
        if pid is None:
            events.append((time.monotonic(), "no upstream process to kill"))
            return
        os.kill(pid, signal.SIGKILL)
        events.append((time.monotonic(), f"upstream pid {pid} killed"))

    def stop(self):
        """Stops every process started here, by pid: each one started
        directly (SIGTERM, SIGKILL after 10 s), then whatever they had
        started themselves (the proxy's upstreams) if it outlived them."""
        with self.lock:
            procs = list(self.procs.items())
        below = []
        for _, p in procs:
            if p.poll() is None:
                below += [(pid, start_time(pid)) for pid in descendants(p.pid)]
        for role, p in reversed(procs):
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        left = []
        for pid, started in below:
            if started is not None and start_time(pid) == started:
                try:
                    os.kill(pid, signal.SIGKILL)
                    left.append(pid)
                except OSError:
                    pass
        if left:
            say(f"killed {len(left)} processes that outlived their parent: {left}")
        self.stopped = {role: p.poll() for role, p in procs}


def bench(tessera, url, seconds, concurrency):
    argv = [tessera, "bench", "echo", '{"text":"soak"}', url, "-c", str(concurrency),
            "-d", f"{seconds:.1f}", "--era", "legacy", "--json", "--timeout", "10"]
    p = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                       timeout=seconds + 120)
    try:
        return json.loads(p.stdout)
    except json.JSONDecodeError:
        return {"requests": 0, "ok": 0,
                "errors": {f"bench exited {p.returncode}: {p.stderr.strip()[:200]}": 1}}


def sampler(cluster, samples, stop, t0):
    while not stop.wait(SAMPLE_EVERY):
        t = time.monotonic() - t0
        for role, pid in cluster.pids().items():
            kb = rss_kb(pid)
            if kb is not None:
                samples.append({"t": round(t, 1), "role": role, "pid": pid, "rss_kb": kb})


def mean(xs):
    return sum(xs) / len(xs) if xs else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=20.0)
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--tessera")
    a = ap.parse_args()
    tessera = a.tessera or os.environ.get("TESSERA_BIN") or os.path.join(
        os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "release", "tessera")
    for tool in ("redis-server", "haproxy"):
        if not shutil.which(tool):
            say(f"{tool} is required (apt-get install {'redis-server' if tool == 'redis-server' else 'haproxy'})")
            return 2
    if not os.access(tessera, os.X_OK):
        say(f"no tessera binary at {tessera} (build one: cargo build --release -p tessera-cli)")
        return 2
    phase_secs = a.minutes * 60.0 / len(PHASES)
    # A short shake-out run (--minutes 2: 12 s a phase) scales the outage
    # down to fit its phase; a full run keeps 10 s and 10 s.
    outage_at = min(OUTAGE_AT, phase_secs / 4)
    down_for = min(REDIS_DOWN_FOR, phase_secs / 4)
    if phase_secs < 8:
        say(f"--minutes {a.minutes} leaves {phase_secs:.0f} s a phase; at least 8 s are needed")
        return 2
    workdir = tempfile.mkdtemp(prefix="tessera-soak-outage-")
    cluster = Cluster(tessera, workdir)
    started = datetime.datetime.now(datetime.timezone.utc)
    samples, events, phases = [], [], []
    stop = threading.Event()
    try:
        cluster.start()
        say(f"up: cluster {cluster.urls['cluster']}, proxy {cluster.urls['proxy']}; logs in {workdir}")
        t0 = time.monotonic()
        threading.Thread(target=sampler, args=(cluster, samples, stop, t0), daemon=True).start()
        for n, (name, outage) in enumerate(PHASES, 1):
            begin = time.monotonic()
            say(f"phase {n}/{len(PHASES)}: {name} ({phase_secs:.0f} s)")
            results = {}
            runs = [threading.Thread(target=lambda k=k: results.__setitem__(
                k, bench(tessera, cluster.urls[k], phase_secs, a.concurrency)))
                for k in ("cluster", "proxy")]
            for r in runs:
                r.start()
            if outage:
                time.sleep(outage_at)
                if outage == "redis":
                    cluster.restart_redis(events, down_for)
                else:
                    cluster.kill_upstream(events)
            for r in runs:
                r.join()
            phases.append({"n": n, "name": name, "outage": outage,
                           "start_s": round(begin - t0, 1), "end_s": round(time.monotonic() - t0, 1),
                           "results": results})
        stop.set()
    finally:
        stop.set()
        cluster.stop()
    report, ok = summarise(a, tessera, started, phase_secs, phases, samples,
                           [(round(t - t0, 1), e) for t, e in events])
    stamp = started.strftime("%Y-%m-%dT%H-%M-%SZ")
    out = os.path.join(BENCH, "results", f"{stamp}-soak-outage")
    with open(out + ".md", "w") as f:
        f.write(report)
    with open(out + ".json", "w") as f:
        json.dump({"phases": phases, "samples": samples, "events": events}, f, indent=1)
    print(report)
    say(f"wrote {out}.md and .json")
    shutil.rmtree(workdir, ignore_errors=True)
    return 0 if ok else 1


def summarise(a, tessera, started, phase_secs, phases, samples, events):
    lines = [f"# Outage soak, {started.strftime('%Y-%m-%d %H:%M UTC')}", "",
             f"`bench/soak_outage.py --minutes {a.minutes:g} --concurrency {a.concurrency}` with "
             f"`{tessera}`: three `tessera serve --redis` behind HAProxy, `tessera proxy` in front of "
             f"`tessera serve --stdio`; `tessera bench echo -c {a.concurrency} --era legacy` on each "
             f"for every phase of {phase_secs:.0f} s.", "",
             "## Errors per phase", "",
             "| # | phase | target | calls | ok | req/s | p99 ms | documented outage errors | other errors |",
             "|---|---|---|---:|---:|---:|---:|---|---|"]
    other_total = 0
    outage_total = 0
    for p in phases:
        for target in ("cluster", "proxy"):
            r = p["results"].get(target, {})
            errors = r.get("errors", {}) or {}
            documented = p["outage"] is not None and HITS[p["outage"]] == target
            n_err = sum(errors.values())
            kinds = "; ".join(f"{v} {k}" for k, v in sorted(errors.items())) or "0"
            if documented:
                outage_total += n_err
                cells = (kinds, "0")
            else:
                other_total += n_err
                cells = ("—", kinds)
            rps = r.get("reqPerSec")
            p99 = (r.get("latencyMs") or {}).get("p99")
            lines.append(f"| {p['n']} | {p['name']} | {target} | {r.get('requests', 0):,} | "
                         f"{r.get('ok', 0):,} | {f'{rps:,.0f}' if rps is not None else '—'} | "
                         f"{f'{p99:.1f}' if p99 is not None else '—'} | {cells[0]} | {cells[1]} |")
    lines += ["", f"Documented outage errors: {outage_total}. Other errors: {other_total}.", "",
              "Events (seconds from the start of phase 1): " +
              ("; ".join(f"{t} s {e}" for t, e in events) or "none") + ".", "",
              "## Resident set size", "",
              "Sampled every 5 s. Drift = mean of the last 60 s against the mean of the first 60 s "
              "after the warm-up, for the processes that live through the whole run (the upstream "
              "and Redis are restarted, so each of their lives is shown by its range).", "",
              "| process | first minute after warm-up (MB) | last minute (MB) | drift | min–max over the run (MB) |",
              "|---|---:|---:|---:|---|"]
    warm_end = phases[0]["end_s"] if phases else 0
    run_end = phases[-1]["end_s"] if phases else 0
    ok = other_total == 0
    for role in ["instance-1", "instance-2", "instance-3", "proxy", "haproxy", "upstream", "redis"]:
        rs = [s for s in samples if s["role"] == role]
        if not rs:
            continue
        first = mean([s["rss_kb"] for s in rs if warm_end <= s["t"] < warm_end + 60])
        last = mean([s["rss_kb"] for s in rs if s["t"] >= run_end - 60])
        lo, hi = min(s["rss_kb"] for s in rs), max(s["rss_kb"] for s in rs)
        restarted = len({s["pid"] for s in rs}) > 1
        if first and last and not restarted:
            drift = (last - first) / first
            if role != "haproxy" and abs(drift) > DRIFT_LIMIT:
                ok = False
            d = f"{drift * 100:+.1f}%"
        else:
            d = f"restarted ({len({s['pid'] for s in rs})} lives)" if restarted else "—"
        fmt = lambda kb: f"{kb / 1024:.1f}" if kb else "—"
        lines.append(f"| {role} | {fmt(first)} | {fmt(last)} | {d} | {lo / 1024:.1f}–{hi / 1024:.1f} |")
    lines += ["", f"Verdict: {'pass' if ok else 'FAIL'} (0 errors beyond the documented outage "
              f"errors and every tessera process within {DRIFT_LIMIT * 100:.0f}% after warm-up).", ""]
    return "\n".join(lines), ok


if __name__ == "__main__":
    sys.exit(main())
