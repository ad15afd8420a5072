//! What an audit row is about, reduced to something safe to keep: a bash
//! command template, a path class, a tool name or a destination class
//! (design §8). Raw commands, paths, URLs and tool inputs never leave this
//! module.
//!
//! A command template keeps only what a permission rule needs and what
//! cannot carry a secret by its shape: the bare command word, option names,
//! and short lowercase words such as subcommands (`git push origin main`).
//! Everything else — values after options, file names, URLs, quoted text,
//! expansions — becomes `*`, and runs of `*` collapse. Commands whose shape a
//! prefix rule cannot describe (environment prefixes, lists, pipelines,
//! redirections, wrappers, path executables, anything that did not parse)
//! get no template: they are counted under a reason such as `<pipeline>`,
//! which never yields a suggestion.
//!
//! A secret the redactor recognises must never survive as a word. A short,
//! calm command (see [`calm_template`]) is templated as written: nothing in
//! it can give the redactor a finding that a kept word would carry, and
//! building the redaction scanner for it would cost a hook process more than
//! everything else it does. Every other command is redacted first, then
//! templated; a test holds the two paths to the same answer over the
//! corpora.

use std::path::{Component, Path, PathBuf};

use crate::credentials::is_sensitive_path;
use crate::evidence::redact;
use crate::request::Surface;
use crate::shell::{self, Shape};

/// What a subject is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// A bash command template.
    Template,
    /// A bash command without a template; the subject names why.
    NoTemplate,
    /// A path class.
    Path,
    /// A tool name.
    Tool,
    /// A network destination class.
    Network,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Template => "template",
            Kind::NoTemplate => "none",
            Kind::Path => "path",
            Kind::Tool => "tool",
            Kind::Network => "network",
        }
    }

    pub fn parse(s: &str) -> Option<Kind> {
        Some(match s {
            "template" => Kind::Template,
            "none" => Kind::NoTemplate,
            "path" => Kind::Path,
            "tool" => Kind::Tool,
            "network" => Kind::Network,
            _ => return None,
        })
    }
}

/// One subject: its kind and its safe text.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Subject {
    pub kind: Kind,
    pub text: String,
}

impl Subject {
    pub fn new(kind: Kind, text: impl Into<String>) -> Subject {
        Subject {
            kind,
            text: text.into(),
        }
    }
}

/// Budgets for deriving a template from untrusted text.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Longer commands get no template (`<too-long>`) instead of a parse.
    pub max_command_bytes: usize,
    /// Templates with more tokens than this are `<too-long>`.
    pub max_template_tokens: usize,
}

/// Why a bash command has no template. Each is counted, never suggested.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoTemplate {
    Empty,
    TooLong,
    Unparsed,
    Compound,
    Pipeline,
    Redirection,
    EnvPrefix,
    Wrapper,
    PathExecutable,
    DynamicCommand,
    UnsafeCommand,
}

impl NoTemplate {
    pub fn label(self) -> &'static str {
        match self {
            NoTemplate::Empty => "<empty>",
            NoTemplate::TooLong => "<too-long>",
            NoTemplate::Unparsed => "<unparsed>",
            NoTemplate::Compound => "<compound>",
            NoTemplate::Pipeline => "<pipeline>",
            NoTemplate::Redirection => "<redirection>",
            NoTemplate::EnvPrefix => "<env-prefix>",
            NoTemplate::Wrapper => "<wrapper>",
            NoTemplate::PathExecutable => "<path-executable>",
            NoTemplate::DynamicCommand => "<dynamic-command>",
            NoTemplate::UnsafeCommand => "<unsafe-command>",
        }
    }
}

/// The template of one bash command, or why it has none.
pub fn command_template(command: &str, limits: Limits) -> Result<String, NoTemplate> {
    command_template_known(command, limits, None)
}

