//! The read-only command table: which programs, under which options, only
//! read. Data, not code: adding a command is one entry here plus fixture
//! lines (`tests/fixtures/inert.jsonl`, `tests/fixtures/not_inert.jsonl`).
//!
//! Every entry lists the options it accepts, and nothing else: an option
//! that is not listed (a write such as `sort -o`, an exec such as
//! `rg --pre`, a network one) makes the unit not inert, because the getopt
//! parser reports it as unrecognized. Long options are matched whole
//! (`prefixes: false`): an abbreviation the real program would resolve to
//! an option missing here must not resolve to a listed one.

use vouch_shell::options::HasArg::{No, Optional, Required};
use vouch_shell::options::{LongOpt, OptionSpec, long};

/// What a command's operands are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operands {
    /// None are accepted (`whoami`, `hostname`: an operand would set it).
    None,
    /// Text the command prints or uses (`echo`, `seq`, `tr` sets).
    Text,
    /// Paths whose names or metadata are shown, never their contents
    /// (`ls`, `stat`, `du`, `wc`).
    Names,
    /// Files whose contents are shown (`cat`, `head`, `sort`).
    Content,
    /// The first operand is a program or pattern ([`Script`]); the rest are
    /// files whose contents are shown (`grep`, `sed`, `awk`, `jq`). An
    /// option in [`Entry::inline_program`] supplies the program instead.
    ProgramThenContent,
    /// The first operand is a pattern; the rest are directory trees searched
    /// (`rg`).
    PatternThenTrees,
    /// Read by a command-specific check (`find`, `git`, builtins).
    Special,
}

/// How the program text of [`Operands::ProgramThenContent`] is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Script {
    /// A regular expression: never runs anything.
    Pattern,
    /// A sed script: no `w`, `W`, `r`, `R`, `e` commands, no `s///w|e`.
    Sed,
    /// An awk program: no `system`, pipes, redirections, `getline`.
    Awk,
    /// A jq filter: no `import`/`include`, no `$ENV`/`env`.
    Jq,
}

/// One command family of the table.
#[derive(Debug, Clone, Copy)]
pub struct Entry {
    pub names: &'static [&'static str],
    pub options: OptionSpec,
    pub operands: Operands,
    pub script: Script,
    /// Options whose value is the program (`grep -e`, `sed -e`): with one
    /// given, every operand is a file.
    pub inline_program: &'static [&'static str],
    /// Options whose value is a file read for its contents (`grep -f`).
    pub reads: &'static [&'static str],
    /// Options that walk a directory tree (`grep -r`, `diff -r`): the
    /// operands are then trees.
    pub recursive: &'static [&'static str],
    /// At most this many operands (`uniq IN [OUT]` writes OUT).
    pub max_operands: Option<usize>,
    /// Every option the real program has only reads (not only the listed
    /// ones), so a pattern operand that may expand to `-x` is safe
    /// (`ls *.md`); otherwise a pattern must not be able to start with `-`.
    pub glob_operands: bool,
}

/// An option spec of the read-only tables: GNU permutation, long options
/// matched whole (see the module documentation). `git.rs` uses it too.
pub(super) const fn spec(short: &'static str, long: &'static [LongOpt]) -> OptionSpec {
    OptionSpec {
        short,
        long,
        stop_at_operand: false,
        prefixes: false,
        single_dash_long: false,
    }
}

const fn entry(names: &'static [&'static str], options: OptionSpec, operands: Operands) -> Entry {
    Entry {
        names,
        options,
        operands,
        script: Script::Pattern,
        inline_program: &[],
        reads: &[],
        recursive: &[],
        max_operands: None,
        glob_operands: false,
    }
}

/// An entry whose program has no option that writes, runs or reads a
/// file named by the option (see [`Entry::glob_operands`]).
const fn reader(names: &'static [&'static str], options: OptionSpec, operands: Operands) -> Entry {
    Entry {
        glob_operands: true,
        ..entry(names, options, operands)
    }
}

