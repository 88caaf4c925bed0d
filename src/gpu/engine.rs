//! The one way work reaches the queue: command buffers, each with its fence, recorded as levels
//! of dispatches with a barrier between levels, timed where the queue has timestamps, and
//! waited for with a hang timeout. The per-call path's streams ([`super::stream`]), the frame
//! path's frames (`crate::vp9::frame::submit`), AV1's CDEF rows and the kernel tests
//! ([`super::once`]) each own an [`Engine`] and the descriptor [`Sets`] their kernels bind.

use super::memory::{point_set_at, BufferRef};
use super::pipeline::BINDINGS;
use super::testing::Step;
use super::{vkerr, Gpu, GpuResult};
use crate::kernels::Kernel;
use crate::stats::{self, COUNTERS};
use ash::vk;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

/// A copy between buffers: source, destination and the byte ranges.
pub struct Copy {
    pub from: vk::Buffer,
    pub to: vk::Buffer,
    pub regions: Vec<vk::BufferCopy>,
}

/// What an engine is made for.
pub struct Options {
    /// Submissions in flight at once.
    pub slots: usize,
    /// GPU time per stage of the owner's ([`Recording::level`] names a level's stage), in
    /// nanoseconds; empty where the owner times its submissions as a whole.
    pub stage_ns: &'static [AtomicU64],
    /// A submission that takes longer than this is treated as a hung device.
    pub hang: Duration,
    /// Whether a wait retires its submission ([`Gpu::retire`]); else the owner does, once
    /// what the submission wrote is final.
    pub retires: bool,
}

/// A command buffer and its fence; `serial` while its submission may run.
struct Slot {
    cmd: vk::CommandBuffer,
    fence: vk::Fence,
    serial: Option<u64>,
    /// The stage of each span between two timestamps.
    spans: Vec<Option<usize>>,
    /// The later step of the last submission at which a test made it fail.
    injected: Option<Step>,
}

pub struct Engine {
    gpu: &'static Gpu,
    options: Options,
    pool: vk::CommandPool,
    slots: Vec<Slot>,
    /// `stamps` timestamps per slot (the start, one per change of stage, the end), where
    /// the queue has them.
    queries: Option<vk::QueryPool>,
    stamps: u32,
    /// The slot submitted last.
    last: usize,
    /// A wait failed (a timeout, a lost device): the GPU may still run what it waited for, so
    /// nothing of the engine is reused or destroyed.
    hung: bool,
}

// The handles are plain values; an engine is used by one thread at a time.
unsafe impl Send for Engine {}

/// The end of the GPU's busy time counted so far (device time, ns).
static BUSY_UNTIL: std::sync::Mutex<u64> = std::sync::Mutex::new(0);

/// The part of a submission's span `[start, end)` (device time, ns) that no span counted
/// before covers: the GPU's busy time is the union of its submissions' spans, which overlap
/// where several decoding threads have work in flight. (Spans come in about the order they
/// ran, each thread counting its own once it has waited for it; one that comes after a later
/// one counts only past that one's end, so the sum is at most the union.)
fn busy_beyond(start: u64, end: u64) -> u64 {
    beyond(
        &mut BUSY_UNTIL.lock().unwrap_or_else(|e| e.into_inner()),
        start,
        end,
    )
}

/// What of `[start, end)` lies past `until`, which moves to its end. (A span that starts a
/// minute before `until`: the device's clock wrapped, or restarted with a new device.)
fn beyond(until: &mut u64, start: u64, end: u64) -> u64 {
    const MINUTE_NS: u64 = 60_000_000_000;
    if start.saturating_add(MINUTE_NS) < *until {
        *until = 0;
    }
    let counted = end.saturating_sub(start.max(*until));
    *until = (*until).max(end);
    counted
}

