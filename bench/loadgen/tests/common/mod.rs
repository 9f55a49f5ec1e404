//! What the in-process test servers share: reading a request head and the WebSocket upgrade.

use loadgen::handshake::{accept_key, head_end};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Read a request head: its text and the bytes that came after it (None: the client left).
pub async fn read_head(s: &mut TcpStream) -> std::io::Result<Option<(String, Vec<u8>)>> {
    let mut head = Vec::new();
    let end = loop {
        if let Some(e) = head_end(&head) {
            break e;
        }
        head.reserve(1024);
        if s.read_buf(&mut head).await? == 0 {
            return Ok(None);
        }
    };
    Ok(Some((String::from_utf8_lossy(&head[..end]).into_owned(), head[end..].to_vec())))
}

/// Answer the upgrade request `req` with 101 and the client key's accept value.
pub async fn upgrade(s: &mut TcpStream, req: &str) -> std::io::Result<()> {
    let key = req
        .lines()
        .find_map(|l| l.split_once(':').filter(|(k, _)| k.eq_ignore_ascii_case("sec-websocket-key")).map(|(_, v)| v.trim().to_string()))
        .expect("client sent a key");
    let resp = format!("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {}\r\n\r\n", accept_key(&key));
    s.write_all(resp.as_bytes()).await
}

/// Listen on a free loopback port and serve each connection with `serve`; returns the port.
pub async fn listen<F, Fut>(serve: F) -> u16
where
    F: Fn(TcpStream) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = std::io::Result<()>> + Send + 'static,
{
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        loop {
            let (s, _) = listener.accept().await.unwrap();
            tokio::spawn(serve(s));
        }
    });
    port
}
