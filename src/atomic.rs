//! Atomic file writes, one helper for the crate: the contents go to a temporary file beside
//! the target (the `tempfile` crate), are flushed to disk, and the file is renamed over the
//! target, so a reader sees the old file or the whole new one, never a part. On Unix the
//! directory is synced too, so the rename itself survives a crash.

use std::io::Write;
use std::path::Path;

/// The directory `path` lives in (`.` for a bare file name).
fn dir_of(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// Writes what `fill` writes to `path` atomically (see the module docs).
pub(crate) fn write_with(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let dir = dir_of(path);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let prefix = format!(".{name}.");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    // The file a reader gets has the mode any other tool's new file would have (0666 less
    // the umask, 0644 under the usual 022) or, when it replaces a file, that file's mode;
    // a temporary file's own 0600 would lock out a teammate, a CI step or a web server.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut tmp = builder.tempfile_in(dir)?;
    if let Ok(old) = std::fs::metadata(path) {
        tmp.as_file().set_permissions(old.permissions())?;
    }
    {
        let mut w = std::io::BufWriter::new(tmp.as_file_mut());
        fill(&mut w)?;
        w.flush()?;
    }
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    #[cfg(unix)]
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Writes `bytes` to `path` atomically (see the module docs).
pub fn write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_with(path, |w| w.write_all(bytes))
}

#[cfg(test)]
mod tests {
    #[test]
    fn replaces_the_whole_file_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.json");
        std::fs::write(&p, b"old contents, longer").unwrap();
        super::write(&p, b"new").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1);
        assert!(super::write(&dir.path().join("no/such/dir/x"), b"y").is_err());
    }

    /// A new file gets 0666 less the umask (this process's, read back by setting it);
    /// a replaced file keeps its mode.
    #[cfg(unix)]
    #[test]
    fn new_files_honour_the_umask_and_replaced_files_keep_their_mode() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        let p = dir.path().join("new.json");
        super::write(&p, b"x").unwrap();
        // Linux says the umask in /proc (other Unixes: `tests/cli.rs` sets one).
        if let Ok(status) = std::fs::read_to_string("/proc/self/status") {
            let umask = status
                .lines()
                .find_map(|l| l.strip_prefix("Umask:"))
                .map(|v| u32::from_str_radix(v.trim(), 8).unwrap())
                .unwrap();
            assert_eq!(mode(&p), 0o666 & !umask);
        }
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
        super::write(&p, b"y").unwrap();
        assert_eq!(mode(&p), 0o640);
    }
}
