//! Caches from Python: the replay of a trace (`cdnlab cache-replay`), the policies, and one
//! cache driven request by request.

use crate::*;

/// Replays a trace through every (policy, size): one dict per (policy, size), with the keys of
/// `cdnlab cache-replay --json`.
#[pyfunction]
#[pyo3(signature = (trace, policies, sizes, size_unit = None, format = "oracle-general",
    threads = None, csv_id = 1, csv_size = None, csv_time = None, csv_header = false,
    csv_delimiter = ",", csv_id_text = false, admission = "all", sample = None,
    sample_size = None, ttl = None, csv_ttl = None, sample_seed = 0, estimator = "adj"))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn replay<'py>(
    py: Python<'py>,
    trace: PathBuf,
    policies: &Bound<'py, PyAny>,
    sizes: &Bound<'py, PyAny>,
    size_unit: Option<&str>,
    format: &str,
    threads: Option<usize>,
    csv_id: usize,
    csv_size: Option<usize>,
    csv_time: Option<usize>,
    csv_header: bool,
    csv_delimiter: &str,
    csv_id_text: bool,
    admission: &str,
    sample: Option<f64>,
    sample_size: Option<usize>,
    ttl: Option<&Bound<'py, PyAny>>,
    csv_ttl: Option<usize>,
    sample_seed: u64,
    estimator: &str,
) -> PyResult<Vec<Bound<'py, PyDict>>> {
    check_threads(threads)?;
    check_sample_seed(sample_seed, sample.is_some() || sample_size.is_some())?;
    let ttl = parse_ttl(ttl)?;
    // Checked in the command's order: policies, unit, sizes.
    let policies = lab_replay::parse_policies(&items(policies, "policies")?).map_err(to_py)?;
    let asked = size_unit
        .map(str::parse::<Unit>)
        .transpose()
        .map_err(lib_err)?;
    let sizes = lab_replay::parse_sizes(&items(sizes, "sizes")?, "sizes").map_err(to_py)?;
    let unit = lab_replay::size_unit(&sizes, asked, "sizes").map_err(to_py)?;
    let plan = ReplayPlan {
        input: crate::trace::csv_input(
            trace,
            format,
            csv_id,
            csv_size,
            csv_time,
            csv_ttl,
            csv_header,
            csv_delimiter,
            csv_id_text,
        )?,
        policies,
        sizes,
        unit,
        admission: admission
            .parse()
            .map_err(|e| CdnlabError::new_err(format!("admission: {e}")))?,
        threads,
        sample: lab_replay::Sampling::from_args(sample, sample_size, ("sample", "sample_size"))
            .map_err(to_py)?,
        sample_seed,
        style: ArgStyle::Python,
        ttl,
        estimator: parse_estimator(estimator)?,
    };
    let rows = interruptible(py, || lab_replay::replay(&plan).map(|r| r.rows))?;
    rows.iter()
        .map(|r| {
            // The keys of REPLAY_COLUMNS, in order.
            dict!(py,
                "trace" => &r.trace, "format" => r.format, "policy" => r.policy.name(),
                "size" => r.size, "size_fraction" => r.size_fraction, "size_unit" => r.size_unit,
                "admission" => &r.admission, "ttl" => &r.ttl, "sample_rate" => r.sample_rate,
                "sample_seed" => r.sample_seed, "miniature_size" => r.miniature_size,
                "requests" => r.requests, "hits" => r.hits, "misses" => r.misses,
                "expired" => r.expired, "expired_bytes" => r.expired_bytes,
                "miss_ratio" => r.miss_ratio, "hit_ratio" => r.hit_ratio, "bytes" => r.bytes,
                "hit_bytes" => r.hit_bytes, "miss_bytes" => r.miss_bytes,
                "byte_miss_ratio" => r.byte_miss_ratio, "byte_hit_ratio" => r.byte_hit_ratio,
                "read_seconds" => r.read_seconds,
                "sim_seconds" => r.sim_seconds, "mreq_per_s" => r.mreq_per_s,
                "cached_objects" => r.cached_objects, "cache_heap_bytes" => r.cache_heap_bytes,
                "heap_bytes_per_cached_object" => r.heap_bytes_per_cached_object,
                "working_set_objects" => r.working_set_objects,
                "working_set_bytes" => r.working_set_bytes, "peak_rss_bytes" => r.peak_rss_bytes,
                "warnings" => &r.warnings,
            )
        })
        .collect()
}

