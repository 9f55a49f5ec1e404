//! Options and steps shared by the echo and fanout modes: connection setup with bounded
//! concurrency, the start barrier, and the report header.

use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{watch, Semaphore};

use crate::conn::{self, Conn, SetupError, Target};
use crate::json::J;
use crate::proto::Protocol;
use crate::{progress, Window};

#[derive(Debug, Clone)]
pub struct Common {
    pub url: String,
    pub protocol: Protocol,
    /// Local source addresses, used round-robin (empty: let the kernel choose).
    pub sources: Vec<IpAddr>,
    /// Connections being set up at the same time.
    pub connect_concurrency: usize,
    /// Time allowed for one connection's connect + handshake + protocol setup.
    pub setup_timeout_s: f64,
    /// Runtime worker threads (1: current-thread runtime). Only reported here.
    pub threads: usize,
    /// No progress lines on stderr.
    pub quiet: bool,
    /// The server's pid: its CPU time over the measured window is reported (`server_cpu`),
    /// and its memory in `connections` mode.
    pub server_pid: Option<u32>,
}

impl Common {
    pub fn new(url: &str, protocol: Protocol) -> Common {
        Common { url: url.to_string(), protocol, sources: Vec::new(), connect_concurrency: 64, setup_timeout_s: 30.0, threads: 1, quiet: false, server_pid: None }
    }

    pub fn source(&self, i: usize) -> Option<IpAddr> {
        if self.sources.is_empty() {
            None
        } else {
            Some(self.sources[i % self.sources.len()])
        }
    }

    pub fn say(&self, line: impl std::fmt::Display) {
        if !self.quiet {
            progress(line);
        }
    }

    /// Fields every report starts with.
    pub fn report_head(&self, mode: &str) -> J {
        J::obj()
            .set("mode", mode)
            .set("ok", true)
            .set("reasons", J::Arr(vec![]))
            .set("url", self.url.as_str())
            .set("protocol", self.protocol.name())
            .set("threads", self.threads)
    }
}

/// Counts of connections that finished setup, and the start signal.
pub struct Barrier {
    pub ready: AtomicUsize,
    pub failed: AtomicUsize,
    pub start_tx: watch::Sender<Option<Window>>,
    pub sem: Semaphore,
}

impl Barrier {
    pub fn new(concurrency: usize) -> Arc<Barrier> {
        Arc::new(Barrier { ready: AtomicUsize::new(0), failed: AtomicUsize::new(0), start_tx: watch::channel(None).0, sem: Semaphore::new(concurrency.max(1)) })
    }

    /// Open connection `i` with at most `connect_concurrency` setups in flight; `extra` runs
    /// after the handshake (subscribe, join) under the same permit and deadline.
    pub async fn open<F, Fut>(&self, common: &Common, target: &Target, i: usize, read_chunk: usize, extra: F) -> Result<Conn, SetupError>
    where
        F: FnOnce(Conn, Instant) -> Fut,
        Fut: std::future::Future<Output = Result<Conn, SetupError>>,
    {
        let permit = self.sem.acquire().await.map_err(|_| ("setup", "closed".to_string()))?;
        let deadline = Instant::now() + Duration::from_secs_f64(common.setup_timeout_s);
        let r = match conn::open(target, common.protocol, common.source(i), read_chunk, i as u64, deadline).await {
            Ok(c) => extra(c, deadline).await,
            Err(e) => Err(e),
        };
        drop(permit);
        match &r {
            Ok(_) => self.ready.fetch_add(1, Ordering::Relaxed),
            Err(_) => self.failed.fetch_add(1, Ordering::Relaxed),
        };
        r
    }

    /// Wait for the start window.
    pub async fn started(&self) -> Option<Window> {
        let mut rx = self.start_tx.subscribe();
        let w = rx.wait_for(|w| w.is_some()).await.ok()?;
        *w
    }

    /// Wait until every connection is set up or failed, printing progress.
    pub async fn wait_setup(&self, common: &Common, total: usize) -> Duration {
        let t0 = Instant::now();
        let mut last = Instant::now();
        loop {
            let (r, f) = (self.ready.load(Ordering::Relaxed), self.failed.load(Ordering::Relaxed));
            if r + f >= total {
                common.say(format!("setup done: {r} connected, {f} failed in {:.2}s", t0.elapsed().as_secs_f64()));
                return t0.elapsed();
            }
            if last.elapsed() >= Duration::from_secs(1) {
                last = Instant::now();
                common.say(format!("setup: {r}/{total} connected, {f} failed"));
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

/// Mark the report as failed, with a reason.
pub fn fail(r: &mut J, reason: String) {
    r.insert("ok", false);
    if let J::Obj(m) = r {
        if let Some((_, J::Arr(a))) = m.iter_mut().find(|(k, _)| k == "reasons") {
            a.push(J::Str(reason));
        }
    }
}

/// The controller's clock: takes CPU readings at the edges of the measured window and says
/// when a progress line is due.
pub struct Clock {
    pub w: Window,
    measure_start: Instant,
    measure_end: Instant,
    pub cpu_start: Option<crate::CpuMark>,
    pub cpu_end: Option<crate::CpuMark>,
    server_pid: Option<u32>,
    next_tick: Instant,
}

impl Clock {
    pub fn new(w: Window, server_pid: Option<u32>) -> Clock {
        Clock {
            w,
            server_pid,
            measure_start: crate::instant_at(w.measure_start),
            measure_end: crate::instant_at(w.measure_end),
            cpu_start: None,
            cpu_end: None,
            next_tick: Instant::now() + Duration::from_secs(1),
        }
    }

    /// True once the measured window is over.
    pub fn window_over(&self) -> bool {
        self.cpu_end.is_some()
    }

    /// Seconds since the load started.
    pub fn elapsed_s(&self) -> f64 {
        crate::now_ns().saturating_sub(self.w.start) as f64 / 1e9
    }

    /// Sleep until the next window edge, progress tick, or `poll` (after the window); record
    /// CPU readings at the edges. Returns true when a progress line is due.
    pub async fn step(&mut self, poll: Duration) -> bool {
        let now = Instant::now();
        let mut wake = self.next_tick;
        if self.cpu_start.is_none() {
            wake = wake.min(self.measure_start);
        } else if self.cpu_end.is_none() {
            wake = wake.min(self.measure_end);
        } else {
            wake = wake.min(now + poll);
        }
        if wake > now {
            tokio::time::sleep_until(wake.into()).await;
        }
        let now = Instant::now();
        if self.cpu_start.is_none() && now >= self.measure_start {
            self.cpu_start = Some(crate::CpuMark::now_with(self.server_pid));
        }
        if self.cpu_end.is_none() && now >= self.measure_end {
            self.cpu_end = Some(crate::CpuMark::now_with(self.server_pid));
        }
        if now >= self.next_tick {
            self.next_tick = now + Duration::from_secs(1);
            return true;
        }
        false
    }

    /// The server's CPU over the measured window (null without `--server-pid`).
    pub fn server_cpu_report(&self) -> J {
        let Some(start) = self.cpu_start else {
            return J::Null;
        };
        let end = self.cpu_end.unwrap_or_else(|| crate::CpuMark::now_with(self.server_pid));
        start.server_report(&end)
    }

    /// CPU report for the measured window (or as much of it as ran).
    pub fn cpu_report(&self) -> J {
        let Some(start) = self.cpu_start else {
            return J::obj().set("busy", J::Null);
        };
        let end = self.cpu_end.unwrap_or_else(|| crate::CpuMark::now_with(self.server_pid));
        start.report(&end)
    }
}
