//! Kernels run once, alone, for the tests of their arithmetic against the CPU references
//! (`tests/frame_ipred.rs`, `tests/cdef_row_gpu.rs`). Not part of a decoder's path.

use super::memory::HostBuffer;
use super::{vkerr, GpuResult};
use ash::vk;

/// Runs each `(kernel, workgroups)` of `levels` over `buffers` (the five bindings), one after
/// the other, and waits.
pub fn run_once(levels: &[(usize, u32)], buffers: [&HostBuffer; 5]) -> GpuResult<()> {
    let gpu = crate::gpu::get().ok_or("no usable Vulkan device")?;
    gpu.pipelines.ensure(levels.iter().map(|&(k, _)| k))?;
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
            d.cmd_bind_descriptor_sets(
                cmd,
                vk::PipelineBindPoint::COMPUTE,
                gpu.pipelines.layout,
                0,
                &[set],
                &[],
            );
            for (i, &(kernel, count)) in levels.iter().enumerate() {
                if i > 0 {
                    let barrier = [vk::MemoryBarrier::default()
                        .src_access_mask(vk::AccessFlags::SHADER_WRITE)
                        .dst_access_mask(
                            vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE,
                        )];
                    d.cmd_pipeline_barrier(
                        cmd,
                        vk::PipelineStageFlags::COMPUTE_SHADER,
                        vk::PipelineStageFlags::COMPUTE_SHADER,
                        vk::DependencyFlags::empty(),
                        &barrier,
                        &[],
                        &[],
                    );
                }
                d.cmd_bind_pipeline(
                    cmd,
                    vk::PipelineBindPoint::COMPUTE,
                    gpu.pipelines.get(kernel)?.pipeline,
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
            }
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
