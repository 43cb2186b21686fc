//! What the harness reads of a server process from /proc: resident memory and
//! CPU time.

use std::fs;

/// The resident set size of `pid` in KiB (`VmRSS` in /proc/PID/status).
pub fn rss_kb(pid: u32) -> Option<u64> {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|n| n.parse().ok())
}

/// What `/proc/PID/status` says of a process's memory and threads.
#[derive(Debug, Clone, Copy, Default)]
pub struct Status {
    /// `VmRSS`, KiB.
    pub rss_kb: Option<u64>,
    /// `VmHWM` (the peak of the RSS), KiB.
    pub hwm_kb: Option<u64>,
    /// `Threads`.
    pub threads: Option<u64>,
}

/// `VmRSS`, `VmHWM` and `Threads` of `pid`.
pub fn status(pid: u32) -> Option<Status> {
    let text = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|n| n.parse().ok())
    };
    Some(Status {
        rss_kb: field("VmRSS:"),
        hwm_kb: field("VmHWM:"),
        threads: field("Threads:"),
    })
}

/// User + system CPU time of `pid` (all its threads, including the ones that
/// exited) in clock ticks: fields 14 and 15 of /proc/PID/stat.
pub fn cpu_ticks(pid: u32) -> Option<u64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces: count
    // the fields after its closing parenthesis. Field 3 is the first one there.
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: u64 = fields.get(14 - 3)?.parse().ok()?;
    let stime: u64 = fields.get(15 - 3)?.parse().ok()?;
    Some(utime + stime)
}

/// Clock ticks per second (`sysconf(_SC_CLK_TCK)`, 100 on Linux).
pub fn clk_tck() -> f64 {
    // SAFETY: sysconf has no preconditions; it only reads a constant.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 { t as f64 } else { 100.0 }
}

/// CPU seconds of `pid` so far.
pub fn cpu_seconds(pid: u32) -> Option<f64> {
    cpu_ticks(pid).map(|t| t as f64 / clk_tck())
}

/// The 1, 5 and 15 minute load averages (/proc/loadavg).
pub fn loadavg() -> String {
    let l = fs::read_to_string("/proc/loadavg").unwrap_or_default();
    l.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
}

/// One line describing the machine: CPU model, logical CPUs, kernel.
pub fn machine() -> String {
    let cpu = fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines().find_map(|l| {
                l.strip_prefix("model name")
                    .map(|v| v.trim_start_matches([' ', '\t', ':']).to_owned())
            })
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cpus = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(0);
    let online = fs::read_to_string("/sys/devices/system/cpu/online").unwrap_or_default();
    let kernel = fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    format!(
        "{cpu}; CPUs online {}; harness affinity {cpus}; Linux {}",
        online.trim(),
        kernel.trim()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_own_process() {
        let me = std::process::id();
        assert!(rss_kb(me).unwrap() > 0);
        let s = status(me).unwrap();
        assert!(s.hwm_kb.unwrap() >= s.rss_kb.unwrap());
        assert!(s.threads.unwrap() >= 1);
        assert!(cpu_ticks(me).is_some());
        assert!(clk_tck() > 0.0);
    }
}