const LS: &[LongOpt] = &[
    long("all", No),
    long("almost-all", No),
    long("author", No),
    long("block-size", Required),
    long("classify", Optional),
    long("color", Optional),
    long("colour", Optional),
    long("dereference", No),
    long("dereference-command-line", No),
    long("directory", No),
    long("escape", No),
    long("file-type", No),
    long("format", Required),
    long("full-time", No),
    long("group-directories-first", No),
    long("hide", Required),
    long("human-readable", No),
    long("hyperlink", Optional),
    long("ignore", Required),
    long("ignore-backups", No),
    long("indicator-style", Required),
    long("inode", No),
    long("literal", No),
    long("no-group", No),
    long("numeric-uid-gid", No),
    long("quote-name", No),
    long("quoting-style", Required),
    long("recursive", No),
    long("reverse", No),
    long("si", No),
    long("size", No),
    long("sort", Required),
    long("tabsize", Required),
    long("time", Required),
    long("time-style", Required),
    long("width", Required),
    long("zero", No),
];

const CAT: &[LongOpt] = &[
    long("show-all", No),
    long("number-nonblank", No),
    long("show-ends", No),
    long("number", No),
    long("squeeze-blank", No),
    long("show-tabs", No),
    long("show-nonprinting", No),
];

const HEAD_TAIL: &[LongOpt] = &[
    long("bytes", Required),
    long("lines", Required),
    long("quiet", No),
    long("silent", No),
    long("verbose", No),
    long("zero-terminated", No),
    long("follow", Optional),
    long("retry", No),
    long("sleep-interval", Required),
];

const WC: &[LongOpt] = &[
    long("bytes", No),
    long("chars", No),
    long("lines", No),
    long("words", No),
    long("max-line-length", No),
];

const GREP: &[LongOpt] = &[
    long("extended-regexp", No),
    long("fixed-strings", No),
    long("basic-regexp", No),
    long("perl-regexp", No),
    long("regexp", Required),
    long("file", Required),
    long("ignore-case", No),
    long("no-ignore-case", No),
    long("word-regexp", No),
    long("line-regexp", No),
    long("count", No),
    long("color", Optional),
    long("colour", Optional),
    long("files-without-match", No),
    long("files-with-matches", No),
    long("max-count", Required),
    long("only-matching", No),
    long("quiet", No),
    long("silent", No),
    long("no-messages", No),
    long("byte-offset", No),
    long("with-filename", No),
    long("no-filename", No),
    long("label", Required),
    long("line-number", No),
    long("initial-tab", No),
    long("text", No),
    long("binary-files", Required),
    long("include", Required),
    long("exclude", Required),
    long("exclude-dir", Required),
    long("null", No),
    long("null-data", No),
    long("after-context", Required),
    long("before-context", Required),
    long("context", Required),
    long("invert-match", No),
    long("recursive", No),
    long("dereference-recursive", No),
];

const RG: &[LongOpt] = &[
    long("regexp", Required),
    long("file", Required),
    long("ignore-case", No),
    long("smart-case", No),
    long("case-sensitive", No),
    long("word-regexp", No),
    long("line-regexp", No),
    long("invert-match", No),
    long("fixed-strings", No),
    long("line-number", No),
    long("no-line-number", No),
    long("files-with-matches", No),
    long("files-without-match", No),
    long("count", No),
    long("count-matches", No),
    long("only-matching", No),
    long("glob", Required),
    long("iglob", Required),
    long("glob-case-insensitive", No),
    long("type", Required),
    long("type-not", Required),
    long("type-list", No),
    long("after-context", Required),
    long("before-context", Required),
    long("context", Required),
    long("max-count", Required),
    long("max-depth", Required),
    long("max-columns", Required),
    long("max-filesize", Required),
    long("files", No),
    long("heading", No),
    long("no-heading", No),
    long("with-filename", No),
    long("no-filename", No),
    long("color", Required),
    long("colors", Required),
    long("column", No),
    long("json", No),
    long("vimgrep", No),
    long("trim", No),
    long("sort", Required),
    long("sortr", Required),
    long("stats", No),
    long("quiet", No),
    long("null", No),
    long("multiline", No),
    long("pcre2", No),
    long("no-messages", No),
    long("passthru", No),
    long("replace", Required),
    long("threads", Required),
    long("unrestricted", No),
];

