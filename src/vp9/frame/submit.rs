//! A frame's reconstruction on the GPU, in parts: each part reconstructs a range of superblock
//! rows already parsed, in one submission, while the decoder parses the rows after it. A part
//! is dispatch levels (barriers between):
//! - inter prediction and residual of every inter block ([`super::inter`]), one level;
//! - then one wavefront over the superblocks ([`super::wavefront`]): their intra blocks
//!   ([`super::intra`]), the last line of the part's last row saved for the next part's intra
//!   prediction (`shaders/vp9_lines.comp`) and the loop filter ([`super::loopfilter`]).
//!
//! A decoder's frame data (its parsed blocks, the header, the job lists) is one buffer of
//! host-visible memory the decoder parses into; the frame's pixels and its references' are the
//! frame pool's buffers (`crate::regions`). Where that memory is across a bus from the GPU (a
//! discrete GPU), the kernels work on device-local copies instead: each part first copies the
//! data the decoder wrote for it (and references FFmpeg reconstructed) there, and the frame's
//! last part copies its pixels back; elsewhere they work in place. Parts of one frame are
//! submitted in order, and a frame's parts only after every part of the frame before it
//! ([`Order`]), so that no submission waits on a later one.

use super::header;
use super::records::Layout;
use crate::gpu::memory::{BufferRef, DeviceBuffer, HostBuffer};
use crate::gpu::stream::memory_barrier;
use crate::gpu::testing::Step;
use crate::gpu::{vkerr, Gpu, GpuResult};
use crate::kernels::Kernel;
use crate::stats;
use ash::vk;
use std::ops::Range;
use std::sync::atomic::AtomicU64;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// A copy between buffers: source, destination and the byte ranges.
pub struct Copy {
    pub from: vk::Buffer,
    pub to: vk::Buffer,
    pub regions: Vec<vk::BufferCopy>,
}

/// GPU-side bytes copied: to device-local memory (the data, references), and frames back.
pub static COPIED_TO_DEVICE: AtomicU64 = AtomicU64::new(0);
pub static COPIED_BACK: AtomicU64 = AtomicU64::new(0);

/// Parts in flight at once per decoder.
const SLOTS: usize = 8;

/// The stages of a part whose GPU time the stats line gives apart (where the queue has
/// timestamps): the first level of each stage and the end of the part are stamped.
pub const STAGES: [&str; 2] = ["inter", "wavefront"];

/// The stage of a level by its first dispatch's kernel.
fn stage_of(kernel: Kernel) -> Option<usize> {
    match kernel {
        Kernel::Vp9Inter => Some(0),
        Kernel::Vp9Intra | Kernel::Vp9Lines | Kernel::Vp9Lf => Some(1),
        Kernel::Itx(_)
        | Kernel::Mc
        | Kernel::Lf
        | Kernel::Cdef
        | Kernel::LfSb
        | Kernel::Vp9IpredCheck
        | Kernel::CdefRowCopy
        | Kernel::CdefRow => None,
    }
}

/// GPU time per stage of [`STAGES`], in nanoseconds.
pub static STAGE_NS: [AtomicU64; 2] = [const { AtomicU64::new(0) }; 2];

/// Timestamps per slot: a part's start, one per stage, its end.
const STAMPS: u32 = STAGES.len() as u32 + 2;

/// A part that takes longer than this is treated as a hung device. (Generous: a driver that
/// compiles the kernels at their first dispatch, as lavapipe does, takes seconds there.)
const HANG_TIMEOUT: Duration = Duration::from_secs(120);

/// One dispatch: `count` jobs from `first` of `kernel` (a workgroup each).
#[derive(Clone, Copy, Debug)]
pub struct Dispatch {
    pub kernel: Kernel,
    pub first: u32,
    pub count: u32,
}

/// A part: levels of dispatches, each level after the one before.
pub type Levels = Vec<Vec<Dispatch>>;

