//! Where each call family runs, decided once per process: VP9's three families at its
//! decoder's first attach ([`crate::calibrate::decide`]), CDEF at dav1d's
//! ([`crate::av1::decide_cdef`]). Until a group is decided its families run on the GPU (the C
//! ABI's own calls are not placed). It names nothing but the settings, so the recorder below
//! the providers reads it (once per batch) as the providers do.

use crate::config::{Family, Place, Placement};
use once_cell::sync::OnceCell;

/// The chosen placement and how it was chosen.
#[derive(Clone, Debug)]
pub struct Decision {
    pub placement: Placement,
    /// `DAEDALUS_KERNELS`, `calibration`, `cache`, `no-device`, `cpu-path`,
    /// `calibration-failed`, or for CDEF `no-kernel` or `trial`; `DAEDALUS_KERNELS+...` where
    /// it named some of the group's families and the rest were decided so.
    pub by: &'static str,
    /// Per family `family:gpu_ns/cpu_ns` host nanoseconds per call, rounded (empty if not
    /// measured); a family goes to the GPU only where its time is lower, ties stay on the CPU.
    pub measured: String,
    /// The device measured (empty if none was).
    pub device: String,
}

impl Decision {
    /// A decision that measured nothing: `placement` as `by` chose it, on `device` (empty
    /// where none was looked at).
    pub fn unmeasured(placement: Placement, by: &'static str, device: &str) -> Decision {
        Decision {
            placement,
            by,
            measured: String::new(),
            device: device.to_string(),
        }
    }

    /// Whether the VP9 provider should take no part: the device was measured (or its result
    /// cached) and every VP9 family is faster on the CPU, where FFmpeg's table as it is costs
    /// nothing per call. A placement set with `DAEDALUS_KERNELS` is always followed.
    pub fn keeps_ffmpeg(&self) -> bool {
        !self.placement.forced
            && Family::VP9
                .iter()
                .all(|&f| self.placement.of(f) == Place::Cpu)
    }
}

/// VP9's families.
static VP9: OnceCell<Decision> = OnceCell::new();
/// CDEF's.
static CDEF: OnceCell<Decision> = OnceCell::new();

/// The decided groups as the stats line names them, with their families.
fn groups() -> [(&'static str, &'static [Family], &'static OnceCell<Decision>); 2] {
    [
        ("vp9", &Family::VP9, &VP9),
        ("cdef", &[Family::Cdef], &CDEF),
    ]
}

/// The placement in force: each group's as decided, every family on the GPU before that.
pub fn in_force() -> Placement {
    let mut p = VP9.get().map_or(Placement::ALL_GPU, |d| d.placement);
    if let Some(d) = CDEF.get() {
        p.set(Family::Cdef, d.placement.of(Family::Cdef));
    }
    p
}

/// CDEF's decision, once made.
pub fn cdef() -> Option<&'static Decision> {
    CDEF.get()
}

/// VP9's decision: `decide`'s the first time, the same one after.
pub(crate) fn decide_vp9(decide: impl FnOnce() -> Decision) -> &'static Decision {
    VP9.get_or_init(decide)
}

/// CDEF's decision: `decide`'s the first time, the same one after.
pub(crate) fn decide_cdef(decide: impl FnOnce() -> Decision) -> &'static Decision {
    CDEF.get_or_init(decide)
}

/// Sets VP9's decision unless one is made; returns whether it took effect.
pub(crate) fn fix_vp9(d: Decision) -> bool {
    VP9.set(d).is_ok()
}

/// The decisions made, as the stats line shows them: the placement of their families, what
/// chose it (per group where the groups differ) and what was measured; `None` before any.
pub fn describe() -> Option<(String, String, String)> {
    let decided: Vec<(&str, &[Family], &Decision)> = groups()
        .into_iter()
        .filter_map(|(name, families, cell)| cell.get().map(|d| (name, families, d)))
        .collect();
    let (_, _, first) = decided.first()?;
    let kernels = decided
        .iter()
        .map(|(_, families, d)| d.placement.describe_only(families))
        .collect::<Vec<_>>()
        .join(",");
    let by = if decided.iter().all(|(_, _, d)| d.by == first.by) {
        first.by.to_string()
    } else {
        decided
            .iter()
            .map(|(name, _, d)| format!("{name}:{}", d.by))
            .collect::<Vec<_>>()
            .join(",")
    };
    let measured = decided
        .iter()
        .map(|(_, _, d)| d.measured.as_str())
        .filter(|m| !m.is_empty())
        .collect::<Vec<_>>()
        .join(",");
    Some((kernels, by, measured))
}

/// The device measured where every decided group keeps its decoder's own functions, so that
/// no provider took part (VP9: unless `DAEDALUS_KERNELS` placed them; CDEF on the CPU is
/// always dav1d's own).
pub fn declined() -> Option<String> {
    let (vp9, cdef) = (VP9.get(), CDEF.get());
    let vp9_declined = vp9.is_none_or(|d| d.keeps_ffmpeg());
    let cdef_declined = !cdef_on_gpu();
    let device = &vp9.or(cdef)?.device;
    // A placement from `DAEDALUS_KERNELS` measured no device.
    let device = if device.is_empty() { "none" } else { device };
    (vp9_declined && cdef_declined).then(|| device.to_string())
}

/// Whether a decided group may put work on the GPU: VP9's unless it declined
/// ([`Decision::keeps_ffmpeg`]), or CDEF placed on the GPU.
pub fn some_group_on_gpu() -> bool {
    VP9.get().is_some_and(|d| !d.keeps_ffmpeg()) || cdef_on_gpu()
}

/// Whether CDEF's decision is made and places it on the GPU.
pub fn cdef_on_gpu() -> bool {
    CDEF.get()
        .is_some_and(|d| d.placement.of(Family::Cdef) == Place::Gpu)
}
