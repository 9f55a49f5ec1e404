//! A minimal HTTP/1.1 GET for the game mode's matchmaking (`GET /api/pvp/matchmake` →
//! `{"roomCode":"…"}`): one request per connection, `Connection: close`, a body framed by
//! Content-Length, chunked encoding or the end of the stream.

use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpSocket;

use crate::conn::Target;

pub fn get_request(host: &str, path: &str) -> String {
    format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nUser-Agent: tachyon-loadgen\r\n\r\n")
}

/// A complete response: status and body.
#[derive(Debug, PartialEq, Eq)]
pub struct Response {
    pub status: u16,
    pub body: Vec<u8>,
}

/// Parses `buf` as an HTTP/1.1 response. `Ok(None)`: incomplete (read more); `eof`: the
/// server closed, so a body without framing ends here.
pub fn parse_response(buf: &[u8], eof: bool) -> Result<Option<Response>, String> {
    let Some(end) = crate::handshake::head_end(buf) else {
        return if eof { Err("connection closed before the response head".into()) } else { Ok(None) };
    };
    let head = std::str::from_utf8(&buf[..end]).map_err(|_| "response head is not UTF-8")?;
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or("");
    let mut parts = status_line.splitn(3, ' ');
    let version = parts.next().unwrap_or("");
    if !version.starts_with("HTTP/1.") {
        return Err(format!("not an HTTP/1.x response: {status_line:?}"));
    }
    let status: u16 = parts.next().and_then(|s| s.parse().ok()).ok_or(format!("bad status line {status_line:?}"))?;
    let (mut length, mut chunked) = (None, false);
    for line in lines {
        let Some((name, value)) = line.split_once(':') else { continue };
        let value = value.trim();
        if name.eq_ignore_ascii_case("content-length") {
            length = Some(value.parse::<usize>().map_err(|_| format!("bad content-length {value:?}"))?);
        } else if name.eq_ignore_ascii_case("transfer-encoding") && value.to_ascii_lowercase().contains("chunked") {
            chunked = true;
        }
    }
    let rest = &buf[end..];
    if chunked {
        return match dechunk(rest)? {
            Some(body) => Ok(Some(Response { status, body })),
            None if eof => Err("connection closed inside a chunked body".into()),
            None => Ok(None),
        };
    }
    match length {
        Some(n) if rest.len() >= n => Ok(Some(Response { status, body: rest[..n].to_vec() })),
        Some(_) if eof => Err("connection closed before the end of the body".into()),
        Some(_) => Ok(None),
        None if eof => Ok(Some(Response { status, body: rest.to_vec() })),
        None => Ok(None),
    }
}

/// The body of a complete chunked encoding, or None when more bytes are needed.
fn dechunk(mut b: &[u8]) -> Result<Option<Vec<u8>>, String> {
    let mut body = Vec::new();
    loop {
        let Some(eol) = b.windows(2).position(|w| w == b"\r\n") else { return Ok(None) };
        let size_text = std::str::from_utf8(&b[..eol]).map_err(|_| "bad chunk size")?;
        let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16).map_err(|_| format!("bad chunk size {size_text:?}"))?;
        b = &b[eol + 2..];
        if size == 0 {
            return Ok(Some(body));
        }
        if b.len() < size + 2 {
            return Ok(None);
        }
        body.extend_from_slice(&b[..size]);
        b = &b[size + 2..];
    }
}

/// GET `path` on the target's host and port (from `source` when given), before `deadline`.
/// The socket is closed with a reset (SO_LINGER 0) so that thousands of matchmaking requests
/// leave no TIME_WAIT ports behind on the load generator.
pub async fn get(target: &Target, path: &str, source: Option<IpAddr>, deadline: Instant) -> Result<Response, String> {
    let fut = async {
        let socket = if target.addr.is_ipv4() { TcpSocket::new_v4() } else { TcpSocket::new_v6() }.map_err(|e| format!("socket: {e}"))?;
        if let Some(src) = source {
            socket.bind(SocketAddr::new(src, 0)).map_err(|e| format!("bind {src}: {e}"))?;
        }
        let mut stream = socket.connect(target.addr).await.map_err(|e| format!("connect {}: {e}", target.addr))?;
        let _ = stream.set_nodelay(true);
        stream.write_all(get_request(&target.host, path).as_bytes()).await.map_err(|e| format!("write: {e}"))?;
        let mut buf = Vec::with_capacity(512);
        let r = loop {
            buf.reserve(1024);
            let n = stream.read_buf(&mut buf).await.map_err(|e| format!("read: {e}"))?;
            if let Some(r) = parse_response(&buf, n == 0)? {
                break r;
            }
        };
        // Linger 0: close() resets at once (no blocking, no TIME_WAIT).
        #[allow(deprecated)]
        let _ = stream.set_linger(Some(Duration::ZERO));
        Ok(r)
    };
    match tokio::time::timeout_at(deadline.into(), fut).await {
        Ok(r) => r,
        Err(_) => Err(format!("GET {path} timed out")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_length() {
        let r = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\ncontent-length: 20\r\n\r\n{\"roomCode\":\"ABCDEF\"}";
        assert_eq!(parse_response(&r[..r.len() - 5], false).unwrap(), None);
        assert!(parse_response(&r[..r.len() - 5], true).is_err());
        let full = parse_response(&r[..r.len() - 1], false).unwrap().unwrap();
        assert_eq!(full.status, 200);
        assert_eq!(full.body, b"{\"roomCode\":\"ABCDEF\"".to_vec());
    }

    #[test]
    fn chunked_and_unframed() {
        let r = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6;x=y\r\n world\r\n0\r\n\r\n";
        assert_eq!(parse_response(r, false).unwrap().unwrap().body, b"hello world".to_vec());
        assert_eq!(parse_response(&r[..30], false).unwrap(), None);
        assert!(parse_response(&r[..60], true).is_err());
        assert!(parse_response(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", false).is_err());
        let u = b"HTTP/1.0 404 Not Found\r\n\r\nnope";
        assert_eq!(parse_response(u, false).unwrap(), None);
        assert_eq!(parse_response(u, true).unwrap().unwrap(), Response { status: 404, body: b"nope".to_vec() });
    }

    #[test]
    fn bad_heads() {
        assert!(parse_response(b"SSH-2.0-OpenSSH\r\n\r\n", false).is_err());
        assert!(parse_response(b"HTTP/1.1 abc OK\r\n\r\n", false).is_err());
        assert!(parse_response(b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n", false).is_err());
        assert!(parse_response(b"HTTP/1.1 200", true).is_err());
        assert_eq!(get_request("h:1", "/a?b"), "GET /a?b HTTP/1.1\r\nHost: h:1\r\nConnection: close\r\nUser-Agent: tachyon-loadgen\r\n\r\n");
    }
}
