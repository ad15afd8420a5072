//! The programs that can only read, with every option their real program
//! has and what it does: the entries the inert stage derives its
//! read-only profile from ([`Inert::Reader`]), and the floor reads for the
//! options that write (`sort -o`, `uniq IN OUT`, `tree -o`, `xxd IN OUT`).
//!
//! Each entry lists **every** option of the program installed on a Debian
//! system (GNU coreutils 9.1, grep 3.8, sed 4.9, gawk 5.2, ripgrep 13, jq
//! 1.6, tree 2.1, file 5.44, xxd 2022-01, util-linux 2.38), checked against
//! `--help`, the manual and the program itself (the differential fuzzer in
//! `tests/inert_differential/` generates argv from the real program's
//! option alphabet and runs them). An option's value has a [`Role`]; a
//! flag that changes more than the output has a [`Modifier`]. A flag with
//! neither only changes what is printed. Options a program does not have
//! are not listed: getopt rejects them, and the inert stage refuses what the
//! entry does not list.

use super::{
    CommandSpec, Dialect, Inert, Modifier, Operands, Role, Select, Trees, long, opts, spec,
};
use crate::options::HasArg::{No, Optional, Required, Two};
use crate::options::{Clusters, LongOpt, OptionSpec};

use Role::{Names, Program, Read, ReadTree, Run, Setting, Value, Write, WriteInto};

/// A reader: every option listed, the profile derived.
const fn reader(
    names: &'static [&'static str],
    options: OptionSpec,
    operands: Operands,
) -> CommandSpec {
    CommandSpec {
        inert: Inert::Reader {
            trees: Trees::Everything,
        },
        ..spec(names, options, operands)
    }
}

/// Long options matched whole: the program's own parser takes no
/// abbreviation (clap, jq, tree).
const fn exact(short: &'static str, long: &'static [LongOpt]) -> OptionSpec {
    OptionSpec {
        prefixes: false,
        ..opts(short, long)
    }
}

const HELP: [LongOpt; 2] = [long("help", No), long("version", No)];

const LS: &[LongOpt] = &[
    long("all", No),
    long("almost-all", No),
    long("author", No),
    long("escape", No),
    long("block-size", Required),
    long("ignore-backups", No),
    long("color", Optional),
    long("directory", No),
    long("dired", No),
    long("classify", Optional),
    long("file-type", No),
    long("format", Required),
    long("full-time", No),
    long("group-directories-first", No),
    long("no-group", No),
    long("human-readable", No),
    long("si", No),
    long("dereference-command-line", No),
    long("dereference-command-line-symlink-to-dir", No),
    long("hide", Required),
    long("hyperlink", Optional),
    long("indicator-style", Required),
    long("inode", No),
    long("ignore", Required),
    long("kibibytes", No),
    long("dereference", No),
    long("numeric-uid-gid", No),
    long("literal", No),
    long("hide-control-chars", No),
    long("show-control-chars", No),
    long("quote-name", No),
    long("quoting-style", Required),
    long("reverse", No),
    long("recursive", No),
    long("size", No),
    long("sort", Required),
    long("time", Required),
    long("time-style", Required),
    long("tabsize", Required),
    long("width", Required),
    long("context", No),
    long("zero", No),
    HELP[0],
    HELP[1],
];

const GREP: &[LongOpt] = &[
    long("basic-regexp", No),
    long("extended-regexp", No),
    long("fixed-regexp", No),
    long("fixed-strings", No),
    long("perl-regexp", No),
    long("after-context", Required),
    long("before-context", Required),
    long("binary-files", Required),
    long("byte-offset", No),
    long("context", Required),
    long("color", Optional),
    long("colour", Optional),
    long("count", No),
    long("devices", Required),
    long("directories", Required),
    long("exclude", Required),
    long("exclude-from", Required),
    long("exclude-dir", Required),
    long("file", Required),
    long("files-with-matches", No),
    long("files-without-match", No),
    long("include", Required),
    long("ignore-case", No),
    long("no-ignore-case", No),
    long("initial-tab", No),
    long("label", Required),
    long("line-buffered", No),
    long("line-number", No),
    long("line-regexp", No),
    long("max-count", Required),
    long("no-filename", No),
    long("no-group-separator", No),
    long("group-separator", Required),
    long("no-messages", No),
    long("null", No),
    long("null-data", No),
    long("only-matching", No),
    long("quiet", No),
    long("recursive", No),
    long("dereference-recursive", No),
    long("regexp", Required),
    long("invert-match", No),
    long("silent", No),
    long("text", No),
    long("binary", No),
    long("unix-byte-offsets", No),
    long("with-filename", No),
    long("word-regexp", No),
    HELP[0],
    HELP[1],
];

