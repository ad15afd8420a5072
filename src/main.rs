//! The `vouch` binary: parses arguments, sets up tracing, calls the library.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use vouch::cli::{self, Global};

#[derive(Parser)]
#[command(
    name = "vouch",
    version,
    about = "Model-backed auto-review authorizer for coding agents"
)]
struct Cli {
    /// One more trusted configuration overlay, after the user file.
    #[arg(long, global = true, value_name = "FILE")]
    config: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

/// `vouch confine`'s own arguments.
#[derive(Args)]
struct ConfineArgs {
    /// vouch's files, as `VOUCH_HOME` would say (as `vouch hook --home`).
    #[arg(long, value_name = "DIR")]
    home: Option<PathBuf>,
    /// The program and its arguments, after `--`.
    #[arg(last = true, required = true, value_name = "PROGRAM")]
    argv: Vec<std::ffi::OsString>,
}

/// `vouch confine …` parsed alone: it runs before every confined command,
/// and building the whole command line's parser costs more than the rest
/// of its start (`cargo bench --bench confine`).
#[derive(Parser)]
#[command(
    name = "vouch confine",
    bin_name = "vouch confine",
    about = "Run a command confined (docs/confine.md); exits 125 without running it where \
             that cannot be enforced"
)]
struct ConfineOnly {
    /// One more trusted configuration overlay, after the user file.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    #[command(flatten)]
    args: ConfineArgs,
}

#[derive(Subcommand)]
enum Command {
    /// Run the HTTP service.
    Serve {
        /// `host:port` or `unix:/path`; overrides `server.listen`.
        #[arg(long, value_name = "ADDR")]
        listen: Option<String>,
    },
    /// Decide one canonical request read from stdin; prints one JSON line.
    Review,
    /// Measure the configured reviewer on labelled cases (docs/eval.md).
    Eval {
        /// A set of labelled cases, one JSON object per line; repeatable.
        #[arg(long = "set", value_name = "FILE", required = true)]
        sets: Vec<PathBuf>,
        /// A second trusted overlay: run the same cases with it too and
        /// report both side by side.
        #[arg(long, value_name = "FILE")]
        compare: Option<PathBuf>,
        /// Cases reviewed at once, 1–64.
        #[arg(long, default_value_t = 4)]
        concurrency: usize,
        /// `text` (a report) or `json` (stable, see docs/eval.md).
        #[arg(long, default_value = "text", value_parser = ["text", "json"])]
        format: String,
    },
    /// One-use grants for sandbox brokers.
    Grant {
        #[command(subcommand)]
        command: GrantCommand,
    },
    /// List a session's recent model denials, or approve one exact retry.
    Approve {
        #[arg(long, allow_hyphen_values = true)]
        session: String,
        /// 1-based index as listed, or a request-hash prefix.
        selector: Option<String>,
    },
    /// Authorize one exact retry of a critical model denial (needs a terminal).
    BreakGlass {
        #[arg(long, allow_hyphen_values = true)]
        session: String,
    },
    /// Configuration.
    Config {
        #[command(subcommand)]
        command: ConfigCommand,
    },
    /// The policy audit: what keeps reaching a human, and rules to stop it.
    Audit {
        #[command(subcommand)]
        command: AuditCommand,
    },
    /// Run a command confined: no writes (but /dev/null and the terminal),
    /// no network, no signals or tracing outside it, no privileges, no
    /// sensitive reads, no secrets in its environment (docs/confine.md).
    /// Exits 125 without running it where that cannot be enforced.
    Confine(ConfineArgs),
    /// Harness hook adapters: the harness's hook JSON on stdin, its reply on
    /// stdout, always exit 0 (faults are fail-closed replies).
    Hook {
        #[command(subcommand)]
        command: HookCommand,
    },
    /// Merge vouch's hook into a harness's user settings: checked first,
    /// written atomically, every other key and hook kept (docs/install.md).
    Install {
        #[arg(value_parser = clap::builder::PossibleValuesParser::new(vouch::hooks::HarnessId::names()))]
        harness: String,
        /// Print the change; write nothing.
        #[arg(long)]
        dry_run: bool,
        #[command(flatten)]
        remote: RemoteArgs,
    },
    /// Take vouch's hook out of a harness's user settings again.
    Uninstall {
        #[arg(value_parser = clap::builder::PossibleValuesParser::new(vouch::hooks::HarnessId::names()))]
        harness: String,
        /// Print the change; write nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Which harnesses here are guarded by vouch, and which files in DIR
    /// (default: the current directory) switch vouch off; exit 1 on any
    /// finding.
    Doctor {
        dir: Option<PathBuf>,
        /// `text` or `json`.
        #[arg(long, default_value = "text", value_parser = ["text", "json"])]
        format: String,
    },
    /// The decision of one `vouch hook` call, in the worker process the
    /// hook supervises (not for direct use).
    #[command(name = "hook-worker", hide = true)]
    HookWorker {
        #[command(subcommand)]
        command: HookCommand,
    },
}

#[derive(Subcommand)]
enum AuditCommand {
    /// Totals, top subjects and suggested rules for one harness.
    Report {
        /// Days back from today, 1 to `audit.retention_days`.
        #[arg(long, default_value_t = vouch::audit::report::DEFAULT_DAYS)]
        days: u32,
        /// Subjects (and suggestions) listed, 1 to 50.
        #[arg(long, default_value_t = vouch::audit::report::DEFAULT_TOP)]
        top: usize,
        /// Human approvals a subject needs before a rule is suggested.
        #[arg(long = "min-count", default_value_t = vouch::audit::report::DEFAULT_MIN_COUNT)]
        min_count: u64,
        /// `current` (this directory's project) or `all`.
        #[arg(long, default_value = "current", value_parser = ["current", "all"])]
        scope: String,
        /// `text` (a table) or `json` (stable, see docs/audit.md).
        #[arg(long, default_value = "text", value_parser = ["text", "json"])]
        format: String,
        /// Rule language: a harness's name (`vouch hook --help` lists
        /// them), `pi` or `vouch`.
        #[arg(long, default_value = "claude-code")]
        target: vouch::audit::targets::Target,
    },
    /// Ingest decision events (JSON lines) from stdin.
    Ingest,
}

/// `vouch hook <harness>` for every harness of the registry
/// (`vouch::hooks::harnesses::ALL`), and `vouch hook snippet <harness>`:
/// the subcommands come from the same table as everything else, so a new
/// harness needs no line here.
enum HookCommand {
    Run(vouch::hooks::HarnessId, HookArgs),
    Snippet(SnippetArgs),
}

impl clap::FromArgMatches for HookCommand {
    fn from_arg_matches(m: &clap::ArgMatches) -> Result<Self, clap::Error> {
        Self::from_arg_matches_mut(&mut m.clone())
    }

