//! Compute pipelines, each built the first time a submission (or a question about an
//! optional kernel) needs it, so that a decode builds only the kernels it uses: that spares
//! most of the compiling where a driver keeps no cache (lavapipe) and most of the loading
//! where it does. When the device is set up every shader's declared needs (reflected from
//! SPIR-V) are checked against its limits, so a shader that cannot run there is a clear
//! error at once rather than a driver failure later.

use super::cache::{DiskCache, Outcome};
use super::error::{vkerr, GpuResult};
use super::select::DeviceInfo;
use super::{shaders, spirv};
use crate::kernels::{self, MC_LF_JOBS_PER_GROUP};
use ash::vk;
use once_cell::sync::OnceCell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::RwLock;
use std::time::Instant;

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
    device: ash::Device,
    /// Indexed by kernel number (see `kernels`): the transforms, MC, the loop filter, then the
    /// kernels one decoder alone uses (CDEF, the superblock loop filters).
    plans: Vec<Plan>,
    /// Each kernel's pipeline once it was wanted, or why it could not be built. An optional
    /// kernel that failed leaves its calls on the CPU; a required one loses the device.
    kernels: Vec<OnceCell<Result<Kernel, String>>>,
    cache: DiskCache,
    /// Held (shared) while a pipeline is built, and alone while the cache takes in what
    /// another process wrote ([`Pipelines::take_in_built_apart`]).
    building: RwLock<()>,
    /// A pipeline was built since the cache was last written back.
    unsaved: AtomicBool,
    built: AtomicU64,
    build_micros: AtomicU64,
}

/// How to build a kernel's pipeline.
enum Plan {
    /// Its shader (checked against the device at set-up) and specialization; `optional`: a
    /// kernel one decoder alone uses, whose failure leaves that decoder's calls on the CPU
    /// (a required kernel's failure makes the device unusable).
    Build {
        stem: &'static str,
        spec: Vec<u32>,
        jobs_per_group: u32,
        optional: bool,
    },
    /// An optional kernel whose shader the device cannot run (logged at set-up).
    Unbuilt { why: String },
}

// `Pipelines::ensure` keeps a submission's kernels as bits of one word.
const _: () = assert!(kernels::Kernel::COUNT <= 64);

/// The stack of a thread that builds pipelines or sets the device up: the driver compiles
/// shaders on it (a program's main thread has as much).
pub const DRIVER_STACK_BYTES: usize = 8 << 20;

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

/// Checks a shader against the device; returns its workgroup's invocations.
fn checked_invocations(stem: &str, info: &DeviceInfo) -> GpuResult<u32> {
    let bytes = shaders::spirv(stem).ok_or_else(|| format!("shader {stem} is not embedded"))?;
    let words = spirv::words(bytes).map_err(|e| format!("shader {stem}: {e}"))?;
    let needs = spirv::reflect(&words).map_err(|e| format!("shader {stem}: {e}"))?;
    check_needs(stem, &needs, info)?;
    Ok(needs.invocations())
}

/// The workgroup of a kernel whose jobs are mostly too small for more than one SIMD group of
/// the device (`vp9_inter.comp`): its subgroup size, 8 to 64 invocations.
fn simd_workgroup(info: &DeviceInfo) -> u32 {
    info.subgroup_size.clamp(8, 64).min(info.max_invocations)
}

/// The workgroup of the frame path's intra blocks (`vp9_intra.comp`): 64 invocations, where a
/// level's many small blocks go side by side, but 32 (the least its 32x32 transforms need)
/// on a device whose SIMD groups are narrower than 32, where a level's few blocks would leave
/// most of its groups idle.
fn intra_workgroup(info: &DeviceInfo) -> u32 {
    if info.subgroup_size < 32 {
        32
    } else {
        64
    }
}

