//! `loadgen fanout`: subscribers on one topic, some connections sending bursts; every
//! subscriber should receive every message. Each message carries its sender id, a per-sender
//! sequence number and its send time, so receivers measure delivery latency and check order.
//!
//! Accounting: the messages that count are those *sent* inside the measured window (by
//! their timestamp). After the window, senders stop and the receivers keep reading until
//! every one of those messages has reached every subscriber, or `--drain` seconds pass. So
//! the fan-out ratio `delivered / sent` is exact: it equals the subscriber count for a
//! correct server, and anything else is reported as a failure.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::watch;

use crate::common::{fail, Barrier, Clock, Common};
use crate::conn::{self, Conn, Target, Wake};
use crate::frame::{Event, OP_BINARY, OP_PONG, OP_TEXT};
use crate::json::J;
use crate::proto::{self, Eio, Payload, Protocol, TachyonIn};
use crate::{latency_report, now_ns, Errors, LatencyShards, LatencySink, Window};

#[derive(Debug, Clone)]
pub struct FanoutConfig {
    pub common: Common,
    pub subscribers: usize,
    pub senders: usize,
    /// true (default): the senders are the first `senders` subscribers. false: the senders
    /// are extra connections that do not subscribe.
    pub senders_subscribe: bool,
    pub burst: usize,
    /// Milliseconds between the bursts of one sender; 0: next burst as soon as the previous
    /// one has been written to the socket.
    pub interval_ms: f64,
    /// Flow control: at most this many of a sender's bursts may be on their way (sent, not yet
    /// received back by the sender, which is a subscriber too). 0: no limit.
    pub window: usize,
    pub duration_s: f64,
    pub warmup_s: f64,
    pub drain_s: f64,
    pub topic: String,
    pub size: usize,
    /// Raw protocol only: binary messages instead of the JSON payload object.
    pub binary: bool,
    /// Event names: what senders emit, what subscribers receive, how Socket.IO clients join.
    pub publish_event: String,
    pub deliver_event: String,
    pub join_event: String,
    /// Raw protocol only: senders send the Tachyon delivery envelope
    /// `{"topic":T,"event":D,"data":<payload>}` and receivers expect it back, so that a raw
    /// forwarding server delivers exactly the bytes a Tachyon server would.
    pub envelope: bool,
    /// Cross-server fan-out: the extra senders connect here (another server of the same app,
    /// behind a broker) while the subscribers connect to `common.url`.
    pub sender_url: Option<String>,
    /// (prefix, suffix) of a delivery, for the fast path (set by `run`).
    fast: Option<(Vec<u8>, Vec<u8>)>,
}

impl FanoutConfig {
    pub fn new(common: Common) -> FanoutConfig {
        FanoutConfig {
            common,
            subscribers: 50,
            senders: 10,
            senders_subscribe: true,
            burst: 10,
            interval_ms: 100.0,
            window: 0,
            duration_s: 5.0,
            warmup_s: 1.0,
            drain_s: 3.0,
            topic: "bench".into(),
            size: 64,
            binary: false,
            publish_event: "bench:publish".into(),
            deliver_event: "bench".into(),
            join_event: "join".into(),
            envelope: false,
            sender_url: None,
            fast: None,
        }
    }

    /// Receives `{"topic":T,"event":D,"data":…}` deliveries (Tachyon, or raw with `--envelope`).
    fn tachyon_deliveries(&self) -> bool {
        self.common.protocol == Protocol::Tachyon || (self.common.protocol == Protocol::Raw && self.envelope)
    }

    /// The fixed bytes around the payload of a delivery, when they are known in advance.
    fn delivery_shape(&self) -> Option<(Vec<u8>, Vec<u8>)> {
        if self.tachyon_deliveries() {
            return Some((format!("{{\"topic\":\"{}\",\"event\":\"{}\",\"data\":", self.topic, self.deliver_event).into_bytes(), b"}".to_vec()));
        }
        if self.common.protocol == Protocol::SocketIo {
            return Some((format!("42[\"{}\",", self.deliver_event).into_bytes(), b"]".to_vec()));
        }
        None
    }

