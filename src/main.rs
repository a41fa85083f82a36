//! `shardkey`: parse the arguments, run the request, map the outcome to an exit code.

use shardkey::error::{exit_code, is_broken_pipe, one_line, Exit};
use shardkey::util::uri::{scrub, secrets_in_environment};
use std::io::Write;
use std::process::ExitCode;

// The sample pass, the log reader and the export reader make and drop millions of small
// values; glibc's allocator took a third of their time (perf, docs/performance.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    // A bug must still end in one line and a documented code, never a backtrace
    // or a credential from the command line.
    std::panic::set_hook(Box::new(|info| {
        // A panic off the main thread is contained where it happens: rayon hands it to
        // the main thread (caught below), our tokio tasks' join handles are checked, and
        // the driver's own background tasks panic harmlessly when a client is dropped
        // under them. Printing it would add a line and could quote a URI.
        if std::thread::current().name() != Some("main") {
            return;
        }
        let msg = payload_text(info.payload());
        let at = info.location().map(|l| format!(" at {}:{}", l.file(), l.line())).unwrap_or_default();
        internal_error(&msg, &at);
    }));
    let cli = match shardkey::cli::parse() {
        Ok(c) => c,
        Err(exit) => return exit.into(),
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    // A panic resumed on this thread (from a rayon worker) skips the hook: caught here.
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let outcome = cli.run(&mut out)?;
        out.flush()?;
        Ok(outcome)
    }))
    .unwrap_or_else(|payload| internal_error(&payload_text(payload.as_ref()), ""));
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

fn payload_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown".into())
}

/// One line and exit code 3, never a credential: a message that quotes 4 characters
/// of a password from the command line or `MONGODB_URI` is withheld.
fn internal_error(msg: &str, at: &str) -> ! {
    let secrets = secrets_in_environment();
    let quotes_secret = secrets.iter().any(|s| {
        let chars: Vec<char> = s.chars().collect();
        chars.windows(4.min(chars.len()).max(1)).any(|w| msg.contains(&w.iter().collect::<String>()))
    });
    let line = if quotes_secret {
        "(message withheld: it may quote a credential)".to_string()
    } else {
        scrub(&shardkey::error::printable(msg), &secrets)
    };
    eprintln!("shardkey: internal error: {line}{at} (please report it)");
    std::process::exit(Exit::Internal as i32);
}