const RG: &[LongOpt] = &[
    long("after-context", Required),
    long("auto-hybrid-regex", No),
    long("before-context", Required),
    long("binary", No),
    long("block-buffered", No),
    long("byte-offset", No),
    long("case-sensitive", No),
    long("color", Required),
    long("colors", Required),
    long("column", No),
    long("context", Required),
    long("context-separator", Required),
    long("count", No),
    long("count-matches", No),
    long("crlf", No),
    long("debug", No),
    long("dfa-size-limit", Required),
    long("encoding", Required),
    long("engine", Required),
    long("field-context-separator", Required),
    long("field-match-separator", Required),
    long("file", Required),
    long("files", No),
    long("files-with-matches", No),
    long("files-without-match", No),
    long("fixed-strings", No),
    long("follow", No),
    long("glob", Required),
    long("glob-case-insensitive", No),
    long("heading", No),
    long("hidden", No),
    long("iglob", Required),
    long("ignore-case", No),
    long("ignore-file", Required),
    long("ignore-file-case-insensitive", No),
    long("include-zero", No),
    long("invert-match", No),
    long("json", No),
    long("line-buffered", No),
    long("line-number", No),
    long("line-regexp", No),
    long("max-columns", Required),
    long("max-columns-preview", No),
    long("max-count", Required),
    long("max-depth", Required),
    long("max-filesize", Required),
    long("mmap", No),
    long("multiline", No),
    long("multiline-dotall", No),
    long("no-auto-hybrid-regex", No),
    long("no-binary", No),
    long("no-block-buffered", No),
    long("no-column", No),
    long("no-config", No),
    long("no-context-separator", No),
    long("no-crlf", No),
    long("no-encoding", No),
    long("no-filename", No),
    long("no-fixed-strings", No),
    long("no-follow", No),
    long("no-glob-case-insensitive", No),
    long("no-heading", No),
    long("no-hidden", No),
    long("no-ignore", No),
    long("no-ignore-dot", No),
    long("no-ignore-exclude", No),
    long("no-ignore-file-case-insensitive", No),
    long("no-ignore-files", No),
    long("no-ignore-global", No),
    long("no-ignore-messages", No),
    long("no-ignore-parent", No),
    long("no-ignore-vcs", No),
    long("no-json", No),
    long("no-line-buffered", No),
    long("no-line-number", No),
    long("no-max-columns-preview", No),
    long("no-messages", No),
    long("no-mmap", No),
    long("no-multiline", No),
    long("no-multiline-dotall", No),
    long("no-one-file-system", No),
    long("no-pcre2", No),
    long("no-pcre2-unicode", No),
    long("no-pre", No),
    long("no-require-git", No),
    long("no-search-zip", No),
    long("no-stats", No),
    long("no-text", No),
    long("no-trim", No),
    long("no-unicode", No),
    long("null", No),
    long("null-data", No),
    long("one-file-system", No),
    long("only-matching", No),
    long("passthru", No),
    long("passthrough", No),
    long("path-separator", Required),
    long("pcre2", No),
    long("pcre2-unicode", No),
    long("pcre2-version", No),
    long("pre", Required),
    long("pre-glob", Required),
    long("pretty", No),
    long("quiet", No),
    long("regex-size-limit", Required),
    long("regexp", Required),
    long("replace", Required),
    long("require-git", No),
    long("search-zip", No),
    long("smart-case", No),
    long("sort", Required),
    long("sort-files", No),
    long("sortr", Required),
    long("stats", No),
    long("text", No),
    long("threads", Required),
    long("trace", No),
    long("trim", No),
    long("type", Required),
    long("type-add", Required),
    long("type-clear", Required),
    long("type-list", No),
    long("type-not", Required),
    long("unicode", No),
    long("unrestricted", No),
    long("vimgrep", No),
    long("with-filename", No),
    long("word-regexp", No),
    HELP[0],
    HELP[1],
];

const SED: &[LongOpt] = &[
    long("quiet", No),
    long("silent", No),
    long("debug", No),
    long("expression", Required),
    long("file", Required),
    long("follow-symlinks", No),
    long("in-place", Optional),
    long("line-length", Required),
    long("null-data", No),
    long("zero-terminated", No),
    long("posix", No),
    long("regexp-extended", No),
    long("separate", No),
    long("sandbox", No),
    long("unbuffered", No),
    HELP[0],
    HELP[1],
];

const AWK: &[LongOpt] = &[
    long("file", Required),
    long("field-separator", Required),
    long("assign", Required),
    long("characters-as-bytes", No),
    long("traditional", No),
    long("copyright", No),
    long("dump-variables", Optional),
    long("debug", Optional),
    long("source", Required),
    long("exec", Required),
    long("gen-pot", No),
    long("help", No),
    long("include", Required),
    long("trace", No),
    long("load", Required),
    long("lint", Optional),
    long("bignum", No),
    long("use-lc-numeric", No),
    long("non-decimal-data", No),
    long("pretty-print", Optional),
    long("optimize", No),
    long("profile", Optional),
    long("posix", No),
    long("re-interval", No),
    long("no-optimize", No),
    long("sandbox", No),
    long("lint-old", No),
    long("version", No),
];

const JQ: &[LongOpt] = &[
    long("raw-output", No),
    long("join-output", No),
    long("ascii-output", No),
    long("compact-output", No),
    long("null-input", No),
    long("exit-status", No),
    long("slurp", No),
    long("sort-keys", No),
    long("color-output", No),
    long("monochrome-output", No),
    long("raw-input", No),
    long("tab", No),
    long("indent", Required),
    long("seq", No),
    long("stream", No),
    long("unbuffered", No),
    long("arg", Two),
    long("argjson", Two),
    long("slurpfile", Two),
    long("rawfile", Two),
    long("argfile", Two),
    long("args", No),
    long("jsonargs", No),
    long("from-file", No),
    long("run-tests", No),
    long("debug-dump-disasm", No),
    long("debug-trace", No),
    HELP[0],
    HELP[1],
];

