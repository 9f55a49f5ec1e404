//! WebSocket framing (RFC 6455, section 5), written for a client: frames we send are
//! masked, frames we receive are normally not (the decoder accepts both, which the tests
//! and the in-process test server use).
//!
//! The decoder owns one growable read buffer. `Decoder::next_event` hands out slices into
//! that buffer (zero copy) for unfragmented messages; fragmented messages are reassembled
//! into a separate buffer. Control frames may arrive between the fragments of a message and
//! are delivered at once, as the RFC requires.

use std::fmt;

pub const OP_CONT: u8 = 0x0;
pub const OP_TEXT: u8 = 0x1;
pub const OP_BINARY: u8 = 0x2;
pub const OP_CLOSE: u8 = 0x8;
pub const OP_PING: u8 = 0x9;
pub const OP_PONG: u8 = 0xA;

/// XOR `data` with the 4-byte masking key. The key pattern starts at `data[0]`.
pub fn apply_mask(data: &mut [u8], key: [u8; 4]) {
    let k8 = u64::from_ne_bytes([key[0], key[1], key[2], key[3], key[0], key[1], key[2], key[3]]);
    let mut chunks = data.chunks_exact_mut(8);
    for c in &mut chunks {
        let v = u64::from_ne_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]) ^ k8;
        c.copy_from_slice(&v.to_ne_bytes());
    }
    // Every 8-byte chunk is a multiple of 4, so the key phase of the tail is 0 again.
    for (i, b) in chunks.into_remainder().iter_mut().enumerate() {
        *b ^= key[i & 3];
    }
}

/// Append the header of a frame (FIN flag, opcode, mask bit and length) to `out`.
pub fn encode_header(out: &mut Vec<u8>, fin: bool, opcode: u8, len: usize, mask: Option<[u8; 4]>) {
    out.push(if fin { 0x80 } else { 0 } | (opcode & 0x0F));
    let mbit = if mask.is_some() { 0x80 } else { 0 };
    if len < 126 {
        out.push(mbit | len as u8);
    } else if len <= 0xFFFF {
        out.push(mbit | 126);
        out.extend_from_slice(&(len as u16).to_be_bytes());
    } else {
        out.push(mbit | 127);
        out.extend_from_slice(&(len as u64).to_be_bytes());
    }
    if let Some(k) = mask {
        out.extend_from_slice(&k);
    }
}

/// Append one complete frame to `out`; with `mask`, the payload is masked while copied.
pub fn encode_frame(out: &mut Vec<u8>, fin: bool, opcode: u8, payload: &[u8], mask: Option<[u8; 4]>) {
    encode_header(out, fin, opcode, payload.len(), mask);
    let start = out.len();
    out.extend_from_slice(payload);
    if let Some(k) = mask {
        apply_mask(&mut out[start..], k);
    }
}

/// Append a close frame with a status code and a UTF-8 reason (at most 123 bytes).
pub fn encode_close(out: &mut Vec<u8>, code: u16, reason: &str, mask: Option<[u8; 4]>) {
    let mut p = Vec::with_capacity(2 + reason.len());
    p.extend_from_slice(&code.to_be_bytes());
    let r = reason.as_bytes();
    p.extend_from_slice(&r[..r.len().min(123)]);
    encode_frame(out, true, OP_CLOSE, &p, mask);
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrameError {
    ReservedBits,
    UnknownOpcode(u8),
    FragmentedControl,
    ControlTooLong,
    UnexpectedContinuation,
    ExpectedContinuation,
    LengthMsb,
    TooBig(u64),
    BadClosePayload,
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::ReservedBits => write!(f, "reserved bits set (no extension was negotiated)"),
            FrameError::UnknownOpcode(o) => write!(f, "unknown opcode {o:#x}"),
            FrameError::FragmentedControl => write!(f, "fragmented control frame"),
            FrameError::ControlTooLong => write!(f, "control frame payload over 125 bytes"),
            FrameError::UnexpectedContinuation => write!(f, "continuation frame without a message to continue"),
            FrameError::ExpectedContinuation => write!(f, "new data frame inside a fragmented message"),
            FrameError::LengthMsb => write!(f, "64-bit length with the most significant bit set"),
            FrameError::TooBig(n) => write!(f, "message of {n} bytes is over the size limit"),
            FrameError::BadClosePayload => write!(f, "close frame payload of 1 byte"),
        }
    }
}

impl std::error::Error for FrameError {}