/// A command buffer and its fence; `serial` while its submission may run; the stage of each
/// timestamp after the first (`None`: the part's end).
struct Slot {
    cmd: vk::CommandBuffer,
    fence: vk::Fence,
    serial: Option<u64>,
    stamps: Vec<Option<usize>>,
    /// A test's failure injected into the wait for it (`DAEDALUS_TEST_FAIL_STEP=wait`).
    fails_wait: bool,
}

/// A decoder's GPU objects, reused from frame to frame.
pub struct Submitter {
    gpu: &'static Gpu,
    /// The frame's data, in [`Layout`].
    pub data: HostBuffer,
    pub layout: Layout,
    /// Its device-local copy, which the kernels read where there is one; and the byte ranges
    /// of `data` the next part copies there first.
    mirror: Option<DeviceBuffer>,
    staged: Vec<Range<usize>>,
    /// Copies the next part makes before its kernels (`(source, destination, regions)`:
    /// references uploaded) and after them (the frame's pixels copied back).
    copies_before: Vec<Copy>,
    copies_after: Vec<Copy>,
    pool: vk::CommandPool,
    descriptor_pool: vk::DescriptorPool,
    set: vk::DescriptorSet,
    /// What the set's five bindings point at (buffer ids).
    bound: [u64; 5],
    slots: Vec<Slot>,
    /// Two timestamps per slot, where the queue has them.
    queries: Option<vk::QueryPool>,
    /// Words of the job area the frame's parts used.
    jobs_used: usize,
    /// Levels and dispatches of the frame's parts so far.
    pub dispatches: u64,
}

// The handles are plain values and a decoder uses its submitter from one thread at a time.
unsafe impl Send for Submitter {}

