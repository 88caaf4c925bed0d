//! Which path each decoder took, decided at its first attach, and why: what the stats line
//! says ran, and what the parts serving both decoders follow (whether their frames are worth
//! daedalus's memory). It names nothing but the settings.

use once_cell::sync::OnceCell;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Path {
    /// The GPU reconstructs: VP9's frame path (forced, or chosen per frame against FFmpeg's own
    /// decode), AV1's CDEF by superblock rows.
    Frame,
    /// The decoder's DSP calls one by one through the C ABI.
    Calls,
    /// The decoder's own functions: daedalus takes no part.
    Own,
}

/// A decoder's path and why it took it (`DAEDALUS_PATH`, `no-device`, ...).
#[derive(Clone, Copy, Debug)]
pub struct Taken {
    pub path: Path,
    pub why: &'static str,
}

static VP9: OnceCell<Taken> = OnceCell::new();
static AV1: OnceCell<Taken> = OnceCell::new();

/// Notes VP9's path at its first decoder's attach (later ones take the same); returns it.
pub fn took_vp9(path: Path, why: &'static str) -> Taken {
    *VP9.get_or_init(|| Taken { path, why })
}

/// Notes AV1's path at dav1d's first attach; returns it.
pub fn took_av1(path: Path, why: &'static str) -> Taken {
    *AV1.get_or_init(|| Taken { path, why })
}

/// Where VP9's decoders choose per frame and the device's set-up found it unfit after all
/// (none, or a CPU device): FFmpeg's own decode, and why, for the stats line and the
/// decoders that attach later.
static VP9_AFTER_ALL: OnceCell<Taken> = OnceCell::new();

pub fn vp9_declined_after_all(why: &'static str) {
    let _ = VP9_AFTER_ALL.set(Taken {
        path: Path::Own,
        why,
    });
}

pub fn vp9() -> Option<Taken> {
    VP9_AFTER_ALL.get().or(VP9.get()).copied()
}

pub fn av1() -> Option<Taken> {
    AV1.get().copied()
}

/// Whether a decoder took a path on which the GPU may take part.
pub fn gpu_may_take_part() -> bool {
    [vp9(), av1()]
        .into_iter()
        .flatten()
        .any(|t| t.path != Path::Own)
}