/// What the decoder produces: whole messages and control frames.
#[derive(Debug, PartialEq, Eq)]
pub enum Event<'a> {
    Text(&'a [u8]),
    Binary(&'a [u8]),
    Ping(&'a [u8]),
    Pong(&'a [u8]),
    /// Close with the status code (None when the frame had no payload) and reason bytes.
    Close(Option<u16>, &'a [u8]),
}

pub struct Decoder {
    /// Bytes read from the socket; `buf[pos..]` is not yet decoded.
    pub buf: Vec<u8>,
    pos: usize,
    /// Opcode of the fragmented message being reassembled, if any.
    frag_op: Option<u8>,
    frag: Vec<u8>,
    /// Largest message (or frame) accepted.
    pub max_message: usize,
    /// How much free space to guarantee before each read.
    pub read_chunk: usize,
}

impl Decoder {
    pub fn new(read_chunk: usize) -> Decoder {
        Decoder {
            buf: Vec::with_capacity(read_chunk),
            pos: 0,
            frag_op: None,
            frag: Vec::new(),
            max_message: 64 << 20,
            read_chunk,
        }
    }

    /// Bytes buffered but not decoded yet.
    pub fn pending(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// Append bytes (used for the bytes that followed the handshake response, and by tests).
    pub fn feed(&mut self, data: &[u8]) {
        self.prepare_read();
        self.buf.extend_from_slice(data);
    }

    /// Make room for a read: drop decoded bytes and make sure `read_chunk` bytes are free.
    /// Call before appending to `buf` (for example with `try_read_buf`).
    pub fn prepare_read(&mut self) {
        if self.pos > 0 {
            if self.pos == self.buf.len() {
                self.buf.clear();
            } else {
                self.buf.copy_within(self.pos.., 0);
                let n = self.buf.len() - self.pos;
                self.buf.truncate(n);
            }
            self.pos = 0;
        }
        let free = self.buf.capacity() - self.buf.len();
        if free < self.read_chunk {
            self.buf.reserve(self.read_chunk);
        }
    }

    /// Decode the next message or control frame, or `Ok(None)` when more bytes are needed.
    pub fn next_event(&mut self) -> Result<Option<Event<'_>>, FrameError> {
        loop {
            let avail = &self.buf[self.pos..];
            if avail.len() < 2 {
                return Ok(None);
            }
            let b0 = avail[0];
            let b1 = avail[1];
            if b0 & 0x70 != 0 {
                return Err(FrameError::ReservedBits);
            }
            let fin = b0 & 0x80 != 0;
            let op = b0 & 0x0F;
            let masked = b1 & 0x80 != 0;
            let len7 = (b1 & 0x7F) as u64;
            let mut hlen = 2usize;
            let len = match len7 {
                126 => {
                    if avail.len() < 4 {
                        return Ok(None);
                    }
                    hlen = 4;
                    u16::from_be_bytes([avail[2], avail[3]]) as u64
                }
                127 => {
                    if avail.len() < 10 {
                        return Ok(None);
                    }
                    hlen = 10;
                    let mut a = [0u8; 8];
                    a.copy_from_slice(&avail[2..10]);
                    let v = u64::from_be_bytes(a);
                    if v >> 63 != 0 {
                        return Err(FrameError::LengthMsb);
                    }
                    v
                }
                n => n,
            };
            let is_control = op & 0x8 != 0;
            match op {
                OP_CONT | OP_TEXT | OP_BINARY | OP_CLOSE | OP_PING | OP_PONG => {}
                o => return Err(FrameError::UnknownOpcode(o)),
            }
            if is_control {
                if !fin {
                    return Err(FrameError::FragmentedControl);
                }
                if len > 125 {
                    return Err(FrameError::ControlTooLong);
                }
            }
            let total_msg = if op == OP_CONT { self.frag.len() as u64 + len } else { len };
            if total_msg > self.max_message as u64 {
                return Err(FrameError::TooBig(total_msg));
            }
            let mut key = [0u8; 4];
            if masked {
                if avail.len() < hlen + 4 {
                    return Ok(None);
                }
                key.copy_from_slice(&avail[hlen..hlen + 4]);
                hlen += 4;
            }
            let len = len as usize;
            if avail.len() < hlen + len {
                // Grow the buffer once for a large frame instead of chunk by chunk.
                let need = hlen + len;
                if self.buf.capacity() - self.pos < need {
                    self.buf.reserve(need - (self.buf.len() - self.pos));
                }
                return Ok(None);
            }
            let start = self.pos + hlen;
            let end = start + len;
            self.pos = end;
            if masked {
                apply_mask(&mut self.buf[start..end], key);
            }
            match op {
                OP_PING => return Ok(Some(Event::Ping(&self.buf[start..end]))),
                OP_PONG => return Ok(Some(Event::Pong(&self.buf[start..end]))),
                OP_CLOSE => {
                    let p = &self.buf[start..end];
                    return match p.len() {
                        0 => Ok(Some(Event::Close(None, &[]))),
                        1 => Err(FrameError::BadClosePayload),
                        _ => Ok(Some(Event::Close(Some(u16::from_be_bytes([p[0], p[1]])), &p[2..]))),
                    };
                }
                OP_TEXT | OP_BINARY => {
                    if self.frag_op.is_some() {
                        return Err(FrameError::ExpectedContinuation);
                    }
                    if fin {
                        let p = &self.buf[start..end];
                        return Ok(Some(if op == OP_TEXT { Event::Text(p) } else { Event::Binary(p) }));
                    }
                    self.frag_op = Some(op);
                    self.frag.clear();
                    self.frag.extend_from_slice(&self.buf[start..end]);
                    // Keep decoding: the message is not complete.
                }
                _ => {
                    // OP_CONT
                    let Some(fop) = self.frag_op else {
                        return Err(FrameError::UnexpectedContinuation);
                    };
                    self.frag.extend_from_slice(&self.buf[start..end]);
                    if fin {
                        self.frag_op = None;
                        let p = &self.frag[..];
                        return Ok(Some(if fop == OP_TEXT { Event::Text(p) } else { Event::Binary(p) }));
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: [u8; 4] = [0x37, 0xfa, 0x21, 0x3d];

    fn decode_all(bytes: &[u8]) -> Vec<String> {
        let mut d = Decoder::new(64);
        d.feed(bytes);
        let mut out = Vec::new();
        while let Some(ev) = d.next_event().unwrap() {
            out.push(match ev {
                Event::Text(p) => format!("text:{}", String::from_utf8_lossy(p)),
                Event::Binary(p) => format!("binary:{}", p.len()),
                Event::Ping(p) => format!("ping:{}", String::from_utf8_lossy(p)),
                Event::Pong(p) => format!("pong:{}", String::from_utf8_lossy(p)),
                Event::Close(c, r) => format!("close:{:?}:{}", c, String::from_utf8_lossy(r)),
            });
        }
        assert_eq!(d.pending(), 0);
        out
    }

    #[test]
    fn rfc_examples_unmasked_and_masked_hello() {
        // RFC 6455 5.7: single-frame unmasked and masked text "Hello".
        assert_eq!(decode_all(&[0x81, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f]), vec!["text:Hello"]);
        let masked = [0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58];
        assert_eq!(decode_all(&masked), vec!["text:Hello"]);
        let mut enc = Vec::new();
        encode_frame(&mut enc, true, OP_TEXT, b"Hello", Some(KEY));
        assert_eq!(enc, masked);
        // RFC 5.7: fragmented unmasked "Hel" + "lo".
        let frag = [0x01, 0x03, 0x48, 0x65, 0x6c, 0x80, 0x02, 0x6c, 0x6f];
        assert_eq!(decode_all(&frag), vec!["text:Hello"]);
        // RFC 5.7: unmasked ping "Hello".
        assert_eq!(decode_all(&[0x89, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f]), vec!["ping:Hello"]);
    }

    #[test]
    fn mask_roundtrip_all_lengths_and_offsets() {
        for len in 0..40usize {
            let orig: Vec<u8> = (0..len).map(|i| (i * 7 + 3) as u8).collect();
            let mut m = orig.clone();
            apply_mask(&mut m, KEY);
            for (i, b) in m.iter().enumerate() {
                assert_eq!(*b, orig[i] ^ KEY[i % 4]);
            }
            apply_mask(&mut m, KEY);
            assert_eq!(m, orig);
        }
    }

    #[test]
    fn three_length_encodings() {
        for (len, hdr_len, marker) in [(0usize, 2usize, 0u8), (125, 2, 125), (126, 4, 126), (65535, 4, 126), (65536, 10, 127), (200_000, 10, 127)] {
            let payload: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
            let mut enc = Vec::new();
            encode_frame(&mut enc, true, OP_BINARY, &payload, None);
            assert_eq!(enc.len(), hdr_len + len, "len {len}");
            assert_eq!(enc[1] & 0x7F, marker);
            if hdr_len == 4 {
                assert_eq!(u16::from_be_bytes([enc[2], enc[3]]) as usize, len);
            }
            if hdr_len == 10 {
                assert_eq!(u64::from_be_bytes(enc[2..10].try_into().unwrap()) as usize, len);
            }
            // masked variant round-trips through the decoder, fed in small pieces
            let mut menc = Vec::new();
            encode_frame(&mut menc, true, OP_BINARY, &payload, Some(KEY));
            assert_eq!(menc.len(), hdr_len + 4 + len);
            assert_eq!(menc[1] & 0x80, 0x80);
            let mut d = Decoder::new(16);
            let mut got = None;
            for piece in menc.chunks(7777) {
                d.feed(piece);
                if let Some(Event::Binary(p)) = d.next_event().unwrap() {
                    got = Some(p.to_vec());
                }
            }
            assert_eq!(got.as_deref(), Some(&payload[..]), "len {len}");
        }
    }

    #[test]
    fn partial_header_needs_more_bytes() {
        let mut enc = Vec::new();
        encode_frame(&mut enc, true, OP_TEXT, &[b'a'; 300], Some(KEY));
        let mut d = Decoder::new(8);
        for (i, b) in enc.iter().enumerate() {
            d.feed(&[*b]);
            let ev = d.next_event().unwrap();
            if i + 1 < enc.len() {
                assert!(ev.is_none(), "byte {i}");
            } else {
                assert_eq!(ev, Some(Event::Text(&[b'a'; 300])));
            }
        }
    }

    #[test]
    fn fragmented_with_interleaved_control_frames() {
        let mut enc = Vec::new();
        encode_frame(&mut enc, false, OP_BINARY, b"abc", Some(KEY));
        encode_frame(&mut enc, true, OP_PING, b"p1", Some(KEY));
        encode_frame(&mut enc, false, OP_CONT, b"def", None);
        encode_frame(&mut enc, true, OP_PONG, b"p2", None);
        encode_frame(&mut enc, false, OP_CONT, &[], Some(KEY));
        encode_frame(&mut enc, true, OP_CONT, b"gh", Some(KEY));
        encode_frame(&mut enc, true, OP_TEXT, b"after", Some(KEY));
        encode_frame(&mut enc, false, OP_TEXT, "h\u{e9}".as_bytes(), None);
        encode_frame(&mut enc, true, OP_CONT, "llo".as_bytes(), None);
        assert_eq!(
            decode_all(&enc),
            vec!["ping:p1", "pong:p2", "binary:8", "text:after", "text:h\u{e9}llo"]
        );
        // and the reassembled content is right
        let mut d = Decoder::new(64);
        d.feed(&enc);
        let mut msgs = Vec::new();
        while let Some(ev) = d.next_event().unwrap() {
            if let Event::Binary(p) = ev {
                msgs.push(p.to_vec());
            }
        }
        assert_eq!(msgs, vec![b"abcdefgh".to_vec()]);
    }

    #[test]
    fn close_frames() {
        let mut enc = Vec::new();
        encode_close(&mut enc, 1000, "bye", Some(KEY));
        encode_close(&mut enc, 4429, "too slow", None);
        encode_frame(&mut enc, true, OP_CLOSE, &[], None);
        assert_eq!(decode_all(&enc), vec!["close:Some(1000):bye", "close:Some(4429):too slow", "close:None:"]);
        let mut bad = Vec::new();
        encode_frame(&mut bad, true, OP_CLOSE, &[3], None);
        let mut d = Decoder::new(8);
        d.feed(&bad);
        assert_eq!(d.next_event(), Err(FrameError::BadClosePayload));
    }

    #[test]
    fn protocol_errors() {
        let cases: Vec<(Vec<u8>, FrameError)> = vec![
            (vec![0xC1, 0x00], FrameError::ReservedBits),
            (vec![0x83, 0x00], FrameError::UnknownOpcode(3)),
            (vec![0x09, 0x00], FrameError::FragmentedControl),
            (vec![0x80, 0x00], FrameError::UnexpectedContinuation),
            (vec![0x01, 0x01, b'a', 0x81, 0x00], FrameError::ExpectedContinuation),
            (vec![0x82, 0x7F, 0x80, 0, 0, 0, 0, 0, 0, 0], FrameError::LengthMsb),
        ];
        for (bytes, want) in cases {
            let mut d = Decoder::new(8);
            d.feed(&bytes);
            let mut r = d.next_event().map(|_| ());
            if r.is_ok() {
                r = d.next_event().map(|_| ());
            }
            assert_eq!(r, Err(want));
        }
        let mut long_ping = Vec::new();
        encode_header(&mut long_ping, true, OP_PING, 126, None);
        long_ping.extend_from_slice(&[0; 126]);
        let mut d = Decoder::new(8);
        d.feed(&long_ping);
        assert_eq!(d.next_event(), Err(FrameError::ControlTooLong));
        let mut d = Decoder::new(8);
        d.max_message = 10;
        d.feed(&[0x82, 11]);
        assert_eq!(d.next_event(), Err(FrameError::TooBig(11)));
    }
}