/// Plans every kernel, in kernel order, checking its shader against the device; an error
/// is a required kernel's. An optional kernel's shader the device cannot run is logged here.
fn plan_all(info: &DeviceInfo) -> GpuResult<Vec<Plan>> {
    let mut plans = Vec::new();
    // (Plans are indexed by `Kernel::index`, the order of `Kernel::all`.)
    for kernel in kernels::Kernel::all() {
        let stem = kernel.shader();
        plans.push(match kernel {
            kernels::Kernel::Itx(k) => Plan::Build {
                stem,
                spec: k.spec_constants().to_vec(),
                jobs_per_group: checked_invocations(stem, info)? / k.size().n() as u32,
                optional: false,
            },
            kernels::Kernel::Mc | kernels::Kernel::Lf => {
                if checked_invocations(stem, info)? != 8 * MC_LF_JOBS_PER_GROUP {
                    return Err(format!("shader {stem}: 8 invocations per job expected"));
                }
                Plan::Build {
                    stem,
                    spec: Vec::new(),
                    jobs_per_group: MC_LF_JOBS_PER_GROUP,
                    optional: false,
                }
            }
            // Each of the others serves one decoder or path only: a device that cannot run
            // one keeps the others.
            _ => optional_plan(kernel, info),
        });
    }
    Ok(plans)
}

/// An optional kernel's plan: the invocations its shader must declare, its specialization
/// (a workgroup size, a transform size) and the jobs a workgroup takes: 64 and one job, but
/// for the frame path's inter blocks (mostly small) and intra blocks.
fn optional_plan(kernel: kernels::Kernel, info: &DeviceInfo) -> Plan {
    use kernels::Kernel as K;
    let stem = kernel.shader();
    let (expected, spec, jobs_per_group) = match kernel {
        K::Vp9Inter | K::Vp9InterScaled | K::Vp9InterHigh | K::Vp9InterScaledHigh => {
            (32, vec![simd_workgroup(info)], 1)
        }
        // (The residuals' jobs are words, a group of them a workgroup.)
        K::Vp9InterResidual(size_log2) | K::Vp9InterResidualHigh(size_log2) => {
            (32, vec![size_log2 as u32], kernels::RESIDUAL_GROUP as u32)
        }
        K::Vp9Intra | K::Vp9IntraHigh => (64, vec![intra_workgroup(info)], 1),
        K::Vp9ItxHighCheck => (32, Vec::new(), 1),
        _ => (64, Vec::new(), 1),
    };
    let checked = checked_invocations(stem, info).and_then(|n| match n {
        n if n == expected => Ok(()),
        _ => Err(format!(
            "shader {stem}: {expected} invocations per job expected"
        )),
    });
    match checked {
        Ok(()) => Plan::Build {
            stem,
            spec,
            jobs_per_group,
            optional: true,
        },
        Err(why) => {
            optional_kernel_missing(stem, &why);
            Plan::Unbuilt { why }
        }
    }
}

impl Pipelines {
    /// The layouts, and every kernel's plan; no pipeline is built yet.
    ///
    /// # Safety
    /// `device` is a live device whose limits `info` describes; `cache` is one of its
    /// pipeline caches, used by nothing else.
    pub unsafe fn new(
        device: &ash::Device,
        info: &DeviceInfo,
        cache: DiskCache,
    ) -> GpuResult<Pipelines> {
        let plans = match plan_all(info) {
            Ok(p) => p,
            Err(e) => {
                cache.destroy(device);
                return Err(e);
            }
        };
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
            .map_err(vkerr("vkCreateDescriptorSetLayout"));
        let set_layout = match set_layout {
            Ok(l) => l,
            Err(e) => {
                cache.destroy(device);
                return Err(e);
            }
        };
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
            .map_err(vkerr("vkCreatePipelineLayout"));
        let layout = match layout {
            Ok(l) => l,
            Err(e) => {
                device.destroy_descriptor_set_layout(set_layout, None);
                cache.destroy(device);
                return Err(e);
            }
        };
        Ok(Pipelines {
            set_layout,
            layout,
            device: device.clone(),
            kernels: plans.iter().map(|_| OnceCell::new()).collect(),
            plans,
            cache,
            building: RwLock::new(()),
            unsaved: AtomicBool::new(false),
            built: AtomicU64::new(0),
            build_micros: AtomicU64::new(0),
        })
    }

    /// Kernel `k`, built now if it was not yet (by another thread meanwhile, this waits).
    fn get_or_build(&self, k: usize) -> &Result<Kernel, String> {
        self.kernels[k].get_or_init(|| self.build(k))
    }

