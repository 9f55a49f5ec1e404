//! `loadgen echo`: N connections each keep W messages in flight (send, wait for the echo,
//! send another). Reports echoes per second over the measured window and round-trip
//! latency measured from the timestamp carried in each message.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::{fail, Barrier, Clock, Common};
use crate::conn::{Conn, Target, Wake};
use crate::frame::{Event, OP_BINARY, OP_PONG, OP_TEXT};
use crate::json::J;
use crate::proto::{self, Eio, Payload, Protocol};
use crate::{instant_at, latency_report, now_ns, Errors, LatencyShards, LatencySink, Window};

#[derive(Debug, Clone)]
pub struct EchoConfig {
    pub common: Common,
    pub connections: usize,
    pub inflight: usize,
    pub size: usize,
    pub binary: bool,
    pub duration_s: f64,
    pub warmup_s: f64,
    /// After the window: how long to wait for the echoes still in flight.
    pub drain_s: f64,
}

impl EchoConfig {
    pub fn new(common: Common) -> EchoConfig {
        EchoConfig { common, connections: 10, inflight: 1, size: 64, binary: false, duration_s: 5.0, warmup_s: 1.0, drain_s: 2.0 }
    }

    /// Bytes of each message's WebSocket payload.
    pub fn message_bytes(&self, sample: &Payload) -> usize {
        match (self.common.protocol, self.binary) {
            (Protocol::SocketIo, _) => {
                let mut v = Vec::new();
                proto::write_sio_event(&mut v, "echo", sample, self.size);
                v.len()
            }
            (_, true) => self.size.max(proto::RAW_BIN_ECHO_MIN),
            (_, false) => self.size.max(proto::RAW_TEXT_ECHO_MIN),
        }
    }
}

#[derive(Default)]
struct Counters {
    rx_window: AtomicU64,
    rx_total: AtomicU64,
    errors: AtomicU64,
}

#[derive(Default)]
struct TaskOut {
    errors: Errors,
    sent: u64,
    received: u64,
    received_window: u64,
    unanswered: u64,
    out_of_order: u64,
}

/// What one received message meant.
enum Rx {
    Echo(u64),
    Ignore,
}

/// Queue one echo request stamped now.
fn send_one(cfg: &EchoConfig, c: &mut Conn, id: u32, seq: u64) {
    let t = now_ns();
    match (cfg.common.protocol, cfg.binary) {
        (Protocol::SocketIo, _) => {
            let p = Payload { s: id, n: seq, t };
            c.io.send_with(OP_TEXT, |b| proto::write_sio_event(b, "echo", &p, cfg.size));
        }
        (_, true) => c.io.send_with(OP_BINARY, |b| proto::write_raw_binary_echo(b, t, cfg.size)),
        (_, false) => c.io.send_with(OP_TEXT, |b| proto::write_raw_text_echo(b, t, cfg.size)),
    }
}

/// Check one received message and return its timestamp.
fn parse_echo(cfg: &EchoConfig, ev: &Event<'_>, id: u32, pong: &mut Option<Vec<u8>>, scratch: &mut Vec<u8>) -> Result<Rx, String> {
    match (cfg.common.protocol, cfg.binary, ev) {
        (Protocol::SocketIo, _, Event::Text(m)) => match proto::parse_eio(m)? {
            Eio::Ping(p) => {
                let mut v = b"3".to_vec();
                v.extend_from_slice(p);
                *pong = Some(v);
                Ok(Rx::Ignore)
            }
            Eio::Message(_) => {
                let Some((name, arg)) = proto::sio_event_payload(m)? else { return Ok(Rx::Ignore) };
                if name != "echo" {
                    return Ok(Rx::Ignore);
                }
                let arg = arg.ok_or("echo event without an argument")?;
                let p = proto::parse_json_payload(arg).ok_or("echo argument is not a payload object")?;
                scratch.clear();
                proto::write_json_payload(scratch, &p, cfg.size);
                if p.s != id || arg != &scratch[..] {
                    return Err(format!("echo differs from what was sent: {}", String::from_utf8_lossy(&arg[..arg.len().min(80)])));
                }
                Ok(Rx::Echo(p.t))
            }
            Eio::Close => Err("Engine.IO close packet".into()),
            _ => Ok(Rx::Ignore),
        },
        (Protocol::SocketIo, _, Event::Binary(_)) => Err("unexpected binary frame".into()),
        (_, true, Event::Binary(m)) => proto::parse_raw_binary_echo(m, cfg.size).map(Rx::Echo).ok_or_else(|| format!("binary echo of {} bytes differs from what was sent", m.len())),
        (_, false, Event::Text(m)) => proto::parse_raw_text_echo(m, cfg.size).map(Rx::Echo).ok_or_else(|| format!("text echo differs from what was sent: {:?}", String::from_utf8_lossy(&m[..m.len().min(40)]))),
        (_, _, Event::Text(_)) => Err("text frame where a binary echo was expected".into()),
        (_, _, Event::Binary(_)) => Err("binary frame where a text echo was expected".into()),
        _ => Ok(Rx::Ignore),
    }
}

