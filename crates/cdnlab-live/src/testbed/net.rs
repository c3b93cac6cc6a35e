//! Building and tearing down a testbed: one network namespace per node and one per link, veth
//! pairs between them, addresses and routes inside, tbf on each link's two outgoing ends, and
//! the link element between them. Everything is named `cdnlab-{run}-…`; the host's own
//! namespace gets nothing but a guard route (`unreachable` for the testbed's range, so a
//! packet addressed there from the host is refused instead of following the default route out
//! of the machine). A record in `/run/cdnlab-testbed/{run}.json`, written before anything is
//! built, names what the run owns; a watchdog process removes it all if the run dies, whatever
//! kills it, and `cdnlab testbed down` removes what a dead run left.
//!
//! Per link `l` between nodes `a` and `b`:
//!
//! ```text
//!  node a's namespace        link l's namespace                    node b's namespace
//!  [a's address on lo]        wa ──► element ──► wb (tbf)           [b's address on lo]
//!   l{l} ◄════ veth ════►     wa (tbf) ◄── element ◄── wb  ◄════ veth ════► l{l}
//! ```
//!
//! Interfaces are unnumbered: a node's one address sits on its loopback, and its route to every
//! other node goes out of the first link of the shortest path, `via` the neighbour's address
//! `onlink`, with the node's address as source. Every node forwards.

use super::spec::Spec;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// Where each run records what it owns.
pub const STATE_DIR: &str = "/run/cdnlab-testbed";
/// The prefix of everything a testbed names.
pub const PREFIX: &str = "cdnlab-";

/// What a run owns, written before it builds anything.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Record {
    pub run: String,
    pub pid: u32,
    pub range: String,
    pub guard: bool,
    pub namespaces: Vec<String>,
}

/// A testbed that is up. Dropping it tears it down.
pub struct Testbed {
    pub spec: Spec,
    pub run: String,
    exe: PathBuf,
    wires: Vec<(Child, std::io::BufReader<std::process::ChildStdout>)>,
    watchdog: Option<Child>,
    /// The open PM QoS request that keeps the CPUs out of sleep states while the testbed is up
    /// (closing it, even by dying, withdraws it).
    _latency: Option<std::fs::File>,
    record: Record,
    torn: bool,
}

/// What the host lacks to build a testbed, if anything.
pub fn preflight() -> Result<(), crate::Error> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let caps = status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        .unwrap_or(0);
    // capability(7): CAP_NET_ADMIN is bit 12 (links, routes, qdiscs), CAP_SYS_ADMIN bit 21
    // (`ip netns add` mounts the namespace's file).
    if caps & (1 << 12) == 0 || caps & (1 << 21) == 0 {
        return Err(crate::Error::Testbed(
            "the testbed needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN, to make network namespaces, links and qdiscs); run it with sudo. Nothing was built".into(),
        ));
    }
    for (tool, package) in [
        ("ip", "iproute2"),
        ("tc", "iproute2"),
        ("ethtool", "ethtool"),
        ("chrt", "util-linux"),
    ] {
        if which(tool).is_none() {
            return Err(crate::Error::Testbed(format!(
                "the testbed needs `{tool}` (apt-get install {package}). Nothing was built"
            )));
        }
    }
    Ok(())
}

/// `tool` on PATH or in /usr/sbin and /sbin (where iproute2 lives, off a user's PATH).
pub fn which(tool: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin"].map(PathBuf::from))
        .map(|d| d.join(tool))
        .find(|p| p.is_file())
}

fn tool(name: &str) -> PathBuf {
    which(name).unwrap_or_else(|| PathBuf::from(name))
}

