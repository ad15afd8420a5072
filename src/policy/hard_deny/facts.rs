//! What the rules read, computed once per request: the normalized home,
//! working directory and protected locations, and for every command of the
//! analysis its effects (from the command-spec table) with each value
//! resolved to absolute path targets in the directory the command runs in.

use std::cell::RefCell;
use std::rc::Rc;

use crate::shell::effects::{self, Effects};
use crate::shell::spec::Role;
use crate::shell::{Analysis, Command, Limits, Value, glob, path};

use super::DenyContext;
use super::paths::{self, Target};

/// Home, working directory and protected locations, normalized once.
pub(crate) struct Env {
    pub home: String,
    pub cwd: Option<String>,
    /// Lowercased, normalized absolute paths of vouch's own files.
    pub protected: Vec<String>,
    /// Lowercased, normalized protected locations that hold configuration
    /// only (no tokens or key): a recursive read of them reads no secret.
    pub config_only: Vec<String>,
    /// Environment variables whose values vouch knows.
    pub known_vars: Vec<(String, String)>,
}

impl Env {
    /// Home, working directory and variables only: for the rules that
    /// never read the protected locations.
    pub(crate) fn without_protected(ctx: &DenyContext<'_>) -> Self {
        Env {
            home: path::normalize(ctx.home),
            cwd: ctx.cwd.map(path::normalize),
            protected: Vec::new(),
            config_only: Vec::new(),
            known_vars: ctx.protected.vars.clone(),
        }
    }

    pub(crate) fn new(ctx: &DenyContext<'_>) -> Self {
        let home = path::normalize(ctx.home);
        let cwd = ctx.cwd.map(path::normalize);
        let normalize = |p: &String| {
            let absolute = if p.starts_with('/') {
                p.clone()
            } else if let Some(rest) = p.strip_prefix("~/") {
                format!("{home}/{rest}")
            } else {
                format!("{}/{p}", cwd.as_deref().unwrap_or(&home))
            };
            let mut normal = path::normalize(&absolute);
            normal.make_ascii_lowercase();
            normal
        };
        let listed = |list: &[String]| -> Vec<String> {
            list.iter()
                .filter(|p| !p.trim().is_empty())
                .map(normalize)
                .collect()
        };
        let mut protected = listed(&ctx.protected.paths);
        let mut config_only = listed(&ctx.protected.config_only);
        let mut default_config = path::join(&home, ".config/vouch");
        default_config.make_ascii_lowercase();
        // The default configuration directory holds no secrets unless the
        // pipeline lists it (or something inside it, as a state directory
        // under `XDG_STATE_HOME=~/.config` would be) as more than
        // configuration.
        let holds_more = protected
            .iter()
            .any(|p| paths::is_within(p, &default_config) && !config_only.contains(p));
        if !holds_more {
            config_only.push(default_config.clone());
        }
        let mut default_state = path::join(&home, ".local/state/vouch");
        default_state.make_ascii_lowercase();
        protected.push(default_config);
        protected.push(default_state);
        protected.sort();
        protected.dedup();
        config_only.sort();
        config_only.dedup();
        Env {
            home,
            cwd,
            protected,
            config_only,
            known_vars: ctx.protected.vars.clone(),
        }
    }
}

/// One effect of one command, with its targets.
pub(crate) struct Touch {
    pub role: Role,
    pub value: Value,
    pub targets: Vec<Target>,
}

/// Everything the rules read about one analysed command line.
pub(crate) struct Facts<'a> {
    pub analysis: &'a Analysis,
    pub env: &'a Env,
    /// Per command, its effects.
    pub effects: Vec<Effects>,
    /// Per command, its effects' targets once [`Facts::touches`] resolved them.
    touched: RefCell<Vec<Option<Rc<[Touch]>>>>,
    /// Pattern-matching work left before the rules stop matching.
    work_left: u64,
    /// Budgets the rules themselves ran out of.
    pub incomplete: Vec<String>,
    /// Whether the conservative readings of the analysis are judged too
    /// ([`crate::shell::Command::conservative`]).
    conservative: bool,
}

impl<'a> Facts<'a> {
    pub(crate) fn new(analysis: &'a Analysis, env: &'a Env, limits: &Limits) -> Self {
        let effects = analysis.commands.iter().map(effects::effects).collect();
        Facts {
            analysis,
            env,
            effects,
            touched: RefCell::new(vec![None; analysis.commands.len()]),
            work_left: limits.max_match_work,
            incomplete: Vec::new(),
            conservative: false,
        }
    }

    /// The same facts with the analysis's conservative readings judged
    /// too.
    pub(crate) fn with_readings(mut self) -> Self {
        self.conservative = true;
        self
    }

    /// Whether the conservative readings are judged ([`Facts::with_readings`]).
    pub(crate) fn judges_readings(&self) -> bool {
        self.conservative
    }