const SORT: &[LongOpt] = &[
    long("ignore-leading-blanks", No),
    long("check", Optional),
    long("compress-program", Required),
    long("debug", No),
    long("dictionary-order", No),
    long("files0-from", Required),
    long("general-numeric-sort", No),
    long("human-numeric-sort", No),
    long("ignore-case", No),
    long("ignore-nonprinting", No),
    long("key", Required),
    long("merge", No),
    long("month-sort", No),
    long("numeric-sort", No),
    long("output", Required),
    long("parallel", Required),
    long("random-sort", No),
    long("random-source", Required),
    long("reverse", No),
    long("sort", Required),
    long("stable", No),
    long("buffer-size", Required),
    long("field-separator", Required),
    long("temporary-directory", Required),
    long("unique", No),
    long("version-sort", No),
    long("zero-terminated", No),
    long("batch-size", Required),
    HELP[0],
    HELP[1],
];

const DIFF: &[LongOpt] = &[
    long("brief", No),
    long("report-identical-files", No),
    long("context", Optional),
    long("unified", Optional),
    long("side-by-side", No),
    long("recursive", No),
    long("new-file", No),
    long("unidirectional-new-file", No),
    long("text", No),
    long("ignore-case", No),
    long("ignore-file-name-case", No),
    long("no-ignore-file-name-case", No),
    long("ignore-all-space", No),
    long("ignore-space-change", No),
    long("ignore-tab-expansion", No),
    long("ignore-trailing-space", No),
    long("ignore-blank-lines", No),
    long("ignore-matching-lines", Required),
    long("strip-trailing-cr", No),
    long("color", Optional),
    long("palette", Required),
    long("minimal", No),
    long("normal", No),
    long("ed", No),
    long("forward-ed", No),
    long("rcs", No),
    long("label", Required),
    long("show-c-function", No),
    long("show-function-line", Required),
    long("suppress-common-lines", No),
    long("suppress-blank-empty", No),
    long("width", Required),
    long("left-column", No),
    long("tabsize", Required),
    long("initial-tab", No),
    long("expand-tabs", No),
    long("exclude", Required),
    long("exclude-from", Required),
    long("starting-file", Required),
    long("speed-large-files", No),
    long("horizon-lines", Required),
    long("from-file", Required),
    long("to-file", Required),
    long("line-format", Required),
    long("old-line-format", Required),
    long("new-line-format", Required),
    long("unchanged-line-format", Required),
    long("old-group-format", Required),
    long("new-group-format", Required),
    long("changed-group-format", Required),
    long("unchanged-group-format", Required),
    long("ifdef", Required),
    long("no-dereference", No),
    long("paginate", No),
    HELP[0],
    HELP[1],
];

const SUMS: &[LongOpt] = &[
    long("binary", No),
    long("check", No),
    long("tag", No),
    long("text", No),
    long("zero", No),
    long("ignore-missing", No),
    long("quiet", No),
    long("status", No),
    long("strict", No),
    long("warn", No),
    long("length", Required),
    long("algorithm", Required),
    long("untagged", No),
    long("base64", No),
    long("raw", No),
    long("debug", No),
    HELP[0],
    HELP[1],
];

const FILE: &[LongOpt] = &[
    long("apple", No),
    long("brief", No),
    long("checking-printout", No),
    long("compile", No),
    long("debug", No),
    long("exclude", Required),
    long("exclude-quiet", Required),
    long("extension", No),
    long("files-from", Required),
    long("separator", Required),
    long("mime", No),
    long("mime-type", No),
    long("mime-encoding", No),
    long("keep-going", No),
    long("list", No),
    long("dereference", No),
    long("no-dereference", No),
    long("magic-file", Required),
    long("no-buffer", No),
    long("no-pad", No),
    long("print0", No),
    long("preserve-date", No),
    long("parameter", Required),
    long("raw", No),
    long("special-files", No),
    long("no-sandbox", No),
    long("uncompress", No),
    long("uncompress-noreport", No),
    HELP[0],
    HELP[1],
];

const DU: &[LongOpt] = &[
    long("null", No),
    long("all", No),
    long("apparent-size", No),
    long("block-size", Required),
    long("bytes", No),
    long("total", No),
    long("dereference-args", No),
    long("max-depth", Required),
    long("files0-from", Required),
    long("human-readable", No),
    long("inodes", No),
    long("dereference", No),
    long("count-links", No),
    long("no-dereference", No),
    long("separate-dirs", No),
    long("si", No),
    long("summarize", No),
    long("threshold", Required),
    long("time", Optional),
    long("time-style", Required),
    long("exclude-from", Required),
    long("exclude", Required),
    long("one-file-system", No),
    HELP[0],
    HELP[1],
];

const TREE: &[LongOpt] = &[
    long("help", No),
    long("version", No),
    long("inodes", No),
    long("device", No),
    long("noreport", No),
    long("nolinks", No),
    long("dirsfirst", No),
    long("filesfirst", No),
    long("charset", Required),
    long("si", No),
    long("du", No),
    long("prune", No),
    long("timefmt", Required),
    long("ignore-case", No),
    long("matchdirs", No),
    long("metafirst", No),
    long("gitignore", No),
    long("gitfile", Required),
    long("info", No),
    long("infofile", Required),
    long("fromfile", No),
    long("fflinks", No),
    long("filelimit", Required),
    long("sort", Required),
    long("hintro", Required),
    long("houtro", Required),
];