/// A miss-ratio curve as `cdnlab mrc` computes it (LRU's in one pass, any policy's by full or
/// miniature replays): one dict per size, with the keys of `cdnlab mrc --json`.
#[pyfunction]
#[pyo3(signature = (trace, sizes = None, size_unit = None, sample = None, sample_size = None,
    exact_too = false, format = "oracle-general", policy = "lru", replay = false,
    threads = None, sample_seed = 0, estimator = "adj"))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn mrc<'py>(
    py: Python<'py>,
    trace: PathBuf,
    sizes: Option<&Bound<'py, PyAny>>,
    size_unit: Option<&str>,
    sample: Option<f64>,
    sample_size: Option<usize>,
    exact_too: bool,
    format: &str,
    policy: &str,
    replay: bool,
    threads: Option<usize>,
    sample_seed: u64,
    estimator: &str,
) -> PyResult<Vec<Bound<'py, PyDict>>> {
    use cdnlab_lab::trace::mrc::{self as lab_mrc, MrcPlan};
    check_threads(threads)?;
    let sampled = sample.is_some() || sample_size.is_some();
    check_sample_seed(sample_seed, sampled)?;
    let policy: Policy = policy.parse().map_err(lib_err)?;
    let asked = size_unit
        .map(str::parse::<Unit>)
        .transpose()
        .map_err(lib_err)?;
    let (sizes, unit) = match sizes {
        Some(s) => {
            let (sizes, unit) =
                lab_mrc::parse_sizes(&items(s, "sizes")?, asked, "sizes").map_err(to_py)?;
            (Some(sizes), unit)
        }
        None => (None, asked.unwrap_or(Unit::Objects)),
    };
    if sample.is_some() && sample_size.is_some() {
        return Err(CdnlabError::new_err(
            "sample and sample_size: give one (a rate, or a number of objects)",
        ));
    }
    let plan = MrcPlan {
        input: crate::trace::trace_input(trace, format)?,
        sizes,
        unit,
        sample,
        sample_size,
        sample_seed,
        exact_too,
        policy,
        by_replay: replay,
        threads,
        style: ArgStyle::Python,
        estimator: parse_estimator(estimator)?,
    };
    let m = interruptible(py, || lab_mrc::mrc(&plan))?;
    (0..m.sizes.len())
        .map(|i| {
            // The keys of `cdnlab mrc --json`.
            dict!(py,
                "policy" => m.policy.name(),
                "size" => m.sizes[i], "size_unit" => m.unit.name(),
                "miss_ratio" => m.miss_ratio[i],
                "byte_miss_ratio" => m.byte_miss_ratio.as_ref().map(|b| b[i]),
                "exact_miss_ratio" => m.exact.as_ref().map(|e| e[i]),
                "sample" => sample, "sample_size" => sample_size,
                "sample_seed" => sampled.then_some(sample_seed), "final_rate" => m.final_rate,
                "method" => &m.method, "requests" => m.requests, "objects" => m.objects,
                "seconds" => m.seconds, "exact_seconds" => m.exact_seconds,
                "warnings" => &m.warnings,
            )
        })
        .collect()
}

/// A sample seed other than 0 only with a sample to draw (as `--sample-seed` requires
/// `--sample` or `--sample-size`).
/// `estimator`'s name as an [`Estimator`], naming the argument when it is not one.
fn parse_estimator(name: &str) -> PyResult<cdnlab::cache::strata::Estimator> {
    name.parse()
        .map_err(|e| CdnlabError::new_err(format!("estimator: {e}")))
}

fn check_sample_seed(seed: u64, sampled: bool) -> PyResult<()> {
    if seed != 0 && !sampled {
        return Err(CdnlabError::new_err(format!(
            "sample_seed {seed}: a seed draws a sample; give sample or sample_size"
        )));
    }
    Ok(())
}

