//! One module per DSP family: the CPU reference beside the GPU job encoding.
//!
//! Kernels are numbered for the pipelines and the batch's buckets ([`Kernel::index`]): the
//! transforms first (by [`itx::ItxKernel::index`]), then motion compensation, the loop filter
//! and CDEF.

pub mod cdef;
pub mod cdef_row;
pub mod ipred;
pub mod itx;
pub mod lf;
pub mod lf_sb;
pub mod mc;

use itx::ItxKernel;

/// A GPU kernel (a pipeline).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum Kernel {
    /// An inverse transform (`shaders/itx*.comp`).
    Itx(ItxKernel),
    /// Motion compensation (`shaders/mc.comp`).
    Mc,
    /// The loop filter (`shaders/lf.comp`).
    Lf,
    /// AV1's CDEF (`shaders/cdef.comp`): one job per block, a workgroup of 64 invocations each.
    Cdef,
    /// A superblock plane's loop filter (`shaders/lf_sb.comp`): one job per workgroup (a
    /// plane's columns pass, its rows pass, or both), an invocation per line.
    LfSb,
    /// The decoder's superblock loop-filter planes of a row (`shaders/lf_row.comp`): the jobs
    /// of a dispatch are planes that one workgroup runs one after the other, an invocation per
    /// line.
    LfRow,
    /// The frame path's kernels (`shaders/vp9_*.comp`, `crate::vp9::frame`): a workgroup of 64
    /// invocations per job. Inter blocks (a record each), intra blocks (a superblock plane
    /// each), a superblock row's saved line (a plane each), the loop filter (a pass of a
    /// superblock plane each), and the intra predictors alone (tests).
    Vp9Inter,
    Vp9Intra,
    Vp9Lines,
    Vp9Lf,
    Vp9IpredCheck,
    /// AV1's CDEF a superblock row at a time (`shaders/cdef_row*.comp`, [`cdef_row`]): the
    /// row's rows copied first (a workgroup per 256 bytes of a plane's row), then a workgroup
    /// of 64 invocations per 8x8 block.
    CdefRowCopy,
    CdefRow,
}

/// The kernels after the transforms, in index order.
const AFTER_TRANSFORMS: [Kernel; 12] = [
    Kernel::Mc,
    Kernel::Lf,
    Kernel::Cdef,
    Kernel::LfSb,
    Kernel::LfRow,
    Kernel::Vp9Inter,
    Kernel::Vp9Intra,
    Kernel::Vp9Lines,
    Kernel::Vp9Lf,
    Kernel::Vp9IpredCheck,
    Kernel::CdefRowCopy,
    Kernel::CdefRow,
];

impl Kernel {
    /// Kernels in all: indices run from 0 to `COUNT - 1`.
    pub const COUNT: usize = ItxKernel::COUNT + AFTER_TRANSFORMS.len();

    /// The kernel's number: its pipeline, and its part of the batch's bucket keys.
    pub fn index(self) -> usize {
        let after = |n: usize| ItxKernel::COUNT + n;
        match self {
            Kernel::Itx(k) => k.index(),
            Kernel::Mc => after(0),
            Kernel::Lf => after(1),
            Kernel::Cdef => after(2),
            Kernel::LfSb => after(3),
            Kernel::LfRow => after(4),
            Kernel::Vp9Inter => after(5),
            Kernel::Vp9Intra => after(6),
            Kernel::Vp9Lines => after(7),
            Kernel::Vp9Lf => after(8),
            Kernel::Vp9IpredCheck => after(9),
            Kernel::CdefRowCopy => after(10),
            Kernel::CdefRow => after(11),
        }
    }

    /// The kernel numbered `index`, if any.
    pub fn from_index(index: usize) -> Option<Kernel> {
        match index.checked_sub(ItxKernel::COUNT) {
            None => ItxKernel::from_index(index).map(Kernel::Itx),
            Some(n) => AFTER_TRANSFORMS.get(n).copied(),
        }
    }

    /// Every kernel, in index order.
    pub fn all() -> impl Iterator<Item = Kernel> {
        ItxKernel::all().map(Kernel::Itx).chain(AFTER_TRANSFORMS)
    }

    /// 32-bit words of one of its jobs in the job buffer (a multiple of 4: `uvec4`s).
    pub fn job_words(self) -> usize {
        match self {
            Kernel::Mc => 12,
            Kernel::Itx(_)
            | Kernel::Lf
            | Kernel::Cdef
            | Kernel::LfSb
            | Kernel::LfRow
            | Kernel::Vp9Inter
            | Kernel::Vp9Intra
            | Kernel::Vp9Lines
            | Kernel::Vp9Lf
            | Kernel::Vp9IpredCheck
            | Kernel::CdefRowCopy
            | Kernel::CdefRow => 4,
        }
    }
}

/// Jobs one workgroup of `kernel` runs, for kernels other than the transforms (whose count
/// depends on the block size): 64 invocations, 8 per job.
pub const MC_LF_JOBS_PER_GROUP: u32 = 8;

#[cfg(test)]
mod tests {
    use super::*;

    /// Every index below `COUNT` names one kernel, which gives it back, in the order of
    /// `all`; the transforms come first, then motion compensation, the loop filter and CDEF
    /// (the pipelines are built in this order).
    #[test]
    fn a_kernel_s_index_gives_it_back() {
        let all: Vec<Kernel> = Kernel::all().collect();
        assert_eq!(all.len(), Kernel::COUNT);
        for (i, &k) in all.iter().enumerate() {
            assert_eq!(k.index(), i);
            assert_eq!(Kernel::from_index(i), Some(k));
        }
        assert_eq!(Kernel::from_index(Kernel::COUNT), None);
        assert_eq!(Kernel::Mc.index(), ItxKernel::COUNT);
        assert_eq!(Kernel::Lf.index(), ItxKernel::COUNT + 1);
        assert_eq!(Kernel::Cdef.index(), ItxKernel::COUNT + 2);
        assert_eq!(Kernel::CdefRow.index(), Kernel::COUNT - 1);
        assert_eq!(Kernel::Mc.job_words(), 12);
        assert!(all.iter().all(|k| k.job_words() % 4 == 0));
    }
}