    pub fn total_connections(&self) -> usize {
        self.subscribers + if self.senders_subscribe { 0 } else { self.senders }
    }

    /// The sender index of connection `i`, if it sends.
    pub fn sender_of(&self, i: usize) -> Option<usize> {
        if self.senders_subscribe {
            (i < self.senders).then_some(i)
        } else {
            (i >= self.subscribers).then(|| i - self.subscribers)
        }
    }

    pub fn is_receiver(&self, i: usize) -> bool {
        i < self.subscribers
    }

    /// Queue one published message.
    fn write_message(&self, c: &mut Conn, p: &Payload) {
        match self.common.protocol {
            Protocol::Raw if self.binary => c.io.send_with(OP_BINARY, |b| proto::write_raw_binary_fanout(b, p, self.size)),
            Protocol::Raw if self.envelope => c.io.send_with(OP_TEXT, |b| proto::write_tachyon_delivery(b, &self.topic, &self.deliver_event, p, self.size)),
            Protocol::Raw => c.io.send_with(OP_TEXT, |b| proto::write_json_payload(b, p, self.size)),
            Protocol::Tachyon => c.io.send_with(OP_TEXT, |b| proto::write_tachyon_event(b, &self.publish_event, p, self.size)),
            Protocol::SocketIo => c.io.send_with(OP_TEXT, |b| proto::write_sio_event(b, &self.publish_event, p, self.size)),
        }
    }

    /// (payload bytes, bytes of the WebSocket message a sender sends)
    pub fn sizes(&self) -> (usize, usize) {
        let p = Payload { s: 0, n: 1, t: now_ns() };
        let mut v = Vec::new();
        match self.common.protocol {
            Protocol::Raw if self.binary => proto::write_raw_binary_fanout(&mut v, &p, self.size),
            _ => proto::write_json_payload(&mut v, &p, self.size),
        }
        let payload = v.len();
        v.clear();
        match self.common.protocol {
            Protocol::Raw if self.envelope => proto::write_tachyon_delivery(&mut v, &self.topic, &self.deliver_event, &p, self.size),
            Protocol::Raw => return (payload, payload),
            Protocol::Tachyon => proto::write_tachyon_event(&mut v, &self.publish_event, &p, self.size),
            Protocol::SocketIo => proto::write_sio_event(&mut v, &self.publish_event, &p, self.size),
        }
        (payload, v.len())
    }

    fn validate(&self) -> Result<(), String> {
        if self.subscribers == 0 {
            return Err("--subscribers must be at least 1".into());
        }
        if self.senders == 0 || self.burst == 0 {
            return Err("--senders and --burst must be at least 1".into());
        }
        if self.senders_subscribe && self.senders > self.subscribers {
            return Err(format!("{} senders cannot be among {} subscribers (use --extra-senders)", self.senders, self.subscribers));
        }
        if !self.senders_subscribe && self.common.protocol == Protocol::Raw {
            return Err("--extra-senders is not possible with --protocol raw: the raw peer subscribes every connection".into());
        }
        if self.binary && self.common.protocol != Protocol::Raw {
            return Err("--binary is only supported with --protocol raw".into());
        }
        if self.sender_url.is_some() && self.senders_subscribe {
            return Err("--sender-url needs --extra-senders (the senders on the other server only send)".into());
        }
        if self.window > 0 && !self.senders_subscribe {
            return Err("--window needs the senders to be subscribers (not --extra-senders)".into());
        }
        if self.envelope && (self.common.protocol != Protocol::Raw || self.binary) {
            return Err("--envelope is only for --protocol raw text messages".into());
        }
        let printable = |s: &str| !s.is_empty() && s.bytes().all(|b| (0x21..=0x7E).contains(&b) && b != b'"' && b != b'\\');
        for (what, v) in [("topic", &self.topic), ("event", &self.publish_event), ("event", &self.deliver_event), ("event", &self.join_event)] {
            if !printable(v) {
                return Err(format!("{what} {v:?} must be printable ASCII without quotes or backslashes"));
            }
        }
        Ok(())
    }
}

