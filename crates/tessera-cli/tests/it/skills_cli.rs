//! `tessera skills` against `tessera serve --http --skills DIR`: listing,
//! reading and `--verify`, and a file changed behind the server's back
//! caught (exit 1, what did not match, nothing printed).

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use tessera_testkit::process::{Running, spawn_serving};

/// `tessera serve --http` (killed on drop) and its endpoint URL.
struct Served {
    _child: Running,
    url: String,
}

/// Starts the reference server on a free loopback port and reads its URL
/// from the line it prints once it listens.
fn serve(dir: &Path) -> Served {
    let (child, port) = spawn_serving(
        Command::new(env!("CARGO_BIN_EXE_tessera"))
            .args(["serve", "--http", "127.0.0.1:0", "--skills"])
            .arg(dir),
        Duration::from_secs(30),
    );
    Served {
        _child: Running(child),
        url: format!("http://127.0.0.1:{port}/mcp"),
    }
}

fn tessera(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tessera"))
        .args(args)
        .output()
        .expect("run tessera")
}

#[test]
fn list_read_verify_and_tampering() {
    let dir = std::env::temp_dir().join(format!("tessera-skills-cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("pdf/forms")).unwrap();
    std::fs::write(
        dir.join("pdf/SKILL.md"),
        "---\nname: pdf\ndescription: Fill PDFs\n---\nSee forms/FORMS.md\n",
    )
    .unwrap();
    let forms = dir.join("pdf/forms/FORMS.md");
    std::fs::write(&forms, "field: name\n").unwrap();
    let served = serve(&dir);
    let url = served.url.as_str();

    let out = tessera(&["skills", "list", url]);
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("skill://pdf/SKILL.md") && text.contains("Fill PDFs"),
        "{text}"
    );

    let out = tessera(&["skills", "list", "--verify", url]);
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("ok      skill://pdf/SKILL.md"));

    let out = tessera(&[
        "skills",
        "read",
        "skill://pdf/SKILL.md",
        "forms/FORMS.md",
        url,
    ]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(out.stdout, b"field: name\n");

    let out = tessera(&["skills", "get", "skill://pdf/SKILL.md", url]);
    let entry: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(entry["frontmatter"]["name"], "pdf");

    // Change the file behind the server's back (same size, same modification
    // time, so its reload watch does not notice): the entry is now stale.
    let mtime = std::fs::metadata(&forms).unwrap().modified().unwrap();
    std::fs::write(&forms, "field: NAME\n").unwrap();
    std::fs::File::options()
        .write(true)
        .open(&forms)
        .unwrap()
        .set_modified(mtime)
        .unwrap();

    // A file that does not match its entry: the server broke the protocol (exit 7).
    let out = tessera(&["skills", "list", "--verify", url]);
    assert_eq!(out.status.code(), Some(7), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("FAILED") && err.contains("digest mismatch"),
        "{err}"
    );

    let out = tessera(&[
        "skills",
        "read",
        "skill://pdf/SKILL.md",
        "forms/FORMS.md",
        url,
    ]);
    assert_eq!(out.status.code(), Some(7));
    assert!(out.stdout.is_empty(), "unverified content is never printed");
    assert!(String::from_utf8_lossy(&out.stderr).contains("verification failed"));

    drop(served);
    let _ = std::fs::remove_dir_all(&dir);
}
