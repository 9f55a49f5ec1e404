//! One player of the game mode's play loop (`game_loop.rs`): its socket, its buffers and
//! clocks, what it sends when a timer is due, and what it makes of each frame it receives.

use std::collections::VecDeque;
use std::io;
use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering;
use std::time::Duration;

use mio::net::TcpStream;

use crate::frame::{Decoder, Event, OP_BINARY, OP_PONG, OP_TEXT};
use crate::game::{classify, compact_ack, exact_batch_items, fast_progress, write_compact_keystroke, write_keystroke, write_ping, In, Stats, LOST_AFTER_NS, PING_REF0};
use crate::now_ns;
use crate::outbuf::OutBuf;
use crate::proto::Protocol;

/// Why a player left: a kind for the report and a message.
pub(crate) type Fail = (&'static str, String);

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
pub(crate) struct Rules {
    pub p: Protocol,
    pub key_ns: u64,
    pub ping_ns: u64,
    /// The shortest time between two polls (`--tick-us`).
    pub tick: Duration,
    /// Keystrokes as binary event frames (`--compact`).
    pub compact: bool,
}

/// A player's clocks are spread over one period, by its id.
fn jitter(id: usize, period: u64) -> u64 {
    (id as u64).wrapping_mul(0x9E37_79B9) % period.max(1)
}

pub(crate) struct Player {
    id: usize,
    pub sock: TcpStream,
    dec: Decoder,
    pub out: OutBuf,
    passage: String,
    you: u64,
    pub racing: bool,
    prefix: Vec<u8>,
    skip: Vec<u8>,
    /// Keystrokes sent, and the byte offset of the next character in the passage.
    pos: usize,
    at: usize,
    next_ping: u64,
    next_key: u64,
    /// (typingIndex expected, sent at): keystrokes not confirmed yet (by the room's progress
    /// update or the binary answer), and, with `--compact` only, keystrokes the room has not
    /// shown yet (without it the room's update is the confirmation: the same queue).
    pending: VecDeque<(u64, u64)>,
    unseen: VecDeque<(u64, u64)>,
    /// (ref, sent at)
    pings: VecDeque<(u64, u64)>,
    ping_ref: u64,
    /// The time of this player's live entry in the timer heap (0: none); older entries are stale.
    pub wake: u64,
}

impl Player {
    pub fn new(j: Joined, now: u64, r: &Rules) -> Player {
        // Tokio hands its sockets over non-blocking already; make sure of it.
        let _ = j.stream.set_nonblocking(true);
        Player {
            id: j.id,
            sock: TcpStream::from_std(j.stream),
            dec: j.dec,
            out: j.out,
            passage: j.passage,
            you: j.you,
            racing: j.racing,
            prefix: j.prefix,
            skip: j.skip,
            pos: 0,
            at: 0,
            next_ping: now + jitter(j.id, r.ping_ns),
            next_key: now + jitter(j.id, r.key_ns),
            pending: VecDeque::new(),
            unseen: VecDeque::new(),
            pings: VecDeque::new(),
            ping_ref: PING_REF0,
            wake: 0,
        }
    }

    pub fn next_wake(&self) -> u64 {
        if self.racing {
            self.next_ping.min(self.next_key)
        } else {
            self.next_ping
        }
    }

    /// What is due at `now`: a ping, a keystroke, a keystroke given up as lost.
    pub fn tick(&mut self, now: u64, r: &Rules, stats: &Stats, buf: &mut Vec<u8>) {
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
            if r.compact {
                write_compact_keystroke(buf, ch);
                self.out.frame(OP_BINARY, buf);
            } else {
                write_keystroke(buf, r.p, ch);
                self.out.frame(OP_TEXT, buf);
            }
            self.pos += 1;
            self.pending.push_back((self.pos as u64, now));
            if r.compact {
                self.unseen.push_back((self.pos as u64, now));
            }
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
        if let Some(&(_, t)) = self.unseen.front() {
            if now > t + LOST_AFTER_NS {
                self.unseen.pop_front();
                stats.with(|s| s.lost += 1);
                stats.error("lost", "the room showed no progress 5 s after a keystroke");
            }
        }
    }

    /// Read until the socket is drained, handling every complete frame. `closed`: the peer
    /// has shut down its side, so read to the end (a short read would not be the last event).
    pub fn on_readable(&mut self, closed: bool, r: &Rules, stats: &Stats) -> Result<(), Fail> {
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
    pub fn on_frames(&mut self, r: &Rules, stats: &Stats) -> Result<(), Fail> {
        // The frames borrow the decoder while on_frame() changes the player: hold the decoder
        // apart meanwhile (moving it is three words; Decoder::new(0) allocates nothing).
        let mut dec = std::mem::replace(&mut self.dec, Decoder::new(0));
        let res = self.decoded(&mut dec, r, stats);
        self.dec = dec;
        res
    }

    fn decoded(&mut self, dec: &mut Decoder, r: &Rules, stats: &Stats) -> Result<(), Fail> {
        let now = now_ns();
        loop {
            let m = match dec.next_event() {
                Ok(Some(Event::Text(m))) => m,
                Ok(Some(Event::Ping(x))) => {
                    self.out.frame(OP_PONG, x);
                    continue;
                }
                Ok(Some(Event::Binary(b))) => {
                    match compact_ack(b).filter(|_| r.compact) {
                        Some(idx) => {
                            if let Some(us) = confirm(&mut self.pending, idx, now) {
                                stats.with(|s| s.key.saturating_record(us));
                            }
                        }
                        None => stats.error("protocol", format!("unexpected binary frame of {} bytes", b.len())),
                    }
                    continue;
                }
                Ok(Some(Event::Close(code, reason))) => return Err(("disconnect", format!("server closed: {code:?} {}", String::from_utf8_lossy(reason)))),
                Ok(Some(_)) => continue,
                Ok(None) => return Ok(()),
                Err(e) => return Err(("protocol", e.to_string())),
            };
            // A server that coalesces publishes sends a topic's events of one tick as a JSON
            // array of the same event objects (docs/protocol.md, "Batches"). Progress and wpm
            // updates in the exact shape the game writes are read in one pass, each up to its
            // end; from the first other item, the rest of the frame is walked as JSON.
            if m.first() == Some(&b'[') {
                // The prefixes are held apart while the callback changes the player (moving a Vec allocates nothing).
                let (prefix, skip) = (std::mem::take(&mut self.prefix), std::mem::take(&mut self.skip));
                let at = exact_batch_items(m, &prefix, &skip, |pid, idx| self.on_progress(pid, idx, now, r.compact, stats));
                (self.prefix, self.skip) = (prefix, skip);
                if at == m.len() {
                    continue;
                }
                for item in crate::json::items_from(m, at) {
                    match item {
                        Ok(one) => self.on_frame(one, now, r, stats)?,
                        Err(e) => stats.error("protocol", e.to_string()),
                    }
                }
                continue;
            }
            self.on_frame(m, now, r, stats)?;
        }
    }

    /// One protocol message: a frame, or one event of a batch frame.
    fn on_frame(&mut self, m: &[u8], now: u64, r: &Rules, stats: &Stats) -> Result<(), Fail> {
        let what = match fast_progress(m, &self.prefix) {
            Some((pid, idx)) => In::Progress(pid, idx),
            None if m.starts_with(&self.skip) => In::Other,
            None => match classify(r.p, m) {
                Ok(w) => w,
                Err(e) => {
                    stats.error("protocol", e);
                    return Ok(());
                }
            },
        };
        match what {
            In::Progress(pid, idx) => self.on_progress(pid, idx, now, r.compact, stats),
            In::Other => {}
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
        Ok(())
    }

    /// A progress update of the room: this player's own confirms its keystrokes up to `idx`
    /// and shows them to the room. Without `--compact` it is their only confirmation, so the
    /// keystroke's latency is both its key and its view latency.
    fn on_progress(&mut self, pid: u64, idx: u64, now: u64, compact: bool, stats: &Stats) {
        if pid != self.you {
            return;
        }
        let key = confirm(&mut self.pending, idx, now);
        let view = if compact { confirm(&mut self.unseen, idx, now) } else { key };
        if key.is_some() || view.is_some() {
            stats.with(|s| {
                if let Some(us) = key {
                    s.key.saturating_record(us);
                }
                if let Some(us) = view {
                    s.view.saturating_record(us);
                }
            });
        }
    }

    pub fn flush(&mut self) -> io::Result<()> {
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

/// Keystrokes up to typingIndex `idx` leave the queue `q`: the latency (µs, at least 1) of the
/// one that reached it, when it was there (earlier ones were merged into it: a batch, a tick).
fn confirm(q: &mut VecDeque<(u64, u64)>, idx: u64, now: u64) -> Option<u64> {
    let mut reached = None;
    while let Some(&(want, t)) = q.front() {
        if want > idx {
            break;
        }
        q.pop_front();
        if want == idx {
            reached = Some(((now - t) / 1000).max(1));
        }
    }
    reached
}
