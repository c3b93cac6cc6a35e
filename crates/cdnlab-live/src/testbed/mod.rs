//! The emulated multi-host testbed (docs/testbed.md): the live servers and clients on one
//! machine, each node in its own network namespace, joined by links with a rate, a delay, jitter,
//! loss and a queue, so that what they measure crosses a network instead of loopback.
//!
//! | part | what it holds |
//! |---|---|
//! | `spec.rs` | the description (TOML or a real network file), checked before anything is built |
//! | `net.rs` | namespaces, veth, tbf, routes; the run's record, the watchdog, `down` |
//! | `wire.rs` | the userspace link element (delay, jitter, loss) for kernels without netem |
//! | `sys.rs` | the raw packet socket the element reads and writes |
//! | `probe.rs` | the project's own probes: one-way delay and loss over UDP, goodput over TCP |
//! | `fidelity.rs` | every link probed against its configuration |
//! | `admission.rs` | experiment `tp-admission`: blocking with threshold admission, emulated and simulated |
//! | `agree.rs` | emulation against simulation: the claims of kind "emulation" |
//! | `gwtw.rs` | experiment `gwtw-video`: GWTW video users emulated and simulated |
//! | `dht.rs` | experiment `dht`: the DHT of live edges under a flash crowd, emulated and simulated |
//! | `paths.rs` | experiment `tp-paths`: single- against multi-source UDP streaming (T4) |
//! | `segments.rs` | experiment `tp-segments`: T4 with HTTP segment fetches, against the packet model's load |
//! | `steering.rs` | experiment `steering`: the steering policies with real players and emulated sessions, one pathway degrading |
//! | `emulator.rs` | the session emulator: the library's player model over real HTTP, many sessions in one process |

pub mod admission;
pub mod agree;
pub mod dht;
pub mod emulator;
pub mod fidelity;
pub mod gwtw;
pub mod net;
pub mod paths;
pub mod probe;
pub mod segments;
pub mod spec;
pub mod steering;
mod sys;
pub mod wire;

pub use net::Testbed;
pub use spec::{Role, Spec};
