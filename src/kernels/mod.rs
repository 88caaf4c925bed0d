//! One module per DSP family: the CPU reference beside the GPU job encoding.
//!
//! Kernels are numbered for the pipelines and the batch's buckets ([`Kernel::index`]): the
//! transforms first (by [`itx::ItxKernel::index`]), then motion compensation, the loop filter
//! and CDEF.

pub mod cdef;
pub mod cdef_row;
pub mod ipred;
pub mod itx;
mod job;
pub mod lf;
pub mod lf_sb;
pub mod mc;

use itx::ItxKernel;
pub use job::{Job, JobHeader};

/// A pixel of the CPU references: of 8 bits in a byte, or of more (10, 12, dav1d's 16-bit
/// builds) in a 16-bit word.
pub trait Pixel: Copy {
    fn value(self) -> i32;
    fn from_value(v: i32) -> Self;
}

impl Pixel for u8 {
    fn value(self) -> i32 {
        self as i32
    }
    fn from_value(v: i32) -> Self {
        v as u8
    }
}

impl Pixel for u16 {
    fn value(self) -> i32 {
        self as i32
    }
    fn from_value(v: i32) -> Self {
        v as u16
    }
}

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
    /// The frame path's kernels (`shaders/vp9_*.comp`, `crate::vp9::frame`): a workgroup per
    /// job, of 64 invocations but for inter blocks: their prediction (a record each, as many
    /// invocations as the device's subgroup), then their residuals (a group of transform
    /// blocks of one size each, 32; a kernel per size, 4 << n), intra blocks (a superblock
    /// plane each, 32 on a device whose subgroups are narrower), the loop filter (a
    /// superblock plane each), and three kernels for the
    /// tests alone: the intra predictors, the transforms at 10 and 12 bits (a block each, 32),
    /// and the loop filter's arithmetic at every depth (a line each). The `High` ones are the
    /// same at 10 and 12 bits (`_high` variants of the shaders: 16-bit pixels); the `Scaled`
    /// ones predict a frame that has a reference of another size (`_scaled` variants).
    Vp9Inter,
    Vp9InterScaled,
    Vp9InterResidual(u8),
    Vp9Intra,
    Vp9Lf,
    Vp9InterHigh,
    Vp9InterScaledHigh,
    Vp9InterResidualHigh(u8),
    Vp9IntraHigh,
    Vp9LfHigh,
    Vp9IpredCheck,
    Vp9ItxHighCheck,
    LfFilterCheck,
    /// AV1's CDEF a superblock row at a time (`shaders/cdef_row*.comp`, [`cdef_row`]): the
    /// row's rows copied first (a workgroup per 256 bytes of a plane's row), then a workgroup
    /// of 64 invocations per 8x8 block.
    CdefRowCopy,
    CdefRow,
}

/// Job words a workgroup of [`Kernel::Vp9InterResidual`] takes: a group of transform blocks of
/// one size (`crate::vp9::frame`'s residuals).
pub const RESIDUAL_GROUP: usize = 16;

/// The kernels after the transforms, in index order.
const AFTER_TRANSFORMS: [Kernel; 25] = [
    Kernel::Mc,
    Kernel::Lf,
    Kernel::Cdef,
    Kernel::LfSb,
    Kernel::Vp9Inter,
    Kernel::Vp9InterScaled,
    Kernel::Vp9InterResidual(0),
    Kernel::Vp9InterResidual(1),
    Kernel::Vp9InterResidual(2),
    Kernel::Vp9InterResidual(3),
    Kernel::Vp9Intra,
    Kernel::Vp9Lf,
    Kernel::Vp9InterHigh,
    Kernel::Vp9InterScaledHigh,
    Kernel::Vp9InterResidualHigh(0),
    Kernel::Vp9InterResidualHigh(1),
    Kernel::Vp9InterResidualHigh(2),
    Kernel::Vp9InterResidualHigh(3),
    Kernel::Vp9IntraHigh,
    Kernel::Vp9LfHigh,
    Kernel::Vp9IpredCheck,
    Kernel::Vp9ItxHighCheck,
    Kernel::LfFilterCheck,
    Kernel::CdefRowCopy,
    Kernel::CdefRow,
];

impl Kernel {
    /// Kernels in all: indices run from 0 to `COUNT - 1`.
    pub const COUNT: usize = ItxKernel::COUNT + AFTER_TRANSFORMS.len();

