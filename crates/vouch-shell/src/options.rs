//! One option parser with GNU `getopt_long` semantics, driven by a
//! declarative [`OptionSpec`].
//!
//! Every command vouch knows is described by such a spec (see
//! [`super::spec`]): which short and long options exist, which take a value
//! (required or optional), and whether options stop at the first operand
//! (POSIX `+` mode, what wrappers like `sudo` and `env` use) or may follow
//! operands (GNU permutation). The parser implements what getopt does with
//! them: clusters (`-rf`), attached and separate values (`-ofile`,
//! `-o file`), long options with `=value` or a separate value, unambiguous
//! long prefixes (`--insec` is `--insecure`), `--` and a lone `-`.
//!
//! It works over any word type that may or may not be known ([`OptWord`]):
//! a word whose text depends on runtime data is reported as
//! [`Item::Unknown`] (it may be an option or an operand) and never consumes
//! the next word. Nothing here knows about policy; redaction uses it to find
//! the values of secret-carrying options, hard denies to find targets.

/// Whether an option takes a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HasArg {
    No,
    /// The value is attached (`-ofile`, `--out=file`) or the next word.
    Required,
    /// Only an attached value counts (`-i.bak`, `--color=auto`).
    Optional,
    /// The next two words (`jq --arg NAME VALUE`); the option's value is
    /// the second, the first is a name.
    Two,
}

/// How a word of short options is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clusters {
    /// getopt: letters combine (`-rf`), and a letter that takes a value
    /// takes the rest of the word or else the next word (`-ofile`).
    Getopt,
    /// Letters combine, and each letter that takes a value takes the next
    /// word in turn (`tree -Lo 1 out.txt` is `-L 1 -o out.txt`).
    NextWords,
    /// One option per word, named by its first letter: the rest of the word
    /// is the value of a letter that takes one, and is ignored otherwise
    /// (`xxd -ps` is `-p`, `-c8` is `-c 8`). A rest that spells the
    /// option's long name (`-cols`, `-seek`) takes the next word.
    FirstLetter,
}

/// A long option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LongOpt {
    pub name: &'static str,
    pub has_arg: HasArg,
}

/// Shorthand for table entries.
pub const fn long(name: &'static str, has_arg: HasArg) -> LongOpt {
    LongOpt { name, has_arg }
}

/// The options of one command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OptionSpec {
    /// getopt's optstring without a mode prefix: letters, each followed by
    /// `:` (required value), `::` (optional value) or `:::` (two words).
    pub short: &'static str,
    pub long: &'static [LongOpt],
    /// POSIX mode: the first operand ends the options (`sudo`, `env`,
    /// `xargs`, shells). Otherwise options may follow operands.
    pub stop_at_operand: bool,
    /// Whether long options may be abbreviated to an unambiguous prefix
    /// (true for getopt_long; a command with its own parser may not).
    pub prefixes: bool,
    /// Long options are written with one dash (`openssl -passin`,
    /// `keytool -storepass`): such a command has no short options.
    pub single_dash_long: bool,
    /// How a word of short options is read.
    pub clusters: Clusters,
}

impl OptionSpec {
    /// A spec of short options only, GNU permutation.
    pub const fn short(short: &'static str) -> Self {
        OptionSpec {
            short,
            long: &[],
            stop_at_operand: false,
            prefixes: true,
            single_dash_long: false,
            clusters: Clusters::Getopt,
        }
    }

    /// How short option `c` takes a value, or `None` when it does not exist.
    pub fn short_arg(&self, c: char) -> Option<HasArg> {
        if c == ':' {
            return None;
        }
        let mut chars = self.short.char_indices().peekable();
        while let Some((_, letter)) = chars.next() {
            let mut colons = 0;
            while chars.peek().is_some_and(|(_, n)| *n == ':') {
                colons += 1;
                chars.next();
            }
            if letter == c {
                return Some(match colons {
                    0 => HasArg::No,
                    1 => HasArg::Required,
                    2 => HasArg::Optional,
                    _ => HasArg::Two,
                });
            }
        }
        None
    }

