//! The Vulkan runtime on ash: one device per process, chosen once; pipelines built the first
//! time the work needs them; per-thread [`stream::Stream`]s that reuse their command buffers
//! and buffers across flushes.

pub mod cache;
pub mod engine;
pub mod memory;
pub mod once;
pub mod pipeline;
pub mod select;
pub mod shaders;
pub mod spirv;
pub mod stream;
mod validation;

use ash::vk;
use once_cell::sync::OnceCell;
use std::ffi::{c_char, CStr, CString};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// What the rest of the crate needs to know about the chosen device.
#[derive(Clone, Debug)]
pub struct DeviceInfo {
    pub name: String,
    pub kind: vk::PhysicalDeviceType,
    pub api_version: u32,
    pub max_storage_buffer_range: u64,
    pub non_coherent_atom_size: u64,
    pub max_shared_bytes: u32,
    pub max_invocations: u32,
    pub max_storage_buffers: u32,
    pub max_push_constant_bytes: u32,
    pub max_group_count_x: u32,
    /// `Some(alignment)` when host pointers can be imported (VK_EXT_external_memory_host).
    pub host_import_alignment: Option<u64>,
    /// Nanoseconds per timestamp tick, when the compute queue has timestamps.
    pub timestamp_period_ns: Option<f64>,
}

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

/// Why the GPU stopped being used.
pub type GpuResult<T> = Result<T, String>;

/// How a submission that failed with the device lost says so: part of it may have run.
pub const LOST_IN_SUBMISSION: &str = "vkQueueSubmit: ERROR_DEVICE_LOST";

pub(crate) fn vkerr(what: &str) -> impl Fn(vk::Result) -> String + '_ {
    move |e| format!("{what}: {e}")
}

