//! Tachyon's native WebSocket load generator: client framing, the upgrade handshake, the
//! raw / Tachyon / Socket.IO protocols, and the load modes (echo, fanout,
//! connections, game). `main.rs` is only the command line.

pub mod common;
pub mod conn;
pub mod connections;
pub mod echo;
pub mod fanout;
pub mod frame;
pub mod game;
mod game_loop;
mod game_player;
pub mod handshake;
pub mod http;
pub mod json;
pub mod outbuf;
pub mod proto;

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::pin;
use std::sync::{Arc, Mutex, OnceLock};
use std::task::Poll;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use json::J;

// ---------------------------------------------------------------- clock

static ORIGIN: OnceLock<Instant> = OnceLock::new();

/// The shared monotonic origin of every timestamp the loadgen sends.
pub fn origin() -> Instant {
    *ORIGIN.get_or_init(Instant::now)
}

/// Nanoseconds since [`origin`].
#[inline]
pub fn now_ns() -> u64 {
    origin().elapsed().as_nanos() as u64
}

/// The `Instant` of a timestamp in nanoseconds since the origin.
pub fn instant_at(ns: u64) -> Instant {
    origin() + Duration::from_nanos(ns)
}

pub fn secs_to_ns(s: f64) -> u64 {
    (s.max(0.0) * 1e9).round() as u64
}

/// The phases of a run, in nanoseconds since the origin: load starts at `start`, the
/// measured window is `[measure_start, measure_end)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub start: u64,
    pub measure_start: u64,
    pub measure_end: u64,
}

impl Window {
    pub fn new(start: u64, warmup_s: f64, duration_s: f64) -> Window {
        let measure_start = start + secs_to_ns(warmup_s);
        Window { start, measure_start, measure_end: measure_start + secs_to_ns(duration_s) }
    }

    #[inline]
    pub fn contains(&self, t: u64) -> bool {
        t >= self.measure_start && t < self.measure_end
    }

    pub fn measured_s(&self) -> f64 {
        (self.measure_end - self.measure_start) as f64 / 1e9
    }
}

// ---------------------------------------------------------------- random

/// xorshift64*: masking keys and handshake keys. Not cryptographic, and it does not need
/// to be: a load generator only has to vary its masks.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        let mut r = Rng(seed ^ 0x9E37_79B9_7F4A_7C15);
        if r.0 == 0 {
            r.0 = 1;
        }
        r.next_u64();
        r
    }

    /// A seed that differs between calls and runs.
    pub fn seeded(salt: u64) -> Rng {
        let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1);
        Rng::new(t ^ salt.wrapping_mul(0xA24B_AED4_963E_E407) ^ (std::process::id() as u64) << 32)
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    #[inline]
    pub fn mask(&mut self) -> [u8; 4] {
        (self.next_u64() as u32).to_ne_bytes()
    }
}

// ---------------------------------------------------------------- process helpers

/// User and system CPU time of this process, in seconds (all threads).
pub fn cpu_times() -> (f64, f64) {
    // SAFETY: getrusage only writes the struct we pass.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    if rc != 0 {
        return (0.0, 0.0);
    }
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (tv(ru.ru_utime), tv(ru.ru_stime))
}

/// utime + stime of another process (all its threads), in seconds, from /proc/PID/stat.
pub fn proc_cpu_s(pid: u32) -> Option<f64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name (which may contain spaces): state is field 3.
    let rest = &s[s.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split(' ').collect();
    let utime: u64 = f.get(14 - 3)?.parse().ok()?;
    let stime: u64 = f.get(15 - 3)?.parse().ok()?;
    // SAFETY: sysconf has no preconditions.
    let tck = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    let tck = if tck > 0 { tck as f64 } else { 100.0 };
    Some((utime + stime) as f64 / tck)
}

/// A CPU and wall clock reading, to report the loadgen's own load over a window (and the
/// server's, when its pid is known).
#[derive(Debug, Clone, Copy)]
pub struct CpuMark {
    pub wall: Instant,
    pub user: f64,
    pub sys: f64,
    /// The server's CPU seconds (utime + stime), when a server pid was given and readable.
    pub server: Option<f64>,
}

impl CpuMark {
    pub fn now() -> CpuMark {
        Self::now_with(None)
    }

    pub fn now_with(server_pid: Option<u32>) -> CpuMark {
        let server = server_pid.and_then(proc_cpu_s);
        let (user, sys) = cpu_times();
        CpuMark { wall: Instant::now(), user, sys, server }
    }