impl Engine {
    pub fn new(gpu: &'static Gpu, options: Options) -> GpuResult<Engine> {
        let d = &gpu.device;
        let stamps = options.stage_ns.len() as u32 + 2;
        // SAFETY: objects of a live device; `e` destroys what was made if a step fails.
        unsafe {
            let mut e = Engine {
                gpu,
                pool: vk::CommandPool::null(),
                slots: Vec::new(),
                queries: None,
                stamps,
                last: 0,
                hung: false,
                options,
            };
            e.pool = d
                .create_command_pool(
                    &vk::CommandPoolCreateInfo::default()
                        .queue_family_index(gpu.queue_family)
                        .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER),
                    None,
                )
                .map_err(vkerr("vkCreateCommandPool"))?;
            let cmds = d
                .allocate_command_buffers(
                    &vk::CommandBufferAllocateInfo::default()
                        .command_pool(e.pool)
                        .level(vk::CommandBufferLevel::PRIMARY)
                        .command_buffer_count(e.options.slots as u32),
                )
                .map_err(vkerr("vkAllocateCommandBuffers"))?;
            for cmd in cmds {
                let fence = d
                    .create_fence(&vk::FenceCreateInfo::default(), None)
                    .map_err(vkerr("vkCreateFence"))?;
                e.slots.push(Slot {
                    cmd,
                    fence,
                    serial: None,
                    spans: Vec::new(),
                    injected: None,
                });
            }
            if gpu.info.timestamp_period_ns.is_some() {
                e.queries = d
                    .create_query_pool(
                        &vk::QueryPoolCreateInfo::default()
                            .query_type(vk::QueryType::TIMESTAMP)
                            .query_count(stamps * e.slots.len() as u32),
                        None,
                    )
                    .ok();
            }
            Ok(e)
        }
    }

    pub fn gpu(&self) -> &'static Gpu {
        self.gpu
    }

    /// Starts recording into a free command buffer (waiting for the oldest submission where
    /// all are in flight), after a barrier on everything submitted before it: the references'
    /// work, another thread's writes in place.
    pub fn record(&mut self) -> GpuResult<Recording<'_>> {
        if self.hung {
            return Err("an earlier submission did not finish".into());
        }
        let slot = match self.slots.iter().position(|s| s.serial.is_none()) {
            Some(i) => i,
            None => {
                // All in flight: the oldest (lowest serial) finishes first.
                let oldest = (0..self.slots.len())
                    .min_by_key(|&i| self.slots[i].serial.unwrap_or(u64::MAX))
                    .expect("slots");
                self.wait(oldest)?;
                oldest
            }
        };
        let (d, cmd) = (&self.gpu.device, self.slots[slot].cmd);
        // SAFETY: the slot's command buffer is not in flight.
        unsafe {
            d.reset_command_buffer(cmd, vk::CommandBufferResetFlags::empty())
                .map_err(vkerr("vkResetCommandBuffer"))?;
            d.begin_command_buffer(
                cmd,
                &vk::CommandBufferBeginInfo::default()
                    .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT),
            )
            .map_err(vkerr("vkBeginCommandBuffer"))?;
            full_barrier(d, cmd);
        }
        Ok(Recording {
            engine: self,
            slot,
            cmd,
            spans: Vec::new(),
            timing: false,
            stage: None,
            levels: 0,
            kernel: None,
            set: vk::DescriptorSet::null(),
            dispatches: 0,
        })
    }

    /// Waits for slot `i`'s submission, retires it where the engine does, and adds its GPU
    /// time to the counters.
    fn wait(&mut self, i: usize) -> GpuResult<()> {
        self.wait_within(i, self.options.hang)
    }

    /// [`Engine::wait`], where the submission counts as hung after `hang`.
    fn wait_within(&mut self, i: usize, hang: Duration) -> GpuResult<()> {
        let Some(serial) = self.slots[i].serial else {
            return Ok(());
        };
        let d = &self.gpu.device;
        // SAFETY: the fence belongs to a submission of this engine.
        let waited =
            unsafe { d.wait_for_fences(&[self.slots[i].fence], true, hang.as_nanos() as u64) };
        // Whatever the wait says, nothing waits for it again.
        self.slots[i].serial = None;
        if self.options.retires {
            self.gpu.retire(serial);
        }
        match waited {
            Ok(()) => {}
            Err(vk::Result::TIMEOUT) => {
                self.hung = true;
                return Err(format!("the GPU did not finish within {hang:?}"));
            }
            Err(e) => {
                self.hung = true;
                return Err(format!("vkWaitForFences: {e}"));
            }
        }
        if self.slots[i].injected == Some(Step::Wait) {
            self.slots[i].injected = None;
            return Err("vkWaitForFences: failure injected by a test (after the GPU ran)".into());
        }
        self.count_gpu_time(i);
        Ok(())
    }

    /// Slot `i`'s timestamps, once it has run: its GPU time, and each stage's.
    fn count_gpu_time(&mut self, i: usize) {
        let (Some(q), Some(period)) = (self.queries, self.gpu.info.timestamp_period_ns) else {
            return;
        };
        let spans = std::mem::take(&mut self.slots[i].spans);
        if spans.is_empty() {
            return;
        }
        let mut ticks = vec![0u64; spans.len() + 1];
        // SAFETY: the slot's queries were written by its submission, which has completed.
        let got = unsafe {
            self.gpu.device.get_query_pool_results(
                q,
                self.stamps * i as u32,
                &mut ticks,
                vk::QueryResultFlags::TYPE_64,
            )
        };
        let ns = |a: u64, b: u64| (b.saturating_sub(a) as f64 * period) as u64;
        if got.is_err() || ticks[spans.len()] < ticks[0] {
            return;
        }
        let at = |tick: u64| (tick as f64 * period) as u64;
        stats::add(
            &COUNTERS.gpu_busy_ns,
            busy_beyond(at(ticks[0]), at(ticks[spans.len()])),
        );
        for (k, stage) in spans.iter().enumerate() {
            if let Some(counter) = stage.and_then(|s| self.options.stage_ns.get(s)) {
                stats::add(counter, ns(ticks[k], ticks[k + 1]));
            }
        }
    }

    /// Waits for every submission in flight, oldest first (all of them, even after an error:
    /// the CPU may write what they write only once the GPU no longer does); the first error.
    pub fn wait_all(&mut self) -> GpuResult<()> {
        let mut order: Vec<usize> = (0..self.slots.len())
            .filter(|&i| self.slots[i].serial.is_some())
            .collect();
        order.sort_by_key(|&i| self.slots[i].serial);
        let mut result = Ok(());
        for i in order {
            if let Err(e) = self.wait(i) {
                result = result.and(Err(e));
            }
        }
        result
    }

    /// The oldest submission in flight: its slot, and its fence, which a thread may wait for
    /// without the engine before [`Engine::wait_oldest`].
    fn oldest(&self) -> Option<usize> {
        (0..self.slots.len())
            .filter(|&i| self.slots[i].serial.is_some())
            .min_by_key(|&i| self.slots[i].serial)
    }

    pub fn oldest_fence(&self) -> Option<vk::Fence> {
        self.oldest().map(|i| self.slots[i].fence)
    }

    /// Waits for the oldest submission in flight (none: at once), at most `hang`.
    pub fn wait_oldest(&mut self, hang: Duration) -> GpuResult<()> {
        match self.oldest() {
            Some(i) => self.wait_within(i, hang),
            None => Ok(()),
        }
    }

    /// Whether a submission is in flight.
    pub fn busy(&self) -> bool {
        self.slots.iter().any(|s| s.serial.is_some())
    }

    /// Whether the GPU has finished the last submission (without waiting); a failed query
    /// says yes, so that the wait meets the failure.
    pub fn is_done(&self) -> bool {
        let fence = self.slots[self.last].fence;
        // SAFETY: a fence of this engine.
        unsafe { self.gpu.device.get_fence_status(fence) }.unwrap_or(true)
    }

    /// The step after the wait at which a test made the last submission fail, if any.
    pub fn injected(&self) -> Option<Step> {
        self.slots[self.last].injected
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        // A submission still in flight is waited for (an owner whose wait failed has
        // waited already).
        let _ = self.wait_all();
        if self.hung {
            // The GPU may still use them: leaked rather than destroyed under it.
            return;
        }
        let d = &self.gpu.device;
        // SAFETY: nothing is in flight; null handles are ignored.
        unsafe {
            if let Some(q) = self.queries {
                d.destroy_query_pool(q, None);
            }
            for s in &self.slots {
                d.destroy_fence(s.fence, None);
            }
            d.destroy_command_pool(self.pool, None);
        }
    }
}