impl Gpu {
    unsafe fn new() -> GpuResult<Gpu> {
        let started = std::time::Instant::now();
        let entry =
            ash::Entry::load().map_err(|e| format!("cannot load the Vulkan loader: {e}"))?;
        let config = crate::config::get();

        let mut layers: Vec<CString> = Vec::new();
        let mut extensions: Vec<&CStr> = Vec::new();
        if config.testing.validation {
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
        let messenger = if config.testing.validation {
            Some(validation::Messenger::new(&entry, &instance)?)
        } else {
            None
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
        self.submit_to(cmd, fence, &[]).map(|(serial, _)| serial)
    }

    /// [`Gpu::submit`], also returning the later step of this submission at which a test
    /// injected a failure ([`testing::Step`]), of those in `meets`, for the submitter to meet
    /// there.
    pub fn submit_with_injection(
        &self,
        cmd: vk::CommandBuffer,
        fence: vk::Fence,
        meets: &[testing::Step],
    ) -> GpuResult<(u64, Option<testing::Step>)> {
        self.submit_to(cmd, fence, meets)
    }

    /// A submission whose failure says [`LOST_IN_SUBMISSION`] may have started on the GPU:
    /// only the out-of-memory errors promise that nothing did.
    fn submit_to(
        &self,
        cmd: vk::CommandBuffer,
        fence: vk::Fence,
        meets: &[testing::Step],
    ) -> GpuResult<(u64, Option<testing::Step>)> {
        if self.lost.load(Ordering::Relaxed) {
            // Another thread's submission failed: the device is not used again, and this
            // thread's batch runs on the CPU as after its own failure (nothing of it ran).
            return Err("the device was disabled after an error".into());
        }
        let injected = testing::take_injected_failure(meets);
        match injected {
            Some(testing::Step::Submit) => {
                return Err("vkQueueSubmit: failure injected by a test".into())
            }
            Some(testing::Step::SubmitLost) => {
                return Err(format!("{LOST_IN_SUBMISSION} (injected by a test)"))
            }
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

/// Failure injection for the tests of the fallback paths.
#[doc(hidden)]
pub mod testing {
    use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
    use std::sync::OnceLock;

    /// The step of a submission at which an injected failure strikes.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Step {
        /// The queue submission fails: nothing of the batch reaches the GPU.
        Submit,
        /// The queue submission fails with the device lost, which the driver may report
        /// after part of the batch started: nothing of it runs here.
        SubmitLost,
        /// The GPU runs the whole batch, then the wait for it fails as after a lost device
        /// (which may strike with any part of the batch written).
        Wait,
        /// The GPU ran; reading its results back (the copied blocks) then fails.
        Unpack,
        /// The GPU ran; reading the list of transforms it left to the host then fails.
        Overflow,
    }

    impl Step {
        pub(crate) const ALL: [Step; 5] = [
            Step::Submit,
            Step::SubmitLost,
            Step::Wait,
            Step::Unpack,
            Step::Overflow,
        ];

        fn name(self) -> &'static str {
            match self {
                Step::Submit => "submit",
                Step::SubmitLost => "submit-lost",
                Step::Wait => "wait",
                Step::Unpack => "unpack",
                Step::Overflow => "overflow",
            }
        }
    }

    /// 0: none; else 1 + the index of a step in [`Step::ALL`].
    static FAIL_NEXT_SUBMISSION: AtomicU8 = AtomicU8::new(0);
    static FAIL_OPTIONAL_KERNELS: AtomicBool = AtomicBool::new(false);
    static FAIL_REQUIRED_KERNELS: AtomicBool = AtomicBool::new(false);

    /// Makes the device fail to build the kernels one decoder alone uses (CDEF, the
    /// superblock loop filters) when they are first wanted, as a driver that cannot compile
    /// them would.
    pub fn fail_optional_kernels() {
        FAIL_OPTIONAL_KERNELS.store(true, Ordering::SeqCst);
    }

    pub(super) fn optional_kernels_fail() -> bool {
        FAIL_OPTIONAL_KERNELS.load(Ordering::SeqCst) || env_fails("optional")
    }

    /// `DAEDALUS_TEST_FAIL_KERNELS=optional`: the optional kernels fail to build, as above, in
    /// a decoder's process (the end-to-end tests of the frame path's fallback).
    fn env_fails(which: &str) -> bool {
        static SETTING: OnceLock<Option<String>> = OnceLock::new();
        SETTING
            .get_or_init(|| std::env::var("DAEDALUS_TEST_FAIL_KERNELS").ok())
            .as_deref()
            == Some(which)
    }

    /// Makes the device fail to build every other kernel when it is first wanted.
    pub fn fail_required_kernels() {
        FAIL_REQUIRED_KERNELS.store(true, Ordering::SeqCst);
    }

    pub(super) fn required_kernels_fail() -> bool {
        FAIL_REQUIRED_KERNELS.load(Ordering::SeqCst)
    }

    /// Makes the next queue submission (of any thread) fail as a lost device would.
    pub fn fail_next_submission() {
        fail_next_submission_at(Step::Submit);
    }

    /// Makes the next queue submission (of any thread) fail at `step`. Steps after the
    /// submission itself strike the recorder's submissions only (others ignore them).
    pub fn fail_next_submission_at(step: Step) {
        let index = Step::ALL.iter().position(|&s| s == step).unwrap_or(0);
        FAIL_NEXT_SUBMISSION.store(1 + index as u8, Ordering::SeqCst);
    }

    /// Where the recorder panics next, as a bug there would make it.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Panic {
        /// A call's jobs joined the batch, the batch has not noted it yet.
        WhilePlacing = 1,
        /// A flush executed the batch, and has not cleared it yet.
        AfterExecution = 2,
    }

    /// 0: none; else a [`Panic`].
    static PANIC_NEXT: AtomicU8 = AtomicU8::new(0);

    pub fn panic_next(at: Panic) {
        PANIC_NEXT.store(at as u8, Ordering::SeqCst);
    }

    /// Makes the next call the recorder places panic while placing it.
    pub fn panic_while_placing() {
        panic_next(Panic::WhilePlacing);
    }

    pub(crate) fn take_panic(at: Panic) -> bool {
        PANIC_NEXT.load(Ordering::Relaxed) == at as u8
            && PANIC_NEXT
                .compare_exchange(at as u8, 0, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
    }

    /// Submissions tried so far in this process (for `DAEDALUS_TEST_FAIL_SUBMISSION`).
    static SUBMISSIONS_TRIED: AtomicU64 = AtomicU64::new(0);

    /// `DAEDALUS_TEST_FAIL_SUBMISSION=N`: the process's N-th queue submission fails as a lost
    /// device would, so that the end-to-end tests reach the fallbacks through FFmpeg, parts of
    /// frames in flight among them; `DAEDALUS_TEST_FAIL_STEP` names the
    /// step (`submit`, the default, `submit-lost`, `wait`, `unpack`, `overflow`).
    fn failing_submission() -> Option<(u64, Step)> {
        static AT: OnceLock<Option<(u64, Step)>> = OnceLock::new();
        *AT.get_or_init(|| {
            let at = std::env::var("DAEDALUS_TEST_FAIL_SUBMISSION")
                .ok()
                .and_then(|v| v.trim().parse().ok())?;
            let step = match std::env::var("DAEDALUS_TEST_FAIL_STEP") {
                Ok(name) => match Step::ALL.iter().find(|s| s.name() == name.trim()) {
                    Some(&step) => step,
                    None => {
                        // A test that injects nothing must not pass for one that did.
                        crate::error!("DAEDALUS_TEST_FAIL_STEP={name} names no step");
                        return None;
                    }
                },
                Err(_) => Step::Submit,
            };
            Some((at, step))
        })
    }

    /// Called once per queue submission: the step of it that is to fail, if any. Steps after
    /// the submission itself are taken only by submissions that meet them (`meets`); another
    /// kind leaves an armed one for the next of those.
    pub(super) fn take_injected_failure(meets: &[Step]) -> Option<Step> {
        let tried = SUBMISSIONS_TRIED.fetch_add(1, Ordering::SeqCst) + 1;
        let applies = |step: Step| step == Step::Submit || meets.contains(&step);
        let armed = FAIL_NEXT_SUBMISSION.load(Ordering::SeqCst);
        if armed != 0 {
            let step = Step::ALL[armed as usize - 1];
            return (applies(step)
                && FAIL_NEXT_SUBMISSION
                    .compare_exchange(armed, 0, Ordering::SeqCst, Ordering::SeqCst)
                    .is_ok())
            .then_some(step);
        }
        failing_submission().and_then(|(at, step)| (at == tried && applies(step)).then_some(step))
    }
}
