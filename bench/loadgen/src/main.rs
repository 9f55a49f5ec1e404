//! Command line of the load generator. See README.md for the options and the report.

use std::collections::HashMap;
use std::process::ExitCode;

use loadgen::common::Common;
use loadgen::connections::ConnectionsConfig;
use loadgen::echo::EchoConfig;
use loadgen::fanout::FanoutConfig;
use loadgen::game::GameConfig;
use loadgen::json::J;
use loadgen::proto::Protocol;

const USAGE: &str = "\
usage: loadgen <mode> --url ws://HOST:PORT/PATH [options]

modes:
  echo         N connections each keep W messages in flight
               --connections N (10) --inflight W (1) --size BYTES (64) --binary | --text (text)
               --duration S (5) --warmup S (1) --drain S (2)
  fanout       subscribers on one topic, some of them sending bursts
               --subscribers N (50) --senders S (10) --burst B (10) --interval-ms I (100; 0 = as fast
               as the socket takes) --window W (0: none; at most W bursts of a sender on their way)
               --duration S (5) --warmup S (1) --drain S (3) --topic NAME (bench)
               --size BYTES (64) --binary (raw only) --senders-subscribe (default: senders are the
               first S subscribers) | --extra-senders (S more connections that only send)
               --publish-event NAME (bench:publish) --deliver-event NAME (bench) --join-event NAME (join)
               --envelope (raw only: send and expect the Tachyon delivery envelope)
               --sender-url ws://… (with --extra-senders: the senders connect to this other server)
  connections  open N idle connections and hold them
               --count N (1000) --hold S (1)
  game         typing-race players (examples/typing-race) arriving at a fixed rate: matchmake over
               HTTP, join, wait for the start, a keystroke every 200 ms, a ping every second
               --rate R (4 players/s) --max-players N (no limit) --duration S (60)
               --keystroke-ms MS (200) --ping-ms MS (1000) --matchmake-path P (/api/pvp/matchmake)
               --p95-limit-ms MS (50) --stop-after-bad N (0: never; stop after N bad seconds in a row)
               --warmup S (0: bad seconds before S do not count towards stopping)
               --tick-us US (250: the play loop polls at most once per tick; 0: at every event)
               --compact (tachyon only: keystrokes as binary event frames, code 1 + the character's
               UTF-8, for a server that declares the event with `binary: 1`; docs/protocol.md; a
               binary answer [1, typingIndex u32 LE] confirms a keystroke as its progress update does)
               --view-p95-limit-ms MS (the p95 limit: keystroke -> the room's progress update,
               what the other players see; a server that holds room events for a tick needs more)
               --protocol tachyon|socketio; --url ws://HOST:PORT/ws (Socket.IO: ws://HOST:PORT/)

common options:
  --protocol raw|tachyon|socketio (raw)   --sources IP,IP,...   --threads N (1: current-thread runtime)
  --connect-concurrency N (64)   --setup-timeout S (30)   --quiet
  --server-pid PID   report that process's CPU time over the measured window (server_cpu);
                     connections mode also reads its VmRSS

Prints one JSON object on stdout; progress goes to stderr. Exit status: 0 when the report
says ok, 1 when it does not, 2 for bad arguments.";

const FLAGS: &[&str] = &["compact", "envelope", "binary", "text", "senders-subscribe", "extra-senders", "quiet", "help"];

struct Args {
    values: HashMap<String, String>,
    flags: Vec<String>,
}

impl Args {
    fn parse(raw: &[String]) -> Result<Args, String> {
        let mut values = HashMap::new();
        let mut flags = Vec::new();
        let mut i = 0;
        while i < raw.len() {
            let a = &raw[i];
            let Some(name) = a.strip_prefix("--") else { return Err(format!("unexpected argument {a:?}")) };
            if let Some((k, v)) = name.split_once('=') {
                values.insert(k.to_string(), v.to_string());
            } else if FLAGS.contains(&name) {
                flags.push(name.to_string());
            } else {
                let v = raw.get(i + 1).ok_or(format!("--{name} needs a value"))?;
                values.insert(name.to_string(), v.clone());
                i += 1;
            }
            i += 1;
        }
        Ok(Args { values, flags })
    }

    fn flag(&self, name: &str) -> bool {
        self.flags.iter().any(|f| f == name)
    }

    fn take(&mut self, name: &str) -> Option<String> {
        self.values.remove(name)
    }

    fn num<T: std::str::FromStr>(&mut self, name: &str, default: T) -> Result<T, String> {
        match self.take(name) {
            None => Ok(default),
            Some(v) => v.parse().map_err(|_| format!("--{name}: bad number {v:?}")),
        }
    }

    fn secs(&mut self, name: &str, default: f64) -> Result<f64, String> {
        let v: f64 = self.num(name, default)?;
        if !v.is_finite() || v < 0.0 {
            return Err(format!("--{name} must be a non-negative number of seconds"));
        }
        Ok(v)
    }

    fn done(&self) -> Result<(), String> {
        match self.values.keys().next() {
            Some(k) => Err(format!("unknown option --{k}")),
            None => Ok(()),
        }
    }
}

enum Mode {
    Echo(EchoConfig),
    Fanout(FanoutConfig),
    Connections(ConnectionsConfig),
    Game(GameConfig),
}