/// The readers.
pub const READERS: &[CommandSpec] = &[
    // ------------------------------------------------------- names only
    reader(
        &["ls", "dir", "vdir"],
        opts("abcdfghiklmnopqrstuvw:xABCDFGHI:LNQRST:UXZ1", LS),
        Operands::All(Names),
    ),
    reader(
        &["stat"],
        opts(
            "c:fLt",
            &[
                long("dereference", No),
                long("file-system", No),
                long("cached", Required),
                long("format", Required),
                long("printf", Required),
                long("terse", No),
                HELP[0],
                HELP[1],
            ],
        ),
        Operands::All(Names),
    ),
    CommandSpec {
        // Counts, not contents; `--files0-from` reads names from a file
        // and prints the unreadable ones.
        option_roles: &[(&["files0-from"], Read)],
        modifiers: &[(&["files0-from"], Modifier::NamesFromInput)],
        ..reader(
            &["wc"],
            opts(
                "clLmw",
                &[
                    long("bytes", No),
                    long("chars", No),
                    long("lines", No),
                    long("files0-from", Required),
                    long("max-line-length", No),
                    long("words", No),
                    long("total", Required),
                    HELP[0],
                    HELP[1],
                ],
            ),
            Operands::All(Names),
        )
    },
    CommandSpec {
        option_roles: &[
            (&["files0-from", "X", "exclude-from"], Read),
            (&["exclude"], Value),
        ],
        modifiers: &[(&["files0-from"], Modifier::NamesFromInput)],
        ..reader(
            &["du"],
            opts("0abd:chHklmst:xB:DLPSX:", DU),
            Operands::All(Names),
        )
    },
    reader(
        &["df"],
        opts(
            "aB:hHiklmPt:Tvx:",
            &[
                long("all", No),
                long("block-size", Required),
                long("human-readable", No),
                long("si", No),
                long("inodes", No),
                long("local", No),
                long("no-sync", No),
                long("output", Optional),
                long("portability", No),
                long("sync", No),
                long("total", No),
                long("type", Required),
                long("print-type", No),
                long("exclude-type", Required),
                HELP[0],
                HELP[1],
            ],
        ),
        Operands::All(Names),
    ),
    CommandSpec {
        // `file` reads the start of each file and prints its type — and,
        // with `-d` or a magic entry's `%s`, bytes of it: its operands are
        // read for their contents. `-m FILE` and a `~/.magic` choose what
        // it prints.
        option_roles: &[(&["m", "magic-file"], Run), (&["f", "files-from"], Read)],
        modifiers: &[
            (
                &["z", "Z", "uncompress", "uncompress-noreport"],
                Modifier::Runs,
            ),
            (&["C", "compile", "p", "preserve-date"], Modifier::Writes),
            (&["f", "files-from"], Modifier::NamesFromInput),
            (&["S", "no-sandbox"], Modifier::Setting),
        ],
        startup_files: &[".magic", ".magic.mgc"],
        ..reader(
            &["file"],
            opts("bcCde:Ef:F:hiklLm:nNpP:rsSvzZ0", FILE),
            Operands::All(Read),
        )
    },
    CommandSpec {
        // tree reads its options like no getopt: each letter that takes a
        // value takes the next word (`tree -Lo 1 out.txt` writes out.txt).
        option_roles: &[
            (&["o"], Write),
            (&["gitfile", "infofile", "hintro", "houtro"], Read),
        ],
        modifiers: &[
            // `-R` runs tree again at each level with `-o 00Tree.html`.
            (&["R"], Modifier::Writes),
            (&["fromfile"], Modifier::NamesFromInput),
        ],
        ..reader(
            &["tree"],
            OptionSpec {
                clusters: Clusters::NextWords,
                ..exact("acdfghilnpqrstuvxACDFJNQRSUXL:P:I:o:H:T:", TREE)
            },
            Operands::All(Names),
        )
    },
    reader(
        &["realpath"],
        opts(
            "eLmPqsz",
            &[
                long("canonicalize-existing", No),
                long("canonicalize-missing", No),
                long("logical", No),
                long("physical", No),
                long("quiet", No),
                long("relative-to", Required),
                long("relative-base", Required),
                long("strip", No),
                long("no-symlinks", No),
                long("zero", No),
                HELP[0],
                HELP[1],
            ],
        ),
        Operands::All(Names),
    ),
    reader(
        &["readlink"],
        opts(
            "efmnqsvz",
            &[
                long("canonicalize", No),
                long("canonicalize-existing", No),
                long("canonicalize-missing", No),
                long("no-newline", No),
                long("quiet", No),
                long("silent", No),
                long("verbose", No),
                long("zero", No),
                HELP[0],
                HELP[1],
            ],
        ),
        Operands::All(Names),
    ),
    CommandSpec {
        // A checksum of a file is not its content; `-c` reads a list of
        // names from a file.
        modifiers: &[(&["c", "check"], Modifier::NamesFromInput)],
        ..reader(
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
            opts("a:bcl:tzw", SUMS),
            Operands::All(Names),
        )
    },
    // ------------------------------------------------------- text only
    reader(
        &["basename"],
        opts(
            "as:z",
            &[
                long("multiple", No),
                long("suffix", Required),
                long("zero", No),
                HELP[0],
                HELP[1],
            ],
        ),
        Operands::All(Value),
    ),
    reader(
        &["dirname"],
        opts("z", &[long("zero", No), HELP[0], HELP[1]]),
        Operands::All(Value),
    ),
    CommandSpec {
        option_roles: &[
            (&["f", "file"], Read),
            (&["r", "reference"], Names),
            (&["s", "set"], Setting),
        ],
        ..reader(
            &["date"],
            opts(
                "d:f:I::r:Rs:u",
                &[
                    long("date", Required),
                    long("debug", No),
                    long("file", Required),
                    long("iso-8601", Optional),
                    long("resolution", No),
                    long("rfc-email", No),
                    long("rfc-822", No),
                    long("rfc-2822", No),
                    long("rfc-3339", Required),
                    long("reference", Required),
                    long("set", Required),
                    long("utc", No),
                    long("universal", No),
                    HELP[0],
                    HELP[1],
                ],
            ),
            Operands::Format,
        )
    },
    reader(
        &["seq"],
        opts(
            "f:s:w",
            &[
                long("format", Required),
                long("separator", Required),
                long("equal-width", No),
                HELP[0],
                HELP[1],
            ],
        ),
        Operands::All(Value),
    ),
    reader(&["sleep"], opts("", &HELP), Operands::All(Value)),
    reader(
        &["whoami", "arch", "logname"],
        opts("", &HELP),
        Operands::All(Value),
    ),
    // `expr`: arithmetic and string tests on its operands, printed.
    reader(
        &["expr"],
        opts("", &[HELP[0], HELP[1]]),
        Operands::All(Value),
    ),
    // `getconf NAME [PATH]`: a configuration value (`-a` all of them).
    reader(
        &["getconf"],
        opts("av:", &[long("all", No), HELP[0], HELP[1]]),
        Operands::All(Value),
    ),
    // `locale`: the locale settings, or the names (`-a`) and keywords
    // (`-k`, `-c`) it lists. Not `-m`/`--charmaps`: it runs `gzip` to read
    // compressed charmaps (found by the differential fuzzer).
    reader(
        &["locale"],
        opts(
            "ackv",
            &[
                long("all-locales", No),
                long("category-name", No),
                long("keyword-name", No),
                long("verbose", No),
                HELP[0],
                HELP[1],
            ],
        ),
        Operands::All(Value),
    ),
    // `yes [STRING…]`: prints its operands again and again (until the
    // reader stops: `yes | head -3`).
    reader(
        &["yes"],
        opts("", &[HELP[0], HELP[1]]),
        Operands::All(Value),
    ),
    reader(
        &["nproc"],
        opts(
            "",
            &[long("all", No), long("ignore", Required), HELP[0], HELP[1]],
        ),
        Operands::All(Value),
    ),
    reader(
        &["uptime"],
        opts(
            "hpsV",
            &[long("pretty", No), long("since", No), HELP[0], HELP[1]],
        ),
        Operands::All(Value),
    ),
    reader(
        &["tty"],
        opts(
            "s",
            &[long("silent", No), long("quiet", No), HELP[0], HELP[1]],
        ),
        Operands::All(Value),
    ),
    CommandSpec {
        // The names that ask DNS (or NIS) use the network; an operand or
        // `-F` sets the host name.
        option_roles: &[(&["F", "file"], Setting)],
        modifiers: &[
            (
                &[
                    "a",
                    "alias",
                    "A",
                    "all-fqdns",
                    "d",
                    "domain",
                    "f",
                    "fqdn",
                    "long",
                    "i",
                    "ip-address",
                    // A netlink query of the interfaces.
                    "I",
                    "all-ip-addresses",
                    "y",
                    "yp",
                    "nis",
                ],
                Modifier::Connects,
            ),
            (&["b", "boot"], Modifier::Setting),
        ],
        ..reader(
            &["hostname"],
            opts(
                "aAbdfF:hiIsvVy",
                &[
                    long("alias", No),
                    long("all-fqdns", No),
                    long("boot", No),
                    long("domain", No),
                    long("file", Required),
                    long("fqdn", No),
                    long("long", No),
                    long("help", No),
                    long("ip-address", No),
                    long("all-ip-addresses", No),
                    long("short", No),
                    long("verbose", No),
                    long("version", No),
                    long("yp", No),
                    long("nis", No),
                ],
            ),
            Operands::All(Setting),
        )
    },
    reader(
        &["uname"],
        opts(
            "asnrvmpio",
            &[
                long("all", No),
                long("kernel-name", No),
                long("nodename", No),
                long("kernel-release", No),
                long("kernel-version", No),
                long("machine", No),
                long("processor", No),
                long("hardware-platform", No),
                long("operating-system", No),
                HELP[0],
                HELP[1],
            ],
        ),
        Operands::All(Value),
    ),
    reader(
        &["id"],
        opts(
            "agGnruzZ",
            &[
                long("context", No),
                long("group", No),
                long("groups", No),
                long("name", No),
                long("real", No),
                long("user", No),
                long("zero", No),
                HELP[0],
                HELP[1],
            ],
        ),
        Operands::All(Value),
    ),
    // Debian's `which` is a shell script with `-a` and `-s`.
    reader(&["which"], exact("as", &[]), Operands::All(Value)),
    reader(
        &["tr"],
        opts(
            "cCdst",
            &[
                long("complement", No),
                long("delete", No),
                long("squeeze-repeats", No),
                long("truncate-set1", No),
                HELP[0],
                HELP[1],
            ],
        ),
        Operands::All(Value),
    ),
    // ------------------------------------------------------- contents
    reader(
        &["cat"],
        opts(
            "AbeEnstTuv",
            &[
                long("show-all", No),
                long("number-nonblank", No),
                long("show-ends", No),
                long("number", No),
                long("squeeze-blank", No),
                long("show-tabs", No),
                long("show-nonprinting", No),
                HELP[0],
                HELP[1],
            ],
        ),
        Operands::All(Read),
    ),
    CommandSpec {
        option_roles: &[(&["s", "separator"], Program(Dialect::Pattern))],
        ..reader(
            &["tac"],
            opts(
                "brs:",
                &[
                    long("before", No),
                    long("regex", No),
                    long("separator", Required),
                    HELP[0],
                    HELP[1],
                ],
            ),
            Operands::All(Read),
        )
    },
    reader(
        &["rev"],
        opts("hV0", &[long("zero", No), HELP[0], HELP[1]]),
        Operands::All(Read),
    ),
    reader(
        &["nl"],
        opts(
            "b:d:f:h:i:l:n:ps:v:w:",
            &[
                long("body-numbering", Required),
                long("section-delimiter", Required),
                long("footer-numbering", Required),
                long("header-numbering", Required),
                long("line-increment", Required),
                long("join-blank-lines", Required),
                long("number-format", Required),
                long("no-renumber", No),
                long("number-separator", Required),
                long("starting-line-number", Required),
                long("number-width", Required),
                HELP[0],
                HELP[1],
            ],
        ),
        Operands::All(Read),
    ),
    reader(
        &["head"],
        opts(
            "c:n:qvz0123456789",
            &[
                long("bytes", Required),
                long("lines", Required),
                long("quiet", No),
                long("silent", No),
                long("verbose", No),
                long("zero-terminated", No),
                HELP[0],
                HELP[1],
            ],
        ),
        Operands::All(Read),
    ),
    reader(
        &["tail"],
        opts(
            "c:n:fFqs:vz0123456789",
            &[
                long("bytes", Required),
                long("lines", Required),
                long("follow", Optional),
                long("max-unchanged-stats", Required),
                long("pid", Required),
                long("quiet", No),
                long("silent", No),
                long("retry", No),
                long("sleep-interval", Required),
                long("verbose", No),
                long("zero-terminated", No),
                HELP[0],
                HELP[1],
            ],
        ),
        Operands::All(Read),
    ),
    CommandSpec {
        option_roles: &[
            (&["e", "regexp"], Program(Dialect::Pattern)),
            (&["f", "file"], Read),
            (&["include"], Role::Select(Select::Include)),
            (&["exclude"], Role::Select(Select::Exclude)),
            // Read, and its globs are not followed.
            (&["exclude-from"], Read),
        ],
        modifiers: &[
            (
                &[
                    "r",
                    "recursive",
                    "R",
                    "dereference-recursive",
                    "d",
                    "directories",
                ],
                Modifier::Recursive,
            ),
            (&["R", "dereference-recursive"], Modifier::FollowsLinks),
            // Only file names, counts or the exit status come out.
            (
                &[
                    "l",
                    "L",
                    "c",
                    "q",
                    "files-with-matches",
                    "files-without-match",
                    "count",
                    "quiet",
                    "silent",
                ],
                Modifier::ReadOnly,
            ),
        ],
        ..reader(
            &["grep", "egrep", "fgrep"],
            opts(
                "0123456789A:B:C:D:EFGHIPTUVX:abcd:e:f:hiLlm:noqRrsuvwxyZz",
                GREP,
            ),
            Operands::ProgramFirst {
                program: Dialect::Pattern,
                rest: Read,
                inline: &["e", "regexp", "f", "file"],
            },
        )
    },
    CommandSpec {
        // ripgrep (clap) takes no abbreviation; `-r` is `--replace TEXT`.
        option_roles: &[
            (&["e", "regexp"], Program(Dialect::Pattern)),
            (&["f", "file", "ignore-file"], Read),
            (&["pre"], Run),
            (&["g", "glob"], Role::Select(Select::Glob)),
            (&["iglob"], Role::Select(Select::GlobCaseless)),
            (
                &["glob-case-insensitive"],
                Role::Select(Select::GlobsCaseless),
            ),
            (&["t", "type"], Role::Select(Select::Type)),
            (&["T", "type-not"], Role::Select(Select::TypeNot)),
        ],
        modifiers: &[
            (&["z", "search-zip", "pre-glob"], Modifier::Runs),
            (
                &[
                    "hidden",
                    "u",
                    "unrestricted",
                    "no-ignore",
                    "no-ignore-dot",
                    "no-ignore-exclude",
                    "no-ignore-files",
                    "no-ignore-global",
                    "no-ignore-parent",
                    "no-ignore-vcs",
                    "no-require-git",
                    // Rules vouch does not read can whitelist a hidden file.
                    "ignore-file",
                    "type-add",
                    "type-clear",
                ],
                Modifier::Hidden,
            ),
            (&["L", "follow"], Modifier::FollowsLinks),
        ],
        inert: Inert::Reader {
            trees: Trees::SkipsHidden,
        },
        ..spec(
            &["rg"],
            exact("A:B:C:E:M:T:abce:f:Fg:hHiIj:lLm:nNopPqr:sSt:uUvVwxz0", RG),
            Operands::ProgramFirst {
                program: Dialect::Pattern,
                rest: ReadTree,
                inline: &["e", "regexp", "f", "file", "files", "type-list"],
            },
        )
    },
    CommandSpec {
        option_roles: &[
            (&["e", "expression"], Program(Dialect::Sed)),
            (&["f", "file"], Run),
        ],
        modifiers: &[(&["i", "in-place"], Modifier::InPlace)],
        ..reader(
            &["sed", "gsed"],
            opts("Ee:f:i::l:nrsuz", SED),
            Operands::ProgramFirst {
                program: Dialect::Sed,
                rest: Read,
                inline: &["e", "expression", "f", "file"],
            },
        )
    },
    CommandSpec {
        // gawk's `-d`, `-o` and `-p` write a file (awkvars.out,
        // awkprof.out, the pretty-printed program); `-D` starts the
        // debugger, which reads commands (`eval`) from its input.
        option_roles: &[
            (&["e", "source"], Program(Dialect::Awk)),
            (
                &["f", "file", "E", "exec", "i", "include", "l", "load"],
                Run,
            ),
            (&["W", "Z"], Setting),
        ],
        modifiers: &[
            (
                &["d", "dump-variables", "o", "pretty-print", "p", "profile"],
                Modifier::Writes,
            ),
            (&["D", "debug"], Modifier::Runs),
        ],
        ..reader(
            &["awk", "gawk", "mawk", "nawk"],
            // gawk's optstring starts with `+`: options stop at the first
            // operand (`awk 'PROGRAM' --source X` runs PROGRAM on the file
            // `--source`).
            OptionSpec {
                stop_at_operand: true,
                ..opts("f:F:v:bcCd::D::e:E:ghi:Il:L::MnNo::Op::PrsStVW:YZ:", AWK)
            },
            Operands::ProgramFirst {
                program: Dialect::Awk,
                rest: Read,
                inline: &["e", "source", "f", "file", "E", "exec"],
            },
        )
    },
    CommandSpec {
        // jq's own parser: clusters of flags, `-L DIR`, long options whole.
        // `-f` makes the first operand a file of jq code; `~/.jq` is
        // loaded on every run (its definitions may replace builtins).
        option_roles: &[(&["L"], Run), (&["slurpfile", "rawfile", "argfile"], Read)],
        modifiers: &[(&["f", "from-file", "run-tests"], Modifier::Runs)],
        startup_files: &[".jq"],
        ..reader(
            &["jq"],
            exact("acCeL:fhjMnrRsS", JQ),
            Operands::ProgramFirst {
                program: Dialect::Jq,
                rest: Read,
                inline: &[],
            },
        )
    },
    CommandSpec {
        option_roles: &[
            (&["o", "output"], Write),
            (&["T", "temporary-directory"], WriteInto),
            (&["compress-program"], Run),
            (&["files0-from", "random-source"], Read),
        ],
        modifiers: &[(&["files0-from"], Modifier::NamesFromInput)],
        ..reader(
            &["sort"],
            // `-y` takes only an attached value: sort gives a separate word
            // that is not a number back as an operand.
            opts("bcCdfghik:mMno:rRsS:t:T:uVy::z", SORT),
            Operands::All(Read),
        )
    },
    // `uniq [IN [OUT]]`: the second operand is written.
    reader(
        &["uniq"],
        opts(
            "0123456789cdDf:is:uw:z",
            &[
                long("count", No),
                long("repeated", No),
                long("all-repeated", Optional),
                long("group", Optional),
                long("skip-fields", Required),
                long("skip-chars", Required),
                long("unique", No),
                long("ignore-case", No),
                long("check-chars", Required),
                long("zero-terminated", No),
                HELP[0],
                HELP[1],
            ],
        ),
        Operands::Positional(&[Read, Write]),
    ),
    reader(
        &["cut"],
        opts(
            "b:c:d:f:nsz",
            &[
                long("bytes", Required),
                long("characters", Required),
                long("delimiter", Required),
                long("fields", Required),
                long("complement", No),
                long("only-delimited", No),
                long("output-delimiter", Required),
                long("zero-terminated", No),
                HELP[0],
                HELP[1],
            ],
        ),
        Operands::All(Read),
    ),
    reader(
        &["paste"],
        opts(
            "d:sz",
            &[
                long("delimiters", Required),
                long("serial", No),
                long("zero-terminated", No),
                HELP[0],
                HELP[1],
            ],
        ),
        Operands::All(Read),
    ),
    reader(
        &["fold"],
        opts(
            "bsw:0123456789",
            &[
                long("bytes", No),
                long("spaces", No),
                long("width", Required),
                HELP[0],
                HELP[1],
            ],
        ),
        Operands::All(Read),
    ),
    reader(
        &["fmt"],
        opts(
            "0123456789cstuw:p:g:",
            &[
                long("crown-margin", No),
                long("prefix", Required),
                long("split-only", No),
                long("tagged-paragraph", No),
                long("uniform-spacing", No),
                long("width", Required),
                long("goal", Required),
                HELP[0],
                HELP[1],
            ],
        ),
        Operands::All(Read),
    ),
    reader(
        &["expand"],
        opts(
            "it:0123456789",
            &[
                long("initial", No),
                long("tabs", Required),
                HELP[0],
                HELP[1],
            ],
        ),
        Operands::All(Read),
    ),
    reader(
        &["unexpand"],
        opts(
            "at:0123456789",
            &[
                long("all", No),
                long("first-only", No),
                long("tabs", Required),
                HELP[0],
                HELP[1],
            ],
        ),
        Operands::All(Read),
    ),
    reader(
        &["column"],
        opts(
            "c:dE:eH:hi:Jl:LN:n:O:o:p:R:r:s:T:tVW:x",
            &[
                long("table", No),
                long("table-name", Required),
                long("table-order", Required),
                long("table-columns", Required),
                long("table-columns-limit", Required),
                long("table-noextreme", Required),
                long("table-noheadings", No),
                long("table-header-repeat", No),
                long("table-hide", Required),
                long("table-right", Required),
                long("table-truncate", Required),
                long("table-wrap", Required),
                long("keep-empty-lines", No),
                long("json", No),
                long("tree", Required),
                long("tree-id", Required),
                long("tree-parent", Required),
                long("output-width", Required),
                long("output-separator", Required),
                long("separator", Required),
                long("fillrows", No),
                long("help", No),
                long("version", No),
            ],
        ),
        Operands::All(Read),
    ),
    CommandSpec {
        // binutils: an operand `@FILE` is read as more options.
        response_files: true,
        ..reader(
            &["strings"],
            opts(
                "adfhHn:wt:e:T:Vvs:U:0123456789o",
                &[
                    long("all", No),
                    long("data", No),
                    long("print-file-name", No),
                    long("bytes", Required),
                    long("radix", Required),
                    long("include-all-whitespace", No),
                    long("target", Required),
                    long("encoding", Required),
                    long("unicode", Required),
                    long("output-separator", Required),
                    HELP[0],
                    HELP[1],
                ],
            ),
            Operands::All(Read),
        )
    },
    reader(
        &["od"],
        opts(
            "A:aBbcDdeFfHhIij:LlN:OoS:st:vw::Xx",
            &[
                long("address-radix", Required),
                long("endian", Required),
                long("skip-bytes", Required),
                long("read-bytes", Required),
                long("strings", Optional),
                long("format", Required),
                long("output-duplicates", No),
                long("width", Optional),
                long("traditional", No),
                HELP[0],
                HELP[1],
            ],
        ),
        Operands::All(Read),
    ),
    CommandSpec {
        option_roles: &[(&["f", "format-file"], Read)],
        ..reader(
            &["hexdump"],
            opts(
                "bcCde:f:L::n:os:vxhV",
                &[
                    long("one-byte-octal", No),
                    long("one-byte-char", No),
                    long("canonical", No),
                    long("two-bytes-decimal", No),
                    long("two-bytes-octal", No),
                    long("two-bytes-hex", No),
                    long("color", Optional),
                    long("format", Required),
                    long("format-file", Required),
                    long("length", Required),
                    long("skip", Required),
                    long("no-squeezing", No),
                    long("help", No),
                    long("version", No),
                ],
            ),
            Operands::All(Read),
        )
    },
    // xxd reads one option per word by its first letter (`-ps` is `-p`,
    // `-c8` is `-c 8`, `-cols 8` too); `xxd [IN [OUT]]` writes OUT.
    reader(
        &["xxd"],
        OptionSpec {
            clusters: Clusters::FirstLetter,
            stop_at_operand: true,
            ..exact(
                "abCc:deEg:hil:n:o:prs:uv",
                &[
                    long("cols", Required),
                    long("groupsize", Required),
                    long("len", Required),
                    long("name", Required),
                    long("offset", Required),
                    long("seek", Required),
                ],
            )
        },
        Operands::Positional(&[Read, Write]),
    ),
    reader(
        &["base64", "base32"],
        opts(
            "diw:",
            &[
                long("decode", No),
                long("ignore-garbage", No),
                long("wrap", Required),
                HELP[0],
                HELP[1],
            ],
        ),
        Operands::All(Read),
    ),
    CommandSpec {
        option_roles: &[
            (&["X", "exclude-from"], Read),
            (&["from-file", "to-file"], ReadTree),
        ],
        modifiers: &[
            (&["r", "recursive"], Modifier::Recursive),
            // `-l` pipes the output through `pr`.
            (&["l", "paginate"], Modifier::Runs),
        ],
        ..reader(
            &["diff"],
            opts(
                "0123456789abBcC:dD:eEfF:hHiI:lL:nNpPqrsS:tTuU:vwW:xX:yZ",
                DIFF,
            ),
            // A directory operand is compared entry by entry, its files
            // read (with `-N`, a file on one side only is printed whole):
            // every operand is a tree, searched without `-r` too.
            Operands::All(ReadTree),
        )
    },
    reader(
        &["cmp"],
        opts(
            "bi:ln:sv",
            &[
                long("print-bytes", No),
                long("ignore-initial", Required),
                long("verbose", No),
                long("bytes", Required),
                long("quiet", No),
                long("silent", No),
                long("help", No),
                long("version", No),
            ],
        ),
        Operands::All(Read),
    ),
    reader(
        &["comm"],
        opts(
            "123z",
            &[
                long("check-order", No),
                long("nocheck-order", No),
                long("output-delimiter", Required),
                long("total", No),
                long("zero-terminated", No),
                HELP[0],
                HELP[1],
            ],
        ),
        Operands::All(Read),
    ),
    // ------------------------------------------------------- builtins
    // bash builtins that only print, test or move within the command; the
    // inert stage checks `printf -v`, `test -v` and arithmetic tests with
    // bash's rules. (`echo`, `printf`, `test`, `true`, `false` and `pwd`
    // are also programs: their words are text either way.)
    CommandSpec {
        inert: Inert::Builtin,
        ..spec(
            &[
                "echo", "printf", "test", "[", "true", "false", ":", "pwd", "cd", "pushd", "popd",
                "dirs", "exit", "return", "break", "continue", "shift", "wait", "times", "type",
                "set",
            ],
            opts("", &[]),
            Operands::All(Value),
        )
    },
];
