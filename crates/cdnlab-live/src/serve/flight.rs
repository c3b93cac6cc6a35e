//! One fetch per key at a time: concurrent callers for a key share the first one's fetch
//! (request coalescing). The call that runs the fetch removes the key's entry when it is done
//! with the result or abandoned (its client went away and the task was cancelled), so no entry
//! outlives its fetch; a waiter whose runner was cancelled takes the fetch over.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex};
use tokio::sync::OnceCell;

/// The fetches under way, by key.
#[derive(Debug)]
pub struct Flights<K, V>(Mutex<HashMap<K, Arc<OnceCell<V>>>>);

impl<K, V> Default for Flights<K, V> {
    fn default() -> Self {
        Flights(Mutex::new(HashMap::new()))
    }
}

impl<K: Hash + Eq + Copy, V: Clone> Flights<K, V> {
    /// Joins the fetch of `key`, or starts one.
    pub fn join(&self, key: K) -> Flight<'_, K, V> {
        let cell = self
            .0
            .lock()
            .expect("flights lock")
            .entry(key)
            .or_default()
            .clone();
        Flight {
            flights: self,
            key,
            cell,
            ran: false,
        }
    }

    /// Fetches under way.
    pub fn len(&self) -> usize {
        self.0.lock().expect("flights lock").len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A caller's part in one key's fetch. Dropping the one that ran the fetch ends it: keep it
/// until the result is stored where later callers look first.
pub struct Flight<'a, K: Hash + Eq + Copy, V> {
    flights: &'a Flights<K, V>,
    key: K,
    cell: Arc<OnceCell<V>>,
    ran: bool,
}

impl<K: Hash + Eq + Copy, V: Clone> Flight<'_, K, V> {
    /// The fetch's result: `fetch` runs if nobody has run it yet (or its runner was cancelled).
    pub async fn result<F, Fut>(&mut self, fetch: F) -> V
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = V>,
    {
        let ran = &mut self.ran;
        self.cell
            .get_or_init(|| {
                *ran = true;
                fetch()
            })
            .await
            .clone()
    }

    /// Whether this call ran the fetch.
    pub fn ran(&self) -> bool {
        self.ran
    }
}

impl<K: Hash + Eq + Copy, V> Drop for Flight<'_, K, V> {
    fn drop(&mut self) {
        if self.ran {
            let mut map = self.flights.0.lock().expect("flights lock");
            if map
                .get(&self.key)
                .is_some_and(|c| Arc::ptr_eq(c, &self.cell))
            {
                map.remove(&self.key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
    use std::time::Duration;

    #[tokio::test]
    async fn concurrent_callers_share_one_fetch_and_no_entry_stays() {
        let flights: Arc<Flights<u64, u64>> = Arc::default();
        let runs = Arc::new(AtomicU32::new(0));
        let tasks: Vec<_> = (0..20)
            .map(|_| {
                let (f, runs) = (flights.clone(), runs.clone());
                tokio::spawn(async move {
                    let mut flight = f.join(7);
                    let v = flight
                        .result(|| async {
                            runs.fetch_add(1, Relaxed);
                            tokio::time::sleep(Duration::from_millis(20)).await;
                            42
                        })
                        .await;
                    (v, flight.ran())
                })
            })
            .collect();
        let mut ran = 0;
        for t in tasks {
            let (v, r) = t.await.unwrap();
            assert_eq!(v, 42);
            ran += u32::from(r);
        }
        assert_eq!((runs.load(Relaxed), ran), (1, 1));
        assert!(flights.is_empty());
    }

    #[tokio::test]
    async fn an_abandoned_fetch_leaves_no_entry() {
        let flights: Arc<Flights<u64, u64>> = Arc::default();
        for id in 0..100 {
            let f = flights.clone();
            let t = tokio::spawn(async move {
                f.join(id)
                    .result(|| async {
                        tokio::time::sleep(Duration::from_secs(60)).await;
                        0
                    })
                    .await
            });
            tokio::time::sleep(Duration::from_millis(1)).await;
            t.abort();
            let _ = t.await;
        }
        assert!(flights.is_empty(), "{} entries left", flights.len());
    }

    #[tokio::test]
    async fn a_waiter_takes_over_when_the_runner_is_cancelled() {
        let flights: Arc<Flights<u64, u64>> = Arc::default();
        let f = flights.clone();
        let runner = tokio::spawn(async move {
            f.join(1)
                .result(|| async {
                    tokio::time::sleep(Duration::from_secs(60)).await;
                    0
                })
                .await
        });
        tokio::time::sleep(Duration::from_millis(5)).await;
        let mut waiter = flights.join(1);
        runner.abort();
        let v = waiter.result(|| async { 9 }).await;
        assert_eq!((v, waiter.ran()), (9, true));
        drop(waiter);
        assert!(flights.is_empty());
    }
}