fn build(mode: &str, mut a: Args) -> Result<Mode, String> {
    let url = a.take("url").ok_or("--url is required")?;
    let protocol = Protocol::parse(&a.take("protocol").unwrap_or_else(|| "raw".into()))?;
    let mut common = Common::new(&url, protocol);
    if let Some(s) = a.take("sources") {
        common.sources = loadgen::conn::parse_sources(&s)?;
    }
    common.threads = a.num("threads", 1usize)?.max(1);
    common.connect_concurrency = a.num("connect-concurrency", 64usize)?.max(1);
    common.setup_timeout_s = a.secs("setup-timeout", 30.0)?;
    common.quiet = a.flag("quiet");
    common.server_pid = a.take("server-pid").map(|p| p.parse().map_err(|_| format!("--server-pid: bad pid {p:?}"))).transpose()?;
    if a.flag("binary") && a.flag("text") {
        return Err("--binary and --text exclude each other".into());
    }
    let m = match mode {
        "echo" => {
            let mut c = EchoConfig::new(common);
            c.connections = a.num("connections", c.connections)?;
            c.inflight = a.num("inflight", c.inflight)?.max(1);
            c.size = a.num("size", c.size)?;
            c.binary = a.flag("binary");
            c.duration_s = a.secs("duration", c.duration_s)?;
            c.warmup_s = a.secs("warmup", c.warmup_s)?;
            c.drain_s = a.secs("drain", c.drain_s)?;
            Mode::Echo(c)
        }
        "fanout" => {
            let mut c = FanoutConfig::new(common);
            c.subscribers = a.num("subscribers", c.subscribers)?;
            c.senders = a.num("senders", c.senders)?;
            c.burst = a.num("burst", c.burst)?;
            c.interval_ms = a.secs("interval-ms", c.interval_ms)?;
            c.window = a.num("window", c.window)?;
            c.duration_s = a.secs("duration", c.duration_s)?;
            c.warmup_s = a.secs("warmup", c.warmup_s)?;
            c.drain_s = a.secs("drain", c.drain_s)?;
            c.size = a.num("size", c.size)?;
            c.binary = a.flag("binary");
            if a.flag("extra-senders") && a.flag("senders-subscribe") {
                return Err("--extra-senders and --senders-subscribe exclude each other".into());
            }
            c.senders_subscribe = !a.flag("extra-senders");
            c.envelope = a.flag("envelope");
            c.sender_url = a.take("sender-url");
            if let Some(t) = a.take("topic") {
                c.topic = t;
            }
            if let Some(e) = a.take("publish-event") {
                c.publish_event = e;
            }
            if let Some(e) = a.take("deliver-event") {
                c.deliver_event = e;
            }
            if let Some(e) = a.take("join-event") {
                c.join_event = e;
            }
            Mode::Fanout(c)
        }
        "connections" => {
            let mut c = ConnectionsConfig::new(common);
            c.count = a.num("count", c.count)?;
            c.hold_s = a.secs("hold", c.hold_s)?;
            Mode::Connections(c)
        }
        "game" => {
            let mut c = GameConfig::new(common);
            c.rate = a.num("rate", c.rate)?;
            c.max_players = a.num("max-players", c.max_players)?;
            c.duration_s = a.secs("duration", c.duration_s)?;
            c.keystroke_ms = a.num("keystroke-ms", c.keystroke_ms)?;
            c.ping_ms = a.num("ping-ms", c.ping_ms)?;
            c.p95_limit_ms = a.num("p95-limit-ms", c.p95_limit_ms)?;
            c.view_p95_limit_ms = a.num("view-p95-limit-ms", c.p95_limit_ms)?;
            c.stop_after_bad = a.num("stop-after-bad", c.stop_after_bad)?;
            c.warmup_s = a.secs("warmup", c.warmup_s)?;
            c.tick_us = a.num("tick-us", c.tick_us)?;
            c.compact = a.flag("compact");
            if let Some(p) = a.take("matchmake-path") {
                c.matchmake_path = p;
            }
            c.validate()?;
            Mode::Game(c)
        }
        other => return Err(format!("unknown mode {other:?}")),
    };
    a.done()?;
    Ok(m)
}

fn main() -> ExitCode {
    loadgen::origin();
    let raw: Vec<String> = std::env::args().skip(1).collect();
    let Some(mode) = raw.first().cloned() else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    if mode == "--help" || mode == "-h" || mode == "help" {
        println!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    let args = match Args::parse(&raw[1..]) {
        Ok(a) if a.flag("help") => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Ok(a) => a,
        Err(e) => {
            eprintln!("loadgen: {e}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let m = match build(&mode, args) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("loadgen: {e}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let (threads, conns) = match &m {
        Mode::Echo(c) => (c.common.threads, c.connections),
        Mode::Fanout(c) => (c.common.threads, c.total_connections()),
        Mode::Connections(c) => (c.common.threads, c.count),
        Mode::Game(c) => (c.common.threads, c.max_players.min((c.rate * c.duration_s) as usize + 1)),
    };
    loadgen::raise_nofile_limit(conns as u64 + 1024);
    let rt = if threads <= 1 {
        tokio::runtime::Builder::new_current_thread().enable_all().build()
    } else {
        tokio::runtime::Builder::new_multi_thread().worker_threads(threads).enable_all().build()
    };
    let rt = match rt {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("loadgen: cannot start the runtime: {e}");
            return ExitCode::from(2);
        }
    };
    let report: J = rt.block_on(async move {
        match m {
            Mode::Echo(c) => loadgen::echo::run(c).await,
            Mode::Fanout(c) => loadgen::fanout::run(c).await,
            Mode::Connections(c) => loadgen::connections::run(c).await,
            Mode::Game(c) => loadgen::game::run(c).await,
        }
    });
    // Do not wait for connection tasks that are still closing.
    rt.shutdown_background();
    println!("{report}");
    if report.get("ok") == Some(&J::Bool(true)) {
        ExitCode::SUCCESS
    } else {
        if let Some(J::Arr(r)) = report.get("reasons") {
            for reason in r {
                eprintln!("[loadgen] NOT OK: {}", reason.to_string().trim_matches('"'));
            }
        }
        ExitCode::from(1)
    }
}