    /// The long option `name` stands for: exact, or an unambiguous prefix.
    pub fn find_long(&self, name: &str) -> Result<&LongOpt, Invalid> {
        if let Some(exact) = self.long.iter().find(|l| l.name == name) {
            return Ok(exact);
        }
        if !self.prefixes || name.is_empty() {
            return Err(Invalid::Unrecognized);
        }
        let mut candidates = self.long.iter().filter(|l| l.name.starts_with(name));
        match (candidates.next(), candidates.next()) {
            (Some(only), None) => Ok(only),
            (Some(_), Some(_)) => Err(Invalid::Ambiguous),
            (None, _) => Err(Invalid::Unrecognized),
        }
    }
}

/// A word the parser reads: its text when statically known, else the
/// literal text it starts with.
pub trait OptWord {
    fn known(&self) -> Option<&str>;
    fn known_prefix(&self) -> &str {
        self.known().unwrap_or("")
    }
    /// True when the word is not known but cannot be an option (a
    /// pathname pattern, a value whose candidates start like operands).
    fn operand_like(&self) -> bool {
        false
    }
}

impl OptWord for &str {
    fn known(&self) -> Option<&str> {
        Some(self)
    }
}

impl OptWord for String {
    fn known(&self) -> Option<&str> {
        Some(self)
    }
}

/// An option's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptName {
    Short(char),
    Long(&'static str),
}

impl OptName {
    /// Is this option one of `names`? Single characters name short options,
    /// longer names long ones.
    pub fn is(&self, names: &[&str]) -> bool {
        names.iter().any(|n| match self {
            OptName::Short(c) => {
                let mut chars = n.chars();
                chars.next() == Some(*c) && chars.next().is_none()
            }
            OptName::Long(l) => n.len() > 1 && n == l,
        })
    }
}

/// Where an option's value is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptValue {
    /// Inside word `at`, from byte `offset` on (`-ofile`, `--out=file`).
    Attached { at: usize, offset: usize },
    /// The whole next word.
    Next { at: usize },
}

/// Why getopt would reject a word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Invalid {
    Unrecognized,
    Ambiguous,
    /// A required value is missing (the option was the last word).
    MissingValue,
    /// `--flag=value` for an option that takes none.
    UnexpectedValue,
}

/// One parsed element, referring to words by index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Item {
    Opt {
        name: OptName,
        value: Option<OptValue>,
        at: usize,
    },
    Operand {
        at: usize,
    },
    /// A word whose text is not known: an option or an operand.
    Unknown {
        at: usize,
    },
    /// A word getopt rejects (the command would usually fail).
    Invalid {
        at: usize,
        reason: Invalid,
    },
    /// The `--` that ends the options.
    End {
        at: usize,
    },
}

/// Parses `words` (the arguments after the command name) by `spec`.
pub fn parse<W: OptWord>(spec: &OptionSpec, words: &[W]) -> Vec<Item> {
    let mut out = Vec::with_capacity(words.len());
    let mut i = 0;
    let mut options_done = false;
    while let Some(word) = words.get(i) {
        let at = i;
        i += 1;
        if options_done {
            out.push(Item::Operand { at });
            continue;
        }
        let Some(text) = word.known() else {
            let prefix = word.known_prefix();
            if word.operand_like() {
                out.push(Item::Operand { at });
                options_done = spec.stop_at_operand;
            } else if prefix.len() > 1 && prefix.starts_with('-') {
                i = option_word(spec, words, at, prefix, true, &mut out);
            } else if !prefix.is_empty() && !prefix.starts_with('-') {
                // Known to start like an operand (`/dev/fd/…`, `./…`).
                out.push(Item::Operand { at });
                options_done = spec.stop_at_operand;
            } else {
                out.push(Item::Unknown { at });
            }
            continue;
        };
        if text == "--" {
            out.push(Item::End { at });
            options_done = true;
            continue;
        }
        if text.len() < 2 || !text.starts_with('-') {
            out.push(Item::Operand { at });
            options_done = spec.stop_at_operand;
            continue;
        }
        i = option_word(spec, words, at, text, false, &mut out);
    }
    out
}