#[derive(Default)]
struct Shared {
    sent_window: AtomicU64,
    delivered_window: AtomicU64,
    sent_total: AtomicU64,
    delivered_total: AtomicU64,
    errors: AtomicU64,
    senders_done: AtomicUsize,
    receivers_ready: AtomicUsize,
}

#[derive(Default)]
struct TaskOut {
    errors: Errors,
    sent_window: u64,
    sent_total: u64,
    delivered_window: u64,
    delivered_rx_window: u64,
    delivered_total: u64,
    out_of_order: u64,
    seq_gaps: u64,
    bursts_skipped: u64,
    bursts: u64,
}

enum Rx {
    Msg(Payload),
    Ignore,
}

fn parse_tachyon_delivery(cfg: &FanoutConfig, m: &[u8]) -> Result<Rx, String> {
    match proto::parse_tachyon(m)? {
        TachyonIn::Event { topic, event, data } => {
            if event != cfg.deliver_event.as_str() || topic.as_deref() != Some(cfg.topic.as_str()) {
                return Ok(Rx::Ignore);
            }
            let data = data.ok_or("bench event without data")?;
            proto::parse_json_payload(data).map(Rx::Msg).ok_or_else(|| "event data is not a payload object".into())
        }
        TachyonIn::Control { kind, reason, .. } if kind == "error" || kind == "denied" => Err(format!("server answered {kind}: {}", reason.unwrap_or_default())),
        TachyonIn::Control { .. } => Ok(Rx::Ignore),
    }
}

fn parse_delivery(cfg: &FanoutConfig, ev: &Event<'_>, pong: &mut Option<Vec<u8>>) -> Result<Rx, String> {
    // Fast path: a delivery of exactly the expected shape (compared byte for byte).
    if let (Some((prefix, suffix)), Event::Text(m)) = (&cfg.fast, ev) {
        if let Some(p) = proto::exact_enveloped_payload(m, prefix, suffix) {
            return Ok(Rx::Msg(p));
        }
        if let Some(data) = proto::enveloped(m, prefix, suffix) {
            return proto::parse_json_payload(data).map(Rx::Msg).ok_or_else(|| "event data is not a payload object".into());
        }
    }
    match (cfg.common.protocol, ev) {
        (Protocol::Raw, Event::Text(m)) if cfg.envelope => parse_tachyon_delivery(cfg, m),
        (Protocol::Raw, Event::Text(m)) => proto::parse_json_payload(m).map(Rx::Msg).ok_or_else(|| format!("not a payload object: {:?}", String::from_utf8_lossy(&m[..m.len().min(80)]))),
        (Protocol::Raw, Event::Binary(m)) => proto::parse_raw_binary_fanout(m).map(Rx::Msg).ok_or_else(|| format!("binary message of {} bytes is too short", m.len())),
        (Protocol::Tachyon, Event::Text(m)) => parse_tachyon_delivery(cfg, m),
        (Protocol::SocketIo, Event::Text(m)) => match proto::parse_eio(m)? {
            Eio::Ping(p) => {
                let mut v = b"3".to_vec();
                v.extend_from_slice(p);
                *pong = Some(v);
                Ok(Rx::Ignore)
            }
            Eio::Message(_) => {
                let Some((name, arg)) = proto::sio_event_payload(m)? else { return Ok(Rx::Ignore) };
                if name != cfg.deliver_event.as_str() {
                    return Ok(Rx::Ignore);
                }
                proto::parse_json_payload(arg.ok_or("bench event without an argument")?).map(Rx::Msg).ok_or_else(|| "event argument is not a payload object".into())
            }
            Eio::Close => Err("Engine.IO close packet".into()),
            _ => Ok(Rx::Ignore),
        },
        (_, Event::Binary(m)) => Err(format!("unexpected binary message of {} bytes", m.len())),
        _ => Ok(Rx::Ignore),
    }
}

/// A server that coalesces publishes sends `[envelope,envelope,…]` (Tachyon's "Batches").
fn is_batch(cfg: &FanoutConfig, m: &[u8]) -> bool {
    cfg.tachyon_deliveries() && m.first() == Some(&b'[')
}