    /// `server_cpu` report fields: the server's CPU seconds and busy fraction over the
    /// interval from `self` to `end` (null without a server pid).
    pub fn server_report(&self, end: &CpuMark) -> J {
        let wall = end.wall.duration_since(self.wall).as_secs_f64();
        match (self.server, end.server) {
            (Some(a), Some(b)) => J::obj()
                .set("cpu_s", J::num(b - a, 3))
                .set("busy", if wall >= 0.001 { J::num((b - a) / wall, 3) } else { J::Null })
                .set("wall_s", J::num(wall, 3)),
            _ => J::Null,
        }
    }

    /// Report fields for the interval from `self` to `end`.
    pub fn report(&self, end: &CpuMark) -> J {
        let wall = end.wall.duration_since(self.wall).as_secs_f64();
        let user = end.user - self.user;
        let sys = end.sys - self.sys;
        J::obj()
            .set("busy", if wall >= 0.001 { J::num((user + sys) / wall, 3) } else { J::Null })
            .set("user_s", J::num(user, 3))
            .set("sys_s", J::num(sys, 3))
            .set("wall_s", J::num(wall, 3))
    }
}

/// Raise RLIMIT_NOFILE: the soft limit to the hard limit, and both to `want` when that is
/// higher (which works for root, up to fs.nr_open). Returns the (soft, hard) limits in force.
pub fn raise_nofile_limit(want: u64) -> (u64, u64) {
    // SAFETY: plain syscalls on a local struct.
    unsafe {
        let mut rl: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut rl) != 0 {
            return (0, 0);
        }
        if (want as libc::rlim_t) > rl.rlim_max {
            let up = libc::rlimit { rlim_cur: want as libc::rlim_t, rlim_max: want as libc::rlim_t };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &up) == 0 {
                rl = up;
            }
        }
        if rl.rlim_cur < rl.rlim_max {
            let all = libc::rlimit { rlim_cur: rl.rlim_max, rlim_max: rl.rlim_max };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &all) == 0 {
                rl.rlim_cur = rl.rlim_max;
            }
        }
        (rl.rlim_cur as u64, rl.rlim_max as u64)
    }
}

/// VmRSS of a process in kB, from /proc/PID/status ("self" for this process).
pub fn rss_kb(pid: &str) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = s.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

// ---------------------------------------------------------------- futures

pub enum Either<A, B> {
    Left(A),
    Right(B),
}

/// Wait for whichever future finishes first (`a` is polled first). A small stand-in for
/// `tokio::select!`, which would pull in the proc-macro crates.
pub async fn race<A: Future, B: Future>(a: A, b: B) -> Either<A::Output, B::Output> {
    let mut a = pin!(a);
    let mut b = pin!(b);
    std::future::poll_fn(|cx| {
        if let Poll::Ready(x) = a.as_mut().poll(cx) {
            return Poll::Ready(Either::Left(x));
        }
        if let Poll::Ready(y) = b.as_mut().poll(cx) {
            return Poll::Ready(Either::Right(y));
        }
        Poll::Pending
    })
    .await
}

// ---------------------------------------------------------------- statistics

/// Errors by kind, with the first few messages kept as samples.
#[derive(Debug, Default, Clone)]
pub struct Errors {
    pub counts: BTreeMap<&'static str, u64>,
    pub samples: Vec<String>,
}

const MAX_SAMPLES: usize = 8;

impl Errors {
    pub fn add(&mut self, kind: &'static str, msg: impl std::fmt::Display) {
        *self.counts.entry(kind).or_default() += 1;
        if self.samples.len() < MAX_SAMPLES {
            self.samples.push(format!("{kind}: {msg}"));
        }
    }

    pub fn total(&self) -> u64 {
        self.counts.values().sum()
    }

    pub fn merge(&mut self, o: Errors) {
        for (k, v) in o.counts {
            *self.counts.entry(k).or_default() += v;
        }
        for s in o.samples {
            if self.samples.len() < MAX_SAMPLES {
                self.samples.push(s);
            }
        }
    }

    /// `errors`, `error_kinds` and `error_samples` report fields.
    pub fn report_into(&self, r: &mut J) {
        r.insert("errors", self.total());
        let mut kinds = J::obj();
        for (k, v) in &self.counts {
            kinds.insert(k, *v);
        }
        r.insert("error_kinds", kinds);
        r.insert("error_samples", J::Arr(self.samples.iter().map(|s| J::Str(s.clone())).collect()));
    }
}

