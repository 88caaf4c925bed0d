//! Compute pipelines, built once per device. Before a shader is used its declared needs
//! (reflected from SPIR-V) are checked against the device's limits, so a shader that cannot
//! run there is a clear error rather than a driver failure.

use super::{shaders, spirv, vkerr, DeviceInfo, GpuResult};
use crate::kernels::itx::ItxKernel;
use crate::kernels::MC_LF_JOBS_PER_GROUP;
use ash::vk;

/// Bindings shared by all kernels: jobs, coefficients (the upload arena), pixels, overflow
/// list, and the pixels motion compensation reads (the arena or an imported frame).
pub const BINDINGS: u32 = 5;
/// Push constants: first job, job count.
pub const PUSH_BYTES: u32 = 8;

pub struct Kernel {
    pub pipeline: vk::Pipeline,
    /// Jobs (blocks) one workgroup handles.
    pub jobs_per_group: u32,
}

pub struct Pipelines {
    pub set_layout: vk::DescriptorSetLayout,
    pub layout: vk::PipelineLayout,
    /// Indexed by kernel number (see `kernels`): the transforms, MC, the loop filter, then the
    /// kernels one decoder alone uses (CDEF, the superblock loop filter), which are `None`
    /// where the device could not build them: those calls stay on the CPU.
    pub kernels: Vec<Option<Kernel>>,
}

impl Pipelines {
    /// Whether kernel `k` was built.
    pub fn has(&self, k: usize) -> bool {
        self.kernels.get(k).is_some_and(|k| k.is_some())
    }
}

/// Checks a shader's declared needs against the device.
pub fn check_needs(stem: &str, needs: &spirv::Needs, info: &DeviceInfo) -> GpuResult<()> {
    let fail = |what: &str, need: u64, have: u64| {
        Err(format!(
            "shader {stem} needs {need} {what}, the device allows {have}"
        ))
    };
    if needs.shared_bytes > info.max_shared_bytes {
        return fail(
            "bytes of shared memory",
            needs.shared_bytes as u64,
            info.max_shared_bytes as u64,
        );
    }
    if needs.invocations() > info.max_invocations {
        return fail(
            "invocations per workgroup",
            needs.invocations() as u64,
            info.max_invocations as u64,
        );
    }
    if needs.storage_buffers > info.max_storage_buffers {
        return fail(
            "storage buffers",
            needs.storage_buffers as u64,
            info.max_storage_buffers as u64,
        );
    }
    if needs.push_constant_bytes > info.max_push_constant_bytes {
        return fail(
            "push-constant bytes",
            needs.push_constant_bytes as u64,
            info.max_push_constant_bytes as u64,
        );
    }
    Ok(())
}

unsafe fn module(
    device: &ash::Device,
    stem: &str,
    info: &DeviceInfo,
) -> GpuResult<(vk::ShaderModule, spirv::Needs)> {
    let bytes = shaders::spirv(stem).ok_or_else(|| format!("shader {stem} is not embedded"))?;
    let words = spirv::words(bytes).map_err(|e| format!("shader {stem}: {e}"))?;
    let needs = spirv::reflect(&words).map_err(|e| format!("shader {stem}: {e}"))?;
    check_needs(stem, &needs, info)?;
    let m = device
        .create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&words), None)
        .map_err(vkerr("vkCreateShaderModule"))?;
    Ok((m, needs))
}

unsafe fn compute_pipeline(
    device: &ash::Device,
    module: vk::ShaderModule,
    layout: vk::PipelineLayout,
    spec: &[u32],
    cache: vk::PipelineCache,
) -> GpuResult<vk::Pipeline> {
    let entries: Vec<vk::SpecializationMapEntry> = (0..spec.len() as u32)
        .map(|i| {
            vk::SpecializationMapEntry::default()
                .constant_id(i)
                .offset(i * 4)
                .size(4)
        })
        .collect();
    let data: Vec<u8> = spec.iter().flat_map(|v| v.to_ne_bytes()).collect();
    let spec_info = vk::SpecializationInfo::default()
        .map_entries(&entries)
        .data(&data);
    let stage = vk::PipelineShaderStageCreateInfo::default()
        .stage(vk::ShaderStageFlags::COMPUTE)
        .module(module)
        .name(c"main")
        .specialization_info(&spec_info);
    let info = [vk::ComputePipelineCreateInfo::default()
        .stage(stage)
        .layout(layout)];
    device
        .create_compute_pipelines(cache, &info, None)
        .map(|p| p[0])
        .map_err(|(_, e)| format!("vkCreateComputePipelines: {e}"))
}