/// Runs a command to its end; an error names it and says what it printed.
fn output(cmd: &mut Command) -> Result<String, crate::Error> {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| crate::Error::io(format!("{cmd:?}"), e))?;
    if !out.status.success() {
        return Err(crate::Error::Testbed(format!(
            "{:?} failed ({}): {}",
            cmd,
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Runs `ip` (or `tc`) with a batch of commands on its standard input, in namespace `ns`.
fn batch(program: &str, ns: Option<&str>, lines: &[String]) -> Result<(), crate::Error> {
    if lines.is_empty() {
        return Ok(());
    }
    let mut cmd = Command::new(tool(program));
    if let Some(ns) = ns {
        cmd.args(["-n", ns]);
    }
    cmd.args(["-batch", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .map_err(|e| crate::Error::io(format!("{program} -batch"), e))?;
    let text = lines.join("\n") + "\n";
    child
        .stdin
        .take()
        .expect("piped")
        .write_all(text.as_bytes())
        .map_err(|e| crate::Error::io(format!("{program} -batch"), e))?;
    let out = child
        .wait_with_output()
        .map_err(|e| crate::Error::io(format!("{program} -batch"), e))?;
    if !out.status.success() {
        return Err(crate::Error::Testbed(format!(
            "{program}{} -batch failed: {} (commands: {})",
            ns.map(|n| format!(" -n {n}")).unwrap_or_default(),
            String::from_utf8_lossy(&out.stderr).trim(),
            text.lines().take(4).collect::<Vec<_>>().join("; ")
        )));
    }
    Ok(())
}

/// A fresh run id: 6 hex digits from the clock and the pid (not a seed: it only names things).
fn run_id() -> String {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let x = cdnlab::rng::splitmix64(t.as_nanos() as u64 ^ (std::process::id() as u64) << 40);
    format!("{:06x}", x & 0xff_ffff)
}

/// The namespace of node `i`.
pub fn node_ns(run: &str, i: usize) -> String {
    format!("{PREFIX}{run}-n{i}")
}

/// The namespace of link `l`.
pub fn link_ns(run: &str, l: usize) -> String {
    format!("{PREFIX}{run}-l{l}")
}

/// The interface of link `l` in each of its nodes' namespaces.
pub fn node_if(l: usize) -> String {
    format!("l{l}")
}

/// The MAC address of link `l`'s interface on its `a` (side 0) or `b` (side 1) node: locally
/// administered (02:…), unique per link and side.
pub fn mac(l: usize, side: u8) -> String {
    format!(
        "02:cd:{:02x}:{:02x}:{:02x}:{:02x}",
        (l >> 16) & 0xff,
        (l >> 8) & 0xff,
        l & 0xff,
        side
    )
}

fn range_text(spec: &Spec) -> String {
    format!("{}/{}", spec.range.0, spec.range.1)
}

/// Routes of the host's own namespace (read only), as (destination block, type).
fn host_routes() -> Result<Vec<(String, String)>, crate::Error> {
    let text =
        output(Command::new(tool("ip")).args(["-j", "-4", "route", "show", "table", "all"]))?;
    let routes: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap_or_default();
    Ok(routes
        .iter()
        .filter_map(|r| {
            let dst = r.get("dst")?.as_str()?.to_string();
            let kind = r.get("type").and_then(|t| t.as_str()).unwrap_or("unicast");
            Some((dst, kind.to_string()))
        })
        .collect())
}

fn block(dst: &str) -> Option<(std::net::Ipv4Addr, u8)> {
    if dst == "default" {
        return None;
    }
    let (a, p) = dst.split_once('/').unwrap_or((dst, "32"));
    Some((a.parse().ok()?, p.parse().ok()?))
}

fn alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

fn records() -> Vec<Record> {
    let Ok(dir) = std::fs::read_dir(STATE_DIR) else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok())
        .filter_map(|e| std::fs::read(e.path()).ok())
        .filter_map(|b| serde_json::from_slice(&b).ok())
        .collect()
}

/// Namespaces whose name starts with [`PREFIX`].
fn our_namespaces() -> Vec<String> {
    let Ok(dir) = std::fs::read_dir("/run/netns") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.starts_with(PREFIX))
        .collect()
}

/// Asks the kernel to keep every CPU's wake-up latency under `us` microseconds while the file
/// stays open (PM QoS, /dev/cpu_dma_latency; what cyclictest does). A timer that must wake a
/// halted virtual CPU fires late by the host's wake-up, hundreds of microseconds or more; a CPU
/// that polls in its idle loop instead wakes at once, and still gives way to any work at once.
fn cpu_latency(us: Option<u32>) -> Option<std::fs::File> {
    let us = us?;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/cpu_dma_latency")
        .ok()?;
    f.write_all(&(us as i32).to_ne_bytes()).ok()?;
    Some(f)
}

/// Removes what run `run` owns: its processes, namespaces (their links and qdiscs go with
/// them), guard route and record. Safe to call twice; returns what it removed.
pub fn remove(run: &str) -> Vec<String> {
    let mut gone = Vec::new();
    let record = records().into_iter().find(|r| r.run == run);
    let stem = format!("{PREFIX}{run}-");
    let mut names: Vec<String> = our_namespaces()
        .into_iter()
        .filter(|n| n.starts_with(&stem))
        .collect();
    names.sort();
    for ns in &names {
        // Processes still inside (a server, a client, a link element) die with SIGKILL first,
        // so nothing holds the namespace alive once its name is gone.
        if let Ok(pids) = output(Command::new(tool("ip")).args(["netns", "pids", ns])) {
            let pids: Vec<&str> = pids.split_whitespace().collect();
            if !pids.is_empty() {
                let _ = Command::new("kill")
                    .arg("-9")
                    .args(&pids)
                    .stderr(Stdio::null())
                    .status();
            }
        }
    }
    let lines: Vec<String> = names.iter().map(|n| format!("netns del {n}")).collect();
    if batch("ip", None, &lines).is_err() {
        for n in &names {
            let _ = Command::new(tool("ip"))
                .args(["netns", "del", n])
                .stderr(Stdio::null())
                .status();
        }
    }
    gone.extend(names.iter().map(|n| format!("namespace {n}")));
    if let Some(r) = &record {
        if r.guard
            && !records()
                .iter()
                .any(|o| o.run != r.run && o.range == r.range && alive(o.pid))
        {
            let ok = Command::new(tool("ip"))
                .args(["route", "del", "unreachable", &r.range])
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            if ok {
                gone.push(format!("guard route unreachable {}", r.range));
            }
        }
        let _ = std::fs::remove_file(Path::new(STATE_DIR).join(format!("{run}.json")));
        gone.push(format!("record {STATE_DIR}/{run}.json"));
    }
    gone
}

/// Removes every run whose owner is gone (or every run, with `all`): what `down` does and what
/// each new run does first. Namespaces of ours that no record names are removed too.
pub fn remove_stale(all: bool) -> Vec<String> {
    let mut gone = Vec::new();
    let recs = records();
    for r in &recs {
        if all || !alive(r.pid) {
            gone.extend(remove(&r.run));
        }
    }
    let live: Vec<String> = records()
        .iter()
        .filter(|r| alive(r.pid))
        .map(|r| r.run.clone())
        .collect();
    let mut orphans: Vec<String> = our_namespaces()
        .into_iter()
        .filter_map(|n| {
            let run = n.strip_prefix(PREFIX)?.split('-').next()?.to_string();
            (!live.contains(&run)).then_some(run)
        })
        .collect();
    orphans.sort();
    orphans.dedup();
    for run in orphans {
        gone.extend(remove(&run));
    }
    gone
}

/// Waits until standard input closes (the run that started this watchdog has ended, however
/// it ended), then removes what that run owns.
pub fn watch(run: &str) -> Vec<String> {
    let mut sink = [0u8; 64];
    let mut stdin = std::io::stdin();
    while matches!(stdin.read(&mut sink), Ok(n) if n > 0) {}
    remove(run)
}

impl Testbed {
    /// Builds `spec`'s network. `exe` is the cdnlab binary (it runs the link elements and the
    /// watchdog). On any error what was built is removed before the error returns.
    pub fn up(spec: &Spec, exe: &Path) -> Result<Testbed, crate::Error> {
        preflight()?;
        remove_stale(false);
        let range = range_text(spec);
        for r in records() {
            if super::spec::overlaps(block(&r.range).unwrap_or(spec.range), spec.range) {
                return Err(crate::Error::Testbed(format!(
                    "the range {range} overlaps {} of run {} (pid {}), which is still up; give this testbed another `range`",
                    r.range, r.run, r.pid
                )));
            }
        }
        for (dst, kind) in host_routes()? {
            if let Some(b) = block(&dst)
                && super::spec::overlaps(b, spec.range)
                && !(kind == "unreachable" && dst == range)
            {
                return Err(crate::Error::File {
                    path: spec.source.clone(),
                    message: format!(
                        "range: {range} is not allowed here: this host routes {dst} ({kind}), an address collision; allowed: a private block this host does not use (`ip route show table all` lists them)"
                    ),
                });
            }
        }
        let run = run_id();
        let mut namespaces: Vec<String> = (0..spec.nodes.len()).map(|i| node_ns(&run, i)).collect();
        namespaces.extend((0..spec.links.len()).map(|l| link_ns(&run, l)));
        let record = Record {
            run: run.clone(),
            pid: std::process::id(),
            range: range.clone(),
            guard: true,
            namespaces: namespaces.clone(),
        };
        std::fs::create_dir_all(STATE_DIR).map_err(|e| crate::Error::io(STATE_DIR, e))?;
        let file = Path::new(STATE_DIR).join(format!("{run}.json"));
        std::fs::write(&file, serde_json::to_vec_pretty(&record).expect("a record"))
            .map_err(|e| crate::Error::io(file.display().to_string(), e))?;
        // The watchdog: in its own process group (Ctrl-C on the terminal does not reach it),
        // reading a pipe whose only writer is this process; when the pipe closes it tears the
        // run down, so a SIGKILL'd run leaves nothing either.
        let watchdog = Command::new(exe)
            .args(["testbed", "down", "--run", &run, "--after-parent"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .map_err(|e| {
                crate::Error::io(format!("{} testbed down (the watchdog)", exe.display()), e)
            })?;
        let mut spec = spec.clone();
        // A machine may refuse real-time priority even to root (a control group without a
        // real-time budget): then the elements run at normal priority, and it says so.
        if spec.realtime
            && !Command::new(tool("chrt"))
                .args(["-f", "10", "true"])
                .stdin(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        {
            eprintln!(
                "warning: this machine refuses real-time priority (chrt -f 10 failed); the link elements run at normal priority, and a busy machine will delay frames"
            );
            spec.realtime = false;
        }
        let latency = cpu_latency(spec.cpu_latency);
        let mut tb = Testbed {
            spec,
            run,
            exe: exe.to_path_buf(),
            wires: Vec::new(),
            watchdog: Some(watchdog),
            _latency: latency,
            record,
            torn: false,
        };
        match tb.build() {
            Ok(()) => Ok(tb),
            Err(e) => {
                tb.teardown();
                Err(e)
            }
        }
    }

    fn build(&mut self) -> Result<(), crate::Error> {
        let spec = &self.spec;
        let run = &self.run;
        let ip = tool("ip");
        // The guard route first: from here on the host refuses the range.
        run_cmd(Command::new(&ip).args(["route", "add", "unreachable", &self.record.range]))?;
        batch(
            "ip",
            None,
            &self
                .record
                .namespaces
                .iter()
                .map(|n| format!("netns add {n}"))
                .collect::<Vec<_>>(),
        )?;
        for (k, ns) in self.record.namespaces.iter().enumerate() {
            let node = k < spec.nodes.len();
            // No IPv6 (its router and neighbour solicitations would cross the links too), and
            // no reverse-path filter (routes may be asymmetric).
            run_cmd(Command::new(&ip).args([
                "netns",
                "exec",
                ns,
                "sysctl",
                "-q",
                "-w",
                "net.ipv6.conf.all.disable_ipv6=1",
                "net.ipv6.conf.default.disable_ipv6=1",
                "net.ipv4.conf.all.rp_filter=0",
                "net.ipv4.conf.default.rp_filter=0",
                if node {
                    "net.ipv4.ip_forward=1"
                } else {
                    "net.ipv4.ip_forward=0"
                },
            ]))?;
        }
        for (l, link) in spec.links.iter().enumerate() {
            let lns = link_ns(run, l);
            batch(
                "ip",
                Some(&lns),
                &[
                    format!(
                        "link add wa type veth peer name {} netns {} address {}",
                        node_if(l),
                        node_ns(run, link.a),
                        mac(l, 0)
                    ),
                    format!(
                        "link add wb type veth peer name {} netns {} address {}",
                        node_if(l),
                        node_ns(run, link.b),
                        mac(l, 1)
                    ),
                ],
            )?;
            // Offloads off on every end: the element moves frames as they are on the wire, so
            // a segment must leave TCP at the MSS (no TSO/GSO super-frames) with its checksum
            // filled in (no checksum offload), and arrive unmerged (no GRO).
            for (ns, ifname) in [
                (node_ns(run, link.a), node_if(l)),
                (node_ns(run, link.b), node_if(l)),
                (lns.clone(), "wa".into()),
                (lns.clone(), "wb".into()),
            ] {
                run_cmd(
                    Command::new(&ip)
                        .args(["netns", "exec", &ns])
                        .arg(tool("ethtool"))
                        .args([
                            "-K", &ifname, "tx", "off", "tso", "off", "gso", "off", "gro", "off",
                        ]),
                )?;
            }
            let frames = |dev: &str| {
                // tbf (tc-tbf(8)): the bucket holds one millisecond at the rate, at least
                // two full frames, so a lone packet leaves at once and a flow is paced
                // within a frame; `limit` is the link's queue.
                let burst = ((link.rate / 8.0 / 1e3) as u64).max(2 * super::spec::FRAME_BYTES);
                format!(
                    "qdisc add dev {dev} root tbf rate {}bit burst {burst} limit {}",
                    link.rate.round() as u64,
                    link.queue
                )
            };
            batch("tc", Some(&lns), &[frames("wa"), frames("wb")])?;
            batch(
                "ip",
                Some(&lns),
                &[
                    "link set lo up".into(),
                    "link set wa up".into(),
                    "link set wb up".into(),
                ],
            )?;
        }
        let hops = spec.next_hops();
        for (i, node) in spec.nodes.iter().enumerate() {
            let mut lines = vec![
                "link set lo up".to_string(),
                format!("addr add {}/32 dev lo", node.address),
            ];
            for (l, link) in spec.links.iter().enumerate() {
                if link.a == i || link.b == i {
                    lines.push(format!("link set {} up", node_if(l)));
                }
            }
            // Neighbours are static (each end's MAC is known from its link and side): no ARP
            // crosses the links, so no probe waits a round trip for one and no ARP frame is
            // lost to the link's loss.
            for (l, link) in spec.links.iter().enumerate() {
                let far = if link.a == i {
                    Some((link.b, 1))
                } else if link.b == i {
                    Some((link.a, 0))
                } else {
                    None
                };
                if let Some((j, side)) = far {
                    lines.push(format!(
                        "neigh add {} lladdr {} dev {} nud permanent",
                        spec.nodes[j].address,
                        mac(l, side),
                        node_if(l)
                    ));
                }
            }
            for (d, hop) in hops[i].iter().enumerate() {
                if let Some((l, via)) = hop {
                    lines.push(format!(
                        "route add {}/32 via {} dev {} onlink src {}",
                        spec.nodes[d].address,
                        spec.nodes[*via].address,
                        node_if(*l),
                        node.address
                    ));
                }
            }
            batch("ip", Some(&node_ns(run, i)), &lines)?;
        }
        for (l, link) in spec.links.iter().enumerate() {
            let impair = |seed: u64| {
                vec![
                    format!("{}", link.delay.as_secs_f64() * 1e3),
                    format!("{}", link.jitter.as_secs_f64() * 1e3),
                    format!("{}", link.loss),
                    format!("{}", cdnlab::rng::stream_seed(spec.seed, l as u64, seed)),
                ]
            };
            let (ab, ba) = (impair(0), impair(1));
            let mut child = Command::new(&ip);
            child.args(["netns", "exec", &link_ns(run, l)]);
            if spec.realtime {
                // SCHED_FIFO (sched(7)): a frame's release is not held up by whatever else
                // the machine runs (a test suite, a compiler); the kernel still keeps 5% of
                // each second for other work (sched_rt_runtime_us).
                child.arg(tool("chrt")).args(["-f", "10"]);
            }
            let mut child = child
                .arg(&self.exe)
                .args(["testbed", "wire", "--a", "wa", "--b", "wb"])
                .args([
                    "--delay-ms",
                    &ab[0],
                    "--jitter-ms",
                    &ab[1],
                    "--loss",
                    &ab[2],
                ])
                .args(["--seed-ab", &ab[3], "--seed-ba", &ba[3]])
                .args(["--spin-us", &spec.spin.as_micros().to_string()])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit())
                .spawn()
                .map_err(|e| crate::Error::io("the link element", e))?;
            let out = std::io::BufReader::new(child.stdout.take().expect("piped"));
            self.wires.push((child, out));
        }
        // Each element says "ready" once its sockets are bound; before that, frames would be
        // lost on the wire.
        for (l, (_, out)) in self.wires.iter_mut().enumerate() {
            let mut line = String::new();
            if out.read_line(&mut line).is_err() || line != "ready\n" {
                return Err(crate::Error::Testbed(format!(
                    "the link element of link {l} did not start"
                )));
            }
        }
        Ok(())
    }

    /// A command that runs `program` inside node `i`'s namespace.
    pub fn command(&self, i: usize, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = Command::new(tool("ip"));
        c.args(["netns", "exec", &node_ns(&self.run, i)])
            .arg(program);
        c
    }

    /// Like [`Testbed::cdnlab`], at the link elements' real-time priority when the testbed
    /// has one: for the probes, whose timestamps must not wait for a busy CPU either.
    pub fn cdnlab_realtime(&self, i: usize) -> Command {
        if !self.spec.realtime {
            return self.cdnlab(i);
        }
        let mut c = self.command(i, tool("chrt"));
        c.args(["-f", "10"]).arg(&self.exe);
        c
    }

    /// Starts this cdnlab inside node `i`'s namespace with `args` (a server), and waits until
    /// it says on standard error a line that starts with `ready` (the servers' "... on
    /// http://..." line), at most `limit`. The process is killed when the handle is dropped.
    /// Starts the real origin (`cdnlab live origin`) on node `i` at `addr`: `objects` objects
    /// of `bytes` each (every experiment's objects are of one size), from the scenario's seed.
    pub fn start_origin(
        &self,
        i: usize,
        addr: std::net::SocketAddr,
        objects: u64,
        bytes: u64,
    ) -> Result<Process, crate::Error> {
        let args = [
            "live".to_string(),
            "origin".into(),
            "--listen".into(),
            addr.to_string(),
            "--objects".into(),
            objects.to_string(),
            "--min-size".into(),
            bytes.to_string(),
            "--max-size".into(),
            bytes.to_string(),
            "--seed".into(),
            self.spec.seed.to_string(),
        ];
        self.start(i, &args, "origin on", Duration::from_secs(10))
    }

    pub fn start(
        &self,
        i: usize,
        args: &[String],
        ready: &str,
        limit: Duration,
    ) -> Result<Process, crate::Error> {
        let what = format!(
            "{} on {}",
            args[..2.min(args.len())].join(" "),
            self.spec.nodes[i].name
        );
        let mut child = self
            .cdnlab(i)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| crate::Error::io(&what, e))?;
        let err = child.stderr.take().expect("piped");
        let (tx, rx) = std::sync::mpsc::channel();
        let prefix = ready.to_string();
        // Reads the whole of standard error (so the server never blocks on it), telling the
        // first line that starts with the prefix, or every line said before it.
        std::thread::spawn(move || {
            let mut said = String::new();
            for line in std::io::BufReader::new(err).lines().map_while(Result::ok) {
                if line.starts_with(&prefix) {
                    let _ = tx.send(Ok(()));
                    said.clear();
                } else if said.len() < 4096 {
                    said.push_str(&line);
                    said.push('\n');
                }
            }
            let _ = tx.send(Err(said));
        });
        let mut p = Process { child, what };
        match rx.recv_timeout(limit) {
            Ok(Ok(())) => Ok(p),
            Ok(Err(said)) => {
                let status = p.child.wait().map(|s| s.to_string()).unwrap_or_default();
                Err(crate::Error::Testbed(format!(
                    "{} did not start ({status}): {}",
                    p.what,
                    said.trim()
                )))
            }
            Err(_) => Err(crate::Error::Testbed(format!(
                "{} did not say it was ready within {:.0} s",
                p.what,
                limit.as_secs_f64()
            ))),
        }
    }

    /// A command that runs this cdnlab inside node `i`'s namespace.
    pub fn cdnlab(&self, i: usize) -> Command {
        self.command(i, &self.exe)
    }

    /// What every link element has counted so far, per link and direction (a to b, b to a).
    pub fn wire_counts(&mut self) -> Result<Vec<[super::wire::Counts; 2]>, crate::Error> {
        let mut all = Vec::new();
        for (l, (child, out)) in self.wires.iter_mut().enumerate() {
            let stdin = child.stdin.as_mut().expect("piped");
            let mut line = String::new();
            if stdin
                .write_all(b"counts\n")
                .and_then(|_| stdin.flush())
                .is_err()
                || out.read_line(&mut line).is_err()
            {
                return Err(crate::Error::Testbed(format!(
                    "the link element of link {l} has stopped"
                )));
            }
            all.push(serde_json::from_str(line.trim()).map_err(|e| {
                crate::Error::Testbed(format!(
                    "the link element of link {l}: unreadable counts ({e})"
                ))
            })?);
        }
        Ok(all)
    }

    /// Removes everything this run built; what was removed.
    pub fn teardown(&mut self) -> Vec<String> {
        if self.torn {
            return Vec::new();
        }
        self.torn = true;
        for (w, _) in &mut self.wires {
            let _ = w.kill();
            let _ = w.wait();
        }
        let gone = remove(&self.run);
        if let Some(mut w) = self.watchdog.take() {
            drop(w.stdin.take());
            let _ = w.wait();
        }
        gone
    }
}

/// A server started by [`Testbed::start`]; killed when dropped.
pub struct Process {
    child: Child,
    pub what: String,
}

impl Process {
    /// Whether it is still running.
    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Testbed {
    fn drop(&mut self) {
        self.teardown();
    }
}

fn run_cmd(cmd: &mut Command) -> Result<(), crate::Error> {
    output(cmd).map(|_| ())
}

use std::os::unix::process::CommandExt;

/// On SIGINT, SIGTERM or SIGHUP: removes run `run` and ends the process (exit status 130, as
/// a shell reports an interrupt). The watchdog would remove it too; doing it here first means
/// the command returns only once nothing is left.
pub fn teardown_on_signal(run: String) {
    std::thread::spawn(move || {
        let Ok(rt) = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        else {
            return;
        };
        rt.block_on(async {
            use tokio::signal::unix::{SignalKind, signal};
            let (Ok(mut term), Ok(mut hup)) = (
                signal(SignalKind::terminate()),
                signal(SignalKind::hangup()),
            ) else {
                return;
            };
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
                _ = hup.recv() => {}
            }
            eprintln!("interrupted: removing testbed {run}");
            remove(&run);
            std::process::exit(130);
        });
    });
}
