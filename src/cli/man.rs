//! Man pages: one for `shardkey` and one per subcommand (`shardkey-analyze(1)`, ...), from the
//! clap definitions (clap_mangen renders the name, synopsis, description and options), with
//! the examples set as written (no filling, justification or hyphenation) and the exit codes.

use clap::CommandFactory;

/// The exit codes (README "Exit codes").
const EXIT_STATUS: [(&str, &str); 5] = [
    ("0", "Success; also when standard output is closed early (shardkey analyze ... | head)."),
    ("1", "A gate failed: check found a policy violation, or analyze --fail-under was not met (a score below it, or evidence too thin for a verdict)."),
    ("2", "Usage, configuration, input or connection error: one line on standard error, naming the file and line or the field at fault."),
    ("3", "Internal error (a bug; the message says where, and never holds a credential)."),
    ("130", "sample ended early by Ctrl-C or SIGTERM: the settings restored and what was sampled written, but the window was cut short."),
];

/// Every page: `shardkey` first, then each subcommand's, as (file name, roff).
pub(super) fn pages() -> std::io::Result<Vec<(String, String)>> {
    let mut cmd = super::args::Cli::command().disable_help_subcommand(true);
    cmd.build();
    let mut out = vec![(file_name(&cmd), page(&cmd)?)];
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        out.push((file_name(sub), page(sub)?));
    }
    Ok(out)
}

/// `shardkey.1`, `shardkey-analyze.1`, ...
fn file_name(cmd: &clap::Command) -> String {
    clap_mangen::Man::new(cmd.clone()).get_filename()
}

/// One page in roff.
fn page(cmd: &clap::Command) -> std::io::Result<String> {
    let man = clap_mangen::Man::new(cmd.clone()).source(format!("shardkey {}", env!("CARGO_PKG_VERSION"))).manual("shardkey");
    let mut b = Vec::new();
    man.render_title(&mut b)?;
    // Left-aligned, no hyphenation: flags and commands must read exactly as typed.
    b.extend_from_slice(b".ad l\n.nh\n");
    man.render_name_section(&mut b)?;
    man.render_synopsis_section(&mut b)?;
    man.render_description_section(&mut b)?;
    if cmd.get_arguments().any(|a| !a.is_hide_set()) {
        man.render_options_section(&mut b)?;
    }
    if cmd.has_subcommands() {
        man.render_subcommands_section(&mut b)?;
    }
    let mut roff = String::from_utf8_lossy(&b).into_owned();
    if let Some(examples) = cmd.get_after_help() {
        roff.push_str(".SH EXAMPLES\n.nf\n");
        for line in examples.to_string().lines().filter(|l| !l.starts_with("Example")) {
            roff.push_str(&escape(line.trim_start()));
            roff.push('\n');
        }
        roff.push_str(".fi\n");
    }
    roff.push_str(".SH \"EXIT STATUS\"\n");
    for (code, meaning) in EXIT_STATUS {
        roff.push_str(&format!(".TP\n{code}\n{}\n", escape(meaning)));
    }
    if cmd.get_name() != "shardkey" {
        roff.push_str(".SH \"SEE ALSO\"\nshardkey(1)\n");
    }
    Ok(roff)
}

/// A line of text for roff: backslashes written as `\e`, hyphens as `\-` (a minus, never a
/// break point), a leading `.` or `'` kept from reading as a request.
fn escape(line: &str) -> String {
    let s = line.replace('\\', "\\e").replace('-', "\\-");
    if s.starts_with('.') || s.starts_with('\'') {
        format!("\\&{s}")
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_page_per_subcommand_each_with_exit_status_and_examples_unfilled() {
        let pages = pages().unwrap();
        let names: Vec<&str> = pages.iter().map(|p| p.0.as_str()).collect();
        for want in ["shardkey.1", "shardkey-analyze.1", "shardkey-check.1", "shardkey-plan.1", "shardkey-workload.1", "shardkey-sample.1"]
        {
            assert!(names.contains(&want), "{want} not in {names:?}");
        }
        let analyze = &pages.iter().find(|p| p.0 == "shardkey-analyze.1").unwrap().1;
        assert!(analyze.contains(".SH SYNOPSIS") && analyze.contains("\\-\\-collection"), "{analyze}");
        assert!(analyze.contains(".SH EXAMPLES\n.nf\n") && analyze.contains(".SH \"EXIT STATUS\"\n.TP\n0\n"), "{analyze}");
        assert!(analyze.contains(".ad l\n.nh\n"));
        // Every page the top-level page refers to exists.
        let top = &pages[0].1;
        for p in &pages[1..] {
            let stem = p.0.trim_end_matches(".1");
            assert!(top.contains(&stem.replace('-', "\\-")), "shardkey.1 does not name {stem}");
        }
    }

    #[test]
    fn roff_requests_and_backslashes_are_escaped() {
        assert_eq!(escape(".so /etc/passwd"), "\\&.so /etc/passwd");
        assert_eq!(escape("a\\b --key"), "a\\eb \\-\\-key");
    }
}
