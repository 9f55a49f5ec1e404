//! The game mode's play phase: one epoll loop (mio) over every player that has joined its
//! room. Tokio still does each player's setup (matchmaking, handshake, join), which is short
//! and rare; then the socket leaves tokio for this loop, on a thread of its own.
//!
//! Why: with one tokio task per player, every received frame (30 a second per player: six
//! players a room, five keystrokes a second each) cost a task wake, a fresh timer entry and a
//! watch-channel registration besides the read, and the generator saturated its core at about
//! 3,600 players. Here a received frame costs one `read` (the socket is drained when a read
//! comes back short: edge-triggered epoll then reports the next byte as a new edge) and a
//! prefix comparison. Timers live in one binary heap; everything a player produces in one turn
//! of the loop (a keystroke, a ping, a pong) leaves in one `write`.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::io;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token, Waker};

use crate::frame::{Decoder, Event, OP_PONG, OP_TEXT};
use crate::game::{classify, fast_progress, write_keystroke, write_ping, GameConfig, In, Stats, LOST_AFTER_NS, PING_REF0};
use crate::now_ns;
use crate::outbuf::OutBuf;
use crate::proto::Protocol;

const WAKER: Token = Token(usize::MAX);

/// Why a player left: a kind for the report and a message.
type Fail = (&'static str, String);

/// A player that has joined its room, handed over by its setup task.
pub(crate) struct Joined {
    pub id: usize,
    pub stream: std::net::TcpStream,
    /// Holds whatever the server sent after the join reply (a lobby update, progress).
    pub dec: Decoder,
    pub out: OutBuf,
    pub passage: String,
    pub you: u64,
    pub racing: bool,
    /// The start of a progress update (read on a fast path) and of a wpm update (skipped).
    pub prefix: Vec<u8>,
    pub skip: Vec<u8>,
}

/// The loop's settings, shared by every player.
struct Rules {
    p: Protocol,
    key_ns: u64,
    ping_ns: u64,
    /// The shortest time between two polls (`--tick-us`).
    tick: Duration,
}

/// A player's clocks are spread over one period, by its id.
fn jitter(id: usize, period: u64) -> u64 {
    (id as u64).wrapping_mul(0x9E37_79B9) % period.max(1)
}

struct Player {
    id: usize,
    sock: TcpStream,
    dec: Decoder,
    out: OutBuf,
    passage: String,
    you: u64,
    racing: bool,
    prefix: Vec<u8>,
    skip: Vec<u8>,
    /// Keystrokes sent, and the byte offset of the next character in the passage.
    pos: usize,
    at: usize,
    next_ping: u64,
    next_key: u64,
    /// (typingIndex expected, sent at)
    pending: VecDeque<(u64, u64)>,
    /// (ref, sent at)
    pings: VecDeque<(u64, u64)>,
    ping_ref: u64,
    /// The time of this player's live entry in the timer heap (0: none); older entries are stale.
    wake: u64,
}

impl Player {
    fn next_wake(&self) -> u64 {
        if self.racing {
            self.next_ping.min(self.next_key)
        } else {
            self.next_ping
        }
    }

    /// What is due at `now`: a ping, a keystroke, a keystroke given up as lost.
    fn tick(&mut self, now: u64, r: &Rules, stats: &Stats, buf: &mut Vec<u8>) {
        if now >= self.next_ping {
            buf.clear();
            write_ping(buf, r.p, self.ping_ref);
            self.out.frame(OP_TEXT, buf);
            self.pings.push_back((self.ping_ref, now));
            self.ping_ref += 1;
            self.next_ping += r.ping_ns;
        }
        if self.racing && now >= self.next_key {
            buf.clear();
            // The passage is not empty (parse_state); after its end, start again.
            let ch = self.passage[self.at..].chars().next().unwrap_or('a');
            self.at += ch.len_utf8();
            if self.at >= self.passage.len() {
                self.at = 0;
            }
            write_keystroke(buf, r.p, ch);
            self.out.frame(OP_TEXT, buf);
            self.pos += 1;
            self.pending.push_back((self.pos as u64, now));
            self.next_key += r.key_ns;
            if self.next_key <= now {
                self.next_key = now + r.key_ns;
            }
            stats.with(|s| s.keystrokes += 1);
        }
        if let Some(&(_, t)) = self.pending.front() {
            if now > t + LOST_AFTER_NS {
                self.pending.pop_front();
                stats.with(|s| s.lost += 1);
                stats.error("lost", "no progress update 5 s after a keystroke");
            }
        }
    }

    /// Read until the socket is drained, handling every complete frame. `closed`: the peer
    /// has shut down its side, so read to the end (a short read would not be the last event).
    fn on_readable(&mut self, closed: bool, r: &Rules, stats: &Stats) -> Result<(), Fail> {
        loop {
            self.dec.prepare_read();
            let spare = self.dec.buf.spare_capacity_mut();
            let space = spare.len();
            // recv(2), not read(2): the socket path, without the file-position lock.
            // SAFETY: recv writes at most `space` bytes into the vector's spare capacity, and
            // `set_len` below covers only the bytes it reports written.
            let n = unsafe { libc::recv(self.sock.as_raw_fd(), spare.as_mut_ptr().cast(), space, 0) };
            if n < 0 {
                let e = io::Error::last_os_error();
                match e.kind() {
                    io::ErrorKind::WouldBlock => return Ok(()),
                    io::ErrorKind::Interrupted => continue,
                    _ => return Err(("disconnect", e.to_string())),
                }
            }
            if n == 0 {
                return Err(("disconnect", "connection closed by the server (EOF)".into()));
            }
            let n = n as usize;
            // SAFETY: the kernel initialised these n bytes (see above).
            unsafe { self.dec.buf.set_len(self.dec.buf.len() + n) };
            self.on_frames(r, stats)?;
            if n < space && !closed {
                return Ok(());
            }
        }
    }

    /// Handle the complete frames in the read buffer.
    fn on_frames(&mut self, r: &Rules, stats: &Stats) -> Result<(), Fail> {
        let now = now_ns();
        loop {
            let m = match self.dec.next_event() {
                Ok(Some(Event::Text(m))) => m,
                Ok(Some(Event::Ping(x))) => {
                    self.out.frame(OP_PONG, x);
                    continue;
                }
                Ok(Some(Event::Close(code, reason))) => return Err(("disconnect", format!("server closed: {code:?} {}", String::from_utf8_lossy(reason)))),
                Ok(Some(_)) => continue,
                Ok(None) => return Ok(()),
                Err(e) => return Err(("protocol", e.to_string())),
            };
            let what = match fast_progress(m, &self.prefix) {
                Some((pid, idx)) => In::Progress(pid, idx),
                None if m.starts_with(&self.skip) => In::Other,
                None => match classify(r.p, m) {
                    Ok(w) => w,
                    Err(e) => {
                        stats.error("protocol", e);
                        continue;
                    }
                },
            };
            match what {
                In::Progress(pid, idx) if pid == self.you => {
                    while let Some(&(want, t)) = self.pending.front() {
                        if want > idx {
                            break;
                        }
                        self.pending.pop_front();
                        if want == idx {
                            stats.with(|s| s.key.saturating_record(((now - t) / 1000).max(1)));
                        }
                    }
                }
                In::Progress(..) | In::Other => {}
                In::Reply(rf, _) => {
                    if let Some(k) = self.pings.iter().position(|&(pr, _)| pr == rf) {
                        let (_, t) = self.pings.remove(k).expect("present");
                        stats.with(|s| s.ping.saturating_record(((now - t) / 1000).max(1)));
                    }
                }
                In::Refused(rf, msg) => stats.error("refused", format!("ref {rf:?}: {msg}")),
                In::Phase(ph) => {
                    if ph == "racing" && !self.racing {
                        self.racing = true;
                        self.next_key = now + jitter(self.id, r.key_ns);
                        stats.racing.fetch_add(1, Ordering::Relaxed);
                    }
                }
                In::Ended => return Err(("ended", "the race ended during the run (passage too short?)".into())),
                In::EioPing(x) => {
                    let mut pong = Vec::with_capacity(1 + x.len());
                    pong.push(b'3');
                    pong.extend_from_slice(&x);
                    self.out.frame(OP_TEXT, &pong);
                }
                In::Closing(why) => return Err(("disconnect", why)),
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        let fd = self.sock.as_raw_fd();
        self.out.flush_with(|b| {
            // send(2) with MSG_NOSIGNAL: a reset connection is an error here, not a SIGPIPE.
            // SAFETY: send reads at most `b.len()` bytes from `b`.
            let n = unsafe { libc::send(fd, b.as_ptr().cast(), b.len(), libc::MSG_NOSIGNAL) };
            if n < 0 {
                Err(io::Error::last_os_error())
            } else {
                Ok(n as usize)
            }
        })
    }
}

struct Loop {
    rules: Rules,
    stats: Arc<Stats>,
    poll: Poll,
    /// Indexed by token; `free` lists the empty slots.
    players: Vec<Option<Player>>,
    free: Vec<usize>,
    timers: BinaryHeap<Reverse<(u64, usize)>>,
    scratch: Vec<u8>,
}

impl Loop {
    fn run(mut self, rx: mpsc::Receiver<Joined>, stop: &AtomicBool) {
        let mut events = Events::with_capacity(1024);
        let mut last_poll = Instant::now();
        let mut full = false;
        loop {
            let now = now_ns();
            while let Some(&Reverse((t, i))) = self.timers.peek() {
                if t > now {
                    break;
                }
                self.timers.pop();
                if let Some(pl) = self.players[i].as_mut().filter(|pl| pl.wake == t) {
                    pl.wake = 0;
                    pl.tick(now, &self.rules, &self.stats, &mut self.scratch);
                    self.settle(i, Ok(()));
                }
            }
            if stop.load(Ordering::Relaxed) {
                return self.close_all();
            }
            // One wake-up a tick, not one a frame: each player receives a frame every 33 ms or
            // so, spread in time, and waking for each cost more than reading it. So the loop
            // sleeps out the rest of the tick, then takes everything that arrived meanwhile
            // (frames are read at most a tick late: latencies err high, by at most that).
            // Not when the last poll filled the event list: there is more waiting.
            let since = last_poll.elapsed();
            if !full && since < self.rules.tick {
                std::thread::sleep(self.rules.tick - since);
            }
            // mio rounds the timeout up to whole milliseconds: timers fire up to 1 ms late
            // (a keystroke is stamped when it is sent, so no latency is lost).
            let timeout = self.timers.peek().map(|&Reverse((t, _))| Duration::from_nanos(t.saturating_sub(now_ns())));
            let polled = self.poll.poll(&mut events, timeout);
            last_poll = Instant::now();
            if let Err(e) = polled {
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                self.stats.error("io", format!("epoll: {e}"));
                return self.close_all();
            }
            full = events.iter().count() == events.capacity();
            for ev in events.iter() {
                if ev.token() == WAKER {
                    while let Ok(j) = rx.try_recv() {
                        self.adopt(j);
                    }
                    continue;
                }
                let i = ev.token().0;
                let Some(pl) = self.players.get_mut(i).and_then(Option::as_mut) else { continue };
                let mut r = Ok(());
                if ev.is_readable() || ev.is_read_closed() || ev.is_error() {
                    r = pl.on_readable(ev.is_read_closed() || ev.is_error(), &self.rules, &self.stats);
                }
                self.settle(i, r);
            }
        }
    }

    /// After a turn of player `i`: write what it queued and set its next wake-up, or let it
    /// go after a failure.
    fn settle(&mut self, i: usize, r: Result<(), Fail>) {
        let Some(pl) = self.players[i].as_mut() else { return };
        let r = r.and_then(|()| pl.flush().map_err(|e| ("io", e.to_string())));
        if let Err(f) = r {
            return self.leave(i, Some(f));
        }
        let w = pl.next_wake();
        if w != pl.wake {
            pl.wake = w;
            self.timers.push(Reverse((w, i)));
        }
    }

    fn adopt(&mut self, j: Joined) {
        let i = self.free.pop().unwrap_or_else(|| {
            self.players.push(None);
            self.players.len() - 1
        });
        // Tokio hands its sockets over non-blocking already; make sure of it.
        let _ = j.stream.set_nonblocking(true);
        let mut sock = TcpStream::from_std(j.stream);
        // Writable too: edge-triggered, it only fires again after the socket was full.
        if let Err(e) = self.poll.registry().register(&mut sock, Token(i), Interest::READABLE | Interest::WRITABLE) {
            self.free.push(i);
            self.stats.connected.fetch_sub(1, Ordering::Relaxed);
            if j.racing {
                self.stats.racing.fetch_sub(1, Ordering::Relaxed);
            }
            return self.stats.error("io", format!("epoll register: {e}"));
        }
        let now = now_ns();
        let (key_ns, ping_ns) = (self.rules.key_ns, self.rules.ping_ns);
        let pl = Player {
            id: j.id,
            sock,
            dec: j.dec,
            out: j.out,
            passage: j.passage,
            you: j.you,
            racing: j.racing,
            prefix: j.prefix,
            skip: j.skip,
            pos: 0,
            at: 0,
            next_ping: now + jitter(j.id, ping_ns),
            next_key: now + jitter(j.id, key_ns),
            pending: VecDeque::new(),
            pings: VecDeque::new(),
            ping_ref: PING_REF0,
            wake: 0,
        };
        let pl = self.players[i].insert(pl);
        // Frames that arrived with the join reply are already in the decoder.
        let r = pl.on_frames(&self.rules, &self.stats);
        self.settle(i, r);
    }

    /// Player `i` leaves: counted as a disconnect (unless the run is stopping), closed.
    fn leave(&mut self, i: usize, failure: Option<Fail>) {
        let Some(mut pl) = self.players[i].take() else { return };
        self.free.push(i);
        self.stats.connected.fetch_sub(1, Ordering::Relaxed);
        if pl.racing {
            self.stats.racing.fetch_sub(1, Ordering::Relaxed);
        }
        if let Some((kind, msg)) = failure {
            if !self.stats.stopping.load(Ordering::Relaxed) {
                self.stats.with(|s| s.disconnects += 1);
                self.stats.error(kind, msg);
            }
        }
        pl.out.close(1000, "done");
        let _ = pl.flush();
        // Dropping the socket closes it, which also takes it out of the epoll set.
    }

    fn close_all(&mut self) {
        for i in 0..self.players.len() {
            self.leave(i, None);
        }
    }
}

/// One play loop on its own thread; players are handed to it with [`LoopHandle::add`].
pub(crate) struct LoopHandle {
    tx: Mutex<mpsc::Sender<Joined>>,
    waker: Waker,
    stop: Arc<AtomicBool>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl LoopHandle {
    pub fn start(cfg: &GameConfig, stats: Arc<Stats>) -> io::Result<LoopHandle> {
        let poll = Poll::new()?;
        let waker = Waker::new(poll.registry(), WAKER)?;
        let (tx, rx) = mpsc::channel();
        let stop = Arc::new(AtomicBool::new(false));
        let rules = Rules { p: cfg.common.protocol, key_ns: (cfg.keystroke_ms * 1e6) as u64, ping_ns: (cfg.ping_ms * 1e6) as u64, tick: Duration::from_micros(cfg.tick_us) };
        let lp = Loop { rules, stats, poll, players: Vec::new(), free: Vec::new(), timers: BinaryHeap::new(), scratch: Vec::with_capacity(128) };
        let flag = stop.clone();
        let thread = std::thread::Builder::new().name("game-loop".into()).spawn(move || lp.run(rx, &flag))?;
        Ok(LoopHandle { tx: Mutex::new(tx), waker, stop, thread: Mutex::new(Some(thread)) })
    }

    /// Hand a joined player to the loop (after the loop stopped, it is only closed).
    pub fn add(&self, j: Joined) {
        let sent = self.tx.lock().unwrap_or_else(|e| e.into_inner()).send(j).is_ok();
        if sent {
            let _ = self.waker.wake();
        }
    }

    /// Close every player and wait for the thread to end.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.waker.wake();
        if let Some(t) = self.thread.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = t.join();
        }
    }
}
