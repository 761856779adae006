//! What a server holds: its process's memory and its folder on disk.

use std::path::Path;

use engram_tests::Server;

/// The server process's resident memory, now and at its peak, in MiB.
pub fn rss_mib(pid: u32) -> (f64, f64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next()?.parse::<f64>().ok())
            .map_or(f64::NAN, |kib| kib / 1024.0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// The size of the server's folder (database, WAL, index), in MiB.
pub fn disk_mib(server: &Server) -> f64 {
    fn size(path: &Path) -> u64 {
        match std::fs::metadata(path) {
            Ok(meta) if meta.is_dir() => std::fs::read_dir(path)
                .into_iter()
                .flatten()
                .flatten()
                .map(|entry| size(&entry.path()))
                .sum(),
            Ok(meta) => meta.len(),
            Err(_) => 0,
        }
    }
    let dir = server.index_dir();
    size(dir.parent().unwrap_or(&dir)) as f64 / (1024.0 * 1024.0)
}
