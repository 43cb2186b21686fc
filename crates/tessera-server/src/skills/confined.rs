//! Skill files opened confined to their root directory: the path below the
//! root is walked one component at a time with `openat`, never following a
//! symbolic link (`O_NOFOLLOW` on every component, `O_DIRECTORY` on the
//! directories), and only a regular file is read. A file or directory that
//! was replaced by a link after the skills were loaded is refused, not
//! followed out of the root; a FIFO or device swapped in is refused without
//! blocking; and no read takes more than the per-skill size limit.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use nix::fcntl::{OFlag, openat};
use nix::sys::stat::Mode;

/// Opens the regular file at `rel` (path segments, as listed at load time)
/// below `root`. `root` itself may be a link (the configured directory);
/// nothing below it may be.
pub(crate) fn open(root: &Path, rel: &[String]) -> io::Result<File> {
    let Some((last, dirs)) = rel.split_last() else {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "empty path"));
    };
    for seg in rel {
        if seg.is_empty() || seg == "." || seg == ".." || seg.contains('/') || seg.contains('\0') {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{seg:?} is not a path segment"),
            ));
        }
    }
    let dir_flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
    let mut dir = nix::fcntl::open(root, dir_flags, Mode::empty()).map_err(io::Error::from)?;
    for seg in dirs {
        dir = openat(
            &dir,
            seg.as_str(),
            dir_flags | OFlag::O_NOFOLLOW,
            Mode::empty(),
        )
        .map_err(io::Error::from)?;
    }
    // O_NONBLOCK: a FIFO swapped in does not block the open.
    let fd = openat(
        &dir,
        last.as_str(),
        OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC | OFlag::O_NONBLOCK,
        Mode::empty(),
    )
    .map_err(io::Error::from)?;
    let file = File::from(fd);
    if !file.metadata()?.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    Ok(file)
}

/// Reads the file at `rel` below `root` (see [`open`]), at most `limit`
/// bytes: a longer file is an error, not a large allocation.
pub(crate) fn read(root: &Path, rel: &[String], limit: u64) -> io::Result<Vec<u8>> {
    let file = open(root, rel)?;
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("over the limit of {limit} bytes"),
        ));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_below_the_root_are_never_followed() {
        let base = std::env::temp_dir().join(format!("tessera-confined-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let root = base.join("root");
        std::fs::create_dir_all(root.join("skill/sub")).unwrap();
        std::fs::write(root.join("skill/sub/file.md"), b"inside").unwrap();
        std::fs::write(base.join("secret"), b"outside").unwrap();
        let rel = |p: &str| p.split('/').map(str::to_owned).collect::<Vec<_>>();

        assert_eq!(
            read(&root, &rel("skill/sub/file.md"), 100).unwrap(),
            b"inside"
        );
        assert!(read(&root, &rel("skill/sub/file.md"), 3).is_err());
        // A file replaced by a link to a file outside.
        std::fs::remove_file(root.join("skill/sub/file.md")).unwrap();
        std::os::unix::fs::symlink(base.join("secret"), root.join("skill/sub/file.md")).unwrap();
        assert!(read(&root, &rel("skill/sub/file.md"), 100).is_err());
        // A directory replaced by a link to a directory outside.
        std::fs::remove_file(root.join("skill/sub/file.md")).unwrap();
        std::fs::remove_dir(root.join("skill/sub")).unwrap();
        std::fs::create_dir(base.join("elsewhere")).unwrap();
        std::fs::write(base.join("elsewhere/file.md"), b"outside").unwrap();
        std::os::unix::fs::symlink(base.join("elsewhere"), root.join("skill/sub")).unwrap();
        assert!(read(&root, &rel("skill/sub/file.md"), 100).is_err());
        // Dot segments and a directory are refused.
        assert!(read(&root, &rel("skill/../../secret"), 100).is_err());
        assert!(read(&root, &rel("skill"), 100).is_err());
        let _ = std::fs::remove_dir_all(&base);
    }
}
