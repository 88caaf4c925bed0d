//! The frame path of FFmpeg's VP9 decoder (`DAEDALUS_PATH=frame`): the patched decoder parses
//! each frame whole, as its 2-pass mode does, into memory of ours (a record per block, the
//! coefficients and end-of-block positions, the loop filter's levels and edge masks per
//! superblock: [`records`]), and the GPU reconstructs the frame from them, one submission at
//! the parse's end ([`submit`]: [`inter`], [`intra`], [`loopfilter`]). Where the GPU does
//! not (`DAEDALUS=cpu`, no device, a failure), FFmpeg's own second pass reconstructs the frame
//! from the same data. Frame threads wait on each other's parsing, not on pixels. Where
//! `DAEDALUS_PATH` is unset, a trial picks per frame class (size and bit depth) between the
//! frame path and FFmpeg's own decode ([`choice`]): the decoder then parses and reconstructs
//! the frames it is left block by block, as without daedalus.
//!
//! A decoder context that takes the frame path gets a [`Decoder`] as its provider context: the
//! buffer its frames are parsed into, reused from frame to frame. The decoder holds the frame
//! ([`HELD`]): the GPU reconstructs it while the decoder parses the next one into another
//! buffer (with frame threads, while the context's thread takes its next packet), and the
//! frame is handed out later, once [`finish`] has waited for it. A thread of the context's
//! own records and submits each held frame's work meanwhile ([`held`]).

mod ahead;
mod batches;
mod choice;
pub(crate) mod contexts;
mod copies;
pub(crate) mod decisions;
mod fates;
pub mod header;
mod held;
mod inter;
mod intra;
mod levels;
mod loopfilter;
pub mod records;
mod report;
mod residuals;
mod setup;
mod submit;
mod submit_thread;
#[doc(hidden)]
pub mod testing;
mod together;
mod wavefront;

use crate::gpu::memory::BufferRef;
use crate::kernels::Kernel;
use crate::stats::{self, thread_cpu_ns};
pub(crate) use ahead::{frame_memory, FrameMemory};
use fates::FATES;
use held::HeldFrames;
use records::{FrameParse, Geometry, Layout, ParseBuffers, SbBlocks, SB_WORDS};
use report::COUNTERS;
pub use report::{describe, summary, trial_results, Summary};
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use submit::Submitter;

/// Set once a decoder took the frame path; and once one chooses per frame ([`choice`]).
static TAKEN: AtomicBool = AtomicBool::new(false);
static CHOOSING: AtomicBool = AtomicBool::new(false);

/// A buffer of the parsed data where the GPU does not read it: zeroed, page-aligned, and
/// mapped on demand. (Zeroed eagerly, as an allocator zeroes memory of this alignment, a
/// 2160p frame's 66 MB took a decoder context's first frame 20-30 ms of page faults and
/// writes before its parse began, one frame thread after another.)
struct Memory {
    ptr: *mut u8,
    bytes: usize,
}

// A mapping of this process's, owned by one frame or decoder at a time.
unsafe impl Send for Memory {}

impl Memory {
    /// `bytes` zeroed, or none after one warning (FFmpeg then decodes such frames itself).
    fn new(bytes: usize) -> Option<Memory> {
        let bytes = bytes.max(1);
        // SAFETY: a private anonymous mapping of no file: the kernel's zero pages until written.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            crate::log::once(
                crate::log::Level::Warn,
                "parse memory",
                format_args!(
                    "no memory for a frame's parsed data ({bytes} bytes): FFmpeg decodes such \
                     frames block by block"
                ),
            );
            return None;
        }
        Some(Memory {
            ptr: ptr as *mut u8,
            bytes,
        })
    }
}

impl Drop for Memory {
    fn drop(&mut self) {
        // SAFETY: mapped in `new` with this size, and no longer used.
        unsafe { libc::munmap(self.ptr as *mut libc::c_void, self.bytes) };
    }
}

/// `reconstruct`'s answer where the decoder may hold the frame: the GPU still works on it.
pub const HELD: c_int = 2;

/// The frame path's state of one decoder context.
pub struct Decoder {
    /// Where frames are parsed when FFmpeg reconstructs them, and its layout.
    memory: Option<(Memory, Layout)>,
    /// The GPU's objects and the frame data it reads, where it reconstructs frames.
    gpu: Option<Submitter>,
    /// The frame being parsed.
    frame: Option<Frame>,
    /// Frames the decoder holds, oldest first, each with the GPU objects and data it was
    /// parsed into ([`held`]); and those objects, once free, for the next frames.
    held: HeldFrames<Submission>,
    spare: Vec<Submitter>,
    /// Whether it chooses per frame between the frame path and FFmpeg ([`choice`]); the
    /// trial block its frame times, and the frame it left to FFmpeg, until the frame's end.
    choosing: bool,
    ticket: Option<choice::Ticket>,
    declined: Option<usize>,
    /// Whether it chose for a frame before: its first frame cannot tell one context from
    /// frame threads ([`decisions::pick`]).
    chose_before: bool,
}

/// A frame the GPU reconstructs while the decoder goes on ([`HELD`]).
struct Held {
    frame: Frame,
    submitter: Submitter,
    /// The bytes the decoder wrote for it, counted if the GPU's result is kept.
    data_bytes: u64,
}

/// A held frame on its way to the GPU: its rows parsed (`parsed`) and to filter (`filtered`).
struct Submission {
    held: Held,
    parsed: usize,
    filtered: usize,
}

impl held::Submission for Submission {
    fn submit(&mut self) {
        let h = &mut self.held;
        submit_frame(&mut h.frame, &mut h.submitter, self.parsed, self.filtered);
    }

    fn data0(&self) -> usize {
        self.held.frame.data0
    }
}

