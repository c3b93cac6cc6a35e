//! The two system calls the testbed needs that std and our crates do not wrap: a raw
//! `AF_PACKET` socket bound to one interface (packet(7)), and the interface's index. Everything
//! else (namespaces, links, qdiscs) is done with iproute2's `ip` and `tc`, in the run's own
//! namespaces.

#![allow(unsafe_code)]

use std::fs::File;
use std::io;
use std::os::fd::{FromRawFd, OwnedFd};

/// `ETH_P_ALL` in network byte order: every protocol (packet(7)).
const ALL: u16 = (libc::ETH_P_ALL as u16).to_be();
/// `PACKET_IGNORE_OUTGOING` (linux/if_packet.h, Linux 4.20): a socket that sends on an
/// interface would otherwise read its own frames back.
const PACKET_IGNORE_OUTGOING: libc::c_int = 23;

/// A raw packet socket bound to interface `name`, as a file: `read` takes one whole frame
/// (Ethernet header on) that arrived on it, `write` sends one out of it (packet(7): a bound
/// `SOCK_RAW` socket sends to its interface without an address). Frames it sends itself are
/// not read back.
pub fn packet_socket(name: &str, rcvbuf: usize) -> io::Result<File> {
    let index = interface_index(name)?;
    // SAFETY: socket(2) with constant arguments; the result is checked before use.
    let fd = unsafe {
        libc::socket(
            libc::AF_PACKET,
            libc::SOCK_RAW | libc::SOCK_CLOEXEC,
            ALL as i32,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd is a fresh descriptor that nothing else owns.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    let one: libc::c_int = 1;
    // SAFETY: the option value is a c_int that lives through the call, with its size.
    let r = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_PACKET,
            PACKET_IGNORE_OUTGOING,
            (&one as *const libc::c_int).cast(),
            size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    let size = rcvbuf.min(i32::MAX as usize) as libc::c_int;
    // SAFETY: as above. SO_RCVBUFFORCE (root) passes net.core.rmem_max; a failure keeps the
    // default buffer, which only means drops under bursts, so it is not an error.
    unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_RCVBUFFORCE,
            (&size as *const libc::c_int).cast(),
            size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    // SAFETY: an all-zero sockaddr_ll is valid; the fields packet(7) needs are set below.
    let mut addr: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    addr.sll_family = libc::AF_PACKET as u16;
    addr.sll_protocol = ALL;
    addr.sll_ifindex = index;
    // SAFETY: addr is a sockaddr_ll that lives through the call, with its size.
    let r = unsafe {
        libc::bind(
            fd,
            (&addr as *const libc::sockaddr_ll).cast(),
            size_of::<libc::sockaddr_ll>() as libc::socklen_t,
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(File::from(owned))
}

/// The index of interface `name` in this process's network namespace.
pub fn interface_index(name: &str) -> io::Result<i32> {
    let c = std::ffi::CString::new(name)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "an interface name with NUL"))?;
    // SAFETY: c is a NUL-terminated string that lives through the call.
    let index = unsafe { libc::if_nametoindex(c.as_ptr()) };
    if index == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(index as i32)
}