/// [`command_template`] with whether the command starts another one
/// already known from its analysis ([`starts_another_command`] of the
/// request's one analysis); `None` analyses it here when it matters.
pub fn command_template_known(
    command: &str,
    limits: Limits,
    starts_another: Option<bool>,
) -> Result<String, NoTemplate> {
    let limits = Known {
        limits,
        starts_another,
    };
    if command.trim().is_empty() {
        return Err(NoTemplate::Empty);
    }
    if command.len() > limits.limits.max_command_bytes {
        return Err(NoTemplate::TooLong);
    }
    if let Some(answer) = calm_template(command, limits) {
        return answer;
    }
    // A list or a pipeline gets no template: its reason carries no word of
    // the command, so no secret can reach it and the redaction scanner (most
    // of a hook process's work for such a command) need not be built.
    if let Err(reason @ (NoTemplate::Pipeline | NoTemplate::Compound)) =
        single_simple_words(command)
    {
        return Err(reason);
    }
    template_of(&redact::redact_text(command), limits)
}

/// Longest word a calm command may keep in its template: every provider
/// rule of the redactor matches at least 12 bytes (the shortest are Slack's
/// `xapp-1-a-1-a` and `xoxo-1-1-1-a` shapes; a test reads the rule files
/// and holds this), so no kept word can be a provider secret whole.
const CALM_WORD_BYTES: usize = 11;

/// The template of `command` as written, when that is certainly what the
/// redacted command would give: `None` when it is not certain, and the
/// redacted path decides.
///
/// Calm means every byte is a lowercase ASCII letter, a digit, a space or one
/// of `./~_+-`, which leaves no separator for a secret-named key (`=`, `:`),
/// no URL, no quoting or escape to decode, no JWT, PEM block or mixed-case
/// token; the text holds no `.netrc` entry (`machine`); the command is not
/// one whose arguments the redactor reads as secrets (`mysql -pX`,
/// `htpasswd -b f user X`); and every word the template keeps is at most
/// [`CALM_WORD_BYTES`] long. Values after options are placeholders either
/// way. A command that has no template has none either way: no word of it
/// is kept.
fn calm_template(command: &str, limits: Known) -> Option<Result<String, NoTemplate>> {
    let calm = command.bytes().all(|b| {
        b.is_ascii_lowercase()
            || b.is_ascii_digit()
            || matches!(b, b' ' | b'.' | b'/' | b'~' | b'_' | b'+' | b'-')
    });
    if !calm || command.contains("machine") {
        return None;
    }
    let answer = template_of(command, limits);
    let Ok(template) = &answer else {
        return Some(answer);
    };
    let mut kept = template.split(' ');
    let name = kept.next()?;
    let short = kept.all(|word| word.len() <= CALM_WORD_BYTES);
    (short && name.len() <= CALM_WORD_BYTES && !redact::is_cli_secret_command(name))
        .then_some(answer)
}

/// A template's budgets and what is already known of the command.
#[derive(Debug, Clone, Copy)]
struct Known {
    limits: Limits,
    /// From the command's analysis, when the caller has one.
    starts_another: Option<bool>,
}

impl Known {
    #[cfg(test)]
    fn unknown(limits: Limits) -> Known {
        Known {
            limits,
            starts_another: None,
        }
    }
}

/// The template of a command whose secrets, if any, are already hidden.
/// Whether it starts another command is read from `known` when given: the
/// analysis of the command as written, which redaction cannot change the
/// answer of in a way that keeps a secret (the words kept come from
/// `source`, the redacted text, either way).
fn template_of(source: &str, known: Known) -> Result<String, NoTemplate> {
    let limits = known.limits;
    let words = single_simple_words(source)?;
    let (first, rest) = words.split_first().ok_or(NoTemplate::Empty)?;
    let name = first.clone().ok_or(NoTemplate::DynamicCommand)?;
    if name.contains('/') {
        return Err(NoTemplate::PathExecutable);
    }
    if !is_safe_command_word(&name) {
        return Err(NoTemplate::UnsafeCommand);
    }
    let wraps = known
        .starts_another
        .unwrap_or_else(|| runs_another_command(source));
    if wraps {
        return Err(NoTemplate::Wrapper);
    }
    template_words(name, rest, limits.max_template_tokens)
}

