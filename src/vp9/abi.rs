//! The patch's frame, as the decoder hands it over (`vp9provider.h`).

use std::ffi::c_int;

/// The frame the decoder writes (the patch's `FFVP9ProviderFrame`).
#[repr(C)]
pub struct DaedalusVp9Frame {
    pub data: [*mut u8; 3],
    pub linesize: [isize; 3],
    pub width: c_int,
    pub height: c_int,
    pub ss_h: c_int,
    pub ss_v: c_int,
    pub bpp: c_int,
    /// The buffers that hold the planes: every byte the decoder may write.
    pub buf_data: [*mut u8; 3],
    pub buf_size: [usize; 3],
    /// `frame_begin` only: the buffers of the three references motion compensation reads.
    pub ref_buf_data: [[*mut u8; 3]; 3],
    pub ref_buf_size: [[usize; 3]; 3],
}
