//! One client connection: TCP connect (optionally from a chosen source address), the
//! upgrade handshake, protocol setup (Socket.IO connect, Tachyon subscribe), and the
//! non-blocking read/write helpers the load loops are built on.
//!
//! The load loops are readiness driven: one task per connection waits for "readable or
//! writable (when there is something to write) or a deadline or stop", then reads what is
//! there and writes what it can. So a connection never stops reading because it is
//! blocked writing, and a burst is only generated once the previous one left the socket.

use std::io;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::os::fd::AsRawFd;
use std::pin::Pin;
use std::time::Instant;

use tokio::io::{AsyncReadExt, AsyncWriteExt, Interest, Ready};
use tokio::net::{TcpSocket, TcpStream};
use tokio::sync::watch;
use tokio::time::Sleep;

use crate::frame::{Decoder, Event, OP_PONG, OP_TEXT};
use crate::handshake;
use crate::outbuf::OutBuf;
use crate::proto::{self, Eio, Protocol, TachyonIn};
use crate::{race, Either, Rng};

/// Where to connect: the resolved address, the Host header and the request path.
#[derive(Debug, Clone)]
pub struct Target {
    pub addr: SocketAddr,
    pub host: String,
    pub path: String,
}

impl Target {
    /// Parse and resolve a `ws://host[:port][/path][?query]` URL.
    pub fn parse(url: &str) -> Result<Target, String> {
        let rest = if let Some(r) = url.strip_prefix("ws://") {
            r
        } else if url.starts_with("wss://") {
            return Err("wss:// (TLS) is not supported; use ws://".into());
        } else {
            return Err(format!("URL must start with ws://: {url:?}"));
        };
        let split = rest.find(['/', '?']).unwrap_or(rest.len());
        let (authority, path) = rest.split_at(split);
        let path = match path {
            "" => "/".to_string(),
            p if p.starts_with('?') => format!("/{p}"),
            p => p.to_string(),
        };
        if authority.is_empty() {
            return Err(format!("no host in URL {url:?}"));
        }
        let with_port = if authority.ends_with(']') || !authority.contains(':') { format!("{authority}:80") } else { authority.to_string() };
        let addr = with_port
            .to_socket_addrs()
            .map_err(|e| format!("cannot resolve {authority}: {e}"))?
            .min_by_key(|a| !a.is_ipv4()) // prefer IPv4
            .ok_or(format!("{authority} resolved to no address"))?;
        Ok(Target { addr, host: authority.to_string(), path })
    }

    /// The path to request for `proto`: Socket.IO gets `/socket.io/?EIO=4&transport=websocket`
    /// unless the URL already names a path and an `EIO` parameter.
    pub fn path_for(&self, proto: Protocol) -> String {
        if proto != Protocol::SocketIo {
            return self.path.clone();
        }
        let mut p = if self.path == "/" { "/socket.io/".to_string() } else { self.path.clone() };
        if !p.contains("EIO=") {
            p.push(if p.contains('?') { '&' } else { '?' });
            p.push_str("EIO=4&transport=websocket");
        }
        p
    }
}

/// Parse `--sources 127.0.0.1,127.0.0.2`.
pub fn parse_sources(s: &str) -> Result<Vec<IpAddr>, String> {
    s.split(',').filter(|x| !x.trim().is_empty()).map(|x| x.trim().parse::<IpAddr>().map_err(|e| format!("bad source address {x:?}: {e}"))).collect()
}

/// The write side: an output buffer of encoded (masked) frames and the socket.
pub struct Io {
    pub stream: TcpStream,
    pub out: OutBuf,
    scratch: Vec<u8>,
    /// The deadline timer of `wait`, and its deadline.
    timer: Option<(Instant, Pin<Box<Sleep>>)>,
}

/// What woke a connection up.
#[derive(Debug)]
pub enum Wake {
    Ready(Ready),
    Deadline,
    Stop,
}

impl Io {
    /// Queue one masked frame.
    pub fn send(&mut self, opcode: u8, payload: &[u8]) {
        self.out.frame(opcode, payload);
    }

    /// Queue one masked frame whose payload `f` writes.
    pub fn send_with(&mut self, opcode: u8, f: impl FnOnce(&mut Vec<u8>)) {
        let mut s = std::mem::take(&mut self.scratch);
        s.clear();
        f(&mut s);
        self.send(opcode, &s);
        self.scratch = s;
    }

    pub fn send_close(&mut self, code: u16, reason: &str) {
        self.out.close(code, reason);
    }

    /// The socket and the frames still queued, for a loop that leaves tokio.
    pub fn into_parts(self) -> (TcpStream, OutBuf) {
        (self.stream, self.out)
    }

    /// Bytes queued but not written yet.
    pub fn pending_out(&self) -> usize {
        self.out.pending()
    }

    /// Write as much as the socket takes now.
    pub fn try_flush(&mut self) -> io::Result<()> {
        let stream = &self.stream;
        self.out.flush_with(|b| stream.try_write(b))
    }