/// Parses the option word `text` at `at`; returns the index of the next
/// word to read. `partial`: only this prefix of the word is known.
fn option_word<W: OptWord>(
    spec: &OptionSpec,
    words: &[W],
    at: usize,
    text: &str,
    partial: bool,
    out: &mut Vec<Item>,
) -> usize {
    match text.strip_prefix("--") {
        // xxd reads `--seek=3` as `-seek=3`: one dash more is no long option.
        Some(_) if spec.clusters == Clusters::FirstLetter => {
            first_letter(spec, words.len(), at, text, 1, partial, out)
        }
        Some(body) => long_option(spec, words.len(), at, body, 2, partial, out),
        None if spec.single_dash_long => {
            let body = text.get(1..).unwrap_or_default();
            long_option(spec, words.len(), at, body, 1, partial, out)
        }
        None => match spec.clusters {
            Clusters::Getopt => short_cluster(spec, words.len(), at, text, partial, out),
            Clusters::NextWords => next_words_cluster(spec, words.len(), at, text, partial, out),
            Clusters::FirstLetter => first_letter(spec, words.len(), at, text, 0, partial, out),
        },
    }
}

/// `--name[=value]` (`body` without its `dashes`) among `len` words.
fn long_option(
    spec: &OptionSpec,
    len: usize,
    at: usize,
    body: &str,
    dashes: usize,
    partial: bool,
    out: &mut Vec<Item>,
) -> usize {
    let next = at + 1;
    let (name, inline) = match body.split_once('=') {
        Some((n, _)) => (n, Some(dashes + n.len() + 1)),
        None if partial => {
            out.push(Item::Unknown { at });
            return next;
        }
        None => (body, None),
    };
    let opt = match spec.find_long(name) {
        Ok(opt) => opt,
        Err(reason) => {
            out.push(Item::Invalid { at, reason });
            return next;
        }
    };
    let name = OptName::Long(opt.name);
    match (opt.has_arg, inline) {
        (HasArg::No, Some(_)) => out.push(Item::Invalid {
            at,
            reason: Invalid::UnexpectedValue,
        }),
        (HasArg::No, None) | (HasArg::Optional, None) => out.push(Item::Opt {
            name,
            value: None,
            at,
        }),
        (HasArg::Two, _) => {
            // `--arg NAME VALUE`: the value is the second word; an attached
            // `=NAME` is not a form the programs accept.
            if inline.is_none() && next + 1 < len {
                out.push(Item::Opt {
                    name,
                    value: Some(OptValue::Next { at: next + 1 }),
                    at,
                });
                return next + 2;
            }
            out.push(Item::Invalid {
                at,
                reason: Invalid::MissingValue,
            });
        }
        (HasArg::Required | HasArg::Optional, Some(offset)) => out.push(Item::Opt {
            name,
            value: Some(OptValue::Attached { at, offset }),
            at,
        }),
        (HasArg::Required, None) => {
            if next < len {
                out.push(Item::Opt {
                    name,
                    value: Some(OptValue::Next { at: next }),
                    at,
                });
                return next + 1;
            }
            out.push(Item::Invalid {
                at,
                reason: Invalid::MissingValue,
            });
        }
    }
    next
}

