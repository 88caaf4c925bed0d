//! A frame's reconstruction on the GPU, submitted once the frame is parsed, while the decoder
//! parses the next (with the frames ready beside it: [`super::batches`]). It is dispatch
//! levels (barriers between):
//! - inter prediction of every inter block ([`super::inter`]), one level, and every block's
//!   residuals ([`super::residuals`]), another;
//! - then a wavefront over the superblocks ([`super::wavefront`]): their intra blocks
//!   ([`super::intra`]) and the loop filter ([`super::loopfilter`]), side by side in a level
//!   where their order allows.
//!
//! A decoder's frame data (its parsed blocks, the header, the job lists) is one buffer of
//! host-visible memory the decoder parses into; the frame's pixels and its references' are the
//! frame pool's buffers (`crate::regions`). Where that memory is across a bus from the GPU (a
//! discrete GPU), the kernels work on device-local copies instead: the submission first copies
//! the data the decoder wrote (and references FFmpeg reconstructed) there, and at its end
//! copies the frame's pixels back; elsewhere they work in place. A frame is submitted only
//! after the references it reads ([`super::fates`]), so that no submission waits on a later
//! one.

use super::batches::{self, Ticket};
use super::header;
use super::records::Layout;
use super::together::Work;
use crate::gpu::engine::{Copy, Sets};
use crate::gpu::memory::{BufferRef, DeviceBuffer, HostBuffer};
use crate::gpu::{Gpu, GpuResult};
use crate::stats;
use ash::vk;
use std::ops::Range;
use std::sync::atomic::AtomicU64;
use std::sync::Mutex;
use std::time::Instant;

/// A decoder's GPU objects, reused from frame to frame.
pub struct Submitter {
    gpu: &'static Gpu,
    /// The frame's submission, until it ran ([`Submitter::finish`]).
    ticket: Option<Ticket>,
    /// The one set of the five bindings: the frame's data, its pixels, its references'.
    sets: Sets,
    /// The frame's data, in [`Layout`].
    pub data: HostBuffer,
    pub layout: Layout,
    /// Its device-local copy, which the kernels read where there is one; and the byte ranges
    /// of `data` the next submission copies there first.
    mirror: Option<DeviceBuffer>,
    staged: Vec<Range<usize>>,
    /// Copies the next submission makes before its kernels (`(source, destination, regions)`:
    /// references uploaded) and after them (the frame's pixels copied back).
    copies_before: Vec<Copy>,
    copies_after: Vec<Copy>,
    set: vk::DescriptorSet,
    /// Words of the job area the frame used.
    jobs_used: usize,
    /// Whether a submission carried the scan orders (the same frame after frame) to where
    /// the kernels read them.
    scans_in_place: bool,
    /// The lists the frame's residual jobs are made in, kept for the next frame.
    pub residual_lists: super::residuals::Lists,
}

// The handles are plain values and a decoder uses its submitter from one thread at a time.
unsafe impl Send for Submitter {}

/// The submitter a decoder context left when it ended, for the next frame that finds none of
/// its own free ([`Submitter::left`]), above all the next context's first: the ffmpeg
/// program's stream probe decodes the first frame in a context of its own before the decoder
/// proper opens, whose first frame then made its objects again (11 ms of a 2160p frame on the
/// NVIDIA H100). One only: its memory stays with the process.
static LEFT: Mutex<Option<Submitter>> = Mutex::new(None);

/// Submitters the device's set-up made for the decoder contexts' first frames on the GPU
/// ([`Submitter::keep_ahead`]).
static AHEAD: Mutex<Vec<Submitter>> = Mutex::new(Vec::new());

/// Those made ahead that a context took, for the stats line.
pub static TAKEN_AHEAD: AtomicU64 = AtomicU64::new(0);

impl Submitter {
    /// The kernels work on device-local copies (see the module's comment) where the host
    /// memory the decoder writes is not device-local, or where `copies` asks for them.
    pub fn new(gpu: &'static Gpu, layout: Layout, copies: bool) -> GpuResult<Submitter> {
        let bytes = layout.bytes as u64;
        let device_copies = Submitter::works_on_copies(gpu, layout, copies)?;
        // Where the kernels work on a copy, the host's buffer leaves out the intra residuals'
        // area, last, which only the GPU writes. (Not zeroed: every byte is written before
        // it is read, frame after frame.)
        let host_bytes = if device_copies {
            layout.residuals as u64
        } else {
            bytes
        };
        let data = HostBuffer::coherent(gpu, host_bytes)?;
        let mirror = if device_copies || !data.device_local {
            Some(DeviceBuffer::new(gpu, bytes)?)
        } else {
            None
        };
        Ok(Submitter {
            gpu,
            ticket: None,
            sets: Sets::new(gpu, 1)?,
            data,
            layout,
            mirror,
            staged: Vec::new(),
            copies_before: Vec::new(),
            copies_after: Vec::new(),
            set: vk::DescriptorSet::null(),
            jobs_used: 0,
            scans_in_place: false,
            residual_lists: Default::default(),
        })
    }

