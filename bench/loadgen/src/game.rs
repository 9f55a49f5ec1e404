//! `game` mode: virtual players of the typing race (examples/typing-race) arrive at a fixed
//! rate. Each one matchmakes over HTTP, connects, joins its room, waits for the start, then
//! types one correct character every `--keystroke-ms` (200 ms: 60 WPM) and pings every
//! `--ping-ms`. Measured per second: ping round trip, keystroke → its first confirmation
//! (`key`: the player's own `pvp:progress-update`, or the compact protocol's binary answer,
//! whichever comes first), keystroke → the room's progress update carrying it (`view`: when
//! the other players see it; the same as `key` without the binary answer), as p50/p95/p99,
//! errors, disconnects, and the loadgen's own CPU. Protocols: `tachyon` (Tachyon, and the raw uWS and Bun peers that speak its wire
//! format) and `socketio` (Socket.IO v4 over Engine.IO v4, websocket transport).
//!
//! Each player's setup is a tokio task; once joined, its socket moves to a play loop
//! (`game_loop.rs`: one epoll loop for every player, `--threads` of them).

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use tokio::sync::watch;

use crate::common::Common;
use crate::conn::{self, Conn, Target};
use crate::frame::OP_TEXT;
use crate::game_loop::{Joined, LoopHandle};
use crate::json::{self, J};
use crate::proto::{self, Eio, Protocol, TachyonIn};
use crate::{cpu_times, now_ns, Errors};

#[derive(Debug, Clone)]
pub struct GameConfig {
    pub common: Common,
    /// Players arriving per second.
    pub rate: f64,
    /// Players in all (arrivals stop there).
    pub max_players: usize,
    /// Seconds of the whole run (arrivals and play).
    pub duration_s: f64,
    pub keystroke_ms: f64,
    pub ping_ms: f64,
    /// A second is bad when the ping's or the keystroke's p95 reaches this (ms) or when it had errors.
    pub p95_limit_ms: f64,
    /// ... or when the view latency's p95 reaches this (ms): a server that holds room events
    /// for a tick answers the keystroke at once and shows it to the room a tick later.
    pub view_p95_limit_ms: f64,
    /// Stop after this many bad seconds in a row (0: never stop early).
    pub stop_after_bad: u32,
    /// Seconds at the start whose bad seconds do not count towards stopping (a cold server).
    pub warmup_s: f64,
    pub matchmake_path: String,
    /// The play loop polls at most once per tick (microseconds; 0: at every event).
    pub tick_us: u64,
    /// Keystrokes as binary event frames (`[1, utf8…]`, Tachyon's binary events) instead of
    /// JSON event frames: the typing race's opt-in protocol (issue 27 §4).
    pub compact: bool,
}

impl GameConfig {
    pub fn new(common: Common) -> GameConfig {
        GameConfig { common, rate: 4.0, max_players: 1_000_000, duration_s: 60.0, keystroke_ms: 200.0, ping_ms: 1000.0, p95_limit_ms: 50.0, view_p95_limit_ms: 50.0, stop_after_bad: 0, warmup_s: 0.0, matchmake_path: "/api/pvp/matchmake".into(), tick_us: 250, compact: false }
    }

    pub fn validate(&self) -> Result<(), String> {
        if !(self.rate > 0.0 && self.rate.is_finite()) {
            return Err("--rate must be a positive number of players per second".into());
        }
        if !(self.p95_limit_ms > 0.0 && self.view_p95_limit_ms > 0.0) {
            return Err("--p95-limit-ms and --view-p95-limit-ms must be positive".into());
        }
        if self.keystroke_ms <= 0.0 || self.ping_ms <= 0.0 {
            return Err("--keystroke-ms and --ping-ms must be positive".into());
        }
        if self.common.protocol == Protocol::Raw {
            return Err("game mode speaks --protocol tachyon or socketio".into());
        }
        if self.compact && self.common.protocol != Protocol::Tachyon {
            return Err("--compact speaks Tachyon's binary events: --protocol tachyon".into());
        }
        if self.tick_us > 100_000 {
            return Err("--tick-us must be at most 100000 (0.1 s)".into());
        }
        if !self.matchmake_path.starts_with('/') {
            return Err("--matchmake-path must start with /".into());
        }
        Ok(())
    }
}

// ---------------------------------------------------------------- wire formats

/// The frames that subscribe to the room and join it (Tachyon: subscribe ref 1, join ref 2;
/// Socket.IO: join with ack id 1).
pub fn join_frames(p: Protocol, room: &str) -> Vec<Vec<u8>> {
    match p {
        Protocol::SocketIo => vec![format!("421[\"pvp:join\",{{\"roomCode\":\"{room}\"}}]").into_bytes()],
        _ => vec![proto::tachyon_subscribe(&format!("race:{room}"), 1), format!("{{\"type\":\"event\",\"event\":\"pvp:join\",\"data\":{{\"roomCode\":\"{room}\"}},\"ref\":2}}").into_bytes()],
    }
}