struct Frame {
    geometry: Geometry,
    /// The parsing thread's CPU time at the frame's start.
    cpu_start: u64,
    /// The frame's `data[0]`, which names it.
    data0: usize,
    on_gpu: Option<GpuFrame>,
    /// Where it is parsed where that is not its GPU objects' buffer: those objects are made once
    /// its parse ends ([`Begin`]).
    parsed_in: Option<(Memory, Layout)>,
    /// Whether the decoder may hold it ([`HELD`]): not while other frame threads may leave
    /// frames to FFmpeg's own decode, which then waits for its pixels, and which a thread
    /// still setting up may wait for in turn, while the user's thread, which finishes a held
    /// frame, waits for that thread.
    holdable: bool,
}

/// A frame the GPU reconstructs.
struct GpuFrame {
    /// Its place among the frames ([`fates`]); whether it is done submitting.
    seq: fates::Seq,
    released: bool,
    loop_filter: bool,
    /// The kernel of its inter blocks' prediction: none in a key frame or an intra-only
    /// frame, the scaled variant where a reference is of another size.
    prediction: Option<Kernel>,
    /// What cuts its blocks' transform grids at its edges ([`residuals`]).
    edges: residuals::Frame,
    /// The references' `data[0]`; once it is submitted, those it read while the GPU's result
    /// for them was not decided yet ([`fates`]).
    references: [usize; 3],
    read_pending: Vec<(fates::Seq, usize)>,
    /// Whether the GPU's result for it is decided ([`fates`]): kept, or left to FFmpeg.
    decided: bool,
    /// The buffers its kernels bind, kept for the frame's life.
    _regions: Vec<Arc<crate::regions::Region>>,
    /// Where the kernels work on device-local copies ([`copies`]): the frame's and the
    /// references' regions, planes and rows to copy.
    copies: Option<FrameCopies>,
    /// Why the GPU stopped reconstructing it.
    failed: Option<String>,
    /// What starts it on the GPU once it is parsed, until then.
    begin: Option<Begin>,
}

/// A frame's start on the GPU once it is parsed ([`Decoder::start_on_gpu`]): its header, and
/// the buffers its kernels bind; where its decoder had no GPU objects free for it, those are
/// made then too. Both were made at `parse_begin` once, which FFmpeg's next frame thread waits
/// for (`ff_thread_finish_setup`): the frame data's buffers took 15-23 ms at 2160p on the
/// NVIDIA H100, and a new frame buffer's device-local copy 0.3-0.6 ms, but 7.5-10 ms while
/// other threads made their objects, so that 16 threads started about 10 ms apart. After
/// the parse, the threads make theirs side by side.
struct Begin {
    header: Box<[u32; header::WORDS]>,
    scans: &'static [u32],
    /// Where the kernels work on device-local copies of the frame and its references.
    device_copies: bool,
    frame: Arc<crate::regions::Region>,
    references: [Option<Arc<crate::regions::Region>>; 3],
}

/// A frame buffer's region, planes and the rows of each to copy.
type PlanesToCopy = (Arc<crate::regions::Region>, header::Planes, [u32; 3]);

/// What a frame copies where the kernels work on device-local copies.
struct FrameCopies {
    /// Copied back at its end.
    frame: PlanesToCopy,
    /// Uploaded by its submission where their copies do not hold them.
    references: Vec<PlanesToCopy>,
}

/// Why decoders may not choose per frame between the frame path and FFmpeg's own decode
/// (`DAEDALUS_PATH` unset), where only FFmpeg could win: a CPU device known from an earlier
/// run, whose work takes the decoder's own cores (unless `DAEDALUS_TRIAL_FRAMES` asks for a
/// trial or `DAEDALUS_TEST_ALTERNATE` for switches). The device is not set up here but when a
/// frame first would take the GPU, on a thread of its own while FFmpeg decodes the frames that
/// come meanwhile ([`setup`]); on a device's first decode that thread learns what the device is
/// (no device, or a CPU one, leaves the frames to FFmpeg after all) and has the kernels built
/// (by the builder process where no cache holds them: seconds of compiling).
pub(crate) fn choosing_declined() -> Option<&'static str> {
    if decisions::any() {
        crate::regions::defer_device();
        return None;
    }
    match crate::decisions::device_known() {
        // (A CPU device known from an earlier run is not set up at all.)
        Some(true) if !crate::config::get().trial_asked() => Some("cpu-device"),
        // (A CPU device the builder process found: whether it imports is not known yet.)
        Some(_) if crate::decisions::get("host-import").is_none() => {
            crate::regions::defer_unknown_device();
            None
        }
        Some(_) => {
            crate::regions::defer_device();
            None
        }
        None => {
            setup::device_unknown();
            crate::regions::defer_unknown_device();
            None
        }
    }
}

/// A decoder context of FFmpeg's that chooses per frame between the frame path and FFmpeg's
/// own decode; `None` where it may not ([`choosing_declined`]).
pub(crate) fn attach_choosing() -> Option<*mut c_void> {
    if choosing_declined().is_some() {
        return None;
    }
    TAKEN.store(true, Relaxed);
    CHOOSING.store(true, Relaxed);
    choice::decoder_attached();
    Some(new_decoder(true))
}

/// A decoder context of FFmpeg's that takes the frame path (`attach`).
pub(crate) fn attach() -> *mut c_void {
    let on_cpu = crate::config::get().mode == crate::config::Mode::Cpu;
    if !TAKEN.swap(true, Relaxed) && on_cpu {
        crate::log::once(
            crate::log::Level::Info,
            "frame path on the CPU",
            format_args!(
                "the frame path: frames parsed whole first, FFmpeg's second pass reconstructs \
                 them (DAEDALUS=cpu)"
            ),
        );
    }
    new_decoder(false)
}

fn new_decoder(choosing: bool) -> *mut c_void {
    ahead::context_attached();
    Box::into_raw(Box::new(Decoder {
        memory: None,
        gpu: None,
        frame: None,
        held: HeldFrames::default(),
        spare: Vec::new(),
        choosing,
        ticket: None,
        declined: None,
        chose_before: false,
    })) as *mut c_void
}

