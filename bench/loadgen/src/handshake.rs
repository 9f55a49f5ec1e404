//! The HTTP/1.1 upgrade handshake of RFC 6455 (section 4), with the small SHA-1 and base64
//! encoder it needs. Both are used once per connection, so they favour clarity over speed.

const WS_GUID: &str = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/// SHA-1 digest (FIPS 180-4). Used only for Sec-WebSocket-Accept.
pub fn sha1(data: &[u8]) -> [u8; 20] {
    let mut h: [u32; 5] = [0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0];
    let mut msg = data.to_vec();
    let bit_len = (data.len() as u64).wrapping_mul(8);
    msg.push(0x80);
    while msg.len() % 64 != 56 {
        msg.push(0);
    }
    msg.extend_from_slice(&bit_len.to_be_bytes());
    for block in msg.chunks_exact(64) {
        let mut w = [0u32; 80];
        for i in 0..16 {
            w[i] = u32::from_be_bytes([block[4 * i], block[4 * i + 1], block[4 * i + 2], block[4 * i + 3]]);
        }
        for i in 16..80 {
            w[i] = (w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]).rotate_left(1);
        }
        let [mut a, mut b, mut c, mut d, mut e] = h;
        for (i, wi) in w.iter().enumerate() {
            let (f, k) = match i {
                0..=19 => ((b & c) | (!b & d), 0x5A827999),
                20..=39 => (b ^ c ^ d, 0x6ED9EBA1),
                40..=59 => ((b & c) | (b & d) | (c & d), 0x8F1BBCDC),
                _ => (b ^ c ^ d, 0xCA62C1D6u32),
            };
            let t = a.rotate_left(5).wrapping_add(f).wrapping_add(e).wrapping_add(k).wrapping_add(*wi);
            e = d;
            d = c;
            c = b.rotate_left(30);
            b = a;
            a = t;
        }
        h[0] = h[0].wrapping_add(a);
        h[1] = h[1].wrapping_add(b);
        h[2] = h[2].wrapping_add(c);
        h[3] = h[3].wrapping_add(d);
        h[4] = h[4].wrapping_add(e);
    }
    let mut out = [0u8; 20];
    for (i, v) in h.iter().enumerate() {
        out[4 * i..4 * i + 4].copy_from_slice(&v.to_be_bytes());
    }
    out
}

/// Standard base64 with padding (RFC 4648).
pub fn base64(data: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::with_capacity(data.len().div_ceil(3) * 4);
    for c in data.chunks(3) {
        let n = (c[0] as u32) << 16 | (*c.get(1).unwrap_or(&0) as u32) << 8 | *c.get(2).unwrap_or(&0) as u32;
        s.push(A[(n >> 18) as usize & 63] as char);
        s.push(A[(n >> 12) as usize & 63] as char);
        s.push(if c.len() > 1 { A[(n >> 6) as usize & 63] as char } else { '=' });
        s.push(if c.len() > 2 { A[n as usize & 63] as char } else { '=' });
    }
    s
}

/// The Sec-WebSocket-Accept value a server must answer for `key`.
pub fn accept_key(key: &str) -> String {
    let mut v = Vec::with_capacity(key.len() + WS_GUID.len());
    v.extend_from_slice(key.trim().as_bytes());
    v.extend_from_slice(WS_GUID.as_bytes());
    base64(&sha1(&v))
}

/// A fresh Sec-WebSocket-Key: base64 of 16 random bytes.
pub fn new_key(rng: &mut crate::Rng) -> String {
    let mut b = [0u8; 16];
    b[..8].copy_from_slice(&rng.next_u64().to_le_bytes());
    b[8..].copy_from_slice(&rng.next_u64().to_le_bytes());
    base64(&b)
}

/// The upgrade request for `path` (which includes any query string) on `host` (with port).
pub fn request(host: &str, path: &str, key: &str) -> String {
    format!(
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\nUser-Agent: tachyon-loadgen\r\n\r\n"
    )
}

