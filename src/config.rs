//! Settings from the environment, read once per process.
//!
//! | variable | values | effect |
//! |---|---|---|
//! | `DAEDALUS` | `gpu` (default), `cpu`, `off` | `cpu`: record and defer as usual, execute with the CPU reference; `off`: the FFmpeg provider takes no part |
//! | `DAEDALUS_DEVICE` | index or name substring | which Vulkan device; default discrete > integrated > virtual > CPU |
//! | `DAEDALUS_LOG` | `error`, `warn`, `info`, `debug` | stderr verbosity (default `warn`) |
//! | `DAEDALUS_VALIDATION` | `1` | enable the Khronos validation layer and count its messages |
//! | `DAEDALUS_STATS` | `1` | print one line of counters on stderr at exit |
//! | `DAEDALUS_SPIN_US` | microseconds | how long a flush polls its fence before sleeping in the driver (default 200) |

use crate::log::Level;
use once_cell::sync::Lazy;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Mode {
    Gpu,
    Cpu,
    /// The FFmpeg provider takes no part (the C ABI still works, on the CPU reference).
    Off,
}

#[derive(Debug)]
pub struct Config {
    pub mode: Mode,
    pub device: Option<String>,
    pub log_level: Level,
    pub validation: bool,
    pub spin_us: u64,
    pub stats_at_exit: bool,
}

fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

static CONFIG: Lazy<Config> = Lazy::new(|| {
    let log_level = match var("DAEDALUS_LOG") {
        None => Level::Warn,
        Some(v) => Level::parse(&v).unwrap_or_else(|| {
            eprintln!(
                "daedalus: warning: DAEDALUS_LOG={v:?} is not error/warn/info/debug; using warn"
            );
            Level::Warn
        }),
    };
    let mode = match var("DAEDALUS").as_deref().map(str::trim) {
        None | Some("gpu") => Mode::Gpu,
        Some("cpu") => Mode::Cpu,
        Some("off") => Mode::Off,
        Some(other) => {
            eprintln!("daedalus: warning: DAEDALUS={other:?} is not gpu/cpu/off; using gpu");
            Mode::Gpu
        }
    };
    let spin_us = match var("DAEDALUS_SPIN_US") {
        None => 200,
        Some(v) => v.trim().parse().unwrap_or_else(|_| {
            eprintln!("daedalus: warning: DAEDALUS_SPIN_US={v:?} is not a number; using 200");
            200
        }),
    };
    Config {
        mode,
        device: var("DAEDALUS_DEVICE"),
        log_level,
        validation: var("DAEDALUS_VALIDATION").as_deref() == Some("1"),
        stats_at_exit: var("DAEDALUS_STATS").as_deref() == Some("1"),
        spin_us,
    }
});

pub fn get() -> &'static Config {
    &CONFIG
}
