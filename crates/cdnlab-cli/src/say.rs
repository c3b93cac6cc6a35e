//! Printing results: every line to standard output goes through [`say`].

/// Prints one line to standard output. A closed pipe (`cdnlab experiments | head`) ends the
/// program quietly, as command-line tools do, instead of panicking.
pub fn say(line: std::fmt::Arguments) {
    use std::io::Write;
    if let Err(e) = writeln!(std::io::stdout().lock(), "{line}") {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("error: writing to standard output: {e}");
        std::process::exit(1);
    }
}

/// `println!` through [`say`].
macro_rules! outln {
    ($($t:tt)*) => {
        $crate::say::say(format_args!($($t)*))
    };
}
pub(crate) use outln;
