//! A job's words, as every kernel's job is encoded for the job buffer.

/// A job's words in the job buffer: the first [`job_words`](super::Kernel::job_words) of them
/// are used. Each per-call kernel's job is a struct beside its CPU reference
/// ([`ItxJob`](super::itx::ItxJob), [`McJob`](super::mc::McJob), [`LfJob`](super::lf::LfJob),
/// [`LfSbJob`](super::lf_sb::LfSbJob), [`CdefJob`](super::cdef::CdefJob)) that encodes to
/// these words and back.
pub type Job = [u32; 12];

/// What every kernel's job starts with (words 0 and 1): the pixel it writes first, as a byte
/// offset into its pixel buffer, and the stride in bytes. Generic code rewrites any job's
/// pixel (a job taken out again, a block copied through the staging buffer), whatever its
/// kernel, so these are read and written apart from the rest.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct JobHeader {
    pub pixel: u32,
    pub stride: i32,
}

impl JobHeader {
    /// The header of a job's words (a whole [`Job`], or one job's words in a bucket).
    pub fn of(words: &[u32]) -> JobHeader {
        JobHeader {
            pixel: words[0],
            stride: words[1] as i32,
        }
    }

    /// Writes the header into a job's words.
    pub fn write(self, words: &mut [u32]) {
        words[0] = self.pixel;
        words[1] = self.stride as u32;
    }

    /// Sets only the pixel of a job's words (`SKIP_JOB` marks a job taken out again).
    pub fn set_pixel(words: &mut [u32], pixel: u32) {
        words[0] = pixel;
    }

    /// A job's words with this header and zeros after it (for the kernels' `to_words`).
    pub fn job(self) -> Job {
        let mut words = Job::default();
        self.write(&mut words);
        words
    }
}
