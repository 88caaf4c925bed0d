//! The Vulkan runtime on ash: one device per process, chosen once ([`select`]); pipelines built
//! the first time the work needs them ([`pipeline`]); every submission recorded and waited for
//! through one [`engine`], which the per-call path's per-thread [`stream`]s, the frame path's
//! frames and the one-shot runs ([`once`]) own.

pub mod builder;
pub mod cache;
pub mod engine;
mod error;
pub mod memory;
pub mod once;
pub mod pipeline;
pub mod select;
pub mod shaders;
pub mod spirv;
pub mod stream;
#[doc(hidden)]
pub mod testing;
mod validation;

pub(crate) use error::vkerr;
pub use error::{GpuResult, LOST_IN_SUBMISSION};
pub use select::DeviceInfo;

use ash::vk;
use once_cell::sync::OnceCell;
use std::ffi::{c_char, CStr, CString};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

pub struct Gpu {
    _entry: ash::Entry,
    pub instance: ash::Instance,
    pub physical: vk::PhysicalDevice,
    pub device: ash::Device,
    pub queue_family: u32,
    /// The queue, and the serial of the last submission to it.
    queue: Mutex<(vk::Queue, u64)>,
    /// Submissions not yet retired by their owner, which other threads may wait for.
    in_flight: Mutex<Vec<InFlight>>,
    pub info: DeviceInfo,
    pub memory: vk::PhysicalDeviceMemoryProperties,
    pub host_import: Option<ash::ext::external_memory_host::Device>,
    /// Built as the work needs them.
    pub pipelines: pipeline::Pipelines,
    /// How long setting up the device took (instance, device, the shaders' checks), for the
    /// stats line.
    pub setup_ms: f64,
    _validation: Option<validation::Messenger>,
    lost: AtomicBool,
}

/// A submission that other threads may wait for.
struct InFlight {
    serial: u64,
    fence: vk::Fence,
    /// Threads inside a wait on `fence`: its owner resets it only when none is.
    waiters: usize,
}

// Vulkan handles are plain values; the queue is behind a mutex and every other object is
// either immutable after creation or owned by one thread's stream.
unsafe impl Send for Gpu {}
unsafe impl Sync for Gpu {}

static GPU: OnceCell<Option<Gpu>> = OnceCell::new();

/// The process's device, created on first use. `None` (after one warning) when there is no
/// usable Vulkan device, when `DAEDALUS=cpu`, or after the device was lost.
pub fn get() -> Option<&'static Gpu> {
    let gpu = GPU
        .get_or_init(|| {
            match crate::config::get().mode {
                crate::config::Mode::Cpu => {
                    crate::info!("DAEDALUS=cpu: deferred calls run on the CPU reference");
                    return None;
                }
                crate::config::Mode::Off => return None,
                crate::config::Mode::Gpu => {}
            }
            match unsafe { Gpu::new() } {
                Ok(g) => {
                    crate::info!("using Vulkan device \"{}\"", g.info.name);
                    Some(g)
                }
                Err(e) => {
                    crate::warn!("no usable Vulkan device ({e}); running on the CPU reference");
                    None
                }
            }
        })
        .as_ref()?;
    if gpu.lost.load(Ordering::Relaxed) {
        None
    } else {
        Some(gpu)
    }
}

/// The device once set up, even after it was lost: for waiting on what was submitted
/// before.
pub fn set_up() -> Option<&'static Gpu> {
    GPU.get()?.as_ref()
}

/// Where the device stands, without setting it up.
pub enum State {
    NotSetUp,
    Usable(&'static Gpu),
    /// No usable device, `DAEDALUS=cpu`, or lost.
    Unavailable,
}

pub fn state() -> State {
    match GPU.get() {
        None => State::NotSetUp,
        Some(Some(g)) if !g.lost.load(Ordering::Relaxed) => State::Usable(g),
        Some(_) => State::Unavailable,
    }
}

impl Gpu {
    unsafe fn new() -> GpuResult<Gpu> {
        let started = std::time::Instant::now();
        let entry =
            ash::Entry::load().map_err(|e| format!("cannot load the Vulkan loader: {e}"))?;
        let config = crate::config::get();

        let instance = create_instance(&entry, config.testing.validation)?;
        let messenger = match config
            .testing
            .validation
            .then(|| validation::Messenger::new(&entry, &instance))
            .transpose()
        {
            Ok(m) => m,
            Err(e) => {
                instance.destroy_instance(None);
                return Err(e);
            }
        };

        let chosen = match select::choose(&instance, config.device.as_deref()) {
            Ok(c) => c,
            Err(e) => {
                drop(messenger);
                instance.destroy_instance(None);
                return Err(e);
            }
        };
        let select::Choice {
            physical,
            queue_family,
            info,
            device_extensions,
        } = chosen;

        let device = match create_device(&instance, physical, queue_family, &device_extensions) {
            Ok(d) => d,
            Err(e) => {
                drop(messenger);
                instance.destroy_instance(None);
                return Err(e);
            }
        };
        let queue = device.get_device_queue(queue_family, 0);
        let memory = instance.get_physical_device_memory_properties(physical);
        let host_import = info
            .host_import_alignment
            .map(|_| ash::ext::external_memory_host::Device::new(&instance, &device));
        let disk_cache =
            cache::DiskCache::open(&device, &instance.get_physical_device_properties(physical));
        let pipelines = pipeline::Pipelines::new(&device, &info, disk_cache);
        let pipelines = match pipelines {
            Ok(p) => p,
            Err(e) => {
                device.destroy_device(None);
                drop(messenger);
                instance.destroy_instance(None);
                return Err(e);
            }
        };
        Ok(Gpu {
            _entry: entry,
            instance,
            physical,
            device,
            queue_family,
            queue: Mutex::new((queue, 0)),
            in_flight: Mutex::new(Vec::new()),
            info,
            memory,
            host_import,
            pipelines,
            setup_ms: started.elapsed().as_secs_f64() * 1e3,
            _validation: messenger,
            lost: AtomicBool::new(false),
        })
    }

