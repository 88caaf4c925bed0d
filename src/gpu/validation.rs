//! With `DAEDALUS_VALIDATION=1`: the Khronos validation layer's findings (warnings and
//! errors) are logged and counted, so tests can fail on any of them.

use ash::vk;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering};

static MESSAGES: AtomicU64 = AtomicU64::new(0);

pub fn count() -> u64 {
    MESSAGES.load(Ordering::Relaxed)
}

unsafe extern "system" fn callback(
    severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    kind: vk::DebugUtilsMessageTypeFlagsEXT,
    data: *const vk::DebugUtilsMessengerCallbackDataEXT<'_>,
    _user: *mut c_void,
) -> vk::Bool32 {
    // Findings are warnings and errors; INFO carries the layer's own notes (such as "no
    // shader validation cache yet" on a fresh machine) and is only shown with DAEDALUS_LOG=debug.
    let finding = severity.intersects(
        vk::DebugUtilsMessageSeverityFlagsEXT::WARNING
            | vk::DebugUtilsMessageSeverityFlagsEXT::ERROR,
    );
    let text = if data.is_null() || (*data).p_message.is_null() {
        "(no message)".into()
    } else {
        std::ffi::CStr::from_ptr((*data).p_message).to_string_lossy()
    };
    if finding {
        MESSAGES.fetch_add(1, Ordering::Relaxed);
        eprintln!("daedalus: validation ({severity:?}, {kind:?}): {text}");
    } else {
        crate::debug!("validation ({severity:?}, {kind:?}): {text}");
    }
    vk::FALSE
}

pub struct Messenger {
    loader: ash::ext::debug_utils::Instance,
    handle: vk::DebugUtilsMessengerEXT,
}

impl Messenger {
    pub unsafe fn new(entry: &ash::Entry, instance: &ash::Instance) -> Result<Messenger, String> {
        let loader = ash::ext::debug_utils::Instance::new(entry, instance);
        let info = vk::DebugUtilsMessengerCreateInfoEXT::default()
            .message_severity(
                vk::DebugUtilsMessageSeverityFlagsEXT::INFO
                    | vk::DebugUtilsMessageSeverityFlagsEXT::WARNING
                    | vk::DebugUtilsMessageSeverityFlagsEXT::ERROR,
            )
            .message_type(
                vk::DebugUtilsMessageTypeFlagsEXT::GENERAL
                    | vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION
                    | vk::DebugUtilsMessageTypeFlagsEXT::PERFORMANCE,
            )
            .pfn_user_callback(Some(callback));
        let handle = loader
            .create_debug_utils_messenger(&info, None)
            .map_err(|e| format!("vkCreateDebugUtilsMessengerEXT: {e}"))?;
        Ok(Messenger { loader, handle })
    }
}

impl Drop for Messenger {
    fn drop(&mut self) {
        unsafe { self.loader.destroy_debug_utils_messenger(self.handle, None) };
    }
}
