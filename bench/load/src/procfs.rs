//! What `/proc` says about the server (resident memory, its high-water
//! mark, open file descriptors, CPU time) and about this tool (CPU time).

use std::time::Instant;

/// Clock ticks per second of `/proc/*/stat` times (`USER_HZ`, 100 on Linux).
const USER_HZ: f64 = 100.0;

/// One sample of the server process.
#[derive(Debug, Clone, Copy)]
pub struct ProcSample {
    /// When it was taken.
    pub at: Instant,
    /// `VmRSS`, KiB.
    pub rss_kib: u64,
    /// `VmHWM` (peak resident set since start), KiB.
    pub hwm_kib: u64,
    /// Entries in `/proc/<pid>/fd`.
    pub fds: u64,
    /// User + system CPU time, seconds.
    pub cpu_s: f64,
}

/// Samples process `pid`; `None` when it no longer exists (or `/proc` is unreadable).
pub fn sample(pid: u32) -> Option<ProcSample> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| -> Option<u64> {
        let line = status.lines().find(|l| l.starts_with(name))?;
        line[name.len()..].trim().trim_end_matches("kB").trim().parse().ok()
    };
    let rss_kib = field("VmRSS:")?;
    let hwm_kib = field("VmHWM:")?;
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?.count() as u64;
    let cpu_s = cpu_seconds(&format!("/proc/{pid}/stat"))?;
    Some(ProcSample { at: Instant::now(), rss_kib, hwm_kib, fds, cpu_s })
}

/// User + system CPU seconds of this process.
pub fn self_cpu_s() -> Option<f64> {
    cpu_seconds("/proc/self/stat")
}

/// utime + stime (fields 14 and 15) of a `/proc/*/stat` file, in seconds.
fn cpu_seconds(path: &str) -> Option<f64> {
    let stat = std::fs::read_to_string(path).ok()?;
    // The command name (field 2) may hold spaces: count fields after its ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // rest starts at field 3 (state): utime is field 14, index 11 here.
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) / USER_HZ)
}

/// CPU seconds the whole machine spent busy (all CPUs: user, nice, system,
/// irq, softirq, steal), from the first line of `/proc/stat`.
pub fn machine_busy_s() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let line = stat.lines().next()?;
    let f: Vec<f64> = line.split_whitespace().skip(1).filter_map(|x| x.parse().ok()).collect();
    let busy = f.first()? + f.get(1)? + f.get(2)? + f.get(5)? + f.get(6)? + f.get(7)?;
    Some(busy / USER_HZ)
}

/// CPU use over one window: this tool, the server, the whole machine.
#[derive(Debug, Clone, Copy, Default)]
pub struct CpuWindow {
    pub wall_s: f64,
    pub tool_s: Option<f64>,
    pub server_s: Option<f64>,
    pub machine_s: Option<f64>,
}

/// The counters a [`CpuWindow`] is the difference of.
#[derive(Debug, Clone, Copy)]
pub struct CpuMark {
    at: Instant,
    tool: Option<f64>,
    server: Option<f64>,
    machine: Option<f64>,
}

impl CpuMark {
    /// Reads the counters now (`pid`: the server).
    pub fn now(pid: Option<u32>) -> CpuMark {
        CpuMark {
            at: Instant::now(),
            tool: self_cpu_s(),
            server: pid.and_then(|p| cpu_seconds(&format!("/proc/{p}/stat"))),
            machine: machine_busy_s(),
        }
    }

    /// The window from `self` to `later`.
    pub fn until(&self, later: &CpuMark) -> CpuWindow {
        let d = |a: Option<f64>, b: Option<f64>| Some(b? - a?);
        CpuWindow {
            wall_s: later.at.duration_since(self.at).as_secs_f64(),
            tool_s: d(self.tool, later.tool),
            server_s: d(self.server, later.server),
            machine_s: d(self.machine, later.machine),
        }
    }
}

impl CpuWindow {
    /// As JSON, with each CPU time also as a share of one CPU over the window
    /// and `other_s`: what the rest of the machine used meanwhile.
    pub fn to_json(self) -> serde_json::Value {
        let util = |x: Option<f64>| x.map(|x| x / self.wall_s.max(1e-9));
        let other = match (self.machine_s, self.tool_s, self.server_s) {
            (Some(m), Some(t), Some(s)) => Some((m - t - s).max(0.0)),
            _ => None,
        };
        serde_json::json!({
            "wall_s": self.wall_s,
            "tool_cpu_s": self.tool_s, "tool_util": util(self.tool_s),
            "server_cpu_s": self.server_s, "server_util": util(self.server_s),
            "machine_busy_s": self.machine_s, "other_cpu_s": other, "other_util": util(other),
        })
    }
}