/// Every item of a batch frame, each parsed as one delivery (so each one counts).
fn parse_batch(cfg: &FanoutConfig, m: &[u8]) -> Result<Vec<Result<Rx, String>>, String> {
    if let Some(items) = exact_batch(cfg, m) {
        return Ok(items);
    }
    let items = crate::json::array_items(m).map_err(|e| format!("malformed batch frame: {e:?}"))?;
    Ok(items.into_iter().map(|item| parse_tachyon_delivery(cfg, item)).collect())
}

/// A batch frame whose every item is a delivery of the expected shape, read in one pass (the
/// generic walk was most of the generator's own CPU with a coalescing server); None when any
/// item differs, and then [`parse_batch`] reads it item by item.
fn exact_batch(cfg: &FanoutConfig, m: &[u8]) -> Option<Vec<Result<Rx, String>>> {
    let (prefix, suffix) = cfg.fast.as_ref()?;
    let mut rest = m.strip_prefix(b"[")?;
    let mut items = Vec::new();
    loop {
        let (p, after) = proto::exact_enveloped_head(rest, prefix, suffix)?;
        items.push(Ok(Rx::Msg(p)));
        match after {
            [b']'] => return Some(items),
            [b',', tail @ ..] => rest = tail,
            _ => return None,
        }
    }
}

struct Task {
    cfg: Arc<FanoutConfig>,
    target: Arc<Target>,
    barrier: Arc<Barrier>,
    shared: Arc<Shared>,
    stop: watch::Receiver<bool>,
    lat: LatencySink,
    id: usize,
}

