//! Application payloads and the three wire protocols: raw WebSocket messages, Tachyon's JSON
//! protocol (docs/protocol.md) and Socket.IO v4 over Engine.IO v4 (websocket transport only).

use crate::json;
use std::borrow::Cow;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    Raw,
    Tachyon,
    SocketIo,
}

impl Protocol {
    pub fn parse(s: &str) -> Result<Protocol, String> {
        match s {
            "raw" => Ok(Protocol::Raw),
            "tachyon" => Ok(Protocol::Tachyon),
            "socketio" | "socket.io" => Ok(Protocol::SocketIo),
            _ => Err(format!("unknown protocol {s:?} (raw, tachyon or socketio)")),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Protocol::Raw => "raw",
            Protocol::Tachyon => "tachyon",
            Protocol::SocketIo => "socketio",
        }
    }
}

/// What every measured message carries: sender id, per-sender sequence number (from 1) and
/// the send time in nanoseconds since the loadgen's monotonic origin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Payload {
    pub s: u32,
    pub n: u64,
    pub t: u64,
}

/// Append `v` in decimal.
pub fn push_u64(out: &mut Vec<u8>, mut v: u64) {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(&tmp[i..]);
}

fn digits(mut v: u64) -> usize {
    let mut d = 1;
    while v >= 10 {
        v /= 10;
        d += 1;
    }
    d
}

/// Length of the JSON payload object with an empty padding string.
pub fn json_payload_min_len(p: &Payload) -> usize {
    23 + digits(p.s as u64) + digits(p.n) + digits(p.t)
}

/// Append the payload object `{"s":..,"n":..,"t":..,"p":"xxx"}`, padded with `x` so that
/// it is exactly `size` bytes long (or as short as possible when `size` is too small).
pub fn write_json_payload(out: &mut Vec<u8>, p: &Payload, size: usize) {
    let pad = size.saturating_sub(json_payload_min_len(p));
    out.extend_from_slice(b"{\"s\":");
    push_u64(out, p.s as u64);
    out.extend_from_slice(b",\"n\":");
    push_u64(out, p.n);
    out.extend_from_slice(b",\"t\":");
    push_u64(out, p.t);
    out.extend_from_slice(b",\"p\":\"");
    out.resize(out.len() + pad, b'x');
    out.extend_from_slice(b"\"}");
}

/// Read `s`, `n` and `t` from a payload object (other members are ignored).
pub fn parse_json_payload(v: &[u8]) -> Option<Payload> {
    // Every payload the servers pass on is one that write_json_payload wrote: read that shape
    // in one pass. In fan-out the generic walk below was 40% of the generator's own CPU (perf:
    // skip_value_depth, skip_string, as_u64), more than its reads from the socket.
    if let Some(p) = parse_exact_json_payload(v) {
        return Some(p);
    }
    let (mut s, mut n, mut t) = (None, None, None);
    json::for_each_member(v, |k, val| {
        match k {
            b"s" => s = json::as_u64(val),
            b"n" => n = json::as_u64(val),
            b"t" => t = json::as_u64(val),
            _ => {}
        }
        true
    })
    .ok()?;
    Some(Payload { s: u32::try_from(s?).ok()?, n: n?, t: t? })
}

/// `{"s":S,"n":N,"t":T,"p":"x…"}` exactly as [`write_json_payload`] writes it, or None for
/// anything else (which the generic walk then reads, or refuses).
fn parse_exact_json_payload(v: &[u8]) -> Option<Payload> {
    exact_enveloped_payload(v, b"", b"")
}

/// The payload object of [`write_json_payload`]'s shape at the start of `v`, and the bytes after it.
fn exact_json_payload_head(v: &[u8]) -> Option<(Payload, &[u8])> {
    let rest = v.strip_prefix(b"{\"s\":")?;
    let (s, rest) = json::leading_u64(rest)?;
    let (n, rest) = json::leading_u64(rest.strip_prefix(b",\"n\":")?)?;
    let (t, rest) = json::leading_u64(rest.strip_prefix(b",\"t\":")?)?;
    let pad = rest.strip_prefix(b",\"p\":\"")?;
    let xs = pad.iter().position(|&c| c != b'x').unwrap_or(pad.len());
    let rest = pad[xs..].strip_prefix(b"\"}")?;
    Some((Payload { s: u32::try_from(s).ok()?, n, t }, rest))
}

