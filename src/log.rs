//! Messages on stderr, prefixed `daedalus:`, filtered by `DAEDALUS_LOG`
//! (`error`, `warn` (default), `info`, `debug`). `warn_once` keeps repeated conditions to one
//! line per process.

use once_cell::sync::Lazy;
use std::collections::HashSet;
use std::sync::Mutex;

/// The levels, as the settings hold `DAEDALUS_LOG`.
pub use crate::config::Level;

pub fn enabled(level: Level) -> bool {
    level <= crate::config::get().log_level
}

pub fn emit(level: Level, args: std::fmt::Arguments) {
    if enabled(level) {
        let tag = match level {
            Level::Error => "error: ",
            Level::Warn => "warning: ",
            Level::Info | Level::Debug => "",
        };
        eprintln!("daedalus: {tag}{args}");
    }
}

static ONCE: Lazy<Mutex<HashSet<String>>> = Lazy::new(|| Mutex::new(HashSet::new()));

/// Logs `args` the first time `key` is seen in this process.
pub fn once(level: Level, key: &str, args: std::fmt::Arguments) {
    let first = ONCE
        .lock()
        .map(|mut s| s.insert(key.to_owned()))
        .unwrap_or(true);
    if first {
        emit(level, args);
    }
}

#[macro_export]
macro_rules! error {
    ($($t:tt)*) => { $crate::log::emit($crate::log::Level::Error, format_args!($($t)*)) };
}
#[macro_export]
macro_rules! warn {
    ($($t:tt)*) => { $crate::log::emit($crate::log::Level::Warn, format_args!($($t)*)) };
}
#[macro_export]
macro_rules! info {
    ($($t:tt)*) => { $crate::log::emit($crate::log::Level::Info, format_args!($($t)*)) };
}
#[macro_export]
macro_rules! debug {
    ($($t:tt)*) => { $crate::log::emit($crate::log::Level::Debug, format_args!($($t)*)) };
}

/// Runs `f`, catching a panic (logged once per place) so that none crosses the C ABI: every
/// entry point from C, and every hook a decoder calls, runs inside one. Inlined: every
/// recorded call passes one.
#[inline]
pub(crate) fn guard<T>(what: &str, fallback: T, f: impl FnOnce() -> T) -> T {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(v) => v,
        Err(_) => {
            once(
                Level::Error,
                what,
                format_args!("internal error in {what} (a bug: please report it)"),
            );
            fallback
        }
    }
}
