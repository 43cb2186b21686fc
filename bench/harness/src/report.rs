//! The report: medians over rounds, one table of absolute figures and
//! Tessera ÷ other ratios, the targets, versions, commands.

use std::fmt::Write as _;

use serde::Serialize;

use crate::load::PointResult;
use crate::results::Results;
use crate::servers::{Impl, Mode};
use crate::stdio::StdioResult;

/// Median of the values (None when empty or all None).
pub fn median(mut v: Vec<f64>) -> Option<f64> {
    v.retain(|x| x.is_finite());
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

fn http(
    r: &Results,
    imp: Impl,
    mode: Mode,
    c: usize,
    f: impl Fn(&PointResult) -> Option<f64>,
) -> Option<f64> {
    median(
        r.http
            .iter()
            .filter(|p| p.server == imp && p.mode == mode && p.result.concurrency == c)
            .filter_map(|p| f(&p.result))
            .collect(),
    )
}

fn http_errors(r: &Results, imp: Impl, mode: Mode) -> Option<f64> {
    let pts: Vec<_> = r
        .http
        .iter()
        .filter(|p| p.server == imp && p.mode == mode)
        .collect();
    (!pts.is_empty()).then(|| pts.iter().map(|p| p.result.errors as f64).sum())
}

fn after_load(r: &Results, imp: Impl, mode: Mode) -> Option<f64> {
    median(
        r.http_runs
            .iter()
            .filter(|x| x.server == imp && x.mode == mode)
            .filter_map(|x| x.after_load_rss_kb.map(|k| k as f64 / 1024.0))
            .collect(),
    )
}

fn mem(r: &Results, imp: Impl, f: impl Fn(&crate::load::SessionsResult) -> f64) -> Option<f64> {
    median(
        r.memory
            .iter()
            .filter(|m| m.server == imp)
            .map(|m| f(&m.result))
            .collect(),
    )
}

/// The stdio variant of Tessera with `TESSERA_STDIO_PIPES=blocking`.
pub const BLOCKING_PIPES: &str = "blocking-pipes";

fn stdio(r: &Results, imp: Impl, f: impl Fn(&StdioResult) -> Option<f64>) -> Option<f64> {
    stdio_variant(r, imp, None, f)
}

fn stdio_variant(
    r: &Results,
    imp: Impl,
    variant: Option<&str>,
    f: impl Fn(&StdioResult) -> Option<f64>,
) -> Option<f64> {
    median(
        r.stdio
            .iter()
            .filter(|s| s.server == imp && s.variant.as_deref() == variant)
            .filter_map(|s| f(&s.result))
            .collect(),
    )
}

fn cold(r: &Results, imp: Impl) -> Option<f64> {
    median(
        r.stdio
            .iter()
            .filter(|s| s.server == imp && s.variant.is_none())
            .flat_map(|s| s.cold_start_ms.iter().copied())
            .collect(),
    )
}

/// One row of the table.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// Section: a mode, `memory` or `stdio`.
    pub section: String,
    /// Concurrency, when the row has one.
    pub concurrency: Option<usize>,
    /// Metric name, with ↑ (higher is better) or ↓ (lower is better).
    pub metric: String,
    /// Median per server, in [`Impl::ALL`] order.
    pub values: [Option<f64>; 5],
    #[serde(skip)]
    unit: Unit,
}

#[derive(Debug, Clone, Copy)]
enum Unit {
    Rate,
    Ms,
    Us,
    Mb,
    Kb,
    Count,
    Pct,
}

impl Unit {
    fn fmt(self, v: f64) -> String {
        match self {
            Unit::Rate | Unit::Count | Unit::Pct => format!("{v:.0}"),
            Unit::Ms if v < 10.0 => format!("{v:.3}"),
            Unit::Ms => format!("{v:.1}"),
            Unit::Us | Unit::Mb | Unit::Kb => format!("{v:.1}"),
        }
    }
}

fn row(
    section: &str,
    c: Option<usize>,
    metric: &str,
    unit: Unit,
    f: impl Fn(Impl) -> Option<f64>,
) -> Row {
    Row {
        section: section.to_owned(),
        concurrency: c,
        metric: metric.to_owned(),
        values: Impl::ALL.map(f),
        unit,
    }
}

fn idx(i: Impl) -> usize {
    Impl::ALL.iter().position(|&x| x == i).expect("listed")
}