/// The written words of a command whose shape a prefix rule can describe.
fn single_simple_words(source: &str) -> Result<Vec<Option<String>>, NoTemplate> {
    match shell::shape_of(source, &shell::Limits::DEFAULT) {
        Shape::Simple(words) => Ok(words),
        Shape::Empty => Err(NoTemplate::Empty),
        Shape::Unparsed => Err(NoTemplate::Unparsed),
        Shape::Pipeline => Err(NoTemplate::Pipeline),
        Shape::EnvPrefix => Err(NoTemplate::EnvPrefix),
        Shape::Redirection => Err(NoTemplate::Redirection),
        Shape::Compound => Err(NoTemplate::Compound),
    }
}

/// Whether the command starts another one (`sudo make`, `timeout 10 make`,
/// `bash -c …`): a rule for the wrapper would allow whatever it wraps. The
/// analysis decides, from the same command specs the hard denies read; one
/// that did not finish counts as a wrapper (no template, never a guess).
fn runs_another_command(source: &str) -> bool {
    let env = shell::ShellEnv {
        cwd: None,
        home: "/",
        vars: &[],
    };
    starts_another_command(&shell::analyze(source, &env, &shell::Limits::DEFAULT))
}

/// Whether an analysed command starts another one, as the template reads
/// it: an analysis that did not finish counts as a wrapper. The engine
/// asks this of the request's one analysis, so the audit need not analyse
/// a decided command again (only an ingested or after-the-fact event,
/// which vouch never analysed, is read here).
pub fn starts_another_command(analysis: &shell::Analysis) -> bool {
    // A conservative reading is what an unknown program may run, not a
    // command it is known to start: the template stays the program's.
    !analysis.incomplete.is_empty()
        || analysis
            .commands
            .iter()
            .any(|c| c.parent.is_some() && !c.conservative)
}

/// The template of a command word and its arguments (design §8).
fn template_words(
    name: String,
    args: &[Option<String>],
    max_tokens: usize,
) -> Result<String, NoTemplate> {
    let mut out = Tokens::new(name, max_tokens);
    let mut expect_value = false;
    let mut options_ended = false;
    for word in args {
        let Some(text) = word.clone() else {
            // An expansion, glob or substitution: its value is unknown.
            out.star()?;
            expect_value = false;
            continue;
        };
        if !options_ended && text.len() > 1 && text.starts_with('-') {
            options_ended = text == "--";
            expect_value = match option_token(&text) {
                Some(Opt::Kept(kept)) => {
                    out.push(kept)?;
                    true
                }
                Some(Opt::WithValue(kept)) => {
                    out.push(kept)?;
                    false
                }
                None => {
                    // An option-shaped word that could carry a value glued
                    // to it (`-pS3cret`): only its position is kept.
                    out.star()?;
                    false
                }
            };
            continue;
        }
        if expect_value || !is_plain_word(&text) {
            out.star()?;
        } else {
            out.push(text)?;
        }
        expect_value = false;
    }
    Ok(out.finish())
}

/// The template under construction, with runs of `*` collapsed and a token
/// budget: over it, the command is `<too-long>`, never cut short.
struct Tokens {
    parts: Vec<String>,
    max: usize,
}

impl Tokens {
    fn new(first: String, max: usize) -> Tokens {
        Tokens {
            parts: vec![first],
            max: max.max(1),
        }
    }

    fn push(&mut self, token: String) -> Result<(), NoTemplate> {
        if self.parts.len() >= self.max {
            return Err(NoTemplate::TooLong);
        }
        self.parts.push(token);
        Ok(())
    }