impl Pipelines {
    /// # Safety
    /// `device` is a live device whose limits `info` describes; `cache` (may be null) is one
    /// of its pipeline caches.
    pub unsafe fn new(
        device: &ash::Device,
        info: &DeviceInfo,
        cache: vk::PipelineCache,
    ) -> GpuResult<Pipelines> {
        let bindings: Vec<vk::DescriptorSetLayoutBinding> = (0..BINDINGS)
            .map(|b| {
                vk::DescriptorSetLayoutBinding::default()
                    .binding(b)
                    .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                    .descriptor_count(1)
                    .stage_flags(vk::ShaderStageFlags::COMPUTE)
            })
            .collect();
        let set_layout = device
            .create_descriptor_set_layout(
                &vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings),
                None,
            )
            .map_err(vkerr("vkCreateDescriptorSetLayout"))?;
        let push = [vk::PushConstantRange::default()
            .stage_flags(vk::ShaderStageFlags::COMPUTE)
            .offset(0)
            .size(PUSH_BYTES)];
        let set_layouts = [set_layout];
        let layout = device
            .create_pipeline_layout(
                &vk::PipelineLayoutCreateInfo::default()
                    .set_layouts(&set_layouts)
                    .push_constant_ranges(&push),
                None,
            )
            .map_err(vkerr("vkCreatePipelineLayout"))?;

        let mut modules: Vec<(&str, vk::ShaderModule, spirv::Needs)> = Vec::new();
        let mut kernels = Vec::new();
        for kernel in ItxKernel::all() {
            let stem = kernel.shader();
            if !modules.iter().any(|(s, _, _)| *s == stem) {
                let (m, needs) = module(device, stem, info)?;
                modules.push((stem, m, needs));
            }
            let (_, m, needs) = modules.iter().find(|(s, _, _)| *s == stem).unwrap();
            let needs = needs.clone();
            let pipeline = compute_pipeline(device, *m, layout, &kernel.spec_constants(), cache)?;
            kernels.push(Some(Kernel {
                pipeline,
                jobs_per_group: needs.invocations() / kernel.size().n() as u32,
            }));
        }
        for stem in ["mc", "lf"] {
            let (m, needs) = module(device, stem, info)?;
            modules.push((stem, m, needs.clone()));
            let pipeline = compute_pipeline(device, m, layout, &[], cache)?;
            if needs.invocations() != 8 * MC_LF_JOBS_PER_GROUP {
                return Err(format!("shader {stem}: 8 invocations per job expected"));
            }
            kernels.push(Some(Kernel {
                pipeline,
                jobs_per_group: MC_LF_JOBS_PER_GROUP,
            }));
        }
        // Workgroups of 64 invocations, in kernel order (CDEF, LF_SB_KERNEL, LF_ROW_KERNEL):
        // one job per workgroup, except lf_row, whose one workgroup runs all the jobs of its
        // dispatch in turn. Each serves one decoder only: a device that cannot build one keeps
        // the others. (Any error counts, even a lost device's: the next submission then meets
        // it and falls back as any lost device does.)
        for stem in ["cdef", "lf_sb", "lf_row"] {
            // lf_row serves `DAEDALUS_LF_ORDER=rows` alone.
            if stem == "lf_row" && crate::config::get().lf_order != crate::config::LfOrder::Rows {
                kernels.push(None);
                continue;
            }
            let built = if super::testing::optional_kernels_fail() {
                Err(format!("shader {stem}: failure injected by a test"))
            } else {
                module(device, stem, info)
            };
            let built = built.and_then(|(m, needs)| {
                modules.push((stem, m, needs.clone()));
                if needs.invocations() != 64 {
                    return Err(format!("shader {stem}: 64 invocations per job expected"));
                }
                Ok(Kernel {
                    pipeline: compute_pipeline(device, m, layout, &[], cache)?,
                    jobs_per_group: if stem == "lf_row" { u32::MAX } else { 1 },
                })
            });
            kernels.push(match built {
                Ok(kernel) => Some(kernel),
                Err(e) => {
                    let instead = if stem == "lf_row" {
                        "the loop filter's superblock passes go out as a wavefront"
                    } else {
                        "these calls stay on the CPU"
                    };
                    crate::log::once(
                        crate::log::Level::Warn,
                        stem,
                        format_args!("{e}: {instead}"),
                    );
                    None
                }
            });
        }
        for (_, m, _) in modules {
            device.destroy_shader_module(m, None);
        }
        Ok(Pipelines {
            set_layout,
            layout,
            kernels,
        })
    }
}
