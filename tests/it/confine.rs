//! `vouch confine` with real programs (docs/confine.md): what it must stop
//! fails at run time — a write, a TCP, UDP, netlink or Unix connection, a
//! signal to a process outside, a read of a credential, a project `.env` or
//! vouch's token, a setuid gain, a secret in the environment — and what
//! must pass through does, byte for byte: standard output and error, the
//! exit status, the working directory.
//!
//! Each test runs the real binary under a scratch `HOME` and project. They
//! need what CI has: Linux with Landlock ABI 6, bash, python3, setpriv.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A scratch machine: a home with credentials, a vouch home with a token,
/// and a project with a `.env`, a git directory and a link to a credential.
struct Scratch {
    _dir: tempfile::TempDir,
    home: PathBuf,
    vouch_home: PathBuf,
    project: PathBuf,
}

fn scratch() -> Scratch {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    // Readable by the unprivileged user of the setuid test.
    std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o755)).unwrap();
    let home = root.join("home");
    let vouch_home = home.join(".config/vouch-home");
    let project = root.join("project");
    std::fs::create_dir_all(home.join(".aws")).unwrap();
    std::fs::create_dir_all(vouch_home.join("state")).unwrap();
    std::fs::create_dir_all(project.join(".git")).unwrap();
    std::fs::create_dir_all(project.join("src")).unwrap();
    std::fs::write(
        home.join(".aws/credentials"),
        "[default]\naws_secret_access_key=HOME-SECRET\n",
    )
    .unwrap();
    std::fs::write(vouch_home.join("state/adapter.token"), "TOKEN-SECRET\n").unwrap();
    std::fs::write(project.join(".env"), "API_KEY=PROJECT-SECRET\n").unwrap();
    std::fs::write(project.join("src/.env.local"), "K=NESTED-SECRET\n").unwrap();
    std::fs::write(project.join("README.md"), "hello\n").unwrap();
    std::os::unix::fs::symlink(home.join(".aws/credentials"), project.join("setup.txt")).unwrap();
    for d in [&home, &project, &project.join("src")] {
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    Scratch {
        _dir: dir,
        home,
        vouch_home,
        project,
    }
}

impl Scratch {
    /// `vouch confine --home VOUCH_HOME -- bash -c SCRIPT` in the project.
    fn confined(&self, script: &str, env: &[(&str, &str)]) -> Output {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_vouch"));
        cmd.arg("confine")
            .arg("--home")
            .arg(&self.vouch_home)
            .args(["--", "/bin/bash", "-c", script]);
        self.run(cmd, env)
    }

    /// The same script, not confined.
    fn bare(&self, script: &str, env: &[(&str, &str)]) -> Output {
        let mut cmd = Command::new("/bin/bash");
        cmd.args(["-c", script]);
        self.run(cmd, env)
    }

