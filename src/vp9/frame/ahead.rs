//! Submitters made ahead for frame threads. A decoder context's first frame on the GPU needs
//! a [`Submitter`] (the frame data's buffers; on the H100 at 2160p about 15-25 ms, most of it
//! the driver's allocation of the host's 43 MB), and with frame threads each context meets
//! that need in `parse_begin`, before FFmpeg lets the next thread start: the threads' first
//! frames waited on one another, 40 ms a thread at 2160p, three quarters of a second before
//! the 16th began. So the first context to make its own also starts a thread that makes one
//! for each context still without, one after another (the driver makes them no faster side
//! by side); a context takes a made one, or waits for the one being made.

use super::records::Layout;
use super::submit::Submitter;
use crate::gpu::{Gpu, GpuResult};
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{Condvar, Mutex, MutexGuard};

/// Decoder contexts of the frame path that have not had a submitter yet.
static WITHOUT: AtomicUsize = AtomicUsize::new(0);

/// What the maker made and is making: the layout it makes for, the submitters made and not
/// taken, and whether it runs.
struct Made {
    layout: Option<Layout>,
    ready: Vec<Submitter>,
    making: bool,
}

static MADE: Mutex<Made> = Mutex::new(Made {
    layout: None,
    ready: Vec::new(),
    making: false,
});
/// Signalled when a submitter is made or the maker stops.
static CHANGED: Condvar = Condvar::new();

fn made() -> MutexGuard<'static, Made> {
    MADE.lock().unwrap_or_else(|p| p.into_inner())
}

/// A new context, which will want a submitter.
pub fn context_attached() {
    WITHOUT.fetch_add(1, SeqCst);
}

/// A context ends, `without` one if it never had one. Where none is left without, what was
/// made and not taken is freed.
pub fn context_detached(without: bool) {
    if without {
        WITHOUT.fetch_sub(1, SeqCst);
    }
    if WITHOUT.load(SeqCst) == 0 {
        let spares = std::mem::take(&mut made().ready);
        drop(spares);
    }
}

/// A submitter for frames of `layout`: one made ahead, or made here; `first`: the context's
/// first (it is no longer without one).
pub fn take(gpu: &'static Gpu, layout: Layout, copies: bool, first: bool) -> GpuResult<Submitter> {
    if first {
        WITHOUT.fetch_sub(1, SeqCst);
    }
    let mut m = made();
    loop {
        if let Some(i) = m.ready.iter().position(|s| s.layout == layout) {
            return Ok(m.ready.swap_remove(i));
        }
        if !(m.making && m.layout == Some(layout)) {
            break;
        }
        m = CHANGED.wait(m).unwrap_or_else(|p| p.into_inner());
    }
    drop(m);
    let submitter = Submitter::new(gpu, layout, copies)?;
    if first && WITHOUT.load(SeqCst) > 0 {
        start_maker(gpu, layout, copies);
    }
    Ok(submitter)
}

/// Starts the maker for `layout` where none runs.
fn start_maker(gpu: &'static Gpu, layout: Layout, copies: bool) {
    let mut m = made();
    if m.making {
        return;
    }
    m.making = true;
    m.layout = Some(layout);
    m.ready.retain(|s| s.layout == layout);
    drop(m);
    let started = std::thread::Builder::new()
        .name("daedalus-ahead".into())
        .spawn(move || make_while_wanted(gpu, layout, copies));
    if started.is_err() {
        stop_making(&mut made());
    }
}

/// The maker: one submitter after another while contexts without one outnumber those made.
fn make_while_wanted(gpu: &'static Gpu, layout: Layout, copies: bool) {
    loop {
        {
            let mut m = made();
            if WITHOUT.load(SeqCst) <= m.ready.len() {
                stop_making(&mut m);
                return;
            }
        }
        // (Outside the lock: takers find what is made meanwhile.)
        let made_one = crate::log::guard("making a submitter ahead", None, || {
            Submitter::new(gpu, layout, copies).ok()
        });
        let mut m = made();
        match made_one {
            Some(s) => {
                m.ready.push(s);
                CHANGED.notify_all();
                // (Every context may have ended meanwhile.)
                if WITHOUT.load(SeqCst) == 0 {
                    m.ready.clear();
                }
            }
            None => {
                stop_making(&mut m);
                return;
            }
        }
    }
}

fn stop_making(m: &mut Made) {
    m.making = false;
    CHANGED.notify_all();
}