/// Byte `i` of the padding of binary payloads (a pattern with a period of 256 bytes).
#[inline]
pub fn pad_byte(i: usize) -> u8 {
    (i as u8).wrapping_mul(31).wrapping_add(7)
}

/// Two periods of the binary padding, so that any 256-byte run of it is one slice.
static PAD_TABLE: [u8; 512] = {
    let mut t = [0u8; 512];
    let mut i = 0;
    while i < 512 {
        t[i] = (i as u8).wrapping_mul(31).wrapping_add(7);
        i += 1;
    }
    t
};

static X_TABLE: [u8; 256] = [b'x'; 256];

/// Append the binary padding bytes for payload offsets `from..to`.
fn push_pad(out: &mut Vec<u8>, from: usize, to: usize) {
    out.reserve(to.saturating_sub(from));
    let mut i = from;
    while i < to {
        let off = i % 256;
        let n = (to - i).min(256);
        out.extend_from_slice(&PAD_TABLE[off..off + n]);
        i += n;
    }
}

/// Check that `m` holds the binary padding for payload offsets starting at `from`.
fn check_pad(m: &[u8], from: usize) -> bool {
    m.chunks(256).enumerate().all(|(k, c)| {
        let off = (from + k * 256) % 256;
        c == &PAD_TABLE[off..off + c.len()]
    })
}

/// Check that `m` is all `x`.
fn check_x(m: &[u8]) -> bool {
    m.chunks(256).all(|c| c == &X_TABLE[..c.len()])
}

pub const RAW_BIN_ECHO_MIN: usize = 8;
pub const RAW_TEXT_ECHO_MIN: usize = 11;
pub const RAW_BIN_FANOUT_MIN: usize = 20;

/// Raw binary echo message: 8-byte little-endian timestamp, then padding.
pub fn write_raw_binary_echo(out: &mut Vec<u8>, t: u64, size: usize) {
    out.extend_from_slice(&t.to_le_bytes());
    push_pad(out, 8, size.max(8));
}

/// Check a raw binary echo and return its timestamp.
pub fn parse_raw_binary_echo(m: &[u8], size: usize) -> Option<u64> {
    if m.len() != size.max(8) || !check_pad(&m[8..], 8) {
        return None;
    }
    Some(u64::from_le_bytes(m[..8].try_into().ok()?))
}

/// Base64url digits used for the raw text echo timestamp.
const B64URL: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Raw text echo message: the timestamp as 11 base64url digits (big-endian, 6 bits each; the
/// first digit holds the top 4 bits), then `x` padding. 11 bytes is the smallest message.
pub fn write_raw_text_echo(out: &mut Vec<u8>, t: u64, size: usize) {
    for i in (0..RAW_TEXT_ECHO_MIN).rev() {
        out.push(B64URL[((t >> (i * 6)) & 0x3F) as usize]);
    }
    out.resize(out.len() + size.saturating_sub(RAW_TEXT_ECHO_MIN), b'x');
}

pub fn parse_raw_text_echo(m: &[u8], size: usize) -> Option<u64> {
    if m.len() != size.max(RAW_TEXT_ECHO_MIN) || !check_x(&m[RAW_TEXT_ECHO_MIN..]) {
        return None;
    }
    let mut t: u64 = 0;
    for (i, &c) in m[..RAW_TEXT_ECHO_MIN].iter().enumerate() {
        let d = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'-' => 62,
            b'_' => 63,
            _ => return None,
        } as u64;
        // The first digit carries only the top 4 bits of the 64.
        if i == 0 && d > 0xF {
            return None;
        }
        t = (t << 6) | d;
    }
    Some(t)
}

/// Raw binary fan-out message: t (u64 LE), s (u32 LE), n (u64 LE), then padding.
pub fn write_raw_binary_fanout(out: &mut Vec<u8>, p: &Payload, size: usize) {
    out.extend_from_slice(&p.t.to_le_bytes());
    out.extend_from_slice(&p.s.to_le_bytes());
    out.extend_from_slice(&p.n.to_le_bytes());
    push_pad(out, RAW_BIN_FANOUT_MIN, size.max(RAW_BIN_FANOUT_MIN));
}

