//! Levels of dispatches run in one submission that the caller waits for: the tests of the
//! kernels' arithmetic against the CPU references (`tests/frame_ipred.rs`,
//! `tests/cdef_row_gpu.rs`), and AV1's CDEF rows, which dav1d needs filtered before it goes
//! on (`crate::av1::cdef_apply`).

use super::memory::BufferRef;
use super::stream::memory_barrier;
use super::{vkerr, Gpu, GpuResult};
use crate::kernels::Kernel;
use ash::vk;

/// What a level's shaders wrote, for the barriers after it.
const WRITTEN: (vk::PipelineStageFlags, vk::AccessFlags) = (
    vk::PipelineStageFlags::COMPUTE_SHADER,
    vk::AccessFlags::SHADER_WRITE,
);

/// A command buffer, its fence and a descriptor set of the five bindings, kept for the
/// next run.
pub struct Runner {
    gpu: &'static Gpu,
    pool: vk::CommandPool,
    descriptors: vk::DescriptorPool,
    set: vk::DescriptorSet,
    cmd: vk::CommandBuffer,
    fence: vk::Fence,
    /// The buffer ids the set points at.
    bound: [u64; 5],
    /// The serial of the run started and not yet waited for.
    in_flight: Option<u64>,
}

// The handles are plain values; a runner is used by one thread at a time.
unsafe impl Send for Runner {}

