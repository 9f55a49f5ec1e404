//! The write side of a connection, independent of the socket type: masked frames are
//! appended to one buffer, and a flush hands the whole unwritten part to one `write`. So every
//! frame a connection produces in one turn of its loop (a keystroke, a ping, a pong) leaves
//! in one system call, and the tokio setup code and the epoll play loop share it.

use std::io;

use crate::frame;
use crate::Rng;

pub struct OutBuf {
    buf: Vec<u8>,
    pos: usize,
    pub rng: Rng,
}

impl OutBuf {
    pub fn new(capacity: usize, rng: Rng) -> OutBuf {
        OutBuf { buf: Vec::with_capacity(capacity), pos: 0, rng }
    }

    /// Queue one masked frame (the payload is masked while it is copied in).
    pub fn frame(&mut self, opcode: u8, payload: &[u8]) {
        let mask = self.rng.mask();
        frame::encode_frame(&mut self.buf, true, opcode, payload, Some(mask));
    }

    /// Queue a masked close frame.
    pub fn close(&mut self, code: u16, reason: &str) {
        let mask = self.rng.mask();
        frame::encode_close(&mut self.buf, code, reason, Some(mask));
    }

    /// Bytes queued but not written yet.
    pub fn pending(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// Write as much as `write` takes now: it is called with everything unwritten until it
    /// returns `WouldBlock` or all is gone (normally once).
    pub fn flush_with(&mut self, mut write: impl FnMut(&[u8]) -> io::Result<usize>) -> io::Result<()> {
        while self.pos < self.buf.len() {
            match write(&self.buf[self.pos..]) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => self.pos += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        if self.pos == self.buf.len() {
            self.buf.clear();
            self.pos = 0;
        } else if self.pos > (1 << 20) && self.pos > self.buf.len() / 2 {
            // A slow socket: drop what was written instead of growing forever.
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::{Decoder, Event, OP_PING, OP_TEXT};

    /// Frames queued in one turn leave in one write, and decode back to what was queued.
    #[test]
    fn one_write_per_flush_and_frames_round_trip() {
        let mut o = OutBuf::new(64, Rng::new(7));
        o.frame(OP_TEXT, b"keystroke");
        o.frame(OP_PING, b"p");
        o.frame(OP_TEXT, &[b'x'; 300]);
        let queued = o.pending();
        assert_eq!(queued, (2 + 4 + 9) + (2 + 4 + 1) + (4 + 4 + 300));
        let mut writes = Vec::new();
        o.flush_with(|b| {
            writes.push(b.to_vec());
            Ok(b.len())
        })
        .unwrap();
        assert_eq!(writes.len(), 1);
        assert_eq!(o.pending(), 0);
        let mut d = Decoder::new(64);
        d.feed(&writes[0]);
        assert_eq!(d.next_event().unwrap(), Some(Event::Text(b"keystroke")));
        assert_eq!(d.next_event().unwrap(), Some(Event::Ping(b"p")));
        assert_eq!(d.next_event().unwrap(), Some(Event::Text(&[b'x'; 300])));
        assert_eq!(d.next_event().unwrap(), None);
    }

    /// A partial write keeps the rest; `WouldBlock` stops without an error; a zero write or
    /// another error is reported.
    #[test]
    fn partial_writes_and_errors() {
        let mut o = OutBuf::new(8, Rng::new(1));
        o.frame(OP_TEXT, b"0123456789");
        let total = o.pending();
        let mut calls = 0;
        o.flush_with(|_| {
            calls += 1;
            if calls == 1 {
                Ok(5)
            } else {
                Err(io::ErrorKind::WouldBlock.into())
            }
        })
        .unwrap();
        assert_eq!((calls, o.pending()), (2, total - 5));
        let mut rest = Vec::new();
        o.flush_with(|b| {
            rest.extend_from_slice(b);
            Ok(b.len())
        })
        .unwrap();
        assert_eq!((rest.len(), o.pending()), (total - 5, 0));
        o.frame(OP_TEXT, b"a");
        assert_eq!(o.flush_with(|_| Ok(0)).unwrap_err().kind(), io::ErrorKind::WriteZero);
        assert_eq!(o.flush_with(|_| Err(io::ErrorKind::BrokenPipe.into())).unwrap_err().kind(), io::ErrorKind::BrokenPipe);
        // Masked: the payload bytes never appear in clear (for this key), and the mask bit is set.
        let mut m = OutBuf::new(8, Rng::new(3));
        m.frame(OP_TEXT, b"aaaa");
        let mut w = Vec::new();
        m.flush_with(|b| {
            w.extend_from_slice(b);
            Ok(b.len())
        })
        .unwrap();
        assert_eq!(w[1] & 0x80, 0x80);
        assert_ne!(&w[6..10], b"aaaa");
    }
}