/// The code the typing race declares its binary `pvp:keystrokes` event with.
pub const KEYSTROKES_CODE: u8 = 1;

/// The compact protocol's answer to a binary keystroke: `[1, typingIndex as u32 little-endian]`
/// (None: not one).
pub fn compact_ack(b: &[u8]) -> Option<u64> {
    match b {
        [KEYSTROKES_CODE, a, b, c, d] => Some(u32::from_le_bytes([*a, *b, *c, *d]) as u64),
        _ => None,
    }
}

/// One keystroke as a binary event frame's payload: the event's code, then the character's UTF-8.
pub fn write_compact_keystroke(out: &mut Vec<u8>, ch: char) {
    out.push(KEYSTROKES_CODE);
    out.extend_from_slice(ch.encode_utf8(&mut [0u8; 4]).as_bytes());
}

/// One keystroke: the character as the event's data (a JSON string).
pub fn write_keystroke(out: &mut Vec<u8>, p: Protocol, ch: char) {
    let mut s = String::new();
    json::write_str(&mut s, ch.encode_utf8(&mut [0u8; 4]));
    match p {
        Protocol::SocketIo => {
            out.extend_from_slice(b"42[\"pvp:keystrokes\",");
            out.extend_from_slice(s.as_bytes());
            out.push(b']');
        }
        _ => {
            out.extend_from_slice(b"{\"type\":\"event\",\"event\":\"pvp:keystrokes\",\"data\":");
            out.extend_from_slice(s.as_bytes());
            out.push(b'}');
        }
    }
}

/// A `ping` event with a reply (Tachyon ref / Socket.IO ack id `n`, n >= 3).
pub fn write_ping(out: &mut Vec<u8>, p: Protocol, n: u64) {
    match p {
        Protocol::SocketIo => {
            out.extend_from_slice(b"42");
            proto::push_u64(out, n);
            out.extend_from_slice(b"[\"ping\"]");
        }
        _ => {
            out.extend_from_slice(b"{\"type\":\"event\",\"event\":\"ping\",\"ref\":");
            proto::push_u64(out, n);
            out.push(b'}');
        }
    }
}

/// The fixed start of a room event's frame, up to its data.
pub fn event_prefix(p: Protocol, room: &str, event: &str) -> Vec<u8> {
    match p {
        Protocol::SocketIo => format!("42[\"{event}\",").into_bytes(),
        _ => format!("{{\"topic\":\"race:{room}\",\"event\":\"{event}\",\"data\":").into_bytes(),
    }
}

/// The fixed start of a progress update for this room, up to the player id.
pub fn progress_prefix(p: Protocol, room: &str) -> Vec<u8> {
    let mut v = event_prefix(p, room, "pvp:progress-update");
    v.extend_from_slice(b"{\"playerId\":");
    v
}

/// The once-a-second `pvp:wpm-update` of the room (six players' figures, which the players
/// never read): a frame that starts with this prefix is skipped without being parsed.
pub fn wpm_prefix(p: Protocol, room: &str) -> Vec<u8> {
    event_prefix(p, room, "pvp:wpm-update")
}

/// The start of a progress update, `<prefix><playerId>,"typingIndex":<n>`: `(playerId,
/// typingIndex)` and the bytes after it.
fn progress_head<'a>(m: &'a [u8], prefix: &[u8]) -> Option<(u64, u64, &'a [u8])> {
    let (pid, rest) = json::leading_u64(m.strip_prefix(prefix)?)?;
    let (idx, rest) = json::leading_u64(rest.strip_prefix(b",\"typingIndex\":")?)?;
    Some((pid, idx, rest))
}

/// Fast path for the most frequent frame: `(playerId, typingIndex)` of a progress update
/// (None: not one, read it the general way).
pub fn fast_progress(m: &[u8], prefix: &[u8]) -> Option<(u64, u64)> {
    progress_head(m, prefix).map(|(pid, idx, _)| (pid, idx))
}

/// The exact shape the typing race writes a progress update in,
/// `<prefix><playerId>,"typingIndex":<n>,"wrong":<n>}}`: `(playerId, typingIndex, its length)`,
/// read in one pass (a batch frame's items: their end is known without a JSON walk). None: any
/// other shape, read the general way.
pub fn exact_progress(m: &[u8], prefix: &[u8]) -> Option<(u64, u64, usize)> {
    let (pid, idx, rest) = progress_head(m, prefix)?;
    let (_, rest) = json::leading_u64(rest.strip_prefix(b",\"wrong\":")?)?;
    let rest = rest.strip_prefix(b"}}")?;
    Some((pid, idx, m.len() - rest.len()))
}