/// A cluster whose letters that take a value each take the next word in
/// turn ([`Clusters::NextWords`]).
fn next_words_cluster(
    spec: &OptionSpec,
    len: usize,
    at: usize,
    text: &str,
    partial: bool,
    out: &mut Vec<Item>,
) -> usize {
    let mut next = at + 1;
    for c in text.chars().skip(1) {
        match spec.short_arg(c) {
            None => out.push(Item::Invalid {
                at,
                reason: Invalid::Unrecognized,
            }),
            Some(HasArg::No | HasArg::Optional) => out.push(Item::Opt {
                name: OptName::Short(c),
                value: None,
                at,
            }),
            Some(HasArg::Required | HasArg::Two) => {
                if next < len {
                    out.push(Item::Opt {
                        name: OptName::Short(c),
                        value: Some(OptValue::Next { at: next }),
                        at,
                    });
                    next += 1;
                } else {
                    out.push(Item::Invalid {
                        at,
                        reason: Invalid::MissingValue,
                    });
                }
            }
        }
    }
    if partial {
        out.push(Item::Unknown { at });
    }
    next
}

/// One option named by the word's first letter ([`Clusters::FirstLetter`]);
/// `extra` dashes before the one that starts it are skipped.
fn first_letter(
    spec: &OptionSpec,
    len: usize,
    at: usize,
    text: &str,
    extra: usize,
    partial: bool,
    out: &mut Vec<Item>,
) -> usize {
    let next = at + 1;
    let body = text.get(1 + extra..).unwrap_or_default();
    let Some(c) = body.chars().next() else {
        out.push(Item::Operand { at });
        return next;
    };
    let rest_at = 1 + extra + c.len_utf8();
    let has_rest = rest_at < text.len();
    // `-cols 8`: the rest spells the long name, so the value is the next word.
    let spelled = spec
        .long
        .iter()
        .any(|l| l.name.len() > 1 && l.name.starts_with(c) && body.starts_with(l.name));
    match spec.short_arg(c) {
        None => out.push(Item::Invalid {
            at,
            reason: Invalid::Unrecognized,
        }),
        Some(HasArg::No | HasArg::Optional) => out.push(Item::Opt {
            name: OptName::Short(c),
            value: None,
            at,
        }),
        Some(HasArg::Required | HasArg::Two) if has_rest && !spelled => out.push(Item::Opt {
            name: OptName::Short(c),
            value: Some(OptValue::Attached {
                at,
                offset: rest_at,
            }),
            at,
        }),
        Some(HasArg::Required | HasArg::Two) if partial => out.push(Item::Unknown { at }),
        Some(HasArg::Required | HasArg::Two) => {
            if next < len {
                out.push(Item::Opt {
                    name: OptName::Short(c),
                    value: Some(OptValue::Next { at: next }),
                    at,
                });
                return next + 1;
            }
            out.push(Item::Invalid {
                at,
                reason: Invalid::MissingValue,
            });
        }
    }
    next
}

/// A cluster of short options (`-abc`, `-ovalue`) among `len` words.
fn short_cluster(
    spec: &OptionSpec,
    len: usize,
    at: usize,
    text: &str,
    partial: bool,
    out: &mut Vec<Item>,
) -> usize {
    let next = at + 1;
    for (pos, c) in text.char_indices().skip(1) {
        let rest_at = pos + c.len_utf8();
        let has_rest = rest_at < text.len() || partial;
        match spec.short_arg(c) {
            None => out.push(Item::Invalid {
                at,
                reason: Invalid::Unrecognized,
            }),
            Some(HasArg::No) => out.push(Item::Opt {
                name: OptName::Short(c),
                value: None,
                at,
            }),
            Some(HasArg::Optional) => {
                let value = has_rest.then_some(OptValue::Attached {
                    at,
                    offset: rest_at,
                });
                out.push(Item::Opt {
                    name: OptName::Short(c),
                    value,
                    at,
                });
                return next;
            }
            Some(HasArg::Two) => {
                if next + 1 < len {
                    out.push(Item::Opt {
                        name: OptName::Short(c),
                        value: Some(OptValue::Next { at: next + 1 }),
                        at,
                    });
                    return next + 2;
                }
                out.push(Item::Invalid {
                    at,
                    reason: Invalid::MissingValue,
                });
                return next;
            }
            Some(HasArg::Required) => {
                if has_rest {
                    out.push(Item::Opt {
                        name: OptName::Short(c),
                        value: Some(OptValue::Attached {
                            at,
                            offset: rest_at,
                        }),
                        at,
                    });
                    return next;
                }
                if next < len {
                    out.push(Item::Opt {
                        name: OptName::Short(c),
                        value: Some(OptValue::Next { at: next }),
                        at,
                    });
                    return next + 1;
                }
                out.push(Item::Invalid {
                    at,
                    reason: Invalid::MissingValue,
                });
                return next;
            }
        }
    }
    if partial {
        // The rest of the cluster is unknown: more options may hide there.
        out.push(Item::Unknown { at });
    }
    next
}