/// Whether a decoder took the frame path in this process.
pub fn taken() -> bool {
    TAKEN.load(Relaxed)
}

/// Whether the decoders' frames should be memory the GPU works on in place (`frame_alloc`).
pub fn wants_frames() -> bool {
    // (Not where the device's set-up found it unfit after all.)
    let declined = crate::paths::vp9().is_some_and(|t| t.path == crate::paths::Path::Own);
    taken() && !declined && (crate::regions::frames_imported_later() || gpu_wanted())
}

/// Whether the GPU is to reconstruct frames: `DAEDALUS=gpu` and a usable device.
fn gpu_wanted() -> bool {
    crate::config::get().mode == crate::config::Mode::Gpu && crate::gpu::get().is_some()
}

/// Ends a context of [`attach`].
///
/// # Safety
/// `ctx` must come from [`attach`] and not be used again.
pub(crate) unsafe fn detach(ctx: *mut c_void) {
    let mut d = Box::from_raw(ctx as *mut Decoder);
    ahead::context_detached();
    // (A frame whose parse never ended is over; the decoder finishes what it holds first;
    // whatever is left is over once its GPU work is.)
    d.end_parse();
    let mut idle = d.gpu.take().filter(|s| !s.busy());
    let mut all_finished = true;
    for Submission { mut held, .. } in d.held.drain() {
        all_finished &= held.submitter.finish().is_ok();
        FATES.end(held.frame.data0);
        idle = idle.or(Some(held.submitter));
    }
    // (The next context's first frame takes its objects; none after a failed wait.)
    if let Some(submitter) = idle.or_else(|| d.spare.pop()) {
        if all_finished && crate::gpu::get().is_some() {
            submitter.leave();
        }
    }
    // (Its trial frame first: the last decoder to end keeps what a trial measured.)
    if let Some(ticket) = d.ticket {
        choice::untimed(ticket);
    }
    if d.choosing {
        choice::decoder_detached();
        setup::wait_for_setup();
        // (After the set-up, which makes them: none is left to take them.)
        if !choice::any_choosing() {
            Submitter::free_ahead();
        }
    }
    if let Some(data0) = d.declined {
        FATES.end(data0);
    }
    drop(d);
    stats::max(&COUNTERS.last_detached_us, stats::since_attach_us());
}

/// # Safety
/// `ctx` must come from [`attach`].
unsafe fn decoder<'a>(ctx: *mut c_void) -> &'a mut Decoder {
    &mut *(ctx as *mut Decoder)
}

/// Whether the GPU takes frames of geometry `g`, else why not: the job words' and the header's
/// limits, and the device's kernels of the frames' depth.
fn takes_frames_of(g: Geometry) -> Result<(), String> {
    let records = g.superblocks() * records::RECORDS_PER_SB;
    if records > residuals::MAX_RECORDS as usize {
        return Err(format!(
            "frames over {} superblocks",
            residuals::MAX_RECORDS as usize / records::RECORDS_PER_SB
        ));
    }
    if g.sb_cols > header::MAX_SB_COLS {
        return Err(format!(
            "frames over {} pixels wide",
            64 * header::MAX_SB_COLS
        ));
    }
    if !setup::kernels_usable(g.bytes_per_pixel) {
        let bits = if g.bytes_per_pixel > 1 {
            " at 10 and 12 bits"
        } else {
            ""
        };
        return Err(format!("the device lacks the frame path's kernels{bits}"));
    }
    Ok(())
}

/// Where the kernels find a frame's planes: its buffer, kept alive, and each plane's byte
/// offset and stride in it. `None` where the frame is not in memory the GPU reaches.
fn planes_of(
    data: [*mut u8; 3],
    linesize: [isize; 3],
) -> Option<(Arc<crate::regions::Region>, header::Planes)> {
    let region = crate::regions::containing(data[0] as usize).or_else(|| {
        // A frame allocated before the device was set up: imported now, for its whole life
        // (or just now by another thread).
        crate::regions::import_later_frame(data[0] as usize);
        crate::regions::containing(data[0] as usize)
    })?;
    let base = region.in_place.as_ref()?.base();
    let mut planes = [(0u32, 0u32); 3];
    for p in 0..3 {
        let at = (data[p] as usize).checked_sub(base)?;
        let stride = u32::try_from(linesize[p]).ok()?;
        if (data[p] as usize) >= region.end || stride == 0 {
            return None;
        }
        planes[p] = (u32::try_from(at).ok()?, stride);
    }
    Some((region, planes))
}