    /// Write everything queued.
    pub async fn flush(&mut self) -> io::Result<()> {
        loop {
            self.try_flush()?;
            if self.pending_out() == 0 {
                return Ok(());
            }
            self.stream.writable().await?;
        }
    }

    /// Wait until the socket is readable (or writable, with `want_write`), `deadline`
    /// passes, or `stop` changes.
    ///
    /// The timer is kept between calls and only moved when the deadline changes: a fresh
    /// timer per wait cost a timer-wheel insert and removal for every message received.
    pub async fn wait(&mut self, want_write: bool, deadline: Option<Instant>, stop: Option<&mut watch::Receiver<bool>>) -> io::Result<Wake> {
        if let Some(s) = stop.as_ref() {
            if *s.borrow() {
                return Ok(Wake::Stop);
            }
        }
        let interest = if want_write { Interest::READABLE | Interest::WRITABLE } else { Interest::READABLE };
        let stopped = async {
            match stop {
                Some(s) => {
                    let _ = s.changed().await;
                }
                None => std::future::pending::<()>().await,
            }
        };
        let timer = match deadline {
            Some(d) => {
                match &mut self.timer {
                    Some((at, _)) if *at == d => {}
                    Some((at, t)) => {
                        t.as_mut().reset(d.into());
                        *at = d;
                    }
                    None => self.timer = Some((d, Box::pin(tokio::time::sleep_until(d.into())))),
                }
                self.timer.as_mut().map(|(_, t)| t.as_mut())
            }
            None => None,
        };
        let elapsed = async {
            match timer {
                Some(t) => t.await,
                None => std::future::pending::<()>().await,
            }
        };
        match race(self.stream.ready(interest), race(elapsed, stopped)).await {
            Either::Left(r) => Ok(Wake::Ready(r?)),
            Either::Right(Either::Left(())) => Ok(Wake::Deadline),
            Either::Right(Either::Right(())) => Ok(Wake::Stop),
        }
    }
}

/// A message received during setup, copied out of the read buffer.
#[derive(Debug)]
pub enum Owned {
    Text(Vec<u8>),
    Binary(Vec<u8>),
    Close(Option<u16>, String),
}

pub struct Conn {
    pub io: Io,
    pub dec: Decoder,
}