pub type Hist = Histogram<u64>;

/// Histograms of latencies in nanoseconds (1 ns .. 1 hour, 3 significant digits), sharded so
/// that tasks on different runtime threads rarely share a lock.
#[derive(Clone)]
pub struct LatencyShards(Arc<Vec<Mutex<Hist>>>);

impl LatencyShards {
    pub fn new(shards: usize) -> LatencyShards {
        let h = || Mutex::new(Hist::new_with_bounds(1, 3_600_000_000_000, 3).expect("histogram bounds"));
        LatencyShards(Arc::new((0..shards.max(1)).map(|_| h()).collect()))
    }

    /// A per-task buffer that records into shard `i % shards`.
    pub fn sink(&self, i: usize) -> LatencySink {
        LatencySink { buf: Vec::with_capacity(256), shards: self.clone(), shard: i % self.0.len() }
    }

    pub fn merged(&self) -> Hist {
        let mut all = Hist::new_with_bounds(1, 3_600_000_000_000, 3).expect("histogram bounds");
        for s in self.0.iter() {
            let h = s.lock().unwrap_or_else(|e| e.into_inner());
            all.add(&*h).expect("same bounds");
        }
        all
    }
}

/// Buffers latency samples locally and records them in batches (one lock per batch).
pub struct LatencySink {
    buf: Vec<u64>,
    shards: LatencyShards,
    shard: usize,
}

impl LatencySink {
    #[inline]
    pub fn push(&mut self, ns: u64) {
        self.buf.push(ns);
        if self.buf.len() >= 256 {
            self.flush();
        }
    }

    pub fn flush(&mut self) {
        if self.buf.is_empty() {
            return;
        }
        let mut h = self.shards.0[self.shard].lock().unwrap_or_else(|e| e.into_inner());
        for v in self.buf.drain(..) {
            h.saturating_record(v.max(1));
        }
    }
}

impl Drop for LatencySink {
    fn drop(&mut self) {
        self.flush();
    }
}

/// Latency percentiles in microseconds.
pub fn latency_report(h: &Hist) -> J {
    if h.is_empty() {
        return J::obj().set("samples", 0u64).set("p50", J::Null).set("p90", J::Null).set("p99", J::Null).set("p999", J::Null).set("max", J::Null).set("mean", J::Null);
    }
    let us = |ns: u64| J::num(ns as f64 / 1000.0, 1);
    J::obj()
        .set("samples", h.len())
        .set("min", us(h.min()))
        .set("p50", us(h.value_at_quantile(0.50)))
        .set("p90", us(h.value_at_quantile(0.90)))
        .set("p99", us(h.value_at_quantile(0.99)))
        .set("p999", us(h.value_at_quantile(0.999)))
        .set("max", us(h.max()))
        .set("mean", J::num(h.mean() / 1000.0, 1))
}

/// Print a progress line on stderr.
pub fn progress(line: impl std::fmt::Display) {
    eprintln!("[loadgen] {line}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_and_rng() {
        let w = Window::new(1_000, 0.5, 2.0);
        assert_eq!(w.measure_start, 500_001_000);
        assert!(w.contains(500_001_000) && !w.contains(2_500_001_000) && !w.contains(999));
        let mut a = Rng::new(5);
        let mut b = Rng::new(5);
        assert_eq!(a.next_u64(), b.next_u64());
        assert_ne!(a.next_u64(), a.next_u64());
    }

    #[test]
    fn latency_shards_merge() {
        let shards = LatencyShards::new(2);
        {
            let mut s0 = shards.sink(0);
            let mut s1 = shards.sink(1);
            for i in 1..=1000u64 {
                s0.push(i * 1000);
                s1.push(i * 1000);
            }
        }
        let h = shards.merged();
        assert_eq!(h.len(), 2000);
        let r = latency_report(&h);
        let p50 = r.get("p50").unwrap().as_f64().unwrap();
        assert!((499.0..=501.0).contains(&p50), "{p50}");
    }

    #[test]
    fn errors_merge() {
        let mut e = Errors::default();
        e.add("connect", "refused");
        let mut f = Errors::default();
        f.add("connect", "refused");
        f.add("protocol", "bad frame");
        e.merge(f);
        assert_eq!(e.total(), 3);
        let mut r = J::obj();
        e.report_into(&mut r);
        assert_eq!(r.get("errors"), Some(&J::Int(3)));
    }
}