    /// Submits one command buffer (the queue is shared by every thread); returns the
    /// submission's serial, which other threads may [`Gpu::wait_for`] until the submitting
    /// thread, having waited for `fence` itself, calls [`Gpu::retire`] and before it reuses
    /// the fence.
    pub fn submit(&self, cmd: vk::CommandBuffer, fence: vk::Fence) -> GpuResult<u64> {
        self.submit_to(cmd, fence, &[], 1).map(|(serial, _)| serial)
    }

    /// [`Gpu::submit`], also returning the later step of this submission at which a test
    /// injected a failure ([`testing::Step`]), of those in `meets`, for the submitter to meet
    /// there; it counts as `units` submissions towards the failing one.
    pub fn submit_with_injection(
        &self,
        cmd: vk::CommandBuffer,
        fence: vk::Fence,
        meets: &[testing::Step],
        units: u64,
    ) -> GpuResult<(u64, Option<testing::Step>)> {
        self.submit_to(cmd, fence, meets, units)
    }

    /// A submission whose failure says [`LOST_IN_SUBMISSION`] may have started on the GPU:
    /// only the out-of-memory errors promise that nothing did.
    fn submit_to(
        &self,
        cmd: vk::CommandBuffer,
        fence: vk::Fence,
        meets: &[testing::Step],
        units: u64,
    ) -> GpuResult<(u64, Option<testing::Step>)> {
        if self.lost.load(Ordering::Relaxed) {
            // Another thread's submission failed: the device is not used again, and this
            // thread's batch runs on the CPU as after its own failure (nothing of it ran).
            return Err("the device was disabled after an error".into());
        }
        let injected = testing::take_injected_failure(meets, units);
        match injected {
            Some(testing::Step::Submit) => {
                return Err("vkQueueSubmit: failure injected by a test".into())
            }
            Some(testing::Step::SubmitLost) => {
                return Err(format!("{LOST_IN_SUBMISSION} (injected by a test)"))
            }
            Some(testing::Step::Panic) => panic!("a panic injected by a test"),
            _ => {}
        }
        let cmds = [cmd];
        let submit = [vk::SubmitInfo::default().command_buffers(&cmds)];
        let mut queue = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        unsafe { self.device.queue_submit(queue.0, &submit, fence) }.map_err(|e| {
            if e == vk::Result::ERROR_DEVICE_LOST {
                LOST_IN_SUBMISSION.to_string()
            } else {
                vkerr("vkQueueSubmit")(e)
            }
        })?;
        queue.1 += 1;
        let serial = queue.1;
        self.in_flight
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(InFlight {
                serial,
                fence,
                waiters: 0,
            });
        Ok((serial, injected))
    }

    /// The submitting thread is done with submission `serial` (it waited for its fence and
    /// the pixels are final, or it redid the work on the CPU): no other thread waits for it
    /// any more. Returns once no other
    /// thread is inside a wait on its fence, so that the fence may be reset.
    pub fn retire(&self, serial: u64) {
        loop {
            let mut list = self.in_flight.lock().unwrap_or_else(|p| p.into_inner());
            match list.iter().position(|f| f.serial == serial) {
                None => return,
                Some(i) if list[i].waiters == 0 => {
                    list.swap_remove(i);
                    return;
                }
                // Another thread waits on the fence, which has signalled: it returns soon.
                Some(_) => {
                    drop(list);
                    std::thread::yield_now();
                }
            }
        }
    }

