//! An engine's state per queue, bound to one incarnation of the queue: the context's serial
//! ([`crate::firmware::queues`]). A queue destroyed and created again under the same id, or
//! after a reset, has a new serial, so its state starts fresh.

use std::collections::BTreeMap;

/// State of type `S` per queue id, each tagged with the serial of the queue it belongs to.
#[derive(Debug, Clone)]
pub(crate) struct PerQueue<S> {
    map: BTreeMap<u16, (u64, S)>,
}

impl<S> Default for PerQueue<S> {
    fn default() -> Self {
        Self { map: BTreeMap::new() }
    }
}

impl<S> PerQueue<S> {
    /// The state of queue `id` in its incarnation `serial`, made by `fresh` when there is none
    /// (or only a dead incarnation's).
    pub(crate) fn get_mut(&mut self, id: u16, serial: u64, fresh: impl FnOnce() -> S) -> &mut S {
        let live = self.map.get(&id).is_some_and(|(s, _)| *s == serial);
        if !live {
            self.map.insert(id, (serial, fresh()));
        }
        let (_, state) = self.map.get_mut(&id).expect("inserted above");
        state
    }

    /// The state of queue `id` in its incarnation `serial`, if the engine has any.
    pub(crate) fn get(&self, id: u16, serial: u64) -> Option<&S> {
        self.map.get(&id).filter(|(s, _)| *s == serial).map(|(_, state)| state)
    }

    /// Every state kept, by id, with its serial (live or not: the caller checks).
    pub(crate) fn iter(&self) -> impl Iterator<Item = (u16, u64, &S)> {
        self.map.iter().map(|(&id, (serial, s))| (id, *serial, s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_incarnation_starts_fresh() {
        let mut q = PerQueue::<u32>::default();
        *q.get_mut(1, 10, || 0) += 5;
        assert_eq!(*q.get_mut(1, 10, || 0), 5);
        assert_eq!(q.get(1, 10), Some(&5));
        assert_eq!(q.get(1, 11), None, "another incarnation has no state yet");
        assert_eq!(*q.get_mut(1, 11, || 7), 7, "and gets a fresh one");
        assert_eq!(q.iter().map(|(id, serial, s)| (id, serial, *s)).collect::<Vec<_>>(), [(1, 11, 7)]);
    }
}