    fn star(&mut self) -> Result<(), NoTemplate> {
        if self.parts.last().is_some_and(|p| p == "*") {
            return Ok(());
        }
        self.push("*".to_owned())
    }

    fn finish(self) -> String {
        self.parts.join(" ")
    }
}

enum Opt {
    /// An option name; the next word is its value.
    Kept(String),
    /// `--name=value` as `--name=*`: the value is already attached.
    WithValue(String),
}

/// An option token as kept in a template, or `None` when its shape could
/// hide a value.
fn option_token(text: &str) -> Option<Opt> {
    if let Some((name, _value)) = text.split_once('=') {
        return is_option_name(name).then(|| Opt::WithValue(format!("{name}=*")));
    }
    is_option_name(text).then(|| Opt::Kept(text.to_owned()))
}

/// `--long-name`, a short cluster of up to four letters or digits (`-la`,
/// `-xzvf`, `-O2`, `-20`), or a single-dash lowercase word (`-name`,
/// `-maxdepth`).
fn is_option_name(text: &str) -> bool {
    if text == "--" {
        return true;
    }
    if let Some(long) = text.strip_prefix("--") {
        return (1..=32).contains(&long.len())
            && long.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
            && long
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    }
    let Some(short) = text.strip_prefix('-') else {
        return false;
    };
    let cluster =
        (1..=4).contains(&short.len()) && short.bytes().all(|b| b.is_ascii_alphanumeric());
    let word = (1..=24).contains(&short.len())
        && short.starts_with(|c: char| c.is_ascii_lowercase())
        && short
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    cluster || word
}

/// `^[a-z][a-z-]{0,23}$`: subcommands and short labels (design §8).
fn is_plain_word(text: &str) -> bool {
    (1..=24).contains(&text.len())
        && text.starts_with(|c: char| c.is_ascii_lowercase())
        && text.bytes().all(|b| b.is_ascii_lowercase() || b == b'-')
}

/// A command name fit for a rule: letters, digits and `_.+-`, not random,
/// and not shaped like a password typed at the prompt by mistake: capitals
/// only in a short name (`Rscript`), digits only in a short one
/// (`python3`), never both (`hunter2-GUW3WM`, `Xq7-vB2mK9pL`, a UUID).
fn is_safe_command_word(name: &str) -> bool {
    let upper = name.bytes().any(|b| b.is_ascii_uppercase());
    let digit = name.bytes().any(|b| b.is_ascii_digit());
    let password_like = (upper && (digit || name.len() > 8)) || (digit && name.len() >= 12);
    (1..=64).contains(&name.len())
        && name.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'+' | b'-'))
        && !password_like
        && !redact::looks_random(name.as_bytes())
}

/// Where a path points, as a class (design §8).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathClass {
    Workspace,
    Temp,
    Home,
    External,
    Sensitive,
    Unknown,
}

impl PathClass {
    pub fn as_str(self) -> &'static str {
        match self {
            PathClass::Workspace => "workspace",
            PathClass::Temp => "temp",
            PathClass::Home => "home",
            PathClass::External => "external",
            PathClass::Sensitive => "sensitive",
            PathClass::Unknown => "unknown",
        }
    }
}

/// What a path is judged against.
#[derive(Debug, Clone, Copy, Default)]
pub struct PathContext<'a> {
    pub cwd: Option<&'a str>,
    pub home: Option<&'a str>,
    /// The project root (workspace); `cwd` when unknown.
    pub workspace: Option<&'a Path>,
}

/// Temporary directories.
const TEMP_DIRS: &[&str] = &[
    "/tmp",
    "/var/tmp",
    "/dev/shm",
    "/private/tmp",
    "/private/var/folders",
];

/// Absolute paths that are sensitive wherever they sit.
const SENSITIVE_FILES: &[&str] = &[
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/sudoers",
    "/etc/master.passwd",
];

