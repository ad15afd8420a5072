//! Codex's `config.toml`: vouch's hook groups merged in and taken out with
//! `toml_edit`, so the user's comments, order and layout stay as written.
//!
//! Codex runs a user hook only while `[hooks.state."<file>:<event>:<group>:<handler>"]`
//! holds its trusted hash, keyed by the group's position in the event's
//! list. So vouch's group replaces an older vouch group where it stands (or
//! goes last), its state key names that position, and taking a group out
//! moves the state keys of the groups after it down by one: the user's own
//! hooks stay trusted.

use serde::{Deserialize, Serialize};
use toml_edit::{ArrayOfTables, DocumentMut, Item, Table, value};

use crate::hooks::harnesses::codex::{HOOK_EVENTS, trusted_hash};

/// Tables install made, removed again by uninstall when empty.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Changes {
    pub created: Vec<Vec<String>>,
}

/// Whether a hook command is vouch's.
pub type IsVouch<'a> = &'a dyn Fn(&str) -> bool;

pub fn parse(text: &str) -> Result<DocumentMut, String> {
    text.parse::<DocumentMut>()
        .map_err(|e| format!("it is not valid TOML: {}", e.to_string().trim_end()))
}

fn table_mut<'a>(parent: &'a mut Table, key: &str, path: &str) -> Result<&'a mut Table, String> {
    parent
        .get_mut(key)
        .and_then(Item::as_table_mut)
        .ok_or_else(|| format!("`{path}` is not a table"))
}

/// Whether a hook group (`[[hooks.<Event>]]`) runs vouch.
fn group_is_vouch(group: &Table, is_vouch: IsVouch<'_>) -> bool {
    let Some(handlers) = group.get("hooks") else {
        return false;
    };
    let command_of = |t: &dyn toml_edit::TableLike| {
        t.get("command")
            .and_then(Item::as_str)
            .is_some_and(is_vouch)
    };
    if let Some(aot) = handlers.as_array_of_tables() {
        return aot.iter().any(|t| command_of(t));
    }
    handlers.as_array().is_some_and(|a| {
        a.iter()
            .filter_map(toml_edit::Value::as_inline_table)
            .any(|t| command_of(t))
    })
}

fn new_group(command: &str, timeout: u64) -> Table {
    let mut handler = Table::new();
    handler.insert("type", value("command"));
    handler.insert("command", value(command));
    handler.insert("timeout", value(i64::try_from(timeout).unwrap_or(i64::MAX)));
    let mut handlers = ArrayOfTables::new();
    handlers.push(handler);
    let mut group = Table::new();
    group.insert("hooks", Item::ArrayOfTables(handlers));
    group
}

fn state_prefix(config_path: &str, snake: &str) -> String {
    format!("{config_path}:{snake}:")
}

/// Takes group `index` of `event` out and moves the state keys after it.
fn remove_group(hooks: &mut Table, event: &str, snake: &str, index: usize, config_path: &str) {
    if let Some(aot) = hooks.get_mut(event).and_then(Item::as_array_of_tables_mut) {
        aot.remove(index);
    }
    let Some(state) = hooks.get_mut("state").and_then(Item::as_table_mut) else {
        return;
    };
    let prefix = state_prefix(config_path, snake);
    let mut moves: Vec<(String, usize, String)> = Vec::new();
    for (key, _) in state.iter() {
        let Some(rest) = key.strip_prefix(&prefix) else {
            continue;
        };
        let mut parts = rest.splitn(2, ':');
        let (Some(group), Some(handler)) = (parts.next(), parts.next()) else {
            continue;
        };
        if let Ok(group) = group.parse::<usize>() {
            moves.push((key.to_owned(), group, handler.to_owned()));
        }
    }
    moves.sort_by_key(|(_, group, _)| *group);
    for (key, group, handler) in moves {
        if group == index {
            state.remove(&key);
        } else if group > index
            && let Some(item) = state.remove(&key)
        {
            state.insert(
                &format!("{prefix}{}:{handler}", group.saturating_sub(1)),
                item,
            );
        }
    }
}

