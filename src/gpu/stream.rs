//! A thread's GPU context: command buffer, fence, descriptor sets and buffers, all reused
//! from one flush to the next. One [`Stream::execute`] is one submission.

use super::memory::{BufferRef, DeviceBuffer, HostBuffer};
use super::pipeline::PUSH_BYTES;
use super::testing::Step;
use super::{vkerr, Gpu, GpuResult};
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
    gpu: &'static Gpu,
    pool: vk::CommandPool,
    cmd: vk::CommandBuffer,
    fence: vk::Fence,
    descriptor_pool: vk::DescriptorPool,
    sets: Vec<vk::DescriptorSet>,
    /// What each set's bindings point at now (jobs, coefficients, pixels, overflow list,
    /// source pixels).
    set_targets: Vec<[u64; 5]>,
    queries: Option<vk::QueryPool>,
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
    /// The step of the submission in flight at which a test made it fail.
    injected: Option<Step>,
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
        let d = &gpu.device;
        // Objects made so far, destroyed again if a later step fails.
        struct Partial<'a> {
            d: &'a ash::Device,
            pool: vk::CommandPool,
            fence: vk::Fence,
            descriptor_pool: vk::DescriptorPool,
            queries: Option<vk::QueryPool>,
        }
        impl Drop for Partial<'_> {
            fn drop(&mut self) {
                unsafe {
                    if let Some(q) = self.queries {
                        self.d.destroy_query_pool(q, None);
                    }
                    self.d.destroy_descriptor_pool(self.descriptor_pool, None);
                    self.d.destroy_fence(self.fence, None);
                    self.d.destroy_command_pool(self.pool, None);
                }
            }
        }
        let mut p = Partial {
            d,
            pool: vk::CommandPool::null(),
            fence: vk::Fence::null(),
            descriptor_pool: vk::DescriptorPool::null(),
            queries: None,
        };
        unsafe {
            p.pool = d
                .create_command_pool(
                    &vk::CommandPoolCreateInfo::default()
                        .queue_family_index(gpu.queue_family)
                        .flags(vk::CommandPoolCreateFlags::TRANSIENT),
                    None,
                )
                .map_err(vkerr("vkCreateCommandPool"))?;
            let cmd = d
                .allocate_command_buffers(
                    &vk::CommandBufferAllocateInfo::default()
                        .command_pool(p.pool)
                        .level(vk::CommandBufferLevel::PRIMARY)
                        .command_buffer_count(1),
                )
                .map_err(vkerr("vkAllocateCommandBuffers"))?[0];
            p.fence = d
                .create_fence(&vk::FenceCreateInfo::default(), None)
                .map_err(vkerr("vkCreateFence"))?;
            let sizes = [vk::DescriptorPoolSize::default()
                .ty(vk::DescriptorType::STORAGE_BUFFER)
                .descriptor_count(super::pipeline::BINDINGS * MAX_SETS as u32)];
            p.descriptor_pool = d
                .create_descriptor_pool(
                    &vk::DescriptorPoolCreateInfo::default()
                        .max_sets(MAX_SETS as u32)
                        .pool_sizes(&sizes),
                    None,
                )
                .map_err(vkerr("vkCreateDescriptorPool"))?;
            let layouts = [gpu.pipelines.set_layout; MAX_SETS];
            let sets = d
                .allocate_descriptor_sets(
                    &vk::DescriptorSetAllocateInfo::default()
                        .descriptor_pool(p.descriptor_pool)
                        .set_layouts(&layouts),
                )
                .map_err(vkerr("vkAllocateDescriptorSets"))?;
            if gpu.info.timestamp_period_ns.is_some() {
                p.queries = d
                    .create_query_pool(
                        &vk::QueryPoolCreateInfo::default()
                            .query_type(vk::QueryType::TIMESTAMP)
                            .query_count(2),
                        None,
                    )
                    .ok();
            }
            let coefs = HostBuffer::new(gpu, 1 << 20)?;
            let jobs = HostBuffer::new(gpu, 64 << 10)?;
            let staging = HostBuffer::new(gpu, 256 << 10)?;
            let overflow = HostBuffer::new(gpu, 16 << 10)?;
            // Across a bus (a discrete GPU), every level's jobs would read host memory: one
            // copy into device-local memory first (on the NVIDIA H100 a tenth less GPU time
            // for the loop filter). `DAEDALUS_TEST_MEMORY=copies` takes that way anywhere.
            let copies = crate::config::get().testing.device_copies;
            let local =
                (copies || !jobs.device_local || !coefs.device_local).then_some(LocalCopies {
                    jobs: None,
                    coefs: None,
                });
            let stream = Stream {
                gpu,
                pool: p.pool,
                cmd,
                fence: p.fence,
                descriptor_pool: p.descriptor_pool,
                sets,
                set_targets: vec![[0; 5]; MAX_SETS],
                queries: p.queries,
                coefs,
                jobs,
                staging,
                overflow,
                local,
                injected: None,
            };
            std::mem::forget(p); // the stream owns them now
            Ok(stream)
        }
    }

    pub fn gpu(&self) -> &'static Gpu {
        self.gpu
    }

    /// Largest buffer a stream allocates: within maxStorageBufferRange and reasonable memory.
    pub fn max_buffer_bytes(&self) -> u64 {
        self.gpu.info.max_storage_buffer_range.min(256 << 20)
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
        if bytes > self.gpu.info.max_storage_buffer_range {
            return Err(format!("{bytes} bytes exceed maxStorageBufferRange"));
        }
        let size = (slot.size * 2)
            .max(bytes)
            .min(self.gpu.info.max_storage_buffer_range);
        *slot = HostBuffer::new(self.gpu, size)?;
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
        let gpu = self.gpu;
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

    /// Points a descriptor set at `pixels` and `source` (keeping one that already does) and
    /// returns its index; `taken`: sets this submission uses already.
    fn set_for(
        &mut self,
        pixels: BufferRef,
        source: BufferRef,
        taken: &mut Vec<usize>,
    ) -> GpuResult<usize> {
        let want = [
            self.jobs_ref(),
            self.coefs_ref(),
            pixels,
            self.overflow.as_ref(),
            source,
        ];
        let ids = want.map(|b| b.id);
        if let Some(i) = self.set_targets.iter().position(|t| *t == ids) {
            taken.push(i);
            return Ok(i);
        }
        let i = (0..MAX_SETS)
            .find(|i| !taken.contains(i))
            .ok_or("more (pixels, source) pairs than descriptor sets")?;
        // SAFETY: set `i` is not taken by a pending submission.
        unsafe { super::memory::point_set_at(&self.gpu.device, self.sets[i], &want) };
        self.set_targets[i] = ids;
        taken.push(i);
        Ok(i)
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
        // The kernels' pipelines, built now if this is their first use: a required one that
        // fails is an error like a failed submission, and the batch runs on the CPU.
        self.gpu
            .pipelines
            .ensure(dispatches.iter().map(|d| d.kernel))?;
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
        let gpu = self.gpu;
        let d = &gpu.device;
        let max_groups = gpu.info.max_group_count_x;
        let mut dispatch_count = 0u64;
        let mut barriers = 0u64;
        unsafe {
            d.reset_command_pool(self.pool, vk::CommandPoolResetFlags::empty())
                .map_err(vkerr("vkResetCommandPool"))?;
            d.begin_command_buffer(
                self.cmd,
                &vk::CommandBufferBeginInfo::default()
                    .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT),
            )
            .map_err(vkerr("vkBeginCommandBuffer"))?;
            // After every earlier submission to the queue (another thread's may have written
            // what this one reads in place).
            compute_barrier(d, self.cmd);
            // The busy time of this submission's own work: the first timestamp is taken once
            // the compute work submitted before it (which it waits for) has completed.
            if let Some(q) = self.queries {
                d.cmd_reset_query_pool(self.cmd, q, 0, 2);
                d.cmd_write_timestamp(self.cmd, vk::PipelineStageFlags::COMPUTE_SHADER, q, 0);
            }
            // The copies are this submission's work too, but the first timestamp does not
            // bound them: they may start while earlier compute work still runs, and only
            // what is left of them after it is timed.
            if let Some(local) = &self.local {
                for (from, to, bytes) in [
                    (&self.jobs, &local.jobs, job_bytes),
                    (&self.coefs, &local.coefs, coef_bytes),
                ] {
                    let to = to.as_ref().expect("grown before");
                    if bytes > 0 {
                        let region = [vk::BufferCopy::default().size(bytes)];
                        d.cmd_copy_buffer(self.cmd, from.buffer, to.buffer, &region);
                    }
                }
                // The copies before the shaders read them.
                memory_barrier(
                    d,
                    self.cmd,
                    (
                        vk::PipelineStageFlags::TRANSFER,
                        vk::AccessFlags::TRANSFER_WRITE,
                    ),
                    (
                        vk::PipelineStageFlags::COMPUTE_SHADER,
                        vk::AccessFlags::SHADER_READ,
                    ),
                );
            }
            let (mut bound_kernel, mut bound_set) = (None, usize::MAX);
            let mut level = dispatches[0].level;
            for (disp, &set) in dispatches.iter().zip(&set_of) {
                if disp.level != level {
                    // The next level reads and writes what this one wrote.
                    compute_barrier(d, self.cmd);
                    level = disp.level;
                    barriers += 1;
                }
                // Built above (the recorder places no job on an optional kernel the device
                // lacks).
                let kernel = gpu.pipelines.get(disp.kernel)?;
                if bound_kernel != Some(disp.kernel) {
                    d.cmd_bind_pipeline(self.cmd, vk::PipelineBindPoint::COMPUTE, kernel.pipeline);
                    bound_kernel = Some(disp.kernel);
                }
                if bound_set != set {
                    d.cmd_bind_descriptor_sets(
                        self.cmd,
                        vk::PipelineBindPoint::COMPUTE,
                        gpu.pipelines.layout,
                        0,
                        &[self.sets[set]],
                        &[],
                    );
                    bound_set = set;
                }
                // Split so that no dispatch exceeds maxComputeWorkGroupCount[0].
                let per_dispatch = max_groups as u64 * kernel.jobs_per_group as u64;
                let mut done = 0u64;
                while done < disp.count as u64 {
                    let count = (disp.count as u64 - done).min(per_dispatch) as u32;
                    // First job and job count, as the shaders' push constants read them.
                    let mut bytes = [0u8; 8];
                    bytes[..4].copy_from_slice(&(disp.first + done as u32).to_ne_bytes());
                    bytes[4..].copy_from_slice(&count.to_ne_bytes());
                    debug_assert_eq!(bytes.len() as u32, PUSH_BYTES);
                    d.cmd_push_constants(
                        self.cmd,
                        gpu.pipelines.layout,
                        vk::ShaderStageFlags::COMPUTE,
                        0,
                        &bytes,
                    );
                    d.cmd_dispatch(self.cmd, count.div_ceil(kernel.jobs_per_group), 1, 1);
                    dispatch_count += 1;
                    done += count as u64;
                }
            }
            if let Some(q) = self.queries {
                d.cmd_write_timestamp(self.cmd, vk::PipelineStageFlags::BOTTOM_OF_PIPE, q, 1);
            }
            // Shader writes must be visible to host reads after the fence.
            memory_barrier(
                d,
                self.cmd,
                (
                    vk::PipelineStageFlags::COMPUTE_SHADER,
                    vk::AccessFlags::SHADER_WRITE,
                ),
                (vk::PipelineStageFlags::HOST, vk::AccessFlags::HOST_READ),
            );
            d.end_command_buffer(self.cmd)
                .map_err(vkerr("vkEndCommandBuffer"))?;
        }
        // Reset before submitting: if that fails, nothing has run and the caller may redo the
        // work on the CPU exactly.
        unsafe { d.reset_fences(&[self.fence]) }.map_err(vkerr("vkResetFences"))?;
        unsafe { (self.overflow.ptr as *mut u32).write(0) };
        self.overflow.flush(0..4)?;
        let (serial, injected) = gpu.submit_with_injection(self.cmd, self.fence, &Step::ALL)?;
        self.injected = injected;
        stats::add(&COUNTERS.submissions, 1);
        if self.local.is_some() {
            stats::add(&COUNTERS.device_job_copies, 1);
        }
        stats::add(&COUNTERS.dispatches, dispatch_count);
        stats::add(&COUNTERS.barriers, barriers);
        stats::max(&COUNTERS.max_levels, barriers + 1);
        Ok(serial)
    }

    /// Waits for this stream's submission; then its results and buffers are the host's
    /// again. The caller retires the submission ([`Gpu::retire`]) once the pixels it wrote
    /// are final (after what is left for the host, or after redoing it all on the CPU).
    pub fn finish(&mut self) -> GpuResult<()> {
        let gpu = self.gpu;
        let d = &gpu.device;
        let waiting = Instant::now();
        let cpu = stats::thread_cpu_ns();
        let waited = self.wait();
        let waited_for = waiting.elapsed();
        waited?;
        if self.injected == Some(Step::Wait) {
            return Err("vkWaitForFences: failure injected by a test (after the GPU ran)".into());
        }
        stats::add(&COUNTERS.wait_ns, waited_for.as_nanos() as u64);
        stats::add_cpu_time(&COUNTERS.wait_cpu_ns, cpu);
        if let (Some(q), Some(period)) = (self.queries, gpu.info.timestamp_period_ns) {
            let mut ticks = [0u64; 2];
            let got = unsafe {
                d.get_query_pool_results(q, 0, &mut ticks, vk::QueryResultFlags::TYPE_64)
            };
            if got.is_ok() && ticks[1] >= ticks[0] {
                stats::add(
                    &COUNTERS.gpu_busy_ns,
                    ((ticks[1] - ticks[0]) as f64 * period) as u64,
                );
            }
        }
        Ok(())
    }

    /// Whether the GPU has finished this stream's submission (without waiting); a failed
    /// query says yes, so that [`Stream::finish`] meets the failure.
    pub fn is_done(&self) -> bool {
        unsafe { self.gpu.device.get_fence_status(self.fence) }.unwrap_or(true)
    }

    /// Sleeps in the driver until the submission is done (polling would burn the CPU for the
    /// whole wait).
    fn wait(&self) -> GpuResult<()> {
        let d = &self.gpu.device;
        match unsafe { d.wait_for_fences(&[self.fence], true, HANG_TIMEOUT.as_nanos() as u64) } {
            Ok(()) => Ok(()),
            Err(vk::Result::TIMEOUT) => {
                Err(format!("the GPU did not finish within {HANG_TIMEOUT:?}"))
            }
            Err(e) => Err(format!("vkWaitForFences: {e}")),
        }
    }
}

