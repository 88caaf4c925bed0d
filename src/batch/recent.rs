//! [`MostRecent`]: the last few values a lookup found, for the batch's caches of regions.

/// The last few values a lookup found, most recent first: the regions a batch's calls were
/// in lately.
pub(super) struct MostRecent<T: Copy> {
    items: [Option<T>; 4],
}

impl<T: Copy> Default for MostRecent<T> {
    fn default() -> Self {
        MostRecent { items: [None; 4] }
    }
}

impl<T: Copy> MostRecent<T> {
    /// The most recent value `hit` accepts, moved to the front.
    pub(super) fn find(&mut self, mut hit: impl FnMut(&T) -> bool) -> Option<T> {
        let k = self
            .items
            .iter()
            .position(|v| v.as_ref().is_some_and(&mut hit))?;
        self.items[..=k].rotate_right(1);
        self.items[0]
    }

    /// Puts `value` in front, forgetting the oldest.
    pub(super) fn put(&mut self, value: T) {
        self.items.rotate_right(1);
        self.items[0] = Some(value);
    }

    pub(super) fn clear(&mut self) {
        self.items = [None; 4];
    }
}