/// A command buffer being recorded; [`Recording::submit`] ends and submits it.
pub struct Recording<'e> {
    engine: &'e mut Engine,
    slot: usize,
    cmd: vk::CommandBuffer,
    spans: Vec<Option<usize>>,
    timing: bool,
    /// The stage of the level being recorded.
    stage: Option<usize>,
    /// Levels begun so far.
    pub levels: u32,
    kernel: Option<Kernel>,
    set: vk::DescriptorSet,
    /// vkCmdDispatch calls so far.
    pub dispatches: u64,
}

impl Recording<'_> {
    fn device(&self) -> &'static ash::Device {
        &self.engine.gpu.device
    }

    /// What comes after waits for everything before: compute work and copies.
    pub fn barrier(&mut self) {
        // SAFETY: the command buffer is being recorded.
        unsafe { full_barrier(self.device(), self.cmd) };
    }

    /// Records `copies`; returns the bytes they copy.
    pub fn copy(&mut self, copies: &[Copy]) -> u64 {
        let mut bytes = 0;
        for c in copies.iter().filter(|c| !c.regions.is_empty()) {
            // SAFETY: the command buffer is being recorded; the owner keeps the buffers.
            unsafe {
                self.device()
                    .cmd_copy_buffer(self.cmd, c.from, c.to, &c.regions)
            };
            bytes += c.regions.iter().map(|r| r.size).sum::<u64>();
        }
        bytes
    }

    /// The submission's GPU time counts from here, where the queue has timestamps (once the
    /// compute work before it has completed).
    pub fn start_timing(&mut self) {
        let Some(q) = self.engine.queries else {
            return;
        };
        let first = self.engine.stamps * self.slot as u32;
        // SAFETY: the command buffer is being recorded; the queries are this slot's.
        unsafe {
            let d = self.device();
            d.cmd_reset_query_pool(self.cmd, q, first, self.engine.stamps);
            d.cmd_write_timestamp(self.cmd, vk::PipelineStageFlags::COMPUTE_SHADER, q, first);
        }
        self.timing = true;
    }

    /// Writes the next timestamp, ending a span of `stage`.
    fn stamp(&mut self, stage: Option<usize>, at: vk::PipelineStageFlags) {
        let Some(q) = self.engine.queries.filter(|_| self.timing) else {
            return;
        };
        self.spans.push(stage);
        let index = self.engine.stamps * self.slot as u32 + self.spans.len() as u32;
        // SAFETY: the command buffer is being recorded; the query is this slot's.
        unsafe { self.device().cmd_write_timestamp(self.cmd, at, q, index) };
    }

    /// What is recorded from here is `stage`'s work: a timestamp ends the span of the stage
    /// before, where there was one and it differs.
    pub fn begin_stage(&mut self, stage: Option<usize>) {
        // (A stage that came back would have no timestamp left: its time goes to the one
        // before.)
        let room = self.spans.len() + 2 < self.engine.stamps as usize;
        if stage.is_some() && self.stage.is_some() && stage != self.stage && room {
            self.stamp(self.stage, vk::PipelineStageFlags::ALL_COMMANDS);
        }
        self.stage = stage.or(self.stage);
    }

    /// Begins a level of `stage`: after a barrier on the level before (none before the
    /// first). Levels follow the copies before them ([`Recording::barrier`]), so the barrier
    /// between two levels is on compute work alone.
    pub fn level(&mut self, stage: Option<usize>) {
        self.begin_stage(stage);
        if self.levels > 0 {
            let shaders = (
                vk::PipelineStageFlags::COMPUTE_SHADER,
                vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE,
            );
            // SAFETY: the command buffer is being recorded.
            unsafe { memory_barrier(self.device(), self.cmd, shaders, shaders) };
        }
        self.levels += 1;
    }

    /// Binds `set` for the dispatches after it.
    pub fn bind(&mut self, set: vk::DescriptorSet) {
        if set == self.set {
            return;
        }
        let layout = self.engine.gpu.pipelines.layout;
        // SAFETY: the command buffer is being recorded; the owner keeps the set's buffers.
        unsafe {
            self.device().cmd_bind_descriptor_sets(
                self.cmd,
                vk::PipelineBindPoint::COMPUTE,
                layout,
                0,
                &[set],
                &[],
            )
        };
        self.set = set;
    }

    /// Dispatches `count` jobs of `kernel` from job `first`, split so that no dispatch
    /// exceeds maxComputeWorkGroupCount[0]; the shaders read the first job and the count
    /// from their push constants. The kernel's pipeline was built
    /// ([`super::pipeline::Pipelines::ensure`]).
    pub fn dispatch(&mut self, kernel: Kernel, first: u32, count: u32) -> GpuResult<()> {
        let gpu = self.engine.gpu;
        let built = gpu.pipelines.get(kernel)?;
        let d = self.device();
        if self.kernel != Some(kernel) {
            // SAFETY: the command buffer is being recorded.
            unsafe {
                d.cmd_bind_pipeline(self.cmd, vk::PipelineBindPoint::COMPUTE, built.pipeline)
            };
            self.kernel = Some(kernel);
        }
        let groups = crate::config::get().testing.groups_per_dispatch;
        let groups = gpu.info.max_group_count_x.min(groups.unwrap_or(u32::MAX));
        let per_dispatch = groups as u64 * built.jobs_per_group as u64;
        let mut done = 0u64;
        while done < count as u64 {
            let n = (count as u64 - done).min(per_dispatch) as u32;
            let mut push = [0u8; 8];
            push[..4].copy_from_slice(&(first + done as u32).to_ne_bytes());
            push[4..].copy_from_slice(&n.to_ne_bytes());
            // SAFETY: the command buffer is being recorded; the push constants' range is
            // the layout's.
            unsafe {
                d.cmd_push_constants(
                    self.cmd,
                    gpu.pipelines.layout,
                    vk::ShaderStageFlags::COMPUTE,
                    0,
                    &push,
                );
                d.cmd_dispatch(self.cmd, n.div_ceil(built.jobs_per_group), 1, 1);
            }
            self.dispatches += 1;
            done += n as u64;
        }
        Ok(())
    }

    /// The submission's GPU time ends here (work after it is not counted).
    pub fn end_timing(&mut self) {
        if self.timing {
            self.stamp(self.stage, vk::PipelineStageFlags::BOTTOM_OF_PIPE);
            self.timing = false;
        }
    }

    /// Ends the command buffer (what it wrote visible to the host once its fence signals)
    /// and submits it without waiting; returns its serial. `meets`: the later steps at which
    /// a test may make it fail ([`Step`]): the wait fails there, the others the owner meets
    /// through [`Engine::injected`].
    pub fn submit(self, meets: &[Step]) -> GpuResult<u64> {
        self.submit_as(meets, 1)
    }

    /// [`Recording::submit`] for a submission that carries the work of `units` submissions
    /// (frames), which count as many towards a test's failing one.
    pub fn submit_as(mut self, meets: &[Step], units: u64) -> GpuResult<u64> {
        self.end_timing();
        let d = self.device();
        let slot = self.slot;
        let engine = self.engine;
        // SAFETY: the command buffer is being recorded, its fence not in use.
        unsafe {
            memory_barrier(
                d,
                self.cmd,
                (
                    vk::PipelineStageFlags::COMPUTE_SHADER | vk::PipelineStageFlags::TRANSFER,
                    vk::AccessFlags::SHADER_WRITE | vk::AccessFlags::TRANSFER_WRITE,
                ),
                (vk::PipelineStageFlags::HOST, vk::AccessFlags::HOST_READ),
            );
            d.end_command_buffer(self.cmd)
                .map_err(vkerr("vkEndCommandBuffer"))?;
            // Reset before submitting: if that fails, nothing has run and the owner may redo
            // the work on the CPU exactly.
            d.reset_fences(&[engine.slots[slot].fence])
                .map_err(vkerr("vkResetFences"))?;
        }
        let fence = engine.slots[slot].fence;
        let (serial, injected) = engine
            .gpu
            .submit_with_injection(self.cmd, fence, meets, units)?;
        let s = &mut engine.slots[slot];
        s.serial = Some(serial);
        s.injected = injected;
        s.spans = self.spans;
        engine.last = slot;
        stats::add(&COUNTERS.submissions, 1);
        stats::add(&COUNTERS.dispatches, self.dispatches);
        Ok(serial)
    }
}