impl Submitter {
    /// The kernels work on device-local copies (see the module's comment) where the host
    /// memory the decoder writes is not device-local, or where `copies` asks for them.
    pub fn new(gpu: &'static Gpu, layout: Layout, copies: bool) -> GpuResult<Submitter> {
        let data = HostBuffer::coherent_zeroed(gpu, layout.bytes as u64)?;
        let device_copies = copies || !data.device_local;
        let mirror = if device_copies {
            Some(DeviceBuffer::new(gpu, layout.bytes as u64)?)
        } else {
            None
        };
        let d = &gpu.device;
        unsafe {
            let pool = d
                .create_command_pool(
                    &vk::CommandPoolCreateInfo::default()
                        .queue_family_index(gpu.queue_family)
                        .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER),
                    None,
                )
                .map_err(vkerr("vkCreateCommandPool"))?;
            let mut s = Submitter {
                gpu,
                data,
                layout,
                mirror,
                staged: Vec::new(),
                copies_before: Vec::new(),
                copies_after: Vec::new(),
                pool,
                descriptor_pool: vk::DescriptorPool::null(),
                set: vk::DescriptorSet::null(),
                bound: [0; 5],
                slots: Vec::new(),
                queries: None,
                jobs_used: 0,
                dispatches: 0,
            };
            // From here on `s` owns what is made and destroys it if a step fails.
            let cmds = d
                .allocate_command_buffers(
                    &vk::CommandBufferAllocateInfo::default()
                        .command_pool(pool)
                        .level(vk::CommandBufferLevel::PRIMARY)
                        .command_buffer_count(SLOTS as u32),
                )
                .map_err(vkerr("vkAllocateCommandBuffers"))?;
            for cmd in cmds {
                let fence = d
                    .create_fence(&vk::FenceCreateInfo::default(), None)
                    .map_err(vkerr("vkCreateFence"))?;
                s.slots.push(Slot {
                    cmd,
                    fence,
                    serial: None,
                    stamps: Vec::new(),
                    fails_wait: false,
                });
            }
            let sizes = [vk::DescriptorPoolSize::default()
                .ty(vk::DescriptorType::STORAGE_BUFFER)
                .descriptor_count(5)];
            s.descriptor_pool = d
                .create_descriptor_pool(
                    &vk::DescriptorPoolCreateInfo::default()
                        .max_sets(1)
                        .pool_sizes(&sizes),
                    None,
                )
                .map_err(vkerr("vkCreateDescriptorPool"))?;
            let layouts = [gpu.pipelines.set_layout];
            s.set = d
                .allocate_descriptor_sets(
                    &vk::DescriptorSetAllocateInfo::default()
                        .descriptor_pool(s.descriptor_pool)
                        .set_layouts(&layouts),
                )
                .map_err(vkerr("vkAllocateDescriptorSets"))?[0];
            if gpu.info.timestamp_period_ns.is_some() {
                s.queries = d
                    .create_query_pool(
                        &vk::QueryPoolCreateInfo::default()
                            .query_type(vk::QueryType::TIMESTAMP)
                            .query_count(STAMPS * SLOTS as u32),
                        None,
                    )
                    .ok();
            }
            Ok(s)
        }
    }

    /// Whether the kernels work on device-local copies.
    pub fn device_copies(&self) -> bool {
        self.mirror.is_some()
    }

    /// Starts a frame: its header, and the buffers its kernels bind besides the frame's data:
    /// the frame's pixels and the references' (where there are). No part of the last frame may
    /// be in flight.
    pub fn begin_frame(
        &mut self,
        header: &[u32; header::WORDS],
        frame: BufferRef,
        references: [Option<BufferRef>; 3],
    ) {
        debug_assert!(self.slots.iter().all(|s| s.serial.is_none()));
        // SAFETY: the header area is the buffer's first bytes, written by nothing else now.
        unsafe {
            std::ptr::copy_nonoverlapping(header.as_ptr(), self.data.ptr as *mut u32, header.len())
        };
        self.jobs_used = 0;
        self.staged.clear();
        self.copies_before.clear();
        self.copies_after.clear();
        self.stage(0..header::WORDS * 4);
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
        let ids = buffers.map(|b| b.id);
        if ids != self.bound {
            // SAFETY: the set is not in use: the last frame's parts have completed.
            unsafe { crate::gpu::memory::point_set_at(&self.gpu.device, self.set, &buffers) };
            self.bound = ids;
        }
    }

    /// Appends job words to the frame's job area; returns the index of the first.
    pub fn push_jobs(&mut self, jobs: &[u32]) -> GpuResult<u32> {
        let first = self.jobs_used;
        if first + jobs.len() > self.layout.job_words {
            return Err("the frame's job area is full".into());
        }
        // SAFETY: inside the job area; parts in flight read only the jobs before `first`.
        unsafe {
            let at = (self.data.ptr.add(self.layout.jobs) as *mut u32).add(first);
            std::ptr::copy_nonoverlapping(jobs.as_ptr(), at, jobs.len());
        }
        self.jobs_used += jobs.len();
        let at = self.layout.jobs + 4 * first;
        self.stage(at..at + 4 * jobs.len());
        Ok(first as u32)
    }

    /// Bytes of the frame's data the decoder wrote for the next part: copied to the
    /// device-local copy at its start, where there is one.
    pub fn stage(&mut self, bytes: Range<usize>) {
        if self.mirror.is_some() && !bytes.is_empty() {
            self.staged.push(bytes);
        }
    }

    /// A copy the next part makes before its kernels.
    pub fn copy_before(&mut self, copy: Copy) {
        self.copies_before.push(copy);
    }

    /// A copy the next part makes after its kernels.
    pub fn copy_after(&mut self, copy: Copy) {
        self.copies_after.push(copy);
    }

    /// Records `levels` into a free command buffer and submits it without waiting.
    pub fn submit(&mut self, levels: &Levels) -> GpuResult<()> {
        let gpu = self.gpu;
        let kernels = levels.iter().flatten().map(|d| d.kernel);
        gpu.pipelines.ensure(kernels)?;
        let slot = match self.slots.iter().position(|s| s.serial.is_none()) {
            Some(i) => i,
            None => {
                // All in flight: the oldest (lowest serial) finishes first.
                let oldest = (0..SLOTS)
                    .min_by_key(|&i| self.slots[i].serial.unwrap_or(u64::MAX))
                    .expect("slots");
                self.wait_slot(oldest)?;
                oldest
            }
        };
        let d = &gpu.device;
        let cmd = self.slots[slot].cmd;
        let mut count = 0u64;
        let first_query = STAMPS * slot as u32;
        let mut stamps = Vec::new();
        let mut stage = None;
        unsafe {
            d.reset_command_buffer(cmd, vk::CommandBufferResetFlags::empty())
                .map_err(vkerr("vkResetCommandBuffer"))?;
            d.begin_command_buffer(
                cmd,
                &vk::CommandBufferBeginInfo::default()
                    .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT),
            )
            .map_err(vkerr("vkBeginCommandBuffer"))?;
            // After every earlier submission (the references, the frame's earlier parts).
            full_barrier(d, cmd);
            let mut before = std::mem::take(&mut self.copies_before);
            if let Some(m) = &self.mirror {
                let regions: Vec<vk::BufferCopy> = self
                    .staged
                    .drain(..)
                    .map(|r| {
                        vk::BufferCopy::default()
                            .src_offset(r.start as u64)
                            .dst_offset(r.start as u64)
                            .size(r.len() as u64)
                    })
                    .collect();
                before.push(Copy {
                    from: self.data.buffer,
                    to: m.buffer,
                    regions,
                });
            }
            let copies_before = record_copies(d, cmd, &before);
            stats::add(&COPIED_TO_DEVICE, copies_before);
            if copies_before > 0 {
                full_barrier(d, cmd);
            }
            if let Some(q) = self.queries {
                d.cmd_reset_query_pool(cmd, q, first_query, STAMPS);
                d.cmd_write_timestamp(cmd, vk::PipelineStageFlags::COMPUTE_SHADER, q, first_query);
            }
            d.cmd_bind_descriptor_sets(
                cmd,
                vk::PipelineBindPoint::COMPUTE,
                gpu.pipelines.layout,
                0,
                &[self.set],
                &[],
            );
            let max_groups = gpu.info.max_group_count_x;
            let mut bound = None;
            for (i, level) in levels.iter().enumerate() {
                let level_stage = level.first().and_then(|disp| stage_of(disp.kernel));
                if let (Some(q), Some(_)) = (self.queries, level_stage) {
                    // (A stage that came back would have no stamp left: its time goes to the one
                    // before.)
                    if level_stage != stage && i > 0 && stamps.len() + 2 < STAMPS as usize {
                        // The stage before ends when its work has.
                        stamps.push(stage);
                        let at = first_query + stamps.len() as u32;
                        d.cmd_write_timestamp(cmd, vk::PipelineStageFlags::COMPUTE_SHADER, q, at);
                    }
                }
                stage = level_stage.or(stage);
                if i > 0 {
                    full_barrier(d, cmd);
                }
                for disp in level {
                    let kernel = gpu.pipelines.get(disp.kernel)?;
                    if bound != Some(disp.kernel) {
                        d.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::COMPUTE, kernel.pipeline);
                        bound = Some(disp.kernel);
                    }
                    let mut done = 0u32;
                    while done < disp.count {
                        let n = (disp.count - done).min(max_groups);
                        let mut push = [0u8; 8];
                        push[..4].copy_from_slice(&(disp.first + done).to_ne_bytes());
                        push[4..].copy_from_slice(&n.to_ne_bytes());
                        d.cmd_push_constants(
                            cmd,
                            gpu.pipelines.layout,
                            vk::ShaderStageFlags::COMPUTE,
                            0,
                            &push,
                        );
                        d.cmd_dispatch(cmd, n, 1, 1);
                        count += 1;
                        done += n;
                    }
                }
            }
            if let Some(q) = self.queries {
                stamps.push(stage);
                let at = first_query + stamps.len() as u32;
                d.cmd_write_timestamp(cmd, vk::PipelineStageFlags::BOTTOM_OF_PIPE, q, at);
            }
            let mut after = std::mem::take(&mut self.copies_after);
            if let Some(m) = &self.mirror {
                // The kernels' status word, for the host.
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
            if !after.is_empty() {
                full_barrier(d, cmd);
                stats::add(&COPIED_BACK, record_copies(d, cmd, &after));
            }
            // The frame's pixels and status for the host once the fence signals.
            memory_barrier(
                d,
                cmd,
                (
                    vk::PipelineStageFlags::COMPUTE_SHADER | vk::PipelineStageFlags::TRANSFER,
                    vk::AccessFlags::SHADER_WRITE | vk::AccessFlags::TRANSFER_WRITE,
                ),
                (vk::PipelineStageFlags::HOST, vk::AccessFlags::HOST_READ),
            );
            d.end_command_buffer(cmd)
                .map_err(vkerr("vkEndCommandBuffer"))?;
            d.reset_fences(&[self.slots[slot].fence])
                .map_err(vkerr("vkResetFences"))?;
        }
        let (serial, injected) =
            gpu.submit_with_injection(cmd, self.slots[slot].fence, &[Step::Wait])?;
        self.slots[slot].serial = Some(serial);
        self.slots[slot].fails_wait = injected == Some(Step::Wait);
        self.slots[slot].stamps = stamps;
        self.dispatches += count;
        stats::add(&stats::COUNTERS.submissions, 1);
        stats::add(&stats::COUNTERS.dispatches, count);
        Ok(())
    }

    /// Waits for slot `i`'s submission and retires it.
    fn wait_slot(&mut self, i: usize) -> GpuResult<()> {
        let Some(serial) = self.slots[i].serial else {
            return Ok(());
        };
        let d = &self.gpu.device;
        let waited = unsafe {
            d.wait_for_fences(&[self.slots[i].fence], true, HANG_TIMEOUT.as_nanos() as u64)
        };
        // Whatever the wait says, nothing of this thread waits for it again.
        self.slots[i].serial = None;
        self.gpu.retire(serial);
        match waited {
            Ok(()) => {}
            Err(vk::Result::TIMEOUT) => {
                return Err(format!("the GPU did not finish within {HANG_TIMEOUT:?}"))
            }
            Err(e) => return Err(format!("vkWaitForFences: {e}")),
        }
        if std::mem::take(&mut self.slots[i].fails_wait) {
            return Err("vkWaitForFences: failure injected by a test (after the GPU ran)".into());
        }
        if let (Some(q), Some(period)) = (self.queries, self.gpu.info.timestamp_period_ns) {
            let stamps = std::mem::take(&mut self.slots[i].stamps);
            let mut ticks = vec![0u64; stamps.len() + 1];
            let got = unsafe {
                d.get_query_pool_results(
                    q,
                    STAMPS * i as u32,
                    &mut ticks,
                    vk::QueryResultFlags::TYPE_64,
                )
            };
            let ns = |a: u64, b: u64| (b.saturating_sub(a) as f64 * period) as u64;
            if got.is_ok() && ticks[stamps.len()] >= ticks[0] {
                stats::add(
                    &stats::COUNTERS.gpu_busy_ns,
                    ns(ticks[0], ticks[stamps.len()]),
                );
                for (k, stage) in stamps.iter().enumerate() {
                    if let Some(s) = stage {
                        stats::add(&STAGE_NS[*s], ns(ticks[k], ticks[k + 1]));
                    }
                }
            }
        }
        Ok(())
    }

    /// Waits for every part in flight (all of them, even after an error: the CPU may write
    /// the frame only once the GPU no longer does); then the frame's status word.
    pub fn finish(&mut self) -> GpuResult<u32> {
        let waiting = Instant::now();
        let cpu = stats::thread_cpu_ns();
        let mut result = Ok(());
        let mut order: Vec<usize> = (0..SLOTS)
            .filter(|&i| self.slots[i].serial.is_some())
            .collect();
        order.sort_by_key(|&i| self.slots[i].serial);
        for i in order {
            if let Err(e) = self.wait_slot(i) {
                result = result.and(Err(e));
            }
        }
        stats::add_time(&stats::COUNTERS.wait_ns, waiting);
        stats::add_cpu_time(&stats::COUNTERS.wait_cpu_ns, cpu);
        result?;
        let status = header::STATUS as u64 * 4;
        self.data.invalidate(status..status + 4)?;
        // SAFETY: the word is in the header, which the GPU no longer writes.
        Ok(unsafe {
            (self.data.ptr as *const u32)
                .add(header::STATUS)
                .read_volatile()
        })
    }

    /// Whether a part is in flight.
    pub fn busy(&self) -> bool {
        self.slots.iter().any(|s| s.serial.is_some())
    }
}