/// The length of a `pvp:wpm-update` item in the shape the typing race writes it, `<prefix>{…
/// "players":[{…},…]}}`: up to the first `]}}`, when `,` or `]` follows. None: not one, or not
/// that shape.
pub fn exact_wpm_len(m: &[u8], prefix: &[u8]) -> Option<usize> {
    let rest = m.strip_prefix(prefix)?;
    let end = rest.windows(3).position(|w| w == b"]}}")? + 3;
    let body = &rest[..end];
    // That `]}}` is the item's end unless it sits inside a string: before it, quotes must pair
    // up and nothing may be escaped (the game's figures are numbers; its members' names plain).
    if body.iter().any(|&c| c == b'\\') || body.split(|&c| c == b'"').count() % 2 == 0 {
        return None;
    }
    match rest.get(end) {
        Some(b',' | b']') => Some(prefix.len() + end),
        _ => None,
    }
}

/// Reads a batch frame (`[item,item,…]`, docs/protocol.md "Batches") from its start while its
/// items are progress or wpm updates in the exact shapes above, calling `progress(playerId,
/// typingIndex)` for each progress update. Returns where the JSON walk must take over: the
/// frame's length when every item was read, else the start of the first item not read (another
/// event, another shape, or a malformed frame: the walk accepts or refuses it).
pub fn exact_batch_items(m: &[u8], prefix: &[u8], wpm: &[u8], mut progress: impl FnMut(u64, u64)) -> usize {
    let mut at = 1;
    loop {
        let (len, update) = match exact_progress(&m[at..], prefix) {
            Some((pid, idx, len)) => (len, Some((pid, idx))),
            None => match exact_wpm_len(&m[at..], wpm) {
                Some(len) => (len, None),
                None => return at,
            },
        };
        let end = at + len;
        let last = match m.get(end) {
            Some(b',') => false,
            Some(b']') if end + 1 == m.len() => true,
            _ => return at,
        };
        if let Some((pid, idx)) = update {
            progress(pid, idx);
        }
        at = end + 1;
        if last {
            return at;
        }
    }
}

/// What a frame means to a player.
#[derive(Debug, PartialEq)]
pub enum In {
    Progress(u64, u64),
    /// A reply to request `ref` (its data, as JSON).
    Reply(u64, Vec<u8>),
    /// An error answer, or a Socket.IO ack carrying `{"error":…}`.
    Refused(Option<u64>, String),
    Phase(String),
    Ended,
    EioPing(Vec<u8>),
    Closing(String),
    Other,
}

fn room_event(name: &str, data: Option<&[u8]>) -> Result<In, String> {
    Ok(match name {
        "pvp:lobby-update" => {
            let phase = data.and_then(|d| json::get(d, "phase").ok().flatten()).and_then(json::as_str).ok_or("lobby-update without phase")?;
            In::Phase(phase.into_owned())
        }
        "pvp:match-ended" => In::Ended,
        "pvp:progress-update" => {
            let d = data.ok_or("progress-update without data")?;
            let num = |k| json::get(d, k).ok().flatten().and_then(json::as_u64);
            In::Progress(num("playerId").ok_or("progress-update without playerId")?, num("typingIndex").ok_or("progress-update without typingIndex")?)
        }
        _ => In::Other,
    })
}