/// Convenience over a parse: options present, values, operands.
#[derive(Debug, Clone)]
pub struct Parsed {
    pub items: Vec<Item>,
}

impl Parsed {
    pub fn new<W: OptWord>(spec: &OptionSpec, words: &[W]) -> Self {
        Parsed {
            items: parse(spec, words),
        }
    }

    /// True when one of `names` was given.
    pub fn has(&self, names: &[&str]) -> bool {
        self.items
            .iter()
            .any(|item| matches!(item, Item::Opt { name, .. } if name.is(names)))
    }

    /// The values of the options in `names`, in order.
    pub fn values(&self, names: &[&str]) -> Vec<OptValue> {
        self.items
            .iter()
            .filter_map(|item| match item {
                Item::Opt {
                    name,
                    value: Some(v),
                    ..
                } if name.is(names) => Some(*v),
                _ => None,
            })
            .collect()
    }

    /// Indices of the operands.
    pub fn operands(&self) -> Vec<usize> {
        self.items
            .iter()
            .filter_map(|item| match item {
                Item::Operand { at } => Some(*at),
                _ => None,
            })
            .collect()
    }

    /// Indices of words whose text is unknown.
    pub fn unknown(&self) -> Vec<usize> {
        self.items
            .iter()
            .filter_map(|item| match item {
                Item::Unknown { at } => Some(*at),
                _ => None,
            })
            .collect()
    }

    /// The index of the first operand (where a wrapped command starts).
    pub fn first_operand(&self) -> Option<usize> {
        self.items.iter().find_map(|item| match item {
            Item::Operand { at } => Some(*at),
            _ => None,
        })
    }