    fn from_arg_matches_mut(m: &mut clap::ArgMatches) -> Result<Self, clap::Error> {
        use clap::error::ErrorKind;
        match m.remove_subcommand() {
            Some((name, mut sub)) if name == "snippet" => Ok(HookCommand::Snippet(
                SnippetArgs::from_arg_matches_mut(&mut sub)?,
            )),
            Some((name, mut sub)) => match vouch::hooks::HarnessId::named(&name) {
                Some(harness) => Ok(HookCommand::Run(
                    harness,
                    HookArgs::from_arg_matches_mut(&mut sub)?,
                )),
                None => Err(clap::Error::raw(
                    ErrorKind::InvalidSubcommand,
                    format!("unknown harness `{name}`\n"),
                )),
            },
            None => Err(clap::Error::raw(
                ErrorKind::MissingSubcommand,
                "name a harness or `snippet`\n",
            )),
        }
    }

    fn update_from_arg_matches(&mut self, m: &clap::ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

impl clap::Subcommand for HookCommand {
    fn augment_subcommands(cmd: clap::Command) -> clap::Command {
        let cmd = vouch::hooks::HarnessId::all().fold(cmd, |cmd, h| {
            cmd.subcommand(HookArgs::augment_args(
                clap::Command::new(h.as_str()).about(h.harness().about()),
            ))
        });
        cmd.subcommand(SnippetArgs::augment_args(
            clap::Command::new("snippet")
                .about("Print the settings fragment for a harness (never edits its files)."),
        ))
        .subcommand_required(true)
    }

    fn augment_subcommands_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_subcommands(cmd)
    }

    fn has_subcommand(name: &str) -> bool {
        name == "snippet" || vouch::hooks::HarnessId::named(name).is_some()
    }
}

#[derive(clap::Args)]
struct SnippetArgs {
    /// The harness.
    #[arg(value_parser = clap::builder::PossibleValuesParser::new(vouch::hooks::HarnessId::names()))]
    harness: String,
    /// Claude Code: the `type: "http"` form for `vouch serve`.
    #[arg(long, conflicts_with = "server")]
    http: bool,
    #[command(flatten)]
    remote: RemoteArgs,
}

// `--server URL` and its token and TLS options (docs/remote-hook.md). A
// plain comment: a doc comment here became the `about` of every command
// that flattens it (`vouch hook claude-code --help` described itself so).
#[derive(clap::Args)]
struct RemoteArgs {
    /// Have a central `vouch serve` decide: tool calls go to
    /// `URL/v1/review` (hard denies are still decided here first).
    #[arg(long, value_name = "URL")]
    server: Option<String>,
    /// The service's adapter token, in a file; else the
    /// `VOUCH_ADAPTER_TOKEN` variable.
    #[arg(long, value_name = "FILE", requires = "server")]
    token_file: Option<PathBuf>,
    /// The only CA certificates (PEM) trusted for an `https://` server;
    /// else the system's.
    #[arg(long, value_name = "FILE", requires = "server")]
    ca_file: Option<PathBuf>,
    /// Allow plain `http://` to a host that is not loopback.
    #[arg(long, requires = "server")]
    allow_plain_http: bool,
}

impl RemoteArgs {
    fn options(self) -> Option<vouch::hooks::remote::RemoteOptions> {
        let server = self.server?;
        Some(vouch::hooks::remote::RemoteOptions {
            server,
            token_file: self.token_file,
            ca_file: self.ca_file,
            allow_plain_http: self.allow_plain_http,
        })
    }
}

#[derive(clap::Args)]
struct HookArgs {
    /// vouch's files (`DIR/config.toml`, `DIR/state/`); the hook ignores
    /// `VOUCH_HOME` and the XDG variables, which the project can set.
    #[arg(long, value_name = "DIR")]
    home: Option<PathBuf>,
    /// The harness's timeout for this hook, in seconds (vouch answers first).
    #[arg(long, value_name = "SECONDS")]
    timeout: Option<u64>,
    /// How a `defer` is answered: `auto` (ask only where a person is asked),
    /// `ask` (a person always watches), `deny`.
    #[arg(long, value_name = "MODE", default_value = "auto")]
    defer_as: String,
    #[command(flatten)]
    remote: RemoteArgs,
}

#[derive(Subcommand)]
enum GrantCommand {
    /// Consume a grant for the request on stdin; exit 0 when consumed, 1 when not.
    Consume {
        /// The session the grant was minted for (may begin with `-`).
        #[arg(long, allow_hyphen_values = true)]
        session: String,
        /// The grant's token; base64url, so one in 64 begins with `-`.
        #[arg(long, allow_hyphen_values = true)]
        token: String,
    },
}

#[derive(Subcommand)]
enum ConfigCommand {
    /// Print every effective value and the layer it came from.
    Show {
        /// Also fold in the project overlay of this directory.
        #[arg(long, value_name = "DIR")]
        project: Option<PathBuf>,
    },
}

/// `vouch hook` (supervising) or `vouch hook-worker` (deciding).
fn hook(global: &Global, command: HookCommand, worker: bool) -> i32 {
    let (harness, args) = match command {
        HookCommand::Run(harness, args) => (harness, args),
        HookCommand::Snippet(SnippetArgs {
            harness,
            http,
            remote,
        }) => {
            let snippet = cli::SnippetRequest {
                harness,
                http,
                remote: remote.options(),
            };
            return cli::hook_snippet(global, &snippet, std::io::stdout(), std::io::stderr());
        }
    };
    let hook = cli::HookRequest {
        harness,
        home: args.home,
        timeout_secs: args.timeout,
        defer_as: args.defer_as,
        remote: args.remote.options(),
    };
    match worker {
        true => cli::hook_worker(global, hook, std::io::stdin(), std::io::stdout()),
        false => cli::hook(global, &hook, std::io::stdin(), std::io::stdout()),
    }
}

/// Runs `vouch confine`: returns only when the command could not run.
fn confine(config: Option<PathBuf>, args: ConfineArgs) -> ExitCode {
    let options = vouch::confine::Options {
        home: args.home,
        config,
        argv: args.argv,
    };
    ExitCode::from(u8::try_from(vouch::confine::run(&options)).unwrap_or(125))
}

fn main() -> ExitCode {
    // Before anything starts a thread or a log writer: the command replaces
    // this process.
    if std::env::args_os().nth(1).is_some_and(|a| a == "confine") {
        let only = ConfineOnly::parse_from(std::env::args_os().skip(1));
        return confine(only.config, only.args);
    }
    let cli = Cli::parse();
    if let Command::Confine(args) = cli.command {
        return confine(cli.config, args);
    }
    let global = Global { config: cli.config };
    // `vouch hook <harness>` supervises the worker that decides: it sets
    // up nothing it does not need (no logging, no configuration), so
    // nothing the call carries can crash it (`hooks::supervise`).
    let command = match cli.command {
        Command::Hook {
            command: command @ HookCommand::Run(..),
        } => return exit(hook(&global, command, false)),
        other => other,
    };
    let serving = matches!(command, Command::Serve { .. });
    // Short-lived commands print one line; only warnings go to stderr unless
    // RUST_LOG asks for more.
    // Held to the end of `main`: dropping it flushes the buffered log lines.
    let log = vouch::telemetry::init_with_default(if serving { "info" } else { "warn" });
    // Output handles stay unlocked: tracing writes to stderr from other
    // threads, and a lock held for the whole command would block it.
    let stdin = std::io::stdin();
    let code = match command {
        Command::Serve { listen } => cli::serve(&global, listen.as_deref(), std::io::stderr()),
        Command::Review => cli::review(&global, stdin.lock(), std::io::stdout(), std::io::stderr()),
        Command::Eval {
            sets,
            compare,
            concurrency,
            format,
        } => {
            let options = cli::EvalOptions {
                sets,
                compare,
                concurrency,
                json: format == "json",
            };
            cli::eval(&global, &options, std::io::stdout(), std::io::stderr())
        }
        Command::Grant {
            command: GrantCommand::Consume { session, token },
        } => cli::grant_consume(
            &global,
            &session,
            &token,
            stdin.lock(),
            std::io::stdout(),
            std::io::stderr(),
        ),
        Command::Approve { session, selector } => cli::approve(
            &global,
            &session,
            selector.as_deref(),
            stdin.lock(),
            std::io::stdout(),
            std::io::stderr(),
        ),
        Command::BreakGlass { session } => cli::break_glass(
            &global,
            &session,
            stdin.lock(),
            std::io::stdout(),
            std::io::stderr(),
        ),
        Command::Hook { command } => hook(&global, command, false),
        Command::HookWorker { command } => hook(&global, command, true),
        Command::Config {
            command: ConfigCommand::Show { project },
        } => cli::config_show(
            &global,
            project.as_deref(),
            std::io::stdout(),
            std::io::stderr(),
        ),
        Command::Audit { command } => audit(&global, command),
        command
        @ (Command::Install { .. } | Command::Uninstall { .. } | Command::Doctor { .. }) => {
            setup(&global, command)
        }
        // Run above, before the log writer started.
        Command::Confine(..) => vouch::confine::EXIT_CANNOT_CONFINE,
    };
    drop(log);
    exit(code)
}

fn exit(code: i32) -> ExitCode {
    ExitCode::from(u8::try_from(code).unwrap_or(2))
}

/// `vouch install`, `vouch uninstall` and `vouch doctor`.
fn setup(global: &Global, command: Command) -> i32 {
    let (out, err) = (std::io::stdout(), std::io::stderr());
    match command {
        Command::Install {
            harness,
            dry_run,
            remote,
        } => vouch::install::run_install(global, &harness, dry_run, remote.options(), out, err),
        Command::Uninstall { harness, dry_run } => {
            vouch::install::run_uninstall(global, &harness, dry_run, out, err)
        }
        Command::Doctor { dir, format } => {
            vouch::doctor::run(global, dir, format == "json", out, err)
        }
        // The other commands never come here.
        _ => 2,
    }
}

fn audit(global: &Global, command: AuditCommand) -> i32 {
    match command {
        AuditCommand::Report {
            days,
            top,
            min_count,
            scope,
            format,
            target,
        } => {
            let scope = if scope == "all" {
                vouch::audit::report::Scope::All
            } else {
                match std::env::current_dir() {
                    Ok(dir) => vouch::audit::report::Scope::Current(dir),
                    Err(e) => {
                        eprintln!("vouch: `--scope current` needs the working directory: {e}");
                        return 2;
                    }
                }
            };
            let options = vouch::audit::report::Options {
                days,
                top,
                min_count,
                scope,
                target,
            };
            cli::audit_report(
                global,
                options,
                format == "json",
                std::io::stdout(),
                std::io::stderr(),
            )
        }
        AuditCommand::Ingest => cli::audit_ingest(
            global,
            std::io::stdin().lock(),
            std::io::stdout(),
            std::io::stderr(),
        ),
    }
}