/// Orders the compute work after it after all compute work before it (in submission order,
/// earlier submissions to the queue included): reads and writes after writes and reads.
unsafe fn compute_barrier(d: &ash::Device, cmd: vk::CommandBuffer) {
    let shader = vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE;
    let compute = vk::PipelineStageFlags::COMPUTE_SHADER;
    memory_barrier(d, cmd, (compute, shader), (compute, shader));
}

/// A global memory barrier: what `after` does (stage, accesses) waits for what `before` did.
pub(crate) unsafe fn memory_barrier(
    d: &ash::Device,
    cmd: vk::CommandBuffer,
    before: (vk::PipelineStageFlags, vk::AccessFlags),
    after: (vk::PipelineStageFlags, vk::AccessFlags),
) {
    let barrier = [vk::MemoryBarrier::default()
        .src_access_mask(before.1)
        .dst_access_mask(after.1)];
    d.cmd_pipeline_barrier(
        cmd,
        before.0,
        after.0,
        vk::DependencyFlags::empty(),
        &barrier,
        &[],
        &[],
    );
}

impl Drop for Stream {
    fn drop(&mut self) {
        let d = &self.gpu.device;
        unsafe {
            if let Some(q) = self.queries {
                d.destroy_query_pool(q, None);
            }
            d.destroy_descriptor_pool(self.descriptor_pool, None);
            d.destroy_fence(self.fence, None);
            d.destroy_command_pool(self.pool, None);
        }
    }
}

impl Stream {
    /// Makes the first `len` bytes of the staging buffer, which the last submission wrote,
    /// visible to the host.
    pub fn read_staging(&self, len: usize) -> GpuResult<()> {
        if self.injected == Some(Step::Unpack) {
            return Err("vkInvalidateMappedMemoryRanges: failure injected by a test".into());
        }
        self.staging.invalidate(0..len as u64)
    }

    /// Indices (in the job buffer) of the jobs the last submission left to the host.
    pub fn overflowed_jobs(&self) -> GpuResult<Vec<u32>> {
        if self.injected == Some(Step::Overflow) {
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