/// The keys of [`mrc`]'s rows, in order.
#[pyfunction]
pub(crate) fn mrc_columns() -> Vec<&'static str> {
    cdnlab_lab::trace::mrc::MRC_COLUMNS.to_vec()
}

/// Every policy name, in the order `policies="all"` runs them.
#[pyfunction]
pub(crate) fn policies() -> Vec<&'static str> {
    Policy::ALL.iter().map(|p| p.name()).collect()
}

/// One cache driven request by request.
#[pyclass(module = "cdnlab._native")]
pub(crate) struct Cache {
    inner: Mutex<Box<dyn cdnlab::cache::Cache + Send>>,
    policy: Policy,
    capacity: Capacity,
}

#[pymethods]
impl Cache {
    #[new]
    #[pyo3(signature = (policy, capacity, unit = "objects"))]
    fn new(policy: &str, capacity: u64, unit: &str) -> PyResult<Self> {
        let policy: Policy = policy.parse().map_err(lib_err)?;
        let unit: Unit = unit.parse().map_err(lib_err)?;
        let capacity = Capacity::new(capacity, unit).map_err(lib_err)?;
        Ok(Cache {
            inner: Mutex::new(policy.build(capacity)),
            policy,
            capacity,
        })
    }

    /// Requests object `id` of `size` bytes; True on a hit. `next_access` (the index of the
    /// object's next request, -1 for none) is read by `belady` only.
    #[pyo3(signature = (id, size = 1, next_access = -1))]
    fn access(&self, id: u64, size: u32, next_access: i64) -> PyResult<bool> {
        if self.policy.offline() && next_access < -1 {
            return Err(CdnlabError::new_err(format!(
                "next_access {next_access}: allowed the index of the next request, or -1"
            )));
        }
        let r = Request {
            next_access,
            ..Request::new(0, id, size)
        };
        Ok(self.lock().access_req(&r))
    }

    /// Whether `id` is cached (not counted as an access).
    fn __contains__(&self, id: u64) -> bool {
        self.lock().contains(id)
    }

    /// Cached objects.
    fn __len__(&self) -> usize {
        self.lock().len()
    }

    /// Capacity units in use.
    #[getter]
    fn used(&self) -> u64 {
        self.lock().used()
    }

    #[getter]
    fn capacity(&self) -> u64 {
        self.capacity.amount
    }

    #[getter]
    fn unit(&self) -> &'static str {
        self.capacity.unit.name()
    }

    #[getter]
    fn policy(&self) -> &'static str {
        self.policy.name()
    }

    fn __repr__(&self) -> String {
        format!(
            "Cache({:?}, {}, unit={:?})",
            self.policy.name(),
            self.capacity.amount,
            self.capacity.unit.name()
        )
    }
}

impl Cache {
    fn lock(&self) -> std::sync::MutexGuard<'_, Box<dyn cdnlab::cache::Cache + Send>> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The columns of a replay's rows, in order.
#[pyfunction]
pub(crate) fn replay_columns() -> Vec<&'static str> {
    lab_replay::REPLAY_COLUMNS.to_vec()
}