pub fn classify(p: Protocol, m: &[u8]) -> Result<In, String> {
    match p {
        Protocol::SocketIo => match proto::parse_eio(m)? {
            Eio::Ping(x) => Ok(In::EioPing(x.to_vec())),
            Eio::Close => Ok(In::Closing("Engine.IO close".into())),
            Eio::Message(body) => {
                let s = proto::parse_sio(body)?;
                match s.kind {
                    proto::SIO_EVENT => {
                        let (name, args) = proto::sio_event_args(s.data.ok_or("event without data")?)?;
                        room_event(&name, args.first().copied())
                    }
                    proto::SIO_ACK => {
                        let id = s.id.ok_or("ack without id")?;
                        let items = json::array_items(s.data.ok_or("ack without data")?).map_err(|e| e.to_string())?;
                        let first = items.first().copied().unwrap_or(b"null");
                        if let Some(e) = json::get(first, "error").ok().flatten() {
                            return Ok(In::Refused(Some(id), json::as_str(e).unwrap_or_default().into_owned()));
                        }
                        Ok(In::Reply(id, first.to_vec()))
                    }
                    proto::SIO_DISCONNECT => Ok(In::Closing("Socket.IO disconnect".into())),
                    _ => Ok(In::Other),
                }
            }
            _ => Ok(In::Other),
        },
        _ => match proto::parse_tachyon(m)? {
            TachyonIn::Event { event, data, .. } => room_event(&event, data),
            TachyonIn::Control { kind, r#ref, reason, .. } => match kind.as_ref() {
                "reply" => Ok(In::Reply(r#ref.unwrap_or(0), json::get(m, "data").ok().flatten().unwrap_or(b"null").to_vec())),
                "error" | "denied" => Ok(In::Refused(r#ref, format!("{kind}: {}", reason.unwrap_or_default()))),
                _ => Ok(In::Other),
            },
        },
    }
}

/// From the join reply: the passage, your player id and the phase. (The passage stays a
/// string: the benchmark's is 40,000 characters, four times that as `char`s, for each player.)
pub fn parse_state(data: &[u8]) -> Result<(String, u64, String), String> {
    let get = |k| json::get(data, k).map_err(|e| e.to_string());
    let passage = get("passage")?.and_then(json::as_str).ok_or("state without passage")?;
    let you = get("you")?.and_then(json::as_u64).ok_or("state without you")?;
    let phase = get("phase")?.and_then(json::as_str).ok_or("state without phase")?;
    if passage.is_empty() {
        return Err("empty passage".into());
    }
    Ok((passage.into_owned(), you, phase.into_owned()))
}

// ---------------------------------------------------------------- statistics

type Hist = Histogram<u64>;

fn hist() -> Hist {
    // Microseconds, 1 µs .. 120 s, 2 significant digits: small enough for one per second.
    Hist::new_with_bounds(1, 120_000_000, 2).expect("histogram bounds")
}

pub(crate) struct Second {
    pub ping: Hist,
    pub key: Hist,
    pub view: Hist,
    pub errors: u64,
    pub disconnects: u64,
    pub keystrokes: u64,
    pub lost: u64,
}

impl Second {
    fn new() -> Second {
        Second { ping: hist(), key: hist(), view: hist(), errors: 0, disconnects: 0, keystrokes: 0, lost: 0 }
    }
}

pub(crate) struct Stats {
    start: u64,
    secs: Mutex<Vec<Second>>,
    errors: Mutex<Errors>,
    pub connected: AtomicI64,
    pub racing: AtomicI64,
    arrived: AtomicU64,
    pub stopping: AtomicBool,
}

impl Stats {
    pub fn with<R>(&self, f: impl FnOnce(&mut Second) -> R) -> R {
        let i = ((now_ns().saturating_sub(self.start)) / 1_000_000_000) as usize;
        let mut s = self.secs.lock().unwrap_or_else(|e| e.into_inner());
        while s.len() <= i {
            s.push(Second::new());
        }
        f(&mut s[i])
    }

    pub fn error(&self, kind: &'static str, msg: impl std::fmt::Display) {
        if self.stopping.load(Ordering::Relaxed) {
            return;
        }
        self.with(|s| s.errors += 1);
        self.errors.lock().unwrap_or_else(|e| e.into_inner()).add(kind, msg);
    }
}

fn pct(h: &Hist) -> J {
    if h.is_empty() {
        return J::Null;
    }
    let ms = |q| J::num(h.value_at_quantile(q) as f64 / 1000.0, 2);
    J::obj().set("n", h.len()).set("p50", ms(0.5)).set("p95", ms(0.95)).set("p99", ms(0.99)).set("max", J::num(h.max() as f64 / 1000.0, 2))
}

// ---------------------------------------------------------------- one player

pub(crate) const PING_REF0: u64 = 3;
/// A keystroke whose progress has not come back after this long is counted as lost.
pub(crate) const LOST_AFTER_NS: u64 = 5_000_000_000;

/// One player's setup: matchmaking, the WebSocket, the join; then its socket goes to a play
/// loop (`game_loop`), which types, pings and measures.
async fn player(id: usize, cfg: Arc<GameConfig>, target: Arc<Target>, stats: Arc<Stats>, lp: Arc<Vec<LoopHandle>>) {
    let p = cfg.common.protocol;
    let source = cfg.common.source(id);
    let deadline = Instant::now() + Duration::from_secs_f64(cfg.common.setup_timeout_s);
    let room = match crate::http::get(&target, &cfg.matchmake_path, source, deadline).await {
        Ok(r) if r.status == 200 => match json::get(&r.body, "roomCode").ok().flatten().and_then(json::as_str) {
            Some(code) => code.into_owned(),
            None => return stats.error("matchmake", format!("no roomCode in {:?}", String::from_utf8_lossy(&r.body))),
        },
        Ok(r) => return stats.error("matchmake", format!("status {}", r.status)),
        Err(e) => return stats.error("matchmake", e),
    };
    let mut c = match conn::open(&target, p, source, 16 * 1024, id as u64, deadline).await {
        Ok(c) => c,
        Err((kind, msg)) => return stats.error(kind, msg),
    };
    for f in join_frames(p, &room) {
        c.io.send(OP_TEXT, &f);
    }
    let join_ref = if p == Protocol::SocketIo { 1 } else { 2 };
    let (passage, you, racing) = match join(&mut c, p, join_ref, deadline).await {
        Ok((passage, you, phase)) => (passage, you, phase == "racing"),
        Err((kind, msg)) => return stats.error(kind, msg),
    };
    let Conn { io, dec } = c;
    let (stream, out) = io.into_parts();
    let stream = match stream.into_std() {
        Ok(s) => s,
        Err(e) => return stats.error("io", format!("socket hand-over: {e}")),
    };
    stats.connected.fetch_add(1, Ordering::Relaxed);
    if racing {
        stats.racing.fetch_add(1, Ordering::Relaxed);
    }
    let (prefix, skip) = (progress_prefix(p, &room), wpm_prefix(p, &room));
    lp[id % lp.len()].add(Joined { id, stream, dec, out, passage, you, racing, prefix, skip });
}

/// Waits for the join reply (answering Engine.IO pings on the way).
async fn join(c: &mut Conn, p: Protocol, join_ref: u64, deadline: Instant) -> Result<(String, u64, String), (&'static str, String)> {
    c.io.flush().await.map_err(|e| ("io", e.to_string()))?;
    loop {
        let m = c.recv_text(deadline).await?;
        // A batch of room events (a server that coalesces): the reply awaited here is never in
        // one, and the phase it carries is the room's as of the join.
        if m.first() == Some(&b'[') {
            continue;
        }
        match classify(p, &m).map_err(|e| ("protocol", e))? {
            In::Reply(r, data) if r == join_ref => return parse_state(&data).map_err(|e| ("join", e)),
            In::Refused(r, msg) if r == Some(join_ref) || r == Some(1) => return Err(("join", msg)),
            In::EioPing(x) => {
                let mut pong = b"3".to_vec();
                pong.extend_from_slice(&x);
                c.io.send(OP_TEXT, &pong);
                c.io.flush().await.map_err(|e| ("io", e.to_string()))?;
            }
            In::Closing(why) => return Err(("closed", why)),
            _ => {}
        }
    }
}

// ---------------------------------------------------------------- the run

pub async fn run(cfg: GameConfig) -> J {
    let mut report = cfg.common.report_head("game");
    if let Err(e) = cfg.validate() {
        crate::common::fail(&mut report, e);
        return report;
    }
    let target = match Target::parse(&cfg.common.url) {
        Ok(t) => Arc::new(t),
        Err(e) => {
            crate::common::fail(&mut report, e);
            return report;
        }
    };
    let cfg = Arc::new(cfg);
    let start = now_ns();
    let stats = Arc::new(Stats { start, secs: Mutex::new(Vec::new()), errors: Mutex::new(Errors::default()), connected: AtomicI64::new(0), racing: AtomicI64::new(0), arrived: AtomicU64::new(0), stopping: AtomicBool::new(false) });
    let (stop_tx, stop_rx) = watch::channel(false);
    // The play loops: as many as --threads (tokio's workers do the players' setup).
    let loops = match (0..cfg.common.threads.max(1)).map(|_| LoopHandle::start(&cfg, stats.clone())).collect::<std::io::Result<Vec<_>>>() {
        Ok(l) => Arc::new(l),
        Err(e) => {
            crate::common::fail(&mut report, format!("cannot start the play loop: {e}"));
            return report;
        }
    };

    // Arrivals.
    let spawner = {
        let (cfg, target, stats, stop_rx, loops) = (cfg.clone(), target.clone(), stats.clone(), stop_rx.clone(), loops.clone());
        tokio::spawn(async move {
            let mut tasks = Vec::new();
            for i in 0..cfg.max_players {
                let at = start + (i as f64 / cfg.rate * 1e9) as u64;
                tokio::time::sleep_until(crate::instant_at(at).into()).await;
                if *stop_rx.borrow() {
                    break;
                }
                stats.arrived.fetch_add(1, Ordering::Relaxed);
                tasks.push(tokio::spawn(player(i, cfg.clone(), target.clone(), stats.clone(), loops.clone())));
            }
            tasks
        })
    };

    // The controller: one line a second, the stop rule, the timeline.
    let mut timeline = Vec::new();
    let mut bad_run = 0u32;
    let mut stopped_early = None;
    let (mut cpu_u, mut cpu_s) = cpu_times();
    let mut cpu_wall = Instant::now();
    let total_s = cfg.duration_s.ceil() as usize;
    let mut worst_ok = true;
    for sec in 1..=total_s {
        tokio::time::sleep_until(crate::instant_at(start + sec as u64 * 1_000_000_000).into()).await;
        let (u, s) = cpu_times();
        let busy = (u - cpu_u + s - cpu_s) / cpu_wall.elapsed().as_secs_f64();
        (cpu_u, cpu_s, cpu_wall) = (u, s, Instant::now());
        let line = {
            let mut secs = stats.secs.lock().unwrap_or_else(|e| e.into_inner());
            while secs.len() < sec {
                secs.push(Second::new());
            }
            let x = &secs[sec - 1];
            let p95 = |h: &Hist| if h.is_empty() { 0.0 } else { h.value_at_quantile(0.95) as f64 / 1000.0 };
            let bad = p95(&x.ping) >= cfg.p95_limit_ms || p95(&x.key) >= cfg.p95_limit_ms || p95(&x.view) >= cfg.view_p95_limit_ms || x.errors > 0;
            let row = J::obj()
                .set("t", sec as u64)
                .set("arrived", stats.arrived.load(Ordering::Relaxed))
                .set("players", stats.connected.load(Ordering::Relaxed).max(0) as u64)
                .set("racing", stats.racing.load(Ordering::Relaxed).max(0) as u64)
                .set("keystrokes", x.keystrokes)
                .set("ping", pct(&x.ping))
                .set("key", pct(&x.key))
                .set("view", pct(&x.view))
                .set("errors", x.errors)
                .set("disconnects", x.disconnects)
                .set("lost", x.lost)
                .set("loadgen_cpu", J::num(busy * 100.0, 1))
                .set("ok", !bad);
            cfg.common.say(format!(
                "t={sec}s players={} racing={} ping p95={:.2}ms key p95={:.2}ms view p95={:.2}ms errors={} loadgen cpu={:.0}%",
                stats.connected.load(Ordering::Relaxed),
                stats.racing.load(Ordering::Relaxed),
                p95(&x.ping),
                p95(&x.key),
                p95(&x.view),
                x.errors,
                busy * 100.0
            ));
            if bad && sec as f64 > cfg.warmup_s {
                bad_run += 1;
                worst_ok = false;
            } else {
                bad_run = 0;
            }
            row
        };
        timeline.push(line);
        if cfg.stop_after_bad > 0 && bad_run >= cfg.stop_after_bad {
            stopped_early = Some(sec);
            break;
        }
    }
    stats.stopping.store(true, Ordering::Relaxed);
    let _ = stop_tx.send(true);
    for l in loops.iter() {
        l.stop();
    }
    if let Ok(tasks) = spawner.await {
        for t in tasks {
            let _ = tokio::time::timeout(Duration::from_secs(2), t).await;
        }
    }
    report.insert("rate", J::num(cfg.rate, 2));
    report.insert("keystroke_ms", J::num(cfg.keystroke_ms, 1));
    report.insert("ping_ms", J::num(cfg.ping_ms, 1));
    report.insert("p95_limit_ms", J::num(cfg.p95_limit_ms, 1));
    report.insert("view_p95_limit_ms", J::num(cfg.view_p95_limit_ms, 1));
    report.insert("tick_us", cfg.tick_us);
    report.insert("compact", cfg.compact);
    report.insert("stopped_early_at", stopped_early.map_or(J::Null, |s| J::Int(s as i64)));
    report.insert("all_seconds_ok", worst_ok);
    stats.errors.lock().unwrap_or_else(|e| e.into_inner()).report_into(&mut report);
    report.insert("timeline", J::Arr(timeline));
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames() {
        let mut b = Vec::new();
        write_keystroke(&mut b, Protocol::Tachyon, '"');
        assert_eq!(b, br#"{"type":"event","event":"pvp:keystrokes","data":"\""}"#);
        b.clear();
        write_compact_keystroke(&mut b, 'é');
        assert_eq!(b, [1, 0xC3, 0xA9]);
        assert_eq!(compact_ack(&[1, 0x2C, 0x01, 0, 0]), Some(300));
        assert_eq!(compact_ack(&[1, 0xFF, 0xFF, 0xFF, 0xFF]), Some(u32::MAX as u64));
        // Another code, or not five bytes: not the answer.
        assert_eq!(compact_ack(&[2, 1, 0, 0, 0]), None);
        assert_eq!(compact_ack(&[1, 1, 0, 0]), None);
        assert_eq!(compact_ack(&[1, 1, 0, 0, 0, 0]), None);
        assert_eq!(compact_ack(&[]), None);
        b.clear();
        write_keystroke(&mut b, Protocol::SocketIo, 'a');
        assert_eq!(b, br#"42["pvp:keystrokes","a"]"#);
        b.clear();
        write_ping(&mut b, Protocol::Tachyon, 17);
        assert_eq!(b, br#"{"type":"event","event":"ping","ref":17}"#);
        b.clear();
        write_ping(&mut b, Protocol::SocketIo, 17);
        assert_eq!(b, br#"4217["ping"]"#);
        let j = join_frames(Protocol::Tachyon, "ABC234");
        assert_eq!(j[0], br#"{"type":"subscribe","topic":"race:ABC234","ref":1}"#);
        assert_eq!(j[1], br#"{"type":"event","event":"pvp:join","data":{"roomCode":"ABC234"},"ref":2}"#);
        assert_eq!(join_frames(Protocol::SocketIo, "ABC234")[0], br#"421["pvp:join",{"roomCode":"ABC234"}]"#);
    }

    #[test]
    fn progress_fast_path() {
        let t = progress_prefix(Protocol::Tachyon, "ABC234");
        let m = br#"{"topic":"race:ABC234","event":"pvp:progress-update","data":{"playerId":3,"typingIndex":120,"wrong":0}}"#;
        assert_eq!(fast_progress(m, &t), Some((3, 120)));
        assert_eq!(classify(Protocol::Tachyon, m).unwrap(), In::Progress(3, 120));
        // Another room, another shape, or a truncated number: not the fast path.
        assert_eq!(fast_progress(br#"{"topic":"race:ZZZ234","event":"pvp:progress-update","data":{"playerId":3,"typingIndex":1}}"#, &t), None);
        assert_eq!(fast_progress(br#"{"topic":"race:ABC234","event":"pvp:progress-update","data":{"playerId":3,"wrong":0}}"#, &t), None);
        assert_eq!(fast_progress(br#"{"topic":"race:ABC234","event":"pvp:progress-update","data":{"playerId":x}"#, &t), None);
        // The skipped wpm update: the exact start of the frames the typing race sends.
        let wpm = br#"{"topic":"race:ABC234","event":"pvp:wpm-update","data":{"elapsedMs":1000,"players":[]}}"#;
        assert!(wpm.starts_with(&wpm_prefix(Protocol::Tachyon, "ABC234")));
        assert!(!wpm.starts_with(&wpm_prefix(Protocol::Tachyon, "ZZZ234")) && !m.starts_with(&wpm_prefix(Protocol::Tachyon, "ABC234")));
        assert!(br#"42["pvp:wpm-update",{"elapsedMs":1000}]"#.starts_with(&wpm_prefix(Protocol::SocketIo, "ABC234")));
        let s = progress_prefix(Protocol::SocketIo, "ABC234");
        let m = br#"42["pvp:progress-update",{"playerId":12,"typingIndex":7,"wrong":1}]"#;
        assert_eq!(fast_progress(m, &s), Some((12, 7)));
        assert_eq!(classify(Protocol::SocketIo, m).unwrap(), In::Progress(12, 7));
    }

    #[test]
    fn exact_progress_items() {
        let t = progress_prefix(Protocol::Tachyon, "ABC234");
        let one = br#"{"topic":"race:ABC234","event":"pvp:progress-update","data":{"playerId":3,"typingIndex":120,"wrong":0}}"#;
        assert_eq!(exact_progress(one, &t), Some((3, 120, one.len())));
        // In a batch: the item's own length, whatever follows.
        let mut batch = one.to_vec();
        batch.extend_from_slice(b",{\"topic\":1}]");
        assert_eq!(exact_progress(&batch, &t), Some((3, 120, one.len())));
        // Another room, a missing or extra member, a cut item: not this shape.
        assert_eq!(exact_progress(br#"{"topic":"race:ZZZ234","event":"pvp:progress-update","data":{"playerId":3,"typingIndex":1,"wrong":0}}"#, &t), None);
        assert_eq!(exact_progress(br#"{"topic":"race:ABC234","event":"pvp:progress-update","data":{"playerId":3,"typingIndex":1}}"#, &t), None);
        assert_eq!(exact_progress(br#"{"topic":"race:ABC234","event":"pvp:progress-update","data":{"playerId":3,"typingIndex":1,"wrong":0,"x":1}}"#, &t), None);
        assert_eq!(exact_progress(&one[..one.len() - 1], &t), None);
        assert_eq!(exact_progress(br#"{"topic":"race:ABC234","event":"pvp:progress-update","data":{"playerId":03,"typingIndex":1,"wrong":0}}"#, &t), None);
    }

    #[test]
    fn batch_items_read_exactly_then_handed_over() {
        let (t, w) = (progress_prefix(Protocol::Tachyon, "ABC234"), wpm_prefix(Protocol::Tachyon, "ABC234"));
        let p = |pid: u64, idx: u64| format!(r#"{{"topic":"race:ABC234","event":"pvp:progress-update","data":{{"playerId":{pid},"typingIndex":{idx},"wrong":0}}}}"#);
        let wpm = r#"{"topic":"race:ABC234","event":"pvp:wpm-update","data":{"elapsedMs":1000,"players":[{"playerId":1,"wpm":60,"accuracy":100}]}}"#;
        let lobby = r#"{"topic":"race:ABC234","event":"pvp:lobby-update","data":{"phase":"racing","players":[]}}"#;
        let read = |frame: &str| {
            let mut got = Vec::new();
            let at = exact_batch_items(frame.as_bytes(), &t, &w, |pid, idx| got.push((pid, idx)));
            (got, at)
        };
        // Every item in its exact shape: all read, nothing left for the walk.
        let all = format!("[{},{wpm},{}]", p(1, 5), p(2, 7));
        assert_eq!(read(&all), (vec![(1, 5), (2, 7)], all.len()));
        // Another event in the middle: the walk takes over at its first byte.
        let mixed = format!("[{},{lobby},{}]", p(1, 5), p(2, 7));
        assert_eq!(read(&mixed), (vec![(1, 5)], 1 + p(1, 5).len() + 1));
        assert!(mixed[1 + p(1, 5).len() + 1..].starts_with(lobby));
        // Cut after an item, trailing bytes after the last one, an empty batch: the walk decides.
        let cut = format!("[{}", p(1, 5));
        assert_eq!(read(&cut), (vec![], 1));
        let trailing = format!("[{}]x", p(1, 5));
        assert_eq!(read(&trailing), (vec![], 1));
        assert_eq!(read("[]"), (vec![], 1));
    }

    #[test]
    fn exact_wpm_items() {
        let w = wpm_prefix(Protocol::Tachyon, "ABC234");
        let item = br#"{"topic":"race:ABC234","event":"pvp:wpm-update","data":{"elapsedMs":1000,"players":[{"playerId":1,"wpm":60.1,"accuracy":100},{"playerId":2,"wpm":0,"accuracy":100}]}}"#;
        let mut batch = item.to_vec();
        batch.extend_from_slice(b",{}]");
        assert_eq!(exact_wpm_len(&batch, &w), Some(item.len()));
        let mut last = item.to_vec();
        last.push(b']');
        assert_eq!(exact_wpm_len(&last, &w), Some(item.len()));
        // Nothing after it, trailing bytes, another event, or a string value in it: the JSON walk.
        assert_eq!(exact_wpm_len(item, &w), None);
        let mut junk = item.to_vec();
        junk.extend_from_slice(b"x]");
        assert_eq!(exact_wpm_len(&junk, &w), None);
        assert_eq!(exact_wpm_len(br#"{"topic":"race:ABC234","event":"pvp:lobby-update","data":{"players":[]}}]"#, &w), None);
        assert_eq!(exact_wpm_len(br#"{"topic":"race:ABC234","event":"pvp:wpm-update","data":{"elapsedMs":1,"players":[{"name":"]}}"}]}},"#, &w), None);
    }

    #[test]
    fn classify_frames() {
        let tp = Protocol::Tachyon;
        assert_eq!(classify(tp, br#"{"topic":"race:A","event":"pvp:lobby-update","data":{"phase":"racing","players":[]}}"#).unwrap(), In::Phase("racing".into()));
        assert_eq!(classify(tp, br#"{"topic":"race:A","event":"pvp:match-ended","data":{"results":[]}}"#).unwrap(), In::Ended);
        assert_eq!(classify(tp, br#"{"topic":"race:A","event":"pvp:wpm-update","data":{}}"#).unwrap(), In::Other);
        assert_eq!(classify(tp, br#"{"type":"reply","ref":5,"data":{"now":1}}"#).unwrap(), In::Reply(5, br#"{"now":1}"#.to_vec()));
        assert_eq!(classify(tp, br#"{"type":"subscribed","topic":"race:A","ref":1}"#).unwrap(), In::Other);
        assert_eq!(classify(tp, br#"{"type":"error","ref":4,"code":"HANDLER_ERROR","message":"NOT_RACING: x"}"#).unwrap(), In::Refused(Some(4), "error: NOT_RACING: x".into()));
        assert!(classify(tp, br#"{"topic":"race:A","event":"pvp:lobby-update","data":{}}"#).is_err());
        assert!(classify(tp, b"garbage").is_err());
        let sp = Protocol::SocketIo;
        assert_eq!(classify(sp, b"2").unwrap(), In::EioPing(vec![]));
        assert_eq!(classify(sp, br#"431[{"roomCode":"A","you":2}]"#).unwrap(), In::Reply(1, br#"{"roomCode":"A","you":2}"#.to_vec()));
        assert_eq!(classify(sp, br#"431[{"error":"UNKNOWN_ROOM: no"}]"#).unwrap(), In::Refused(Some(1), "UNKNOWN_ROOM: no".into()));
        assert_eq!(classify(sp, br#"42["pvp:lobby-update",{"phase":"countdown"}]"#).unwrap(), In::Phase("countdown".into()));
        assert_eq!(classify(sp, b"41").unwrap(), In::Closing("Socket.IO disconnect".into()));
        assert!(classify(sp, b"9x").is_err());
    }

    #[test]
    fn state() {
        let (p, you, phase) = parse_state(br#"{"roomCode":"A","you":4,"phase":"waiting","passage":"Hi \"x\"","players":[]}"#).unwrap();
        assert_eq!((p.as_str(), you, phase.as_str()), ("Hi \"x\"", 4, "waiting"));
        assert!(parse_state(br#"{"you":4,"phase":"waiting","passage":""}"#).is_err());
        assert!(parse_state(br#"{"phase":"waiting","passage":"a"}"#).is_err());
    }

    #[test]
    fn config_checks() {
        let mut c = GameConfig::new(Common::new("ws://127.0.0.1:1/ws", Protocol::Tachyon));
        assert!(c.validate().is_ok());
        c.tick_us = 100_001;
        assert!(c.validate().is_err());
        c.tick_us = 0;
        assert!(c.validate().is_ok());
        c.view_p95_limit_ms = 0.0;
        assert!(c.validate().is_err());
        c.view_p95_limit_ms = 150.0;
        assert!(c.validate().is_ok());
        c.rate = 0.0;
        assert!(c.validate().is_err());
        let r = GameConfig::new(Common::new("ws://127.0.0.1:1/ws", Protocol::Raw));
        assert!(r.validate().is_err());
        let mut s = GameConfig::new(Common::new("ws://127.0.0.1:1/", Protocol::SocketIo));
        s.compact = true;
        assert!(s.validate().is_err());
    }
}