/// Descriptor sets of the five bindings, each pointed at buffers and kept pointed there for
/// the next submission that binds the same.
pub struct Sets {
    gpu: &'static Gpu,
    pool: vk::DescriptorPool,
    sets: Vec<vk::DescriptorSet>,
    /// The buffer ids each set points at.
    targets: Vec<[u64; BINDINGS as usize]>,
}

// The handles are plain values; sets are used by one thread at a time.
unsafe impl Send for Sets {}

impl Sets {
    pub fn new(gpu: &'static Gpu, count: usize) -> GpuResult<Sets> {
        let d = &gpu.device;
        let sizes = [vk::DescriptorPoolSize::default()
            .ty(vk::DescriptorType::STORAGE_BUFFER)
            .descriptor_count(BINDINGS * count as u32)];
        // SAFETY: objects of a live device; `s` destroys the pool if a later step fails.
        unsafe {
            let mut s = Sets {
                gpu,
                pool: vk::DescriptorPool::null(),
                sets: Vec::new(),
                targets: vec![[0; BINDINGS as usize]; count],
            };
            s.pool = d
                .create_descriptor_pool(
                    &vk::DescriptorPoolCreateInfo::default()
                        .max_sets(count as u32)
                        .pool_sizes(&sizes),
                    None,
                )
                .map_err(vkerr("vkCreateDescriptorPool"))?;
            let layouts = vec![gpu.pipelines.set_layout; count];
            s.sets = d
                .allocate_descriptor_sets(
                    &vk::DescriptorSetAllocateInfo::default()
                        .descriptor_pool(s.pool)
                        .set_layouts(&layouts),
                )
                .map_err(vkerr("vkAllocateDescriptorSets"))?;
            Ok(s)
        }
    }