impl Decoder {
    /// Sets the frame up for the GPU: its header, its decoder's GPU objects where one is free,
    /// and what binds its buffers once it is parsed ([`Begin`]). An error where the GPU cannot
    /// take it.
    fn gpu_frame(&mut self, info: &FrameParse, layout: Layout) -> Result<GpuFrame, String> {
        let gpu = crate::gpu::get().ok_or("no usable device")?;
        takes_frames_of(layout.geometry)?;
        let f = &info.frame;
        let (frame_region, frame_planes) =
            planes_of(f.data, f.linesize).ok_or("a frame outside the memory the GPU reaches")?;
        // The loop filter reads and writes the frame's rows by words (`shaders/vp9_lf.comp`).
        if frame_planes
            .iter()
            .any(|&(at, stride)| (at | stride) % 4 != 0)
        {
            return Err("a frame whose planes do not start on a word".into());
        }
        if self.gpu.as_ref().is_none_or(|s| s.layout != layout) {
            // (Not busy: a held frame took its own along.)
            self.gpu = None;
            self.spare.retain(|s| s.layout == layout);
            self.gpu = self.spare.pop().or_else(|| Submitter::left(layout));
        }
        let device_copies = match &self.gpu {
            Some(submitter) => submitter.device_copies(),
            None => {
                let copies = crate::config::get().testing.device_copies;
                Submitter::works_on_copies(gpu, layout, copies)?
            }
        };
        let ss_v = info.frame.ss_v.max(0) as u32;
        let decoded_rows = copies::plane_rows(8 * info.rows.max(0) as u32, ss_v);
        let frame = frame_region.clone();
        let mut regions = vec![frame_region.clone()];
        let mut frame_copies = FrameCopies {
            frame: (frame_region, frame_planes, decoded_rows),
            references: Vec::new(),
        };
        let mut ref_planes = [None; 3];
        let mut ref_regions = [const { None }; 3];
        let mut references = [0usize; 3];
        let inter = info.keyframe == 0 && info.intraonly == 0;
        let mut scaled = false;
        for (r, reference) in info.reference.iter().enumerate().filter(|_| inter) {
            if reference.data[0].is_null() {
                continue;
            }
            let (region, planes) = planes_of(reference.data, reference.linesize)
                .ok_or("a reference outside the memory the GPU reaches")?;
            ref_regions[r] = Some(region.clone());
            ref_planes[r] = Some(planes);
            references[r] = reference.data[0] as usize;
            // (The rows the kernels read: references are read clamped to their visible size.)
            let rows = copies::plane_rows(reference.height.max(0) as u32, ss_v);
            frame_copies.references.push((region.clone(), planes, rows));
            regions.push(region);
            scaled |= reference.mvscale[0] != 0;
        }
        let kernels = setup::FrameKernels::of(layout.geometry.bytes_per_pixel);
        let prediction = inter.then_some(if scaled {
            kernels.scaled
        } else {
            kernels.prediction
        });
        if let Some(kernel) = prediction.filter(|_| scaled) {
            // (Built when a stream first has such a frame, a stall of that frame once.)
            if !gpu.pipelines.has_on_driver_stack(kernel) {
                return Err("no kernel for references of another size".into());
            }
        }
        let words = header::words(info, &layout, frame_planes, ref_planes);
        let scans = header::scans(info)?;
        let begin = Begin {
            header: Box::new(words),
            scans,
            device_copies,
            frame,
            references: ref_regions,
        };
        Ok(GpuFrame {
            seq: fates::next_seq(),
            released: false,
            loop_filter: info.filter_level != 0,
            prediction,
            edges: residuals::Frame {
                cols: info.cols.max(0) as u32,
                rows: info.rows.max(0) as u32,
                ss_h: info.frame.ss_h.max(0) as u32,
                ss_v: info.frame.ss_v.max(0) as u32,
            },
            references,
            read_pending: Vec::new(),
            decided: false,
            _regions: regions,
            copies: device_copies.then_some(frame_copies),
            failed: None,
            begin: Some(begin),
        })
    }