/// Every row of the table.
pub fn rows(r: &Results) -> Vec<Row> {
    let mut rows = Vec::new();
    let modes: Vec<Mode> = Mode::ALL
        .into_iter()
        .filter(|m| r.http.iter().any(|p| p.mode == *m) || r.http_runs.iter().any(|p| p.mode == *m))
        .collect();
    for mode in modes {
        let m = mode.key();
        for &c in &r.meta.concurrency {
            rows.push(row(m, Some(c), "req/s ↑", Unit::Rate, |i| {
                http(r, i, mode, c, |p| Some(p.rps))
            }));
            rows.push(row(m, Some(c), "p50 ms ↓", Unit::Ms, |i| {
                http(r, i, mode, c, |p| Some(p.p50_us / 1000.0))
            }));
            rows.push(row(m, Some(c), "p99 ms ↓", Unit::Ms, |i| {
                http(r, i, mode, c, |p| Some(p.p99_us / 1000.0))
            }));
            rows.push(row(m, Some(c), "server CPU µs/req ↓", Unit::Us, |i| {
                http(r, i, mode, c, |p| p.cpu_us_per_req)
            }));
            rows.push(row(m, Some(c), "server core busy %", Unit::Pct, |i| {
                http(r, i, mode, c, |p| p.server_busy.map(|b| b * 100.0))
            }));
        }
        rows.push(row(m, None, "RSS after load MB ↓", Unit::Mb, |i| {
            after_load(r, i, mode)
        }));
        rows.push(row(
            m,
            None,
            "errors (all points, all rounds)",
            Unit::Count,
            |i| http_errors(r, i, mode),
        ));
    }
    if !r.memory.is_empty() {
        let n = r.meta.sessions;
        rows.push(row("memory", None, "RSS idle MB ↓", Unit::Mb, |i| {
            mem(r, i, |m| m.rss_before_kb as f64 / 1024.0)
        }));
        rows.push(row(
            "memory",
            None,
            &format!("RSS with {n} sessions MB ↓"),
            Unit::Mb,
            |i| mem(r, i, |m| m.rss_after_kb as f64 / 1024.0),
        ));
        rows.push(row(
            "memory",
            None,
            "KB per idle session ↓",
            Unit::Kb,
            |i| mem(r, i, |m| m.kb_per_session),
        ));
        rows.push(row(
            "memory",
            None,
            "sessions opened/s ↑",
            Unit::Rate,
            |i| mem(r, i, |m| m.opened_per_s),
        ));
    }
    if !r.stdio.is_empty() {
        rows.push(row(
            "stdio",
            Some(1),
            "round trips/s ↑",
            Unit::Rate,
            |i| stdio(r, i, |s| Some(s.rps)),
        ));
        rows.push(row("stdio", Some(1), "p50 ms ↓", Unit::Ms, |i| {
            stdio(r, i, |s| Some(s.p50_us / 1000.0))
        }));
        rows.push(row("stdio", Some(1), "p99 ms ↓", Unit::Ms, |i| {
            stdio(r, i, |s| Some(s.p99_us / 1000.0))
        }));
        rows.push(row(
            "stdio",
            Some(1),
            "server CPU µs/req ↓",
            Unit::Us,
            |i| stdio(r, i, |s| s.cpu_us_per_req),
        ));
        rows.push(row("stdio", None, "cold start ms ↓", Unit::Ms, |i| {
            cold(r, i)
        }));
        rows.push(row("stdio", None, "RSS after run MB ↓", Unit::Mb, |i| {
            stdio(r, i, |s| s.rss_kb.map(|k| k as f64 / 1024.0))
        }));
    }
    rows
}

fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if b.abs() > 1e-9 && a.is_finite() && b.is_finite() => Some(a / b),
        _ => None,
    }
}

fn fmt_ratio(x: Option<f64>) -> String {
    x.map_or_else(|| "—".into(), |x| format!("{x:.2}×"))
}

/// One target of the issue, evaluated.
#[derive(Debug, Clone, Serialize)]
pub struct Target {
    /// What is required.
    pub target: String,
    /// Tessera's figure.
    pub tessera: Option<f64>,
    /// The other figure.
    pub other: Option<f64>,
    /// tessera / other.
    pub ratio: Option<f64>,
    /// Whether it is met (None: not measured).
    pub met: Option<bool>,
}

