//! Runs `echo` mode for about a second against a tiny WebSocket echo server started in the
//! test (the crate's own decoder unmasks the client frames; replies are unmasked).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use loadgen::common::Common;
use loadgen::echo::{self, EchoConfig};
use loadgen::fanout::{self, FanoutConfig};
use loadgen::frame::{encode_frame, Decoder, Event, OP_BINARY, OP_CLOSE, OP_PING, OP_PONG, OP_TEXT};
use loadgen::json::J;
use loadgen::proto::Protocol;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

mod common;
use tokio::net::TcpStream;

/// Pongs received from the client for the server's pings (one per connection).
static PONGS: AtomicUsize = AtomicUsize::new(0);

async fn serve(mut s: TcpStream) -> std::io::Result<()> {
    let Some((req, rest)) = common::read_head(&mut s).await? else { return Ok(()) };
    common::upgrade(&mut s, &req).await?;
    let mut dec = Decoder::new(64 * 1024);
    dec.feed(&rest);
    let mut out = Vec::new();
    // Ping the client once, to check that it answers with a pong.
    encode_frame(&mut out, true, OP_PING, b"hi", None);
    loop {
        while let Some(ev) = dec.next_event().expect("valid frames from the client") {
            match ev {
                Event::Text(p) => encode_frame(&mut out, true, OP_TEXT, p, None),
                Event::Binary(p) => encode_frame(&mut out, true, OP_BINARY, p, None),
                Event::Ping(p) => encode_frame(&mut out, true, OP_PONG, p, None),
                Event::Pong(p) => {
                    if p == b"hi" {
                        PONGS.fetch_add(1, Ordering::Relaxed);
                    }
                }
                Event::Close(code, _) => {
                    encode_frame(&mut out, true, OP_CLOSE, &code.unwrap_or(1005).to_be_bytes(), None);
                    s.write_all(&out).await?;
                    return Ok(());
                }
            }
        }
        if !out.is_empty() {
            s.write_all(&out).await?;
            out.clear();
        }
        dec.prepare_read();
        if s.read_buf(&mut dec.buf).await? == 0 {
            return Ok(());
        }
    }
}

#[test]
fn echo_mode_against_in_process_server() {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let port = common::listen(serve).await;
        // 16-bit and 64-bit lengths, and the smallest text message.
        for (binary, size) in [(false, 70_000), (true, 300), (false, 11)] {
            let mut common = Common::new(&format!("ws://127.0.0.1:{port}/echo"), Protocol::Raw);
            common.quiet = true;
            // Any pid will do: the test's own process stands in for the server.
            common.server_pid = Some(std::process::id());
            let mut cfg = EchoConfig::new(common);
            cfg.connections = 4;
            cfg.inflight = 4;
            cfg.size = size;
            cfg.binary = binary;
            cfg.warmup_s = 0.1;
            cfg.duration_s = 0.4;
            let r = tokio::time::timeout(Duration::from_secs(10), echo::run(cfg)).await.expect("echo run finished");
            assert_eq!(r.get("ok"), Some(&J::Bool(true)), "{r}");
            assert_eq!(r.get("errors"), Some(&J::Int(0)), "{r}");
            assert_eq!(r.get("unanswered"), Some(&J::Int(0)), "{r}");
            assert!(r.get("messages").and_then(J::as_f64).unwrap() > 100.0, "{r}");
            let lat = r.get("latency_us").unwrap();
            assert!(lat.get("p50").and_then(J::as_f64).unwrap() > 0.0, "{r}");
            assert!(r.get("cpu_busy").and_then(J::as_f64).is_some(), "{r}");
            assert!(r.get("server_cpu").and_then(|c| c.get("cpu_s")).and_then(J::as_f64).is_some(), "{r}");
            assert_eq!(r.get("message_bytes").and_then(J::as_f64), Some(size as f64), "{r}");
        }
        assert_eq!(PONGS.load(Ordering::Relaxed), 12, "every connection answers the server's ping");

        // An echo server is a correct fan-out server for one subscriber: its own messages come
        // back to the sender. With --envelope they are Tachyon deliveries (the fast path), and
        // the window keeps at most 2 bursts in flight.
        let mut common = Common::new(&format!("ws://127.0.0.1:{port}/fanout"), Protocol::Raw);
        common.quiet = true;
        let mut cfg = FanoutConfig::new(common);
        cfg.subscribers = 1;
        cfg.senders = 1;
        cfg.burst = 5;
        cfg.interval_ms = 0.0;
        cfg.window = 2;
        cfg.envelope = true;
        cfg.warmup_s = 0.1;
        cfg.duration_s = 0.3;
        let r = tokio::time::timeout(Duration::from_secs(10), fanout::run(cfg)).await.expect("fanout run finished");
        assert_eq!(r.get("ok"), Some(&J::Bool(true)), "{r}");
        assert_eq!(r.get("missing"), Some(&J::Int(0)), "{r}");
        assert_eq!(r.get("fanout_ratio").and_then(J::as_f64), Some(1.0), "{r}");
        assert!(r.get("sent").and_then(J::as_f64).unwrap() > 50.0, "{r}");
        assert_eq!(r.get("envelope"), Some(&J::Bool(true)), "{r}");
        assert_eq!(r.get("server_cpu"), Some(&J::Null), "{r}");
    });
}