    /// Starts a parsed frame on the GPU ([`Begin`]): binds its buffers (their device-local
    /// copies made where there are none yet) to its decoder's GPU objects; where it was parsed
    /// without them, makes them and copies what the decoder wrote for superblock rows `rows`
    /// into their buffer.
    fn start_on_gpu(&mut self, rows: std::ops::Range<usize>) -> Result<(), String> {
        let gpu = crate::gpu::get().ok_or("no usable device")?;
        let frame = self.frame.as_mut().expect("a frame");
        let f = frame.on_gpu.as_mut().ok_or("a frame off the GPU")?;
        let begin = f.begin.take().ok_or("a frame started already")?;
        // The buffer the kernels work on: the frame's own, or its device-local copy.
        let bind = |region: &crate::regions::Region| -> Result<BufferRef, String> {
            if begin.device_copies {
                copies::of(gpu, region)
            } else {
                Ok(region.in_place.as_ref().expect("in place").as_ref())
            }
        };
        let frame_buffer = bind(&begin.frame)?;
        let mut references = [None; 3];
        for (buffer, region) in references.iter_mut().zip(&begin.references) {
            *buffer = region.as_deref().map(bind).transpose()?;
        }
        let Some(&(ref memory, layout)) = frame.parsed_in.as_ref() else {
            // Parsed in its decoder's buffer.
            let submitter = self.gpu.as_mut().ok_or("a frame parsed elsewhere")?;
            return submitter.begin_frame(&begin.header, begin.scans, frame_buffer, references);
        };
        let testing = &crate::config::get().testing;
        static MADE: AtomicU64 = AtomicU64::new(0);
        let made = if testing.fail_objects == Some(MADE.fetch_add(1, Relaxed) + 1) {
            Err("out of device memory (DAEDALUS_TEST_FAIL_OBJECTS)".into())
        } else {
            let start = std::time::Instant::now();
            let made = Submitter::new(gpu, layout, testing.device_copies);
            if made.is_ok() {
                report::note_object_made(start);
            }
            made
        };
        let mut submitter =
            made.map_err(|why| format!("its GPU objects could not be made: {why}"))?;
        submitter.begin_frame(&begin.header, begin.scans, frame_buffer, references)?;
        // SAFETY: the memory the frame was parsed into; the decoder has parsed the rows.
        let (sb_words, records) = unsafe { layout.parsed(memory.ptr) };
        let sb = SbBlocks::new(layout.geometry.sb_cols, sb_words);
        let runs = inter::record_runs(&sb, rows.clone());
        for bytes in layout.bytes_of_rows(records, &runs, rows) {
            // SAFETY: both buffers hold the layout's data area, which nothing else writes now.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    memory.ptr.add(bytes.start),
                    submitter.data.ptr.add(bytes.start),
                    bytes.len(),
                )
            };
        }
        self.gpu = Some(submitter);
        Ok(())
    }

    /// The frame's blocks so far, the 8x8 blocks they cover (their end-of-block positions'
    /// share) and their packed coefficients.
    fn parsed_blocks(&self) -> (u64, u64, u64) {
        let Some(frame) = self.frame.as_ref() else {
            return (0, 0, 0);
        };
        let (base, layout) = match (&frame.on_gpu, &self.gpu, &self.memory) {
            _ if frame.parsed_in.is_some() => {
                let (m, l) = frame.parsed_in.as_ref().expect("checked");
                (m.ptr, *l)
            }
            (Some(_), Some(s), _) => (s.data.ptr, s.layout),
            (None, _, Some((m, l))) => (m.ptr, *l),
            _ => return (0, 0, 0),
        };
        // SAFETY: the frame's buffer; the decoder has finished writing them.
        let (sb_words, records) = unsafe { layout.parsed(base) };
        let sb = SbBlocks::new(layout.geometry.sb_cols, sb_words);
        // (By runs: each run's blocks take their units one after another.)
        let runs = inter::record_runs(&sb, 0..layout.geometry.sb_rows);
        let blocks = runs.iter().map(|r| r.count as u64).sum();
        let coefs = runs.iter().map(|r| r.coefs as u64).sum();
        let units = runs.iter().filter_map(|r| r.unit_span(records));
        (blocks, units.map(|u| u.len() as u64).sum(), coefs)
    }

    /// After a failure on the GPU: the device is not used again, and the frame goes to FFmpeg.
    fn gpu_failed(&mut self, why: String) {
        gpu_failed(self.frame.as_mut().and_then(|f| f.on_gpu.as_mut()), why)
    }

    /// The frame's parse is over, and nothing reads its parsed data any more (`parse_end`; and,
    /// should the decoder never say so, its next frame or its end).
    fn end_parse(&mut self) {
        // A frame that ended before its reconstruction (an error at its start) submits
        // nothing more: its readers need not wait, and nothing of it runs any more.
        self.release();
        if self.gpu.as_ref().is_some_and(|s| s.busy()) {
            if let Err(why) = self.gpu.as_mut().expect("busy").finish() {
                self.gpu_failed(why);
            }
        }
        // Ended before its reconstruction decided (an error before any row was parsed, or a
        // panic): FFmpeg's result stands, and what read it on the GPU meanwhile falls back.
        if let Some(frame) = self.frame.as_ref() {
            if let Some(f) = frame.on_gpu.as_ref().filter(|f| !f.decided) {
                FATES.decide(f.seq, false, &f.read_pending);
                copies::forget(frame.data0);
            }
        }
        self.frame = None;
    }

    /// Leaves a frame that never started on the GPU ([`Begin`]) to FFmpeg's second pass,
    /// decided at once: what waits for it goes on. Said once at `level` (a warning where its
    /// objects or buffers could not be made, as for a failing device).
    fn left_without_gpu(&mut self, level: crate::log::Level, why: &str) -> c_int {
        // (Decided before it is released: frames that read it then wait for FFmpeg's pixels
        // rather than read it on the GPU and fall back with it.)
        if let Some(frame) = self.frame.as_mut() {
            if let Some(f) = frame.on_gpu.as_mut() {
                f.decided = true;
                FATES.decide(f.seq, false, &f.read_pending);
                copies::forget(frame.data0);
            }
        }
        self.release();
        let key = match level {
            crate::log::Level::Info => "frame path fallback",
            _ => "frame path objects",
        };
        crate::log::once(
            level,
            key,
            format_args!("FFmpeg reconstructs a frame the GPU did not: {why}"),
        );
        stats::add(&COUNTERS.fallbacks, 1);
        stats::add(&COUNTERS.frames_ffmpeg, 1);
        1
    }

    /// The frame submits nothing more: the frames that read it may submit.
    fn release(&mut self) {
        if let Some(frame) = self.frame.as_mut() {
            frame.release();
        }
    }
}

impl Frame {
    /// It submits nothing more: the frames that read it may submit.
    fn release(&mut self) {
        if let Some(f) = self.on_gpu.as_mut() {
            if !f.released {
                f.released = true;
                FATES.submitted(f.seq);
            }
        }
    }
}

/// Submits a parsed frame's reconstruction (superblock rows `parsed`, the loop filter of the
/// first `filtered`) once the references the GPU reconstructs are submitted, unless it failed
/// already; after it, the frames that read it may submit. A panic in it (a bug, said once)
/// leaves the frame to FFmpeg's second pass, its data and objects kept for it.
fn submit_frame(frame: &mut Frame, submitter: &mut Submitter, parsed: usize, filtered: usize) {
    let g = frame.geometry;
    let submitted = crate::log::guard("a frame's submission", false, || {
        let f = frame.on_gpu.as_mut().expect("on the GPU");
        if f.failed.is_some() {
            return true;
        }
        FATES.wait_references_submitted(&f.references);
        let back = f.copies.as_ref().and_then(|c| {
            let (region, planes, rows) = &c.frame;
            copies::copy_back(region, *planes, *rows).map(|copy| (region.clone(), copy))
        });
        let region = back.map(|(region, copy)| {
            submitter.copy_after(copy);
            region
        });
        match submit(f, submitter, frame.data0, g, 0..parsed, 0..filtered) {
            // Later frames, after this one on the queue, find it in the copy.
            Ok(_) => region.iter().for_each(|r| copies::set_current(r, true)),
            Err(why) => gpu_failed(Some(f), why),
        }
        true
    });
    if !submitted {
        if let Some(f) = frame.on_gpu.as_mut() {
            f.failed
                .get_or_insert("an internal error in its submission".into());
        }
    }
    frame.release();
}

