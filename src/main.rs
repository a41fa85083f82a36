//! `shardkey`: parse the arguments, run the request, map the outcome to an exit code.

use shardkey::error::{exit_code, is_broken_pipe, one_line, Exit};
use shardkey::util::uri::{scrub, secrets_in_environment};
use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    // A bug must still end in one line and a documented code, never a backtrace
    // or a credential from the command line.
    std::panic::set_hook(Box::new(|info| {
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown".into());
        let at = info.location().map(|l| format!(" at {}:{}", l.file(), l.line())).unwrap_or_default();
        let secrets = secrets_in_environment();
        // A library's panic may quote part of a credential: then the message is withheld.
        let quotes_secret = secrets.iter().any(|s| {
            let chars: Vec<char> = s.chars().collect();
            chars.windows(4.min(chars.len()).max(1)).any(|w| msg.contains(&w.iter().collect::<String>()))
        });
        let line = if quotes_secret {
            "(message withheld: it may quote a credential)".to_string()
        } else {
            scrub(&shardkey::error::printable(&msg), &secrets)
        };
        eprintln!("shardkey: internal error: {line}{at} (please report it)");
        std::process::exit(Exit::Internal as i32);
    }));
    let cli = match shardkey::cli::parse() {
        Ok(c) => c,
        Err(exit) => return exit.into(),
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let result = cli.into_request().and_then(|req| {
        let outcome = shardkey::app::run(&req, &mut out)?;
        out.flush()?;
        Ok(outcome)
    });
    match result {
        Ok(outcome) => Exit::from(outcome).into(),
        // `shardkey ... | head`: the reader has what it wanted.
        Err(e) if is_broken_pipe(&e) => Exit::Success.into(),
        Err(e) => {
            eprintln!("shardkey: {}", scrub(&one_line(&e), &secrets_in_environment()));
            exit_code(&e).into()
        }
    }
}
