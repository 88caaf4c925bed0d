//! Frame buffers made ahead for frame threads. FFmpeg lets a frame thread start its frame only
//! once the thread before it has set its own up (`ff_thread_finish_setup`), and a new frame
//! buffer is allocated in that set-up: host memory zeroed and imported, or device memory of
//! the pool, 6-10 ms at 2160p on the H100, and 16 threads allocate 38 of them, one thread
//! after the other. So while several decoder contexts live, a thread of its own keeps a few
//! made ahead, which allocations take; what is not taken is freed once no context is left.
//!
//! (A context attaches at its first frame, after the thread before it has set up: nothing
//! tells the first how many will follow.)

use crate::gpu::memory::{HostBuffer, OwnImport};
use crate::gpu::{Gpu, GpuResult};
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{Condvar, Mutex, MutexGuard};

/// Decoder contexts of the frame path.
static LIVE: AtomicUsize = AtomicUsize::new(0);

/// A new context.
pub fn context_attached() {
    LIVE.fetch_add(1, SeqCst);
}

/// A context ends; where none is left, the maker's last frame buffer is waited for (no thread
/// of ours allocates after the decoders are gone) and those made and not taken are freed.
pub fn context_detached() {
    if LIVE.fetch_sub(1, SeqCst) == 1 {
        let spares = {
            let mut f = frames();
            while f.making {
                f = MAKER_STOPPED.wait(f).unwrap_or_else(|p| p.into_inner());
            }
            f.largest = 0;
            std::mem::take(&mut f.ready)
        };
        drop(spares);
    }
}

/// A frame buffer's memory, not yet registered: device memory of the pool, or host memory
/// imported for its whole life.
pub enum FrameMemory {
    Pool(HostBuffer),
    Own(OwnImport),
}

/// Frame buffers made ahead: of the largest size asked for since a context first lived (the
/// frames', not the intra row backup's, which comes from the same allocator), and of one
/// kind; and whether their maker runs.
struct Frames {
    largest: usize,
    pool: bool,
    ready: Vec<FrameMemory>,
    making: bool,
}

static FRAMES: Mutex<Frames> = Mutex::new(Frames {
    largest: 0,
    pool: false,
    ready: Vec::new(),
    making: false,
});

/// Signalled when the maker stops.
static MAKER_STOPPED: Condvar = Condvar::new();

/// How many frame buffers the maker keeps made while several contexts live.
const SPARES: usize = 4;

fn frames() -> MutexGuard<'static, Frames> {
    FRAMES.lock().unwrap_or_else(|p| p.into_inner())
}

/// A new frame buffer of `size` bytes (`pool`: device memory of the pool, else host memory
/// imported): one made ahead, else made here; while several contexts live, more are made.
pub fn frame_memory(gpu: &'static Gpu, size: usize, pool: bool) -> GpuResult<FrameMemory> {
    let (made_one, stale, frame_sized) = {
        let mut f = frames();
        let mut stale = Vec::new();
        if size > f.largest || pool != f.pool {
            // (Frames of another size or kind from now on: what was made is of no use.)
            stale = std::mem::take(&mut f.ready);
            f.largest = size;
            f.pool = pool;
        }
        let frame_sized = size == f.largest;
        let made_one = if frame_sized { f.ready.pop() } else { None };
        (made_one, stale, frame_sized)
    };
    drop(stale);
    let memory = match made_one {
        Some(m) => {
            crate::stats::add(&crate::stats::COUNTERS.frame_buffers_ahead, 1);
            m
        }
        None => make(gpu, size, pool)?,
    };
    if frame_sized && LIVE.load(SeqCst) > 1 {
        start_maker(gpu, size, pool);
    }
    Ok(memory)
}

fn make(gpu: &'static Gpu, size: usize, pool: bool) -> GpuResult<FrameMemory> {
    if pool {
        HostBuffer::for_frame(gpu, size as u64).map(FrameMemory::Pool)
    } else {
        OwnImport::new(gpu, size).map(FrameMemory::Own)
    }
}

/// Starts the maker of frame buffers of `size` and `pool` where none runs.
fn start_maker(gpu: &'static Gpu, size: usize, pool: bool) {
    {
        let mut f = frames();
        if f.making {
            return;
        }
        f.making = true;
    }
    let started = std::thread::Builder::new()
        .name("daedalus-frames".into())
        .spawn(move || make_while_wanted(gpu, size, pool));
    if started.is_err() {
        stopped(&mut frames());
    }
}

/// The maker: frame buffers until [`SPARES`] are made, while several contexts live and the
/// size and kind are still those asked for.
fn make_while_wanted(gpu: &'static Gpu, size: usize, pool: bool) {
    loop {
        {
            let mut f = frames();
            let wanted = f.largest == size && f.pool == pool && LIVE.load(SeqCst) > 1;
            if !wanted || f.ready.len() >= SPARES {
                stopped(&mut f);
                return;
            }
        }
        let made_one = crate::log::guard("making a frame buffer ahead", None, || {
            make(gpu, size, pool).ok()
        });
        let Some(memory) = made_one else {
            stopped(&mut frames());
            return;
        };
        let mut f = frames();
        // (Every context may have ended meanwhile, or frames of another size begun.)
        if f.largest == size && f.pool == pool && LIVE.load(SeqCst) > 0 {
            f.ready.push(memory);
        } else {
            drop(f);
            drop(memory);
        }
    }
}

fn stopped(f: &mut Frames) {
    f.making = false;
    MAKER_STOPPED.notify_all();
}
