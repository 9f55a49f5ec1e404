//! The game mode's play phase: one epoll loop (mio) over every player that has joined its
//! room. Tokio still does each player's setup (matchmaking, handshake, join), which is short
//! and rare; then the socket leaves tokio for this loop, on a thread of its own.
//!
//! Why: with one tokio task per player, every received frame (30 a second per player: six
//! players a room, five keystrokes a second each) cost a task wake, a fresh timer entry and a
//! watch-channel registration besides the read, and the generator saturated its core at about
//! 3,600 players. Here a received frame costs one `recv` (the socket is drained when a read
//! comes back short: edge-triggered epoll then reports the next byte as a new edge) and a
//! prefix comparison; the loop wakes at most once a tick (`--tick-us`). Timers live in one
//! binary heap; everything a player produces in one turn of the loop (a keystroke, a ping, a
//! pong) leaves in one `send`. One player's state and handling: `game_player.rs`.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use mio::{Events, Interest, Poll, Token, Waker};

use crate::game::{GameConfig, Stats};
use crate::game_player::{Fail, Player, Rules};
pub(crate) use crate::game_player::Joined;
use crate::now_ns;

const WAKER: Token = Token(usize::MAX);

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
        let mut pl = Player::new(j, now_ns(), &self.rules);
        // Writable too: edge-triggered, it only fires again after the socket was full.
        if let Err(e) = self.poll.registry().register(&mut pl.sock, Token(i), Interest::READABLE | Interest::WRITABLE) {
            self.free.push(i);
            self.stats.connected.fetch_sub(1, Ordering::Relaxed);
            if pl.racing {
                self.stats.racing.fetch_sub(1, Ordering::Relaxed);
            }
            return self.stats.error("io", format!("epoll register: {e}"));
        }
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
        let rules = Rules { p: cfg.common.protocol, key_ns: (cfg.keystroke_ms * 1e6) as u64, ping_ns: (cfg.ping_ms * 1e6) as u64, tick: Duration::from_micros(cfg.tick_us), compact: cfg.compact };
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
