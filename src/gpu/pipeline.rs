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

        // Every kernel's module and specialization first (quick), in kernel order; then the
        // pipelines, which take milliseconds each even from the cache, on a few threads.
        let mut modules: Vec<(&str, vk::ShaderModule, spirv::Needs)> = Vec::new();
        let mut plans: Vec<Plan> = Vec::new();
        let pipelines = prepare(device, info, &mut modules, &mut plans)
            .map(|()| build_all(device, layout, cache, &plans));
        for (_, m, _) in &modules {
            device.destroy_shader_module(*m, None);
        }
        let release = || {
            device.destroy_pipeline_layout(layout, None);
            device.destroy_descriptor_set_layout(set_layout, None);
        };
        let pipelines = match pipelines {
            Ok(p) => p,
            Err(e) => {
                release();
                return Err(e);
            }
        };
        // The first required kernel that failed, in kernel order, loses the device: nothing
        // else is logged, and what was built is destroyed.
        let failed = plans
            .iter()
            .zip(&pipelines)
            .find_map(|(plan, built)| match (plan, built) {
                (Plan::Build { optional: None, .. }, Err(e)) => Some(e.clone()),
                _ => None,
            });
        if let Some(e) = failed {
            for pipeline in pipelines.into_iter().flatten() {
                device.destroy_pipeline(pipeline, None);
            }
            release();
            return Err(e);
        }
        let kernels = plans
            .iter()
            .zip(pipelines)
            .map(|(plan, built)| match (plan, built.as_ref()) {
                (Plan::Build { jobs_per_group, .. }, Ok(pipeline)) => Some(Kernel {
                    pipeline: *pipeline,
                    jobs_per_group: *jobs_per_group,
                }),
                (Plan::Unbuilt { stem, why }, _)
                | (
                    Plan::Build {
                        optional: Some(stem),
                        ..
                    },
                    Err(why),
                ) => {
                    optional_kernel_missing(stem, why);
                    None
                }
                (Plan::Off, _) | (Plan::Build { optional: None, .. }, Err(_)) => None,
            })
            .collect();
        Ok(Pipelines {
            set_layout,
            layout,
            kernels,
        })
    }
}

/// The stack of a thread that builds pipelines: the driver compiles shaders on it.
const DRIVER_STACK_BYTES: usize = 8 << 20;