pub fn parse_raw_binary_fanout(m: &[u8]) -> Option<Payload> {
    if m.len() < RAW_BIN_FANOUT_MIN {
        return None;
    }
    Some(Payload {
        t: u64::from_le_bytes(m[0..8].try_into().ok()?),
        s: u32::from_le_bytes(m[8..12].try_into().ok()?),
        n: u64::from_le_bytes(m[12..20].try_into().ok()?),
    })
}

// ---------------------------------------------------------------- Tachyon

/// `{"type":"subscribe","topic":"<topic>","ref":<r>}`
pub fn tachyon_subscribe(topic: &str, r: u64) -> Vec<u8> {
    let mut s = String::from("{\"type\":\"subscribe\",\"topic\":");
    json::write_str(&mut s, topic);
    s.push_str(&format!(",\"ref\":{r}}}"));
    s.into_bytes()
}

/// `{"type":"event","event":"<event>","data":<payload>}` (no ref: no reply).
pub fn write_tachyon_event(out: &mut Vec<u8>, event: &str, p: &Payload, size: usize) {
    out.extend_from_slice(b"{\"type\":\"event\",\"event\":\"");
    out.extend_from_slice(event.as_bytes());
    out.extend_from_slice(b"\",\"data\":");
    write_json_payload(out, p, size);
    out.push(b'}');
}

/// `{"topic":"<topic>","event":"<event>","data":<payload>}`: what a Tachyon server delivers to
/// the subscribers of a topic (and what raw peers get to forward in `fanout --envelope`).
pub fn write_tachyon_delivery(out: &mut Vec<u8>, topic: &str, event: &str, p: &Payload, size: usize) {
    out.extend_from_slice(b"{\"topic\":\"");
    out.extend_from_slice(topic.as_bytes());
    out.extend_from_slice(b"\",\"event\":\"");
    out.extend_from_slice(event.as_bytes());
    out.extend_from_slice(b"\",\"data\":");
    write_json_payload(out, p, size);
    out.push(b'}');
}

/// Fast path for a delivery of a known shape: when `m` is exactly `prefix`, one complete JSON
/// value, then `suffix`, returns that value. The fixed parts are compared byte for byte, so
/// this is a full check of the frame, without a general parse of the envelope.
pub fn enveloped<'a>(m: &'a [u8], prefix: &[u8], suffix: &[u8]) -> Option<&'a [u8]> {
    if m.len() < prefix.len() + suffix.len() || !m.starts_with(prefix) || !m.ends_with(suffix) {
        return None;
    }
    let inner = &m[prefix.len()..m.len() - suffix.len()];
    (json::skip_value(inner, 0).ok()? == inner.len()).then_some(inner)
}

/// The payload of a delivery of a known shape when it is exactly `prefix`, the payload object
/// as [`write_json_payload`] writes it, then `suffix`; None otherwise (then [`enveloped`] and
/// [`parse_json_payload`] read it). Reading that shape needs no separate check that the inner
/// part is one complete JSON value: the exact parse is that check.
pub fn exact_enveloped_payload(m: &[u8], prefix: &[u8], suffix: &[u8]) -> Option<Payload> {
    match exact_enveloped_head(m, prefix, suffix)? {
        (p, []) => Some(p),
        _ => None,
    }
}

/// [`exact_enveloped_payload`] for a delivery at the start of `m` (an item of a batch frame):
/// its payload and the bytes after it.
pub fn exact_enveloped_head<'a>(m: &'a [u8], prefix: &[u8], suffix: &[u8]) -> Option<(Payload, &'a [u8])> {
    let (p, rest) = exact_json_payload_head(m.strip_prefix(prefix)?)?;
    Some((p, rest.strip_prefix(suffix)?))
}

