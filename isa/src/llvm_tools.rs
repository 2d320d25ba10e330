//! Finding the LLVM 22 tools that our tests use as oracles (llvm-mc-22,
//! llvm-objdump-22, llvm-readelf-22, ld.lld-22, llc-22, clang-22, ...).
//!
//! Every crate's tests go through [`require`], so the rule is in one place: when the
//! environment variable `CI` is set, a missing tool is a test failure (panic with a
//! message naming the setup script); otherwise the test prints why it is skipped
//! and the caller returns early. `scripts/setup` installs the tools.

use std::path::PathBuf;
use std::process::Command;

/// Looks for `tool` (e.g. `"llvm-mc-22"`) on `PATH`.
///
/// Returns `None` only outside CI, after printing a skip notice to stderr.
///
/// # Panics
/// When `CI` is set and the tool cannot be run: an oracle test must never pass
/// by not running.
pub fn require(tool: &str) -> Option<PathBuf> {
    if let Some(path) = find(tool) {
        return Some(path);
    }
    if std::env::var_os("CI").is_some() {
        panic!("{tool} is required when CI is set; run scripts/setup to install the LLVM 22 tools");
    }
    eprintln!("note: skipping an oracle check: {tool} not found (run scripts/setup to install it)");
    None
}

/// `tool`'s path if it can be run (`tool --version` succeeds), else `None`.
pub fn find(tool: &str) -> Option<PathBuf> {
    let ok = Command::new(tool).arg("--version").output().map(|o| o.status.success()).unwrap_or(false);
    ok.then(|| PathBuf::from(tool))
}