/// Position just past the blank line ending the HTTP head, if it is complete.
pub fn head_end(buf: &[u8]) -> Option<usize> {
    buf.windows(4).position(|w| w == b"\r\n\r\n").map(|p| p + 4)
}

/// Check an HTTP response head (up to and including the blank line) against `key`.
pub fn check_response(head: &[u8], key: &str) -> Result<(), String> {
    let text = std::str::from_utf8(head).map_err(|_| "response head is not UTF-8".to_string())?;
    let mut lines = text.split("\r\n");
    let status = lines.next().unwrap_or("");
    let mut parts = status.splitn(3, ' ');
    let version = parts.next().unwrap_or("");
    let code = parts.next().unwrap_or("");
    if !version.starts_with("HTTP/1.") || code != "101" {
        return Err(format!("expected 101, got: {}", status.chars().take(120).collect::<String>()));
    }
    let (mut upgrade, mut connection, mut accept) = (false, false, None);
    for line in lines {
        let Some((name, value)) = line.split_once(':') else { continue };
        let value = value.trim();
        match name.trim().to_ascii_lowercase().as_str() {
            "upgrade" => upgrade = value.eq_ignore_ascii_case("websocket"),
            "connection" => connection = value.split(',').any(|t| t.trim().eq_ignore_ascii_case("upgrade")),
            "sec-websocket-accept" => accept = Some(value.to_string()),
            _ => {}
        }
    }
    if !upgrade {
        return Err("101 without `Upgrade: websocket`".into());
    }
    if !connection {
        return Err("101 without `Connection: Upgrade`".into());
    }
    let want = accept_key(key);
    match accept {
        Some(a) if a == want => Ok(()),
        Some(a) => Err(format!("bad Sec-WebSocket-Accept {a:?}, expected {want:?}")),
        None => Err("101 without Sec-WebSocket-Accept".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    #[test]
    fn sha1_vectors() {
        assert_eq!(hex(&sha1(b"")), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
        assert_eq!(hex(&sha1(b"abc")), "a9993e364706816aba3e25717850c26c9cd0d89d");
        assert_eq!(
            hex(&sha1(b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "84983e441c3bd26ebaae4aa1f95129e5e54670f1"
        );
        assert_eq!(hex(&sha1(&vec![b'a'; 1_000_000])), "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
    }

    #[test]
    fn base64_vectors() {
        for (i, o) in [("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="), ("foobar", "Zm9vYmFy")] {
            assert_eq!(base64(i.as_bytes()), o);
        }
    }

    #[test]
    fn rfc6455_accept_key() {
        // RFC 6455 section 1.3 (a SHA-1 digest is 20 bytes, so 28 base64 characters).
        assert_eq!(accept_key("dGhlIHNhbXBsZSBub25jZQ=="), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
    }

    #[test]
    fn key_is_16_bytes_base64() {
        let mut rng = crate::Rng::new(1);
        let k = new_key(&mut rng);
        assert_eq!(k.len(), 24);
        assert!(k.ends_with("=="));
        assert_ne!(k, new_key(&mut rng));
    }

    #[test]
    fn response_checks() {
        let key = "dGhlIHNhbXBsZSBub25jZQ==";
        let ok = b"HTTP/1.1 101 Switching Protocols\r\nupgrade: WebSocket\r\nConnection: keep-alive, Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n";
        assert_eq!(head_end(ok), Some(ok.len()));
        assert_eq!(check_response(ok, key), Ok(()));
        let bad = b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: xxx=\r\n\r\n";
        assert!(check_response(bad, key).unwrap_err().contains("bad Sec-WebSocket-Accept"));
        let refused = b"HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n";
        assert!(check_response(refused, key).unwrap_err().contains("expected 101"));
        assert_eq!(head_end(b"HTTP/1.1 101 OK\r\n"), None);
        let req = request("127.0.0.1:9000", "/socket.io/?EIO=4&transport=websocket", key);
        assert!(req.starts_with("GET /socket.io/?EIO=4&transport=websocket HTTP/1.1\r\nHost: 127.0.0.1:9000\r\n"));
        assert!(req.ends_with("\r\n\r\n"));
    }
}