/// The class of `path` (and of its symlink-resolved form, when given): a
/// sensitive name wins; otherwise the resolved form decides, since that is
/// what is really touched.
pub fn path_class(path: &str, resolved: Option<&str>, ctx: PathContext<'_>) -> PathClass {
    if is_sensitive(path) || resolved.is_some_and(is_sensitive) {
        return PathClass::Sensitive;
    }
    let target = resolved.unwrap_or(path);
    if is_relative_without_base(target, ctx) {
        // Relative to a directory nobody named: the agent's own working
        // directory, unless the path climbs out of it.
        let climbs = Path::new(target)
            .components()
            .any(|c| matches!(c, Component::ParentDir));
        return if climbs {
            PathClass::Unknown
        } else {
            PathClass::Workspace
        };
    }
    let Some(absolute) = absolute_path(target, ctx) else {
        return PathClass::Unknown;
    };
    if SENSITIVE_FILES.iter().any(|f| absolute.starts_with(f)) {
        return PathClass::Sensitive;
    }
    let workspace = ctx
        .workspace
        .map(Path::to_path_buf)
        .or_else(|| ctx.cwd.map(PathBuf::from));
    if workspace.is_some_and(|w| absolute.starts_with(w)) {
        return PathClass::Workspace;
    }
    if TEMP_DIRS.iter().any(|t| absolute.starts_with(t)) {
        return PathClass::Temp;
    }
    if ctx.home.is_some_and(|h| absolute.starts_with(h)) {
        return PathClass::Home;
    }
    PathClass::External
}

fn is_sensitive(path: &str) -> bool {
    if is_sensitive_path(path) {
        return true;
    }
    // Every `.env*` file counts here, templates included: the class only
    // says "handle with care", and no rule is ever suggested from it.
    let name = path.rsplit('/').next().unwrap_or(path);
    name.starts_with(".env") || name.ends_with(".pem") || SENSITIVE_FILES.contains(&path)
}

fn is_relative_without_base(path: &str, ctx: PathContext<'_>) -> bool {
    !path.is_empty()
        && !path.starts_with(['/', '~'])
        && !path.contains(['$', '`'])
        && ctx.cwd.is_none()
        && ctx.workspace.is_none()
}

/// `path` made absolute and normalised lexically, or `None` when that needs
/// something unknown (an expansion, `~user`, a base directory).
fn absolute_path(path: &str, ctx: PathContext<'_>) -> Option<PathBuf> {
    if path.is_empty() || path.contains(['$', '`']) {
        return None;
    }
    let joined = if let Some(rest) = path.strip_prefix("~/").or((path == "~").then_some("")) {
        PathBuf::from(ctx.home?).join(rest)
    } else if path.starts_with('~') {
        return None;
    } else if path.starts_with('/') {
        PathBuf::from(path)
    } else {
        PathBuf::from(ctx.cwd.map(Path::new).or(ctx.workspace)?).join(path)
    };
    let mut out = PathBuf::new();
    for component in joined.components() {
        match component {
            Component::RootDir => out.push("/"),
            Component::Normal(part) => out.push(part),
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir | Component::Prefix(_) => {}
        }
    }
    Some(out)
}

/// The subject of a tool name: the name itself when it is a valid custom
/// tool name, else `<custom-tool>`.
pub fn tool_subject(name: Option<&str>) -> Subject {
    match name {
        Some(name) if is_valid_tool_name(name) => Subject::new(Kind::Tool, name),
        Some(_) | None => Subject::new(Kind::Tool, "<custom-tool>"),
    }
}

/// `^[A-Za-z0-9_.:-]{1,64}$` (design §4).
pub fn is_valid_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b':' | b'-'))
}