    /// A set that points at `buffers`: one that does already, else one not in `taken` (the
    /// sets the submission being recorded binds already), pointed there. It joins `taken`.
    /// The owner's engine is idle: no submission in flight binds any of the sets.
    pub fn pointing_at(
        &mut self,
        buffers: [BufferRef; BINDINGS as usize],
        taken: &mut Vec<usize>,
    ) -> GpuResult<vk::DescriptorSet> {
        let ids = buffers.map(|b| b.id);
        let i = match self.targets.iter().position(|t| *t == ids) {
            Some(i) => i,
            None => {
                let i = (0..self.sets.len())
                    .find(|i| !taken.contains(i))
                    .ok_or("more sets of buffers than descriptor sets")?;
                // SAFETY: no submission in flight binds a set (the owner's engine is idle), and
                // the one being recorded does not bind set `i` (not in `taken`).
                unsafe { point_set_at(&self.gpu.device, self.sets[i], &buffers) };
                self.targets[i] = ids;
                i
            }
        };
        taken.push(i);
        Ok(self.sets[i])
    }
}

impl Drop for Sets {
    fn drop(&mut self) {
        // SAFETY: the owner's engine, dropped first or idle, binds none of them any more.
        unsafe { self.gpu.device.destroy_descriptor_pool(self.pool, None) };
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

/// A global memory barrier: what `after` does (stage, accesses) waits for what `before` did.
unsafe fn memory_barrier(
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

#[cfg(test)]
mod tests {
    /// Spans that overlap count once; gaps between them do not count.
    #[test]
    fn busy_time_is_the_union_of_the_spans() {
        let mut until = 0;
        let spans = [(10, 20), (15, 30), (12, 18), (40, 45), (44, 50)];
        let busy: u64 = spans
            .iter()
            .map(|&(s, e)| super::beyond(&mut until, s, e))
            .sum();
        assert_eq!(busy, 20 + 10);
        assert_eq!(until, 50);
        // a clock that starts again counts again
        let minute = 60_000_000_000;
        until = 2 * minute;
        assert_eq!(super::beyond(&mut until, 5, 9), 4);
    }
}