/// Submits the frame's reconstruction, once the references FFmpeg reconstructs have ended:
/// superblock rows `rows` (those parsed of the last one too, after an error) and the loop
/// filter of `filtered`.
fn submit(
    on_gpu: &mut GpuFrame,
    submitter: &mut Submitter,
    data0: usize,
    g: Geometry,
    rows: std::ops::Range<usize>,
    filtered: std::ops::Range<usize>,
) -> Result<(), String> {
    let cpu = thread_cpu_ns();
    on_gpu.read_pending = FATES.read_references(on_gpu.seq, &on_gpu.references);
    let uploaded = reference_uploads(on_gpu, submitter);
    let stages = levels::Stages {
        prediction: on_gpu.prediction,
        scaled: matches!(
            on_gpu.prediction,
            Some(Kernel::Vp9InterScaled | Kernel::Vp9InterScaledHigh)
        ),
        edges: on_gpu.edges,
        loop_filter: on_gpu.loop_filter,
    };
    let (work, blocks) = levels::of_frame(submitter, stages, g, rows, filtered)?;
    // (A frame with no kernels, parsed in part, still has copies to make.)
    submitter.submit(work, data0, on_gpu.references)?;
    for region in uploaded {
        copies::set_current(&region, true);
    }
    stats::add(&COUNTERS.gpu_blocks, blocks);
    stats::add_cpu_time(&COUNTERS.submit_cpu_ns, cpu);
    Ok(())
}

/// After a failure on the GPU: the device is not used again, and the frame goes to FFmpeg.
fn gpu_failed(frame: Option<&mut GpuFrame>, why: String) {
    if let Some(g) = crate::gpu::set_up() {
        g.mark_lost(&why);
    }
    if let Some(f) = frame {
        f.failed = Some(why);
    }
}

/// What a frame's submission does first, once no reference is FFmpeg's to reconstruct any more
/// (`read_pending`: those it reads still pending, [`fates`]): it uploads those FFmpeg
/// reconstructed to their device-local copies; returns the regions uploaded (current once the
/// frame is submitted).
fn reference_uploads(
    on_gpu: &GpuFrame,
    submitter: &mut Submitter,
) -> Vec<Arc<crate::regions::Region>> {
    let mut uploaded = Vec::new();
    // Those FFmpeg reconstructed go to their device-local copies first. (Not those still
    // pending: a pending frame's copy that is not current failed, and the frame reading
    // it falls back with it; uploading its buffer now could mark a stale copy current.)
    let pending = |region: &Arc<crate::regions::Region>| {
        on_gpu.read_pending.iter().any(|&(_, data0)| {
            crate::regions::containing(data0).is_some_and(|r| Arc::ptr_eq(&r, region))
        })
    };
    for (region, planes, rows) in on_gpu.copies.iter().flat_map(|c| &c.references) {
        if !copies::current(region) && !pending(region) {
            if let Some(copy) = copies::upload(region, *planes, *rows) {
                submitter.copy_before(copy);
                uploaded.push(region.clone());
            }
        }
    }
    uploaded
}

impl Decoder {
    /// Where decoders choose ([`choice`]): whether the GPU takes the frame (`Ok`, and whether
    /// it may be held), or FFmpeg's own decode does (`Err`: `parse_begin`'s answer).
    fn choose(&mut self, info: &FrameParse, layout: Layout, data0: usize) -> Result<bool, c_int> {
        let bytes_per_pixel = layout.geometry.bytes_per_pixel;
        let class = choice::class_of(info.frame.width, info.frame.height, info.frame.bpp);
        let first = !std::mem::replace(&mut self.chose_before, true);
        // While the device is set up on its own thread, FFmpeg decodes the frames that
        // would go to the GPU, outside any trial. The first frame of a context alone, before
        // the device is set up, goes to FFmpeg and sets nothing up, a trial's too: a decoder
        // that probes the stream decodes no more, and would wait for the set-up as it closes.
        // (Frame threads' contexts begin it at the second context's first frame.)
        if first && !setup::kernels_known(bytes_per_pixel) && !choice::others_choosing() {
            return Err(self.decline(data0));
        }
        if !first
            && !setup::kernels_known(bytes_per_pixel)
            && choice::may_take(class)
            && !setup::device_settled(layout)
        {
            stats::add(&COUNTERS.frames_before_device, 1);
            return Err(self.decline(data0));
        }
        let (pick, ticket) = choice::pick(class, first);
        self.ticket = ticket;
        if pick == choice::Pick::Ffmpeg {
            return Err(self.decline(data0));
        }
        let holdable = !choice::declines_among_threads(class);
        if !setup::device_settled(layout) {
            stats::add(&COUNTERS.frames_before_device, 1);
            return Err(self.decline_unable(data0, "the device is still being set up"));
        }
        if !setup::kernels_usable(bytes_per_pixel) {
            return Err(self.decline_unable(data0, "the device lacks the kernels of the depth"));
        }
        if !gpu_wanted() {
            return Err(self.decline_unable(data0, "no usable device"));
        }
        Ok(holdable)
    }

    /// Leaves the frame to FFmpeg's own decode: frames the GPU reconstructs that read it wait
    /// for its end.
    fn decline(&mut self, data0: usize) -> c_int {
        FATES.on_cpu(data0);
        self.declined = Some(data0);
        stats::add(&COUNTERS.frames_declined, 1);
        0
    }

    /// Leaves to FFmpeg's own decode a frame the GPU cannot take after all: its trial block
    /// does not time it.
    fn decline_unable(&mut self, data0: usize, why: &str) -> c_int {
        crate::log::once(
            crate::log::Level::Info,
            "frame path declined",
            format_args!("a frame FFmpeg decodes itself: {why}"),
        );
        if let Some(ticket) = self.ticket.take() {
            choice::untimed(ticket);
        }
        self.decline(data0)
    }

    /// The context's frame ended: its trial block learns when, and a frame it left to FFmpeg
    /// is final.
    fn frame_over(&mut self) {
        if let Some(ticket) = self.ticket.take() {
            choice::ended(ticket);
        }
        if let Some(data0) = self.declined.take() {
            FATES.end(data0);
        }
    }
}