/// Where a `host:port` destination points: `loopback`, `private`,
/// `public` or `unknown`. The host itself is never kept.
pub fn destination_class(destination: Option<&str>) -> &'static str {
    let Some(destination) = destination.map(str::trim).filter(|d| !d.is_empty()) else {
        return "unknown";
    };
    let host = host_of(destination).to_ascii_lowercase();
    if host.is_empty() {
        return "unknown";
    }
    if host == "localhost" || host.ends_with(".localhost") {
        return "loopback";
    }
    if let Ok(ip) = host.parse::<std::net::IpAddr>() {
        return match ip {
            std::net::IpAddr::V4(v4) if v4.is_loopback() => "loopback",
            std::net::IpAddr::V4(v4) if v4.is_private() || v4.is_link_local() => "private",
            std::net::IpAddr::V6(v6) if v6.is_loopback() => "loopback",
            std::net::IpAddr::V6(v6) if v6.is_unique_local() || v6.is_unicast_link_local() => {
                "private"
            }
            std::net::IpAddr::V4(_) | std::net::IpAddr::V6(_) => "public",
        };
    }
    if host.ends_with(".local") || host.ends_with(".internal") || !host.contains('.') {
        return "private";
    }
    "public"
}

/// The host of `host:port`, `[v6]:port` or a bare host.
fn host_of(destination: &str) -> &str {
    if let Some(rest) = destination.strip_prefix('[') {
        return rest.split(']').next().unwrap_or_default();
    }
    match destination.rsplit_once(':') {
        // A bare IPv6 address has several colons; keep it whole.
        Some((host, _port)) if !host.contains(':') => host,
        Some(_) | None => destination,
    }
}

/// Everything a subject is derived from, borrowed from a request or event.
#[derive(Debug, Clone, Copy, Default)]
pub struct Action<'a> {
    pub tool: Option<&'a str>,
    pub command: Option<&'a str>,
    pub path: Option<&'a str>,
    pub resolved_path: Option<&'a str>,
    pub destination: Option<&'a str>,
    /// A value with no better field (a pi event's `value` on a tool surface).
    pub value: Option<&'a str>,
    /// Whether `command` starts another command, when its analysis said so
    /// ([`starts_another_command`]).
    pub starts_another: Option<bool>,
}

/// The subject of one action on `surface`.
pub fn subject_of(
    surface: &Surface,
    action: Action<'_>,
    ctx: PathContext<'_>,
    limits: Limits,
) -> Subject {
    match surface {
        Surface::Bash => bash_subject(action.command, action.starts_another, limits),
        Surface::GitPush if action.command.is_some() => {
            bash_subject(action.command, action.starts_another, limits)
        }
        Surface::Read
        | Surface::Write
        | Surface::Edit
        | Surface::Path
        | Surface::ExternalDirectory
        | Surface::Delete => {
            let class = action.path.map_or(PathClass::Unknown, |p| {
                path_class(p, action.resolved_path, ctx)
            });
            Subject::new(Kind::Path, class.as_str())
        }
        Surface::Network => Subject::new(Kind::Network, destination_class(action.destination)),
        Surface::Mcp | Surface::GitPush => tool_subject(action.tool.or(action.value)),
        // A custom tool that names a path is counted by where it points; the
        // tool's name is the surface itself.
        Surface::Custom(name) => match action.path {
            Some(path) => Subject::new(
                Kind::Path,
                path_class(path, action.resolved_path, ctx).as_str(),
            ),
            None => tool_subject(action.tool.or(action.value).or(Some(name))),
        },
    }
}

