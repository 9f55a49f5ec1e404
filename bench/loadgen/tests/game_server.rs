//! Runs `game` mode for about two seconds against a tiny typing-race server started in the
//! test (Tachyon's wire format): matchmaking over HTTP, subscribe and join, then a progress
//! update for every keystroke (the player's own, and one of another player), a wpm update now
//! and then, replies to pings, and a WebSocket ping. This drives the epoll play loop: frames
//! that arrive with the join reply, the racing phase, the fast paths, pongs, and a server that
//! closes a player.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use loadgen::common::Common;
use loadgen::frame::{encode_frame, Decoder, Event, OP_CLOSE, OP_PING, OP_TEXT};
use loadgen::game::{self, GameConfig};
use loadgen::json::{self, J};
use loadgen::proto::{self, Protocol, TachyonIn};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

mod common;

static NEXT_PLAYER: AtomicU64 = AtomicU64::new(1);
/// Pongs the clients sent back for the server's WebSocket ping.
static PONGS: AtomicU64 = AtomicU64::new(0);
const ROOM: &str = "ABC234";

fn text(out: &mut Vec<u8>, s: &str) {
    encode_frame(out, true, OP_TEXT, s.as_bytes(), None);
}

/// `close_after`: close the WebSocket (code 4000) after that many keystrokes.
async fn serve(mut s: TcpStream, close_after: Option<u64>) -> std::io::Result<()> {
    let Some((req, rest)) = common::read_head(&mut s).await? else { return Ok(()) };
    if req.starts_with("GET /api/pvp/matchmake") {
        let body = format!("{{\"roomCode\":\"{ROOM}\"}}");
        let resp = format!("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len());
        return s.write_all(resp.as_bytes()).await;
    }
    common::upgrade(&mut s, &req).await?;
    let you = NEXT_PLAYER.fetch_add(1, Ordering::Relaxed);
    let mut dec = Decoder::new(16 * 1024);
    dec.feed(&rest);
    let mut out = Vec::new();
    let mut typed = 0u64;
    loop {
        while let Some(ev) = dec.next_event().expect("valid frames from the client") {
            let m = match ev {
                Event::Text(m) => m,
                Event::Pong(b"hi") => {
                    PONGS.fetch_add(1, Ordering::Relaxed);
                    continue;
                }
                Event::Close(..) => return s.write_all(&out).await,
                _ => continue,
            };
            // Client frames all have a `type` ("subscribe" or "event"), so they parse as control.
            let TachyonIn::Control { kind, r#ref: r, .. } = proto::parse_tachyon(m).expect("a Tachyon frame") else { panic!("no type: {}", String::from_utf8_lossy(m)) };
            let event = json::get(m, "event").unwrap().and_then(json::as_str).unwrap_or_default();
            match (kind.as_ref(), event.as_ref()) {
                ("subscribe", _) => text(&mut out, &format!("{{\"type\":\"subscribed\",\"topic\":\"race:{ROOM}\",\"ref\":1}}")),
                ("event", "pvp:join") => {
                    // The start of the race comes in the same write as the join reply, so it
                    // is already in the client's buffer when the socket moves to the play loop.
                    text(&mut out, &format!("{{\"type\":\"reply\",\"ref\":{},\"data\":{{\"passage\":\"héllo \\\"world\\\"\",\"you\":{you},\"phase\":\"waiting\"}}}}", r.unwrap()));
                    text(&mut out, &format!("{{\"topic\":\"race:{ROOM}\",\"event\":\"pvp:lobby-update\",\"data\":{{\"phase\":\"racing\",\"players\":[]}}}}"));
                    encode_frame(&mut out, true, OP_PING, b"hi", None);
                }
                ("event", "pvp:keystrokes") => {
                    typed += 1;
                    if close_after == Some(typed) {
                        encode_frame(&mut out, true, OP_CLOSE, &4000u16.to_be_bytes(), None);
                        return s.write_all(&out).await;
                    }
                    for pid in [you + 1000, you] {
                        text(&mut out, &format!("{{\"topic\":\"race:{ROOM}\",\"event\":\"pvp:progress-update\",\"data\":{{\"playerId\":{pid},\"typingIndex\":{typed},\"wrong\":0}}}}"));
                    }
                    if typed.is_multiple_of(5) {
                        text(&mut out, &format!("{{\"topic\":\"race:{ROOM}\",\"event\":\"pvp:wpm-update\",\"data\":{{\"elapsedMs\":1,\"players\":[{{\"playerId\":{you},\"wpm\":60}}]}}}}"));
                    }
                }
                ("event", "ping") => text(&mut out, &format!("{{\"type\":\"reply\",\"ref\":{},\"data\":\"pong\"}}", r.unwrap())),
                other => panic!("unexpected frame {other:?}: {}", String::from_utf8_lossy(m)),
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

async fn server(close_after: Option<u64>) -> u16 {
    common::listen(move |s| serve(s, close_after)).await
}

fn config(port: u16) -> GameConfig {
    let mut common = Common::new(&format!("ws://127.0.0.1:{port}/ws"), Protocol::Tachyon);
    common.quiet = true;
    let mut c = GameConfig::new(common);
    c.rate = 50.0;
    c.max_players = 6;
    c.duration_s = 2.0;
    c.keystroke_ms = 50.0;
    c.ping_ms = 200.0;
    // Latency is not what this test checks (a busy CI machine may be slow): errors are.
    c.p95_limit_ms = 10_000.0;
    c
}

fn total(r: &J, field: &str) -> f64 {
    let Some(J::Arr(rows)) = r.get("timeline") else { panic!("no timeline in {r}") };
    rows.iter().map(|row| row.get(field).and_then(J::as_f64).unwrap_or(0.0)).sum()
}

#[test]
fn game_mode_against_in_process_server() {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let port = server(None).await;
        let r = tokio::time::timeout(Duration::from_secs(20), game::run(config(port))).await.expect("game run finished");
        assert_eq!(r.get("all_seconds_ok"), Some(&J::Bool(true)), "{r}");
        assert_eq!(r.get("errors"), Some(&J::Int(0)), "{r}");
        assert_eq!(r.get("tick_us"), Some(&J::Int(250)), "{r}");
        let Some(J::Arr(rows)) = r.get("timeline") else { panic!("{r}") };
        assert_eq!(rows.len(), 2, "{r}");
        let last = &rows[1];
        assert_eq!(last.get("players").and_then(J::as_f64), Some(6.0), "{r}");
        assert_eq!(last.get("racing").and_then(J::as_f64), Some(6.0), "{r}");
        // Six players typing every 50 ms for most of two seconds.
        let keys = total(&r, "keystrokes");
        assert!(keys > 100.0, "{keys} keystrokes: {r}");
        assert_eq!(total(&r, "lost"), 0.0, "{r}");
        // Every keystroke's own progress update was matched (the other player's ignored).
        let key_n: f64 = rows.iter().filter_map(|row| row.get("key")?.get("n").and_then(J::as_f64)).sum();
        assert!(key_n >= keys - 6.0 && key_n <= keys, "{key_n} of {keys}: {r}");
        let ping_n: f64 = rows.iter().filter_map(|row| row.get("ping")?.get("n").and_then(J::as_f64)).sum();
        assert!(ping_n >= 30.0, "{ping_n} pings: {r}");
        assert!(last.get("loadgen_cpu").and_then(J::as_f64).is_some(), "{r}");
        assert_eq!(PONGS.load(Ordering::Relaxed), 6, "every player answers the server's ping");

        // A server that closes each player after 3 keystrokes: counted as disconnects with
        // their reason, and the run still ends on time, its seconds not ok.
        let port = server(Some(3)).await;
        let mut c = config(port);
        c.max_players = 3;
        c.duration_s = 1.0;
        c.tick_us = 0; // and the loop that polls at every event
        let r = tokio::time::timeout(Duration::from_secs(20), game::run(c)).await.expect("game run finished");
        assert_eq!(r.get("all_seconds_ok"), Some(&J::Bool(false)), "{r}");
        assert_eq!(total(&r, "disconnects"), 3.0, "{r}");
        assert_eq!(r.get("error_kinds").and_then(|k| k.get("disconnect")).and_then(J::as_f64), Some(3.0), "{r}");
        let samples = r.get("error_samples").map(|s| s.to_string()).unwrap_or_default();
        assert!(samples.contains("server closed: Some(4000)"), "{r}");
        let Some(J::Arr(rows)) = r.get("timeline") else { panic!("{r}") };
        assert_eq!(rows.last().unwrap().get("players").and_then(J::as_f64), Some(0.0), "{r}");
    });
}