impl Drop for Submitter {
    fn drop(&mut self) {
        let _ = self.finish();
        let d = &self.gpu.device;
        unsafe {
            if let Some(q) = self.queries {
                d.destroy_query_pool(q, None);
            }
            for s in &self.slots {
                d.destroy_fence(s.fence, None);
            }
            if self.descriptor_pool != vk::DescriptorPool::null() {
                d.destroy_descriptor_pool(self.descriptor_pool, None);
            }
            d.destroy_command_pool(self.pool, None);
        }
    }
}

/// Compute work and copies after it wait for all of both before it, earlier submissions
/// included.
unsafe fn full_barrier(d: &ash::Device, cmd: vk::CommandBuffer) {
    let access = vk::AccessFlags::SHADER_READ
        | vk::AccessFlags::SHADER_WRITE
        | vk::AccessFlags::TRANSFER_READ
        | vk::AccessFlags::TRANSFER_WRITE;
    let stages = vk::PipelineStageFlags::COMPUTE_SHADER | vk::PipelineStageFlags::TRANSFER;
    memory_barrier(d, cmd, (stages, access), (stages, access));
}

/// Records `copies`; returns the bytes they copy.
unsafe fn record_copies(d: &ash::Device, cmd: vk::CommandBuffer, copies: &[Copy]) -> u64 {
    let mut bytes = 0;
    for c in copies.iter().filter(|c| !c.regions.is_empty()) {
        d.cmd_copy_buffer(cmd, c.from, c.to, &c.regions);
        bytes += c.regions.iter().map(|r| r.size).sum::<u64>();
    }
    bytes
}