/// A frame from a Tachyon server.
#[derive(Debug, PartialEq)]
pub enum TachyonIn<'a> {
    /// An event (published to `topic`, or sent directly when `topic` is None).
    Event { topic: Option<Cow<'a, str>>, event: Cow<'a, str>, data: Option<&'a [u8]> },
    /// A reply to a control frame or request: `subscribed`, `denied`, `reply`, `error`, ...
    Control { kind: Cow<'a, str>, r#ref: Option<u64>, topic: Option<Cow<'a, str>>, reason: Option<Cow<'a, str>> },
}

pub fn parse_tachyon(m: &[u8]) -> Result<TachyonIn<'_>, String> {
    let (mut ty, mut topic, mut event, mut data, mut r, mut reason) = (None, None, None, None, None, None);
    let mut bad = None;
    fn want_str<'a>(v: &'a [u8], slot: &mut Option<Cow<'a, str>>, bad: &mut Option<&'static str>, name: &'static str) {
        match json::as_str(v) {
            Some(s) => *slot = Some(s),
            None => *bad = Some(name),
        }
    }
    json::for_each_member(m, |k, v| {
        if json::key_is(k, "type") {
            want_str(v, &mut ty, &mut bad, "type");
        } else if json::key_is(k, "topic") {
            want_str(v, &mut topic, &mut bad, "topic");
        } else if json::key_is(k, "event") {
            want_str(v, &mut event, &mut bad, "event");
        } else if json::key_is(k, "data") {
            data = Some(v);
        } else if json::key_is(k, "ref") {
            r = json::as_u64(v);
        } else if json::key_is(k, "reason") || json::key_is(k, "message") {
            reason = json::as_str(v);
        }
        true
    })
    .map_err(|e| e.to_string())?;
    if let Some(name) = bad {
        return Err(format!("tachyon frame: `{name}` is not a string"));
    }
    match (ty, event) {
        (Some(kind), _) => Ok(TachyonIn::Control { kind, r#ref: r, topic, reason }),
        (None, Some(event)) => Ok(TachyonIn::Event { topic, event, data }),
        (None, None) => Err("tachyon frame with neither `type` nor `event`".into()),
    }
}

// ---------------------------------------------------------------- Engine.IO / Socket.IO

/// An Engine.IO v4 packet (one per WebSocket text frame on the websocket transport).
#[derive(Debug, PartialEq, Eq)]
pub enum Eio<'a> {
    Open(&'a [u8]),
    Close,
    Ping(&'a [u8]),
    Pong(&'a [u8]),
    Message(&'a [u8]),
    Upgrade,
    Noop,
}

pub fn parse_eio(m: &[u8]) -> Result<Eio<'_>, String> {
    let (ty, rest) = m.split_first().ok_or("empty Engine.IO packet")?;
    Ok(match ty {
        b'0' => Eio::Open(rest),
        b'1' => Eio::Close,
        b'2' => Eio::Ping(rest),
        b'3' => Eio::Pong(rest),
        b'4' => Eio::Message(rest),
        b'5' => Eio::Upgrade,
        b'6' => Eio::Noop,
        _ => return Err(format!("unknown Engine.IO packet type {:?}", *ty as char)),
    })
}

/// The Engine.IO handshake data of an open packet.
#[derive(Debug, PartialEq, Eq)]
pub struct EioOpen {
    pub sid: String,
    pub ping_interval_ms: u64,
    pub ping_timeout_ms: u64,
    pub max_payload: Option<u64>,
}

pub fn parse_eio_open(json_text: &[u8]) -> Result<EioOpen, String> {
    let get = |k| json::get(json_text, k).map_err(|e| format!("open packet: {e}"));
    let sid = get("sid")?.and_then(json::as_str).ok_or("open packet without sid")?.into_owned();
    let num = |k| -> Result<u64, String> { get(k)?.and_then(json::as_u64).ok_or(format!("open packet without {k}")) };
    Ok(EioOpen {
        sid,
        ping_interval_ms: num("pingInterval")?,
        ping_timeout_ms: num("pingTimeout")?,
        max_payload: get("maxPayload")?.and_then(json::as_u64),
    })
}

pub const SIO_CONNECT: u8 = 0;
pub const SIO_DISCONNECT: u8 = 1;
pub const SIO_EVENT: u8 = 2;
pub const SIO_ACK: u8 = 3;
pub const SIO_CONNECT_ERROR: u8 = 4;
pub const SIO_BINARY_EVENT: u8 = 5;
pub const SIO_BINARY_ACK: u8 = 6;

/// A Socket.IO v4 packet: `<type>[<attachments>-][/<nsp>,][<ack id>][<json>]`.
#[derive(Debug, PartialEq, Eq)]
pub struct Sio<'a> {
    pub kind: u8,
    pub attachments: Option<u64>,
    pub nsp: &'a str,
    pub id: Option<u64>,
    pub data: Option<&'a [u8]>,
}

pub fn parse_sio(m: &[u8]) -> Result<Sio<'_>, String> {
    let (&t, mut rest) = m.split_first().ok_or("empty Socket.IO packet")?;
    if !(b'0'..=b'6').contains(&t) {
        return Err(format!("unknown Socket.IO packet type {:?}", t as char));
    }
    let kind = t - b'0';
    let take_digits = |r: &[u8]| r.iter().take_while(|c| c.is_ascii_digit()).count();
    let mut attachments = None;
    if kind == SIO_BINARY_EVENT || kind == SIO_BINARY_ACK {
        let d = take_digits(rest);
        if d == 0 || rest.get(d) != Some(&b'-') {
            return Err("binary Socket.IO packet without attachment count".into());
        }
        attachments = json::as_u64(&rest[..d]);
        rest = &rest[d + 1..];
    }
    let mut nsp = "/";
    if rest.first() == Some(&b'/') {
        let end = rest.iter().position(|c| *c == b',').unwrap_or(rest.len());
        nsp = std::str::from_utf8(&rest[..end]).map_err(|_| "namespace is not UTF-8")?;
        rest = if end < rest.len() { &rest[end + 1..] } else { &[] };
    }
    let d = take_digits(rest);
    let id = if d > 0 { Some(json::as_u64(&rest[..d]).ok_or("ack id too large")?) } else { None };
    rest = &rest[d..];
    let data = if rest.is_empty() {
        None
    } else {
        json::validate(rest).map_err(|e| format!("Socket.IO payload: {e}"))?;
        Some(rest)
    };
    Ok(Sio { kind, attachments, nsp, id, data })
}

/// Split the data of an EVENT packet into the event name and its arguments.
pub fn sio_event_args(data: &[u8]) -> Result<(Cow<'_, str>, Vec<&[u8]>), String> {
    let items = json::array_items(data).map_err(|e| e.to_string())?;
    let (name, args) = items.split_first().ok_or("event packet with an empty array")?;
    let name = json::as_str(name).ok_or("event name is not a string")?;
    Ok((name, args.to_vec()))
}

/// `42["<event>",<payload>]`: an Engine.IO message carrying a Socket.IO event.
pub fn write_sio_event(out: &mut Vec<u8>, event: &str, p: &Payload, size: usize) {
    out.extend_from_slice(b"42[\"");
    out.extend_from_slice(event.as_bytes());
    out.extend_from_slice(b"\",");
    write_json_payload(out, p, size);
    out.push(b']');
}

/// `42["<event>","<arg>"]` with a string argument.
pub fn sio_event_str(event: &str, arg: &str) -> Vec<u8> {
    let mut s = String::from("42[");
    json::write_str(&mut s, event);
    s.push(',');
    json::write_str(&mut s, arg);
    s.push(']');
    s.into_bytes()
}

/// An event's name and its first argument.
pub type NamedArg<'a> = (Cow<'a, str>, Option<&'a [u8]>);

/// For an Engine.IO message carrying a Socket.IO EVENT: its name and first argument
/// (None for every other packet).
pub fn sio_event_payload(m: &[u8]) -> Result<Option<NamedArg<'_>>, String> {
    match parse_eio(m)? {
        Eio::Message(body) => {
            let p = parse_sio(body)?;
            if p.kind != SIO_EVENT {
                return Ok(None);
            }
            let (name, args) = sio_event_args(p.data.ok_or("event packet without data")?)?;
            Ok(Some((name, args.first().copied())))
        }
        _ => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_payload_exact_size() {
        for size in [0usize, 10, 40, 64, 1000] {
            for p in [Payload { s: 0, n: 1, t: 5 }, Payload { s: 123, n: 9_999_999, t: 123_456_789_012 }] {
                let mut out = Vec::new();
                write_json_payload(&mut out, &p, size);
                assert_eq!(out.len(), size.max(json_payload_min_len(&p)));
                json::validate(&out).unwrap();
                assert_eq!(parse_json_payload(&out), Some(p));
            }
        }
    }

    #[test]
    fn json_payload_shapes_off_the_fast_path() {
        let p = Payload { s: 7, n: 42, t: 1_000 };
        // The exact shape, read by the fast path; the same values in any other valid JSON
        // shape are read by the generic walk; broken shapes are refused by both.
        assert_eq!(parse_exact_json_payload(br#"{"s":7,"n":42,"t":1000,"p":"xxx"}"#), Some(p));
        for other in [
            &br#"{"n":42,"s":7,"t":1000,"p":"xxx"}"#[..],
            br#"{ "s": 7, "n": 42, "t": 1000, "p": "xxx" }"#,
            br#"{"s":7,"n":42,"t":1000,"p":"x\u0078x"}"#,
            br#"{"s":7,"n":42,"t":1000,"p":"abc"}"#,
            br#"{"s":7,"n":42,"t":1000}"#,
        ] {
            assert_eq!(parse_exact_json_payload(other), None, "{}", String::from_utf8_lossy(other));
            assert_eq!(parse_json_payload(other), Some(p), "{}", String::from_utf8_lossy(other));
        }
        for bad in [
            &br#"{"s":7,"n":42,"t":1000,"p":"xx"#[..],
            br#"{"s":7,"n":42,"t":,"p":"xxx"}"#,
            br#"{"s":7,"n":42,"t":1000,"p":"xxx"]"#,
            br#"{"s":4294967296,"n":42,"t":1000,"p":"xxx"}"#,
            br#"{"s":7,"n":99999999999999999999999,"t":1000,"p":"xxx"}"#,
        ] {
            assert_eq!(parse_json_payload(bad), None, "{}", String::from_utf8_lossy(bad));
        }
        assert_eq!(parse_exact_json_payload(br#"{"s":07,"n":42,"t":1000,"p":"x"}"#), None);
    }

    #[test]
    fn raw_echo_payloads() {
        let mut b = Vec::new();
        write_raw_binary_echo(&mut b, 0xDEADBEEF42, 100);
        assert_eq!(b.len(), 100);
        assert_eq!(parse_raw_binary_echo(&b, 100), Some(0xDEADBEEF42));
        for (i, x) in b.iter().enumerate().skip(8) {
            assert_eq!(*x, pad_byte(i));
        }
        b[50] ^= 1;
        assert_eq!(parse_raw_binary_echo(&b, 100), None);
        let mut long = Vec::new();
        write_raw_binary_echo(&mut long, 1, 1000);
        assert!(long.iter().enumerate().skip(8).all(|(i, x)| *x == pad_byte(i)));
        assert_eq!(parse_raw_binary_echo(&long, 1000), Some(1));
        long[999] ^= 1;
        assert_eq!(parse_raw_binary_echo(&long, 1000), None);
        let mut t = Vec::new();
        write_raw_text_echo(&mut t, 987654321, 32);
        assert_eq!(t, b"AAAAAA63mixxxxxxxxxxxxxxxxxxxxxx");
        assert_eq!(parse_raw_text_echo(&t, 32), Some(987654321));
        assert_eq!(parse_raw_text_echo(&t, 33), None);
        for v in [0u64, 1, 987654321, u64::MAX, 1 << 63] {
            let mut m = Vec::new();
            write_raw_text_echo(&mut m, v, 11);
            assert_eq!(m.len(), 11);
            assert_eq!(parse_raw_text_echo(&m, 11), Some(v));
        }
        let mut bad = Vec::new();
        write_raw_text_echo(&mut bad, 5, 11);
        bad[0] = b'Z'; // more than 4 bits in the first digit
        assert_eq!(parse_raw_text_echo(&bad, 11), None);
        let mut f = Vec::new();
        let p = Payload { s: 7, n: 99, t: 123456 };
        write_raw_binary_fanout(&mut f, &p, 64);
        assert_eq!(f.len(), 64);
        assert_eq!(parse_raw_binary_fanout(&f), Some(p));
    }

    #[test]
    fn delivery_fast_path() {
        let p = Payload { s: 3, n: 42, t: 777 };
        let mut m = Vec::new();
        write_tachyon_delivery(&mut m, "bench", "bench", &p, 64);
        let prefix = br#"{"topic":"bench","event":"bench","data":"#;
        assert_eq!(exact_enveloped_payload(&m, prefix, b"}"), Some(p));
        assert_eq!(exact_enveloped_payload(&m, br#"{"topic":"other","event":"bench","data":"#, b"}"), None);
        assert_eq!(exact_enveloped_payload(br#"{"topic":"bench","event":"bench","data":{"s":1,"n":2,"t":3,"p":""}x}"#, prefix, b"}"), None);
        let inner = enveloped(&m, prefix, b"}").expect("fast path");
        assert_eq!(parse_json_payload(inner), Some(p));
        match parse_tachyon(&m).unwrap() {
            TachyonIn::Event { topic, event, data } => {
                assert_eq!((topic.as_deref(), event.as_ref()), (Some("bench"), "bench"));
                assert_eq!(data, Some(inner));
            }
            other => panic!("{other:?}"),
        }
        // Not the exact shape: no fast path (the general parser decides).
        assert_eq!(enveloped(br#"{"topic":"bench","event":"bench","data":{"s":1}} "#, prefix, b"}"), None);
        assert_eq!(enveloped(br#"{"topic":"bench","event":"bench","data":{"s":1}x}"#, prefix, b"}"), None);
        assert_eq!(enveloped(br#"{"topic":"other","event":"bench","data":{"s":1}}"#, prefix, b"}"), None);
        assert_eq!(enveloped(br#"42["bench",{"s":1,"n":2,"t":3}]"#, br#"42["bench","#, b"]"), Some(&br#"{"s":1,"n":2,"t":3}"#[..]));
    }

    #[test]
    fn tachyon_frames() {
        assert_eq!(tachyon_subscribe("bench", 1), br#"{"type":"subscribe","topic":"bench","ref":1}"#);
        let mut ev = Vec::new();
        write_tachyon_event(&mut ev, "bench:publish", &Payload { s: 1, n: 2, t: 3 }, 0);
        assert_eq!(ev, br#"{"type":"event","event":"bench:publish","data":{"s":1,"n":2,"t":3,"p":""}}"#);

        let env = br#"{"topic":"bench","event":"bench","data":{"s":4,"n":17,"t":123456789,"p":"xx"}}"#;
        match parse_tachyon(env).unwrap() {
            TachyonIn::Event { topic, event, data } => {
                assert_eq!(topic.as_deref(), Some("bench"));
                assert_eq!(event, "bench");
                assert_eq!(parse_json_payload(data.unwrap()), Some(Payload { s: 4, n: 17, t: 123456789 }));
            }
            other => panic!("{other:?}"),
        }
        let direct = br#"{"event":"welcome","data":{"text":"a \"quoted\" }{ value","list":[1,{"a":[]}]}}"#;
        match parse_tachyon(direct).unwrap() {
            TachyonIn::Event { topic, event, data } => {
                assert_eq!(topic, None);
                assert_eq!(event, "welcome");
                assert_eq!(json::as_str(json::get(data.unwrap(), "text").unwrap().unwrap()).unwrap(), "a \"quoted\" }{ value");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(parse_tachyon(br#"{"event":"x"}"#).unwrap(), TachyonIn::Event { topic: None, event: "x".into(), data: None });
        assert_eq!(
            parse_tachyon(br#"{"type":"subscribed","topic":"bench","ref":1}"#).unwrap(),
            TachyonIn::Control { kind: "subscribed".into(), r#ref: Some(1), topic: Some("bench".into()), reason: None }
        );
        assert_eq!(
            parse_tachyon(br#"{"type":"denied","topic":"__admin","ref":3,"reason":"reserved topic"}"#).unwrap(),
            TachyonIn::Control { kind: "denied".into(), r#ref: Some(3), topic: Some("__admin".into()), reason: Some("reserved topic".into()) }
        );
        assert!(parse_tachyon(br#"{"type":"error","ref":5,"code":"VALIDATION","message":"Invalid","issues":[{"path":["text"]}]}"#).is_ok());
        assert!(parse_tachyon(br#"{"topic":"a"}"#).is_err());
        assert!(parse_tachyon(br#"{"event":1}"#).is_err());
        assert!(parse_tachyon(b"not json").is_err());
    }

    #[test]
    fn engine_io_packets() {
        let open = br#"0{"sid":"lv_VI97HAXpY6yYWAAAC","upgrades":[],"pingInterval":25000,"pingTimeout":20000,"maxPayload":1000000}"#;
        match parse_eio(open).unwrap() {
            Eio::Open(j) => assert_eq!(
                parse_eio_open(j).unwrap(),
                EioOpen { sid: "lv_VI97HAXpY6yYWAAAC".into(), ping_interval_ms: 25000, ping_timeout_ms: 20000, max_payload: Some(1_000_000) }
            ),
            other => panic!("{other:?}"),
        }
        assert!(parse_eio_open(br#"{"pingInterval":1}"#).is_err());
        assert_eq!(parse_eio(b"2").unwrap(), Eio::Ping(b""));
        assert_eq!(parse_eio(b"2probe").unwrap(), Eio::Ping(b"probe"));
        assert_eq!(parse_eio(b"3").unwrap(), Eio::Pong(b""));
        assert_eq!(parse_eio(b"1").unwrap(), Eio::Close);
        assert_eq!(parse_eio(b"6").unwrap(), Eio::Noop);
        assert!(parse_eio(b"9").is_err());
        assert!(parse_eio(b"").is_err());
    }

    #[test]
    fn socket_io_packets() {
        // `40` (connect, default namespace) and the server's answer.
        let Eio::Message(b) = parse_eio(b"40").unwrap() else { panic!() };
        assert_eq!(parse_sio(b).unwrap(), Sio { kind: SIO_CONNECT, attachments: None, nsp: "/", id: None, data: None });
        let Eio::Message(b) = parse_eio(br#"40{"sid":"wZX3oN0bSVIhsaknAAAI"}"#).unwrap() else { panic!() };
        let p = parse_sio(b).unwrap();
        assert_eq!(p.kind, SIO_CONNECT);
        assert_eq!(json::as_str(json::get(p.data.unwrap(), "sid").unwrap().unwrap()).unwrap(), "wZX3oN0bSVIhsaknAAAI");
        // an event with nested JSON and escaped strings
        let m = br#"42["bench",{"s":3,"n":8,"t":42,"p":"x\"]}[{","deep":{"a":[1,2,{"b":"\\"}]}}]"#;
        let (name, arg) = sio_event_payload(m).unwrap().unwrap();
        assert_eq!(name, "bench");
        let arg = arg.unwrap();
        assert_eq!(parse_json_payload(arg), Some(Payload { s: 3, n: 8, t: 42 }));
        assert_eq!(json::as_str(json::get(arg, "p").unwrap().unwrap()).unwrap(), "x\"]}[{");
        // escaped event name, namespace, ack id, several arguments
        let Eio::Message(b) = parse_eio(br#"42/chat,17["say \"hi\"","a",2,null]"#).unwrap() else { panic!() };
        let p = parse_sio(b).unwrap();
        assert_eq!((p.kind, p.nsp, p.id), (SIO_EVENT, "/chat", Some(17)));
        let (name, args) = sio_event_args(p.data.unwrap()).unwrap();
        assert_eq!(name, "say \"hi\"");
        assert_eq!(args, vec![&b"\"a\""[..], b"2", b"null"]);
        // ack and binary event headers, connect error
        assert_eq!(parse_sio(b"31[]").unwrap().id, Some(1));
        let bin = parse_sio(br#"51-["upload",{"_placeholder":true,"num":0}]"#).unwrap();
        assert_eq!((bin.kind, bin.attachments), (SIO_BINARY_EVENT, Some(1)));
        // (parse_sio takes the Socket.IO packet, without the Engine.IO `4` in front)
        let ce = parse_sio(br#"4{"message":"Not authorized"}"#).unwrap();
        assert_eq!((ce.kind, ce.id), (SIO_CONNECT_ERROR, None));
        assert_eq!(parse_sio(b"1").unwrap().kind, SIO_DISCONNECT);
        assert!(parse_sio(b"2[\"unterminated").is_err());
        assert!(sio_event_payload(b"42[\"a\",{\"b\":]").is_err());
        assert!(parse_sio(b"7").is_err());
        // a ping is not an event
        assert_eq!(sio_event_payload(b"2").unwrap(), None);
        // builders
        let mut out = Vec::new();
        write_sio_event(&mut out, "bench:publish", &Payload { s: 0, n: 1, t: 2 }, 0);
        assert_eq!(out, br#"42["bench:publish",{"s":0,"n":1,"t":2,"p":""}]"#);
        assert_eq!(sio_event_str("join", "bench"), br#"42["join","bench"]"#);
    }
}