    /// Where the operands may start: the first operand, or an earlier word
    /// whose text is not known — it may be the first operand (`nice $CMD
    /// -rf /`: the program is runtime data, and `-rf` is its, not nice's).
    /// What a wrapper runs starts here, so a program named at run time is
    /// never skipped over.
    pub fn first_operand_or_unknown(&self) -> Option<usize> {
        self.items.iter().find_map(|item| match item {
            Item::Operand { at } | Item::Unknown { at } => Some(*at),
            _ => None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CURLISH: OptionSpec = OptionSpec {
        short: "o:kvd:",
        long: &[
            long("insecure", HasArg::No),
            long("output", HasArg::Required),
            long("output-dir", HasArg::Required),
            long("verbose", HasArg::No),
            long("data", HasArg::Required),
            long("data-binary", HasArg::Required),
            long("color", HasArg::Optional),
        ],
        stop_at_operand: false,
        prefixes: true,
        single_dash_long: false,
        clusters: Clusters::Getopt,
    };

    fn items(words: &[&str]) -> Vec<Item> {
        parse(&CURLISH, words)
    }

    #[test]
    fn clusters_and_values() {
        assert_eq!(
            items(&["-kvofile", "url"]),
            vec![
                Item::Opt {
                    name: OptName::Short('k'),
                    value: None,
                    at: 0
                },
                Item::Opt {
                    name: OptName::Short('v'),
                    value: None,
                    at: 0
                },
                Item::Opt {
                    name: OptName::Short('o'),
                    value: Some(OptValue::Attached { at: 0, offset: 4 }),
                    at: 0
                },
                Item::Operand { at: 1 },
            ]
        );
        assert_eq!(
            items(&["-o", "file"]),
            vec![Item::Opt {
                name: OptName::Short('o'),
                value: Some(OptValue::Next { at: 1 }),
                at: 0
            }]
        );
    }

    #[test]
    fn long_options_and_prefixes() {
        let p = Parsed::new(&CURLISH, &["--insec", "url"]);
        assert!(p.has(&["insecure"]));
        let p = Parsed::new(&CURLISH, &["--output-d", "dir"]);
        assert_eq!(p.values(&["output-dir"]), vec![OptValue::Next { at: 1 }]);
        // `--out` could be --output or --output-dir.
        assert_eq!(
            items(&["--out", "x"])[0],
            Item::Invalid {
                at: 0,
                reason: Invalid::Ambiguous
            }
        );
        // An exact name wins over longer ones.
        let p = Parsed::new(&CURLISH, &["--output", "x"]);
        assert_eq!(p.values(&["output"]), vec![OptValue::Next { at: 1 }]);
        let p = Parsed::new(&CURLISH, &["--data=@f"]);
        assert_eq!(
            p.values(&["data"]),
            vec![OptValue::Attached { at: 0, offset: 7 }]
        );
        let p = Parsed::new(&CURLISH, &["--color", "x"]);
        assert_eq!(p.operands(), vec![1]);
    }

    #[test]
    fn permutation_and_end_of_options() {
        let p = Parsed::new(&CURLISH, &["url", "-k", "--", "-v"]);
        assert!(p.has(&["k"]));
        assert!(!p.has(&["v"]));
        assert_eq!(p.operands(), vec![0, 3]);
        let posix = OptionSpec {
            stop_at_operand: true,
            ..CURLISH
        };
        let p = Parsed::new(&posix, &["rm", "-k"]);
        assert!(!p.has(&["k"]));
        assert_eq!(p.operands(), vec![0, 1]);
        assert_eq!(p.first_operand(), Some(0));
    }

    #[test]
    fn lone_dash_is_an_operand_and_missing_values_are_invalid() {
        assert_eq!(items(&["-"]), vec![Item::Operand { at: 0 }]);
        assert_eq!(
            items(&["-o"]),
            vec![Item::Invalid {
                at: 0,
                reason: Invalid::MissingValue
            }]
        );
    }

    #[test]
    fn single_dash_long_options() {
        const SPEC: OptionSpec = OptionSpec {
            short: "",
            long: &[
                long("passin", HasArg::Required),
                long("in", HasArg::Required),
            ],
            stop_at_operand: false,
            prefixes: false,
            single_dash_long: true,
            clusters: Clusters::Getopt,
        };
        let p = Parsed::new(&SPEC, &["rsa", "-passin", "pass:x", "-in=k.pem"]);
        assert_eq!(p.values(&["passin"]), vec![OptValue::Next { at: 2 }]);
        assert_eq!(
            p.values(&["in"]),
            vec![OptValue::Attached { at: 3, offset: 4 }]
        );
        assert_eq!(p.operands(), vec![0]);
    }

    struct Partial(&'static str);
    impl OptWord for Partial {
        fn known(&self) -> Option<&str> {
            None
        }
        fn known_prefix(&self) -> &str {
            self.0
        }
    }

    #[test]
    fn unknown_words() {
        let words = [Partial(""), Partial("--output="), Partial("-o")];
        let p = parse(&CURLISH, &words);
        assert_eq!(p[0], Item::Unknown { at: 0 });
        assert_eq!(
            p[1],
            Item::Opt {
                name: OptName::Long("output"),
                value: Some(OptValue::Attached { at: 1, offset: 9 }),
                at: 1
            }
        );
        assert_eq!(
            p[2],
            Item::Opt {
                name: OptName::Short('o'),
                value: Some(OptValue::Attached { at: 2, offset: 2 }),
                at: 2
            }
        );
    }
}