    /// Kernel `k`'s pipeline, built now if it was not yet; an error is a required kernel's
    /// failure (or an optional kernel asked for where it is missing).
    pub fn get(&self, k: kernels::Kernel) -> GpuResult<&Kernel> {
        let result = self.get_or_build(k.index());
        self.save_if_built();
        result.as_ref().map_err(Clone::clone)
    }

    /// Whether kernel `k` can run, building it on the first question: for the optional
    /// kernels, whose failure is logged once and leaves their calls on the CPU.
    pub fn has(&self, k: kernels::Kernel) -> bool {
        if k.index() >= self.kernels.len() {
            return false;
        }
        let usable = self.get_or_build(k.index()).is_ok();
        self.save_if_built();
        usable
    }

    /// Whether kernel `k` is built (builds nothing).
    pub fn built(&self, k: kernels::Kernel) -> bool {
        self.kernels
            .get(k.index())
            .and_then(|c| c.get())
            .is_some_and(|r| r.is_ok())
    }

    /// Kernel `k` built where it was not yet, as [`Pipelines::has`], but on a thread with a
    /// driver's stack, waited for: for a kernel first needed in the middle of a stream, on a
    /// decoding thread whose stack may be small for the driver's compiler.
    pub fn has_on_driver_stack(&self, k: kernels::Kernel) -> bool {
        if self.built(k) {
            return true;
        }
        std::thread::scope(|scope| {
            std::thread::Builder::new()
                .stack_size(DRIVER_STACK_BYTES)
                .spawn_scoped(scope, || self.has(k))
                .ok()
                .and_then(|thread| thread.join().ok())
                .unwrap_or(false)
        })
    }

    /// Whether building kernel `k` was tried and failed (builds nothing).
    pub fn failed(&self, k: kernels::Kernel) -> bool {
        self.kernels
            .get(k.index())
            .and_then(|c| c.get())
            .is_some_and(|r| r.is_err())
    }

    /// Builds the kernels of `wanted` not built yet, several at once. An error is the first
    /// required kernel's failure, in kernel order. Called for every submission: once its
    /// kernels are built this allocates nothing and starts no thread.
    pub fn ensure(&self, wanted: impl Iterator<Item = kernels::Kernel>) -> GpuResult<()> {
        let wanted = wanted.fold(0u64, |set, k| set | 1 << k.index());
        let listed = || kernels::Kernel::all().filter(move |k| wanted >> k.index() & 1 != 0);
        let missing: Vec<usize> = listed()
            .map(kernels::Kernel::index)
            .filter(|&k| self.kernels[k].get().is_none())
            .collect();
        if !missing.is_empty() {
            self.build_together(&missing);
        }
        // Those another thread tried meanwhile too.
        for k in listed() {
            self.get(k)?;
        }
        Ok(())
    }

    /// Builds `missing` on up to four threads (a pipeline cache is safe to share between
    /// threads unless created externally synchronized, which daedalus's is not).
    fn build_together(&self, missing: &[usize]) {
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .clamp(1, 4)
            .min(missing.len());
        // Thread `t` of `threads` builds kernels t, t + threads, ... of `missing`.
        let share = |t: usize| {
            for &k in missing.iter().skip(t).step_by(threads) {
                self.get_or_build(k);
            }
        };
        std::thread::scope(|scope| {
            let share = &share;
            // The driver's compiler runs on these threads: a main thread's stack, not the
            // 2 MiB Rust gives. A thread the system refuses leaves its share to this one; a
            // worker that panicked leaves its kernels unbuilt, built again by `ensure`.
            let workers: Vec<_> = (1..threads)
                .map(|t| {
                    let worker = std::thread::Builder::new()
                        .stack_size(DRIVER_STACK_BYTES)
                        .spawn_scoped(scope, move || share(t));
                    (t, worker.ok())
                })
                .collect();
            share(0);
            for (t, worker) in workers {
                match worker {
                    Some(w) => {
                        let _ = w.join();
                    }
                    None => share(t),
                }
            }
        });
    }

