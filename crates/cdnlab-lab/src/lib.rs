//! # cdnlab-lab: the experiment machinery
//!
//! Everything between the models (crate `cdnlab`) and a person: scenarios and their sweeps,
//! the results on disk, plots, the paper claims and their report, and trace input. The `cdnlab`
//! command (crate `cdnlab-cli`) parses flags into the plan structs here and prints what comes
//! back; the Python package (crate `cdnlab-py`) builds the same plans from Python values, so
//! both give the same answers and the same error messages. No flag parsing and no printing of
//! results live here; long work reports progress on standard error.
//!
//! ## Layout
//! - [`scenario`]: the scenario file (TOML): experiment, grid, seed, replications, precision
//!   targets, plots; resolved into cells.
//! - [`runner`]: `run` (cells x replications in parallel, resumable, sharded, to a precision
//!   target), `merge` of shard folders, `plot_dir` (re-drawing a finished run).
//! - [`reproduce`]: the registered experiments of the three papers, their claims, the report
//!   (claims.json, report.html) and the scheduler that runs every experiment's cells in one pool.
//! - [`trace`]: trace input ([`trace::TraceInput`], [`trace::stream`]) and what reads traces:
//!   [`trace::replay`], [`trace::mrc`], [`trace::stats`]; [`trace::synthetic`] writes synthetic ones.
//! - [`tp`]: the Transportation Problem on instance files.
//! - [`plot`]: charts as SVG and PNG; [`files`]: atomic writes, folders; [`provenance`]: what
//!   built and ran a result; [`progress`]: progress bars and log lines; [`stop`]: a request
//!   to stop long work early (Python's Ctrl-C); [`error`]: the one error type.

#![forbid(unsafe_code)]

pub mod emulation;
pub mod error;
pub mod files;
pub mod plot;
pub mod progress;
pub mod provenance;
pub mod reproduce;
pub mod runner;
pub mod scenario;
pub mod stop;
pub mod topo;
pub mod tp;
pub mod trace;

pub use error::{Error, Result};