    /// The commands the rules judge: those that run, and the conservative
    /// readings when [`Facts::with_readings`] asked for them.
    pub(crate) fn commands(&self) -> impl Iterator<Item = (usize, &'a Command)> {
        let readings = self.conservative;
        self.analysis
            .commands
            .iter()
            .enumerate()
            .filter(move |(_, c)| readings || !c.conservative)
    }

    /// Command `index`, when the rules judge it (a conservative reading
    /// only [`Facts::with_readings`]).
    pub(crate) fn command(&self, index: usize) -> Option<&'a Command> {
        self.analysis
            .commands
            .get(index)
            .filter(|c| self.conservative || !c.conservative)
    }

    pub(crate) fn effects_of(&self, index: usize) -> Option<&Effects> {
        self.command(index)?;
        self.effects.get(index)
    }

    /// The effects of command `index` with resolved targets, resolved once
    /// (every category's rules read them).
    pub(crate) fn touches(&self, index: usize) -> Rc<[Touch]> {
        if let Some(Some(done)) = self.touched.borrow().get(index) {
            return Rc::clone(done);
        }
        let (Some(cmd), Some(eff)) = (self.command(index), self.effects.get(index)) else {
            return Rc::from(Vec::new());
        };
        let touches: Rc<[Touch]> = eff
            .items
            .iter()
            .map(|(role, value)| Touch {
                role: *role,
                value: value.clone(),
                targets: paths::resolve(value, &cmd.cwd),
            })
            .collect();
        if let Some(slot) = self.touched.borrow_mut().get_mut(index) {
            *slot = Some(Rc::clone(&touches));
        }
        touches
    }

    /// The values of command `i`'s options `names`, as its spec parses them
    /// (`-Gwheel`, `--groups=sudo`, `--gr sudo`, `-aG sudo`).
    pub(crate) fn option_values(&self, i: usize, names: &[&str]) -> Vec<Value> {
        use crate::shell::Arg;
        use crate::shell::options::OptValue;
        let (Some(cmd), Some(parsed)) = (
            self.command(i),
            self.effects_of(i).and_then(|e| e.parsed.as_ref()),
        ) else {
            return Vec::new();
        };
        let args = cmd.args();
        parsed
            .values(names)
            .into_iter()
            .filter_map(|v| match v {
                OptValue::Next { at } => match args.get(at) {
                    Some(Arg::Field(v)) => Some(v.clone()),
                    _ => None,
                },
                OptValue::Attached { at, offset } => match args.get(at) {
                    Some(Arg::Field(v)) => {
                        let head = v
                            .candidates()
                            .first()?
                            .known_prefix()
                            .get(..offset)?
                            .to_owned();
                        crate::shell::effects::after_prefix(v, &head)
                    }
                    _ => None,
                },
            })
            .collect()
    }

    /// The text command `i` writes, when it is known: `echo`/`printf`
    /// arguments (with `\n` and `\t` as the escapes they usually are), its
    /// known standard input (`tee`, `cat <<EOF`), or the text a `sed`
    /// script inserts (each `s` command's replacement, `a`/`i`/`c` text;
    /// what `sed` only matches is not written).
    pub(crate) fn written_text(&self, i: usize) -> Option<String> {
        let cmd = self.command(i)?;
        let known = |a: &crate::shell::Arg| a.as_known().unwrap_or("").to_owned();
        match cmd.name()? {
            "echo" | "printf" => Some(
                cmd.args()
                    .iter()
                    .map(known)
                    .collect::<Vec<_>>()
                    .join(" ")
                    .replace("\\n", "\n")
                    .replace("\\t", " "),
            ),
            "sed" | "gsed" => {
                let scripts: Vec<String> = self
                    .effects_of(i)?
                    .with(&[Role::Value])
                    .chain(self.option_values(i, &["e", "expression"]).iter())
                    .map(|v| v.as_known().map(sed_inserted_text))
                    .collect::<Option<Vec<_>>>()?;
                (!scripts.is_empty()).then(|| scripts.join("\n"))
            }
            _ => cmd
                .stdin_text
                .as_ref()
                .and_then(|v| v.as_known())
                .map(str::to_owned),
        }
    }

    /// The operands of command `i` as its spec parses them.
    pub(crate) fn operand_values(&self, i: usize) -> Vec<Value> {
        use crate::shell::Arg;
        let (Some(cmd), Some(parsed)) = (
            self.command(i),
            self.effects_of(i).and_then(|e| e.parsed.as_ref()),
        ) else {
            return Vec::new();
        };
        parsed
            .operands()
            .into_iter()
            .filter_map(|at| match cmd.args().get(at) {
                Some(Arg::Field(v)) => Some(v.clone()),
                _ => None,
            })
            .collect()
    }

    /// Could `target` name exactly `path`?
    pub(crate) fn names(&mut self, target: &Target, path: &str) -> bool {
        match target {
            Target::Exact(p) => p == path,
            Target::Pattern(t) => self.charge(t, path.len()) && glob::path_may_match(t, path),
            Target::Partial(_) => false,
        }
    }

    /// Could `target` name `base` or something below it?
    pub(crate) fn reaches(&mut self, target: &Target, base: &str) -> bool {
        match target {
            Target::Exact(p) => paths::is_within(p, base),
            Target::Pattern(t) => self.charge(t, base.len()) && glob::may_reach(t, base),
            Target::Partial(_) => false,
        }
    }

    /// Could `target` name `path` or one of its ancestors (so that acting
    /// on the whole tree reaches `path`)?
    pub(crate) fn covers(&mut self, target: &Target, path: &str) -> bool {
        match target {
            Target::Exact(p) => paths::is_within(path, p),
            Target::Pattern(t) => {
                self.charge(t, path.len().saturating_mul(4)) && glob::may_cover(t, path)
            }
            Target::Partial(_) => false,
        }
    }

    /// Charges pattern-matching work; false (and recorded) once spent.
    pub(crate) fn charge(&mut self, pattern: &crate::shell::Text, subject_len: usize) -> bool {
        let cost = glob::cost(pattern, subject_len);
        if cost > self.work_left {
            if self.incomplete.is_empty() {
                self.incomplete.push(
                    "pattern matching against protected locations ran out of its budget (budget `analysis.max_match_work`)"
                        .to_owned(),
                );
            }
            return false;
        }
        self.work_left -= cost;
        true
    }
}