const SED: &[LongOpt] = &[
    long("quiet", No),
    long("silent", No),
    long("debug", No),
    long("expression", Required),
    long("line-length", Required),
    long("posix", No),
    long("regexp-extended", No),
    long("separate", No),
    long("sandbox", No),
    long("unbuffered", No),
    long("null-data", No),
];

const AWK: &[LongOpt] = &[long("field-separator", Required), long("assign", Required)];

const JQ: &[LongOpt] = &[
    long("raw-output", No),
    long("join-output", No),
    long("compact-output", No),
    long("null-input", No),
    long("exit-status", No),
    long("slurp", No),
    long("sort-keys", No),
    long("color-output", No),
    long("monochrome-output", No),
    long("ascii-output", No),
    long("raw-input", No),
    long("tab", No),
    long("indent", Required),
    long("seq", No),
    long("stream", No),
    long("raw-output0", No),
];

const SORT: &[LongOpt] = &[
    long("ignore-leading-blanks", No),
    long("dictionary-order", No),
    long("ignore-case", No),
    long("general-numeric-sort", No),
    long("ignore-nonprinting", No),
    long("month-sort", No),
    long("human-numeric-sort", No),
    long("numeric-sort", No),
    long("random-sort", No),
    long("reverse", No),
    long("version-sort", No),
    long("check", Optional),
    long("key", Required),
    long("field-separator", Required),
    long("stable", No),
    long("unique", No),
    long("zero-terminated", No),
    long("merge", No),
    long("buffer-size", Required),
    long("parallel", Required),
];

const UNIQ: &[LongOpt] = &[
    long("count", No),
    long("repeated", No),
    long("all-repeated", Optional),
    long("unique", No),
    long("ignore-case", No),
    long("zero-terminated", No),
    long("skip-fields", Required),
    long("skip-chars", Required),
    long("check-chars", Required),
    long("group", Optional),
];

const CUT: &[LongOpt] = &[
    long("bytes", Required),
    long("characters", Required),
    long("delimiter", Required),
    long("fields", Required),
    long("complement", No),
    long("only-delimited", No),
    long("output-delimiter", Required),
    long("zero-terminated", No),
];

const DIFF: &[LongOpt] = &[
    long("brief", No),
    long("report-identical-files", No),
    long("unified", Optional),
    long("context", Optional),
    long("side-by-side", No),
    long("recursive", No),
    long("new-file", No),
    long("text", No),
    long("ignore-case", No),
    long("ignore-all-space", No),
    long("ignore-space-change", No),
    long("ignore-blank-lines", No),
    long("ignore-trailing-space", No),
    long("strip-trailing-cr", No),
    long("color", Optional),
    long("minimal", No),
    long("normal", No),
    long("label", Required),
    long("show-c-function", No),
    long("suppress-common-lines", No),
    long("width", Required),
    long("exclude", Required),
];

const STAT: &[LongOpt] = &[
    long("dereference", No),
    long("file-system", No),
    long("format", Required),
    long("printf", Required),
    long("terse", No),
];

const DU: &[LongOpt] = &[
    long("all", No),
    long("apparent-size", No),
    long("block-size", Required),
    long("bytes", No),
    long("total", No),
    long("dereference-args", No),
    long("max-depth", Required),
    long("human-readable", No),
    long("si", No),
    long("summarize", No),
    long("threshold", Required),
    long("exclude", Required),
    long("one-file-system", No),
    long("count-links", No),
];