    /// Keeps this idle submitter of a decoder context that ends for the next context, in
    /// place of one kept before.
    pub fn leave(self) {
        debug_assert!(!self.busy());
        let before = LEFT.lock().unwrap_or_else(|p| p.into_inner()).replace(self);
        drop(before);
    }

    /// Keeps this new submitter for a decoder context's first frame on the GPU
    /// ([`Submitter::left`]).
    pub fn keep_ahead(self) {
        AHEAD.lock().unwrap_or_else(|p| p.into_inner()).push(self);
    }

    /// Frees those made ahead that no context took (the last context ended, after the set-up
    /// that makes them).
    pub fn free_ahead() {
        let untaken = std::mem::take(&mut *AHEAD.lock().unwrap_or_else(|p| p.into_inner()));
        drop(untaken);
    }

    /// The submitter an ended context left ([`Submitter::leave`]), or one the set-up made
    /// ahead ([`Submitter::keep_ahead`]), where it is of `layout`.
    pub fn left(layout: Layout) -> Option<Submitter> {
        let mut left = LEFT.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(s) = left.take_if(|s| s.layout == layout) {
            return Some(s);
        }
        drop(left);
        let mut ahead = AHEAD.lock().unwrap_or_else(|p| p.into_inner());
        let at = ahead.iter().position(|s| s.layout == layout)?;
        stats::add(&TAKEN_AHEAD, 1);
        Some(ahead.swap_remove(at))
    }

    /// Whether the kernels of a submitter of `layout` would work on device-local copies
    /// ([`Submitter::new`]); an error where the device cannot bind the layout.
    pub fn works_on_copies(gpu: &'static Gpu, layout: Layout, copies: bool) -> GpuResult<bool> {
        let bytes = layout.bytes as u64;
        // (The kernels bind the whole layout, wherever it lies.)
        if bytes > gpu.info.max_storage_buffer_range {
            return Err(format!("{bytes} bytes exceed maxStorageBufferRange"));
        }
        Ok(copies || !HostBuffer::coherent_is_device_local(gpu, bytes)?)
    }

    /// Whether the kernels work on device-local copies.
    pub fn device_copies(&self) -> bool {
        self.mirror.is_some()
    }

