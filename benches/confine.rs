//! What `vouch confine` adds to a command (issue 42: median ≤ 3 ms over
//! the bare command): process start to exit of `ls` in a small project,
//! bare and confined (`vouch confine -- ls`), and of `true`, as the
//! process running it: root (capabilities dropped, the system's secrets in
//! `/etc` hidden entry by entry) and, through `setpriv`, an unprivileged
//! user (nobody), as a developer's agent runs. The overhead is the
//! difference of the medians (README, Performance).
//!
//! `cargo bench --bench confine` (short: `-- --warm-up-time 1 --measurement-time 3`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};

use criterion::{Criterion, criterion_group, criterion_main};

/// A small project (a git directory, a `.env`, 40 source files) and a home.
fn scratch() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (home, project) = (root.join("home"), root.join("project"));
    std::fs::create_dir_all(home.join(".aws")).unwrap();
    std::fs::create_dir_all(project.join(".git/objects")).unwrap();
    std::fs::create_dir_all(project.join("src")).unwrap();
    std::fs::write(home.join(".aws/credentials"), "x").unwrap();
    std::fs::write(project.join(".env"), "K=v").unwrap();
    for i in 0..40 {
        std::fs::write(project.join(format!("src/f{i}.rs")), "fn f() {}\n").unwrap();
    }
    for d in [&home, &project, &project.join("src")] {
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    (dir, home, project)
}

/// Runs `argv` in `project` to its end, as `nobody` when asked.
fn run(project: &Path, home: &Path, nobody: bool, argv: &[&str]) {
    let mut cmd = if nobody {
        let mut c = Command::new("/usr/bin/setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"]);
        c.args(argv);
        c
    } else {
        let (program, args) = argv.split_first().unwrap();
        let mut c = Command::new(program);
        c.args(args);
        c
    };
    let status = cmd
        .current_dir(project)
        .env_clear()
        .env("HOME", home)
        .env("PATH", "/usr/bin:/bin")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "{argv:?}");
}

fn bench(c: &mut Criterion) {
    let (_dir, home, project) = scratch();
    let vouch = env!("CARGO_BIN_EXE_vouch");
    let root =
        std::fs::metadata("/proc/self").is_ok_and(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0);
    let users: &[(&str, bool)] = if root && Path::new("/usr/bin/setpriv").exists() {
        &[("root", false), ("user", true)]
    } else {
        &[("user", false)]
    };
    let mut group = c.benchmark_group("confine");
    for (who, nobody) in users {
        for program in [["/usr/bin/ls", "-la"], ["/bin/true", "-"]] {
            let name = Path::new(program[0])
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let bare: Vec<&str> = program.iter().copied().filter(|a| *a != "-").collect();
            let mut confined = vec![vouch, "confine", "--"];
            confined.extend(bare.iter().copied());
            group.bench_function(format!("{who}/{name}/bare"), |b| {
                b.iter(|| run(&project, &home, *nobody, &bare));
            });
            group.bench_function(format!("{who}/{name}/confined"), |b| {
                b.iter(|| run(&project, &home, *nobody, &confined));
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