/// The targets, evaluated at the highest concurrency measured.
pub fn targets(r: &Results) -> Vec<Target> {
    let mut out = Vec::new();
    let Some(&c) = r.meta.concurrency.iter().max() else {
        return out;
    };
    let mut push = |target: String, t: Option<f64>, o: Option<f64>, ok: &dyn Fn(f64) -> bool| {
        let q = ratio(t, o);
        out.push(Target {
            target,
            tessera: t,
            other: o,
            ratio: q,
            met: q.map(ok),
        });
    };
    let modes: Vec<Mode> = Mode::ALL
        .into_iter()
        .filter(|m| r.http.iter().any(|p| p.mode == *m))
        .collect();
    for &mode in &modes {
        let m = mode.key();
        let rps = |i| http(r, i, mode, c, |p| Some(p.rps));
        let cpu = |i| http(r, i, mode, c, |p| p.cpu_us_per_req);
        let p99 = |i| http(r, i, mode, c, |p| Some(p.p99_us / 1000.0));
        push(
            format!("{m}: req/s at c={c} ≥ 2× rmcp"),
            rps(Impl::Tessera),
            rps(Impl::Rmcp),
            &|q| q >= 2.0,
        );
        push(
            format!("{m}: req/s at c={c} ≥ 0.5× floor"),
            rps(Impl::Tessera),
            rps(Impl::Floor),
            &|q| q >= 0.5,
        );
        push(
            format!("{m}: server CPU µs/req at c={c} ≤ 0.5× rmcp"),
            cpu(Impl::Tessera),
            cpu(Impl::Rmcp),
            &|q| q <= 0.5,
        );
        push(
            format!("{m}: server CPU µs/req at c={c} ≤ 2× floor"),
            cpu(Impl::Tessera),
            cpu(Impl::Floor),
            &|q| q <= 2.0,
        );
        push(
            format!("{m}: p99 ms at c={c} ≤ rmcp"),
            p99(Impl::Tessera),
            p99(Impl::Rmcp),
            &|q| q <= 1.0,
        );
    }
    if !r.memory.is_empty() {
        let kb = |i| mem(r, i, |m| m.kb_per_session);
        push(
            "KB per idle session ≤ 0.5× rmcp".into(),
            kb(Impl::Tessera),
            kb(Impl::Rmcp),
            &|q| q <= 0.5,
        );
    }
    if !r.stdio.is_empty() {
        let rt = |i| stdio(r, i, |s| Some(s.rps));
        push(
            "stdio round trips/s ≥ 1.5× rmcp".into(),
            rt(Impl::Tessera),
            rt(Impl::Rmcp),
            &|q| q >= 1.5,
        );
        let blocking = stdio_variant(r, Impl::Tessera, Some(BLOCKING_PIPES), |s| s.cpu_us_per_req);
        if blocking.is_some() {
            push(
                "stdio CPU µs per round trip: Tessera's polled pipes (the default) ≤ its blocking ones (TESSERA_STDIO_PIPES=blocking)"
                    .into(),
                stdio_variant(r, Impl::Tessera, None, |s| s.cpu_us_per_req),
                blocking,
                &|q| q <= 1.0,
            );
        }
    }
    out
}

