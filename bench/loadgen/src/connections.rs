//! `loadgen connections`: open many idle WebSocket connections, spread over local source
//! addresses, and report the connect rate and (with a server PID) the server's memory per
//! connection. The idle connections keep answering pings while they are held.

use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::watch;

use crate::common::{fail, Common};
use crate::conn::{self, Conn, Target, Wake};
use crate::frame::{Event, OP_PONG, OP_TEXT};
use crate::json::J;
use crate::proto::{self, Eio, Protocol};
use crate::{latency_report, rss_kb, CpuMark, Errors, LatencyShards};

#[derive(Debug, Clone)]
pub struct ConnectionsConfig {
    pub common: Common,
    pub count: usize,
    /// Seconds to keep the connections open once all are set up (RSS is read after it).
    pub hold_s: f64,
}

impl ConnectionsConfig {
    pub fn new(common: Common) -> ConnectionsConfig {
        ConnectionsConfig { common, count: 1000, hold_s: 1.0 }
    }
}

#[derive(Default)]
struct Shared {
    established: AtomicUsize,
    failed: AtomicUsize,
    alive: AtomicUsize,
    closed_by_server: AtomicU64,
    errors: Mutex<Errors>,
}

/// Keep one idle connection open: answer pings, notice closes.
async fn hold(mut c: Conn, proto: Protocol, mut stop: watch::Receiver<bool>, shared: Arc<Shared>) {
    let mut closed: Option<String> = None;
    'run: loop {
        if let Err(e) = c.io.try_flush() {
            closed = Some(format!("write: {e}"));
            break;
        }
        match c.io.wait(c.io.pending_out() > 0, None, Some(&mut stop)).await {
            Ok(Wake::Stop) => break,
            Ok(_) => {}
            Err(e) => {
                closed = Some(e.to_string());
                break;
            }
        }
        if let Err(e) = c.try_fill() {
            closed = Some(e.to_string());
            break;
        }
        loop {
            let ev = match c.dec.next_event() {
                Ok(Some(ev)) => ev,
                Ok(None) => break,
                Err(e) => {
                    closed = Some(format!("protocol: {e}"));
                    break 'run;
                }
            };
            match ev {
                Event::Ping(p) => c.io.send(OP_PONG, p),
                Event::Close(code, r) => {
                    closed = Some(format!("server closed: {:?} {}", code, String::from_utf8_lossy(r)));
                    break 'run;
                }
                Event::Text(m) if proto == Protocol::SocketIo => {
                    if let Ok(Eio::Ping(p)) = proto::parse_eio(m) {
                        let mut v = b"3".to_vec();
                        v.extend_from_slice(p);
                        c.io.send(OP_TEXT, &v);
                    }
                }
                _ => {}
            }
        }
    }
    if let Some(why) = closed {
        if !*stop.borrow() {
            shared.closed_by_server.fetch_add(1, Ordering::Relaxed);
            shared.errors.lock().unwrap_or_else(|e| e.into_inner()).add("closed", why);
        }
    } else {
        c.io.send_close(1000, "done");
        let _ = c.io.try_flush();
    }
    shared.alive.fetch_sub(1, Ordering::Relaxed);
}

