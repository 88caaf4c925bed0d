//! The frame path of FFmpeg's VP9 decoder (`DAEDALUS_PATH=frame`): the patched decoder parses
//! each frame whole, as its 2-pass mode does, into memory of ours (a record per block, the
//! coefficients and end-of-block positions, the loop filter's levels and edge masks per
//! superblock: [`records`]), and daedalus reconstructs the frame from them; where it does not
//! (`DAEDALUS=cpu`, no device, a failure), FFmpeg's own second pass reconstructs it from the
//! same data. Frame threads wait on each other's parsing, not on pixels.
//!
//! A decoder context that takes the frame path gets a [`Decoder`] as its provider context: the
//! buffer its frames are parsed into, reused from frame to frame (a context decodes one frame
//! at a time and waits for it at its end).

pub mod records;

use crate::stats::{self, thread_cpu_ns};
use records::{FrameParse, Geometry, Layout, ParseBuffers};
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

/// What the frame path did, for the stats line.
#[derive(Default)]
struct Counters {
    /// Frames parsed whole, and of those the ones FFmpeg's second pass reconstructed.
    frames: AtomicU64,
    frames_ffmpeg: AtomicU64,
    /// Blocks parsed.
    blocks: AtomicU64,
    /// CPU time of the threads that parsed, from the frame's start to its reconstruction (a
    /// slice-threaded decode's workers are not counted).
    parse_cpu_ns: AtomicU64,
}

static COUNTERS: Counters = Counters {
    frames: AtomicU64::new(0),
    frames_ffmpeg: AtomicU64::new(0),
    blocks: AtomicU64::new(0),
    parse_cpu_ns: AtomicU64::new(0),
};

/// Set once a decoder took the frame path.
static TAKEN: AtomicBool = AtomicBool::new(false);

/// A buffer of the parsed data: zeroed, 64-byte aligned.
struct Memory {
    ptr: *mut u8,
    layout: std::alloc::Layout,
}

impl Memory {
    fn new(bytes: usize) -> Option<Memory> {
        let layout = std::alloc::Layout::from_size_align(bytes.max(64), 64).ok()?;
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        (!ptr.is_null()).then_some(Memory { ptr, layout })
    }
}

impl Drop for Memory {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) }
    }
}

/// The frame path's state of one decoder context.
pub struct Decoder {
    /// The buffer the frames are parsed into, and its layout.
    memory: Option<(Memory, Layout)>,
    /// The frame being parsed: its geometry and the thread's CPU time at its start.
    parsing: Option<(Geometry, u64)>,
}

/// A decoder context of FFmpeg's that takes the frame path (`attach`).
pub(crate) fn attach(bpp: c_int) -> *mut c_void {
    if !TAKEN.swap(true, Relaxed) {
        let why = if crate::config::get().mode == crate::config::Mode::Cpu {
            "DAEDALUS=cpu"
        } else {
            "its reconstruction on the GPU is not built yet"
        };
        crate::log::once(
            crate::log::Level::Info,
            "frame path",
            format_args!(
                "the frame path: frames parsed whole first ({bpp}-bit), FFmpeg's second pass \
                 reconstructs them ({why})"
            ),
        );
    }
    Box::into_raw(Box::new(Decoder {
        memory: None,
        parsing: None,
    })) as *mut c_void
}

/// Whether a decoder took the frame path in this process.
pub fn taken() -> bool {
    TAKEN.load(Relaxed)
}

/// Ends a context of [`attach`].
///
/// # Safety
/// `ctx` must come from [`attach`] and not be used again.
pub(crate) unsafe fn detach(ctx: *mut c_void) {
    drop(Box::from_raw(ctx as *mut Decoder));
}

/// # Safety
/// `ctx` must come from [`attach`].
unsafe fn decoder<'a>(ctx: *mut c_void) -> &'a mut Decoder {
    &mut *(ctx as *mut Decoder)
}

/// `parse_begin`: takes the frame, giving the decoder the buffer to parse it into (grown
/// where the frame needs more), or declines it where the buffer cannot be had.
pub(crate) unsafe extern "C" fn parse_begin(
    ctx: *mut c_void,
    info: *const FrameParse,
    bufs: *mut ParseBuffers,
) -> c_int {
    crate::ffi::guard("parse_begin", 0, || {
        let (Some(info), false) = (info.as_ref(), bufs.is_null()) else {
            return 0;
        };
        let d = decoder(ctx);
        let Some(geometry) = Geometry::of(info) else {
            return 0;
        };
        let layout = Layout::new(geometry);
        if !matches!(&d.memory, Some((_, l)) if *l == layout) {
            d.memory = None; // the old buffer first: a size change needs no more than one
            match Memory::new(layout.bytes) {
                Some(m) => d.memory = Some((m, layout)),
                None => {
                    crate::log::once(
                        crate::log::Level::Warn,
                        "parse memory",
                        format_args!(
                            "no memory for a frame's parsed data ({} bytes): FFmpeg decodes \
                             such frames block by block",
                            layout.bytes
                        ),
                    );
                    return 0;
                }
            }
        }
        let (memory, layout) = d.memory.as_ref().expect("allocated above");
        let parsed = layout.buffers(memory.ptr);
        // Superblocks count as parsed only once the decoder says how many blocks they hold.
        std::ptr::write_bytes(parsed.sb_blocks, 0, 2 * geometry.superblocks());
        bufs.write(parsed);
        d.parsing = Some((geometry, thread_cpu_ns()));
        stats::add(&COUNTERS.frames, 1);
        1
    })
}

/// `rows_parsed`: superblock rows `[0, rows)` are parsed.
pub(crate) unsafe extern "C" fn rows_parsed(_ctx: *mut c_void, _rows: c_int) {}

/// `reconstruct`: parsing ended. FFmpeg's second pass reconstructs the frame (nonzero).
pub(crate) unsafe extern "C" fn reconstruct(
    ctx: *mut c_void,
    _rows: c_int,
    _error: c_int,
) -> c_int {
    crate::ffi::guard("reconstruct", 1, || {
        let d = decoder(ctx);
        if let (Some((geometry, cpu)), Some((memory, layout))) = (d.parsing.take(), &d.memory) {
            stats::add_cpu_time(&COUNTERS.parse_cpu_ns, cpu);
            let counts = std::slice::from_raw_parts(
                memory.ptr.add(layout.sb_blocks) as *const u32,
                2 * geometry.superblocks(),
            );
            let blocks: u64 = counts.chunks(2).map(|c| c[1] as u64).sum();
            stats::add(&COUNTERS.blocks, blocks);
        }
        stats::add(&COUNTERS.frames_ffmpeg, 1);
        1
    })
}

/// `parse_end`: the frame's parsed data is no longer read.
pub(crate) unsafe extern "C" fn parse_end(ctx: *mut c_void) {
    crate::ffi::guard("parse_end", (), || {
        decoder(ctx).parsing = None;
    })
}

/// `path=` of the stats line where a decoder took the frame path: `frame` where the GPU
/// reconstructed frames, `frame-cpu` where FFmpeg's second pass reconstructed them all.
pub fn path() -> &'static str {
    "frame-cpu"
}

/// The frame path's part of the stats line.
pub fn describe() -> String {
    let r = |x: &AtomicU64| stats::read(x);
    let c = &COUNTERS;
    format!(
        "frames_parsed={} frames_ffmpeg={} blocks={} parse_cpu_ms={:.3}",
        r(&c.frames),
        r(&c.frames_ffmpeg),
        r(&c.blocks),
        r(&c.parse_cpu_ns) as f64 / 1e6,
    )
}