/// Replays a trace through edge caches and a shared parent, as `cdnlab cache-hierarchy` does:
/// one dict per (parent size, tier), with the keys of `cdnlab cache-hierarchy --json`.
#[pyfunction]
#[pyo3(signature = (trace, edge_size, parent_sizes, edges = 4, route = "hash",
    edge_policy = "lru", parent_policy = "lru", edge_admission = "all",
    parent_admission = "all", size_unit = None, ttl = None, format = "oracle-general",
    threads = None, csv_id = 1, csv_size = None, csv_time = None, csv_header = false,
    csv_delimiter = ",", csv_id_text = false, csv_ttl = None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn hierarchy<'py>(
    py: Python<'py>,
    trace: PathBuf,
    edge_size: &Bound<'py, PyAny>,
    parent_sizes: &Bound<'py, PyAny>,
    edges: usize,
    route: &str,
    edge_policy: &str,
    parent_policy: &str,
    edge_admission: &str,
    parent_admission: &str,
    size_unit: Option<&str>,
    ttl: Option<&Bound<'py, PyAny>>,
    format: &str,
    threads: Option<usize>,
    csv_id: usize,
    csv_size: Option<usize>,
    csv_time: Option<usize>,
    csv_header: bool,
    csv_delimiter: &str,
    csv_id_text: bool,
    csv_ttl: Option<usize>,
) -> PyResult<Vec<Bound<'py, PyDict>>> {
    use cdnlab_lab::trace::hierarchy::{self as lab_h, HierarchyPlan, TierSpec};
    check_threads(threads)?;
    let asked = size_unit
        .map(str::parse::<Unit>)
        .transpose()
        .map_err(lib_err)?;
    let edge =
        lab_replay::parse_sizes(&[edge_size.str()?.to_string()], "edge_size").map_err(to_py)?;
    let parent = lab_replay::parse_sizes(&items(parent_sizes, "parent_sizes")?, "parent_sizes")
        .map_err(to_py)?;
    let all: Vec<_> = edge.iter().chain(&parent).copied().collect();
    let admission = |s: &str, what: &str| {
        s.parse()
            .map_err(|e| CdnlabError::new_err(format!("{what}: {e}")))
    };
    let plan = HierarchyPlan {
        input: crate::trace::csv_input(
            trace,
            format,
            csv_id,
            csv_size,
            csv_time,
            csv_ttl,
            csv_header,
            csv_delimiter,
            csv_id_text,
        )?,
        unit: lab_replay::size_unit(&all, asked, "edge_size and parent_sizes").map_err(to_py)?,
        edges,
        edge: TierSpec {
            policy: edge_policy.parse().map_err(lib_err)?,
            size: edge[0],
            admission: admission(edge_admission, "edge_admission")?,
        },
        route: route.parse().map_err(to_py)?,
        parent: TierSpec {
            policy: parent_policy.parse().map_err(lib_err)?,
            size: parent.first().copied().unwrap_or(edge[0]),
            admission: admission(parent_admission, "parent_admission")?,
        },
        parent_sizes: parent,
        ttl: parse_ttl(ttl)?,
        threads,
        style: ArgStyle::Python,
    };
    let rows = interruptible(py, || lab_h::hierarchy(&plan))?;
    rows.iter()
        .map(|r| {
            // The keys of HIERARCHY_COLUMNS, in order.
            dict!(py,
                "parent_size" => r.parent_size, "tier" => &r.tier, "policy" => &r.policy,
                "size" => r.size, "size_unit" => r.size_unit, "requests" => r.requests,
                "hits" => r.hits, "hit_ratio" => r.hit_ratio, "expired" => r.expired,
                "bytes" => r.bytes, "hit_bytes" => r.hit_bytes,
                "byte_hit_ratio" => r.byte_hit_ratio, "served_share" => r.served_share,
                "served_byte_share" => r.served_byte_share,
            )
        })
        .collect()
}

/// The keys of [`hierarchy`]'s rows, in order.
#[pyfunction]
pub(crate) fn hierarchy_columns() -> Vec<&'static str> {
    cdnlab_lab::trace::hierarchy::HIERARCHY_COLUMNS.to_vec()
}

/// A TTL from Python: seconds (a whole number) or a rule (a string).
fn parse_ttl(ttl: Option<&Bound<'_, PyAny>>) -> PyResult<Option<cdnlab::cache::ttl::Ttl>> {
    let text = ttl
        .map(|t| match t.extract::<u64>() {
            Ok(n) => Ok(n.to_string()),
            Err(_) => t.extract::<String>().map_err(|_| {
                CdnlabError::new_err(format!(
                    "ttl: {t}; allowed a whole number of seconds or a rule: {}",
                    cdnlab::cache::ttl::Ttl::FORMS
                ))
            }),
        })
        .transpose()?;
    lab_replay::parse_ttl(text.as_deref(), ArgStyle::Python).map_err(to_py)
}
