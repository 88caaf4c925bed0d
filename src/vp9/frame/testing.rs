//! The frame path's kernels run alone, for the tests of their arithmetic against the CPU
//! references (`tests/frame_ipred.rs`). Not part of the decoder's path.

use crate::gpu::memory::HostBuffer;
use crate::gpu::{vkerr, GpuResult};
use crate::kernels::VP9_IPRED_CHECK_KERNEL;
use ash::vk;

/// One intra prediction for the GPU: the converted mode, the size (4 << size_log2), and the
/// edges as `shaders/vp9_ipred.glsl` keeps them: the top-left, the row above (64), and the
/// column left of the block top to bottom (32).
#[derive(Clone, Debug)]
pub struct IntraCase {
    pub mode: u8,
    pub size_log2: usize,
    pub topleft: u8,
    pub top: [u8; 64],
    pub left: [u8; 32],
}

const CASE_WORDS: usize = 98;
const OUT_BYTES: usize = 1024;

/// Predicts every case on the GPU (`shaders/vp9_ipred_check.comp`); returns each block,
/// row-major.
pub fn predict_intra(cases: &[IntraCase]) -> GpuResult<Vec<Vec<u8>>> {
    let gpu = crate::gpu::get().ok_or("no usable Vulkan device")?;
    if cases.is_empty() {
        return Ok(Vec::new());
    }
    let input = HostBuffer::coherent_zeroed(gpu, (cases.len() * CASE_WORDS * 4) as u64)?;
    let output = HostBuffer::coherent_zeroed(gpu, (cases.len() * OUT_BYTES) as u64)?;
    let mut words = Vec::with_capacity(cases.len() * CASE_WORDS);
    for c in cases {
        words.push(c.mode as u32 | (c.size_log2 as u32) << 8);
        words.push(c.topleft as u32);
        words.extend(c.top.iter().map(|&p| p as u32));
        words.extend(c.left.iter().map(|&p| p as u32));
    }
    // SAFETY: the buffer holds exactly these words.
    unsafe { std::ptr::copy_nonoverlapping(words.as_ptr(), input.ptr as *mut u32, words.len()) };
    run_once(
        VP9_IPRED_CHECK_KERNEL,
        [&input, &output, &output, &output, &output],
        cases.len() as u32,
    )?;
    output.invalidate(0..output.size)?;
    Ok(cases
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let n = 4usize << c.size_log2;
            // SAFETY: inside the buffer, which the GPU no longer writes.
            unsafe { std::slice::from_raw_parts(output.ptr.add(i * OUT_BYTES), n * n).to_vec() }
        })
        .collect())
}

/// Runs `count` workgroups of `kernel` over `buffers` (its five bindings) and waits.
fn run_once(kernel: usize, buffers: [&HostBuffer; 5], count: u32) -> GpuResult<()> {
    let gpu = crate::gpu::get().ok_or("no usable Vulkan device")?;
    let k = gpu.pipelines.get(kernel)?;
    let d = &gpu.device;
    unsafe {
        let pool = d
            .create_command_pool(
                &vk::CommandPoolCreateInfo::default().queue_family_index(gpu.queue_family),
                None,
            )
            .map_err(vkerr("vkCreateCommandPool"))?;
        let sizes = [vk::DescriptorPoolSize::default()
            .ty(vk::DescriptorType::STORAGE_BUFFER)
            .descriptor_count(5)];
        let descriptors = d.create_descriptor_pool(
            &vk::DescriptorPoolCreateInfo::default()
                .max_sets(1)
                .pool_sizes(&sizes),
            None,
        );
        let fence = d.create_fence(&vk::FenceCreateInfo::default(), None);
        let result = (|| -> GpuResult<()> {
            let descriptors = descriptors.map_err(vkerr("vkCreateDescriptorPool"))?;
            let fence = fence.map_err(vkerr("vkCreateFence"))?;
            let set = d
                .allocate_descriptor_sets(
                    &vk::DescriptorSetAllocateInfo::default()
                        .descriptor_pool(descriptors)
                        .set_layouts(&[gpu.pipelines.set_layout]),
                )
                .map_err(vkerr("vkAllocateDescriptorSets"))?[0];
            let infos: Vec<[vk::DescriptorBufferInfo; 1]> = buffers
                .iter()
                .map(|b| {
                    [vk::DescriptorBufferInfo::default()
                        .buffer(b.buffer)
                        .range(vk::WHOLE_SIZE)]
                })
                .collect();
            let writes: Vec<vk::WriteDescriptorSet> = infos
                .iter()
                .enumerate()
                .map(|(i, info)| {
                    vk::WriteDescriptorSet::default()
                        .dst_set(set)
                        .dst_binding(i as u32)
                        .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                        .buffer_info(info)
                })
                .collect();
            d.update_descriptor_sets(&writes, &[]);
            let cmd = d
                .allocate_command_buffers(
                    &vk::CommandBufferAllocateInfo::default()
                        .command_pool(pool)
                        .level(vk::CommandBufferLevel::PRIMARY)
                        .command_buffer_count(1),
                )
                .map_err(vkerr("vkAllocateCommandBuffers"))?[0];
            d.begin_command_buffer(cmd, &vk::CommandBufferBeginInfo::default())
                .map_err(vkerr("vkBeginCommandBuffer"))?;
            d.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::COMPUTE, k.pipeline);
            d.cmd_bind_descriptor_sets(
                cmd,
                vk::PipelineBindPoint::COMPUTE,
                gpu.pipelines.layout,
                0,
                &[set],
                &[],
            );
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
            let barrier = [vk::MemoryBarrier::default()
                .src_access_mask(vk::AccessFlags::SHADER_WRITE)
                .dst_access_mask(vk::AccessFlags::HOST_READ)];
            d.cmd_pipeline_barrier(
                cmd,
                vk::PipelineStageFlags::COMPUTE_SHADER,
                vk::PipelineStageFlags::HOST,
                vk::DependencyFlags::empty(),
                &barrier,
                &[],
                &[],
            );
            d.end_command_buffer(cmd)
                .map_err(vkerr("vkEndCommandBuffer"))?;
            let serial = gpu.submit(cmd, fence)?;
            let waited = d.wait_for_fences(&[fence], true, 20_000_000_000);
            gpu.retire(serial);
            waited.map_err(vkerr("vkWaitForFences"))
        })();
        if let Ok(f) = fence {
            d.destroy_fence(f, None);
        }
        if let Ok(p) = descriptors {
            d.destroy_descriptor_pool(p, None);
        }
        d.destroy_command_pool(pool, None);
        result
    }
}