/// The order in which frames of every decoder submit their parts: the frames' order of
/// `parse_begin` (the decoder's order: a frame thread begins a frame before the next thread
/// may start). A frame submits only once the frame before it submitted its last part (or
/// reconstructs on the CPU), so no submission waits on a later one and the references' work
/// comes first on the queue.
pub struct Order {
    state: Mutex<(u64, u64)>, // (next frame to begin, last frame done submitting)
    turn: Condvar,
}

pub static ORDER: Order = Order {
    state: Mutex::new((1, 0)),
    turn: Condvar::new(),
};

impl Order {
    /// The frame's place in the order.
    pub fn begin(&self) -> u64 {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let seq = s.0;
        s.0 += 1;
        seq
    }

    /// Whether frame `seq` may submit now.
    pub fn is_turn(&self, seq: u64) -> bool {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).1 + 1 == seq
    }

    /// Waits until frame `seq` may submit.
    pub fn wait_turn(&self, seq: u64) {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        while s.1 + 1 < seq {
            s = self.turn.wait(s).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// Frame `seq` submitted its last part: the next frame's turn (after waiting for its own).
    pub fn done(&self, seq: u64) {
        self.wait_turn(seq);
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        s.1 = s.1.max(seq);
        self.turn.notify_all();
    }
}