    /// Starts a frame: its header, and the buffers its kernels bind besides the frame's data:
    /// the frame's pixels and the references' (where there are). Nothing of the last frame may
    /// be in flight.
    pub fn begin_frame(
        &mut self,
        header: &[u32; header::WORDS],
        scans: &[u32],
        frame: BufferRef,
        references: [Option<BufferRef>; 3],
    ) -> GpuResult<()> {
        debug_assert!(self.ticket.is_none());
        // SAFETY: the header area is the buffer's first bytes, written by nothing else now.
        unsafe {
            std::ptr::copy_nonoverlapping(header.as_ptr(), self.data.ptr as *mut u32, header.len())
        };
        self.jobs_used = 0;
        self.staged.clear();
        self.copies_before.clear();
        self.copies_after.clear();
        self.stage(0..header::WORDS * 4);
        if !self.scans_in_place {
            // (Until a submission took them: a frame may end before it submits.)
            let scan_bytes = 4 * scans.len().min(super::records::SCAN_WORDS);
            // SAFETY: the scan area, as long as that, which nothing in flight reads.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    scans.as_ptr() as *const u8,
                    self.data.ptr.add(self.layout.scans),
                    scan_bytes,
                )
            };
            self.stage(self.layout.scans..self.layout.scans + scan_bytes);
        }
        let data = self
            .mirror
            .as_ref()
            .map_or(self.data.as_ref(), |m| m.as_ref());
        let buffers = [
            data,
            frame,
            references[0].unwrap_or(data),
            references[1].unwrap_or(data),
            references[2].unwrap_or(data),
        ];
        // (The set is not in use: the last frame's work has completed.)
        self.set = self.sets.pointing_at(buffers, &mut Vec::new())?;
        Ok(())
    }

    /// Appends job words to the frame's job area; returns the word of the frame's data where
    /// they begin (the kernels reading jobs take their first so: no read of where the job
    /// area lies before the read of their job, on a path where a wavefront level waits for
    /// its slowest workgroup).
    pub fn push_jobs(&mut self, jobs: &[u32]) -> GpuResult<u32> {
        let first = self.jobs_used;
        if first + jobs.len() > self.layout.job_words {
            return Err("the frame's job area is full".into());
        }
        // SAFETY: inside the job area, which nothing in flight reads.
        unsafe {
            let at = (self.data.ptr.add(self.layout.jobs) as *mut u32).add(first);
            std::ptr::copy_nonoverlapping(jobs.as_ptr(), at, jobs.len());
        }
        self.jobs_used += jobs.len();
        let at = self.layout.jobs + 4 * first;
        self.stage(at..at + 4 * jobs.len());
        Ok((at / 4) as u32)
    }

    /// Keeps `words` of the frame's job area for jobs written once the frame is placed among
    /// those submitted with it ([`super::together`]); returns the word of the frame's data
    /// where they begin, as [`Submitter::push_jobs`] does.
    pub fn reserve_jobs(&mut self, words: usize) -> GpuResult<u32> {
        let first = self.jobs_used;
        if first + words > self.layout.job_words {
            return Err("the frame's job area is full".into());
        }
        self.jobs_used += words;
        let at = self.layout.jobs + 4 * first;
        self.stage(at..at + 4 * words);
        Ok((at / 4) as u32)
    }

    /// Bytes of the frame's data the decoder wrote for the next submission: copied to the
    /// device-local copy at its start, where there is one.
    pub fn stage(&mut self, bytes: Range<usize>) {
        if self.mirror.is_none() || bytes.is_empty() {
            return;
        }
        // (Job lists pushed one after another are one range, one region of the copy.)
        match self.staged.last_mut() {
            Some(last) if last.end == bytes.start => last.end = bytes.end,
            _ => self.staged.push(bytes),
        }
    }

    /// A copy the next submission makes before its kernels.
    pub fn copy_before(&mut self, copy: Copy) {
        self.copies_before.push(copy);
    }

    /// A copy the next submission makes after its kernels.
    pub fn copy_after(&mut self, copy: Copy) {
        self.copies_after.push(copy);
    }

    /// Hands the frame's work to the GPU ([`batches`]): `data0` names its pixels, which the
    /// frames after it read where their `references` name them.
    pub fn submit(&mut self, work: Work, data0: usize, references: [usize; 3]) -> GpuResult<()> {
        // (Its kernels built here, beside other threads' frames, not where the frames wait.)
        let levels = work.inter.iter().chain(&work.residuals);
        let wave = [work.loop_filter, work.intra].into_iter().flatten();
        let kernels = levels.flatten().map(|d| d.kernel).chain(wave);
        self.gpu.pipelines.ensure(kernels)?;
        let mut before = std::mem::take(&mut self.copies_before);
        let mut after = std::mem::take(&mut self.copies_after);
        if let Some(m) = &self.mirror {
            // The data the decoder wrote, and the kernels' status word back.
            let regions = self.staged.drain(..).map(|r| {
                vk::BufferCopy::default()
                    .src_offset(r.start as u64)
                    .dst_offset(r.start as u64)
                    .size(r.len() as u64)
            });
            before.push(Copy {
                from: self.data.buffer,
                to: m.buffer,
                regions: regions.collect(),
            });
            let status = (header::STATUS * 4) as u64;
            after.push(Copy {
                from: m.buffer,
                to: self.data.buffer,
                regions: vec![vk::BufferCopy::default()
                    .src_offset(status)
                    .dst_offset(status)
                    .size(4)],
            });
        }
        let frame = batches::Frame {
            work,
            data: self.data.ptr as *mut u32,
            set: self.set,
            data0,
            references,
            before,
            after,
        };
        self.ticket = Some(batches::submit(self.gpu, frame)?);
        Ok(())
    }

    /// Waits for the frame's work (even after an error: the CPU may write the frame only
    /// once the GPU no longer does); then the frame's status word.
    pub fn finish(&mut self) -> GpuResult<u32> {
        let Some(ticket) = self.ticket.take() else {
            return self.status();
        };
        let waiting = Instant::now();
        let cpu = stats::thread_cpu_ns();
        let result = batches::wait(ticket);
        stats::add_time(&stats::COUNTERS.wait_ns, waiting);
        stats::add_cpu_time(&stats::COUNTERS.wait_cpu_ns, cpu);
        result?;
        // (The scan orders are where the kernels read them once a submission carried them.)
        self.scans_in_place = true;
        self.status()
    }

    fn status(&self) -> GpuResult<u32> {
        let status = header::STATUS as u64 * 4;
        self.data.invalidate(status..status + 4)?;
        // SAFETY: the word is in the header, which the GPU no longer writes.
        Ok(unsafe {
            (self.data.ptr as *const u32)
                .add(header::STATUS)
                .read_volatile()
        })
    }

    /// Whether a submission is in flight.
    pub fn busy(&self) -> bool {
        self.ticket.is_some()
    }
}

impl Drop for Submitter {
    fn drop(&mut self) {
        // (What is in flight completes before the buffers go.)
        if let Some(ticket) = self.ticket.take() {
            let _ = batches::wait(ticket);
        }
    }
}
