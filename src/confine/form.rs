//! The confined form of a command: the argv an inert allow asks the
//! harness to run instead (`/usr/local/bin/vouch confine -- /usr/bin/bash
//! -c '<command>'`), and that argv as one shell command line whose every
//! byte the harness's shell reads back exactly.
//!
//! Quoting: a word made only of `A-Z a-z 0-9 _ . / : - + ,` stays bare (no
//! shell gives those a meaning inside a word); any other word is cut at each
//! `'` and `\`, the runs between them go in single quotes, and each `'` is
//! written `\'` and each `\` `\\` outside the quotes. So no quoted run holds
//! a quote or a backslash (fish reads `\\` and `\'` inside single quotes),
//! no two quoted runs touch (zsh's `RC_QUOTES` reads `''` as a quote), and
//! a newline or any other byte inside quotes is literal in bash, zsh, dash
//! and fish alike. `tests/it/confine_form.rs` runs the quoted form through
//! real bash and checks the argv it gives.

use std::path::Path;

use serde::Serialize;
use serde_json::Value;

/// What the harness runs in place of an inert command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Confined {
    /// The program and its arguments: vouch's absolute path, `confine`,
    /// where vouch's files are, `--`, then bash's absolute path, `-c` and
    /// the command as the agent wrote it.
    pub argv: Vec<String>,
    /// `argv` as one shell command line ([`quote`]d word by word): what the
    /// adapters put in the tool call's `command`.
    pub command: String,
    /// The tool call's input as the request kept it (its timeout and
    /// background flags; the adapter moves the command and description out)
    /// with `command` set to [`Confined::command`], for the harnesses whose
    /// rewrite replaces the whole input. Not part of the decision JSON.
    #[serde(skip)]
    pub input: Option<Value>,
}

/// Where vouch's files are, as the deciding process knew them: passed on
/// to `vouch confine` so it reads the same trusted configuration
/// (`inert.deny_paths`) and hides the same state directory.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Locations<'a> {
    /// `--home DIR` (or `VOUCH_HOME` outside hooks).
    pub home: Option<&'a Path>,
    /// `--config FILE`.
    pub config: Option<&'a Path>,
}

impl Confined {
    /// The confined form of `command`, run by bash at `bash` under the vouch
    /// binary at `exe`. `None` when a path is not UTF-8 (it could not travel
    /// in JSON) or the command holds a NUL byte (no argv can).
    pub fn new(
        exe: &Path,
        bash: &Path,
        at: &Locations<'_>,
        command: &str,
        input: Option<&Value>,
    ) -> Option<Confined> {
        if command.contains('\0') {
            return None;
        }
        let mut argv = vec![exe.to_str()?.to_owned(), "confine".to_owned()];
        if let Some(home) = at.home {
            argv.push("--home".to_owned());
            argv.push(home.to_str()?.to_owned());
        }
        if let Some(config) = at.config {
            argv.push("--config".to_owned());
            argv.push(config.to_str()?.to_owned());
        }
        argv.push("--".to_owned());
        argv.push(bash.to_str()?.to_owned());
        argv.push("-c".to_owned());
        argv.push(command.to_owned());
        let line = argv.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" ");
        let mut map = match input {
            Some(Value::Object(map)) => map.clone(),
            Some(
                Value::Null
                | Value::Bool(_)
                | Value::Number(_)
                | Value::String(_)
                | Value::Array(_),
            )
            | None => serde_json::Map::new(),
        };
        map.insert("command".to_owned(), Value::String(line.clone()));
        let input = Some(Value::Object(map));
        Some(Confined {
            argv,
            command: line,
            input,
        })
    }
}

/// Bytes that mean nothing to any shell inside a word.
fn is_plain(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | ':' | '-' | '+' | ',')
}

/// One word as a shell reads it back exactly (see the module doc).
pub fn quote(word: &str) -> String {
    if !word.is_empty() && word.chars().all(is_plain) {
        return word.to_owned();
    }
    if word.is_empty() {
        return "''".to_owned();
    }
    let mut out = String::with_capacity(word.len() + 8);
    let mut run = String::new();
    let flush = |run: &mut String, out: &mut String| {
        if !run.is_empty() {
            out.push('\'');
            out.push_str(run);
            out.push('\'');
            run.clear();
        }
    };
    for c in word.chars() {
        match c {
            '\'' | '\\' => {
                flush(&mut run, &mut out);
                out.push('\\');
                out.push(c);
            }
            other => run.push(other),
        }
    }
    flush(&mut run, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_words_stay_bare_and_others_are_quoted() {
        assert_eq!(quote("/usr/bin/bash"), "/usr/bin/bash");
        assert_eq!(quote("-c"), "-c");
        assert_eq!(quote(""), "''");
        assert_eq!(quote("ls -la"), "'ls -la'");
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote(r"a\b"), r"'a'\\'b'");
        assert_eq!(quote("'"), r"\'");
        assert_eq!(quote("=x"), "'=x'");
        assert_eq!(quote("~"), "'~'");
    }

    #[test]
    fn the_input_keeps_every_field_but_the_command() {
        let input = serde_json::json!({"command": "ls", "description": "list", "timeout": 5});
        let c = Confined::new(
            Path::new("/opt/v/vouch"),
            Path::new("/usr/bin/bash"),
            &Locations::default(),
            "ls",
            Some(&input),
        )
        .unwrap();
        assert_eq!(
            c.argv,
            ["/opt/v/vouch", "confine", "--", "/usr/bin/bash", "-c", "ls"]
        );
        assert_eq!(c.command, "/opt/v/vouch confine -- /usr/bin/bash -c ls");
        let rewritten = c.input.unwrap();
        assert_eq!(rewritten["command"], c.command.as_str());
        assert_eq!(rewritten["description"], "list");
        assert_eq!(rewritten["timeout"], 5);
    }

    #[test]
    fn locations_travel_in_the_argv() {
        let at = Locations {
            home: Some(Path::new("/home/dev/vouch home")),
            config: Some(Path::new("/etc/vouch.toml")),
        };
        let c = Confined::new(Path::new("/v"), Path::new("/bin/bash"), &at, "pwd", None).unwrap();
        assert_eq!(
            c.command,
            "/v confine --home '/home/dev/vouch home' --config /etc/vouch.toml -- /bin/bash -c pwd"
        );
        assert!(
            Confined::new(Path::new("/v"), Path::new("/bin/bash"), &at, "a\0b", None).is_none()
        );
    }
}