fn bash_subject(command: Option<&str>, starts_another: Option<bool>, limits: Limits) -> Subject {
    match command_template_known(command.unwrap_or(""), limits, starts_another) {
        Ok(template) => Subject::new(Kind::Template, template),
        Err(why) => Subject::new(Kind::NoTemplate, why.label()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: Limits = Limits {
        max_command_bytes: 4096,
        max_template_tokens: 32,
    };

    fn t(cmd: &str) -> Result<String, NoTemplate> {
        command_template(cmd, LIMITS)
    }

    #[test]
    fn templates_keep_rule_material_only() {
        assert_eq!(t("git status --short").unwrap(), "git status --short");
        assert_eq!(t("ls -la /etc").unwrap(), "ls -la *");
        assert_eq!(
            t("curl --data=@secret.json https://x.io").unwrap(),
            "curl --data=* *"
        );
        assert_eq!(
            t("mysqldump -u root -pS3cretvIh6mZ2j! app").unwrap(),
            "mysqldump -u * app"
        );
        assert_eq!(t("git checkout -- main").unwrap(), "git checkout -- *");
        assert_eq!(t("echo $HOME").unwrap(), "echo *");
        assert_eq!(t("head -20 notes.txt").unwrap(), "head -20 *");
        assert_eq!(
            t("find . -name x -delete").unwrap(),
            "find * -name * -delete"
        );
    }

    #[test]
    fn shapes_without_a_template() {
        assert_eq!(t(""), Err(NoTemplate::Empty));
        assert_eq!(t("(make)"), Err(NoTemplate::Compound));
        assert_eq!(t("{ make; }"), Err(NoTemplate::Compound));
        assert_eq!(t("make &"), Err(NoTemplate::Compound));
        assert_eq!(t("! make"), Err(NoTemplate::Compound));
        assert_eq!(t("sudo make install"), Err(NoTemplate::Wrapper));
        assert_eq!(t("$CMD arg"), Err(NoTemplate::DynamicCommand));
        assert_eq!(t("X=1"), Err(NoTemplate::EnvPrefix));
        // Redacted first, then refused: never a template.
        assert!(t("ghp_pfJBd0Kh8oOOL8dKLzdocJ2isAjIhKtJ0Rlg status").is_err());
        assert_eq!(
            t("1584d8c4fa2815d2802827283e0ad841 run"),
            Err(NoTemplate::UnsafeCommand)
        );
        // A password typed as a command is not a command name.
        assert_eq!(t("hunter2-GUW3WM status"), Err(NoTemplate::UnsafeCommand));
        assert_eq!(t("MIPDQL-BNdHeR"), Err(NoTemplate::UnsafeCommand));
        assert_eq!(t("python3 -V").unwrap(), "python3 -V");
        let long = format!("echo {}", "a ".repeat(40));
        assert_eq!(t(&long), Err(NoTemplate::TooLong));
        let huge = format!("echo {}", "x".repeat(5000));
        assert_eq!(t(&huge), Err(NoTemplate::TooLong));
        assert_eq!(t("echo \"unterminated"), Err(NoTemplate::Unparsed));
    }

    /// Every command of the corpora, and the probe secrets where a template
    /// keeps words or drops values, bare and lowercased.
    fn corpus_commands() -> Vec<String> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let mut commands = Vec::new();
        let mut secrets = Vec::new();
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "jsonl") {
                continue;
            }
            for line in std::fs::read_to_string(&path).unwrap().lines() {
                let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
                    continue;
                };
                for key in ["command", "text", "secret"] {
                    if let Some(s) = v.get(key).and_then(serde_json::Value::as_str) {
                        let into = if key == "secret" {
                            &mut secrets
                        } else {
                            &mut commands
                        };
                        into.push(s.to_owned());
                    }
                }
            }
        }
        for secret in &secrets {
            for s in [secret.clone(), secret.to_ascii_lowercase()] {
                for place in [
                    "{}",
                    "{} status",
                    "deploy {}",
                    "deploy {} now",
                    "deploy --token {}",
                    "deploy -{}",
                    "deploy --{}",
                    "mysql -p{} app",
                    "mysql -u root -p{}",
                    "htpasswd -b users dev {}",
                    "echo machine host login dev password {}",
                    "git push {} main",
                ] {
                    commands.push(place.replace("{}", &s));
                }
            }
        }
        commands
    }

    #[test]
    fn calm_commands_template_as_their_redacted_form_would() {
        let mut calm = 0;
        let mut checked = 0;
        for command in corpus_commands() {
            if command.trim().is_empty() || command.len() > LIMITS.max_command_bytes {
                continue;
            }
            checked += 1;
            let Some(fast) = calm_template(&command, Known::unknown(LIMITS)) else {
                continue;
            };
            calm += 1;
            let full = template_of(&redact::redact_text(&command), Known::unknown(LIMITS));
            match (&fast, &full) {
                (Ok(a), Ok(b)) => assert_eq!(a, b, "{command}"),
                // Neither keeps a word; the reason counted may differ.
                (Err(_), Err(_)) => {}
                _ => panic!("{command}: calm {fast:?}, redacted {full:?}"),
            }
        }
        // The calm path is taken often enough for this to mean something.
        assert!(calm > 500 && checked > calm, "{calm} calm of {checked}");
    }

    #[test]
    fn calm_words_are_shorter_than_any_provider_secret() {
        let rules = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/evidence/redact/rules");
        let mut read = 0;
        for file in ["gitleaks.toml", "vouch.toml"] {
            let text = std::fs::read_to_string(rules.join(file)).unwrap();
            let table: toml::Table = toml::from_str(&text).unwrap();
            for rule in table["rules"].as_array().unwrap() {
                let (Some(id), Some(regex)) = (rule["id"].as_str(), rule.get("regex")) else {
                    continue;
                };
                let hir = regex_automata::util::syntax::parse(regex.as_str().unwrap()).unwrap();
                let shortest = hir.properties().minimum_len().unwrap_or(usize::MAX);
                read += 1;
                // Needs `curl` (a CLI secret command) and a `:`: never calm.
                if id == "curl-auth-user" {
                    continue;
                }
                assert!(
                    shortest > CALM_WORD_BYTES,
                    "{file}: {id} matches {shortest} bytes"
                );
            }
        }
        assert!(read > 200, "{read} rules read");
    }

    #[test]
    fn path_classes() {
        let home = "/home/dev";
        let ws = Path::new("/home/dev/project");
        let ctx = PathContext {
            cwd: Some("/home/dev/project/src"),
            home: Some(home),
            workspace: Some(ws),
        };
        let c = |p: &str| path_class(p, None, ctx);
        assert_eq!(c("main.rs"), PathClass::Workspace);
        assert_eq!(c("../README.md"), PathClass::Workspace);
        assert_eq!(c("/tmp/x"), PathClass::Temp);
        assert_eq!(c("~/notes.md"), PathClass::Home);
        assert_eq!(c("/opt/thing"), PathClass::External);
        assert_eq!(c("~/.ssh/id_ed25519"), PathClass::Sensitive);
        assert_eq!(c(".env.example"), PathClass::Sensitive);
        assert_eq!(c("/etc/shadow"), PathClass::Sensitive);
        assert_eq!(c("$X/y"), PathClass::Unknown);
        assert_eq!(c("~bob/x"), PathClass::Unknown);
        assert_eq!(
            path_class("link", Some("/etc/passwd"), ctx),
            PathClass::External
        );
    }

    #[test]
    fn destinations_are_classes() {
        assert_eq!(destination_class(Some("127.0.0.1:8080")), "loopback");
        assert_eq!(destination_class(Some("[::1]:443")), "loopback");
        assert_eq!(destination_class(Some("localhost:3000")), "loopback");
        assert_eq!(destination_class(Some("10.1.2.3:22")), "private");
        assert_eq!(destination_class(Some("db.internal:5432")), "private");
        assert_eq!(destination_class(Some("example.com:443")), "public");
        assert_eq!(destination_class(None), "unknown");
    }

    #[test]
    fn tool_names() {
        assert_eq!(
            tool_subject(Some("mcp__github__get_issue")).text,
            "mcp__github__get_issue"
        );
        assert_eq!(tool_subject(Some("bad name")).text, "<custom-tool>");
        assert_eq!(tool_subject(None).text, "<custom-tool>");
    }
}
