//! How a failed Vulkan step is said: the error of every step that can fail on the device.

use ash::vk;

/// Why the GPU stopped being used.
pub type GpuResult<T> = Result<T, String>;

/// How a submission that failed with the device lost says so: part of it may have run.
pub const LOST_IN_SUBMISSION: &str = "vkQueueSubmit: ERROR_DEVICE_LOST";

pub(crate) fn vkerr(what: &str) -> impl Fn(vk::Result) -> String + '_ {
    move |e| format!("{what}: {e}")
}