impl Runner {
    pub fn new(gpu: &'static Gpu) -> GpuResult<Runner> {
        let d = &gpu.device;
        // SAFETY: objects of a live device; `r` destroys what was made if a step fails.
        unsafe {
            let mut r = Runner {
                gpu,
                pool: vk::CommandPool::null(),
                descriptors: vk::DescriptorPool::null(),
                set: vk::DescriptorSet::null(),
                cmd: vk::CommandBuffer::null(),
                fence: vk::Fence::null(),
                bound: [0; 5],
                in_flight: None,
            };
            r.pool = d
                .create_command_pool(
                    &vk::CommandPoolCreateInfo::default()
                        .queue_family_index(gpu.queue_family)
                        .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER),
                    None,
                )
                .map_err(vkerr("vkCreateCommandPool"))?;
            let sizes = [vk::DescriptorPoolSize::default()
                .ty(vk::DescriptorType::STORAGE_BUFFER)
                .descriptor_count(5)];
            r.descriptors = d
                .create_descriptor_pool(
                    &vk::DescriptorPoolCreateInfo::default()
                        .max_sets(1)
                        .pool_sizes(&sizes),
                    None,
                )
                .map_err(vkerr("vkCreateDescriptorPool"))?;
            r.fence = d
                .create_fence(&vk::FenceCreateInfo::default(), None)
                .map_err(vkerr("vkCreateFence"))?;
            r.set = d
                .allocate_descriptor_sets(
                    &vk::DescriptorSetAllocateInfo::default()
                        .descriptor_pool(r.descriptors)
                        .set_layouts(&[gpu.pipelines.set_layout]),
                )
                .map_err(vkerr("vkAllocateDescriptorSets"))?[0];
            r.cmd = d
                .allocate_command_buffers(
                    &vk::CommandBufferAllocateInfo::default()
                        .command_pool(r.pool)
                        .level(vk::CommandBufferLevel::PRIMARY)
                        .command_buffer_count(1),
                )
                .map_err(vkerr("vkAllocateCommandBuffers"))?[0];
            Ok(r)
        }
    }

    fn bind(&mut self, buffers: [BufferRef; 5]) {
        let ids = buffers.map(|b| b.id);
        if ids == self.bound {
            return;
        }
        // SAFETY: the set is not in use: the last run was waited for (`start` waits first).
        unsafe { super::memory::point_set_at(&self.gpu.device, self.set, &buffers) };
        self.bound = ids;
    }

    /// Runs each `(kernel, workgroups)` of `levels` over `buffers` (the five bindings), one
    /// after the other, and waits; the host may then read what they wrote.
    pub fn run(&mut self, levels: &[(Kernel, u32)], buffers: [BufferRef; 5]) -> GpuResult<()> {
        self.start(levels, buffers)?;
        self.wait()
    }

    /// Submits `levels` over `buffers` as [`Runner::run`] does, and returns at once: the
    /// caller keeps the buffers alive and calls [`Runner::wait`] before it reads what the
    /// levels write or starts another run.
    pub fn start(&mut self, levels: &[(Kernel, u32)], buffers: [BufferRef; 5]) -> GpuResult<()> {
        self.wait()?;
        let gpu = self.gpu;
        gpu.pipelines.ensure(levels.iter().map(|&(k, _)| k))?;
        self.bind(buffers);
        let (d, cmd) = (&gpu.device, self.cmd);
        // SAFETY: the command buffer and fence are free (the last run was waited for), and
        // the caller keeps the bound buffers alive until the wait.
        unsafe {
            d.reset_command_buffer(cmd, vk::CommandBufferResetFlags::empty())
                .map_err(vkerr("vkResetCommandBuffer"))?;
            d.reset_fences(&[self.fence])
                .map_err(vkerr("vkResetFences"))?;
            d.begin_command_buffer(cmd, &vk::CommandBufferBeginInfo::default())
                .map_err(vkerr("vkBeginCommandBuffer"))?;
            d.cmd_bind_descriptor_sets(
                cmd,
                vk::PipelineBindPoint::COMPUTE,
                gpu.pipelines.layout,
                0,
                &[self.set],
                &[],
            );
            for (i, &(kernel, count)) in levels.iter().enumerate() {
                if i > 0 {
                    memory_barrier(
                        d,
                        cmd,
                        WRITTEN,
                        (
                            vk::PipelineStageFlags::COMPUTE_SHADER,
                            vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE,
                        ),
                    );
                }
                let pipeline = gpu.pipelines.get(kernel)?.pipeline;
                d.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::COMPUTE, pipeline);
                let mut push = [0u8; 8];
                push[4..].copy_from_slice(&count.to_ne_bytes());
                d.cmd_push_constants(
                    cmd,
                    gpu.pipelines.layout,
                    vk::ShaderStageFlags::COMPUTE,
                    0,
                    &push,
                );
                d.cmd_dispatch(cmd, count, 1, 1);
            }
            memory_barrier(
                d,
                cmd,
                WRITTEN,
                (vk::PipelineStageFlags::HOST, vk::AccessFlags::HOST_READ),
            );
            d.end_command_buffer(cmd)
                .map_err(vkerr("vkEndCommandBuffer"))?;
            self.in_flight = Some(gpu.submit(cmd, self.fence)?);
        }
        Ok(())
    }

    /// Waits for the run started last, if any is in flight.
    pub fn wait(&mut self) -> GpuResult<()> {
        let Some(serial) = self.in_flight.take() else {
            return Ok(());
        };
        // SAFETY: the fence belongs to a submission of this runner.
        let waited = unsafe {
            self.gpu
                .device
                .wait_for_fences(&[self.fence], true, 20_000_000_000)
        };
        self.gpu.retire(serial);
        waited.map_err(vkerr("vkWaitForFences"))
    }
}

impl Drop for Runner {
    fn drop(&mut self) {
        // A run still in flight is waited for (an owner whose wait failed forgets its runner).
        let _ = self.wait();
        let d = &self.gpu.device;
        // SAFETY: no run is in flight; null handles are ignored.
        unsafe {
            d.destroy_fence(self.fence, None);
            d.destroy_descriptor_pool(self.descriptors, None);
            d.destroy_command_pool(self.pool, None);
        }
    }
}

/// Runs `levels` over `buffers` once, with a runner of its own.
pub fn run_once(levels: &[(Kernel, u32)], buffers: [BufferRef; 5]) -> GpuResult<()> {
    let gpu = crate::gpu::get().ok_or("no usable Vulkan device")?;
    Runner::new(gpu)?.run(levels, buffers)
}