    /// The kernel's number: its pipeline, and its part of the batch's bucket keys.
    #[inline]
    pub fn index(self) -> usize {
        let after = |n: usize| ItxKernel::COUNT + n;
        if let Kernel::Vp9InterResidual(n) | Kernel::Vp9InterResidualHigh(n) = self {
            debug_assert!(n < 4, "no transform size {n}");
        }
        match self {
            Kernel::Itx(k) => k.index(),
            Kernel::Mc => after(0),
            Kernel::Lf => after(1),
            Kernel::Cdef => after(2),
            Kernel::LfSb => after(3),
            Kernel::Vp9Inter => after(4),
            Kernel::Vp9InterScaled => after(5),
            Kernel::Vp9InterResidual(n) => after(6 + n.min(3) as usize),
            Kernel::Vp9Intra => after(10),
            Kernel::Vp9Lf => after(11),
            Kernel::Vp9InterHigh => after(12),
            Kernel::Vp9InterScaledHigh => after(13),
            Kernel::Vp9InterResidualHigh(n) => after(14 + n.min(3) as usize),
            Kernel::Vp9IntraHigh => after(18),
            Kernel::Vp9LfHigh => after(19),
            Kernel::Vp9IpredCheck => after(20),
            Kernel::Vp9ItxHighCheck => after(21),
            Kernel::LfFilterCheck => after(22),
            Kernel::CdefRowCopy => after(23),
            Kernel::CdefRow => after(24),
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

    /// Its shader's stem (`shaders/STEM.comp`, or a variant a shader names): several kernels
    /// may share one, specialized apart.
    pub fn shader(self) -> &'static str {
        match self {
            Kernel::Itx(k) => k.shader(),
            Kernel::Mc => "mc",
            Kernel::Lf => "lf",
            Kernel::Cdef => "cdef",
            Kernel::LfSb => "lf_sb",
            Kernel::Vp9Inter => "vp9_inter",
            Kernel::Vp9InterScaled => "vp9_inter_scaled",
            Kernel::Vp9InterResidual(_) => "vp9_inter_residual",
            Kernel::Vp9Intra => "vp9_intra",
            Kernel::Vp9Lf => "vp9_lf",
            Kernel::Vp9InterHigh => "vp9_inter_high",
            Kernel::Vp9InterScaledHigh => "vp9_inter_scaled_high",
            Kernel::Vp9InterResidualHigh(_) => "vp9_inter_residual_high",
            Kernel::Vp9IntraHigh => "vp9_intra_high",
            Kernel::Vp9LfHigh => "vp9_lf_high",
            Kernel::Vp9IpredCheck => "vp9_ipred_check",
            Kernel::Vp9ItxHighCheck => "vp9_itx_high_check",
            Kernel::LfFilterCheck => "lf_filter_check",
            Kernel::CdefRowCopy => "cdef_row_copy",
            Kernel::CdefRow => "cdef_row",
        }
    }

    /// 32-bit words of one of its jobs in the job buffer (a multiple of 4: `uvec4`s).
    pub fn job_words(self) -> usize {
        // Motion compensation carries its source and filter taps; the rest fit a uvec4.
        if self == Kernel::Mc {
            12
        } else {
            4
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

    /// Asserts that shader `name` reads its job's words as `reads` say.
    fn shader_reads(name: &str, source: &str, reads: &[&str]) {
        for read in reads {
            assert!(source.contains(read), "{name} no longer reads `{read}`");
        }
    }

    /// Each per-call kernel's job puts its fields at the words its shader reads them from
    /// (`uvec4`s: x, y, z, w are words 0 to 3, then 4 to 7, ...): a change on either side
    /// fails in the tests below, one per kernel. Every job starts with its pixel (which
    /// `SKIP_JOB` replaces) and stride: this header, and its words.
    const HEADER: JobHeader = JobHeader {
        pixel: 0x1000,
        stride: -0x20,
    };
    const PIXEL: u32 = 0x1000;
    const STRIDE: u32 = -0x20i32 as u32;

    #[test]
    fn itx_job_words_sit_where_the_shader_reads_them() {
        let job = itx::ItxJob {
            header: HEADER,
            coef: 0x3000,
            flags: 0x4000,
        };
        assert_eq!(job.to_words()[..4], [PIXEL, STRIDE, 0x3000, 0x4000]);
        assert_eq!(
            Kernel::Itx(ItxKernel::DcOnly(itx::TxSize::T4)).job_words(),
            4
        );
        shader_reads(
            "itx_main.glsl",
            include_str!("../../shaders/itx_main.glsl"),
            &[
                "uvec4 jobs[]",
                "job.x != SKIP_JOB",
                "int stride = int(job.y);",
                "uint column = job.x + lane;",
                "int(job.z) * 11585",
                "coefs[job.z + uint(k * N) + lane]",
                "(job.w & FROM_FFMPEG)",
            ],
        );
    }

    #[test]
    fn mc_job_words_sit_where_the_shader_reads_them() {
        let job = mc::McJob {
            header: HEADER,
            src: 0x3000,
            src_stride: -0x40,
            params: 0x5000,
            h_taps: [0x6000, 0x7000],
            v_taps: [0x8000, 0x9000],
        };
        let words = [
            PIXEL,
            STRIDE,
            0x3000,
            -0x40i32 as u32,
            0x5000,
            0x6000,
            0x7000,
            0x8000,
            0x9000,
        ];
        assert_eq!(job.to_words()[..9], words);
        assert_eq!(Kernel::Mc.job_words(), 12);
        shader_reads(
            "mc.comp",
            include_str!("../../shaders/mc.comp"),
            &[
                "uint j = 3u * (pc.first_job + job);",
                "uvec4 a = jobs[j];",
                "a.x == SKIP_JOB",
                "int dst_stride = int(a.y);",
                "uint base = a.z;",
                "int ss = int(a.w);",
                "uvec4 b = jobs[j + 1u];",
                "uint p = b.x;",
                "uvec2 htaps = b.yz;",
                "uvec2 vtaps = uvec2(b.w, jobs[j + 2u].x);",
            ],
        );
    }

    #[test]
    fn loop_filter_job_words_sit_where_the_shaders_read_them() {
        let job = lf::LfJob {
            header: HEADER,
            params: 0x3000,
        };
        assert_eq!(job.to_words()[..4], [PIXEL, STRIDE, 0x3000, 0]);
        assert_eq!(Kernel::Lf.job_words(), 4);
        shader_reads(
            "lf.comp",
            include_str!("../../shaders/lf.comp"),
            &[
                "uvec4 jobs[]",
                "jb.x == SKIP_JOB",
                "uint p = jb.z;",
                "int stride = int(jb.y);",
                "uint edge = jb.x + uint(line * along);",
            ],
        );

        let job = lf_sb::LfSbJob {
            header: HEADER,
            params: 0x3000,
            record: 0x4000,
        };
        assert_eq!(job.to_words()[..4], [PIXEL, STRIDE, 0x3000, 0x4000]);
        assert_eq!(Kernel::LfSb.job_words(), 4);
        shader_reads(
            "lf_sb.comp",
            include_str!("../../shaders/lf_sb.comp"),
            &["uvec4 jobs[]", "jb.x == SKIP_JOB"],
        );
        shader_reads(
            "lf_sb_pass.glsl",
            include_str!("../../shaders/lf_sb_pass.glsl"),
            &[
                "int stride = int(jb.y);",
                "uint first = jb.x + uint(line * (columns ? stride : 1));",
                "walk_edges(jb.z, l, false, 0u);",
                "coefs[jb.w + 2u * l]",
            ],
        );
    }

    #[test]
    fn cdef_job_words_sit_where_the_shader_reads_them() {
        let job = cdef::CdefJob {
            header: HEADER,
            window: 0x3000,
            params: 0x4000,
        };
        assert_eq!(job.to_words()[..4], [PIXEL, STRIDE, 0x3000, 0x4000]);
        assert_eq!(Kernel::Cdef.job_words(), 4);
        shader_reads(
            "cdef.comp",
            include_str!("../../shaders/cdef.comp"),
            &[
                "uvec4 jobs[]",
                "jb.x == SKIP_JOB",
                "uint params = jb.w;",
                "window_base = jb.z + ",
                "int stride = int(jb.y);",
                "px[jb.x + uint(y * stride + x)]",
            ],
        );
    }

    /// What every kernel's shader includes: a job whose pixel is SKIP_JOB is skipped, and
    /// marking one so keeps its stride.
    #[test]
    fn a_skipped_job_keeps_its_stride() {
        shader_reads(
            "jobs.glsl",
            include_str!("../../shaders/jobs.glsl"),
            &["const uint SKIP_JOB = 0xffffffffu;"],
        );
        let job = cdef::CdefJob {
            header: HEADER,
            window: 0x3000,
            params: 0x4000,
        };
        let mut words = job.to_words();
        JobHeader::set_pixel(&mut words, u32::MAX);
        assert_eq!(words[0], u32::MAX);
        assert_eq!(JobHeader::of(&words).stride, -0x20);
    }
}