const DF: &[LongOpt] = &[
    long("all", No),
    long("human-readable", No),
    long("si", No),
    long("inodes", No),
    long("local", No),
    long("portability", No),
    long("print-type", No),
    long("type", Required),
    long("exclude-type", Required),
    long("output", Optional),
    long("total", No),
];

const READLINK: &[LongOpt] = &[
    long("canonicalize", No),
    long("canonicalize-existing", No),
    long("canonicalize-missing", No),
    long("no-newline", No),
    long("quiet", No),
    long("silent", No),
    long("verbose", No),
    long("zero", No),
    long("relative-to", Required),
    long("relative-base", Required),
    long("strip", No),
    long("no-symlinks", No),
    long("logical", No),
    long("physical", No),
];

const NL: &[LongOpt] = &[
    long("body-numbering", Required),
    long("number-format", Required),
    long("number-width", Required),
    long("number-separator", Required),
];

const SUMS: &[LongOpt] = &[
    long("binary", No),
    long("text", No),
    long("tag", No),
    long("zero", No),
];

const DATE: &[LongOpt] = &[
    long("date", Required),
    long("iso-8601", Optional),
    long("rfc-3339", Required),
    long("rfc-email", No),
    long("reference", Required),
    long("utc", No),
    long("universal", No),
];

const TREE: &[LongOpt] = &[
    long("noreport", No),
    long("dirsfirst", No),
    long("filelimit", Required),
    long("gitignore", No),
    long("charset", Required),
    long("prune", No),
    long("matchdirs", No),
    long("ignore-case", No),
    long("du", No),
    long("sort", Required),
];