/// `parse_begin`: takes the frame, giving the decoder the buffer to parse it into (grown
/// where the frame needs more): the GPU's where the GPU reconstructs it.
pub(crate) unsafe extern "C" fn parse_begin(
    ctx: *mut c_void,
    info: *const FrameParse,
    bufs: *mut ParseBuffers,
) -> c_int {
    crate::log::guard("parse_begin", 0, || {
        let (Some(info), false) = (info.as_ref(), bufs.is_null()) else {
            return 0;
        };
        let d = decoder(ctx);
        let Some(geometry) = Geometry::of(info) else {
            return 0;
        };
        let layout = Layout::new(geometry);
        let data0 = info.frame.data[0] as usize;
        copies::forget(data0);
        stats::max(&COUNTERS.last_frame_us, stats::since_attach_us());
        // (A context decodes one frame at a time: one whose end never came is over.)
        d.end_parse();
        d.frame_over();
        // (Where decoders choose, the frame may go to FFmpeg's own decode.)
        let holdable = if d.choosing {
            match d.choose(info, layout, data0) {
                Ok(holdable) => holdable,
                Err(declined) => return declined,
            }
        } else {
            true
        };
        let on_gpu = if gpu_wanted() {
            match d.gpu_frame(info, layout) {
                Ok(f) => Some(f),
                Err(why) if d.choosing => return d.decline_unable(data0, &why),
                Err(why) => {
                    crate::log::once(
                        crate::log::Level::Info,
                        "frame path frame on the CPU",
                        format_args!("a frame FFmpeg reconstructs: {why}"),
                    );
                    // Other threads' frames may read it on the GPU: after its end.
                    FATES.on_cpu(data0);
                    None
                }
            }
        } else {
            None
        };
        let mut parsed_in = None;
        let deferred = on_gpu.is_some() && d.gpu.is_none();
        let base = if on_gpu.is_some() && !deferred {
            d.gpu.as_ref().expect("set up").data.ptr
        } else if deferred {
            // (Its GPU objects are made once it is parsed: `Begin`.)
            let Some(m) = Memory::new(layout.bytes) else {
                FATES.on_cpu(data0);
                return 0;
            };
            let ptr = m.ptr;
            parsed_in = Some((m, layout));
            ptr
        } else {
            if !matches!(&d.memory, Some((_, l)) if *l == layout) {
                d.memory = None; // the old buffer first: a size change needs no more than one
                match Memory::new(layout.bytes) {
                    Some(m) => d.memory = Some((m, layout)),
                    None => return 0,
                }
            }
            d.memory.as_ref().expect("allocated above").0.ptr
        };
        let parsed = layout.buffers(base);
        // Superblocks count as parsed only once the decoder says how many blocks they hold.
        std::ptr::write_bytes(parsed.sb_blocks, 0, SB_WORDS * geometry.superblocks());
        bufs.write(parsed);
        if let Some(f) = &on_gpu {
            FATES.on_gpu(f.seq, data0);
        }
        d.frame = Some(Frame {
            geometry,
            cpu_start: thread_cpu_ns(),
            data0,
            on_gpu,
            parsed_in,
            holdable,
        });
        stats::add(&COUNTERS.frames, 1);
        1
    })
}

/// `reconstruct`: parsing ended (`error`: after `rows` complete rows). The GPU reconstructs
/// what was parsed; where `may_hold` the decoder holds the frame meanwhile ([`HELD`]; [`finish`]
/// decides), else the whole frame is waited for (0). Nonzero: FFmpeg's second pass
/// reconstructs it.
pub(crate) unsafe extern "C" fn reconstruct(
    ctx: *mut c_void,
    rows: c_int,
    error: c_int,
    may_hold: c_int,
) -> c_int {
    crate::log::guard("reconstruct", 1, || {
        let d = decoder(ctx);
        let Some(frame) = d.frame.as_ref() else {
            return 1;
        };
        stats::add_cpu_time(&COUNTERS.parse_cpu_ns, frame.cpu_start);
        let g = frame.geometry;
        let (blocks, units, coefs) = d.parsed_blocks();
        stats::add(&COUNTERS.blocks, blocks);
        let Some(f) = frame.on_gpu.as_ref() else {
            stats::add(&COUNTERS.frames_ffmpeg, 1);
            return 1;
        };
        let rows = (rows.max(0) as usize).min(g.sb_rows);
        // After an error, the blocks parsed of the next row too, but not its loop filter.
        let parsed = if error != 0 {
            (rows + 1).min(g.sb_rows)
        } else {
            g.sb_rows
        };
        if error != 0 && f.copies.is_some() {
            // The frame's copy was reconstructed only where parsed: FFmpeg's second pass
            // reconstructs that part in the decoder's buffer, leaving the rest as it is.
            if let Some(f) = d.frame.as_mut().and_then(|f| f.on_gpu.as_mut()) {
                f.failed = Some("a damaged frame, parsed in part".into());
            }
        }
        // Started on the GPU only now (`Begin`). A frame parsed in part on copies submits
        // nothing: where its decoder had no GPU objects it goes to FFmpeg at once, else they
        // decide it (`conclude`).
        let frame = d.frame.as_ref().expect("a frame");
        let has_objects = frame.parsed_in.is_none();
        match frame.on_gpu.as_ref().and_then(|f| f.failed.clone()) {
            Some(why) if !has_objects => {
                return d.left_without_gpu(crate::log::Level::Info, &why);
            }
            // (Nothing of it is submitted: its `failed` decides it.)
            Some(_) => {}
            None => {
                if let Err(why) = d.start_on_gpu(0..parsed) {
                    // (Not the frame path's time: its trial block does not count it.)
                    if let Some(ticket) = d.ticket.take() {
                        choice::untimed(ticket);
                    }
                    // (A device lost meanwhile said so itself.)
                    let level = match crate::gpu::get() {
                        Some(_) => crate::log::Level::Warn,
                        None => crate::log::Level::Info,
                    };
                    return d.left_without_gpu(level, &why);
                }
            }
        }
        let data_bytes = d
            .gpu
            .as_ref()
            .map_or(0, |s| s.layout.written_bytes(blocks, units, coefs));
        let (Some(frame), Some(submitter)) = (d.frame.as_mut(), d.gpu.as_mut()) else {
            d.release();
            d.frame = None;
            return 1;
        };
        // A context that still holds frames runs one thread or slice threads (frame threads
        // hand a thread's frame out before its next packet), and holds this one too: decided
        // here, it would wait for the older frames it read, which only this thread finishes.
        if may_hold == 0 || !(frame.holdable || d.held.any()) {
            submit_frame(frame, submitter, parsed, rows);
            return conclude(frame, submitter, data_bytes);
        }
        stats::add(&COUNTERS.frames_held, 1);
        let (Some(frame), Some(submitter)) = (d.frame.take(), d.gpu.take()) else {
            unreachable!("both checked above");
        };
        d.held.hold(Submission {
            held: Held {
                frame,
                submitter,
                data_bytes,
            },
            parsed,
            filtered: rows,
        });
        HELD
    })
}