/// Setup failures carry a kind for the report.
pub type SetupError = (&'static str, String);

impl Conn {
    /// Read what is available without waiting. Returns the byte count (0: nothing there);
    /// the end of the stream is an `UnexpectedEof` error.
    pub fn try_fill(&mut self) -> io::Result<usize> {
        self.dec.prepare_read();
        match self.io.stream.try_read_buf(&mut self.dec.buf) {
            Ok(0) => Err(io::Error::new(io::ErrorKind::UnexpectedEof, "connection closed by the server (EOF)")),
            Ok(n) => Ok(n),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(0),
            Err(e) => Err(e),
        }
    }

    /// Receive the next data message (answering pings on the way), for setup phases.
    pub async fn recv(&mut self, deadline: Instant) -> Result<Owned, SetupError> {
        loop {
            while let Some(ev) = self.dec.next_event().map_err(|e| ("protocol", e.to_string()))? {
                match ev {
                    Event::Text(p) => return Ok(Owned::Text(p.to_vec())),
                    Event::Binary(p) => return Ok(Owned::Binary(p.to_vec())),
                    Event::Ping(p) => self.io.send(OP_PONG, p),
                    Event::Pong(_) => {}
                    Event::Close(c, r) => return Ok(Owned::Close(c, String::from_utf8_lossy(r).into_owned())),
                }
            }
            self.io.flush().await.map_err(|e| ("io", e.to_string()))?;
            match self.io.wait(false, Some(deadline), None).await.map_err(|e| ("io", e.to_string()))? {
                Wake::Deadline => return Err(("timeout", "no answer from the server during setup".into())),
                _ => {
                    self.try_fill().map_err(|e| ("closed", e.to_string()))?;
                }
            }
        }
    }

    /// Receive the next text message during setup; anything else is an error.
    pub async fn recv_text(&mut self, deadline: Instant) -> Result<Vec<u8>, SetupError> {
        match self.recv(deadline).await? {
            Owned::Text(t) => Ok(t),
            Owned::Binary(_) => Err(("protocol", "unexpected binary message during setup".into())),
            Owned::Close(c, r) => Err(("closed", format!("server closed during setup: {c:?} {r}"))),
        }
    }
}

/// Open a TCP connection (bound to `source` when given) and do the upgrade handshake.
pub async fn connect(target: &Target, path: &str, source: Option<IpAddr>, read_chunk: usize, mut rng: Rng) -> Result<Conn, SetupError> {
    let socket = if target.addr.is_ipv4() { TcpSocket::new_v4() } else { TcpSocket::new_v6() }.map_err(|e| ("connect", format!("socket: {e}")))?;
    if let Some(src) = source {
        if src.is_ipv4() != target.addr.is_ipv4() {
            return Err(("connect", format!("source {src} and target {} are not the same IP version", target.addr)));
        }
        // Let connect() pick the port for the 4-tuple instead of bind(): without this,
        // every bound socket reserves its own ephemeral port and 50k connections exhaust them.
        let one: libc::c_int = 1;
        // SAFETY: setsockopt on our own socket with a c_int option value.
        unsafe {
            libc::setsockopt(
                socket.as_raw_fd(),
                libc::IPPROTO_IP,
                libc::IP_BIND_ADDRESS_NO_PORT,
                &one as *const libc::c_int as *const libc::c_void,
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            );
        }
        socket.bind(SocketAddr::new(src, 0)).map_err(|e| ("connect", format!("bind {src}: {e}")))?;
    }
    let mut stream = socket.connect(target.addr).await.map_err(|e| ("connect", format!("connect {}: {e}", target.addr)))?;
    let _ = stream.set_nodelay(true);
    let key = handshake::new_key(&mut rng);
    let req = handshake::request(&target.host, path, &key);
    stream.write_all(req.as_bytes()).await.map_err(|e| ("handshake", format!("write: {e}")))?;
    let mut head = Vec::with_capacity(512);
    let end = loop {
        if let Some(end) = handshake::head_end(&head) {
            break end;
        }
        if head.len() > 16 * 1024 {
            return Err(("handshake", "response head over 16 KiB".into()));
        }
        head.reserve(512);
        let n = stream.read_buf(&mut head).await.map_err(|e| ("handshake", format!("read: {e}")))?;
        if n == 0 {
            return Err(("handshake", "server closed the connection during the handshake".into()));
        }
    };
    handshake::check_response(&head[..end], &key).map_err(|e| ("handshake", e))?;
    let mut dec = Decoder::new(read_chunk);
    if end < head.len() {
        dec.feed(&head[end..]);
    }
    Ok(Conn { io: Io { stream, out: OutBuf::new(read_chunk.min(16 * 1024), rng), scratch: Vec::new(), timer: None }, dec })
}

/// Engine.IO open + Socket.IO connect to the default namespace.
pub async fn socketio_connect(conn: &mut Conn, deadline: Instant) -> Result<proto::EioOpen, SetupError> {
    let open = conn.recv_text(deadline).await?;
    let info = match proto::parse_eio(&open).map_err(|e| ("protocol", e))? {
        Eio::Open(j) => proto::parse_eio_open(j).map_err(|e| ("protocol", e))?,
        _ => return Err(("protocol", format!("expected the Engine.IO open packet, got {:?}", String::from_utf8_lossy(&open)))),
    };
    conn.io.send(OP_TEXT, b"40");
    conn.io.flush().await.map_err(|e| ("io", e.to_string()))?;
    loop {
        let m = conn.recv_text(deadline).await?;
        match proto::parse_eio(&m).map_err(|e| ("protocol", e))? {
            Eio::Ping(p) => {
                let mut pong = b"3".to_vec();
                pong.extend_from_slice(p);
                conn.io.send(OP_TEXT, &pong);
            }
            Eio::Message(body) => {
                let p = proto::parse_sio(body).map_err(|e| ("protocol", e))?;
                match p.kind {
                    proto::SIO_CONNECT if p.nsp == "/" => return Ok(info),
                    proto::SIO_CONNECT_ERROR => return Err(("handshake", format!("Socket.IO connect error: {}", String::from_utf8_lossy(body)))),
                    _ => {}
                }
            }
            Eio::Close => return Err(("closed", "Engine.IO close during connect".into())),
            _ => {}
        }
    }
}

/// Subscribe with `{"type":"subscribe",...,"ref":1}` and wait for `subscribed`.
pub async fn tachyon_subscribe(conn: &mut Conn, topic: &str, deadline: Instant) -> Result<(), SetupError> {
    conn.io.send(OP_TEXT, &proto::tachyon_subscribe(topic, 1));
    conn.io.flush().await.map_err(|e| ("io", e.to_string()))?;
    loop {
        let m = conn.recv_text(deadline).await?;
        // Events or other replies may come before the answer: skip them.
        if let TachyonIn::Control { kind, r#ref: Some(1), reason, .. } = proto::parse_tachyon(&m).map_err(|e| ("protocol", e))? {
            return match kind.as_ref() {
                "subscribed" => Ok(()),
                other => Err(("subscribe", format!("subscribe to {topic:?} answered {other:?}: {}", reason.unwrap_or_default()))),
            };
        }
    }
}

/// Connect, handshake, and (for Socket.IO) join the default namespace, all before `deadline`.
pub async fn open(target: &Target, proto: Protocol, source: Option<IpAddr>, read_chunk: usize, seed: u64, deadline: Instant) -> Result<Conn, SetupError> {
    let path = target.path_for(proto);
    let fut = connect(target, &path, source, read_chunk, Rng::seeded(seed));
    let mut conn = match tokio::time::timeout_at(deadline.into(), fut).await {
        Ok(r) => r?,
        Err(_) => return Err(("timeout", format!("connect + handshake to {} timed out", target.addr))),
    };
    if proto == Protocol::SocketIo {
        socketio_connect(&mut conn, deadline).await?;
    }
    Ok(conn)
}
