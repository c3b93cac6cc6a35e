//! `cdnlab live client`.

use super::*;
use crate::say::outln;
use cdnlab_lab::{Error, Result};
use cdnlab_live::client::{Users, UsersConfig};
use clap::Args;
use std::net::SocketAddr;
use std::time::Duration;

#[derive(Debug, Args)]
pub(super) struct ClientArgs {
    /// Edge addresses, comma-separated.
    #[arg(long, value_delimiter = ',', required = true)]
    edges: Vec<SocketAddr>,
    /// Users.
    #[arg(long, default_value_t = 16)]
    users: usize,
    /// Candidate edges per user.
    #[arg(long, default_value_t = 2)]
    k: usize,
    /// Seconds to run.
    #[arg(long, default_value_t = 20.0)]
    duration: f64,
    /// Print the final per-user states as JSON.
    #[arg(long, conflicts_with = "jsonl")]
    json: bool,
    /// Print JSON lines for programs: each second's sample ({"t", "at_best", "settled",
    /// "requests", "failures"}), then {"users": [final per-user states]}.
    #[arg(long)]
    jsonl: bool,
    #[command(flatten)]
    user: UserArgs,
}

pub(super) async fn run_client(a: &ClientArgs) -> Result<()> {
    let duration = seconds("duration", a.duration)?;
    let u = &a.user;
    let users = Users::start(UsersConfig {
        edges: a.edges.clone(),
        users: a.users,
        k: a.k,
        gwtw: u.gwtw(),
        objects_per_user: u.objects_per_user,
        alpha: u.alpha,
        measure: u.model(),
        interval: u.interval(),
        timeout: Duration::from_secs(5),
        seed: u.seed,
    })
    .map_err(live_err)?;
    let t0 = tokio::time::Instant::now();
    let mut next = Duration::from_secs(1);
    while next <= duration {
        tokio::time::sleep_until(t0 + next).await;
        let s = users.snapshot();
        let n = s.len() as f64;
        let sample = cdnlab_live::demo::Sample {
            t: next.as_secs_f64(),
            at_best: s.iter().filter(|u| u.at_best).count() as f64 / n,
            settled: s.iter().filter(|u| u.settled.is_some()).count() as f64 / n,
            requests: s.iter().map(|u| u.requests).sum::<u64>(),
            failures: s.iter().map(|u| u.failures).sum::<u64>(),
        };
        if a.jsonl {
            outln!("{}", json_line(&sample)?);
        } else {
            outln!(
                "t {:>5.1} s  at best {:.3}  settled {:.3}  requests {}  failures {}",
                sample.t,
                sample.at_best,
                sample.settled,
                sample.requests,
                sample.failures
            );
        }
        next += Duration::from_secs(1);
    }
    let last = users.snapshot();
    users.stop().await;
    if a.jsonl {
        outln!("{}", json_line(&serde_json::json!({ "users": last }))?);
    }
    if a.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&last).map_err(|e| Error::Failed(e.to_string()))?
        );
    }
    Ok(())
}

fn json_line(v: &impl serde::Serialize) -> Result<String> {
    serde_json::to_string(v).map_err(|e| Error::Failed(e.to_string()))
}