/// A kernel's pipeline to build, in kernel order.
enum Plan {
    /// Its module and specialization; `optional`: the stem of a kernel one decoder alone
    /// uses, whose failure leaves that decoder's calls on the CPU (else the device is
    /// unusable).
    Build {
        module: vk::ShaderModule,
        spec: Vec<u32>,
        jobs_per_group: u32,
        optional: Option<&'static str>,
    },
    /// An optional kernel whose module could not be made.
    Unbuilt { stem: &'static str, why: String },
    /// Not wanted with this configuration.
    Off,
}

/// Makes the modules (into `modules`, shared by the kernels of one shader) and plans every
/// kernel's pipeline; an error is a required kernel's.
unsafe fn prepare(
    device: &ash::Device,
    info: &DeviceInfo,
    modules: &mut Vec<(&'static str, vk::ShaderModule, spirv::Needs)>,
    plans: &mut Vec<Plan>,
) -> GpuResult<()> {
    for kernel in ItxKernel::all() {
        let stem = kernel.shader();
        if !modules.iter().any(|(s, _, _)| *s == stem) {
            let (m, needs) = module(device, stem, info)?;
            modules.push((stem, m, needs));
        }
        let (_, m, needs) = modules.iter().find(|(s, _, _)| *s == stem).unwrap();
        plans.push(Plan::Build {
            module: *m,
            spec: kernel.spec_constants().to_vec(),
            jobs_per_group: needs.invocations() / kernel.size().n() as u32,
            optional: None,
        });
    }
    for stem in ["mc", "lf"] {
        let (m, needs) = module(device, stem, info)?;
        modules.push((stem, m, needs.clone()));
        if needs.invocations() != 8 * MC_LF_JOBS_PER_GROUP {
            return Err(format!("shader {stem}: 8 invocations per job expected"));
        }
        plans.push(Plan::Build {
            module: m,
            spec: Vec::new(),
            jobs_per_group: MC_LF_JOBS_PER_GROUP,
            optional: None,
        });
    }
    // Workgroups of 64 invocations, in kernel order (CDEF, LF_SB_KERNEL, LF_ROW_KERNEL):
    // one job per workgroup, except lf_row, whose one workgroup runs all the jobs of its
    // dispatch in turn. Each serves one decoder only: a device that cannot build one keeps
    // the others. (Any error counts, even a lost device's: the next submission then meets
    // it and falls back as any lost device does.)
    for stem in ["cdef", "lf_sb", "lf_row"] {
        // lf_row serves `DAEDALUS_LF_ORDER=rows` alone.
        if stem == "lf_row" && crate::config::get().lf_order != crate::config::LfOrder::Rows {
            plans.push(Plan::Off);
            continue;
        }
        let made = if super::testing::optional_kernels_fail() {
            Err(format!("shader {stem}: failure injected by a test"))
        } else {
            module(device, stem, info)
        };
        let made = made.and_then(|(m, needs)| {
            modules.push((stem, m, needs.clone()));
            if needs.invocations() != 64 {
                return Err(format!("shader {stem}: 64 invocations per job expected"));
            }
            Ok(m)
        });
        plans.push(match made {
            Ok(module) => Plan::Build {
                module,
                spec: Vec::new(),
                jobs_per_group: if stem == "lf_row" { u32::MAX } else { 1 },
                optional: Some(stem),
            },
            Err(why) => Plan::Unbuilt { stem, why },
        });
    }
    Ok(())
}

/// Builds the planned pipelines, a result per plan (an error for those not to build), on up
/// to four threads: a pipeline cache is safe to share between threads unless created
/// externally synchronized, which daedalus's is not.
unsafe fn build_all(
    device: &ash::Device,
    layout: vk::PipelineLayout,
    cache: vk::PipelineCache,
    plans: &[Plan],
) -> Vec<GpuResult<vk::Pipeline>> {
    let build = |plan: &Plan| match plan {
        Plan::Build { module, spec, .. } => {
            // SAFETY: the module and layout are the device's and live until after the join.
            unsafe { compute_pipeline(device, *module, layout, spec, cache) }
        }
        _ => Err("not built".to_string()),
    };
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 4);
    // Thread `t` of `threads` builds plans t, t + threads, ...
    let share = |t: usize| {
        (t..plans.len())
            .step_by(threads)
            .map(|i| (i, build(&plans[i])))
            .collect::<Vec<_>>()
    };
    let mut results: Vec<Option<GpuResult<vk::Pipeline>>> = plans.iter().map(|_| None).collect();
    std::thread::scope(|scope| {
        let share = &share;
        // The driver's compiler runs on these threads: a main thread's stack, not the 2 MiB
        // Rust gives. A thread the system refuses leaves its share to this one.
        let workers: Vec<_> = (1..threads)
            .map(|t| {
                let worker = std::thread::Builder::new()
                    .stack_size(DRIVER_STACK_BYTES)
                    .spawn_scoped(scope, move || share(t));
                (t, worker.ok())
            })
            .collect();
        let mut built = share(0);
        for (t, worker) in workers {
            match worker {
                // A worker that panicked (the driver's errors are results, so only a failed
                // allocation could) leaves its kernels unbuilt, which fails the set-up as any
                // error does; what it built is not destroyed.
                Some(w) => built.extend(w.join().unwrap_or_default()),
                None => built.extend(share(t)),
            }
        }
        for (i, r) in built {
            results[i] = Some(r);
        }
    });
    results
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err("a pipeline's thread failed".to_string())))
        .collect()
}

fn optional_kernel_missing(stem: &str, why: &str) {
    let instead = if stem == "lf_row" {
        "the loop filter's superblock passes go out as a wavefront"
    } else {
        "these calls stay on the CPU"
    };
    crate::log::once(
        crate::log::Level::Warn,
        stem,
        format_args!("{why}: {instead}"),
    );
}