pub async fn run(cfg: ConnectionsConfig) -> J {
    let mut report = cfg.common.report_head("connections");
    let (soft, hard) = crate::raise_nofile_limit(cfg.count as u64 + 1024);
    report.insert("count", cfg.count);
    report.insert("sources", J::Arr(cfg.common.sources.iter().map(|s| J::Str(s.to_string())).collect()));
    report.insert("hold_s", J::num(cfg.hold_s, 3));
    report.insert("nofile_limit", J::obj().set("soft", soft).set("hard", hard));
    let target = match Target::parse(&cfg.common.url) {
        Ok(t) => Arc::new(t),
        Err(e) => {
            fail(&mut report, e);
            return report;
        }
    };
    if (cfg.count as u64) + 64 > soft {
        cfg.common.say(format!("warning: {} connections but the open-file limit is {soft}", cfg.count));
    }
    let per_source = cfg.count.div_ceil(cfg.common.sources.len().max(1));
    if per_source > 28_000 {
        cfg.common.say(format!(
            "warning: {per_source} connections per source address to one server port may exhaust the ephemeral ports (see --sources)"
        ));
    }
    let pid = cfg.common.server_pid.map(|p| p.to_string());
    let rss_before = pid.as_deref().and_then(rss_kb);
    let shared = Arc::new(Shared::default());
    let (stop_tx, stop_rx) = watch::channel(false);
    let next = Arc::new(AtomicUsize::new(0));
    let shards = LatencyShards::new(1);
    let cpu0 = CpuMark::now_with(cfg.common.server_pid);
    let t0 = Instant::now();
    let workers: Vec<_> = (0..cfg.common.connect_concurrency.max(1).min(cfg.count.max(1)))
        .map(|w| {
            let (cfg, target, shared, next, stop_rx) = (cfg.clone(), target.clone(), shared.clone(), next.clone(), stop_rx.clone());
            let mut lat = shards.sink(w);
            tokio::spawn(async move {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= cfg.count {
                        break;
                    }
                    let source: Option<IpAddr> = cfg.common.source(i);
                    let start = Instant::now();
                    let deadline = start + Duration::from_secs_f64(cfg.common.setup_timeout_s);
                    match conn::open(&target, cfg.common.protocol, source, 256, i as u64, deadline).await {
                        Ok(c) => {
                            lat.push(start.elapsed().as_nanos() as u64);
                            shared.established.fetch_add(1, Ordering::Relaxed);
                            shared.alive.fetch_add(1, Ordering::Relaxed);
                            tokio::spawn(hold(c, cfg.common.protocol, stop_rx.clone(), shared.clone()));
                        }
                        Err((kind, msg)) => {
                            shared.failed.fetch_add(1, Ordering::Relaxed);
                            shared.errors.lock().unwrap_or_else(|e| e.into_inner()).add(kind, msg);
                        }
                    }
                }
                lat.flush();
            })
        })
        .collect();
    let mut last = (Instant::now(), 0usize);
    while !workers.iter().all(|w| w.is_finished()) {
        tokio::time::sleep(Duration::from_millis(20)).await;
        if last.0.elapsed() >= Duration::from_secs(1) {
            let e = shared.established.load(Ordering::Relaxed);
            cfg.common.say(format!(
                "connections: {e}/{} open ({:.0}/s), {} failed",
                cfg.count,
                (e - last.1) as f64 / last.0.elapsed().as_secs_f64(),
                shared.failed.load(Ordering::Relaxed)
            ));
            last = (Instant::now(), e);
        }
    }
    for w in workers {
        let _ = w.await;
    }
    let connect_s = t0.elapsed().as_secs_f64();
    let cpu1 = CpuMark::now_with(cfg.common.server_pid);
    let cpu = cpu0.report(&cpu1);
    let server_cpu = cpu0.server_report(&cpu1);
    let established = shared.established.load(Ordering::Relaxed);
    let failed = shared.failed.load(Ordering::Relaxed);
    cfg.common.say(format!("connect phase: {established} open, {failed} failed in {connect_s:.2}s; holding {}s", cfg.hold_s));
    tokio::time::sleep(Duration::from_secs_f64(cfg.hold_s.max(0.0))).await;
    let still_open = shared.alive.load(Ordering::Relaxed);
    let rss_after = pid.as_deref().and_then(rss_kb);
    let own_rss = rss_kb("self");
    stop_tx.send_replace(true);
    let close_deadline = Instant::now() + Duration::from_secs(10);
    while shared.alive.load(Ordering::Relaxed) > 0 && Instant::now() < close_deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }

    report.insert("connected", established);
    report.insert("failed", failed);
    report.insert("connect_s", J::num(connect_s, 3));
    report.insert("connect_rate", J::num(established as f64 / connect_s, 1));
    report.insert("connect_latency_us", latency_report(&shards.merged()));
    report.insert("still_open", still_open);
    report.insert("closed_by_server", shared.closed_by_server.load(Ordering::Relaxed));
    report.insert("server_pid", cfg.common.server_pid.map(|p| p as u64));
    report.insert("server_rss_before_kb", rss_before);
    report.insert("server_rss_after_kb", rss_after);
    let per_conn = match (rss_before, rss_after) {
        (Some(b), Some(a)) if established > 0 => J::num((a as f64 - b as f64) * 1024.0 / established as f64, 1),
        _ => J::Null,
    };
    report.insert("server_rss_per_conn_bytes", per_conn);
    report.insert("loadgen_rss_kb", own_rss);
    let errors = std::mem::take(&mut *shared.errors.lock().unwrap_or_else(|e| e.into_inner()));
    errors.report_into(&mut report);
    report.insert("cpu_busy", cpu.get("busy").cloned().unwrap_or(J::Null));
    report.insert("cpu", cpu);
    report.insert("server_cpu", server_cpu);
    if cfg.common.server_pid.is_some() && (rss_before.is_none() || rss_after.is_none()) {
        fail(&mut report, format!("could not read VmRSS of server pid {}", cfg.common.server_pid.unwrap_or(0)));
    }
    if failed > 0 {
        fail(&mut report, format!("{failed} of {} connections failed", cfg.count));
    }
    if still_open < established {
        fail(&mut report, format!("{} connections were closed by the server while held", established - still_open));
    }
    report
}
