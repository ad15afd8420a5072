//! Strings bash evaluates that do not look like commands: where a value
//! becomes code.
//!
//! - **Subscripts**: a name argument (`read 'a[$(cmd)]'`, `printf -v
//!   'a[$(cmd)]'`, `declare 'a[$(cmd)]=1'`, `[[ -v 'a[$(cmd)]' ]]`,
//!   `unset`, `let`, an assignment's own subscript `a[$(cmd)]=1`) and a
//!   value arithmetic reads (`x='a[$(cmd)]'; echo $((x))`, `declare -i n;
//!   n='a[$(cmd)]'`) expand the subscript as a word, running its `$(…)`.
//! - **Prompts**: `${v@P}`, `PS4` under `set -x`/`bash -x`, and `PS0`,
//!   `PS1`, `PS2` and `PROMPT_COMMAND` in an interactive shell (`bash -i`)
//!   are expanded — their substitutions run — or run as a command.
//! - **Callbacks**: `mapfile -C CODE` (and `readarray`) evaluates `CODE`.
//! - **Imported functions**: `BASH_FUNC_name%%=() { …; }` in a child
//!   shell's environment defines `name` there.
//! - **Compound strings**: `declare -a c='(a b c)'` assigns the array.
//!
//! Each runs through the interpreter as a script string, so it costs a
//! script step and a parse, and counts toward the nesting depth like any
//! other.

use super::interp::Interp;
use super::state::State;
use super::value::{Arg, Value};

/// Builtins whose arguments name variables (which may carry a subscript).
const NAMING_BUILTINS: &[&str] = &[
    "declare",
    "typeset",
    "local",
    "export",
    "readonly",
    "read",
    "printf",
    "unset",
    "let",
    "mapfile",
    "readarray",
    "test",
    "[",
    "[[",
    "wait",
];

/// Whether `text` holds code bash runs while reading it as a name or an
/// arithmetic expression: a subscript with a substitution in it.
pub(crate) fn runs_in_subscript(text: &str) -> bool {
    text.find('[').is_some_and(|open| {
        let rest = text.get(open..).unwrap_or("");
        rest.contains("$(") || rest.contains('`')
    })
}

/// Whether `text` holds a substitution a prompt expansion runs.
fn runs_in_prompt(text: &str) -> bool {
    text.contains("$(") || text.contains('`')
}

impl Interp {
    /// Runs the substitutions in `text` as bash would while expanding it
    /// as one word (a subscript, a prompt): `: TEXT` as a script.
    pub(crate) fn run_evaluated(&mut self, text: &str, state: &State, index: Option<usize>) {
        if text.len() > 64 * 1024 {
            return;
        }
        let script = format!(": {text}");
        let scripts = self.value_scripts(&Value::known(&script));
        self.run_scripts(scripts, state.clone(), index, true);
    }

    /// What a builtin evaluates among its arguments: subscripts of the
    /// names it is given, `mapfile -C` callbacks, `PS4` when `set -x`
    /// turns tracing on.
    pub(crate) fn evaluated_arguments(
        &mut self,
        name: &str,
        args: &[Arg],
        state: &State,
        index: Option<usize>,
    ) {
        if NAMING_BUILTINS.contains(&name) {
            for arg in args {
                if let Some(text) = arg.as_known()
                    && runs_in_subscript(text)
                {
                    self.run_evaluated(text, state, index);
                }
            }
        }
        if matches!(name, "mapfile" | "readarray") {
            let words: Vec<Option<&str>> = args.iter().map(Arg::as_known).collect();
            for (k, w) in words.iter().enumerate() {
                let callback = match w {
                    Some("-C") => words.get(k + 1).copied().flatten(),
                    Some(w) if w.starts_with("-C") && w.len() > 2 => w.get(2..),
                    _ => None,
                };
                if let Some(code) = callback {
                    let scripts = self.value_scripts(&Value::known(code));
                    self.run_scripts(scripts, state.clone(), index, true);
                }
            }
        }
        if name == "set"
            && args.iter().any(|a| {
                a.as_known().is_some_and(|w| {
                    (w.starts_with('-') && !w.starts_with("--") && w.contains('x')) || w == "xtrace"
                })
            })
        {
            self.prompt_variable("PS4", state, index);
        }
    }

    /// Expands prompt variable `var` of `state` when its value is known
    /// and runs code.
    pub(crate) fn prompt_variable(&mut self, var: &str, state: &State, index: Option<usize>) {
        let value = state.get(var, &self.known);
        let texts: Vec<String> = value
            .vals
            .iter()
            .filter_map(|b| match b {
                super::state::Binding::Str(t) => t.as_known().map(str::to_owned),
                _ => None,
            })
            .collect();
        for text in texts {
            if runs_in_prompt(&text) {
                self.run_evaluated(&text, state, index);
            }
        }
    }

    /// `${v@P}`: the value expanded as a prompt.
    pub(crate) fn prompt_expansion(&mut self, text: &str, state: &State) {
        if runs_in_prompt(text) {
            self.run_evaluated(text, state, None);
        }
    }

    /// What a shell started with `-x` or `-i` evaluates before its
    /// commands: `PS4` for each traced command, `PROMPT_COMMAND` and the
    /// prompts of an interactive shell.
    pub(crate) fn shell_prompts(
        &mut self,
        trace: bool,
        interactive: bool,
        child: &State,
        index: Option<usize>,
    ) {
        if trace {
            self.prompt_variable("PS4", child, index);
        }
        if interactive {
            for var in ["PS0", "PS1", "PS2"] {
                self.prompt_variable(var, child, index);
            }
            let value = child.get("PROMPT_COMMAND", &self.known);
            for b in &value.vals {
                if let super::state::Binding::Str(t) = b {
                    let v = Value::text(t.clone());
                    let scripts = self.value_scripts(&v);
                    self.run_scripts(scripts, child.clone(), index, true);
                }
            }
        }
    }
}

/// The function definitions a child shell imports from its environment
/// (`BASH_FUNC_ls%%=() { rm -rf ~; }`), as script text that defines them.
pub(crate) fn imported_functions(assigns: &[(String, Value)]) -> Option<String> {
    let mut out = String::new();
    for (name, value) in assigns {
        let Some(func) = name
            .strip_prefix("BASH_FUNC_")
            .and_then(|n| n.strip_suffix("%%").or_else(|| n.strip_suffix("()")))
        else {
            continue;
        };
        let Some(body) = value.as_known() else {
            continue;
        };
        if !body.trim_start().starts_with("()") {
            continue;
        }
        out.push_str(func);
        out.push(' ');
        out.push_str(body);
        out.push('\n');
    }
    (!out.is_empty()).then_some(out)
}