    fn run(&self, mut cmd: Command, env: &[(&str, &str)]) -> Output {
        cmd.current_dir(&self.project)
            .env_clear()
            .env("HOME", &self.home)
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("LANG", "C.UTF-8")
            .stdin(Stdio::null());
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.output().unwrap()
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn output_status_and_directory_pass_through_byte_for_byte() {
    let s = scratch();
    let script = "printf 'a\\0b\\n\\xff'; echo to-stderr >&2; pwd; ls -a src; cat README.md; \
                  git --version >/dev/null; exit 7";
    let confined = s.confined(script, &[]);
    let bare = s.bare(script, &[]);
    assert_eq!(
        confined.status.code(),
        Some(7),
        "{}",
        text(&confined.stderr)
    );
    assert_eq!(confined.status.code(), bare.status.code());
    assert_eq!(confined.stdout, bare.stdout);
    assert_eq!(confined.stderr, bare.stderr);
}

#[test]
fn no_write_succeeds_but_to_dev_null() {
    let s = scratch();
    for script in [
        "touch new-file",
        "echo x > README.md",
        "echo x >> README.md",
        "mkdir d",
        "rm README.md",
        "mv README.md moved",
        "ln -s README.md link",
        "chmod 600 README.md",
        "truncate -s 0 README.md",
        "echo x > /tmp/vouch-confine-escape",
        "cp README.md \"$HOME/copied\"",
        "mkfifo f",
    ] {
        let out = s.confined(script, &[]);
        assert!(!out.status.success(), "`{script}` succeeded");
    }
    assert_eq!(
        std::fs::read_to_string(s.project.join("README.md")).unwrap(),
        "hello\n"
    );
    let entries: Vec<_> = std::fs::read_dir(&s.project).unwrap().collect();
    assert_eq!(entries.len(), 5, "something was created: {entries:?}");
    assert!(!Path::new("/tmp/vouch-confine-escape").exists());
    let ok = s.confined("echo x > /dev/null && echo y >/dev/null 2>&1", &[]);
    assert!(ok.status.success(), "{}", text(&ok.stderr));
}

#[test]
fn no_connection_opens() {
    let s = scratch();
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let unix_path = s.project.join("daemon.sock");
    let _unix = std::os::unix::net::UnixListener::bind(&unix_path).unwrap();
    let tcp_port = tcp.local_addr().unwrap().port();
    let udp_port = udp.local_addr().unwrap().port();
    let python = |code: &str| format!("/usr/bin/python3 -c '{code}'");
    for (what, script) in [
        ("tcp", format!("exec 3<>/dev/tcp/127.0.0.1/{tcp_port}")),
        ("udp", format!("echo x > /dev/udp/127.0.0.1/{udp_port}")),
        (
            "netlink",
            python("import socket; socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)"),
        ),
        (
            "packet",
            python("import socket; socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)"),
        ),
        (
            "unix",
            python(&format!(
                "import socket; socket.socket(socket.AF_UNIX).connect(\"{}\")",
                unix_path.display()
            )),
        ),
        (
            "abstract unix",
            python("import socket; socket.socket(socket.AF_UNIX).connect(\"\\0vouch-test\")"),
        ),
    ] {
        let out = s.confined(&script, &[]);
        assert!(!out.status.success(), "{what}: `{script}` succeeded");
    }
    tcp.set_nonblocking(true).unwrap();
    assert!(
        tcp.accept().is_err(),
        "a TCP connection reached the listener"
    );
    let mut buf = [0u8; 8];
    udp.set_nonblocking(true).unwrap();
    assert!(udp.recv(&mut buf).is_err(), "a UDP datagram arrived");
}

#[test]
fn no_signal_or_trace_reaches_a_process_outside() {
    let s = scratch();
    let mut outside = Command::new("/usr/bin/sleep").arg("30").spawn().unwrap();
    let pid = outside.id();
    let out = s.confined(&format!("kill -9 {pid}"), &[]);
    assert!(!out.status.success(), "kill succeeded");
    let out = s.confined(&format!("cat /proc/{pid}/environ"), &[]);
    assert!(
        !out.status.success(),
        "another process's environment was read"
    );
    assert!(
        outside.try_wait().unwrap().is_none(),
        "the process outside died"
    );
    // Its own children it may signal.
    let own = s.confined("sleep 30 & kill $! && wait $!; echo $?", &[]);
    assert_eq!(text(&own.stdout).trim(), "143", "{}", text(&own.stderr));
    outside.kill().unwrap();
    outside.wait().unwrap();
}

#[test]
fn no_sensitive_file_is_read() {
    let s = scratch();
    let token = s.vouch_home.join("state/adapter.token");
    for script in [
        "cat ~/.aws/credentials".to_owned(),
        "cat .env".to_owned(),
        "cat src/.env.local".to_owned(),
        "cat setup.txt".to_owned(),
        "grep -r SECRET .".to_owned(),
        "git diff --no-index ~/.aws/credentials /dev/null".to_owned(),
        format!("cat {}", token.display()),
        "cat /etc/shadow".to_owned(),
    ] {
        let out = s.confined(&script, &[]);
        let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
        assert!(
            !all.contains("SECRET"),
            "`{script}` printed a secret: {all}"
        );
        assert!(!all.contains("root:"), "`{script}` printed /etc/shadow");
    }
    // What is not sensitive in the project stays readable, names included.
    let out = s.confined("cat README.md && ls -a", &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains(".env"), "names are listed");
}

#[test]
fn secrets_in_the_environment_are_left_out() {
    let s = scratch();
    let env = [
        (
            "DATABASE_URL",
            "postgres://app:Sup3r-S3cret-pw@db.internal:5432/app",
        ),
        ("GITHUB_TOKEN", "ghp_0123456789abcdefABCDEF0123456789abcd"),
        ("PLAIN_SETTING", "visible-value"),
    ];
    for script in [
        "echo \"$DATABASE_URL $GITHUB_TOKEN $PLAIN_SETTING\"",
        "cat /proc/self/environ | tr '\\0' '\\n'",
        "/usr/bin/python3 -c 'import os; print(dict(os.environ))'",
        "env",
    ] {
        let out = s.confined(script, &env);
        let all = text(&out.stdout);
        assert!(!all.contains("S3cret"), "`{script}`: {all}");
        assert!(!all.contains("ghp_"), "`{script}`: {all}");
        assert!(
            all.contains("visible-value"),
            "`{script}` lost a plain variable: {all}"
        );
    }
}

#[test]
fn no_privilege_is_gained() {
    let s = scratch();
    // No capability, even for root.
    let out = s.confined(
        "grep -E '^(CapEff|CapPrm|CapBnd|NoNewPrivs)' /proc/self/status",
        &[],
    );
    let status = text(&out.stdout);
    assert!(status.contains("CapEff:\t0000000000000000"), "{status}");
    assert!(status.contains("CapBnd:\t0000000000000000"), "{status}");
    assert!(status.contains("NoNewPrivs:\t1"), "{status}");
    // A setuid-root program run by an unprivileged user stays that user.
    // Programs run only from the system's trees and `PATH`: put it on it.
    let bin_dir = s.project.parent().unwrap().join("bin");
    std::fs::create_dir_all(&bin_dir).unwrap();
    std::fs::set_permissions(&bin_dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let bin = bin_dir.join("id-setuid");
    std::fs::copy("/usr/bin/id", &bin).unwrap();
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o4755)).unwrap();
    let as_nobody = |confined: bool| {
        let mut cmd = Command::new("/usr/bin/setpriv");
        cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups"]);
        if confined {
            cmd.arg(env!("CARGO_BIN_EXE_vouch")).args(["confine", "--"]);
        }
        cmd.arg(&bin).arg("-u");
        let path = format!("{}:/usr/bin:/bin", bin_dir.display());
        let out = s.run(cmd, &[("PATH", &path)]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout).trim().to_owned()
    };
    // The scratch directory may sit on a `nosuid` mount: only a gain seen
    // without confinement makes the confined check meaningful.
    if as_nobody(false) == "0" {
        assert_eq!(as_nobody(true), "65534", "setuid worked under confinement");
    }
}

#[test]
fn nothing_runs_without_a_program_and_the_refusal_is_one_line() {
    let out = Command::new(env!("CARGO_BIN_EXE_vouch"))
        .args(["confine", "--", "/nonexistent/program"])
        .env_clear()
        .env("HOME", "/nonexistent-home")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(127));
    let err = text(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("cannot run `/nonexistent/program`"), "{err}");
}