async fn conn_task(cfg: Arc<EchoConfig>, target: Arc<Target>, barrier: Arc<Barrier>, ctr: Arc<Counters>, mut lat: LatencySink, id: usize) -> TaskOut {
    let mut out = TaskOut::default();
    let mut c = match barrier.open(&cfg.common, &target, id, 64 * 1024, |c, _| async { Ok(c) }).await {
        Ok(c) => c,
        Err((kind, msg)) => {
            out.errors.add(kind, msg);
            ctr.errors.fetch_add(1, Ordering::Relaxed);
            return out;
        }
    };
    let Some(w) = barrier.started().await else { return out };
    let hard_end = instant_at(w.measure_end + crate::secs_to_ns(cfg.drain_s));
    let id32 = id as u32;
    let mut seq = 0u64;
    let mut outstanding = 0u64;
    let mut last_t = 0u64;
    let mut pong: Option<Vec<u8>> = None;
    let mut scratch = Vec::new();
    for _ in 0..cfg.inflight {
        seq += 1;
        send_one(&cfg, &mut c, id32, seq);
        outstanding += 1;
    }
    out.sent = seq;
    let mut err: Option<(&'static str, String)> = None;
    let mut reads = 0u64;
    'run: loop {
        if let Err(e) = c.io.try_flush() {
            err = Some(("io", e.to_string()));
            break;
        }
        let now = now_ns();
        if now >= w.measure_end && outstanding == 0 {
            break;
        }
        match c.io.wait(c.io.pending_out() > 0, Some(hard_end), None).await {
            Ok(Wake::Ready(r)) if r.is_readable() || r.is_read_closed() => {}
            Ok(Wake::Ready(_)) => continue,
            Ok(Wake::Deadline) | Ok(Wake::Stop) => break,
            Err(e) => {
                err = Some(("io", e.to_string()));
                break;
            }
        }
        match c.try_fill() {
            Ok(0) => continue,
            Ok(_) => {
                // A busy socket stays readable: yield now and then so that one connection
                // cannot hold the thread (and delay every other one) for long.
                reads += 1;
                if reads.is_multiple_of(4) {
                    tokio::task::yield_now().await;
                }
            }
            Err(e) => {
                err = Some(("closed", e.to_string()));
                break;
            }
        }
        let (mut rx_w, mut rx_all) = (0u64, 0u64);
        loop {
            let ev = match c.dec.next_event() {
                Ok(Some(ev)) => ev,
                Ok(None) => break,
                Err(e) => {
                    err = Some(("protocol", e.to_string()));
                    break 'run;
                }
            };
            match ev {
                Event::Ping(p) => {
                    c.io.send(OP_PONG, p);
                    continue;
                }
                Event::Pong(_) => continue,
                Event::Close(code, reason) => {
                    err = Some(("closed", format!("server closed: {:?} {}", code, String::from_utf8_lossy(reason))));
                    break 'run;
                }
                _ => {}
            }
            match parse_echo(&cfg, &ev, id32, &mut pong, &mut scratch) {
                Ok(Rx::Echo(t)) => {
                    let now = now_ns();
                    outstanding = outstanding.saturating_sub(1);
                    rx_all += 1;
                    if t < last_t {
                        out.out_of_order += 1;
                    }
                    last_t = t;
                    if w.contains(now) {
                        rx_w += 1;
                        lat.push(now.saturating_sub(t));
                    }
                    if now < w.measure_end {
                        seq += 1;
                        send_one(&cfg, &mut c, id32, seq);
                        outstanding += 1;
                    }
                }
                Ok(Rx::Ignore) => {}
                Err(e) => {
                    out.errors.add("payload", e);
                    ctr.errors.fetch_add(1, Ordering::Relaxed);
                    outstanding = outstanding.saturating_sub(1);
                }
            }
            if let Some(p) = pong.take() {
                c.io.send(OP_TEXT, &p);
            }
        }
        out.received += rx_all;
        out.received_window += rx_w;
        ctr.rx_total.fetch_add(rx_all, Ordering::Relaxed);
        ctr.rx_window.fetch_add(rx_w, Ordering::Relaxed);
    }
    out.sent = seq;
    if let Some((kind, msg)) = err {
        out.errors.add(kind, msg);
        ctr.errors.fetch_add(1, Ordering::Relaxed);
    }
    out.unanswered = outstanding;
    c.io.send_close(1000, "done");
    let _ = c.io.try_flush();
    lat.flush();
    out
}

