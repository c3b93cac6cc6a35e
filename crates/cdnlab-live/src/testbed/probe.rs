//! The project's own link probes, run inside the testbed's namespaces (this machine has
//! neither ping nor iperf3): one-way delay and loss from timestamped UDP datagrams (sender and
//! receiver share the machine's clock, so the delay of each datagram is measured, not half a
//! round trip), and TCP goodput from a bulk transfer.

use serde::{Deserialize, Serialize};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos() as u64
}

/// What the UDP receiver saw.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Datagrams {
    /// Datagrams sent (from the last one's header) and received.
    pub sent: u64,
    pub received: u64,
    /// One-way delay of each received datagram, microseconds, in arrival order.
    pub delays_us: Vec<u64>,
    /// Datagrams that arrived before one sent earlier had (reordered).
    pub reordered: u64,
}

/// Sends `count` datagrams of `size` bytes to `to` at `rate` per second, each carrying its
/// sequence number, the count and its send time: evenly spaced (constant bit rate), or with
/// `poisson = Some(seed)` at exponential gaps of mean 1 / rate (Poisson cross traffic, as the
/// T4 packet model's), drawn from the seed.
pub fn udp_send(
    to: SocketAddr,
    count: u64,
    rate: f64,
    size: usize,
    poisson: Option<u64>,
) -> std::io::Result<()> {
    let sock = UdpSocket::bind("0.0.0.0:0")?;
    let mut buf = vec![0u8; size.max(24)];
    let start = Instant::now();
    let mut rng = cdnlab::rng::stream(poisson.unwrap_or(0), 0, 0);
    let mut at = 0.0f64;
    for seq in 0..count {
        at = match poisson {
            Some(_) => at + cdnlab::workload::arrivals::exponential(&mut rng, 1.0 / rate),
            None => seq as f64 / rate,
        };
        let due = start + Duration::from_secs_f64(at);
        let now = Instant::now();
        if due > now {
            std::thread::sleep(due - now);
        }
        buf[0..8].copy_from_slice(&seq.to_le_bytes());
        buf[8..16].copy_from_slice(&count.to_le_bytes());
        buf[16..24].copy_from_slice(&now_ns().to_le_bytes());
        sock.send_to(&buf, to)?;
    }
    Ok(())
}

/// Receives datagrams on `sock` until `count` arrived or `quiet` passes without one (after
/// the first), or `limit` passes in all. Each datagram's arrival time is the kernel's
/// (SO_TIMESTAMPNS, socket(7): when it reached the socket), so the delay measured is the
/// path's and not also the receiver's own wake-up.
pub fn udp_receive(
    sock: &UdpSocket,
    count: u64,
    quiet: Duration,
    limit: Duration,
) -> std::io::Result<Datagrams> {
    use nix::sys::socket::{
        ControlMessageOwned, MsgFlags, SockaddrStorage, recvmsg, setsockopt, sockopt,
    };
    use std::os::fd::AsRawFd;
    setsockopt(sock, sockopt::ReceiveTimestampns, &true).map_err(std::io::Error::from)?;
    let mut out = Datagrams::default();
    let mut buf = [0u8; 65_536];
    let start = Instant::now();
    let mut highest: Option<u64> = None;
    sock.set_read_timeout(Some(Duration::from_millis(100)))?;
    let mut last = Instant::now();
    while out.received < count && start.elapsed() < limit {
        let mut cmsg = nix::cmsg_space!(nix::sys::time::TimeSpec);
        let mut iov = [std::io::IoSliceMut::new(&mut buf)];
        let got = recvmsg::<SockaddrStorage>(
            sock.as_raw_fd(),
            &mut iov,
            Some(&mut cmsg),
            MsgFlags::empty(),
        );
        match got {
            Ok(msg) if msg.bytes >= 24 => {
                let mut at = now_ns();
                if let Ok(cmsgs) = msg.cmsgs() {
                    for c in cmsgs {
                        if let ControlMessageOwned::ScmTimestampns(ts) = c {
                            at = ts.tv_sec() as u64 * 1_000_000_000 + ts.tv_nsec() as u64;
                        }
                    }
                }
                let word =
                    |i: usize| u64::from_le_bytes(buf[i..i + 8].try_into().expect("8 bytes"));
                let (seq, total, sent) = (word(0), word(8), word(16));
                out.sent = out.sent.max(total);
                out.received += 1;
                out.delays_us.push(at.saturating_sub(sent) / 1000);
                if highest.is_some_and(|h| seq < h) {
                    out.reordered += 1;
                }
                highest = Some(highest.map_or(seq, |h| h.max(seq)));
                last = Instant::now();
            }
            Ok(_) => {}
            Err(nix::errno::Errno::EAGAIN | nix::errno::Errno::EINTR) => {
                if out.received > 0 && last.elapsed() >= quiet {
                    break;
                }
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(out)
}

/// What the TCP receiver measured.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Transfer {
    pub bytes: u64,
    pub seconds: f64,
    /// Bits per second of payload between `warmup` seconds after the first byte and the last.
    pub goodput: f64,
    /// Seconds after the first byte that goodput leaves out.
    pub warmup: f64,
}

/// Sends bytes to `to` as fast as TCP takes them, for `seconds`.
pub fn tcp_send(to: SocketAddr, seconds: f64) -> std::io::Result<u64> {
    let mut s = TcpStream::connect_timeout(&to, Duration::from_secs(5))?;
    let buf = vec![0x5au8; 1 << 16];
    let end = Instant::now() + Duration::from_secs_f64(seconds);
    let mut sent = 0u64;
    s.set_write_timeout(Some(Duration::from_secs(5)))?;
    while Instant::now() < end {
        sent += s.write(&buf)? as u64;
    }
    s.shutdown(std::net::Shutdown::Write)?;
    Ok(sent)
}

/// Accepts one connection on `listener` and reads it to its end; goodput is measured from
/// `warmup` seconds after the first byte (past slow start) to the last byte.
pub fn tcp_receive(
    listener: &TcpListener,
    warmup: f64,
    limit: Duration,
) -> std::io::Result<Transfer> {
    listener.set_nonblocking(false)?;
    let (mut s, _) = listener.accept()?;
    s.set_read_timeout(Some(limit))?;
    let mut buf = vec![0u8; 1 << 16];
    let mut bytes = 0u64;
    let (mut first, mut mark): (Option<Instant>, Option<(Instant, u64)>) = (None, None);
    let mut last = Instant::now();
    loop {
        let n = s.read(&mut buf)?;
        if n == 0 {
            break;
        }
        let now = Instant::now();
        let f = *first.get_or_insert(now);
        if mark.is_none() && now.duration_since(f).as_secs_f64() >= warmup {
            mark = Some((now, bytes));
        }
        bytes += n as u64;
        last = now;
    }
    let f = first.unwrap_or(last);
    let goodput = match mark {
        Some((t, b)) if last > t => (bytes - b) as f64 * 8.0 / last.duration_since(t).as_secs_f64(),
        _ => 0.0,
    };
    Ok(Transfer {
        bytes,
        seconds: last.duration_since(f).as_secs_f64(),
        goodput,
        warmup,
    })
}