/// The table. Builtins, `find` and `git` are checked in code
/// (`Operands::Special`) but are listed so [`lookup`] knows them.
pub const TABLE: &[Entry] = &[
    reader(
        &["ls"],
        spec("1aAbBcCdfFgGhHiI:klLmnNopqQrRsStT:uUvw:xXZ", LS),
        Operands::Names,
    ),
    reader(
        &["dir", "vdir"],
        spec("1aAbBcCdfFgGhHiI:klLmnNopqQrRsStT:uUvw:xXZ", LS),
        Operands::Names,
    ),
    reader(&["cat"], spec("AbeEnstTuv", CAT), Operands::Content),
    reader(&["tac", "rev"], spec("", &[]), Operands::Content),
    entry(&["nl"], spec("b:n:w:s:v:i:", NL), Operands::Content),
    reader(
        &["head"],
        spec("c:n:qvz0123456789", HEAD_TAIL),
        Operands::Content,
    ),
    reader(
        &["tail"],
        spec("c:n:fFqvzs:0123456789", HEAD_TAIL),
        Operands::Content,
    ),
    reader(&["wc"], spec("clmwL", WC), Operands::Names),
    Entry {
        inline_program: &["e", "regexp", "f", "file"],
        reads: &["f", "file"],
        recursive: &["r", "R", "recursive", "dereference-recursive"],
        ..entry(
            &["grep", "egrep", "fgrep"],
            spec("EFGPe:f:iyvwxclLm:obHhnqsaIzZA:B:C:TrRU0123456789", GREP),
            Operands::ProgramThenContent,
        )
    },
    Entry {
        inline_program: &["e", "regexp", "f", "file", "files", "type-list"],
        reads: &["f", "file"],
        ..entry(
            &["rg"],
            spec("e:f:isSwxvnNlcog:t:T:A:B:C:m:d:M:HIqUPr:j:0", RG),
            Operands::PatternThenTrees,
        )
    },
    Entry {
        script: Script::Sed,
        inline_program: &["e", "expression"],
        ..entry(
            &["sed"],
            spec("nEre:l:suz", SED),
            Operands::ProgramThenContent,
        )
    },
    Entry {
        script: Script::Awk,
        ..entry(
            &["awk", "gawk", "mawk", "nawk"],
            spec("F:v:", AWK),
            Operands::ProgramThenContent,
        )
    },
    Entry {
        script: Script::Jq,
        ..entry(
            &["jq"],
            spec("rjacnesSCMR", JQ),
            Operands::ProgramThenContent,
        )
    },
    entry(
        &["sort"],
        spec("bdfgiMhnRrVc::k:t:szumS:", SORT),
        Operands::Content,
    ),
    Entry {
        max_operands: Some(1),
        ..entry(&["uniq"], spec("cdD::uizf:s:w:", UNIQ), Operands::Content)
    },
    entry(&["cut"], spec("b:c:d:f:nsz", CUT), Operands::Content),
    entry(&["tr"], spec("cCdst", &[]), Operands::Text),
    entry(&["paste"], spec("d:sz", &[]), Operands::Content),
    entry(&["fold"], spec("bsw:", &[]), Operands::Content),
    entry(&["fmt"], spec("cstuw:p:g:", &[]), Operands::Content),
    entry(
        &["expand", "unexpand"],
        spec("it:a", &[]),
        Operands::Content,
    ),
    entry(&["column"], spec("tns:c:o:xNRe", &[]), Operands::Content),
    entry(&["strings"], spec("afn:t:e:w", &[]), Operands::Content),
    entry(
        &["od"],
        spec("A:bcdfiloxsvj:N:t:w::", &[]),
        Operands::Content,
    ),
    entry(&["hexdump"], spec("bcCdovxe:n:s:", &[]), Operands::Content),
    Entry {
        max_operands: Some(1),
        ..entry(
            &["xxd"],
            spec("aeEiubc:g:l:o:s:puC", &[]),
            Operands::Content,
        )
    },
    entry(&["base64", "base32"], spec("diw:", &[]), Operands::Content),
    entry(
        &[
            "md5sum",
            "sha1sum",
            "sha224sum",
            "sha256sum",
            "sha384sum",
            "sha512sum",
            "b2sum",
            "cksum",
        ],
        spec("btz", SUMS),
        Operands::Names,
    ),
    Entry {
        recursive: &["r", "recursive"],
        ..entry(
            &["diff"],
            spec("qsuU:cC:yrNaiwbBEZtTpd", DIFF),
            Operands::Content,
        )
    },
    entry(&["cmp"], spec("blsn:i:", &[]), Operands::Content),
    entry(&["comm"], spec("123z", &[]), Operands::Content),
    reader(&["stat"], spec("Lfc:t", STAT), Operands::Names),
    entry(&["file"], spec("bihLzkNps0", &[]), Operands::Names),
    reader(&["du"], spec("0abcd:hHklLmsSxB:t:X:", DU), Operands::Names),
    entry(&["df"], spec("ahHiklPTt:x:", DF), Operands::Names),
    entry(
        &["tree"],
        spec("adfilsxhpugDFCnNQAL:P:I:", TREE),
        Operands::Names,
    ),
    entry(
        &["realpath", "readlink"],
        spec("efmnqsvzLP", READLINK),
        Operands::Names,
    ),
    entry(&["basename"], spec("as:z", &[]), Operands::Text),
    entry(&["dirname"], spec("z", &[]), Operands::Text),
    entry(&["date"], spec("d:I::R:r:u", DATE), Operands::Text),
    entry(&["seq"], spec("f:s:w", &[]), Operands::Text),
    entry(&["sleep"], spec("", &[]), Operands::Text),
    entry(
        &["whoami", "nproc", "uptime", "tty", "arch", "logname"],
        spec("", &[]),
        Operands::None,
    ),
    entry(&["hostname"], spec("sfdiIaA", &[]), Operands::None),
    entry(&["uname"], spec("asnrvmpio", &[]), Operands::None),
    entry(&["id"], spec("gGnruzZ", &[]), Operands::Text),
    entry(&["which"], spec("as", &[]), Operands::Text),
    entry(&["find"], spec("", &[]), Operands::Special),
    entry(&["git"], spec("", &[]), Operands::Special),
];

/// The entry for a program name (a basename).
pub fn lookup(name: &str) -> Option<&'static Entry> {
    TABLE.iter().find(|e| e.names.contains(&name))
}
