//! Selection from Python: a Go-With-The-Winner client, and random binary search.

use crate::*;

/// One Go-With-The-Winner client over its candidate servers.
#[pyclass(module = "cdnlab._native")]
pub(crate) struct Gwtw {
    inner: Mutex<(GwtwSelector, Rng)>,
}

#[pymethods]
impl Gwtw {
    #[new]
    #[pyo3(signature = (candidates, tau = cdnlab::select::gwtw::DEFAULT_TAU, probe = "all",
        retrial = "on-shortfall", q = cdnlab::select::gwtw::DEFAULT_Q, best = 1.0, seed = 0))]
    fn new(
        candidates: Vec<u32>,
        tau: usize,
        probe: &str,
        retrial: &str,
        q: f64,
        best: f64,
        seed: u64,
    ) -> PyResult<Self> {
        let cfg = GwtwConfig {
            tau,
            probe: probe.parse::<Probe>().map_err(lib_err)?,
            retrial: retrial.parse::<Retrial>().map_err(lib_err)?,
            pick: Pick::Winner,
            q,
            best,
        };
        let g = GwtwSelector::new(candidates, cfg).map_err(lib_err)?;
        Ok(Gwtw {
            inner: Mutex::new((g, cdnlab::rng::from_seed(seed))),
        })
    }

    /// The servers the next request goes to: one when settled, several while probing.
    fn targets(&self) -> Vec<u32> {
        let mut g = self.lock();
        let (sel, rng) = &mut *g;
        let mut out = Vec::new();
        sel.targets(&NoLoad, rng, &mut out);
        out
    }

    /// Feeds the outcome of a request to `server`: a value (1 hit, 0 miss, or a bit rate), or
    /// None for one that must not count. Returns what changed: None, ("settled", s),
    /// ("retrial", s) or ("moved", from, to).
    #[pyo3(signature = (server, value))]
    fn observe(&self, server: u32, value: Option<f64>) -> PyResult<Option<(String, u32, u32)>> {
        let mut g = self.lock();
        let (sel, rng) = &mut *g;
        if sel.candidates().all(|c| c != server) {
            let c: Vec<u32> = sel.candidates().collect();
            return Err(CdnlabError::new_err(format!(
                "server {server}: not a candidate of this client (candidates {c:?})"
            )));
        }
        if let Some(v) = value
            && !v.is_finite()
        {
            return Err(CdnlabError::new_err(format!(
                "value {v}: allowed a finite number, or None"
            )));
        }
        Ok(match sel.observe(server, value, rng) {
            Event::None => None,
            Event::Settled(s) => Some(("settled".into(), s, s)),
            Event::Retrial(s) => Some(("retrial".into(), s, s)),
            Event::Moved(a, b) => Some(("moved".into(), a, b)),
        })
    }

    /// The server the client is settled on, or None while in trial.
    #[getter]
    fn settled(&self) -> Option<u32> {
        self.lock().0.settled()
    }

    #[getter]
    fn in_trial(&self) -> bool {
        self.lock().0.in_trial()
    }

    #[getter]
    fn candidates(&self) -> Vec<u32> {
        self.lock().0.candidates().collect()
    }
}

impl Gwtw {
    fn lock(&self) -> std::sync::MutexGuard<'_, (GwtwSelector, Rng)> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Random binary search over hash indices 1..=k, one probe at a time.
#[pyclass(module = "cdnlab._native")]
pub(crate) struct RbsSearch {
    inner: Mutex<(cdnlab::dht::search::RbsSearch, Rng, Option<u32>)>,
}

#[pymethods]
impl RbsSearch {
    #[new]
    #[pyo3(signature = (k, seed = 0))]
    fn new(k: u32, seed: u64) -> PyResult<Self> {
        if k == 0 {
            return Err(CdnlabError::new_err(
                "k 0: allowed a whole number >= 1 (hash functions)",
            ));
        }
        Ok(RbsSearch {
            inner: Mutex::new((
                cdnlab::dht::search::RbsSearch::new(k),
                cdnlab::rng::from_seed(seed),
                None,
            )),
        })
    }

    /// The next index to probe, or None when every index has missed.
    fn next(&self) -> Option<u32> {
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let (s, rng, last) = &mut *g;
        *last = s.next(rng);
        *last
    }

    /// The index last named was not there: search below it.
    fn missed(&self) -> PyResult<()> {
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let (s, _, last) = &mut *g;
        match last.take() {
            Some(i) => {
                s.missed(i);
                Ok(())
            }
            None => Err(CdnlabError::new_err(
                "missed() reports a miss on the index next() named: call next() first",
            )),
        }
    }

    /// Probes named so far.
    #[getter]
    fn probes(&self) -> u32 {
        self.inner
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .0
            .probes()
    }
}

/// The random binary search of the library over 1..=k with `present(i)` as the probe: returns
/// (the index served from or None, probes).
#[pyfunction]
#[pyo3(signature = (k, present, seed = 0))]
pub(crate) fn rbs(k: u32, present: &Bound<'_, PyAny>, seed: u64) -> PyResult<(Option<u32>, u32)> {
    let mut rng = cdnlab::rng::from_seed(seed);
    let mut err = None;
    let l = cdnlab::dht::search::rbs(k, &mut rng, |i| {
        if err.is_some() {
            return false;
        }
        match present.call1((i,)).and_then(|r| r.is_truthy()) {
            Ok(b) => b,
            Err(e) => {
                err = Some(e);
                false
            }
        }
    });
    match err {
        Some(e) => Err(e),
        None => Ok((l.served, l.probes)),
    }
}
