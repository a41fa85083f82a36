use clap::Parser;
use shardkey::cli::{run_analyze, Cli, Command};
use shardkey::error::{exit_code_for, one_line, EXIT_INTERNAL, EXIT_OK, EXIT_USER_ERROR};
use std::io::Write;

fn main() {
    // A bug must still end in one line and a documented code, not a backtrace.
    std::panic::set_hook(Box::new(|info| {
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown".into());
        let at = info.location().map(|l| format!(" at {}:{}", l.file(), l.line())).unwrap_or_default();
        eprintln!("shardkey: internal error: {}{at} (please report it)", msg.replace('\n', " "));
        std::process::exit(EXIT_INTERNAL);
    }));
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand) {
                let _ = e.print();
                std::process::exit(if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand { EXIT_USER_ERROR } else { EXIT_OK });
            }
            let text = e.to_string();
            let first = text.lines().next().unwrap_or("invalid arguments").trim_start_matches("error: ");
            eprintln!("shardkey: {first} (see shardkey --help)");
            std::process::exit(EXIT_USER_ERROR);
        }
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let result = match &cli.command {
        Command::Analyze(a) => run_analyze(a, &mut out),
        Command::Check(a) => shardkey::check::run_check(a, &mut out),
    };
    let _ = out.flush();
    match result {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("shardkey: {}", one_line(&e));
            std::process::exit(exit_code_for(&e));
        }
    }
}