    /// Builds kernel `k`'s pipeline (its shader module lives only as long as that takes).
    fn build(&self, k: usize) -> Result<Kernel, String> {
        let (stem, spec, jobs_per_group, optional) = match &self.plans[k] {
            Plan::Build {
                stem,
                spec,
                jobs_per_group,
                optional,
            } => (stem, spec, jobs_per_group, optional),
            Plan::Unbuilt { why } => return Err(why.clone()),
        };
        let started = Instant::now();
        let injected = if *optional {
            super::testing::optional_kernels_fail()
        } else {
            super::testing::required_kernels_fail()
        };
        let built = if injected {
            Err(format!("shader {stem}: failure injected by a test"))
        } else {
            // SAFETY: the device and layout live as long as `self`; the module is destroyed
            // once the pipeline was created from it, which Vulkan allows.
            unsafe { self.compile(stem, spec) }
        };
        self.build_micros
            .fetch_add(started.elapsed().as_micros() as u64, Ordering::Relaxed);
        match built {
            Ok(pipeline) => {
                self.built.fetch_add(1, Ordering::Relaxed);
                self.unsaved.store(true, Ordering::Release);
                Ok(Kernel {
                    pipeline,
                    jobs_per_group: *jobs_per_group,
                })
            }
            Err(why) => {
                if *optional {
                    optional_kernel_missing(stem, &why);
                }
                Err(why)
            }
        }
    }

    unsafe fn compile(&self, stem: &str, spec: &[u32]) -> GpuResult<vk::Pipeline> {
        let bytes = shaders::spirv(stem).ok_or_else(|| format!("shader {stem} is not embedded"))?;
        let words = spirv::words(bytes).map_err(|e| format!("shader {stem}: {e}"))?;
        let module = self
            .device
            .create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&words), None)
            .map_err(vkerr("vkCreateShaderModule"))?;
        let pipeline = {
            let _shared = self.building.read().unwrap_or_else(|p| p.into_inner());
            compute_pipeline(&self.device, module, self.layout, spec, self.cache.cache)
        };
        self.device.destroy_shader_module(module, None);
        pipeline.map_err(|e| format!("shader {stem}: {e}"))
    }

    /// Writes the pipeline cache back to disk once pipelines were built, if the driver added
    /// to it.
    fn save_if_built(&self) {
        if self.unsaved.load(Ordering::Relaxed) && self.unsaved.swap(false, Ordering::AcqRel) {
            // SAFETY: the cache is this device's; the driver synchronizes its use.
            if !unsafe { self.cache.save(&self.device) } {
                self.unsaved.store(true, Ordering::Release);
            }
        }
    }

    /// Whether the disk cache held nothing for this build and device, and no pipeline was
    /// built yet: where the builder process ([`super::builder`]) would spare this one the
    /// compiling.
    pub fn cache_unused(&self) -> bool {
        self.cache.outcome() == Outcome::Unused
    }

    /// Takes in the pipelines the builder process wrote to the disk cache (no pipeline is built
    /// here meanwhile: the merge's cache must be left alone); whether the file held any.
    pub fn take_in_built_apart(&self) -> bool {
        let _alone = self.building.write().unwrap_or_else(|p| p.into_inner());
        // SAFETY: the cache is this device's, and no pipeline is being built with it.
        unsafe { self.cache.take_in_file(&self.device) }
    }

    /// What became of the disk cache, pipelines built so far, and the milliseconds that
    /// building them took (summed over threads), for the stats line.
    pub fn report(&self) -> (Outcome, u64, f64) {
        (
            self.cache.outcome(),
            self.built.load(Ordering::Relaxed),
            self.build_micros.load(Ordering::Relaxed) as f64 / 1e3,
        )
    }
}

fn optional_kernel_missing(stem: &str, why: &str) {
    let instead = if stem.starts_with("vp9_inter_scaled") {
        "FFmpeg reconstructs the frames that have a reference of another size"
    } else if stem.starts_with("vp9_") {
        "FFmpeg reconstructs the frame path's frames"
    } else {
        "these calls stay on the CPU"
    };
    crate::log::once(
        crate::log::Level::Warn,
        stem,
        format_args!("{why}: {instead}"),
    );
}