/// Waits for a frame's GPU work and decides who reconstructs it: 0 where the GPU's result is
/// kept, 1 where FFmpeg's second pass must reconstruct it.
fn conclude(frame: &mut Frame, submitter: &mut Submitter, data_bytes: u64) -> c_int {
    let finished = submitter.finish();
    let f = frame.on_gpu.as_mut().expect("on the GPU");
    if let Err(why) = &finished {
        gpu_failed(Some(&mut *f), why.clone());
    }
    let why = match (finished, &f.failed) {
        (_, Some(why)) => Some(why.clone()),
        (Ok(0), None) => None,
        (Ok(status), None) if status & header::STATUS_OVERFLOW != 0 => {
            Some("a transform's 16-bit lanes overflowed (a damaged stream)".to_string())
        }
        (Ok(status), None) => Some(format!("the kernels reported {status:#x}")),
        (Err(why), None) => Some(why),
    };
    f.decided = true;
    if FATES.decide(f.seq, why.is_none(), &f.read_pending) {
        stats::mark_once(&COUNTERS.first_gpu_frame_us);
        stats::add(&COUNTERS.frames_gpu, 1);
        stats::add(&COUNTERS.data_bytes, data_bytes);
        return 0;
    }
    let why = why.unwrap_or_else(|| {
        "a frame it read on the GPU was reconstructed by FFmpeg after all".into()
    });
    crate::log::once(
        crate::log::Level::Info,
        "frame path fallback",
        format_args!("FFmpeg reconstructs a frame the GPU did not: {why}"),
    );
    stats::add(&COUNTERS.fallbacks, 1);
    stats::add(&COUNTERS.frames_ffmpeg, 1);
    copies::forget(frame.data0);
    1
}

/// `finish`: waits for the oldest held frame; 0 where the GPU's result is kept, 1 where
/// FFmpeg's second pass must reconstruct it (from its parsed data, kept until [`finished`]).
pub(crate) unsafe extern "C" fn finish(ctx: *mut c_void) -> c_int {
    crate::log::guard("finish", 1, || {
        let d = decoder(ctx);
        let waiting = std::time::Instant::now();
        let oldest = d.held.oldest();
        stats::add_time(&COUNTERS.submission_wait_ns, waiting);
        let Some(Submission { held, .. }) = oldest else {
            crate::error!("finish: no frame is held");
            return 1;
        };
        conclude(&mut held.frame, &mut held.submitter, held.data_bytes)
    })
}

/// `finished`: the oldest held frame is over (its second pass, if any, done): its buffers go
/// to the next frames.
pub(crate) unsafe extern "C" fn finished(ctx: *mut c_void) {
    crate::log::guard("finished", (), || {
        let d = decoder(ctx);
        if let Some(Submission { held, .. }) = d.held.pop_oldest() {
            // (Where FFmpeg reconstructed it, whatever waits for it goes on now.)
            FATES.end(held.frame.data0);
            if d.spare.len() < 2 {
                d.spare.push(held.submitter);
            }
        }
    })
}

/// `parse_workers_cpu`: the frame's tile columns were parsed on workers of the decoder
/// context, which took `ns` of CPU time: the frame's parse time counts it with its own
/// thread's.
pub(crate) unsafe extern "C" fn parse_workers_cpu(_ctx: *mut c_void, ns: i64) {
    stats::add(&COUNTERS.parse_cpu_ns, ns.max(0) as u64);
}

/// `parse_end`: the frame's parsed data is no longer read.
pub(crate) unsafe extern "C" fn parse_end(ctx: *mut c_void) {
    crate::log::guard("parse_end", (), || decoder(ctx).end_parse())
}

/// The decoder ended a frame (the per-call hook `frame_end`): one FFmpeg reconstructed is
/// final.
///
/// # Safety
/// `ctx` must come from [`attach`] or [`attach_choosing`].
pub(crate) unsafe fn frame_end(ctx: *mut c_void, data0: usize) {
    let d = decoder(ctx);
    d.frame_over();
    // (A held frame is decided by `finish`, and over at `finished`.)
    if !d.held.holds(data0) {
        FATES.end(data0);
    }
}

/// `path=` of the stats line where a decoder took the frame path: `frame` where the GPU
/// reconstructed frames, `frame-cpu` where FFmpeg's second pass reconstructed them all; where
/// decoders chose per frame, what they chose ([`choice::path`]).
pub fn path() -> &'static str {
    if CHOOSING.load(Relaxed) {
        match choice::path() {
            // (Chosen, but the GPU took no frame: its device or kernels failed.)
            "frame" if stats::read(&COUNTERS.frames_gpu) == 0 => "ffmpeg",
            path => path,
        }
    } else if stats::read(&COUNTERS.frames_gpu) > 0 {
        "frame"
    } else {
        "frame-cpu"
    }
}