/// Run the echo load and return the report.
pub async fn run(cfg: EchoConfig) -> J {
    let mut report = cfg.common.report_head("echo");
    let sample = Payload { s: 0, n: 1, t: now_ns() };
    report.insert("connections", cfg.connections);
    report.insert("inflight", cfg.inflight);
    report.insert("size", cfg.size);
    report.insert("binary", cfg.binary);
    report.insert("message_bytes", cfg.message_bytes(&sample));
    report.insert("warmup_s", J::num(cfg.warmup_s, 3));
    report.insert("duration_s", J::num(cfg.duration_s, 3));
    if cfg.common.protocol == Protocol::SocketIo && cfg.binary {
        fail(&mut report, "--binary is not supported with --protocol socketio (binary events need attachments)".into());
        return report;
    }
    let target = match Target::parse(&cfg.common.url) {
        Ok(t) => Arc::new(t),
        Err(e) => {
            fail(&mut report, e);
            return report;
        }
    };
    let cfg = Arc::new(cfg);
    let barrier = Barrier::new(cfg.common.connect_concurrency);
    let ctr = Arc::new(Counters::default());
    let shards = LatencyShards::new(cfg.common.threads);
    let tasks: Vec<_> = (0..cfg.connections)
        .map(|i| tokio::spawn(conn_task(cfg.clone(), target.clone(), barrier.clone(), ctr.clone(), shards.sink(i), i)))
        .collect();
    let setup = barrier.wait_setup(&cfg.common, cfg.connections).await;
    let connected = barrier.ready.load(Ordering::Relaxed);
    report.insert("connected", connected);
    report.insert("setup_s", J::num(setup.as_secs_f64(), 3));

    let w = Window::new(now_ns(), cfg.warmup_s, cfg.duration_s);
    barrier.start_tx.send_replace(Some(w));
    let mut clock = Clock::new(w, cfg.common.server_pid);
    let mut last_rx = 0u64;
    let mut last_at = Instant::now();
    loop {
        if tasks.iter().all(|t| t.is_finished()) {
            break;
        }
        if clock.step(Duration::from_millis(5)).await {
            let now = Instant::now();
            let rx = ctr.rx_total.load(Ordering::Relaxed);
            let dt = now.duration_since(last_at).as_secs_f64();
            cfg.common.say(format!(
                "echo t={:.1}s echoes/s={:.0} errors={}",
                clock.elapsed_s(),
                (rx - last_rx) as f64 / dt,
                ctr.errors.load(Ordering::Relaxed)
            ));
            last_rx = rx;
            last_at = now;
        }
    }
    let mut errors = Errors::default();
    let mut total = TaskOut::default();
    for t in tasks {
        match t.await {
            Ok(o) => {
                total.sent += o.sent;
                total.received += o.received;
                total.received_window += o.received_window;
                total.unanswered += o.unanswered;
                total.out_of_order += o.out_of_order;
                errors.merge(o.errors);
            }
            Err(e) => errors.add("task", e),
        }
    }
    let measured = w.measured_s();
    report.insert("measured_s", J::num(measured, 3));
    report.insert("messages", total.received_window);
    report.insert("msgs_per_s", J::num(total.received_window as f64 / measured, 1));
    report.insert("latency_us", latency_report(&shards.merged()));
    report.insert("sent_total", total.sent);
    report.insert("received_total", total.received);
    report.insert("unanswered", total.unanswered);
    report.insert("out_of_order", total.out_of_order);
    errors.report_into(&mut report);
    let cpu = clock.cpu_report();
    report.insert("cpu_busy", cpu.get("busy").cloned().unwrap_or(J::Null));
    report.insert("cpu", cpu);
    report.insert("server_cpu", clock.server_cpu_report());
    if connected < cfg.connections {
        fail(&mut report, format!("{} of {} connections failed to set up", cfg.connections - connected, cfg.connections));
    }
    if errors.total() > 0 {
        fail(&mut report, format!("{} errors", errors.total()));
    }
    if total.unanswered > 0 {
        fail(&mut report, format!("{} messages got no echo within {}s after the window", total.unanswered, cfg.drain_s));
    }
    if total.received_window == 0 {
        fail(&mut report, "no echo received in the measured window".into());
    }
    report
}
