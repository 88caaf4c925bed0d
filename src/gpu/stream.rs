//! A thread's GPU context for the per-call path: its engine, descriptor sets and buffers, all
//! reused from one flush to the next. One [`Stream::submit`] is one submission.

use super::engine::{Copy, Engine, Options, Sets};
use super::memory::{BufferRef, DeviceBuffer, HostBuffer};
use super::testing::Step;
use super::{Gpu, GpuResult};
use crate::kernels::Kernel;
use crate::stats::{self, COUNTERS};
use ash::vk;
use std::time::{Duration, Instant};

/// Pixel buffers one submission can address: slot 0 is the stream's staging buffer (copied
/// blocks), the others are imported frames (a frame being decoded and its references: three
/// planes each).
pub const MAX_SLOTS: usize = 16;

/// Descriptor sets of a stream: one per (pixel slot, source) pair a submission uses.
pub const MAX_SETS: usize = 64;

/// A flush that takes longer than this is treated as a hung device.
pub const HANG_TIMEOUT: Duration = Duration::from_secs(20);

/// One vkCmdDispatch: `count` jobs from `first` in the job buffer, run by one kernel on the
/// pixels of one slot, reading source pixels from `source` (0: the arena, else that slot).
/// Dispatches come in level order; a barrier separates one level from the next.
#[derive(Clone, Copy, Debug)]
pub struct Dispatch {
    pub level: u32,
    pub kernel: Kernel,
    pub slot: usize,
    pub source: usize,
    pub first: u32,
    pub count: u32,
}

pub struct Stream {
    engine: Engine,
    sets: Sets,
    pub coefs: HostBuffer,
    pub jobs: HostBuffer,
    pub staging: HostBuffer,
    /// Jobs the GPU left to the host: a count, then their indices (shaders/itx_main.glsl).
    pub overflow: HostBuffer,
    /// Where job data is read from host memory across a bus (a discrete GPU's), each
    /// submission first copies its jobs and coefficients into these (one transfer instead of
    /// a read across the bus by every level's jobs); `None` where the shaders read the host
    /// buffers themselves.
    local: Option<LocalCopies>,
}

/// The device-local copies of a stream's jobs and coefficients, grown as those are.
struct LocalCopies {
    jobs: Option<DeviceBuffer>,
    coefs: Option<DeviceBuffer>,
}

/// Which of a stream's buffers.
#[derive(Clone, Copy, Debug)]
pub enum Buf {
    Coefs,
    Jobs,
    Staging,
    Overflow,
}

impl Stream {
    pub fn new(gpu: &'static Gpu) -> GpuResult<Stream> {
        let options = Options {
            slots: 1,
            stage_ns: &[],
            hang: HANG_TIMEOUT,
            // (The batch retires its submission once the pixels it wrote are final.)
            retires: false,
        };
        let engine = Engine::new(gpu, options)?;
        let sets = Sets::new(gpu, MAX_SETS)?;
        let coefs = HostBuffer::new(gpu, 1 << 20)?;
        let jobs = HostBuffer::new(gpu, 64 << 10)?;
        let staging = HostBuffer::new(gpu, 256 << 10)?;
        let overflow = HostBuffer::new(gpu, 16 << 10)?;
        // Across a bus (a discrete GPU), every level's jobs would read host memory: one
        // copy into device-local memory first (on the NVIDIA H100 a tenth less GPU time
        // for the loop filter). `DAEDALUS_TEST_MEMORY=copies` takes that way anywhere.
        let copies = crate::config::get().testing.device_copies;
        let local = (copies || !jobs.device_local || !coefs.device_local).then_some(LocalCopies {
            jobs: None,
            coefs: None,
        });
        Ok(Stream {
            engine,
            sets,
            coefs,
            jobs,
            staging,
            overflow,
            local,
        })
    }