/// Merges vouch's groups (running `command`, Codex waiting `timeout` s)
/// into `doc`, whose path Codex knows as `config_path`.
pub fn merge(
    doc: &mut DocumentMut,
    command: &str,
    timeout: u64,
    config_path: &str,
    is_vouch: IsVouch<'_>,
) -> Result<Changes, String> {
    let mut changes = Changes::default();
    let root = doc.as_table_mut();
    if !root.contains_key("hooks") {
        let mut t = Table::new();
        t.set_implicit(true);
        root.insert("hooks", Item::Table(t));
        changes.created.push(vec!["hooks".to_owned()]);
    }
    let hooks = table_mut(root, "hooks", "hooks")?;
    let mut placed = Vec::new();
    for (event, snake) in HOOK_EVENTS {
        if !hooks.contains_key(event) {
            hooks.insert(event, Item::ArrayOfTables(ArrayOfTables::new()));
            changes
                .created
                .push(vec!["hooks".to_owned(), event.to_owned()]);
        }
        let ours: Vec<usize> = hooks
            .get(event)
            .and_then(Item::as_array_of_tables)
            .ok_or_else(|| format!("`hooks.{event}` is not an array of tables"))?
            .iter()
            .enumerate()
            .filter(|(_, g)| group_is_vouch(g, is_vouch))
            .map(|(i, _)| i)
            .collect();
        // Extra vouch groups (two hand-made installs) go, the first stays.
        for &extra in ours.iter().skip(1).rev() {
            remove_group(hooks, event, snake, extra, config_path);
        }
        let aot = hooks
            .get_mut(event)
            .and_then(Item::as_array_of_tables_mut)
            .ok_or_else(|| format!("`hooks.{event}` is not an array of tables"))?;
        let index = match ours.first() {
            Some(&first) => {
                if let Some(slot) = aot.get_mut(first) {
                    *slot = new_group(command, timeout);
                }
                first
            }
            None => {
                aot.push(new_group(command, timeout));
                aot.len().saturating_sub(1)
            }
        };
        placed.push((snake, index));
    }
    // The trusted hashes after every group, as `vouch hook snippet` prints them.
    if !hooks.contains_key("state") {
        let mut t = Table::new();
        t.set_implicit(true);
        hooks.insert("state", Item::Table(t));
        changes
            .created
            .push(vec!["hooks".to_owned(), "state".to_owned()]);
    }
    let state = table_mut(hooks, "state", "hooks.state")?;
    for (snake, index) in placed {
        let mut trusted = Table::new();
        trusted.insert("trusted_hash", value(trusted_hash(snake, command, timeout)));
        state.insert(
            &format!("{}{index}:0", state_prefix(config_path, snake)),
            Item::Table(trusted),
        );
    }
    Ok(changes)
}

/// Takes vouch's groups (and their state keys) out of `doc` and removes
/// the tables install made that are left empty. Returns how many went.
pub fn unmerge(
    doc: &mut DocumentMut,
    config_path: &str,
    is_vouch: IsVouch<'_>,
    changes: Option<&Changes>,
) -> usize {
    let mut removed = 0;
    let root = doc.as_table_mut();
    let Some(hooks) = root.get_mut("hooks").and_then(Item::as_table_mut) else {
        return 0;
    };
    let mut emptied = Vec::new();
    for (event, snake) in HOOK_EVENTS {
        let ours: Vec<usize> = hooks
            .get(event)
            .and_then(Item::as_array_of_tables)
            .map(|aot| {
                aot.iter()
                    .enumerate()
                    .filter(|(_, g)| group_is_vouch(g, is_vouch))
                    .map(|(i, _)| i)
                    .collect()
            })
            .unwrap_or_default();
        for &index in ours.iter().rev() {
            remove_group(hooks, event, snake, index, config_path);
            removed += 1;
        }
        if !ours.is_empty()
            && hooks
                .get(event)
                .and_then(Item::as_array_of_tables)
                .is_some_and(ArrayOfTables::is_empty)
        {
            emptied.push(event.to_owned());
        }
    }
    let created = |path: &[&str]| match changes {
        Some(c) => c
            .created
            .iter()
            .any(|p| p.iter().map(String::as_str).eq(path.iter().copied())),
        None => removed > 0,
    };
    for event in emptied {
        if created(&["hooks", &event]) {
            hooks.remove(&event);
        }
    }
    if hooks
        .get("state")
        .and_then(Item::as_table)
        .is_some_and(Table::is_empty)
        && created(&["hooks", "state"])
    {
        hooks.remove("state");
    }
    if hooks.is_empty() && created(&["hooks"]) {
        root.remove("hooks");
    }
    removed
}

/// vouch's groups in `doc`, over every event.
pub fn count_vouch(doc: &DocumentMut, is_vouch: IsVouch<'_>) -> usize {
    let Some(hooks) = doc.get("hooks").and_then(Item::as_table) else {
        return 0;
    };
    HOOK_EVENTS
        .iter()
        .filter_map(|(event, _)| hooks.get(event).and_then(Item::as_array_of_tables))
        .map(|aot| aot.iter().filter(|g| group_is_vouch(g, is_vouch)).count())
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vouch(c: &str) -> bool {
        c.starts_with("/bin/vouch hook codex")
    }

    #[test]
    fn the_users_hooks_keep_their_positions_and_trust() {
        let text = "# mine\nmodel = \"m\"\n\n[[hooks.PreToolUse]]\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = \"mine\"\n\n[hooks.state.\"/c.toml:pre_tool_use:0:0\"]\ntrusted_hash = \"sha256:mine\"\n";
        let mut doc = parse(text).unwrap();
        let changes = merge(&mut doc, "/bin/vouch hook codex", 100, "/c.toml", &vouch).unwrap();
        let out = doc.to_string();
        assert!(out.contains("/c.toml:pre_tool_use:1:0"), "{out}");
        assert!(out.contains("/c.toml:pre_tool_use:0:0"), "{out}");
        assert!(out.contains("/c.toml:user_prompt_submit:0:0"), "{out}");
        merge(&mut doc, "/bin/vouch hook codex", 100, "/c.toml", &vouch).unwrap();
        assert_eq!(count_vouch(&doc, &vouch), 4);
        assert_eq!(doc.to_string(), out, "install twice changes nothing");
        unmerge(&mut doc, "/c.toml", &vouch, Some(&changes));
        assert_eq!(doc.to_string(), text);
    }
}