/// Reads `chars` from `k` up to the next unescaped `delim`, returning what
/// was read (`\n` as a newline, other escapes as the character).
fn read_delimited(chars: &[char], k: &mut usize, delim: char) -> String {
    let mut part = String::new();
    while let Some(&c) = chars.get(*k) {
        *k += 1;
        if c == '\\' {
            if let Some(&n) = chars.get(*k) {
                *k += 1;
                if n == 'n' {
                    part.push('\n');
                } else {
                    part.push(n);
                }
            }
            continue;
        }
        if c == delim {
            break;
        }
        part.push(c);
    }
    part
}

/// The text a `sed` script puts into the file: the replacement of each
/// `s` command and the text of `a`, `i` and `c`. Addresses, regular
/// expressions and the other commands write nothing of their own.
pub(crate) fn sed_inserted_text(script: &str) -> String {
    let chars: Vec<char> = script.chars().collect();
    let mut out = String::new();
    let mut k = 0;
    let delimited = |k: &mut usize, delim: char| read_delimited(&chars, k, delim);
    while let Some(&c) = chars.get(k) {
        match c {
            ' ' | '\t' | '\n' | ';' | '{' | '}' | '!' | ',' | '$' | '0'..='9' | '~' | '+' => {
                k += 1;
            }
            '/' => {
                k += 1;
                delimited(&mut k, '/');
            }
            '\\' => {
                // `\cREGEXc`: an address with its own delimiter.
                k += 1;
                if let Some(&d) = chars.get(k) {
                    k += 1;
                    delimited(&mut k, d);
                }
            }
            '#' => {
                while chars.get(k).is_some_and(|c| *c != '\n') {
                    k += 1;
                }
            }
            's' | 'y' => {
                k += 1;
                let Some(&d) = chars.get(k) else { break };
                k += 1;
                delimited(&mut k, d);
                let replacement = delimited(&mut k, d);
                if c == 's' {
                    out.push_str(&replacement);
                    out.push('\n');
                }
                // Flags (`g`, `w FILE`) run to the end of the command.
                while chars.get(k).is_some_and(|c| !matches!(c, ';' | '\n' | '}')) {
                    k += 1;
                }
            }
            'a' | 'i' | 'c' => {
                k += 1;
                let mut text = String::new();
                while let Some(&c) = chars.get(k) {
                    k += 1;
                    if c == '\n' {
                        break;
                    }
                    text.push(c);
                }
                let text = text.trim_start();
                let text = text.strip_prefix('\\').unwrap_or(text).trim_start();
                out.push_str(&text.replace("\\n", "\n"));
                out.push('\n');
            }
            _ => {
                // Any other command (`d`, `p`, `q`, `r FILE`, `w FILE`, `e`):
                // to the end of the command.
                while chars.get(k).is_some_and(|c| !matches!(c, ';' | '\n' | '}')) {
                    k += 1;
                }
                if chars.get(k).is_some() {
                    k += 1;
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::sed_inserted_text;

    #[test]
    fn sed_writes_replacements_and_inserted_text() {
        assert_eq!(
            sed_inserted_text("s/^#\\?PermitRootLogin.*/PermitRootLogin yes/"),
            "PermitRootLogin yes\n"
        );
        assert_eq!(
            sed_inserted_text("s/^PermitRootLogin yes/PermitRootLogin no/"),
            "PermitRootLogin no\n"
        );
        assert_eq!(
            sed_inserted_text("1i auth sufficient pam_permit.so"),
            "auth sufficient pam_permit.so\n"
        );
        assert_eq!(sed_inserted_text("/PermitRootLogin/d"), "");
        assert_eq!(sed_inserted_text("$a export X=0"), "export X=0\n");
    }
}