async fn conn_task(mut t: Task) -> TaskOut {
    let mut out = TaskOut::default();
    let cfg = t.cfg.clone();
    let sender = cfg.sender_of(t.id);
    let receiver = cfg.is_receiver(t.id);
    let setup = t
        .barrier
        .open(&cfg.common, &t.target, t.id, 64 * 1024, |mut c, deadline| {
            let cfg = cfg.clone();
            async move {
                if receiver {
                    match cfg.common.protocol {
                        Protocol::Tachyon => conn::tachyon_subscribe(&mut c, &cfg.topic, deadline).await?,
                        Protocol::SocketIo => {
                            c.io.send(OP_TEXT, &proto::sio_event_str(&cfg.join_event, &cfg.topic));
                            c.io.flush().await.map_err(|e| ("io", e.to_string()))?;
                        }
                        Protocol::Raw => {}
                    }
                }
                Ok(c)
            }
        })
        .await;
    let mut c = match setup {
        Ok(c) => c,
        Err((kind, msg)) => {
            out.errors.add(kind, msg);
            t.shared.errors.fetch_add(1, Ordering::Relaxed);
            if sender.is_some() {
                t.shared.senders_done.fetch_add(1, Ordering::SeqCst);
            }
            return out;
        }
    };
    if receiver {
        t.shared.receivers_ready.fetch_add(1, Ordering::Relaxed);
    }
    let Some(w) = t.barrier.started().await else { return out };
    let interval_ns = crate::secs_to_ns(cfg.interval_ms / 1000.0);
    // Spread the senders' bursts evenly over one interval.
    let mut next_burst = w.start + sender.map_or(0, |k| interval_ns * k as u64 / cfg.senders as u64);
    let mut sending = sender.is_some();
    let sid = sender.unwrap_or(0) as u32;
    let mut seq = 0u64;
    let mut last_seq = vec![0u64; if receiver { cfg.senders } else { 0 }];
    let mut pong = None;
    let mut err: Option<(&'static str, String)> = None;
    let mut reads = 0u64;

    'run: loop {
        if let Err(e) = c.io.try_flush() {
            err = Some(("io", e.to_string()));
            break;
        }
        let now = now_ns();
        let mut read_now = false;
        if sending && now >= w.measure_end {
            sending = false;
            t.shared.senders_done.fetch_add(1, Ordering::SeqCst);
        }
        // Flow control: the sender's own messages come back to it; wait for all but
        // `window` bursts of them before sending more.
        let window_open = cfg.window == 0 || sender.is_none() || seq - last_seq[sid as usize] < (cfg.window * cfg.burst) as u64;
        if sending && window_open && c.io.pending_out() == 0 && now >= next_burst {
            // One timestamp per burst: the messages of a burst leave in one write.
            let ts = now_ns();
            for _ in 0..cfg.burst {
                seq += 1;
                cfg.write_message(&mut c, &Payload { s: sid, n: seq, t: ts });
            }
            let b = cfg.burst as u64;
            out.bursts += 1;
            out.sent_total += b;
            t.shared.sent_total.fetch_add(b, Ordering::Relaxed);
            if w.contains(ts) {
                out.sent_window += b;
                t.shared.sent_window.fetch_add(b, Ordering::Relaxed);
            }
            if interval_ns == 0 {
                next_burst = now;
            } else {
                next_burst += interval_ns;
                if next_burst + interval_ns <= now {
                    let missed = (now - next_burst) / interval_ns;
                    out.bursts_skipped += missed;
                    next_burst += missed * interval_ns;
                }
            }
            if let Err(e) = c.io.try_flush() {
                err = Some(("io", e.to_string()));
                break;
            }
            // Read whatever is there, and let the other connections run.
            read_now = true;
            tokio::task::yield_now().await;
        }
        if !read_now {
            let deadline = if sending {
                Some(crate::instant_at(if c.io.pending_out() == 0 && window_open { next_burst.min(w.measure_end) } else { w.measure_end }))
            } else {
                None
            };
            match c.io.wait(c.io.pending_out() > 0, deadline, Some(&mut t.stop)).await {
                Ok(Wake::Ready(r)) if r.is_readable() || r.is_read_closed() => {}
                Ok(Wake::Ready(_)) | Ok(Wake::Deadline) => continue,
                Ok(Wake::Stop) => break,
                Err(e) => {
                    err = Some(("io", e.to_string()));
                    break;
                }
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
                if !*t.stop.borrow() {
                    err = Some(("closed", e.to_string()));
                }
                break;
            }
        }
        let (mut d_win, mut d_all) = (0u64, 0u64);
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
                    if !*t.stop.borrow() {
                        err = Some(("closed", format!("server closed: {:?} {}", code, String::from_utf8_lossy(reason))));
                    }
                    break 'run;
                }
                _ => {}
            }
            // One delivery (or one item of a batch frame) through the checks and counters.
            let mut record = |rx: Result<Rx, String>| match rx {
                Ok(Rx::Msg(p)) => {
                    if !receiver {
                        out.errors.add("unexpected", "a non-subscribed sender received a bench message");
                        return;
                    }
                    let now = now_ns();
                    let s = p.s as usize;
                    if s >= last_seq.len() {
                        out.errors.add("payload", format!("sender id {s} out of range"));
                        return;
                    }
                    d_all += 1;
                    if w.contains(now) {
                        out.delivered_rx_window += 1;
                    }
                    if w.contains(p.t) {
                        d_win += 1;
                        t.lat.push(now.saturating_sub(p.t));
                    }
                    let last = last_seq[s];
                    if p.n <= last {
                        out.out_of_order += 1;
                    } else {
                        out.seq_gaps += p.n - last - 1;
                        last_seq[s] = p.n;
                    }
                }
                Ok(Rx::Ignore) => {}
                Err(e) => {
                    out.errors.add("payload", e);
                    t.shared.errors.fetch_add(1, Ordering::Relaxed);
                }
            };
            match &ev {
                Event::Text(m) if is_batch(&cfg, m) => match parse_batch(&cfg, m) {
                    Ok(items) => items.into_iter().for_each(&mut record),
                    Err(e) => record(Err(e)),
                },
                _ => record(parse_delivery(&cfg, &ev, &mut pong)),
            }
            if let Some(p) = pong.take() {
                c.io.send(OP_TEXT, &p);
            }
        }
        out.delivered_window += d_win;
        out.delivered_total += d_all;
        t.shared.delivered_window.fetch_add(d_win, Ordering::Relaxed);
        t.shared.delivered_total.fetch_add(d_all, Ordering::Relaxed);
    }
    if sending {
        t.shared.senders_done.fetch_add(1, Ordering::SeqCst);
    }
    if let Some((kind, msg)) = err {
        out.errors.add(kind, msg);
        t.shared.errors.fetch_add(1, Ordering::Relaxed);
    }
    c.io.send_close(1000, "done");
    let _ = c.io.try_flush();
    t.lat.flush();
    out
}