    pub fn gpu(&self) -> &'static Gpu {
        self.engine.gpu()
    }

    /// Largest buffer a stream allocates: within maxStorageBufferRange and reasonable memory.
    pub fn max_buffer_bytes(&self) -> u64 {
        self.gpu().info.max_storage_buffer_range.min(256 << 20)
    }

    /// Replaces a buffer by one of at least `bytes` (contents are not kept). Only call when no
    /// submission is pending, i.e. between flushes.
    pub fn grow(&mut self, which: Buf, bytes: u64) -> GpuResult<()> {
        let slot = match which {
            Buf::Coefs => &mut self.coefs,
            Buf::Jobs => &mut self.jobs,
            Buf::Staging => &mut self.staging,
            Buf::Overflow => &mut self.overflow,
        };
        if slot.size >= bytes {
            return Ok(());
        }
        let gpu = self.engine.gpu();
        if bytes > gpu.info.max_storage_buffer_range {
            return Err(format!("{bytes} bytes exceed maxStorageBufferRange"));
        }
        let size = (slot.size * 2)
            .max(bytes)
            .min(gpu.info.max_storage_buffer_range);
        *slot = HostBuffer::new(gpu, size)?;
        Ok(())
    }

    /// The jobs as the shaders read them: the device-local copy where there is one.
    fn jobs_ref(&self) -> BufferRef {
        match self.local.as_ref().and_then(|l| l.jobs.as_ref()) {
            Some(b) => b.as_ref(),
            None => self.jobs.as_ref(),
        }
    }

    /// The coefficients as the shaders read them: the device-local copy where there is one.
    fn coefs_ref(&self) -> BufferRef {
        match self.local.as_ref().and_then(|l| l.coefs.as_ref()) {
            Some(b) => b.as_ref(),
            None => self.coefs.as_ref(),
        }
    }

    /// Makes the device-local copies at least as large as what this submission copies.
    /// Where that fails, the stream goes on without them (one warning), reading its host
    /// buffers as where there is no bus to cross.
    fn grow_local(&mut self, job_bytes: u64, coef_bytes: u64) {
        let gpu = self.engine.gpu();
        let Some(local) = self.local.as_mut() else {
            return;
        };
        let limit = gpu.info.max_storage_buffer_range;
        let mut grown = Ok(());
        for (copy, host_size, bytes) in [
            (&mut local.jobs, self.jobs.size, job_bytes),
            (&mut local.coefs, self.coefs.size, coef_bytes),
        ] {
            if copy.as_ref().is_some_and(|b| b.size >= bytes) {
                continue;
            }
            // As large as the host buffer: it grows rarely, and this with it.
            match DeviceBuffer::new(gpu, host_size.max(bytes).min(limit)) {
                Ok(b) => *copy = Some(b),
                Err(e) => grown = Err(e),
            }
        }
        if let Err(e) = grown {
            crate::log::once(
                crate::log::Level::Warn,
                "device-local job data",
                format_args!(
                    "no device-local copy of the job data ({e}); the GPU reads it from host memory"
                ),
            );
            self.local = None;
        }
    }

    /// The set that binds the stream's buffers with `pixels` and `source`; `taken`: sets
    /// this submission binds already.
    fn set_for(
        &mut self,
        pixels: BufferRef,
        source: BufferRef,
        taken: &mut Vec<usize>,
    ) -> GpuResult<vk::DescriptorSet> {
        let buffers = [
            self.jobs_ref(),
            self.coefs_ref(),
            pixels,
            self.overflow.as_ref(),
            source,
        ];
        self.sets.pointing_at(buffers, taken)
    }

    /// Records `dispatches` (in level order) into the command buffer and submits it once,
    /// without waiting; returns the submission's serial. `pixels[slot]` is a slot's pixel
    /// buffer; source 0 is the arena, source `k` is slot `k`. Until [`Stream::finish`] the
    /// stream's buffers belong to the GPU.
    pub fn submit(
        &mut self,
        dispatches: &[Dispatch],
        pixels: &[BufferRef],
        job_bytes: u64,
        coef_bytes: u64,
    ) -> GpuResult<u64> {
        debug_assert!(!dispatches.is_empty());
        // (The last submission finished: its sets may be pointed elsewhere.)
        debug_assert!(!self.engine.busy());
        // The kernels' pipelines, built now if this is their first use: a required one that
        // fails is an error like a failed submission, and the batch runs on the CPU.
        let gpu = self.engine.gpu();
        gpu.pipelines.ensure(dispatches.iter().map(|d| d.kernel))?;
        self.grow_local(job_bytes, coef_bytes);
        let mut taken = Vec::new();
        let mut set_of = Vec::with_capacity(dispatches.len());
        for disp in dispatches {
            let source = match disp.source {
                0 => self.coefs_ref(),
                k => pixels[k],
            };
            set_of.push(self.set_for(pixels[disp.slot], source, &mut taken)?);
        }
        let copies = self.local_copies(job_bytes, coef_bytes);
        let mut rec = self.engine.record()?;
        // The busy time of this submission's own work: the first timestamp is taken once
        // the compute work submitted before it (which it waits for) has completed. The
        // copies are this submission's work too, but the first timestamp does not bound
        // them: they may start while earlier compute work still runs, and only what is left
        // of them after it is timed.
        rec.start_timing();
        if !copies.is_empty() {
            rec.copy(&copies);
            // The copies before the shaders read them.
            rec.barrier();
        }
        let mut level = None;
        for (disp, &set) in dispatches.iter().zip(&set_of) {
            if level != Some(disp.level) {
                // The next level reads and writes what this one wrote.
                rec.level(None);
                level = Some(disp.level);
            }
            rec.bind(set);
            // Built above (the recorder places no job on an optional kernel the device
            // lacks).
            rec.dispatch(disp.kernel, disp.first, disp.count)?;
        }
        let levels = rec.levels as u64;
        // The jobs left to the host: none yet.
        unsafe { (self.overflow.ptr as *mut u32).write(0) };
        self.overflow.flush(0..4)?;
        let serial = rec.submit(&Step::ALL)?;
        if self.local.is_some() {
            stats::add(&COUNTERS.device_job_copies, 1);
        }
        stats::add(&COUNTERS.barriers, levels.saturating_sub(1));
        stats::max(&COUNTERS.max_levels, levels);
        Ok(serial)
    }

    /// The copies of the jobs and coefficients into their device-local copies, where there
    /// are.
    fn local_copies(&self, job_bytes: u64, coef_bytes: u64) -> Vec<Copy> {
        let Some(local) = &self.local else {
            return Vec::new();
        };
        [
            (&self.jobs, &local.jobs, job_bytes),
            (&self.coefs, &local.coefs, coef_bytes),
        ]
        .into_iter()
        .filter(|&(_, _, bytes)| bytes > 0)
        .map(|(from, to, bytes)| Copy {
            from: from.buffer,
            to: to.as_ref().expect("grown before").buffer,
            regions: vec![vk::BufferCopy::default().size(bytes)],
        })
        .collect()
    }

    /// Waits for this stream's submission; then its results and buffers are the host's
    /// again. The caller retires the submission ([`Gpu::retire`]) once the pixels it wrote
    /// are final (after what is left for the host, or after redoing it all on the CPU).
    pub fn finish(&mut self) -> GpuResult<()> {
        let waiting = Instant::now();
        let cpu = stats::thread_cpu_ns();
        self.engine.wait_all()?;
        stats::add_time(&COUNTERS.wait_ns, waiting);
        stats::add_cpu_time(&COUNTERS.wait_cpu_ns, cpu);
        Ok(())
    }

    /// Whether the GPU has finished this stream's submission (without waiting); a failed
    /// query says yes, so that [`Stream::finish`] meets the failure.
    pub fn is_done(&self) -> bool {
        self.engine.is_done()
    }
}

impl Stream {
    /// Makes the first `len` bytes of the staging buffer, which the last submission wrote,
    /// visible to the host.
    pub fn read_staging(&self, len: usize) -> GpuResult<()> {
        if self.engine.injected() == Some(Step::Unpack) {
            return Err("vkInvalidateMappedMemoryRanges: failure injected by a test".into());
        }
        self.staging.invalidate(0..len as u64)
    }

    /// Indices (in the job buffer) of the jobs the last submission left to the host.
    pub fn overflowed_jobs(&self) -> GpuResult<Vec<u32>> {
        if self.engine.injected() == Some(Step::Overflow) {
            return Err("the overflow list: failure injected by a test".into());
        }
        self.overflow.invalidate(0..4)?;
        let count = unsafe { (self.overflow.ptr as *const u32).read() } as usize;
        if count == 0 {
            return Ok(Vec::new());
        }
        let bytes = 4 * (count as u64 + 1);
        if bytes > self.overflow.size {
            return Err(format!("{count} overflowed jobs exceed the list"));
        }
        self.overflow.invalidate(0..bytes)?;
        let list =
            unsafe { std::slice::from_raw_parts((self.overflow.ptr as *const u32).add(1), count) };
        Ok(list.to_vec())
    }
}
