//! A bucket's key, (level, kernel, pixel slot, source) in one word ordered as the dispatches
//! run, and the hasher of the table that finds a key's bucket.

use crate::gpu::stream::MAX_SLOTS;
use crate::kernels::Kernel;
use std::hash::Hasher;

/// Most job words one call adds (a 64x64 motion compensation: 64 tiles).
pub(super) const MAX_CALL_WORDS: usize = 64 * 12;

/// Hashes a bucket key with one multiplication: the keys are the recorder's own, so the
/// default hasher's protection against chosen keys only costs time on every call.
#[derive(Default)]
pub(super) struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x100_0000_01b3);
        }
    }

    fn write_u32(&mut self, key: u32) {
        // The product's upper half depends on every key bit; folding it down gives the table
        // (which indexes by the low bits and tags by the high ones) well-mixed bits at both.
        let h = (key as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        self.0 = h ^ (h >> 32);
    }
}

/// How many buckets a batch remembers as pushed to lately (a power of two).
pub(super) const RECENT_BUCKETS: usize = 16;

/// No bucket: `bucket_key` gives no key this high.
pub(super) const NO_BUCKET: (u32, usize) = (u32::MAX, 0);

/// A bucket's key, ordered as the dispatches run: level, kernel, pixel slot, source.
pub(super) fn bucket_key(level: u32, kernel: u8, slot: u8, source: u8) -> u32 {
    debug_assert!((slot as usize) < MAX_SLOTS && (source as usize) < MAX_SLOTS);
    level << 16 | (kernel as u32) << 8 | (slot as u32) << 4 | source as u32
}

pub(super) struct BucketKey {
    pub(super) level: u32,
    pub(super) kernel: Kernel,
    pub(super) slot: usize,
    pub(super) source: usize,
}

pub(super) fn split_key(key: u32) -> BucketKey {
    BucketKey {
        level: key >> 16,
        kernel: Kernel::from_index((key >> 8 & 0xff) as usize).expect("a bucket's kernel"),
        slot: key_slot(key),
        source: (key & 0xf) as usize,
    }
}

/// The pixel slot of a bucket's key alone: what every recorded call asks.
pub(super) fn key_slot(key: u32) -> usize {
    (key >> 4 & 0xf) as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::levels::MAX_LEVELS;
    use crate::testing::Rng;

    /// A key gives back its level, kernel, pixel slot and source; keys sort as the dispatches
    /// run, by level first, then kernel, slot and source; and none reaches `NO_BUCKET`.
    #[test]
    fn a_bucket_key_splits_back_and_sorts_by_level_first() {
        let mut rng = Rng(7);
        for _ in 0..1000 {
            let level = rng.below(MAX_LEVELS as usize) as u32;
            let kernel = rng.below(Kernel::COUNT) as u8;
            let (slot, source) = (rng.below(MAX_SLOTS) as u8, rng.below(MAX_SLOTS) as u8);
            let key = split_key(bucket_key(level, kernel, slot, source));
            assert_eq!(
                (key.level, key.kernel.index(), key.slot, key.source),
                (level, kernel as usize, slot as usize, source as usize)
            );
        }
        let last = (MAX_SLOTS - 1) as u8;
        assert!(bucket_key(1, 0, 0, 0) > bucket_key(0, u8::MAX, last, last));
        assert!(bucket_key(0, 1, 0, 0) > bucket_key(0, 0, last, last));
        assert!(bucket_key(0, 0, 1, 0) > bucket_key(0, 0, 0, last));
        assert!(bucket_key(MAX_LEVELS - 1, u8::MAX, last, last) < NO_BUCKET.0);
    }
}