/// Run the fan-out load and return the report.
pub async fn run(mut cfg: FanoutConfig) -> J {
    cfg.fast = cfg.delivery_shape();
    let mut report = cfg.common.report_head("fanout");
    let (payload_bytes, message_bytes) = cfg.sizes();
    report.insert("subscribers", cfg.subscribers);
    report.insert("senders", cfg.senders);
    report.insert("senders_subscribe", cfg.senders_subscribe);
    report.insert("connections", cfg.total_connections());
    report.insert("burst", cfg.burst);
    report.insert("interval_ms", J::num(cfg.interval_ms, 3));
    report.insert("window", cfg.window);
    report.insert("topic", cfg.topic.as_str());
    report.insert("size", cfg.size);
    report.insert("binary", cfg.binary);
    report.insert("envelope", cfg.envelope);
    report.insert("payload_bytes", payload_bytes);
    report.insert("message_bytes", message_bytes);
    report.insert("warmup_s", J::num(cfg.warmup_s, 3));
    report.insert("duration_s", J::num(cfg.duration_s, 3));
    if let Err(e) = cfg.validate() {
        fail(&mut report, e);
        return report;
    }
    let target = match Target::parse(&cfg.common.url) {
        Ok(t) => Arc::new(t),
        Err(e) => {
            fail(&mut report, e);
            return report;
        }
    };
    let sender_target = match cfg.sender_url.as_deref().map(Target::parse) {
        None => target.clone(),
        Some(Ok(t)) => Arc::new(t),
        Some(Err(e)) => {
            fail(&mut report, e);
            return report;
        }
    };
    if let Some(u) = &cfg.sender_url {
        report.insert("sender_url", u.as_str());
    }
    let cfg = Arc::new(cfg);
    let total = cfg.total_connections();
    let barrier = Barrier::new(cfg.common.connect_concurrency);
    let shared = Arc::new(Shared::default());
    let shards = LatencyShards::new(cfg.common.threads);
    let (stop_tx, stop_rx) = watch::channel(false);
    let tasks: Vec<_> = (0..total)
        .map(|id| {
            tokio::spawn(conn_task(Task {
                cfg: cfg.clone(),
                target: if cfg.sender_of(id).is_some() && !cfg.senders_subscribe { sender_target.clone() } else { target.clone() },
                barrier: barrier.clone(),
                shared: shared.clone(),
                stop: stop_rx.clone(),
                lat: shards.sink(id),
                id,
            }))
        })
        .collect();
    let setup = barrier.wait_setup(&cfg.common, total).await;
    let connected = barrier.ready.load(Ordering::Relaxed);
    let receivers = shared.receivers_ready.load(Ordering::Relaxed);
    report.insert("connected", connected);
    report.insert("setup_s", J::num(setup.as_secs_f64(), 3));
    if cfg.common.protocol == Protocol::SocketIo && cfg.warmup_s < 0.2 {
        // Socket.IO `join` has no answer: give the server a moment to process them.
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    let w = Window::new(now_ns(), cfg.warmup_s, cfg.duration_s);
    barrier.start_tx.send_replace(Some(w));
    let mut clock = Clock::new(w, cfg.common.server_pid);
    let drain_end = crate::instant_at(w.measure_end + crate::secs_to_ns(cfg.drain_s));
    let (mut last_sent, mut last_del, mut last_at) = (0u64, 0u64, Instant::now());
    let mut drain_timed_out = false;
    loop {
        if tasks.iter().all(|t| t.is_finished()) {
            break;
        }
        if clock.window_over() {
            // senders_done first (SeqCst): a sender counts its last window burst before it
            // says it is done, so `sent` below is final once all are done.
            let senders_done = shared.senders_done.load(Ordering::SeqCst) >= cfg.senders;
            let sent = shared.sent_window.load(Ordering::Relaxed);
            let del = shared.delivered_window.load(Ordering::Relaxed);
            if senders_done && del >= sent * receivers as u64 {
                break;
            }
            if Instant::now() >= drain_end {
                drain_timed_out = true;
                break;
            }
        }
        if clock.step(Duration::from_millis(5)).await {
            let now = Instant::now();
            let dt = now.duration_since(last_at).as_secs_f64();
            let (s, d) = (shared.sent_total.load(Ordering::Relaxed), shared.delivered_total.load(Ordering::Relaxed));
            cfg.common.say(format!(
                "fanout t={:.1}s sent/s={:.0} delivered/s={:.0} errors={}{}",
                clock.elapsed_s(),
                (s - last_sent) as f64 / dt,
                (d - last_del) as f64 / dt,
                shared.errors.load(Ordering::Relaxed),
                if clock.window_over() { " (draining)" } else { "" }
            ));
            (last_sent, last_del, last_at) = (s, d, now);
        }
    }
    let drain_s = clock.cpu_end.map_or(0.0, |m| m.wall.elapsed().as_secs_f64());
    stop_tx.send_replace(true);
    let mut errors = Errors::default();
    let mut tot = TaskOut::default();
    for t in tasks {
        match t.await {
            Ok(o) => {
                tot.sent_window += o.sent_window;
                tot.sent_total += o.sent_total;
                tot.delivered_window += o.delivered_window;
                tot.delivered_rx_window += o.delivered_rx_window;
                tot.delivered_total += o.delivered_total;
                tot.out_of_order += o.out_of_order;
                tot.seq_gaps += o.seq_gaps;
                tot.bursts += o.bursts;
                tot.bursts_skipped += o.bursts_skipped;
                errors.merge(o.errors);
            }
            Err(e) => errors.add("task", e),
        }
    }
    let measured = w.measured_s();
    let expected = tot.sent_window * cfg.subscribers as u64;
    let ratio = if tot.sent_window > 0 { tot.delivered_window as f64 / tot.sent_window as f64 } else { f64::NAN };
    report.insert("measured_s", J::num(measured, 3));
    report.insert("sent", tot.sent_window);
    report.insert("sent_per_s", J::num(tot.sent_window as f64 / measured, 1));
    report.insert("delivered", tot.delivered_window);
    report.insert("delivered_per_s", J::num(tot.delivered_rx_window as f64 / measured, 1));
    report.insert("expected_fanout", cfg.subscribers);
    report.insert("fanout_ratio", J::num(ratio, 4));
    report.insert("missing", expected.saturating_sub(tot.delivered_window));
    report.insert("out_of_order", tot.out_of_order);
    report.insert("seq_gaps", tot.seq_gaps);
    report.insert("latency_us", latency_report(&shards.merged()));
    report.insert("bursts", tot.bursts);
    report.insert("bursts_skipped", tot.bursts_skipped);
    report.insert("sent_total", tot.sent_total);
    report.insert("delivered_total", tot.delivered_total);
    report.insert("drain_s", J::num(drain_s, 3));
    errors.report_into(&mut report);
    let cpu = clock.cpu_report();
    report.insert("cpu_busy", cpu.get("busy").cloned().unwrap_or(J::Null));
    report.insert("cpu", cpu);
    report.insert("server_cpu", clock.server_cpu_report());
    if connected < total {
        fail(&mut report, format!("{} of {} connections failed to set up", total - connected, total));
    }
    if errors.total() > 0 {
        fail(&mut report, format!("{} errors", errors.total()));
    }
    if tot.sent_window == 0 {
        fail(&mut report, "no message sent in the measured window".into());
    } else if tot.delivered_window != expected {
        fail(
            &mut report,
            format!(
                "fan-out ratio {:.4} differs from the {} subscribers ({} deliveries expected, {} seen{})",
                ratio,
                cfg.subscribers,
                expected,
                tot.delivered_window,
                if drain_timed_out { format!("; gave up waiting {}s after the window", cfg.drain_s) } else { String::new() }
            ),
        );
    }
    if tot.out_of_order > 0 {
        fail(&mut report, format!("{} deliveries out of per-sender order", tot.out_of_order));
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tachyon_cfg() -> FanoutConfig {
        FanoutConfig::new(Common::new("ws://127.0.0.1:1/fanout", Protocol::Tachyon))
    }

    fn delivery(topic: &str, event: &str, s: u32, n: u64) -> Vec<u8> {
        let mut v = Vec::new();
        proto::write_tachyon_delivery(&mut v, topic, event, &Payload { s, n, t: 7 }, 64);
        v
    }

    #[test]
    fn batch_items_each_count_in_order() {
        let cfg = tachyon_cfg();
        let mut frame = b"[".to_vec();
        frame.extend(delivery("bench", "bench", 3, 1));
        frame.push(b',');
        frame.extend(delivery("other", "bench", 3, 2)); // another topic: ignored, not an error
        frame.push(b',');
        frame.extend(delivery("bench", "bench", 3, 2));
        frame.push(b']');
        assert!(is_batch(&cfg, &frame));
        let items = parse_batch(&cfg, &frame).unwrap();
        assert_eq!(items.len(), 3);
        let seqs: Vec<Option<u64>> = items
            .iter()
            .map(|r| match r {
                Ok(Rx::Msg(p)) => Some(p.n),
                Ok(Rx::Ignore) => None,
                Err(e) => panic!("unexpected error {e}"),
            })
            .collect();
        assert_eq!(seqs, vec![Some(1), None, Some(2)]);
    }

    #[test]
    fn batches_of_the_expected_shape_read_in_one_pass() {
        let mut cfg = tachyon_cfg();
        cfg.fast = cfg.delivery_shape();
        let mut frame = b"[".to_vec();
        frame.extend(delivery("bench", "bench", 3, 1));
        frame.push(b',');
        frame.extend(delivery("bench", "bench", 4, 9));
        frame.push(b']');
        let seqs = |items: Vec<Result<Rx, String>>| -> Vec<(u32, u64)> {
            items.into_iter().map(|r| match r {
                Ok(Rx::Msg(p)) => (p.s, p.n),
                other => panic!("unexpected {:?}", other.err()),
            }).collect()
        };
        assert_eq!(seqs(exact_batch(&cfg, &frame).expect("one pass")), vec![(3, 1), (4, 9)]);
        assert_eq!(seqs(parse_batch(&cfg, &frame).unwrap()), vec![(3, 1), (4, 9)]);
        // Anything else goes item by item: another topic, trailing bytes, a cut frame.
        let mut other = frame.clone();
        other.splice(1..1, delivery("other", "bench", 5, 1).into_iter().chain([b',']));
        assert!(exact_batch(&cfg, &other).is_none());
        assert_eq!(parse_batch(&cfg, &other).unwrap().len(), 3);
        let mut trailing = frame.clone();
        trailing.push(b' ');
        assert!(exact_batch(&cfg, &trailing).is_none());
        assert!(exact_batch(&cfg, &frame[..frame.len() - 1]).is_none());
        assert!(parse_batch(&cfg, &frame[..frame.len() - 1]).is_err());
        assert!(exact_batch(&cfg, b"[]").is_none());
    }

    #[test]
    fn bad_batches_are_errors() {
        let cfg = tachyon_cfg();
        assert!(parse_batch(&cfg, b"[{\"topic\": not json").is_err());
        let items = parse_batch(&cfg, b"[5]").unwrap();
        assert!(matches!(items.as_slice(), [Err(_)]), "a non-object item is a payload error");
        // Raw peers without the envelope never see batches: `[` is just a text frame there.
        let raw = FanoutConfig::new(Common::new("ws://127.0.0.1:1/fanout", Protocol::Raw));
        assert!(!is_batch(&raw, b"[1,2]"));
    }
}