    /// Waits until the owner of submission `serial` retires it (after a failed wait: the
    /// owner then redoes its work on the CPU).
    pub fn wait_retired(&self, serial: u64) {
        loop {
            {
                let list = self.in_flight.lock().unwrap_or_else(|p| p.into_inner());
                if !list.iter().any(|f| f.serial == serial) {
                    return;
                }
            }
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
    }

    /// Waits until submission `serial` (of any thread) has completed: at once if its owner
    /// retired it already. Returns whether it was still in flight.
    pub fn wait_for(&self, serial: u64, timeout: std::time::Duration) -> GpuResult<bool> {
        let fence = {
            let mut list = self.in_flight.lock().unwrap_or_else(|p| p.into_inner());
            let Some(f) = list.iter_mut().find(|f| f.serial == serial) else {
                return Ok(false);
            };
            f.waiters += 1;
            f.fence
        };
        let waited = unsafe {
            self.device
                .wait_for_fences(&[fence], true, timeout.as_nanos() as u64)
        };
        let mut list = self.in_flight.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(f) = list.iter_mut().find(|f| f.serial == serial) {
            f.waiters -= 1;
        }
        match waited {
            Ok(()) => Ok(true),
            Err(vk::Result::TIMEOUT) => Err(format!("the GPU did not finish within {timeout:?}")),
            Err(e) => Err(format!("vkWaitForFences: {e}")),
        }
    }

    /// Stops all later use of the device after an unrecoverable error.
    pub fn mark_lost(&self, why: &str) {
        if !self.lost.swap(true, Ordering::Relaxed) {
            crate::error!("GPU disabled after an error ({why}); the CPU reference takes over");
        }
    }
}

/// Number of messages the validation layer reported (with `DAEDALUS_VALIDATION=1`).
pub fn validation_messages() -> u64 {
    validation::count()
}

/// The Vulkan instance: Vulkan 1.1, with the Khronos validation layer where `validation`
/// (`DAEDALUS_VALIDATION`) asks for it, an error where it is not installed.
unsafe fn create_instance(entry: &ash::Entry, validation: bool) -> GpuResult<ash::Instance> {
    let mut layers: Vec<CString> = Vec::new();
    let mut extensions: Vec<&CStr> = Vec::new();
    if validation {
        let available = entry
            .enumerate_instance_layer_properties()
            .map_err(vkerr("vkEnumerateInstanceLayerProperties"))?;
        let want = c"VK_LAYER_KHRONOS_validation";
        if !available
            .iter()
            .any(|l| l.layer_name_as_c_str() == Ok(want))
        {
            return Err(
                "DAEDALUS_VALIDATION=1 but VK_LAYER_KHRONOS_validation is not installed".into(),
            );
        }
        layers.push(want.to_owned());
        extensions.push(ash::ext::debug_utils::NAME);
    }
    let layer_ptrs: Vec<*const c_char> = layers.iter().map(|l| l.as_ptr()).collect();
    let ext_ptrs: Vec<*const c_char> = extensions.iter().map(|e| e.as_ptr()).collect();
    let app = vk::ApplicationInfo::default()
        .application_name(c"daedalus")
        .engine_name(c"daedalus")
        .api_version(vk::API_VERSION_1_1);
    let instance = entry
        .create_instance(
            &vk::InstanceCreateInfo::default()
                .application_info(&app)
                .enabled_layer_names(&layer_ptrs)
                .enabled_extension_names(&ext_ptrs),
            None,
        )
        .map_err(vkerr("vkCreateInstance"))?;
    Ok(instance)
}

/// The logical device: one compute queue, the chosen device's extensions, 8- and 16-bit
/// storage-buffer access.
unsafe fn create_device(
    instance: &ash::Instance,
    physical: vk::PhysicalDevice,
    queue_family: u32,
    device_extensions: &[&CStr],
) -> GpuResult<ash::Device> {
    let ext_ptrs: Vec<*const c_char> = device_extensions.iter().map(|e| e.as_ptr()).collect();
    let mut storage16 =
        vk::PhysicalDevice16BitStorageFeatures::default().storage_buffer16_bit_access(true);
    let mut storage8 =
        vk::PhysicalDevice8BitStorageFeatures::default().storage_buffer8_bit_access(true);
    let priorities = [1.0f32];
    let queue_info = [vk::DeviceQueueCreateInfo::default()
        .queue_family_index(queue_family)
        .queue_priorities(&priorities)];
    let device = instance
        .create_device(
            physical,
            &vk::DeviceCreateInfo::default()
                .queue_create_infos(&queue_info)
                .enabled_extension_names(&ext_ptrs)
                .push_next(&mut storage16)
                .push_next(&mut storage8),
            None,
        )
        .map_err(vkerr("vkCreateDevice"))?;
    Ok(device)
}