/// The report in Markdown.
pub fn markdown(r: &Results) -> String {
    let m = &r.meta;
    let mut s = String::new();
    let kind = if m.smoke {
        " (smoke: proves the harness works; figures are not meaningful)"
    } else {
        ""
    };
    let _ = writeln!(s, "# Tessera benchmark, {}{kind}\n", m.started);
    let _ = writeln!(
        s,
        "{} round(s), interleaved; load points {:.1} s measured after {:.1} s warm-up; concurrency {}; \
         {} sessions for memory; stdio {:.1} s, {} cold start(s) per round.  ",
        m.rounds,
        m.duration_s,
        m.warmup_s,
        m.concurrency
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", "),
        m.sessions,
        m.stdio_duration_s,
        m.cold_starts,
    );
    let _ = writeln!(
        s,
        "Pinning: servers on core {}, load generator on core {}.  ",
        m.server_core.map_or("(none)".into(), |c| c.to_string()),
        m.client_core.map_or("(none)".into(), |c| c.to_string()),
    );
    let _ = writeln!(s, "Machine: {}  ", m.machine);
    let _ = writeln!(
        s,
        "Load average (1/5/15 min) at start and end: {} (a load near or above the number of CPUs means \
         other work competed with the benchmark).\n",
        m.loadavg.join(" → ")
    );

    let _ = writeln!(s, "## Results\n");
    let _ = writeln!(
        s,
        "Medians over rounds. Ratios are Tessera ÷ the other server: for ↑ metrics above 1 is better \
         for Tessera, for ↓ metrics below 1 is. — means not measured (or not supported).\n"
    );
    let titles: Vec<&str> = Impl::ALL.iter().map(|i| i.title()).collect();
    let _ = writeln!(
        s,
        "| section | c | metric | {} | T/rmcp | T/floor | T/TS | T/Py |",
        titles.join(" | ")
    );
    let _ = writeln!(
        s,
        "|---|---:|---|{}---:|---:|---:|---:|",
        "---:|".repeat(titles.len())
    );
    for row in rows(r) {
        let vals: Vec<String> = row
            .values
            .iter()
            .map(|v| v.map_or("—".into(), |v| row.unit.fmt(v)))
            .collect();
        let t = row.values[idx(Impl::Tessera)];
        let ratios = if matches!(row.unit, Unit::Count | Unit::Pct) {
            vec!["".to_owned(); 4]
        } else {
            [Impl::Rmcp, Impl::Floor, Impl::Ts, Impl::Py]
                .map(|o| {
                    // The floor keeps no session state: a ratio to its ~0 KB says nothing.
                    if o == Impl::Floor && row.metric.starts_with("KB per idle session") {
                        "—".to_owned()
                    } else {
                        fmt_ratio(ratio(t, row.values[idx(o)]))
                    }
                })
                .to_vec()
        };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} |",
            row.section,
            row.concurrency.map_or(String::new(), |c| c.to_string()),
            row.metric,
            vals.join(" | "),
            ratios.join(" | ")
        );
    }

    let bodies: Vec<String> = Mode::ALL
        .iter()
        .flat_map(|&mode| {
            Impl::ALL.iter().filter_map(move |&i| {
                r.http
                    .iter()
                    .find(|p| p.server == i && p.mode == mode && p.result.body != "-")
                    .map(|p| format!("{}/{}: {}", i.key(), mode.key(), p.result.body))
            })
        })
        .collect();
    if !bodies.is_empty() {
        let _ = writeln!(
            s,
            "\nResponse bodies seen for tools/call: {}.",
            bodies.join(", ")
        );
    }

    let ts = targets(r);
    if !ts.is_empty() {
        let _ = writeln!(s, "\n## Targets (from the issue)\n");
        let _ = writeln!(
            s,
            "Evaluated at the highest concurrency measured; informational, never an assertion.\n"
        );
        let _ = writeln!(s, "| target | Tessera | other | ratio | met |");
        let _ = writeln!(s, "|---|---:|---:|---:|:---:|");
        for t in &ts {
            let f = |v: Option<f64>| {
                v.map_or("—".into(), |v| match v {
                    v if v >= 100.0 => format!("{v:.0}"),
                    v if v >= 10.0 => format!("{v:.1}"),
                    v => format!("{v:.3}"),
                })
            };
            let met = match t.met {
                Some(true) => "yes",
                Some(false) => "**no**",
                None => "—",
            };
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {met} |",
                t.target,
                f(t.tessera),
                f(t.other),
                fmt_ratio(t.ratio)
            );
        }
    }

    let _ = writeln!(s, "\n## Modes\n");
    for mode in Mode::ALL {
        let _ = writeln!(s, "- `{}`: {}", mode.key(), mode.describe());
    }

    let _ = writeln!(s, "\n## Versions\n");
    let _ = writeln!(s, "| component | version |");
    let _ = writeln!(s, "|---|---|");
    for (k, v) in &m.versions {
        let _ = writeln!(s, "| {k} | {v} |");
    }

    if !m.commands.is_empty() {
        let _ = writeln!(s, "\n## Server commands\n");
        if let Some(c) = m.server_core {
            let _ = writeln!(s, "Each runs as `taskset -c {c} COMMAND`.\n");
        }
        for (k, v) in &m.commands {
            let _ = writeln!(s, "- {k}: `{v}`");
        }
    }
    if !r.skipped.is_empty() {
        let _ = writeln!(s, "\n## Not measured\n");
        for k in &r.skipped {
            let _ = writeln!(s, "- {k}");
        }
    }
    if !r.failures.is_empty() {
        let _ = writeln!(s, "\n## Failures\n");
        for f in &r.failures {
            let _ = writeln!(s, "- {}: {}", f.what, f.error.replace('\n', " ⏎ "));
        }
    }
    s
}

/// The JSON written beside the Markdown: the raw records plus the table and
/// the targets.
pub fn json(r: &Results) -> serde_json::Value {
    let mut v = serde_json::to_value(r).expect("serialisable");
    v["table"] = serde_json::to_value(rows(r)).expect("serialisable");
    v["targets"] = serde_json::to_value(targets(r)).expect("serialisable");
    v
}

/// `YYYY-MM-DDTHH:MM:SSZ` for a Unix time.
pub fn utc(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Civil date from days since 1970-01-01 (proleptic Gregorian).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let mo = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(mo <= 2);
    format!(
        "{y:04}-{mo:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_dates() {
        assert_eq!(utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(utc(1_798_761_599), "2026-12-31T23:59:59Z");
    }

    #[test]
    fn medians() {
        assert_eq!(median(vec![]), None);
        assert_eq!(median(vec![3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), Some(2.5));
    }
}
